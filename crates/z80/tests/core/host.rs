//! The Z80 core's instantiations in the tests: two, one per value of
//! `Bus::INT_LINE_STEADY`.
//!
//! The core is generic over its bus: every bus type that calls
//! `Z80::step`/`Z80::run_until` gets its own copy of the whole core
//! compiled. The tests' buses implement [`TestBus`] (the [`Bus`] methods as
//! an object-safe trait, the steady-line promise as a method) and the
//! tests' [`Z80`] runs the real one on `&mut dyn TestBus` through [`Host`],
//! so each test keeps its own bus while the core is compiled twice for the
//! test binary (`Host<false>`, `Host<true>`). Everything else goes to the
//! real CPU (`Deref`); the calls look like the real API's:
//! `z.step(&mut bus)`, `z.run_until(&mut bus, until)`.

use retroprof_z80::Bus;

/// [`Bus`] as a trait object: the same methods with the same defaults, and
/// [`Bus::INT_LINE_STEADY`] as [`TestBus::int_line_steady`].
pub trait TestBus {
    fn read(&mut self, addr: u16, t: &mut u64) -> u8;
    fn write(&mut self, addr: u16, value: u8, t: &mut u64);
    fn fetch(&mut self, addr: u16, t: &mut u64) -> u8 {
        self.read(addr, t)
    }
    fn read_io(&mut self, _port: u16, _t: &mut u64) -> u8 {
        0xFF
    }
    fn write_io(&mut self, _port: u16, _value: u8, _t: &mut u64) {}
    fn int_line(&self) -> bool;
    fn peek(&self, _addr: u16) -> Option<u8> {
        None
    }
    fn int_vector(&mut self) -> u8 {
        0xFF
    }
    /// [`Bus::INT_LINE_STEADY`] of this bus.
    fn int_line_steady(&self) -> bool {
        false
    }
}

/// A [`TestBus`] object as the core's bus, with the steady-line promise as
/// its const parameter.
pub struct Host<'a, const STEADY: bool>(pub &'a mut dyn TestBus);

impl<const STEADY: bool> Bus for Host<'_, STEADY> {
    fn read(&mut self, addr: u16, t: &mut u64) -> u8 {
        self.0.read(addr, t)
    }
    fn write(&mut self, addr: u16, value: u8, t: &mut u64) {
        self.0.write(addr, value, t)
    }
    fn fetch(&mut self, addr: u16, t: &mut u64) -> u8 {
        self.0.fetch(addr, t)
    }
    fn read_io(&mut self, port: u16, t: &mut u64) -> u8 {
        self.0.read_io(port, t)
    }
    fn write_io(&mut self, port: u16, value: u8, t: &mut u64) {
        self.0.write_io(port, value, t)
    }
    fn int_line(&self) -> bool {
        self.0.int_line()
    }
    fn peek(&self, addr: u16) -> Option<u8> {
        self.0.peek(addr)
    }
    fn int_vector(&mut self) -> u8 {
        self.0.int_vector()
    }
    const INT_LINE_STEADY: bool = STEADY;
}

/// A Z80 whose `step`/`run_until` take a `&mut dyn TestBus`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Z80(pub retroprof_z80::Z80);

impl Z80 {
    pub fn new() -> Self {
        Z80(retroprof_z80::Z80::new())
    }

    /// [`retroprof_z80::Z80::step`].
    pub fn step(&mut self, bus: &mut dyn TestBus) {
        if bus.int_line_steady() {
            self.0.step(&mut Host::<true>(bus))
        } else {
            self.0.step(&mut Host::<false>(bus))
        }
    }

    /// [`retroprof_z80::Z80::run_until`].
    pub fn run_until(&mut self, bus: &mut dyn TestBus, until: u64) {
        if bus.int_line_steady() {
            self.0.run_until(&mut Host::<true>(bus), until)
        } else {
            self.0.run_until(&mut Host::<false>(bus), until)
        }
    }
}

impl std::ops::Deref for Z80 {
    type Target = retroprof_z80::Z80;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for Z80 {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

/// The dispatch above is what `gate` relies on: a bus that says its line is
/// steady runs the steady-line core, which reads the line only when IFF1 or
/// an EI/DI/prefix delay changes, not before every instruction as the plain
/// one does while IFF1 is set.
#[test]
fn steady_buses_run_the_steady_core() {
    /// NOPs everywhere, /INT never asserted, its reads counted.
    struct Counting<const STEADY: bool> {
        line_reads: std::cell::Cell<u32>,
    }
    impl<const STEADY: bool> TestBus for Counting<STEADY> {
        fn read(&mut self, _addr: u16, _t: &mut u64) -> u8 {
            0
        }
        fn write(&mut self, _addr: u16, _value: u8, _t: &mut u64) {}
        fn int_line(&self) -> bool {
            self.line_reads.set(self.line_reads.get() + 1);
            false
        }
        fn int_line_steady(&self) -> bool {
            STEADY
        }
    }
    let line_reads = |bus: &mut dyn TestBus| {
        let mut z = Z80::new();
        z.iff1 = true;
        z.run_until(bus, 4_000); // 1,000 NOPs
        assert_eq!(z.tstates, 4_000);
    };
    let mut steady = Counting::<true> {
        line_reads: Default::default(),
    };
    let mut plain = Counting::<false> {
        line_reads: Default::default(),
    };
    line_reads(&mut steady);
    line_reads(&mut plain);
    assert!(
        plain.line_reads.get() >= 1_000,
        "plain: {} line reads",
        plain.line_reads.get()
    );
    assert!(
        steady.line_reads.get() < 10,
        "steady: {} line reads",
        steady.line_reads.get()
    );
}
