//! Every map format against a histogram with known counts: the per-function
//! (and per-module) numbers are stated by hand from the fixtures (see
//! tests/fixtures/README.md).

use std::path::PathBuf;

use retroprof_samples::histogram::{self, Histogram, PrfHeader, ReadOptions};
use retroprof_samples::{symbolise, SampleProfile, SymboliseOptions, UnattributedKind};
use retroprof_symbols::maps::{self, MapFile, MapFormat, TextEncoding};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn load_map(name: &str) -> MapFile {
    maps::load(&fixture(name), None).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn text_hist(names: &[&str], load: Option<u16>) -> Histogram {
    let mut h = Histogram::new(1);
    for n in names {
        let bytes = std::fs::read(fixture(n)).unwrap();
        let opts = ReadOptions {
            petit_base: 0,
            load_segment: load,
        };
        let one = histogram::read(n, &bytes, None, &opts).unwrap();
        h.merge(one).unwrap();
    }
    h
}

fn samples_of(p: &SampleProfile) -> Vec<(&str, u64)> {
    let mut v: Vec<(&str, u64)> = p
        .functions
        .iter()
        .map(|f| (f.name.as_str(), f.samples))
        .collect();
    v.sort();
    v
}

fn modules_of(p: &SampleProfile) -> Vec<(&str, u64)> {
    let mut v: Vec<(&str, u64)> = p
        .modules
        .iter()
        .map(|m| (m.name.as_str(), m.samples))
        .collect();
    v.sort();
    v
}

fn unattributed(p: &SampleProfile, kind: UnattributedKind) -> u64 {
    p.unattributed
        .iter()
        .filter(|u| u.kind == kind)
        .map(|u| u.samples)
        .sum()
}

fn sorted(mut v: Vec<(&'static str, u64)>) -> Vec<(&'static str, u64)> {
    v.sort();
    v
}

#[test]
fn mslink_map_with_petit_histogram() {
    let map = load_map("n2kc_mslink.map");
    assert_eq!(map.format, MapFormat::MsLink);
    assert_eq!(map.entry.unwrap().frame, Some(0));
    assert_eq!(map.entry.unwrap().addr, 0x294);
    // `Abs` rows are not addresses; `_errno` is data in DGROUP.
    let abs = map
        .symbols
        .symbols()
        .iter()
        .find(|s| s.name == "__acrtused")
        .unwrap();
    assert_eq!(abs.kind, retroprof_symbols::SymbolKind::Absolute);
    assert_eq!(map.code_symbol_count(), 7);

    // A Petit histogram: counter[IP] for CS = the entry point's frame (0).
    let mut counts = vec![0u16; 65536];
    counts[0x0005] = 7; // before _main: start-up code without a public
    counts[0x0015] = 10; // _main
    counts[0x00C8] = 250; // _next_line
    counts[0x00D0] = 50; // _next_line
    counts[0x0140] = 200; // _skip_chars
    counts[0x01B0] = 100; // _parse_number
    counts[0x0298] = 5; // __astart
    counts[0x1300] = 50; // _printf (runs to the end of _TEXT, 0x1A40)
    counts[0x1B00] = 20; // IP past _TEXT: DGROUP data, not code
    let bytes: Vec<u8> = counts.iter().flat_map(|c| c.to_le_bytes()).collect();
    let h = histogram::read("n2kc.log", &bytes, None, &ReadOptions::default()).unwrap();
    assert_eq!(h.total(), 692);
    let opts = SymboliseOptions {
        window: Some((0, 0x10000)),
        ..Default::default()
    };
    let p = symbolise(&h, &map, &opts).unwrap();
    assert_eq!(
        samples_of(&p),
        sorted(vec![
            ("_main", 10),
            ("_next_line", 300),
            ("_skip_chars", 200),
            ("_parse_number", 100),
            ("__astart", 5),
            ("_printf", 50),
        ])
    );
    assert_eq!(p.total, 692);
    assert_eq!(p.attributed, 665);
    assert_eq!(unattributed(&p, UnattributedKind::NoSymbol), 7);
    assert_eq!(unattributed(&p, UnattributedKind::OutsideCode), 20);
    // The hottest function first, with both shares.
    assert_eq!(p.functions[0].name, "_next_line");
    assert!((p.share_of_all(300) - 300.0 / 692.0).abs() < 1e-12);
    assert!((p.share_of_attributed(300) - 300.0 / 665.0).abs() < 1e-12);
    assert_eq!(p.hot[0].location, "_next_line+0x6");
    assert_eq!(p.hot[0].samples, 250);
    // `Line numbers for` sections give the source line of hot addresses
    // and the first line of each function.
    assert_eq!(p.hot[0].source.as_deref(), Some("n2kc.c:41"));
    let f = p.function("_parse_number").unwrap();
    assert_eq!((f.file.as_deref(), f.line), (Some("parse.c"), Some(10)));
    let nosym = p.hot.iter().find(|h| h.addr == 5).unwrap();
    assert_eq!(nosym.source, None);
    assert!(p.modules.is_empty(), "MS LINK maps have no modules");
    let outside = p
        .unattributed
        .iter()
        .find(|u| u.kind == UnattributedKind::OutsideCode)
        .unwrap();
    assert!(
        outside.explanation.contains("0x1B00 (in _DATA)"),
        "{}",
        outside.explanation
    );
}

#[test]
fn saturated_petit_counter_is_reported() {
    let map = load_map("n2kc_mslink.map");
    let mut counts = vec![0u16; 65536];
    counts[0x00C8] = 0xFFFF;
    counts[0x0140] = 3;
    let bytes: Vec<u8> = counts.iter().flat_map(|c| c.to_le_bytes()).collect();
    let h = histogram::read_petit("n2kc.log", &bytes, 0).unwrap();
    assert_eq!(h.saturated, vec![0xC8]);
    let p = symbolise(&h, &map, &SymboliseOptions::default()).unwrap();
    assert_eq!(p.function("_next_line").unwrap().saturated_buckets, 1);
    assert_eq!(p.warnings.len(), 1);
    assert!(p.warnings[0].contains("65535"), "{}", p.warnings[0]);
    assert!(p.warnings[0].contains("_next_line"), "{}", p.warnings[0]);
}

#[test]
fn tlink_shift_jis_map_with_prf_histogram() {
    let map = load_map("n2kc_tlink.map");
    assert_eq!(map.format, MapFormat::Tlink);
    assert_eq!(map.encoding, Some(TextEncoding::ShiftJis));
    // The Japanese module name and public decode from cp932.
    let names: Vec<&str> = map.modules.iter().map(|m| m.name.as_str()).collect();
    assert!(names.contains(&"譜面.C"), "{names:?}");
    assert!(map.symbols.symbols().iter().any(|s| s.name == "_譜面_読込"));
    // `idle` publics are symbols too.
    assert!(map.symbols.symbols().iter().any(|s| s.name == "_usage"));

    // PROFIL: program at physical paragraph 0x1000, 1-paragraph buckets.
    let nb = 0x1B30 / 16; // the whole _TEXT
    let hdr = PrfHeader {
        clock_grain: 1000,
        bucket_num: nb as u16,
        bucket_siz: 1,
        prog_low_pa: 0x1000,
        prog_high_pa: 0x1000 + nb as u16,
        dos_pa: 0x0070,
        hit_io: 3,
        hit_dos: 40,
        hit_high: 0,
    };
    let mut buckets = vec![0u16; nb];
    buckets[0x010 / 16] = 4; // __checknull (C0.ASM)
    buckets[0x310 / 16] = 60; // _main
    buckets[0x420 / 16] = 90; // _next_line
    buckets[0x520 / 16] = 10; // _usage (idle, still a public)
    buckets[0x710 / 16] = 80; // _譜面_読込
    buckets[0x900 / 16] = 120; // _fumen_parse
    buckets[0xC40 / 16] = 30; // _printf
    let mut bytes = hdr.to_bytes().to_vec();
    for b in &buckets {
        bytes.extend_from_slice(&b.to_le_bytes());
    }
    let h = histogram::read("N2KC.PRF", &bytes, None, &ReadOptions::default()).unwrap();
    assert_eq!(h.bucket_bytes, 16);
    let p = symbolise(&h, &map, &SymboliseOptions::default()).unwrap();
    assert_eq!(
        samples_of(&p),
        sorted(vec![
            ("__checknull", 4),
            ("_main", 60),
            ("_next_line", 90),
            ("_usage", 10),
            ("_譜面_読込", 80),
            ("_fumen_parse", 120),
            ("_printf", 30),
        ])
    );
    assert_eq!(p.attributed, 394);
    assert_eq!(p.total, 394 + 43);
    assert_eq!(unattributed(&p, UnattributedKind::External), 43);
    assert!(p
        .unattributed
        .iter()
        .any(|u| u.what == "[DOS]" && u.samples == 40));
    assert!(p
        .unattributed
        .iter()
        .any(|u| u.what == "[I/O]" && u.samples == 3));
    // Module ranges from `Detailed map of segments`.
    assert_eq!(
        modules_of(&p),
        sorted(vec![
            ("C0.ASM", 4),
            ("N2KC.C", 160),
            ("譜面.C", 200),
            ("PRINTF", 30),
        ])
    );
}

#[test]
fn watcom_map_with_two_text_histograms_summed() {
    let map = load_map("n2kc_wlink.map");
    assert_eq!(map.format, MapFormat::Watcom);
    assert_eq!(map.entry.unwrap().addr, 0x400);
    let h = text_hist(&["n2kc_samples_a.txt", "n2kc_samples_b.txt"], Some(0x1000));
    assert_eq!(h.sources.len(), 2);
    assert_eq!(h.total(), 668);
    let p = symbolise(&h, &map, &SymboliseOptions::default()).unwrap();
    assert_eq!(
        samples_of(&p),
        sorted(vec![
            ("main_", 10),
            ("next_line_", 350),
            ("skip_chars_", 170),
            ("parse_number_", 100),
            ("printf_", 30),
        ])
    );
    assert_eq!(p.attributed, 660);
    assert_eq!(unattributed(&p, UnattributedKind::OutsideCode), 8);
    // Module Segments place the static function of parse.obj.
    assert_eq!(
        modules_of(&p),
        sorted(vec![
            ("n2kc.obj", 510),
            ("parse.obj", 120),
            ("clibs.lib(printf)", 30)
        ])
    );
    // Symbols remember their `Module:` line.
    let f = p.function("printf_").unwrap();
    assert_eq!(f.module.as_deref(), Some("clibs.lib(printf)"));
}

fn md_expect() -> Vec<(&'static str, u64)> {
    sorted(vec![
        ("main", 100),
        ("update_player", 150),
        ("game_loop", 50),
        ("VDP_waitVBlank", 500),
        ("VDP_setReg", 25),
        ("SYS_doVBlankProcess", 75),
    ])
}

#[test]
fn gnu_ld_map_with_text_histogram() {
    let map = load_map("md_gnuld.map");
    assert_eq!(map.format, MapFormat::GnuLd);
    // Discarded sections are not symbols; assignments are not symbols.
    assert!(!map
        .symbols
        .symbols()
        .iter()
        .any(|s| s.name.contains("__text_start")));
    assert!(!map.symbols.symbols().iter().any(|s| s.name == "_etext"));
    let h = text_hist(&["md_samples.txt"], None);
    let p = symbolise(&h, &map, &SymboliseOptions::default()).unwrap();
    assert_eq!(samples_of(&p), md_expect());
    assert_eq!(p.total, 915);
    assert_eq!(p.attributed, 900);
    assert_eq!(unattributed(&p, UnattributedKind::OutsideCode), 15);
    assert_eq!(
        modules_of(&p),
        sorted(vec![
            ("main.o", 300),
            ("libmd.a(vdp.o)", 525),
            ("libmd.a(sys.o)", 75),
        ])
    );
    assert_eq!(p.hot[0].location, "VDP_waitVBlank+0xC");
    assert_eq!(p.hot[1].location, "VDP_waitVBlank+0x26");
}

#[test]
fn nm_listing_with_text_histogram() {
    let map = load_map("md_symbol.txt");
    assert_eq!(map.format, MapFormat::Nm);
    let h = text_hist(&["md_samples.txt"], None);
    let p = symbolise(&h, &map, &SymboliseOptions::default()).unwrap();
    // `.loop_wait` belongs to VDP_waitVBlank; `_edata` (T in RAM) is no
    // function; `_etext` ends the code.
    assert_eq!(samples_of(&p), md_expect());
    assert_eq!(unattributed(&p, UnattributedKind::OutsideCode), 15);
    let f = p.function("main").unwrap();
    assert_eq!((f.file.as_deref(), f.line), (Some("/src/main.c"), Some(12)));
}

#[test]
fn cc65_debug_file_with_text_histogram() {
    let map = load_map("game_cc65.dbg");
    assert_eq!(map.format, MapFormat::Cc65Dbg);
    let h = text_hist(&["game_samples.txt"], None);
    let p = symbolise(&h, &map, &SymboliseOptions::default()).unwrap();
    assert_eq!(
        samples_of(&p),
        sorted(vec![
            ("Start", 5),
            ("_main", 120),
            ("_update", 80),
            ("_draw", 12),
            ("copy_line", 260),
            ("fill_line", 40),
            ("pushax", 30),
            ("popa", 15),
            ("incsp2", 5),
        ])
    );
    assert_eq!(p.total, 574);
    assert_eq!(p.attributed, 567);
    let f = p.function("_main").unwrap();
    assert_eq!((f.file.as_deref(), f.line), (Some("main.c"), Some(12)));
    let f = p.function("copy_line").unwrap();
    assert_eq!((f.file.as_deref(), f.line), (Some("copy.s"), Some(20)));
    assert_eq!(unattributed(&p, UnattributedKind::OutsideCode), 7);
    assert_eq!(
        modules_of(&p),
        sorted(vec![
            ("crt0.o", 5),
            ("main.o", 212),
            ("copy.o", 300),
            ("pushax.o", 30),
            ("popa.o", 15),
            ("incsp2.o", 5),
        ])
    );
}

#[test]
fn cc65_map_with_text_histogram() {
    let map = load_map("game_cc65.map");
    assert_eq!(map.format, MapFormat::Cc65Map);
    let h = text_hist(&["game_samples.txt"], None);
    let p = symbolise(&h, &map, &SymboliseOptions::default()).unwrap();
    // Only exports: `_draw` (static) falls into `_update`; `Start` is not
    // exported, so its samples have no symbol; `__STARTUP_LOAD__` is a
    // linker-made label, not a function.
    assert_eq!(
        samples_of(&p),
        sorted(vec![
            ("_main", 120),
            ("_update", 92),
            ("copy_line", 260),
            ("fill_line", 40),
            ("pushax", 30),
            ("popa", 15),
            ("incsp2", 5),
        ])
    );
    assert_eq!(unattributed(&p, UnattributedKind::NoSymbol), 5);
    assert_eq!(unattributed(&p, UnattributedKind::OutsideCode), 7);
    assert_eq!(
        modules_of(&p),
        sorted(vec![
            ("c64.lib(incsp2.o)", 5),
            ("c64.lib(popa.o)", 15),
            ("c64.lib(pushax.o)", 30),
            ("copy.o", 300),
            ("crt0.o", 5),
            ("main.o", 212),
        ])
    );
}

#[test]
fn elf_with_text_histogram() {
    let map = load_map("prog_m68k.elf");
    assert_eq!(map.format, MapFormat::Elf);
    let h = text_hist(&["prog_m68k_samples.txt"], None);
    let p = symbolise(&h, &map, &SymboliseOptions::default()).unwrap();
    assert_eq!(
        samples_of(&p),
        sorted(vec![
            ("helper", 300),
            ("work", 100),
            ("idle", 500),
            ("_start", 20)
        ])
    );
    assert_eq!(p.attributed, 920);
    assert_eq!(unattributed(&p, UnattributedKind::OutsideCode), 9);
    // ELF gives sizes: every function ends where its size says.
    assert_eq!(p.function("work").unwrap().end, Some(0x1054));
}

#[test]
fn msvc_pe_map_uses_rva_plus_base_and_static_symbols() {
    let map = load_map("n2kc_msvc.map");
    assert_eq!(map.format, MapFormat::MsLink);
    let h = text_hist(&["n2kc_msvc_samples.txt"], None);
    let p = symbolise(&h, &map, &SymboliseOptions::default()).unwrap();
    assert_eq!(
        samples_of(&p),
        sorted(vec![
            ("_main", 10),
            ("_next_line", 300),
            ("_skip_blanks", 70),
            ("_parse_number", 100),
            ("_read_line", 40),
            ("_printf", 30),
        ])
    );
    // Sections placed from their publics: .data is not code.
    assert_eq!(unattributed(&p, UnattributedKind::OutsideCode), 6);
    assert_eq!(p.function("_printf").unwrap().end, Some(0x403340));
    let f = p.function("_next_line").unwrap();
    assert_eq!(f.aliases, vec!["_next_line_folded".to_string()]);
    assert_eq!(f.module.as_deref(), Some("n2kc.obj"));
    assert_eq!(
        modules_of(&p),
        sorted(vec![
            ("libcmt:printf.obj", 30),
            ("n2kc.obj", 380),
            ("parse.obj", 140),
        ])
    );
}

#[test]
fn real_gnu_ld_map_of_the_elf_fixture() {
    // Generated by m68k-linux-gnu-ld for prog_m68k.elf: the static `helper`
    // is not in the map, so its samples have no symbol (but a module).
    let map = load_map("prog_m68k.map");
    assert_eq!(map.format, MapFormat::GnuLd);
    let h = text_hist(&["prog_m68k_samples.txt"], None);
    let p = symbolise(&h, &map, &SymboliseOptions::default()).unwrap();
    assert_eq!(
        samples_of(&p),
        sorted(vec![("work", 100), ("idle", 500), ("_start", 20)])
    );
    assert_eq!(unattributed(&p, UnattributedKind::NoSymbol), 300);
    assert_eq!(unattributed(&p, UnattributedKind::OutsideCode), 9);
    assert_eq!(modules_of(&p), vec![("prog.o", 920)]);
}
