//! Issue 21, "silent nonsense": a map whose symbol table has an unreadable
//! line, a map cut short and CR-only line ends are reported (and, through
//! the CLI's --strict, refused) instead of moving samples to the wrong
//! function; 64-bit text histogram counts that saturate are warned about.

use std::path::PathBuf;

use retroprof_samples::histogram::{self, ReadOptions};
use retroprof_samples::{symbolise, SymboliseOptions};
use retroprof_symbols::maps::{self, MapFormat};

fn fixture(name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn names(m: &maps::MapFile) -> Vec<String> {
    m.symbols.symbols().iter().map(|s| s.name.clone()).collect()
}

#[test]
fn mslink_unreadable_public_is_counted_and_does_not_end_the_table() {
    let text = fixture("n2kc_mslink.map");
    let good = maps::parse("n2kc.map", text.as_bytes(), None).unwrap();
    assert!(good.doubts.is_empty(), "{:?}", good.doubts);
    // One huge number in the by-value table (the campaign's mutation).
    let bad_text = text.replacen(
        " 0000:00C2       _next_line",
        " 0000:FFFFFFFFFFFFFFFFFFFFC2 _next_line",
        1,
    );
    assert_ne!(bad_text, text);
    let bad = maps::parse("n2kc.map", bad_text.as_bytes(), None).unwrap();
    let line = text
        .lines()
        .position(|l| l.contains("0000:00C2       _next_line"))
        .unwrap()
        + 1;
    assert_eq!(bad.doubts.len(), 1, "{:?}", bad.doubts);
    assert!(
        bad.doubts[0].contains(&format!("line {line}")),
        "{}",
        bad.doubts[0]
    );
    assert!(bad.warnings.contains(&bad.doubts[0]));
    // Every other public is still there (the table did not end).
    let mut want = names(&good);
    want.retain(|n| n != "_next_line");
    let got = names(&bad);
    for n in &want {
        assert!(got.contains(n), "{n} lost after the bad line");
    }
}

#[test]
fn gnu_ld_map_cut_short_is_a_doubt() {
    let text = fixture("md_gnuld.map");
    let good = maps::parse("md.map", text.as_bytes(), None).unwrap();
    assert!(good.doubts.is_empty(), "{:?}", good.doubts);
    // Cut at a line end half-way, and mid-line.
    let half = text[..text.len() / 2].rfind('\n').unwrap() + 1;
    for cut in [&text[..half], &text[..half + 3]] {
        let m = maps::parse("md.map", cut.as_bytes(), Some(MapFormat::GnuLd)).unwrap();
        assert!(
            !m.doubts.is_empty(),
            "a map cut short was accepted without a word"
        );
        assert!(
            m.doubts.iter().any(|d| d.contains("cut short")),
            "{:?}",
            m.doubts
        );
    }
}

#[test]
fn cr_only_line_ends_parse_like_lf() {
    for (name, format) in [
        ("md_symbol.txt", MapFormat::Nm),
        ("n2kc_mslink.map", MapFormat::MsLink),
        ("md_gnuld.map", MapFormat::GnuLd),
    ] {
        let text = fixture(name);
        let lf = maps::parse(name, text.as_bytes(), Some(format)).unwrap();
        let cr = text.replace("\r\n", "\n").replace('\n', "\r");
        let m = maps::parse(name, cr.as_bytes(), None)
            .unwrap_or_else(|e| panic!("{name} with CR line ends: {e}"));
        assert_eq!(m.format, format, "{name}");
        assert_eq!(names(&m), names(&lf), "{name}");
        // The nm loader of the profiler (Symbols) too.
        if format == MapFormat::Nm {
            let s = retroprof_symbols::Symbols::parse_nm(std::path::Path::new(name), &cr).unwrap();
            assert_eq!(s.table.symbols().len(), lf.symbols.symbols().len());
            assert!(s.table.symbols().iter().all(|s| !s.name.contains('\r')));
        }
    }
}

#[test]
fn saturated_text_histogram_counts_are_warned_about() {
    let map = maps::parse("p.txt", b"00000000 T main\n00000100 T other\n", None).unwrap();
    let text = format!("0x10 {}\n0x20 {}\n0x110 5\n", u64::MAX - 1, 7);
    let opts = ReadOptions::default();
    let h = histogram::read("h.txt", text.as_bytes(), None, &opts).unwrap();
    let p = symbolise(&h, &map, &SymboliseOptions::default()).unwrap();
    assert!(
        p.warnings.iter().any(|w| w.contains("64-bit maximum")),
        "{:?}",
        p.warnings
    );
    let h = histogram::read("h.txt", b"0x10 5\n0x110 5\n", None, &opts).unwrap();
    let p = symbolise(&h, &map, &SymboliseOptions::default()).unwrap();
    assert!(
        p.warnings.iter().all(|w| !w.contains("64-bit")),
        "{:?}",
        p.warnings
    );
}
