//! Speed of retroprof-z80 against rustzx-z80 on the same Z80 program: the
//! Mega Drive PCM/DAC streaming loop plus some ALU, block and call work.
//!
//! `cargo bench -p retroprof-z80 --bench z80_bench -- [STEPS [ours|rustzx|chunked [T]]]`
//! (default 20,000,000 instructions per core; both cores unless one is
//! named, e.g. for `perf stat`; `chunked` runs ours in calls of T T-states,
//! default 228 = one Mega Drive line, to show the per-call cost).

use std::time::Instant;

use retroprof_z80 as ours;
use rustzx_z80 as rz;

#[rustfmt::skip]
const PROG: &[u8] = &[
    0xD9,                   // 0100 exx
    0x0A,                   //      ld a,(bc)
    0x03,                   //      inc bc
    0xCB, 0x90,             //      res 2,b
    0x12,                   //      ld (de),a
    0xD9,                   //      exx
    0x3E, 0x03,             //      ld a,3
    0x3D,                   // 0109 dec a
    0x20, 0xFD,             //      jr nz,0109
    0x2A, 0x00, 0x08,       //      ld hl,(0800)
    0x23,                   //      inc hl
    0x22, 0x00, 0x08,       //      ld (0800),hl
    0x3A, 0x02, 0x08,       //      ld a,(0802)
    0xB7,                   //      or a
    0xC2, 0x00, 0x01,       //      jp nz,0100
    0xC6, 0x01,             //      add a,1
    0xBA,                   //      cp d
    0xCA, 0x00, 0x01,       //      jp z,0100
    0x21, 0x00, 0x20,       //      ld hl,2000
    0x11, 0x00, 0x30,       //      ld de,3000
    0x01, 0x08, 0x00,       //      ld bc,8
    0xED, 0xB0,             //      ldir
    0xDD, 0x21, 0x00, 0x40, //      ld ix,4000
    0xDD, 0x7E, 0x05,       //      ld a,(ix+5)
    0xDD, 0x86, 0x06,       //      add a,(ix+6)
    0x27,                   //      daa
    0xCD, 0x00, 0x02,       //      call 0200
    0xC3, 0x00, 0x01,       //      jp 0100
];

#[rustfmt::skip]
const SUB: &[u8] = &[
    0xC5, 0xE5,             // 0200 push bc ; push hl
    0xCB, 0x3F, 0x17,       //      srl a ; rla
    0xE1, 0xC1,             //      pop hl ; pop bc
    0xC9,                   //      ret
];

fn memory() -> Box<[u8; 0x10000]> {
    let mut m = Box::new([0u8; 0x10000]);
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for b in m.iter_mut() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *b = (x >> 32) as u8;
    }
    m[0x100..0x100 + PROG.len()].copy_from_slice(PROG);
    m[0x200..0x200 + SUB.len()].copy_from_slice(SUB);
    m[0x800..0x803].copy_from_slice(&[0, 0, 0]);
    m
}

struct OurBus(Box<[u8; 0x10000]>);
impl ours::Bus for OurBus {
    #[inline(always)]
    fn read(&mut self, addr: u16, _t: &mut u64) -> u8 {
        self.0[addr as usize]
    }
    #[inline(always)]
    fn write(&mut self, addr: u16, value: u8, _t: &mut u64) {
        self.0[addr as usize] = value;
    }
    #[inline(always)]
    fn int_line(&self) -> bool {
        false
    }
}

struct RzBus(Box<[u8; 0x10000]>, u64);
impl rz::Z80Bus for RzBus {
    fn read_internal(&mut self, addr: u16) -> u8 {
        self.0[addr as usize]
    }
    fn write_internal(&mut self, addr: u16, data: u8) {
        self.0[addr as usize] = data;
    }
    fn wait_mreq(&mut self, _addr: u16, clk: usize) {
        self.1 += clk as u64;
    }
    fn wait_no_mreq(&mut self, _addr: u16, clk: usize) {
        self.1 += clk as u64;
    }
    fn wait_internal(&mut self, clk: usize) {
        self.1 += clk as u64;
    }
    fn wait_loop(&mut self, _addr: u16, clk: usize) {
        self.1 += clk as u64;
    }
    fn read_io(&mut self, _port: u16) -> u8 {
        0xFF
    }
    fn write_io(&mut self, _port: u16, _data: u8) {}
    fn read_interrupt(&mut self) -> u8 {
        0xFF
    }
    fn reti(&mut self) {}
    fn halt(&mut self, _halted: bool) {}
    fn int_active(&self) -> bool {
        false
    }
    fn nmi_active(&self) -> bool {
        false
    }
    fn pc_callback(&mut self, _addr: u16) {}
}

fn run_ours_with_bus(tstates: u64) -> (ours::Z80, OurBus) {
    let mut z = ours::Z80::new();
    z.pc = 0x100;
    z.sp = 0x1F00;
    let mut bus = OurBus(memory());
    z.run_until(&mut bus, tstates);
    (z, bus)
}

fn run_ours(steps: u64) -> ours::Z80 {
    run_ours_with_bus(steps).0
}

/// Also returns the number of instructions (steps) run.
fn run_rustzx_with_bus(tstates: u64) -> (rz::Z80, RzBus, u64) {
    let mut r = rz::Z80::default();
    r.regs.set_pc(0x100);
    r.regs.set_sp(0x1F00);
    let mut rbus = RzBus(memory(), 0);
    let mut n = 0;
    while rbus.1 < tstates {
        r.emulate(&mut rbus);
        n += 1;
    }
    (r, rbus, n)
}

fn run_rustzx(steps: u64) -> RzBus {
    run_rustzx_with_bus(steps).1
}

/// T-state budget for about `steps` instructions of this program (the
/// loop averages 11.13 T-states per instruction).
fn budget(steps: u64) -> u64 {
    steps * 1113 / 100
}

fn main() {
    let steps: u64 = std::env::args()
        .filter(|a| a != "--bench")
        .nth(1)
        .map(|s| s.parse().expect("STEPS must be a number"))
        .unwrap_or(20_000_000);
    let only = std::env::args()
        .filter(|a| a != "--bench")
        .nth(2)
        .unwrap_or_default();
    if only == "chunked" {
        // Many short `run_until` calls, like the Mega Drive's catch-up at
        // every line (3,420 mclk / 15 = 228 T, md-timing.md), instead of
        // one long one: measures the per-call cost.
        let chunk: u64 = std::env::args()
            .filter(|a| a != "--bench")
            .nth(3)
            .map(|s| s.parse().expect("CHUNK must be a number of T-states"))
            .unwrap_or(228);
        let t0 = Instant::now();
        let mut z = ours::Z80::new();
        z.pc = 0x100;
        z.sp = 0x1F00;
        let mut bus = OurBus(memory());
        let end = budget(steps);
        let mut t = 0;
        while t < end {
            t += chunk;
            z.run_until(&mut bus, t);
        }
        let s = t0.elapsed().as_secs_f64();
        println!(
            "ours, calls of {chunk} T: about {steps} instructions, {} T-states, {:.3} s, {:.1} M instr/s",
            z.tstates,
            s,
            steps as f64 / 1e6 / s
        );
        return;
    }
    if only == "ours" || only == "rustzx" {
        let t0 = Instant::now();
        let t = if only == "ours" {
            run_ours(budget(steps)).tstates
        } else {
            run_rustzx(budget(steps)).1
        };
        let s = t0.elapsed().as_secs_f64();
        println!(
            "{only}: about {steps} instructions, {t} T-states, {:.3} s, {:.1} M instr/s",
            s,
            steps as f64 / 1e6 / s
        );
        return;
    }

    let t0 = Instant::now();
    let (z, bus) = run_ours_with_bus(budget(steps));
    let ours_s = t0.elapsed().as_secs_f64();
    let t0 = Instant::now();
    let (r, rbus, steps) = run_rustzx_with_bus(budget(steps));
    let rz_s = t0.elapsed().as_secs_f64();

    // Same program, same result: a cheap sanity check of the comparison.
    assert_eq!(z.pc, r.regs.get_pc(), "the cores diverged");
    assert_eq!(z.tstates, rbus.1, "the cores diverged");
    assert!(bus.0[..] == rbus.0[..], "the cores diverged");

    let m = steps as f64 / 1e6;
    println!("{steps} instructions ({} T-states) each", z.tstates);
    println!(
        "retroprof-z80: {:.3} s, {:.1} M instr/s, {:.2} ns/instr",
        ours_s,
        m / ours_s,
        ours_s * 1e9 / steps as f64
    );
    println!(
        "rustzx-z80:    {:.3} s, {:.1} M instr/s, {:.2} ns/instr",
        rz_s,
        m / rz_s,
        rz_s * 1e9 / steps as f64
    );
    println!("speed-up: {:.2}x", rz_s / ours_s);
}
