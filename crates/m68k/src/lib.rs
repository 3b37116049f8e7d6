//! A cycle-exact Motorola 68000 core, generic over a [`Bus`] and an
//! [`Observer`]. It knows nothing of any particular machine.

pub mod bus;
pub mod cpu;

pub use bus::{Boundary, Bus, ExceptionKind, FunctionCode, IntAck, Observer, Read, Write};
pub use cpu::{Cpu, Registers, Stop};
