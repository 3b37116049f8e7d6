//! Speed of `profile`: frames per second with full attribution and
//! per-frame records, single thread, against the same emulation with the
//! no-op observer.
//!
//! `cargo bench -p retroprof-mdprof --bench profile_bench -- [--frames N] [ROM...]`
//! (no ROM: the built-in demo ROM). Symbols are found next to each ROM.

use std::path::PathBuf;
use std::time::Instant;

use retroprof_mdprof::{demo, load_symbols, ProfileOptions, Session};
use retroprof_megadrive::{Config, System};

fn main() {
    let mut frames = 1200u64;
    let mut roms: Vec<PathBuf> = Vec::new();
    let mut args = std::env::args().filter(|a| a != "--bench").skip(1);
    while let Some(a) = args.next() {
        if a == "--frames" {
            frames = args
                .next()
                .and_then(|v| v.parse().ok())
                .expect("--frames N");
        } else {
            roms.push(PathBuf::from(a));
        }
    }
    let input = vec![
        "60-600:R,200-210:C,300-305:S,600-605:S,700-1199:R,900-910:C,1000-1010:C,1100-1110:C"
            .to_string(),
    ];
    let mut sessions = Vec::new();
    if roms.is_empty() {
        let (rom, syms) = demo::load();
        sessions.push(("demo".to_string(), rom, Some(syms)));
    }
    for p in &roms {
        let rom = retroprof_megadrive::Rom::load(p).expect("ROM");
        let syms = load_symbols(p, None).expect("symbols");
        sessions.push((p.display().to_string(), rom, syms));
    }
    println!(
        "{:<40} {:>10} {:>10} {:>7}",
        "rom", "noop fps", "prof fps", "ratio"
    );
    for (name, rom, syms) in sessions {
        let opts = ProfileOptions {
            frames,
            input: input.clone(),
            ..ProfileOptions::default()
        };
        let s = Session::new(rom.clone(), name.clone(), syms, opts).expect("session");
        // No-op observer, same input.
        let t = Instant::now();
        let mut sys = System::new(&rom, Config::default());
        let script = retroprof_megadrive::InputScript::parse(&input).unwrap();
        for f in 0..frames {
            sys.set_pad(0, script.buttons_at(f));
            sys.run_frame_unobserved().expect("run");
        }
        let noop = frames as f64 / t.elapsed().as_secs_f64();
        let t = Instant::now();
        let r = s.run(&mut |_, _| {});
        let prof = r.frames.len() as f64 / t.elapsed().as_secs_f64();
        println!(
            "{:<40} {:>10.0} {:>10.0} {:>7.2}",
            name,
            noop,
            prof,
            prof / noop
        );
    }
}
