//! Damaged input never panics: every fixture, cut at every line and with
//! bytes overwritten (deterministically), through every map parser and the
//! histogram readers; then symbolised.

use std::path::PathBuf;

use retroprof_samples::histogram::{self, ReadOptions};
use retroprof_samples::{symbolise, SymboliseOptions};
use retroprof_symbols::maps::{self, MapFormat};

const FIXTURES: [&str; 15] = [
    "prog_m68k.map",
    "n2kc_msvc.map",
    "n2kc_msvc_samples.txt",
    "n2kc_mslink.map",
    "n2kc_tlink.map",
    "n2kc_wlink.map",
    "md_gnuld.map",
    "md_symbol.txt",
    "game_cc65.dbg",
    "game_cc65.map",
    "prog_m68k.elf",
    "md_samples.txt",
    "game_samples.txt",
    "n2kc_samples_a.txt",
    "n2kc_samples_b.txt",
];

fn variants(bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    // Cut after (at most 80 evenly spread) lines, and mid-way.
    let ends: Vec<usize> = (0..bytes.len()).filter(|&i| bytes[i] == b'\n').collect();
    let step = (ends.len() / 80).max(1);
    for &i in ends.iter().step_by(step) {
        out.push(bytes[..i].to_vec());
        out.push(bytes[..i / 2 * 2 + 1].to_vec());
    }
    // Overwrite bytes with junk at pseudo-random places.
    let mut x: u32 = 0x1234_5678;
    let junk = [
        b'0', b'F', b':', b' ', b'\t', b'=', b'(', b')', b'"', 0xFF, 0x95, b'\n', b'x',
    ];
    for _ in 0..60 {
        let mut v = bytes.to_vec();
        for _ in 0..4 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            if v.is_empty() {
                break;
            }
            let at = x as usize % v.len();
            v[at] = junk[(x >> 8) as usize % junk.len()];
        }
        out.push(v);
    }
    out
}

#[test]
fn damaged_fixtures_give_errors_not_panics() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let forced: Vec<Option<MapFormat>> = std::iter::once(None)
        .chain(MapFormat::ALL.iter().copied().map(Some))
        .collect();
    let mut parsed = 0;
    for name in FIXTURES {
        let bytes = std::fs::read(dir.join(name)).unwrap();
        for v in variants(&bytes) {
            for &f in &forced {
                if let Ok(map) = maps::parse(name, &v, f) {
                    parsed += 1;
                    let mut h = retroprof_samples::Histogram::new(1);
                    h.add(0x100, 3);
                    h.add(u64::MAX, u64::MAX);
                    let _ = symbolise(&h, &map, &SymboliseOptions::default());
                }
            }
            let _ = histogram::read(name, &v, None, &ReadOptions::default());
            let _ = histogram::read_prf(name, &v, Some(0xFFFF));
        }
    }
    assert!(parsed > 100, "only {parsed} variants parsed");
}
