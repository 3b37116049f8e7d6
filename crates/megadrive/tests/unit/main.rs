//! The crate's unit tests, one module per source file (`rom` tests
//! `src/rom.rs`, `system` the console of `src/system/`, ...). They sit in
//! one integration-test binary, which links the library as built, instead
//! of `#[cfg(test)]` modules, which compile the whole crate again in test
//! mode (its 68000 and Z80 cores among it): see "Build time of the tests"
//! in the crate README. What no public path reaches they get from
//! `retroprof_megadrive::system::test_support` (hidden, for these tests).

mod cart;
mod colour;
mod input;
mod io;
mod observer;
mod reference;
mod rom;
mod system;
mod timing;
mod vdp;
mod ym2612;
mod z80;
