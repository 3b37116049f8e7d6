//! The real SGDK ROMs of `shared/roms` run with the reference input script:
//! no halt, no error exception, no runaway for 3,600 frames (1,200 in debug
//! builds), and the pictures at frames 120, 400, 800 and 1199 are checked
//! against golden pixel hashes (`RETROPROF_BLESS=1` rewrites them) and
//! compared with Genesis Plus GX's pictures in `shared/reference`.

use std::path::{Path, PathBuf};

use retroprof_megadrive::render::read_png;
use retroprof_megadrive::{Config, InputScript, Rom, System};

/// The reference input (shared/reference/README.md).
const SCRIPT: &str =
    "60-600:R,200-210:C,300-305:S,600-605:S,700-1199:R,900-910:C,1000-1010:C,1100-1110:C";
const SHOTS: [u64; 4] = [120, 400, 800, 1199];

fn shared() -> PathBuf {
    let p = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared"));
    assert!(
        p.join("roms").is_dir(),
        "shared test data missing: {} (the ROMs and reference pictures live there)",
        p.display()
    );
    p
}

fn golden_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(format!("{name}.screens.txt"))
}

/// Run `name` and return "frame hash diff_vs_reference" lines.
fn run_rom(name: &str) -> (String, Vec<(u64, usize)>) {
    let shared = shared();
    let rom = Rom::load(&shared.join("roms").join(name).join("rom.bin")).unwrap();
    let script = InputScript::parse(&[SCRIPT]).unwrap();
    let mut sys = System::new(&rom, Config::default());
    let frames = if cfg!(debug_assertions) { 1200 } else { 3600 };
    let mut out = String::new();
    let mut diffs = Vec::new();
    for f in 0..frames {
        sys.set_pad(0, script.buttons_at(f));
        let shot = SHOTS.contains(&f);
        if shot {
            sys.request_screenshot();
        }
        if let Err(e) = sys.run_frame(&mut ()) {
            panic!("{name}: {e}");
        }
        if shot {
            let (sf, img) = sys.take_screenshot().expect("screenshot");
            assert_eq!(sf, f);
            let reference =
                read_png(&shared.join("reference").join(format!("{name}.f{f}.png"))).unwrap();
            let d = img
                .count_differences(&reference)
                .expect("same size as the reference picture");
            diffs.push((f, d));
            out.push_str(&format!("{f} {:016x}\n", img.fnv1a()));
        }
    }
    let c = sys.counters();
    assert_eq!(
        c.unmapped_fetches, 0,
        "{name}: instruction fetches from unmapped space"
    );
    (out, diffs)
}

fn check(name: &str) -> Vec<(u64, usize)> {
    let (hashes, diffs) = run_rom(name);
    let path = golden_path(name);
    if std::env::var_os("RETROPROF_BLESS").is_some() {
        std::fs::write(&path, &hashes).unwrap();
    } else {
        let golden = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e} (run with RETROPROF_BLESS=1 to create it)",
                path.display()
            )
        });
        assert_eq!(
            hashes, golden,
            "{name}: screenshots changed (differences from the GPGX pictures: {diffs:?})"
        );
    }
    diffs
}

#[test]
fn vnmd_runs_and_matches_the_reference_pictures() {
    let diffs = check("vnmd");
    // The visual novel takes the same path as in Genesis Plus GX: identical
    // pictures.
    for (f, d) in diffs {
        assert_eq!(d, 0, "vnmd frame {f}: {d} pixels differ from the reference");
    }
}

#[test]
fn platformer_runs() {
    let diffs = check("platformer");
    // Frame 120 is the title/level start, before the scripted input moves
    // the player: it must match the reference.
    assert_eq!(
        diffs[0],
        (120, 0),
        "platformer frame 120 differs: {diffs:?}"
    );
}
