//! DWARF line look-ups (`DebugInfo::try_location`) on the known-costs ROM's
//! ELF, and on copies of it whose line program is garbage: errors or no
//! line, never a panic.

use std::path::{Path, PathBuf};

use object::{Object, ObjectSection};
use retroprof_symbols::Symbols;

fn elf_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testroms/out/knowncosts/rom.elf")
}

fn burn_addr(s: &Symbols) -> u64 {
    s.table
        .symbols()
        .iter()
        .find(|x| x.name == "burn")
        .expect("burn in the known-costs ELF")
        .addr
}

#[test]
fn burn_lines() {
    let s = Symbols::load(&elf_path()).unwrap();
    let d = s.debug.as_ref().expect("DWARF");
    let a = burn_addr(&s);
    let at = |off: u64| d.try_location(a + off).unwrap().unwrap();
    assert_eq!(at(0).file, "testroms/lib/burn.s");
    assert_eq!(
        (at(0).line, at(4).line, at(8).line),
        (Some(9), Some(10), Some(11))
    );
    assert!(d.path().ends_with("rom.elf"));
}

/// Overwrite the ELF's `.debug_line` with `fill(i)` and look up every
/// even address of the code: no panic; every answer is an error, no line,
/// or a location.
fn with_garbage_lines(fill: impl Fn(usize) -> u8) -> (usize, usize) {
    let data = std::fs::read(elf_path()).unwrap();
    let file = object::File::parse(&*data).unwrap();
    let sec = file.section_by_name(".debug_line").unwrap();
    let (off, len) = sec.file_range().unwrap();
    let text_end = file
        .sections()
        .filter(|s| s.kind() == object::SectionKind::Text)
        .map(|s| s.address() + s.size())
        .max()
        .unwrap();
    let mut bad = data.clone();
    for i in 0..len as usize {
        bad[off as usize + i] = fill(i);
    }
    let dir = std::env::temp_dir().join(format!("retroprof-dwarf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("bad-{}.elf", fill(0)));
    std::fs::write(&path, &bad).unwrap();
    let s = Symbols::load(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    let d = s.debug.as_ref().expect("the .debug_info is intact");
    let (mut errors, mut lines) = (0, 0);
    for a in (0x200..text_end).step_by(2) {
        match d.try_location(a) {
            Err(e) => {
                assert!(!e.is_empty());
                errors += 1;
            }
            Ok(Some(_)) => lines += 1,
            Ok(None) => {}
        }
    }
    (errors, lines)
}

#[test]
fn garbage_line_programs_give_errors_not_panics() {
    // All 0xFF: a 64-bit unit of absurd length. addr2line reports it as
    // an error or as no line program; no address gets a line from it.
    let (errors, lines) = with_garbage_lines(|_| 0xFF);
    assert_eq!(lines, 0, "{errors} errors");
    // Pseudo-random bytes (fixed seed).
    let mut x = 0x1234_5678u32;
    let bytes: Vec<u8> = (0..1 << 16)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect();
    with_garbage_lines(|i| bytes[i % bytes.len()].max(1));
}
