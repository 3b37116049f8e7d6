//! End to end: run the vnmd SGDK ROM with the reference pad script and
//! compare our screenshots with Genesis Plus GX's pixel for pixel
//! (../shared/reference/vnmd.fN.png). This checks the renderer (and that
//! the game took the same path).

use std::path::{Path, PathBuf};

use retroprof_megadrive::render::read_png;
use retroprof_megadrive::{Config, InputScript, Rom, System};

fn shared() -> PathBuf {
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared"));
    assert!(
        dir.is_dir(),
        "{} is missing: the shared reference material must be present next to the repository",
        dir.display()
    );
    dir.to_path_buf()
}

/// The pad script of shared/reference/README.md.
const SCRIPT: [&str; 8] = [
    "60-600:R",
    "200-210:C",
    "300-305:S",
    "600-605:S",
    "700-1199:R",
    "900-910:C",
    "1000-1010:C",
    "1100-1110:C",
];

#[test]
fn vnmd_frames_match_reference_pictures() {
    let shared = shared();
    let rom_path = shared.join("roms/vnmd/rom.bin");
    let rom = Rom::load(&rom_path).unwrap_or_else(|e| panic!("{}: {e}", rom_path.display()));
    let script = InputScript::parse(&SCRIPT).expect("reference pad script");
    let mut sys = System::new(&rom, Config::default());
    let wanted = [120u64, 400];
    for f in 0..=*wanted.last().expect("frames") {
        sys.set_pad(0, script.buttons_at(f));
        if wanted.contains(&f) {
            sys.request_screenshot();
        }
        sys.run_frame(&mut ())
            .unwrap_or_else(|e| panic!("frame {f}: {e}"));
        if wanted.contains(&f) {
            let (shot_frame, img) = sys.take_screenshot().expect("screenshot");
            assert_eq!(shot_frame, f);
            let ref_path = shared.join(format!("reference/vnmd.f{f}.png"));
            let reference = read_png(&ref_path).unwrap_or_else(|e| panic!("{e}"));
            let diff = img.count_differences(&reference);
            assert_eq!(
                diff,
                Some(0),
                "frame {f}: our {}x{} picture differs from {} ({}x{})",
                img.width,
                img.height,
                ref_path.display(),
                reference.width,
                reference.height
            );
        }
    }
}
