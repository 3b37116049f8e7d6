//! Robustness of the 68000 core: random memory images and every opcode.
//!
//! ```text
//! cargo test --release -p retroprof-m68k --test core fuzz::
//! ```
//!
//! Deterministic (fixed seeds, own PRNG): the same run every time. Properties:
//! - the core never panics, whatever it executes;
//! - every step that does not halt takes time: `step` returns > 0 and
//!   `cycles()` advances by exactly that much;
//! - every bus access of a step happens inside that step's time window, and
//!   bus times never go backwards;
//! - a step returns 0 only when the CPU halted (the bus was told through
//!   `Bus::halted`), and a halted CPU stays halted: further steps return 0
//!   and change neither registers nor time;
//! - the observer's instruction and exception cycles add up to the elapsed
//!   time (every cycle is attributed, which the profiler relies on).

use retroprof_m68k::{
    Boundary, Bus, ExceptionKind, FunctionCode, IntAck, Observer, Read, Registers, Stop, Write,
};

use crate::host::Cpu;

/// SplitMix64: small, fast, good enough for test data.
#[derive(Clone)]
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// true with probability 1/n.
    fn one_in(&mut self, n: u64) -> bool {
        self.below(n) == 0
    }
}

const ROM_SIZE: usize = 1 << 16;
const RAM_SIZE: usize = 1 << 16;
const RAM_BASE: u32 = 0xff_0000;

/// ROM (64 KiB mirrored over 0x000000-0x3fffff), RAM (64 KiB mirrored over
/// 0xe00000-0xffffff), a bus-error hole at 0xa00000-0xbfffff, open bus
/// elsewhere; occasional random waits, bus errors and interrupt levels.
struct FuzzBus {
    rom: Vec<u8>,
    ram: Vec<u8>,
    rng: Rng,
    /// Chance (1 in n) of a spurious bus error on any access; 0 = never.
    berr_one_in: u64,
    ipl: u8,
    irq_one_in: u64,
    /// Time window of the current step and the last access time seen.
    window: (u64, u64),
    last_now: u64,
    accesses_in_step: u32,
    halted_calls: u32,
    violations: Vec<String>,
}

impl FuzzBus {
    fn new(rng: &mut Rng) -> Self {
        let mut rom = vec![0u8; ROM_SIZE];
        for c in rom.chunks_mut(8) {
            c.copy_from_slice(&rng.next().to_le_bytes());
        }
        let mut ram = vec![0u8; RAM_SIZE];
        for c in ram.chunks_mut(8) {
            c.copy_from_slice(&rng.next().to_le_bytes());
        }
        FuzzBus {
            rom,
            ram,
            rng: Rng(rng.next()),
            berr_one_in: 0,
            ipl: 0,
            irq_one_in: 0,
            window: (0, u64::MAX),
            last_now: 0,
            accesses_in_step: 0,
            halted_calls: 0,
            violations: Vec::new(),
        }
    }

    /// Sane vectors: SSP even in RAM, every handler even in ROM.
    fn sane_vectors(&mut self) {
        let ssp = RAM_BASE + 0x8000 + 2 * self.rng.below(0x3000) as u32;
        self.rom[0..4].copy_from_slice(&ssp.to_be_bytes());
        for v in 1..256 {
            let h = 0x400 + 2 * self.rng.below((ROM_SIZE as u64 - 0x400) / 2) as u32;
            self.rom[v * 4..v * 4 + 4].copy_from_slice(&h.to_be_bytes());
        }
    }

    fn note(&mut self, addr: u32, now: u64) {
        self.accesses_in_step += 1;
        if now < self.last_now {
            self.violations.push(format!(
                "access to {addr:#x} at {now}, before the previous one at {}",
                self.last_now
            ));
        }
        if now < self.window.0 || now >= self.window.1 {
            self.violations.push(format!(
                "access to {addr:#x} at {now}, outside the step's window {:?}",
                self.window
            ));
        }
        self.last_now = now;
    }

    fn wait(&mut self) -> u32 {
        if self.rng.one_in(16) {
            1 + self.rng.below(6) as u32
        } else {
            0
        }
    }

    fn berr(&mut self, addr: u32) -> bool {
        let a = addr & 0xff_ffff;
        (0xa0_0000..0xc0_0000).contains(&a)
            || (self.berr_one_in != 0 && self.rng.one_in(self.berr_one_in))
    }

    fn byte(&mut self, addr: u32) -> u8 {
        let a = addr & 0xff_ffff;
        if a < 0x40_0000 {
            self.rom[a as usize % ROM_SIZE]
        } else if a >= 0xe0_0000 {
            self.ram[a as usize % RAM_SIZE]
        } else {
            0xff
        }
    }
}

impl Bus for FuzzBus {
    fn read_byte(&mut self, addr: u32, _fc: FunctionCode, now: u64) -> Read<u8> {
        self.note(addr, now);
        Read {
            data: self.byte(addr),
            wait: self.wait(),
            bus_error: self.berr(addr),
        }
    }
    fn read_word(&mut self, addr: u32, _fc: FunctionCode, now: u64) -> Read<u16> {
        self.note(addr, now);
        if addr & 1 != 0 {
            self.violations
                .push(format!("read_word at odd address {addr:#x}"));
        }
        Read {
            data: u16::from_be_bytes([self.byte(addr & !1), self.byte(addr | 1)]),
            wait: self.wait(),
            bus_error: self.berr(addr),
        }
    }
    fn write_byte(&mut self, addr: u32, data: u8, _fc: FunctionCode, now: u64) -> Write {
        self.note(addr, now);
        if addr & 0xff_ffff >= 0xe0_0000 {
            self.ram[addr as usize % RAM_SIZE] = data;
        }
        Write {
            wait: self.wait(),
            bus_error: self.berr(addr),
        }
    }
    fn write_word(&mut self, addr: u32, data: u16, _fc: FunctionCode, now: u64) -> Write {
        self.note(addr, now);
        if addr & 1 != 0 {
            self.violations
                .push(format!("write_word at odd address {addr:#x}"));
        }
        if addr & 0xff_ffff >= 0xe0_0000 {
            let a = (addr & !1) as usize % RAM_SIZE;
            self.ram[a..a + 2].copy_from_slice(&data.to_be_bytes());
        }
        Write {
            wait: self.wait(),
            bus_error: self.berr(addr),
        }
    }
    fn boundary(&mut self, _now: u64) -> Boundary {
        if self.irq_one_in != 0 && self.rng.one_in(self.irq_one_in) {
            self.ipl = self.rng.below(8) as u8;
        }
        Boundary {
            extra: if self.rng.one_in(32) {
                self.rng.below(40) as u32
            } else {
                0
            },
            ipl: self.ipl,
        }
    }
    fn interrupt_ack(&mut self, _level: u8, now: u64) -> IntAck {
        self.note(0xff_fff0, now);
        // The device drops its request once acknowledged (mostly).
        if self.rng.one_in(2) {
            self.ipl = 0;
        }
        match self.rng.below(4) {
            0 => IntAck::Vector(self.rng.below(256) as u8),
            1 => IntAck::Spurious,
            _ => IntAck::Autovector,
        }
    }
    fn address_error(&mut self, addr: u32, _fc: FunctionCode, _is_write: bool, now: u64) {
        self.note(addr, now);
    }
    fn halted(&mut self, _now: u64) {
        self.halted_calls += 1;
    }
}

/// Sums what the observer is told.
#[derive(Default)]
struct Tally {
    instruction_cycles: u64,
    exception_cycles: u64,
    instructions: u64,
    exceptions: u64,
}

impl Observer for Tally {
    fn instruction(&mut self, _pc: u32, cycles: u32) {
        self.instruction_cycles += cycles as u64;
        self.instructions += 1;
    }
    fn exception(&mut self, _kind: ExceptionKind, _vector: u8, _handler: u32, cycles: u32) {
        self.exception_cycles += cycles as u64;
        self.exceptions += 1;
    }
}

#[derive(Default)]
struct Stats {
    steps: u64,
    halts: u64,
    cycles: u64,
}

/// Steps `cpu` `steps` times checking the properties; `what` names the case.
fn run_checked(cpu: &mut Cpu, bus: &mut FuzzBus, steps: u32, what: &str, stats: &mut Stats) {
    let mut obs = Tally::default();
    let start = cpu.cycles();
    let mut halted = bus.halted_calls > 0;
    let mut first_unattributed = None;
    for k in 0..steps {
        let before = cpu.cycles();
        let regs_before = cpu.registers();
        bus.window = (before, u64::MAX);
        bus.last_now = before;
        bus.accesses_in_step = 0;
        let told_before = obs.instruction_cycles + obs.exception_cycles;
        let c = cpu.step(bus, &mut obs);
        let after = cpu.cycles();
        let told = obs.instruction_cycles + obs.exception_cycles - told_before;
        stats.steps += 1;
        if halted {
            assert_eq!(c, 0, "{what}: step {k}: a halted CPU ran for {c} cycles");
            assert_eq!(
                after, before,
                "{what}: step {k}: a halted CPU's clock moved"
            );
            assert_eq!(
                cpu.registers(),
                regs_before,
                "{what}: step {k}: a halted CPU changed its registers"
            );
            assert_eq!(
                bus.accesses_in_step, 0,
                "{what}: step {k}: a halted CPU used the bus"
            );
            continue;
        }
        assert_eq!(
            after - before,
            c as u64,
            "{what}: step {k}: step returned {c} but cycles() advanced {}",
            after - before
        );
        if !bus.violations.is_empty() {
            panic!(
                "{what}: step {k} (pc {:#x}): bus contract: {}",
                regs_before.pc,
                bus.violations.join("; ")
            );
        }
        if c == 0 {
            assert!(
                bus.halted_calls > 0,
                "{what}: step {k} (pc {:#x}, opcode {:04x}) took 0 cycles without halting",
                regs_before.pc,
                regs_before.prefetch[0]
            );
            halted = true;
            stats.halts += 1;
            // A halt ends the step window at the halt time.
            continue;
        }
        if bus.last_now >= after && bus.accesses_in_step > 0 {
            panic!(
                "{what}: step {k}: an access at {} is not before the step's end {after}",
                bus.last_now
            );
        }
        if told != c as u64 && first_unattributed.is_none() {
            let r = cpu.registers();
            first_unattributed = Some(format!(
                "first at step {k}: instruction at {:#x} (opcode {:04x}, sr {:04x} -> {:04x}) \
                 took {c} cycles, the observer was told of {told}",
                regs_before.pc.wrapping_sub(4),
                regs_before.prefetch[0],
                regs_before.sr,
                r.sr
            ));
        }
    }
    stats.cycles += cpu.cycles() - start;
    if !halted {
        let attributed = obs.instruction_cycles + obs.exception_cycles;
        assert_eq!(
            attributed,
            cpu.cycles() - start,
            "{what}: the observer was told of {} instruction + {} exception cycles \
             ({} instructions, {} exceptions) but {} cycles elapsed; {}",
            obs.instruction_cycles,
            obs.exception_cycles,
            obs.instructions,
            obs.exceptions,
            cpu.cycles() - start,
            first_unattributed.unwrap_or_default()
        );
    }
}

/// Random images: half with sane vectors (so programs run a while), half
/// with random ones (so exceptions, double faults and halts are common);
/// some with spurious bus errors, some with random interrupt levels.
#[test]
fn random_images_do_not_panic() {
    const IMAGES: u64 = 2_000;
    const STEPS: u32 = 2_000;
    let mut stats = Stats::default();
    for image in 0..IMAGES {
        let mut rng = Rng(0x5EED_0000 + image);
        let mut bus = FuzzBus::new(&mut rng);
        if image % 2 == 0 {
            bus.sane_vectors();
        }
        bus.berr_one_in = [0, 0, 500, 5_000][(image / 2 % 4) as usize];
        bus.irq_one_in = [0, 50, 0, 500][(image / 8 % 4) as usize];
        let mut cpu = Cpu::new();
        bus.window = (cpu.cycles(), u64::MAX);
        bus.last_now = cpu.cycles();
        cpu.reset(&mut bus);
        bus.violations.clear();
        run_checked(
            &mut cpu,
            &mut bus,
            STEPS,
            &format!("image {image}"),
            &mut stats,
        );
        // run_until: reaches the target at an instruction boundary, or
        // reports the halt.
        if image % 8 == 0 {
            let target = cpu.cycles() + 20_000;
            bus.window = (cpu.cycles(), u64::MAX);
            bus.last_now = cpu.cycles();
            match cpu.run_until(&mut bus, &mut (), target) {
                Stop::Target => assert!(
                    cpu.cycles() >= target && bus.halted_calls == 0,
                    "image {image}: run_until returned Target at {} < {target}",
                    cpu.cycles()
                ),
                Stop::Halted => assert!(
                    bus.halted_calls > 0,
                    "image {image}: run_until reported a halt the bus was not told of"
                ),
            }
            assert!(
                bus.violations.is_empty(),
                "image {image}: run_until: bus contract: {}",
                bus.violations.join("; ")
            );
        }
    }
    eprintln!(
        "{IMAGES} images: {} steps, {} halts, {} cycles",
        stats.steps, stats.halts, stats.cycles
    );
    assert!(
        stats.halts < IMAGES,
        "every image halted: the core never runs anything"
    );
}

fn sane_registers(rng: &mut Rng, opcode: u16, ext: u16) -> Registers {
    let mut r = Registers::default();
    for d in r.d.iter_mut() {
        *d = rng.next() as u32;
    }
    for a in r.a.iter_mut() {
        *a = RAM_BASE + 0x1000 + 2 * rng.below(0x6000) as u32;
    }
    r.usp = RAM_BASE + 0xa000;
    r.ssp = RAM_BASE + 0xf000;
    r.sr = 0x2700;
    r.pc = 0x1004;
    r.prefetch = [opcode, ext];
    r
}

/// Every opcode, from a sane state (even address registers into RAM,
/// supervisor mode, sane vectors) and from a random one (odd addresses,
/// user mode, trace bit): a few steps each, no panic, time advances.
#[test]
fn every_opcode_steps_without_panic() {
    let mut rng = Rng(0x09C0_DE00);
    // One bus for all: ROM is read-only and RAM is random anyway, so what
    // earlier opcodes wrote there does not matter (the run stays
    // deterministic because the order is fixed).
    let mut bus = FuzzBus::new(&mut rng);
    bus.sane_vectors();
    let mut stats = Stats::default();
    for opcode in 0..=0xffffu16 {
        for variant in 0..2 {
            bus.halted_calls = 0;
            bus.violations.clear();
            let ext = rng.next() as u16;
            // The instruction stream: opcode at 0x1000, then extension words.
            bus.rom[0x1000..0x1002].copy_from_slice(&opcode.to_be_bytes());
            bus.rom[0x1002..0x1004].copy_from_slice(&ext.to_be_bytes());
            let mut regs = sane_registers(&mut rng, opcode, ext);
            if variant == 1 {
                for a in regs.a.iter_mut() {
                    *a = rng.next() as u32;
                }
                regs.usp = rng.next() as u32;
                regs.ssp = rng.next() as u32 | 1;
                regs.sr = rng.next() as u16;
            }
            let mut cpu = Cpu::new();
            cpu.set_registers(&regs);
            run_checked(
                &mut cpu,
                &mut bus,
                4,
                &format!("opcode {opcode:04x} variant {variant}"),
                &mut stats,
            );
        }
    }
    eprintln!(
        "65,536 opcodes x 2: {} steps, {} halts, {} cycles",
        stats.steps, stats.halts, stats.cycles
    );
}

/// The first step of every opcode from the sane state takes at least one
/// bus cycle's time and never halts. (4 cycles: the shortest 68000 bus
/// cycle and the shortest instruction, NOP/MOVEQ at 4(1/0) in the M68000
/// user's manual, section 8 "Instruction execution times".)
#[test]
fn every_opcode_first_step_from_sane_state_takes_time() {
    let mut rng = Rng(0xF00D);
    let mut bus = FuzzBus::new(&mut rng);
    bus.sane_vectors();
    for opcode in 0..=0xffffu16 {
        let ext = rng.next() as u16;
        bus.rom[0x1000..0x1002].copy_from_slice(&opcode.to_be_bytes());
        bus.rom[0x1002..0x1004].copy_from_slice(&ext.to_be_bytes());
        bus.halted_calls = 0;
        let mut cpu = Cpu::new();
        cpu.set_registers(&sane_registers(&mut rng, opcode, ext));
        bus.window = (cpu.cycles(), u64::MAX);
        bus.last_now = cpu.cycles();
        let c = cpu.step(&mut bus, &mut ());
        assert!(
            c >= 4 && bus.halted_calls == 0,
            "opcode {opcode:04x}: first step from a sane state took {c} cycles \
             (halted: {})",
            bus.halted_calls > 0
        );
    }
}
