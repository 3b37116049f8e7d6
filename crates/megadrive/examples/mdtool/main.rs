//! Debugging tools for the console, in one binary (they run through
//! `System::run_frame`, the 68000 core compiled once in the library):
//!
//! ```text
//! cargo run --release -p retroprof-megadrive --example mdtool -- frames ROM SYMBOLS FRAMES [INPUT]
//! cargo run --release -p retroprof-megadrive --example mdtool -- probe ROM OUT A B LO HI [INPUT]
//! cargo run --release -p retroprof-megadrive --example mdtool -- dmalog ROM FROM TO [INPUT]
//! cargo run --release -p retroprof-megadrive --example mdtool -- trace ROM F LO HI [INPUT]
//! ```
//!
//! - `frames`: per-frame busy/idle/DMA in the layout of
//!   `shared/reference/*.frames.csv` (see frames.rs).
//! - `probe`: per-frame PC counts and RAM snapshots, Z80 stall by scanline,
//!   `BREAK=pc,...`, `SHOTS=f,...` (see probe.rs).
//! - `dmalog`: DMA events and VDP register 1 writes of a frame range.
//! - `trace`: each instruction's cost inside `[LO, HI)` from frame F on.
//!
//! The identity check `statehash` stays an example of its own.

mod dmalog;
mod frames;
mod probe;
mod trace;

const USAGE: &str = "usage: mdtool frames|probe|dmalog|trace ARGS... (see the crate README)";

fn main() {
    let mut a: Vec<String> = std::env::args().skip(1).collect();
    if a.is_empty() {
        eprintln!("{USAGE}");
        std::process::exit(2);
    }
    let tool = a.remove(0);
    match tool.as_str() {
        "frames" => frames::main(a),
        "probe" => probe::main(a),
        "dmalog" => dmalog::main(a),
        "trace" => trace::main(a),
        _ => {
            eprintln!("unknown tool {tool:?}; {USAGE}");
            std::process::exit(2);
        }
    }
}
