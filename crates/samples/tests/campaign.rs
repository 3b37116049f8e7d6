//! Mutation campaign (issue 21) on every map format, nm listings, ELF and
//! the histogram readers, in `cargo test`: fixed seeds, a fixed number of
//! cases. Each case must not panic, must stay within a memory bound (a
//! counting allocator measures the peak), and must either give a result or
//! an error naming the file. An nm listing rendered from a parsed map
//! parses back to the same symbols (round trip).
//!
//! Inputs that ever failed are kept in tests/fixtures/regress/ and run
//! first (every parser, detected and forced).

use std::path::{Path, PathBuf};

use retroprof_samples::histogram::{self, ReadOptions};
use retroprof_samples::{symbolise, SymboliseOptions};
use retroprof_symbols::maps::{self, MapFormat};
use retroprof_symbols::Symbols;

#[global_allocator]
static A: retroprof_testkit::CountingAlloc = retroprof_testkit::CountingAlloc;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

const BASES: [&str; 11] = [
    "n2kc_mslink.map",
    "n2kc_tlink.map",
    "n2kc_wlink.map",
    "n2kc_msvc.map",
    "md_gnuld.map",
    "prog_m68k.map",
    "md_symbol.txt",
    "game_cc65.dbg",
    "game_cc65.map",
    "prog_m68k.elf",
    "md_samples.txt",
];

fn mutate(rng: &mut Rng, base: &[u8]) -> Vec<u8> {
    let mut v = base.to_vec();
    match rng.below(7) {
        0 => {
            let junk = b"0F: \t=()\"\xff\x95\nx\r\x00";
            for _ in 0..1 + rng.below(6) {
                if v.is_empty() {
                    break;
                }
                let at = rng.below(v.len() as u64) as usize;
                v[at] = junk[rng.below(junk.len() as u64) as usize];
            }
        }
        1 => v.truncate(rng.below(v.len() as u64 + 1) as usize),
        2 => {
            let at = rng.below(v.len() as u64 + 1) as usize;
            let n = [80, 70_000, 1 << 20][rng.below(3) as usize];
            v.splice(
                at..at,
                std::iter::repeat_n(if rng.below(2) == 0 { 0 } else { b'7' }, n),
            );
        }
        3 => {
            let at = rng.below(v.len() as u64 + 1) as usize;
            let s: &[u8] = match rng.below(3) {
                0 => b"FFFFFFFFFFFFFFFFFFFFFFFF",
                1 => b" 0000:FFFFFFFFFFFFFFFFFF       _huge\n",
                _ => b"18446744073709551616",
            };
            v.splice(at..at, s.iter().copied());
        }
        4 => {
            for b in v.iter_mut() {
                if *b == b'\n' && rng.below(2) == 0 {
                    *b = b'\r';
                }
            }
        }
        5 if !v.is_empty() => {
            let a = rng.below(v.len() as u64) as usize;
            let b = (a + 1 + rng.below(4000) as usize).min(v.len());
            let piece = v[a..b].to_vec();
            v.splice(a..a, piece);
        }
        _ => {}
    }
    v
}

/// Every parser on `v`: returns how many accepted it.
fn run_all(name: &str, v: &[u8]) -> usize {
    let mut accepted = 0;
    let forced = std::iter::once(None).chain(MapFormat::ALL.iter().copied().map(Some));
    for f in forced {
        match maps::parse(name, v, f) {
            Ok(map) => {
                accepted += 1;
                let mut h = retroprof_samples::Histogram::new(1);
                h.add(0x100, 3);
                let _ = symbolise(&h, &map, &SymboliseOptions::default());
            }
            Err(e) => {
                let m = e.to_string();
                assert!(m.contains(name), "{f:?}: error does not name the file: {m}");
                assert!(m.len() < 1000, "{f:?}: {} byte error message", m.len());
            }
        }
    }
    if v.starts_with(b"\x7fELF") {
        if let Err(e) = Symbols::parse_elf(Path::new(name), v) {
            assert!(e.to_string().contains(name), "{e}");
        }
    } else if let Err(e) = Symbols::parse_nm(Path::new(name), &String::from_utf8_lossy(v)) {
        let m = e.to_string();
        assert!(m.contains(name), "{m}");
        assert!(m.len() < 1000, "{} byte nm error", m.len());
    }
    for r in [
        histogram::read(name, v, None, &ReadOptions::default()).map(|_| ()),
        histogram::read_prf(name, v, Some(0xFFFF)).map(|_| ()),
    ] {
        if let Err(e) = r {
            assert!(e.to_string().contains(name), "{e}");
        }
    }
    accepted
}

#[test]
fn damaged_maps_symbols_and_histograms() {
    let mut cases: Vec<(String, Vec<u8>)> = Vec::new();
    if let Ok(rd) = std::fs::read_dir(fixtures().join("regress")) {
        let mut files: Vec<_> = rd.flatten().map(|e| e.path()).collect();
        files.sort();
        for p in files.into_iter().filter(|p| !p.ends_with("README.md")) {
            cases.push((p.display().to_string(), std::fs::read(&p).unwrap()));
        }
    }
    let mut rng = Rng(0x21_2121_2121);
    for i in 0..220 {
        let base = BASES[i % BASES.len()];
        let bytes = std::fs::read(fixtures().join(base)).unwrap();
        cases.push((format!("case{i}-{base}"), mutate(&mut rng, &bytes)));
    }
    let mut accepted = 0;
    for (name, v) in &cases {
        let (r, peak) =
            retroprof_testkit::peak_during(|| std::panic::catch_unwind(|| run_all(name, v)));
        accepted += r.unwrap_or_else(|_| panic!("{name} panicked"));
        assert!(
            peak < 64 * v.len() + (16 << 20),
            "{name}: {peak} bytes at peak for {} input bytes",
            v.len()
        );
    }
    assert!(accepted > 50, "only {accepted} parses accepted");
}

#[test]
fn nm_rendering_round_trips() {
    for base in [
        "n2kc_mslink.map",
        "md_gnuld.map",
        "md_symbol.txt",
        "game_cc65.map",
    ] {
        let bytes = std::fs::read(fixtures().join(base)).unwrap();
        let m = maps::parse(base, &bytes, None).unwrap();
        let mut text = String::new();
        for s in m.symbols.symbols() {
            if s.name.contains(['\t', '\n', '\r']) || s.name.is_empty() {
                continue;
            }
            let t = match s.kind {
                retroprof_symbols::SymbolKind::Text => 'T',
                retroprof_symbols::SymbolKind::Data => 'D',
                retroprof_symbols::SymbolKind::Bss => 'B',
                retroprof_symbols::SymbolKind::Absolute => 'A',
                _ => '?',
            };
            text.push_str(&format!("{:08x} {t} {}\n", s.addr, s.name));
        }
        let again = maps::parse("r.txt", text.as_bytes(), Some(MapFormat::Nm)).unwrap();
        let a: Vec<(u64, &str)> = m
            .symbols
            .symbols()
            .iter()
            .filter(|s| !s.name.contains(['\t', '\n', '\r']) && !s.name.is_empty())
            .map(|s| (s.addr, s.name.as_str()))
            .collect();
        let b: Vec<(u64, &str)> = again
            .symbols
            .symbols()
            .iter()
            .map(|s| (s.addr, s.name.as_str()))
            .collect();
        assert_eq!(a, b, "{base}");
        assert!(again.doubts.is_empty(), "{base}: {:?}", again.doubts);
    }
}

/// Where each probe address goes: the start address of the function that
/// gets it, or `None` (unattributed). Names are left out so a mutation that
/// renames a symbol (a readable change) does not count as a move.
fn attribution(map: &maps::MapFile, probes: &[u64]) -> Vec<Option<u64>> {
    let mut h = retroprof_samples::Histogram::new(1);
    for &p in probes {
        h.add(p, 1);
    }
    let Ok(p) = symbolise(&h, map, &SymboliseOptions::default()) else {
        return vec![None; probes.len()];
    };
    probes
        .iter()
        .map(|&a| {
            p.functions
                .iter()
                .find(|f| f.addr <= a && f.end.is_none_or(|e| a < e))
                .map(|f| f.addr)
        })
        .collect()
}

fn code_addrs(map: &maps::MapFile) -> Vec<u64> {
    let mut v: Vec<u64> = map
        .symbols
        .symbols()
        .iter()
        .filter(|s| s.kind == retroprof_symbols::SymbolKind::Text)
        .map(|s| s.addr)
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// The issue's measure: a "silent accept" is a mutated map its parser
/// accepts without a warning although it read less than the original (the
/// code symbols' addresses are a subset of the original's) and samples now
/// go to another function. Counted per format over every map base; the
/// goal (issue 21) is none. A map cut exactly at a line end, in a format
/// with no end marker (nm, cc65, MS LINK, wlink), cannot be told from a
/// shorter map: those are counted and printed apart, not as silent.
/// `RETROPROF_CAMPAIGN_SEED=N` runs it with another seed (exploration; the
/// fixed seed is what the suite asserts).
#[test]
fn silent_accepts_per_map_format() {
    const MAP_BASES: [(&str, MapFormat); 10] = [
        ("n2kc_mslink.map", MapFormat::MsLink),
        ("n2kc_tlink.map", MapFormat::Tlink),
        ("n2kc_wlink.map", MapFormat::Watcom),
        ("n2kc_msvc.map", MapFormat::MsLink),
        ("md_gnuld.map", MapFormat::GnuLd),
        ("prog_m68k.map", MapFormat::GnuLd),
        ("m68k_libc_gnuld.map", MapFormat::GnuLd),
        ("md_symbol.txt", MapFormat::Nm),
        ("game_cc65.dbg", MapFormat::Cc65Dbg),
        ("game_cc65.map", MapFormat::Cc65Map),
    ];
    const PER_BASE: usize = 180;
    let mut rng = Rng(std::env::var("RETROPROF_CAMPAIGN_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x0021_5afe_7e57));
    let mut silent: Vec<String> = Vec::new();
    let mut total = 0;
    let mut rows = Vec::new();
    for (base, format) in MAP_BASES {
        let bytes = std::fs::read(fixtures().join(base)).unwrap();
        let good = maps::parse(base, &bytes, Some(format)).unwrap();
        assert!(good.warnings.is_empty(), "{base}: {:?}", good.warnings);
        let addrs = code_addrs(&good);
        let mut probes = Vec::new();
        for w in addrs.windows(2) {
            let (s, e) = (w[0], w[1]);
            probes.extend([s, s + 1, s + (e - s) / 2, e - 1]);
        }
        if let Some(&last) = addrs.last() {
            probes.extend([last, last + 1, last + 0x40]);
        }
        probes.sort_unstable();
        probes.dedup();
        let want = attribution(&good, &probes);
        let (mut refused, mut warned, mut same, mut other, mut cuts, mut bad) = (0, 0, 0, 0, 0, 0);
        for i in 0..PER_BASE {
            let v = mutate(&mut rng, &bytes);
            total += 1;
            let name = format!("{base}#{i}");
            let m = match maps::parse(&name, &v, Some(format)) {
                Err(_) => {
                    refused += 1;
                    continue;
                }
                Ok(m) => m,
            };
            if !m.warnings.is_empty() {
                warned += 1;
                continue;
            }
            let got_addrs = code_addrs(&m);
            let lost_only = got_addrs.iter().all(|a| addrs.binary_search(a).is_ok());
            if attribution(&m, &probes) == want {
                same += 1;
            } else if !lost_only {
                // It read something the original does not have (a digit
                // changed into another digit): a readable, different map.
                other += 1;
            } else if bytes.starts_with(&v) && (v.ends_with(b"\n") || v.ends_with(b"\r")) {
                cuts += 1;
            } else {
                bad += 1;
                silent.push(name);
                let dir = std::env::temp_dir().join("retroprof-silent");
                let _ = std::fs::create_dir_all(&dir);
                let _ = std::fs::write(dir.join(format!("{base}-{i}")), &v);
            }
        }
        rows.push(format!(
            "{base:<22} {format:<9} refused {refused:>3}  warned {warned:>3}  unchanged {same:>3}  \
             read-differently {other:>3}  cut-at-line-end {cuts:>3}  SILENT {bad}"
        ));
    }
    println!("silent-accept campaign: {total} mutated maps");
    for r in &rows {
        println!("  {r}");
    }
    println!("  silent accepts: {}", silent.len());
    assert!(
        silent.is_empty(),
        "silently accepted: {silent:?} (kept in the temp dir's retroprof-silent/)"
    );
}
