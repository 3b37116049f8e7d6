//! Speed benchmark of the 68000 core.
//!
//! ```text
//! cargo bench -p retroprof-m68k --bench cpu_bench [-- EMULATED_CYCLES]
//! ```
//!
//! Runs a small hand-assembled program (listing with the assembly in
//! `tests/support/bench_program.rs`) on a flat 1 MiB RAM bus with
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

use retroprof_m68k::{Cpu, Observer, Stop};

#[path = "../tests/support/bench_program.rs"]
mod bench_program;
use bench_program::*;

/// The Mega Drive's 68000 clock, for scale: the NTSC master clock divided
/// by the 68000's divider (md-timing.md, "Clocks"). Copies of
/// `retroprof_megadrive::timing::{MCLK_HZ_NTSC, M68K_DIVIDER}`, the units'
/// one home: this crate sits below the console (megadrive depends on it),
/// so it cannot use them; nothing but this printed ratio depends on them.
const MCLK_HZ_NTSC: f64 = 53_693_175.0;
const M68K_DIVIDER: f64 = 7.0;
const MD_68000_HZ: f64 = MCLK_HZ_NTSC / M68K_DIVIDER;

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

/// Steps to the top of the outer loop and checks the program's results.
fn verify(name: &str, r: &mut RunResult) -> Result<u32, String> {
    if r.stop != Stop::Target {
        return Err(format!("{name}: the CPU halted after {} cycles", r.cycles));
    }
    check_program(&mut r.cpu, &mut r.ram, r.cycles).map_err(|e| format!("{name}: {e}"))
}

fn main() {
    // `bench --model N`: print the model's results after N iterations (to
    // cross-check the program with another emulator).
    if std::env::args()
        .filter(|a| a != "--bench")
        .nth(1)
        .as_deref()
        == Some("--model")
    {
        let n: u32 = std::env::args()
            .filter(|a| a != "--bench")
            .nth(2)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let total = (0..n).fold(0u32, |acc, i| acc.wrapping_add(checksum(i)));
        let last = if n == 0 { 0 } else { checksum(n - 1) };
        println!("n={n} TOTAL={total:#010x} LAST={last:#010x}");
        return;
    }
    let budget: u64 = match std::env::args().filter(|a| a != "--bench").nth(1) {
        None => 300_000_000,
        Some(s) => s.parse().unwrap_or_else(|_| {
            eprintln!("usage: bench [EMULATED_CYCLES]  (got {s:?})");
            std::process::exit(2)
        }),
    };
    check_listing();

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
    if let Err(e) = check_table(&obs.table) {
        errors.push(e);
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
