//! Every test of the 68000 core that runs it, in one test binary.
//!
//! ```text
//! cargo test --release -p retroprof-m68k --test core
//! cargo test --release -p retroprof-m68k --test core conformance:: -- --nocapture
//! ```
//!
//! Each bus or observer type that runs the generic core directly gets a
//! whole copy of it compiled, and each test binary compiles its own: the
//! unit tests, `fuzz`, `program` and `conformance` used to be 4 binaries
//! with 9 host types. Here every test keeps its own bus and observer but
//! runs the core through [`host::Cpu`] (`&mut dyn Bus`, `&mut dyn
//! Observer`): one copy of the core (the figures are in
//! `tests/README.md`, "Build time of the tests").

mod host;

#[path = "../support/bench_program.rs"]
mod bench_program;
#[path = "../support/singlestep.rs"]
mod singlestep;

mod conformance;
mod fuzz;
mod poll;
mod program;
mod units;

// The core's own copy for the support files shared with the runner and
// the benchmark (they name `super::Cpu`): the one host type here.
use host::Cpu;
