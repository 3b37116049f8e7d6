//! The Mega Drive side of symbols (`retroprof_mdprof::romsyms`): finding
//! the symbol files of a ROM (SGDK's layouts), the console's index options
//! and the checks of symbols against a ROM, on the shared SGDK ROMs, our
//! test ROMs and symbols' tests/data/inline.elf.

use std::path::{Path, PathBuf};

use retroprof_mdprof::romsyms::{
    candidates_for_rom, find_for_rom, index_options, validate_against_rom,
    validate_against_rom_bytes, validate_call_targets,
};
use retroprof_symbols::{SymbolKind, SymbolSource, Symbols};

fn shared_roms() -> PathBuf {
    let p = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/roms"));
    assert!(
        p.join("vnmd/symbol.txt").is_file() && p.join("platformer/rom.out").is_file(),
        "test data missing: {} must hold vnmd/ and platformer/ (the shared folder beside the repo)",
        p.display()
    );
    p
}

fn data(name: &str) -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../symbols/tests/data"
    ))
    .join(name)
}

fn rom_entry(rom: &[u8]) -> u64 {
    u32::from_be_bytes(rom[4..8].try_into().unwrap()) as u64
}

#[test]
fn right_symbols_pass_the_checks_and_foreign_ones_do_not() {
    let roms = shared_roms();
    let v = Symbols::load_nm(&roms.join("vnmd/symbol.txt")).unwrap();
    let p = Symbols::load_nm(&roms.join("platformer/symbol.txt")).unwrap();
    // Validation against the right ROM: no warnings.
    for (name, s) in [("vnmd", &v), ("platformer", &p)] {
        let rom = std::fs::read(roms.join(name).join("rom.bin")).unwrap();
        let w = validate_against_rom(s, rom.len() as u64, rom_entry(&rom));
        assert!(w.is_empty(), "{name}: {w:?}");
    }
    let v = Symbols::load_elf(&roms.join("vnmd/rom.out")).unwrap();
    let p = Symbols::load_elf(&roms.join("platformer/rom.out")).unwrap();
    // Section bytes match the right ROM (but for the header checksum) and
    // not the other one.
    let vrom = std::fs::read(roms.join("vnmd/rom.bin")).unwrap();
    let prom = std::fs::read(roms.join("platformer/rom.bin")).unwrap();
    assert_eq!(validate_against_rom_bytes(&v, &vrom), Vec::<String>::new());
    assert_eq!(validate_against_rom_bytes(&p, &prom), Vec::<String>::new());
    let w = validate_against_rom_bytes(&v, &prom);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].contains("differs from the ROM"), "{w:?}");

    // nm listings carry no bytes: the ROM's jsr targets must start
    // functions (all do with the right listing; few with the other one).
    let vn = Symbols::load_nm(&roms.join("vnmd/symbol.txt")).unwrap();
    let pn = Symbols::load_nm(&roms.join("platformer/symbol.txt")).unwrap();
    assert_eq!(validate_call_targets(&vn, &vrom), Vec::<String>::new());
    assert_eq!(validate_call_targets(&pn, &prom), Vec::<String>::new());
    assert_eq!(validate_call_targets(&v, &vrom), Vec::<String>::new());
    let w = validate_call_targets(&vn, &prom);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].contains("jsr` targets are not the start"), "{w:?}");
}

#[test]
fn nm_listing_with_lines_is_merged_into_the_elf() {
    let dir = tempdir("merge");
    std::fs::copy(data("inline.elf"), dir.join("rom.out")).unwrap();
    std::fs::write(
        dir.join("symbol.txt"),
        std::fs::read(data("inline.symbol.txt")).unwrap(),
    )
    .unwrap();
    std::fs::write(dir.join("rom.bin"), [0u8; 16]).unwrap();
    let s = find_for_rom(&dir.join("rom.bin")).unwrap().unwrap();
    assert_eq!(s.source, SymbolSource::Elf);
    assert_eq!(s.path, dir.join("rom.out"));
    assert_eq!(s.also_read, vec![dir.join("symbol.txt")]);
    let sum = s.table.symbols().iter().find(|x| x.name == "sum").unwrap();
    assert_eq!(
        (sum.file.as_deref(), sum.line),
        (Some("./inline.c"), Some(30))
    );
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    // A stale listing is reported.
    std::fs::write(dir.join("symbol.txt"), "00000300 T sum\n").unwrap();
    let s = find_for_rom(&dir.join("rom.bin")).unwrap().unwrap();
    assert_eq!(s.warnings.len(), 1, "{:?}", s.warnings);
    assert!(
        s.warnings[0].contains("disagree on 1 code symbol"),
        "{:?}",
        s.warnings
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

fn tempdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("retroprof-romsyms-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn touch(p: &Path, content: &[u8]) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, content).unwrap();
}

#[test]
fn discovery_layouts() {
    let elf = std::fs::read(data("inline.elf")).unwrap();
    let nm = b"00000200 T from_listing\n";

    // 1. Nothing next to the ROM.
    let d = tempdir("none");
    touch(&d.join("game.bin"), b"rom");
    assert!(find_for_rom(&d.join("game.bin")).unwrap().is_none());

    // 2. SGDK out/: ROM at out/rom.bin, symbol.txt beside it.
    let d = tempdir("sgdk");
    touch(&d.join("out/rom.bin"), b"rom");
    touch(&d.join("out/symbol.txt"), nm);
    let s = find_for_rom(&d.join("out/rom.bin")).unwrap().unwrap();
    assert_eq!(
        (s.source, s.path.clone()),
        (SymbolSource::Nm, d.join("out/symbol.txt"))
    );

    // 3. ROM copied to the project root; symbols in out/release/ (newer
    //    SGDK) preferred over out/debug/ by folder order; ELF over nm.
    let d = tempdir("buildtype");
    touch(&d.join("game.bin"), b"rom");
    touch(&d.join("out/release/rom.out"), &elf);
    touch(&d.join("out/release/symbol.txt"), nm);
    touch(&d.join("out/debug/symbol.txt"), nm);
    let s = find_for_rom(&d.join("game.bin")).unwrap().unwrap();
    assert_eq!(s.path, d.join("out/release/rom.out"));
    assert_eq!(
        candidates_for_rom(&d.join("game.bin")),
        vec![
            d.join("out/release/rom.out"),
            d.join("out/release/symbol.txt"),
            d.join("out/debug/symbol.txt")
        ]
    );

    // 4. <stem>.elf next to the ROM; a broken ELF falls back with a warning.
    let d = tempdir("stem");
    touch(&d.join("game.bin"), b"rom");
    touch(&d.join("game.elf"), b"\x7fELF garbage");
    touch(&d.join("symbol.txt"), nm);
    let s = find_for_rom(&d.join("game.bin")).unwrap().unwrap();
    assert_eq!(s.source, SymbolSource::Nm);
    assert!(
        s.warnings.iter().any(|w| w.contains("game.elf")),
        "{:?}",
        s.warnings
    );

    // 5. Only a broken ELF: the error names it.
    std::fs::remove_file(d.join("symbol.txt")).unwrap();
    let e = find_for_rom(&d.join("game.bin")).unwrap_err();
    assert!(e.to_string().contains("game.elf"), "{e}");

    // 6. A malformed listing: the error names file and line.
    let d = tempdir("bad");
    touch(&d.join("rom.bin"), b"rom");
    touch(
        &d.join("symbol.txt"),
        b"00000200 T ok\r\nnot a symbol line\r\n",
    );
    let e = find_for_rom(&d.join("rom.bin")).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("symbol.txt:2: "), "{msg}");

    for n in ["none", "sgdk", "buildtype", "stem", "bad"] {
        let _ = std::fs::remove_dir_all(tempdir(n));
    }
}

#[test]
fn shared_rom_folders_are_found() {
    let roms = shared_roms();
    for name in ["vnmd", "platformer"] {
        let rom_path = roms.join(name).join("rom.bin");
        let s = find_for_rom(&rom_path).unwrap().unwrap();
        assert_eq!(s.source, SymbolSource::Elf);
        assert_eq!(s.also_read, vec![roms.join(name).join("symbol.txt")]);
        assert!(s.warnings.is_empty(), "{name}: {:?}", s.warnings);
        let rom = std::fs::read(&rom_path).unwrap();
        assert!(validate_against_rom(&s, rom.len() as u64, rom_entry(&rom)).is_empty());
    }
}

#[test]
fn validation_flags_foreign_symbols() {
    let text = "00500000 T far_away\n00600000 T further\n";
    let s = Symbols::parse_nm(Path::new("other.txt"), text).unwrap();
    let w = validate_against_rom(&s, 0x20000, 0x200);
    assert_eq!(w.len(), 3, "{w:?}");
    assert!(w[0].contains("no code symbol lies inside the ROM"));
    assert!(w[1].contains("2 code symbol(s) lie past the end"));
    assert!(w[2].contains("entry point 0x000200 is outside every function"));
}

/// Our own test ROMs (testroms/out/*/: rom.bin, rom.elf with DWARF,
/// symbol.txt), cross-checked without hard-coding their layout, which the
/// test-ROM sources may change.
#[test]
fn test_roms_with_dwarf() {
    let out = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testroms/out"));
    let mut roms: Vec<PathBuf> = std::fs::read_dir(&out)
        .unwrap_or_else(|e| {
            panic!(
                "{} missing ({e}): the test ROMs are part of the repo",
                out.display()
            )
        })
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("rom.bin").is_file())
        .collect();
    roms.sort();
    assert!(!roms.is_empty(), "no test ROMs in {}", out.display());
    let mut contexts = 0;
    for dir in roms {
        let rom_path = dir.join("rom.bin");
        let rom = std::fs::read(&rom_path).unwrap();
        let s = find_for_rom(&rom_path).unwrap().unwrap();
        assert_eq!(s.source, SymbolSource::Elf, "{}", dir.display());
        assert!(s.debug.is_some(), "{}: rom.elf has DWARF", dir.display());
        assert!(s.warnings.is_empty(), "{}: {:?}", dir.display(), s.warnings);
        assert_eq!(
            validate_against_rom(&s, rom.len() as u64, rom_entry(&rom)),
            Vec::<String>::new()
        );
        assert_eq!(validate_against_rom_bytes(&s, &rom), Vec::<String>::new());
        let ix = s.build_index(&index_options(rom.len() as u64)).unwrap();
        // Every address of a sized code symbol maps to a function starting
        // at that symbol's address (aliases may give it another name).
        for sym in s.table.symbols() {
            let (Some(size), SymbolKind::Text) = (sym.size, sym.kind) else {
                continue;
            };
            for a in (sym.addr..sym.addr + size).step_by(2) {
                let f = ix.function_at(a);
                assert_eq!(
                    f.start,
                    sym.addr,
                    "{}: 0x{a:x} in {} but mapped to {f:?}",
                    dir.display(),
                    sym.name
                );
            }
        }
        // Inline chains name functions and call sites in our sources.
        contexts += ix.inline_chain_count() - 1;
        for id in 1..ix.inline_chain_count() as u32 {
            for f in ix.inline_chain(id) {
                assert_ne!(f.name, "?", "{}", dir.display());
                let file = f.call_file.as_deref().unwrap_or("");
                assert!(file.starts_with("testroms/"), "{}: {f:?}", dir.display());
                assert!(f.call_line.unwrap_or(0) > 0, "{f:?}");
            }
        }
        // DWARF lines for the C code.
        let main = ix.find("main").expect("a main function");
        let loc = s.source_location(ix.function(main).start).unwrap();
        assert!(loc.file.ends_with(".c"), "{loc:?}");
    }
    assert!(contexts > 0, "the test ROMs inline something");
}

/// `validate_against_rom_bytes` compares the bytes outside the header
/// checksum as slices; both ways: its warnings equal those of a byte by
/// byte count (the checksum's 2 bytes skipped) for sections at random
/// places (before, across and after the checksum, past the ROM's end) and
/// random bytes changed, the checksum's included.
#[test]
fn rom_byte_check_matches_the_byte_by_byte_count() {
    use retroprof_symbols::CodeSection;
    let roms = shared_roms();
    let mut syms = Symbols::load_elf(&roms.join("vnmd/rom.out")).unwrap();
    let rom = std::fs::read(roms.join("vnmd/rom.bin")).unwrap();
    let mut rng = retroprof_testkit::SplitMix64::new(0x0C0D_E5EC);
    let reference = |syms: &Symbols, rom: &[u8]| -> Vec<String> {
        let mut w = Vec::new();
        for s in &syms.code_sections {
            let start = (s.addr & 0xFF_FFFF) as usize;
            if start >= rom.len() {
                continue;
            }
            let n = s.data.len().min(rom.len() - start);
            let (mut diff, mut first) = (0usize, None);
            for i in 0..n {
                let a = start + i;
                if !(0x18E..0x190).contains(&a) && s.data[i] != rom[a] {
                    diff += 1;
                    first.get_or_insert(a);
                }
            }
            if diff > 0 {
                w.push(format!(
                    "{}: section {} differs from the ROM in {diff} of {n} bytes (first at 0x{:06x}); \
                     the symbols may be from another build",
                    syms.path.display(),
                    s.name,
                    first.unwrap_or(0)
                ));
            }
            if s.data.len() > n {
                w.push(format!(
                    "{}: section {} (0x{:x} bytes at 0x{:06x}) runs past the {}-byte ROM",
                    syms.path.display(),
                    s.name,
                    s.data.len(),
                    start,
                    rom.len()
                ));
            }
        }
        w
    };
    let starts = [0usize, 0x100, 0x18D, 0x18E, 0x18F, 0x190, 0x191, 0x200];
    let (mut same, mut differ) = (0, 0);
    for case in 0..400 {
        let start = if case % 2 == 0 {
            starts[rng.below(starts.len() as u64) as usize]
        } else {
            rng.below(rom.len() as u64 + 16) as usize
        };
        let len = match rng.below(3) {
            0 => rng.below(8) as usize,
            1 => rng.below(0x400) as usize,
            _ => rom.len() + 8 - start.min(rom.len()),
        };
        let mut data: Vec<u8> = (0..len)
            .map(|i| rom.get(start + i).copied().unwrap_or(0xFF))
            .collect();
        for _ in 0..rng.below(4) {
            if !data.is_empty() {
                let k = if rng.below(2) == 0 {
                    0x18E_usize.saturating_sub(start).min(data.len() - 1)
                } else {
                    rng.below(data.len() as u64) as usize
                };
                data[k] ^= 1 + rng.below(255) as u8;
            }
        }
        syms.code_sections = vec![CodeSection {
            name: format!(".text{case}"),
            addr: start as u64 | (0xE000_0000 * rng.below(2)),
            data,
        }];
        let want = reference(&syms, &rom);
        if want.iter().any(|w| w.contains("differs")) {
            differ += 1;
        } else {
            same += 1;
        }
        assert_eq!(validate_against_rom_bytes(&syms, &rom), want, "case {case}");
    }
    assert!(same > 50 && differ > 50, "same {same} differ {differ}");
}
