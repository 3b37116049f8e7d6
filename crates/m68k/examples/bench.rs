//! Speed benchmark of the 68000 core.
//!
//! ```text
//! cargo run --release -p retroprof-m68k --example bench [-- EMULATED_CYCLES]
//! ```
//!
//! Runs a small hand-assembled program (below) on a flat 1 MiB RAM bus with
//! no wait states for a fixed number of emulated cycles (default
//! 300,000,000), twice:
//! (a) with the no-op `()` observer, through `Cpu::run_until`;
//! (b) with a profiling observer that adds each instruction's cycles to a
//!     per-PC table (a `Vec<u64>` indexed by `pc >> 1`, sized for a 4 MiB
//!     ROM as on the Mega Drive).
//! It prints instructions executed, emulated cycles, wall time, millions of
//! instructions per second, millions of emulated cycles per second for both,
//! and the cost ratio (b)/(a); where Linux reports the thread's on-CPU time
//! the rates are also given per CPU second (on a shared, loaded machine the
//! wall time includes waiting for a core).
//!
//! The results are checked before anything is printed as valid: both runs
//! must end in the same state, the per-PC table must account for every
//! cycle and only name instruction addresses of the program, and the
//! program's own results (iteration counter, running total and last
//! checksum in memory, computed at the end of each iteration) must equal a
//! Rust model of the same computation. A broken core therefore fails
//! (exit status 1) instead of posting a number.
//!
//! `bench --model N` prints the model's TOTAL and LAST after N iterations;
//! they were cross-checked against an independent 68000 emulator running
//! the same bytes (N = 300 and 70,000, which also covers the 16-bit wrap of
//! the iteration counter in the program's data).
//!
//! The instruction mix: moveq/move.w/move.l with Dn, (An)+, -(An),
//! (d16,An), (d8,An,Xn), abs.w, abs.l and immediate operands; add, sub,
//! cmp, eor, addq, ext; mulu and divu; dbra loops, Bcc, BRA; JSR (d16,PC),
//! BSR, RTS. About 7,000 cycles per iteration of the outer loop.

use std::time::Instant;

use retroprof_m68k::{Bus, Cpu, ExceptionKind, FunctionCode, Observer, Read, Stop, Write};

/// Where the program is loaded (vector 1 points here).
const ORG: u32 = 0x400;
/// Initial supervisor stack (vector 0).
const STACK: u32 = 0x8000;
/// The outer loop's first instruction.
const LOOP: u32 = 0x40e;
/// Memory results of the program (abs.l operands).
const TOTAL: u32 = 0x1_0000;
const LAST: u32 = 0x1_0004;
const RAM_SIZE: usize = 1 << 20;
/// The Mega Drive's 68000 clock, for scale: NTSC master clock 53,693,175 Hz
/// divided by 7 (md-timing.md, "Clocks").
const MD_68000_HZ: f64 = 53_693_175.0 / 7.0;

/// The program, one instruction per entry: its words (big-endian, as
/// assembled by `m68k-linux-gnu-as -m68000`, checked with objdump) and the
/// source. Addresses start at `ORG` and are listed in the comments.
///
/// What one iteration i (d7) computes:
/// - arr[k] = (i + 3k) mod 2^16 for k in 0..64 (words at 0x2000);
/// - copies arr to 0x2100 with move.l (An)+,(An)+;
/// - d0 = sum of the copy's 64 words, read backwards with -(An);
/// - d4 = XOR over j in 0..16 of (arr[3 + 4j] - arr[1]) (16-bit);
/// - d1 = divu(mulu(d0 & 0xffff, 50), 77) (remainder:quotient);
/// - d6 = number of words of the copy > 100 (subroutine `count`);
/// - d3 = d0 + d1, then its low word += d4, then d3 += d6;
/// - LAST = d3, TOTAL += d3, d7 += 1.
#[rustfmt::skip]
const PROGRAM: &[(&[u16], &str)] = &[
    (&[0x7e00],                 "400 start: moveq   #0,d7"),
    (&[0x42b9, 0x0001, 0x0000], "402        clr.l   (0x10000).l       | TOTAL"),
    (&[0x42b9, 0x0001, 0x0004], "408        clr.l   (0x10004).l       | LAST"),
    (&[0x41f8, 0x2000],         "40e loop:  lea     (0x2000).w,a0"),
    (&[0x3207],                 "412        move.w  d7,d1"),
    (&[0x743f],                 "414        moveq   #63,d2"),
    (&[0x30c1],                 "416 fill:  move.w  d1,(a0)+"),
    (&[0x5641],                 "418        addq.w  #3,d1"),
    (&[0x51ca, 0xfffa],         "41a        dbra    d2,fill"),
    (&[0x45f8, 0x2000],         "41e        lea     (0x2000).w,a2"),
    (&[0x47f8, 0x2100],         "422        lea     (0x2100).w,a3"),
    (&[0x741f],                 "426        moveq   #31,d2"),
    (&[0x26da],                 "428 copy:  move.l  (a2)+,(a3)+"),
    (&[0x51ca, 0xfffc],         "42a        dbra    d2,copy"),
    (&[0x224b],                 "42e        movea.l a3,a1"),
    (&[0x7000],                 "430        moveq   #0,d0"),
    (&[0x7600],                 "432        moveq   #0,d3"),
    (&[0x743f],                 "434        moveq   #63,d2"),
    (&[0x3621],                 "436 sum:   move.w  -(a1),d3"),
    (&[0xd083],                 "438        add.l   d3,d0"),
    (&[0x51ca, 0xfffa],         "43a        dbra    d2,sum"),
    (&[0x45f8, 0x2000],         "43e        lea     (0x2000).w,a2"),
    (&[0x7800],                 "442        moveq   #0,d4"),
    (&[0x7a00],                 "444        moveq   #0,d5"),
    (&[0x740f],                 "446        moveq   #15,d2"),
    (&[0x3632, 0x5006],         "448 idx:   move.w  6(a2,d5.w),d3"),
    (&[0x966a, 0x0002],         "44c        sub.w   2(a2),d3"),
    (&[0xb744],                 "450        eor.w   d3,d4"),
    (&[0x5045],                 "452        addq.w  #8,d5"),
    (&[0x51ca, 0xfff2],         "454        dbra    d2,idx"),
    (&[0x3200],                 "458        move.w  d0,d1"),
    (&[0xc2fc, 0x0032],         "45a        mulu.w  #50,d1"),
    (&[0x82fc, 0x004d],         "45e        divu.w  #77,d1"),
    (&[0x41f8, 0x2100],         "462        lea     (0x2100).w,a0"),
    (&[0x4eba, 0x001c],         "466        jsr     count(pc)"),
    (&[0x2600],                 "46a        move.l  d0,d3"),
    (&[0xd681],                 "46c        add.l   d1,d3"),
    (&[0xd644],                 "46e        add.w   d4,d3"),
    (&[0xd686],                 "470        add.l   d6,d3"),
    (&[0x23c3, 0x0001, 0x0004], "472        move.l  d3,(0x10004).l    | LAST"),
    (&[0xd7b9, 0x0001, 0x0000], "478        add.l   d3,(0x10000).l    | TOTAL"),
    (&[0x5287],                 "47e        addq.l  #1,d7"),
    (&[0x6000, 0xff8c],         "480        bra.w   loop"),
    (&[0x7c00],                 "484 count: moveq   #0,d6"),
    (&[0x743f],                 "486        moveq   #63,d2"),
    (&[0x3a3c, 0x0064],         "488        move.w  #100,d5"),
    (&[0xba58],                 "48c c1:    cmp.w   (a0)+,d5"),
    (&[0x6402],                 "48e        bcc.s   c2"),
    (&[0x5246],                 "490        addq.w  #1,d6"),
    (&[0x51ca, 0xfff8],         "492 c2:    dbra    d2,c1"),
    (&[0x6102],                 "496        bsr.s   tiny"),
    (&[0x4e75],                 "498        rts"),
    (&[0x48c6],                 "49a tiny:  ext.l   d6"),
    (&[0x4e75],                 "49c        rts"),
];

/// Flat RAM, no wait states, no interrupts.
struct Ram {
    mem: Vec<u8>,
}

impl Ram {
    fn new() -> Self {
        let mut mem = vec![0u8; RAM_SIZE];
        mem[0..4].copy_from_slice(&STACK.to_be_bytes());
        mem[4..8].copy_from_slice(&ORG.to_be_bytes());
        let mut a = ORG as usize;
        for (words, _) in PROGRAM {
            for w in *words {
                mem[a..a + 2].copy_from_slice(&w.to_be_bytes());
                a += 2;
            }
        }
        Ram { mem }
    }

    fn long(&self, addr: u32) -> u32 {
        let a = addr as usize;
        u32::from_be_bytes(self.mem[a..a + 4].try_into().unwrap())
    }
}

impl Bus for Ram {
    #[inline(always)]
    fn read_byte(&mut self, addr: u32, _fc: FunctionCode, _now: u64) -> Read<u8> {
        Read::ok(self.mem[addr as usize & (RAM_SIZE - 1)])
    }
    #[inline(always)]
    fn read_word(&mut self, addr: u32, _fc: FunctionCode, _now: u64) -> Read<u16> {
        let a = addr as usize & (RAM_SIZE - 2);
        Read::ok(u16::from_be_bytes([self.mem[a], self.mem[a + 1]]))
    }
    #[inline(always)]
    fn write_byte(&mut self, addr: u32, data: u8, _fc: FunctionCode, _now: u64) -> Write {
        self.mem[addr as usize & (RAM_SIZE - 1)] = data;
        Write::OK
    }
    #[inline(always)]
    fn write_word(&mut self, addr: u32, data: u16, _fc: FunctionCode, _now: u64) -> Write {
        let a = addr as usize & (RAM_SIZE - 2);
        self.mem[a..a + 2].copy_from_slice(&data.to_be_bytes());
        Write::OK
    }
}

/// The profiler-style observer: cycles per instruction address.
struct PerPc {
    table: Vec<u64>,
    instructions: u64,
    exceptions: u64,
}

/// Table size: one entry per word of a 4 MiB ROM.
const TABLE_LEN: usize = 1 << 21;

impl Observer for PerPc {
    #[inline(always)]
    fn instruction(&mut self, pc: u32, cycles: u32) {
        self.table[(pc >> 1) as usize & (TABLE_LEN - 1)] += cycles as u64;
        self.instructions += 1;
    }
    #[inline(always)]
    fn exception(&mut self, _kind: ExceptionKind, _vector: u8, _handler: u32, _cycles: u32) {
        self.exceptions += 1;
    }
}

/// The program's computation for iteration `i`, written independently of
/// the instruction sequence.
fn checksum(i: u32) -> u32 {
    let arr: Vec<u16> = (0..64u32)
        .map(|k| (i as u16).wrapping_add((3 * k) as u16))
        .collect();
    let d0: u32 = arr.iter().map(|&w| w as u32).sum();
    let d4 = (0..16).fold(0u16, |acc, j| acc ^ arr[3 + 4 * j].wrapping_sub(arr[1]));
    let product = (d0 & 0xffff) * 50;
    let d1 = ((product % 77) << 16) | (product / 77);
    let d6 = arr.iter().filter(|&&w| w > 100).count() as u32;
    let mut d3 = d0.wrapping_add(d1);
    d3 = (d3 & 0xffff_0000) | (d3 as u16).wrapping_add(d4) as u32;
    d3.wrapping_add(d6)
}

struct RunResult {
    cpu: Cpu,
    ram: Ram,
    cycles: u64,
    seconds: f64,
    /// CPU time of this thread, when the OS tells it.
    cpu_seconds: Option<f64>,
    stop: Stop,
}

fn run<O: Observer>(obs: &mut O, budget: u64) -> RunResult {
    let mut ram = Ram::new();
    let mut cpu = Cpu::new();
    cpu.reset(&mut ram);
    let start = cpu.cycles();
    let cpu0 = thread_cpu_seconds();
    let t = Instant::now();
    let stop = cpu.run_until(&mut ram, obs, start + budget);
    let seconds = t.elapsed().as_secs_f64();
    let cpu_seconds = match (cpu0, thread_cpu_seconds()) {
        (Some(a), Some(b)) if b > a => Some(b - a),
        _ => None,
    };
    RunResult {
        cycles: cpu.cycles() - start,
        cpu,
        ram,
        seconds,
        cpu_seconds,
        stop,
    }
}

/// On-CPU time of the calling thread (Linux: first field of
/// /proc/thread-self/schedstat, in ns). On a shared machine the wall time
/// includes waiting for a core; this does not.
fn thread_cpu_seconds() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = s.split_whitespace().next()?.parse().ok()?;
    Some(ns as f64 / 1e9)
}

/// Steps to the top of the outer loop (bounded) and checks the program's
/// results against the model. Returns the number of completed iterations.
fn verify(name: &str, r: &mut RunResult) -> Result<u32, String> {
    if r.stop != Stop::Target {
        return Err(format!("{name}: the CPU halted after {} cycles", r.cycles));
    }
    // The test convention: pc is 4 past the instruction about to execute.
    let mut steps = 0;
    while r.cpu.registers().pc != LOOP + 4 {
        if steps > 10_000 || r.cpu.step(&mut r.ram, &mut ()) == 0 {
            return Err(format!(
                "{name}: never got back to the loop top at {LOOP:#x} (pc {:#x})",
                r.cpu.registers().pc
            ));
        }
        steps += 1;
    }
    let regs = r.cpu.registers();
    let n = regs.d[7];
    let expected_total = (0..n).fold(0u32, |acc, i| acc.wrapping_add(checksum(i)));
    let expected_last = if n == 0 { 0 } else { checksum(n - 1) };
    let total = r.ram.long(TOTAL);
    let last = r.ram.long(LAST);
    if total != expected_total || last != expected_last {
        return Err(format!(
            "{name}: after {n} iterations TOTAL = {total:#010x} (expected {expected_total:#010x}), \
             LAST = {last:#010x} (expected {expected_last:#010x})"
        ));
    }
    if regs.ssp != STACK || regs.sr & 0x2700 != 0x2700 {
        return Err(format!(
            "{name}: stack or status changed: ssp {:#x}, sr {:#06x}",
            regs.ssp, regs.sr
        ));
    }
    // Well under 20,000 cycles per iteration on any correct 68000 timing.
    if (n as u64) < r.cycles / 20_000 {
        return Err(format!(
            "{name}: only {n} iterations in {} cycles: timing is far off",
            r.cycles
        ));
    }
    Ok(n)
}

fn main() {
    // `bench --model N`: print the model's results after N iterations (to
    // cross-check the program with another emulator).
    if std::env::args().nth(1).as_deref() == Some("--model") {
        let n: u32 = std::env::args()
            .nth(2)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let total = (0..n).fold(0u32, |acc, i| acc.wrapping_add(checksum(i)));
        let last = if n == 0 { 0 } else { checksum(n - 1) };
        println!("n={n} TOTAL={total:#010x} LAST={last:#010x}");
        return;
    }
    let budget: u64 = match std::env::args().nth(1) {
        None => 300_000_000,
        Some(s) => s.parse().unwrap_or_else(|_| {
            eprintln!("usage: bench [EMULATED_CYCLES]  (got {s:?})");
            std::process::exit(2)
        }),
    };
    // Layout check: the label addresses the code relies on.
    let mut addr = ORG;
    for (words, src) in PROGRAM {
        let listed = u32::from_str_radix(&src[..3], 16).unwrap();
        assert_eq!(listed, addr, "program listing address of {src:?}");
        addr += 2 * words.len() as u32;
    }

    let mut a = run(&mut (), budget);
    let mut obs = PerPc {
        table: vec![0; TABLE_LEN],
        instructions: 0,
        exceptions: 0,
    };
    let mut b = run(&mut obs, budget);

    let mut errors = Vec::new();
    if a.cpu.registers() != b.cpu.registers() || a.cycles != b.cycles {
        errors.push(format!(
            "the two runs ended differently: {:?} after {} cycles vs {:?} after {} cycles",
            a.cpu.registers(),
            a.cycles,
            b.cpu.registers(),
            b.cycles
        ));
    }
    let table_sum: u64 = obs.table.iter().sum();
    if table_sum != b.cycles {
        errors.push(format!(
            "per-PC table holds {table_sum} cycles but the run took {}",
            b.cycles
        ));
    }
    if obs.exceptions != 0 {
        errors.push(format!("{} unexpected exceptions", obs.exceptions));
    }
    let mut starts = Vec::new();
    let mut addr = ORG;
    for (words, _) in PROGRAM {
        starts.push(addr);
        addr += 2 * words.len() as u32;
    }
    for (i, &c) in obs.table.iter().enumerate() {
        if c != 0 && starts.binary_search(&((i as u32) << 1)).is_err() {
            errors.push(format!(
                "per-PC table has {c} cycles at {:#x}, not an instruction",
                i << 1
            ));
            break;
        }
    }
    let na = verify("(a)", &mut a);
    let nb = verify("(b)", &mut b);
    for r in [&na, &nb] {
        if let Err(e) = r {
            errors.push(e.clone());
        }
    }
    if !errors.is_empty() {
        eprintln!("bench: the core did not run the program correctly:");
        for e in &errors {
            eprintln!("  {e}");
        }
        std::process::exit(1);
    }
    let iterations = nb.unwrap();
    let instructions = obs.instructions;
    println!(
        "program: {} outer iterations, {:.0} cycles and {:.1} instructions each",
        iterations,
        b.cycles as f64 / iterations.max(1) as f64,
        instructions as f64 / iterations.max(1) as f64
    );
    let line = |name: &str, r: &RunResult| {
        let rates = |secs: f64| {
            format!(
                "{:.1} MIPS, {:.1} M emulated cycles/s ({:.1}x the Mega Drive 68000)",
                instructions as f64 / secs / 1e6,
                r.cycles as f64 / secs / 1e6,
                r.cycles as f64 / secs / MD_68000_HZ
            )
        };
        println!(
            "{name}: {instructions} instructions, {} cycles, wall {:.3} s: {}",
            r.cycles,
            r.seconds,
            rates(r.seconds)
        );
        if let Some(c) = r.cpu_seconds {
            println!("{:w$}  on-CPU {c:.3} s: {}", "", rates(c), w = name.len());
        }
    };
    // (a) executes the same instruction stream as (b): both ended in the same
    // state after the same cycles, so (b)'s count applies to (a).
    line("(a) no observer ", &a);
    line("(b) per-PC table", &b);
    match (a.cpu_seconds, b.cpu_seconds) {
        (Some(ca), Some(cb)) => println!(
            "ratio (b)/(a): wall {:.2}, on-CPU {:.2}",
            b.seconds / a.seconds,
            cb / ca
        ),
        _ => println!("ratio (b)/(a) wall time: {:.2}", b.seconds / a.seconds),
    }
}
