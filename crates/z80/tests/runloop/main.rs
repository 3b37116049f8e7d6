//! The run loop's fast paths against the plain ones, on one logging bus
//! (one test binary: the two checks share the bus's core instances).

mod bus;
mod gate;
mod idle;
