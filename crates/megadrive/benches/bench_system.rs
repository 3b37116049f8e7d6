//! Speed of the console without rendering or observer:
//! `cargo bench -p retroprof-megadrive --bench bench_system -- ROM FRAMES`
//! prints frames per second (wall clock; compare ratios measured in one run).

use std::path::PathBuf;
use std::time::Instant;

use retroprof_megadrive::{Config, Rom, System};

fn main() {
    let mut args = std::env::args().filter(|a| a != "--bench").skip(1);
    let Some(rom) = args.next().map(PathBuf::from) else {
        eprintln!("usage: bench_system ROM [FRAMES]");
        std::process::exit(2);
    };
    let frames: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(3600);
    let rom = match Rom::load(&rom) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    let mut sys = System::new(&rom, Config::default());
    let t = Instant::now();
    let mut ran = 0;
    for _ in 0..frames {
        if let Err(e) = sys.run_frame_unobserved() {
            eprintln!("stopped: {e}");
            break;
        }
        ran += 1;
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "{ran} frames in {secs:.3} s: {:.1} frames/s, {} instructions ({:.1} M/s)",
        ran as f64 / secs,
        sys.instructions(),
        sys.instructions() as f64 / secs / 1e6
    );
}
