//! A cycle-exact Motorola 68000 core, generic over a [`Bus`] and an
//! [`Observer`]. It knows nothing of any particular machine.
//!
//! Source layout: `cpu.rs` (state and public API), `core.rs` (bus access,
//! prefetch queue, flags), `ea.rs` (effective addresses), `decode.rs` (the
//! 64K-entry decode table), `exception.rs` (exception processing) and
//! `ops/` (one file per instruction group), `poll.rs` (the fast path for
//! polling loops), `disasm.rs` (a 68000 disassembler, for showing code).

pub mod bus;
mod core;
pub mod cpu;
mod decode;
pub mod disasm;
mod ea;
mod exception;
mod ops;
mod poll;

pub use bus::{
    Boundary, Bus, ExceptionKind, FetchWindow, FunctionCode, IntAck, Observer, PollPass, PollSkip,
    Read, WithObserver, Write,
};
pub use cpu::{Cpu, Registers, Stop};
