//! Benchmark: symbolise a full Petit histogram (65,536 non-zero counters)
//! against a map of N functions, and time reading + symbolising.
//!
//! `cargo bench -p retroprof-samples --bench bench_symbolise -- [FUNCTIONS] [ROUNDS]`

use std::time::Instant;

use retroprof_samples::histogram::{self, Histogram};
use retroprof_samples::{symbolise, SymboliseOptions};
use retroprof_symbols::maps;

fn main() {
    let mut args = std::env::args().filter(|a| a != "--bench").skip(1);
    let nfunc: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(2000);
    let rounds: u32 = args.next().and_then(|s| s.parse().ok()).unwrap_or(20);
    // An MS LINK map with `nfunc` publics spread over one 64 KiB _TEXT and
    // 50 modules in a TLINK detailed map.
    let mut text = String::from(
        " Start  Stop   Length Name   Class\n 00000H 0FFFFH 10000H _TEXT  CODE\n\n\
         Detailed map of segments\n\n",
    );
    let step = 0x1_0000 / nfunc.max(1);
    let nmod: u64 = std::env::var("BENCH_MODULES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(50);
    for m in 0..nmod {
        let start = m * 0x10000 / nmod;
        let len = 0x10000 / nmod;
        text.push_str(&format!(
            " 0000:{start:04X} {len:04X} C=CODE S=_TEXT G=(none) M=MOD{m} ACBP=28\n"
        ));
    }
    text.push_str("\n  Address         Publics by Value\n\n");
    for i in 0..nfunc {
        text.push_str(&format!(" 0000:{:04X}       _f{i}\n", i * step));
    }
    text.push_str("\nProgram entry point at 0000:0000\n");
    let t = Instant::now();
    let map = maps::parse("bench.map", text.as_bytes(), None).expect("map");
    let parse_map = t.elapsed();

    let mut bytes = vec![0u8; histogram::PETIT_SIZE];
    for (i, c) in bytes.chunks_exact_mut(2).enumerate() {
        c.copy_from_slice(&((i % 997 + 1) as u16).to_le_bytes());
    }
    let opts = SymboliseOptions::default();
    let mut read_time = std::time::Duration::ZERO;
    let mut sym_time = std::time::Duration::ZERO;
    let mut total = 0u64;
    for _ in 0..rounds {
        let t = Instant::now();
        let h: Histogram = histogram::read_petit("bench.log", &bytes, 0).expect("hist");
        read_time += t.elapsed();
        let t = Instant::now();
        let p = symbolise(&h, &map, &opts).expect("symbolise");
        sym_time += t.elapsed();
        total += p.attributed;
    }
    println!(
        "map: {} functions, {nmod} modules, parsed in {:.2} ms; histogram: 65536 counters; \
         per round: read {:.2} ms, symbolise {:.2} ms ({rounds} rounds, {total} samples attributed)",
        map.code_symbol_count(),
        parse_map.as_secs_f64() * 1e3,
        read_time.as_secs_f64() * 1e3 / f64::from(rounds),
        sym_time.as_secs_f64() * 1e3 / f64::from(rounds),
    );
}
