//! Writes a synthetic game-like allocation log (Daedalus lines with frame
//! markers) to standard output, e.g. to try `retroprof heap` on:
//!
//! `cargo run --release -p retroprof-heap --example synth_log -- 100000 > game.log`

use std::io::Write;

fn main() {
    let events: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(100_000);
    let evs = retroprof_heap::synth::game_like(events, 42);
    let text = retroprof_heap::synth::daedalus_text(&evs);
    let _ = std::io::stdout().lock().write_all(&text);
}
