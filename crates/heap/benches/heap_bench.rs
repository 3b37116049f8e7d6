//! Throughput of parsing + replay: generates a large synthetic log in
//! memory (Daedalus lines with frame markers, and the generic format) and
//! reports events per second.
//!
//! `cargo bench -p retroprof-heap --bench heap_bench -- [EVENTS]`

use std::time::Instant;

use retroprof_heap::{
    replay_log, synth, DriveOptions, LogReader, Replay, ReplayOptions, Symbolizer,
};

/// CPU time of this (the parse + replay) thread in seconds (Linux
/// schedstat), when available: on a loaded machine wall-clock time
/// understates the speed. Reading and inflating run on another thread.
fn cpu_seconds() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = s.split_whitespace().next()?.parse().ok()?;
    Some(ns as f64 / 1e9)
}

fn run(name: &str, text: Vec<u8>, events: u64) {
    let bytes = text.len();
    let cpu0 = cpu_seconds();
    let t = Instant::now();
    let mut reader =
        LogReader::from_reader(Box::new(std::io::Cursor::new(text)), name).expect("in memory");
    let mut replay = Replay::new(ReplayOptions::default(), Symbolizer::default());
    replay_log(&mut reader, &mut replay, DriveOptions::default()).expect("valid log");
    let a = replay.finish();
    let secs = t.elapsed().as_secs_f64();
    let cpu = match (cpu0, cpu_seconds()) {
        (Some(a), Some(b)) => format!(
            "; parse+replay thread CPU {:.3} s = {:.2} M events/s",
            b - a,
            events as f64 / (b - a) / 1e6
        ),
        _ => String::new(),
    };
    assert_eq!(a.events, events);
    assert_eq!(a.anomalies.total(), 0, "{:?}", a.anomalies.counts);
    println!(
        "{name:>10}: {} events ({:.1} MB) in {:.3} s wall = {:.2} M events/s{cpu}\n            peak {} bytes, {} live blocks at the end, {} call sites",
        a.events,
        bytes as f64 / 1e6,
        secs,
        a.events as f64 / secs / 1e6,
        a.peak.bytes,
        a.live_blocks,
        a.sites.len()
    );
}

fn main() {
    let events: u64 = std::env::args()
        .filter(|a| a != "--bench")
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(5_000_000);
    let t = Instant::now();
    let evs = synth::game_like(events, 42);
    let daedalus = synth::daedalus_text(&evs);
    let generic = synth::generic_text(&evs, Some("mips"));
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, &daedalus).expect("in memory");
    let gz = gz.finish().expect("in memory");
    println!(
        "generated {events} events in {:.2} s (load average {})",
        t.elapsed().as_secs_f64(),
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    run("daedalus", daedalus, events);
    run("generic", generic, events);
    run("gzip", gz, events);
}
