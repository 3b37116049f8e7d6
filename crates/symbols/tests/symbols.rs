//! Symbol loading and indexing on the real SGDK ROMs in ../shared/roms and
//! on tests/data/inline.elf (our own 68000 ELF with DWARF inlining). Finding
//! a ROM's symbol files and checking them against the ROM are Mega Drive
//! knowledge: their tests are in crates/mdprof/tests/romsyms.rs.

use std::path::{Path, PathBuf};

use retroprof_symbols::{
    clone_base_name, FunctionIndex, FunctionOrigin, IndexOptions, InlineFrame, RangeSpec,
    SymbolKind, SymbolSource, Symbols,
};

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
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data")).join(name)
}

fn addr_of(s: &Symbols, name: &str) -> u64 {
    s.table
        .symbols()
        .iter()
        .find(|x| x.name == name)
        .unwrap_or_else(|| panic!("no symbol {name}"))
        .addr
}

/// Index options of a 68000 console: ROM `0..rom_len` and RAM
/// `0xFF0000..0x1000000`, one entry per 2 bytes, 24-bit addresses, 256-byte
/// buckets (the Mega Drive's, which `retroprof-mdprof` builds; this crate
/// knows no console).
fn md_index(rom_len: u64) -> IndexOptions {
    IndexOptions {
        ranges: vec![
            RangeSpec {
                name: "rom".into(),
                start: 0,
                end: rom_len.min(0x40_0000),
            },
            RangeSpec {
                name: "ram".into(),
                start: 0xFF_0000,
                end: 0x100_0000,
            },
        ],
        shift: 1,
        keep_labels: false,
        bucket_size: 0x100,
        addr_mask: 0xFF_FFFF,
    }
}

#[test]
fn nm_listings_of_the_shared_roms() {
    let roms = shared_roms();
    let v = Symbols::load_nm(&roms.join("vnmd/symbol.txt")).unwrap();
    let p = Symbols::load_nm(&roms.join("platformer/symbol.txt")).unwrap();
    assert_eq!(v.table.len(), 1160);
    assert_eq!(p.table.len(), 1749);
    assert_eq!(v.source, SymbolSource::Nm);
    assert_eq!(addr_of(&v, "VDP_waitVBlank"), 0x009654);
    assert_eq!(addr_of(&p, "VDP_waitVBlank"), 0x00c758);
    assert_eq!(addr_of(&p, "main"), 0x00061e);
    assert!(
        !v.table.symbols().iter().any(|s| s.name == "main"),
        "vnmd has no main (LTO)"
    );
    // RAM symbols as linked (0xE0FF....), absolute symbols, clones.
    let edata = v
        .table
        .symbols()
        .iter()
        .find(|s| s.name == "_edata")
        .unwrap();
    assert_eq!(edata.addr, 0xe0ff007c);
    assert_eq!(edata.kind, SymbolKind::Data);
    let dynamic = v
        .table
        .symbols()
        .iter()
        .find(|s| s.name == "__DYNAMIC")
        .unwrap();
    assert_eq!(dynamic.kind, SymbolKind::Absolute);
    let clone = p
        .table
        .symbols()
        .iter()
        .find(|s| s.name == "SYS_doVBlankProcessEx.constprop.57")
        .unwrap();
    assert_eq!((clone.addr, clone.kind), (0x3a44, SymbolKind::Text));
    // Local labels are Other, so a Text lookup answers the function.
    let label = p
        .table
        .symbols()
        .iter()
        .find(|s| s.name == ".loop_do_copy")
        .unwrap();
    assert_eq!(label.kind, SymbolKind::Other);
    assert_eq!(
        p.table.lookup(0x240c, SymbolKind::Text).unwrap().name,
        "aplib_decrunch"
    );
}

#[test]
fn elf_files_of_the_shared_roms() {
    let roms = shared_roms();
    let p = Symbols::load_elf(&roms.join("platformer/rom.out")).unwrap();
    assert_eq!(p.source, SymbolSource::Elf);
    let main = p.table.symbols().iter().find(|s| s.name == "main").unwrap();
    assert_eq!((main.addr, main.size), (0x61e, Some(6774)));
    let wait = p
        .table
        .symbols()
        .iter()
        .find(|s| s.name == "VDP_waitVBlank")
        .unwrap();
    assert_eq!((wait.addr, wait.size), (0xc758, Some(404)));
    assert!(wait.global);
    // STT_FILE gives locals their module.
    let entry = p
        .table
        .symbols()
        .iter()
        .find(|s| s.name == "_Entry_Point")
        .unwrap();
    assert_eq!(entry.module.as_deref(), Some("out/sega.o"));
    // The ELF has every symbol of the nm listing.
    let nm = Symbols::load_nm(&roms.join("platformer/symbol.txt")).unwrap();
    for s in nm.table.symbols() {
        assert!(
            p.table
                .symbols()
                .iter()
                .any(|e| e.name == s.name && e.addr == s.addr),
            "{} at 0x{:x} missing from the ELF",
            s.name,
            s.addr
        );
    }
    // nm types every symbol in .text `T`/`t`; the ELF tells the 134 data
    // objects there (palettes, level arrays: STT_OBJECT) from code.
    assert_eq!(nm.function_symbol_count(), 794);
    assert_eq!(p.function_symbol_count(), 794 - 134);
    let pal = p
        .table
        .symbols()
        .iter()
        .find(|s| s.name == "palette_grey")
        .unwrap();
    assert_eq!((pal.kind, pal.size), (SymbolKind::Data, Some(32)));

    let v = Symbols::load_elf(&roms.join("vnmd/rom.out")).unwrap();
    assert_eq!(addr_of(&v, "VDP_waitVBlank"), 0x9654);
    // vnmd's DWARF only covers the assembler start-up file.
    assert!(v.debug.is_some());
}

#[test]
fn function_index_on_platformer() {
    let roms = shared_roms();
    let rom = std::fs::read(roms.join("platformer/rom.bin")).unwrap();
    for s in [
        Symbols::load_nm(&roms.join("platformer/symbol.txt")).unwrap(),
        Symbols::load_elf(&roms.join("platformer/rom.out")).unwrap(),
    ] {
        let ix = s.build_index(&md_index(rom.len() as u64)).unwrap();
        let wait = ix.find("VDP_waitVBlank").unwrap();
        assert_eq!(ix.lookup(0xc758), wait);
        assert_eq!(ix.lookup(0xc758 + 0x190), wait);
        assert_ne!(ix.lookup(0xc758 - 2), wait);
        let f = ix.function(wait);
        assert_eq!((f.start, f.end), (0xc758, 0xc758 + 404));
        assert_eq!(ix.function_at(0x61e).name, "main");
        assert_eq!(ix.function_at(0x61e + 6772).name, "main");
        // The local label is merged into its function.
        assert_eq!(ix.function_at(0x240c).name, "aplib_decrunch");
        assert!(ix.find(".loop_do_copy").is_none());
        // Several symbols at 0: one function, the others aliases.
        let f0 = ix.function_at(0);
        assert_eq!(f0.origin, FunctionOrigin::Symbol);
        assert!(!f0.aliases.is_empty(), "{f0:?}");
        // _etext ends the function before it.
        let before = ix.function_at(0x1ddfe);
        assert_eq!(before.name, "__FINI_SECTION__");
        assert_eq!(before.end, 0x1de00);
        // RAM has no code symbols: 256-byte buckets, named by address.
        // The last ROM function stops at the end of the ROM.
        let last = ix.function_at(rom.len() as u64 - 2);
        assert_eq!(last.end, rom.len() as u64, "{last:?}");
        assert_eq!(ix.function_at(0xff0010).origin, FunctionOrigin::Bucket);
        let r = ix.function_at(0xff0124);
        assert_eq!(
            (r.name.as_str(), r.origin),
            ("ram_0xff0100", FunctionOrigin::Bucket)
        );
        assert_eq!(ix.lookup(0x1000000), 0);
        assert_eq!(ix.lookup(0x900000), 0);
        // Every ROM entry is a real function id.
        let n = ix.functions().len() as u32;
        assert!(ix.ranges()[0].ids.iter().all(|&id| id < n));
        assert_eq!(ix.ranges()[0].ids.len(), rom.len() / 2);
    }
    let nm = Symbols::load_nm(&roms.join("platformer/symbol.txt")).unwrap();
    let mut opts = md_index(rom.len() as u64);
    opts.keep_labels = true;
    let ix = nm.build_index(&opts).unwrap();
    let f = ix.function_at(0x240c);
    assert_eq!(f.name, "aplib_decrunch:.loop_do_copy");
    assert_eq!(f.origin, FunctionOrigin::Label);
}

#[test]
fn rom_without_symbols_gets_buckets() {
    let table = retroprof_symbols::SymbolTable::new(Vec::new());
    let mut opts = md_index(0x20000);
    opts.bucket_size = 0x1000;
    let ix = FunctionIndex::build(&table, None, &opts).unwrap();
    assert_eq!(ix.function_at(0x1234).name, "rom_0x001000");
    assert_eq!(ix.function_at(0x1ffff).name, "rom_0x01f000");
    assert_eq!(ix.function_at(0xff8000).name, "ram_0xff8000");
    // 32 ROM buckets + 16 RAM buckets + [unknown].
    assert_eq!(ix.functions().len(), 1 + 32 + 16);
    assert_eq!(ix.function(0).name, "[unknown]");
    opts.bucket_size = 0;
    let ix = FunctionIndex::build(&table, None, &opts).unwrap();
    assert_eq!(ix.lookup(0x1234), 0);
    opts.bucket_size = 3;
    assert!(FunctionIndex::build(&table, None, &opts).is_err());
}

#[test]
fn dwarf_lines_and_inlining() {
    let s = Symbols::load_elf(&data("inline.elf")).unwrap();
    assert!(s.debug.is_some(), "inline.elf has DWARF");
    let loc = s.source_location(0x240).unwrap();
    assert_eq!(loc.file, "./inline.c");
    assert_eq!(loc.line, Some(33));
    // 0x216: read_status inlined into wait_vblank inlined into game_step.
    let frames = s.debug.as_ref().unwrap().frames(0x216);
    let names: Vec<_> = frames.iter().map(|f| f.function.clone().unwrap()).collect();
    assert_eq!(names, ["read_status", "wait_vblank", "game_step"]);
    assert_eq!(frames[0].location.as_ref().unwrap().line, Some(9));

    let mut opts = md_index(0x400);
    opts.ranges[0].start = 0x200;
    let ix = s.build_index(&opts).unwrap();
    assert_eq!(ix.function_at(0x216).name, "game_step");
    let sum = ix.function_at(0x240);
    assert_eq!(
        (sum.file.as_deref(), sum.line),
        (Some("./inline.c"), Some(33))
    );
    let c = ix.inline_at(0x216);
    assert_ne!(c, 0);
    let call = |name: &str, line: u32| InlineFrame {
        name: name.into(),
        call_file: Some("./inline.c".into()),
        call_line: Some(line),
    };
    assert_eq!(
        ix.inline_chain(c),
        &[call("wait_vblank", 27), call("read_status", 14)]
    );
    // fill() inlined at game_step line 26.
    assert_eq!(ix.inline_chain(ix.inline_at(0x20a)), &[call("fill", 26)]);
    // sum() has no inlining; _start inlines wait_vblank at line 44.
    assert_eq!(ix.inline_at(0x24a), 0);
    assert_eq!(ix.inline_chain(0), &[] as &[InlineFrame]);
    assert_eq!(
        ix.inline_chain(ix.inline_at(0x2a4)),
        &[call("wait_vblank", 44)]
    );
    // Chains are interned: the same chain at two addresses has one id.
    assert_eq!(ix.inline_at(0x20a), ix.inline_at(0x20c));
    // `_edata` / `__bss_start` end `_start`'s range; vdp_ctrl (R) is data.
    assert_eq!(ix.function_at(0x2d4).name, "_start");
    assert_eq!(ix.function_at(0x2d6).origin, FunctionOrigin::Bucket);
    // RAM addresses of the ELF index correctly.
    assert_eq!(ix.ranges()[1].inline.len(), 0);
}

#[test]
fn nm_listing_lines_merge_into_the_elf() {
    let mut elf = Symbols::load_elf(&data("inline.elf")).unwrap();
    let nm = Symbols::load_nm(&data("inline.symbol.txt")).unwrap();
    elf.merge_listing(&nm);
    let sum = elf
        .table
        .symbols()
        .iter()
        .find(|x| x.name == "sum")
        .unwrap();
    assert_eq!(
        (sum.file.as_deref(), sum.line),
        (Some("./inline.c"), Some(30))
    );
    assert!(elf.warnings.is_empty(), "{:?}", elf.warnings);
    // A stale listing is reported, and its address not taken.
    let mut elf = Symbols::load_elf(&data("inline.elf")).unwrap();
    let stale = Symbols::parse_nm(Path::new("stale.txt"), "00000300 T sum\n").unwrap();
    elf.merge_listing(&stale);
    assert_eq!(elf.warnings.len(), 1, "{:?}", elf.warnings);
    assert!(
        elf.warnings[0].contains("disagree on 1 code symbol"),
        "{:?}",
        elf.warnings
    );
    assert_ne!(addr_of(&elf, "sum"), 0x300);
}

#[test]
fn clone_names() {
    assert_eq!(clone_base_name("main.isra.0"), "main");
    assert_eq!(
        clone_base_name("SYS_doVBlankProcessEx.constprop.57"),
        "SYS_doVBlankProcessEx"
    );
    assert_eq!(clone_base_name("read6Btn.lto_priv.71"), "read6Btn");
    assert_eq!(
        clone_base_name("releaseSprite.part.1.lto_priv.72"),
        "releaseSprite"
    );
    assert_eq!(clone_base_name("f.cold"), "f");
    assert_eq!(clone_base_name(".loop"), ".loop");
    assert_eq!(clone_base_name("plain"), "plain");
    assert_eq!(clone_base_name("a.partial"), "a.partial");
}

/// Truncated or corrupted ELF files give errors or partial results, never a
/// panic or a hang.
#[test]
fn damaged_elf_never_panics() {
    let good = std::fs::read(data("inline.elf")).unwrap();
    let path = Path::new("damaged.elf");
    let mut errors = 0;
    for len in (0..good.len()).step_by(97) {
        match Symbols::parse_elf(path, &good[..len]) {
            Ok(s) => {
                let _ = s.build_index(&md_index(0x400));
            }
            Err(e) => {
                errors += 1;
                assert!(e.to_string().contains("damaged.elf"), "{e}");
            }
        }
    }
    assert!(errors > 0);
    // Flip bytes all over the file (deterministic pattern), including the
    // DWARF sections.
    for step in [7usize, 13, 31] {
        let mut bad = good.clone();
        for i in (64..bad.len()).step_by(step) {
            bad[i] ^= 0x5a;
        }
        if let Ok(s) = Symbols::parse_elf(path, &bad) {
            let _ = s.build_index(&md_index(0x400));
            let _ = s.source_location(0x216);
        }
    }
    let e = Symbols::parse_elf(path, b"not an elf").unwrap_err();
    assert!(e.to_string().contains("no \\x7fELF magic"), "{e}");
}

// The inline-context table built with the inlined-subroutine filter
// (addresses no `DW_TAG_inlined_subroutine` covers are not asked) equals
// the one built by asking addr2line at every address, whole, on the ELFs
// of the shared example ROMs, the known-costs test ROM and the test ELF
// here.

/// Compares the two tables of the ELF at `path`; a missing file fails
/// the test (the shared ROMs are read from `../shared`, never skipped).
fn check_inline_filter(path: &Path) {
    assert!(
        path.exists(),
        "{}: missing (this test reads the shared ROMs and the test ROMs from there)",
        path.display()
    );
    let fast = Symbols::load(path).unwrap();
    let mut slow = Symbols::load(path).unwrap();
    slow.debug.as_mut().expect("DWARF").forget_inline_ranges();
    let a = fast.build_index(&md_index(0x40_0000)).unwrap();
    let b = slow.build_index(&md_index(0x40_0000)).unwrap();
    assert_eq!(
        a.inline_chain_count(),
        b.inline_chain_count(),
        "{}",
        path.display()
    );
    for id in 0..a.inline_chain_count() as u32 {
        assert_eq!(
            a.inline_chain(id),
            b.inline_chain(id),
            "{} chain {id}",
            path.display()
        );
    }
    assert_eq!(a.ranges().len(), b.ranges().len());
    for (x, y) in a.ranges().iter().zip(b.ranges()) {
        assert_eq!(x.ids, y.ids);
        assert_eq!(x.inline, y.inline, "{} range {}", path.display(), x.name);
    }
    eprintln!(
        "{}: {} inline chains, the same",
        path.display(),
        a.inline_chain_count()
    );
}

#[test]
fn filtered_inline_table_is_the_full_one() {
    check_inline_filter(&data("inline.elf"));
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    check_inline_filter(&root.join("../../testroms/out/knowncosts/rom.elf"));
    let shared = shared_roms();
    for rom in ["castlecat2", "vnmd", "platformer"] {
        check_inline_filter(&shared.join(rom).join("rom.out"));
    }
}
