//! Histogram writers (for the emulator's sampler) round-trip through the
//! readers, and the binomial standard error behaves.

use retroprof_samples::histogram::{self, Histogram, ReadOptions};
use retroprof_samples::{
    binomial_standard_error, binomial_standard_error_of, write_petit, write_text,
};

fn sample() -> Histogram {
    let mut h = Histogram::new(1);
    h.add(0x200, 10);
    h.add(0x210, 70_000); // above the u16 maximum
    h.add(0xFFFF + 0x200, 4); // last counter of the window based at 0x200
    h.add(0x10_0000, 3); // outside the window
    h
}

#[test]
fn petit_round_trip_clamps_and_counts_what_did_not_fit() {
    let h = sample();
    let mut out = Vec::new();
    let stats = write_petit(&h, 0x200, &mut out).unwrap();
    assert_eq!(out.len(), histogram::PETIT_SIZE);
    assert_eq!(stats.saturated, 1);
    assert_eq!(stats.outside, 3);
    let back = histogram::read_petit("x", &out, 0x200).unwrap();
    assert_eq!(back.counts.get(&0x200), Some(&10));
    assert_eq!(back.counts.get(&0x210), Some(&0xFFFF));
    assert_eq!(back.counts.get(&(0xFFFF + 0x200)), Some(&4));
    assert_eq!(back.counts.len(), 3);
    assert_eq!(back.saturated, vec![0x210]);
}

#[test]
fn text_round_trip_is_exact() {
    let h = sample();
    let mut out = Vec::new();
    write_text(&h, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.starts_with("# retroprof PC histogram"));
    assert!(text.contains("\n00000210 70000\n"), "{text}");
    let back = histogram::read("x.txt", text.as_bytes(), None, &ReadOptions::default()).unwrap();
    assert_eq!(back.counts, h.counts);
    assert_eq!(back.bucket_bytes, 1);
    // Bucket size survives the text form.
    let mut coarse = Histogram::new(16);
    coarse.add(0x100, 2);
    let mut out = Vec::new();
    write_text(&coarse, &mut out).unwrap();
    let back = histogram::read_text("c.txt", std::str::from_utf8(&out).unwrap(), None).unwrap();
    assert_eq!(back.bucket_bytes, 16);
}

#[test]
fn binomial_standard_error_values() {
    // p = 0.25, n = 400: sqrt(0.25 * 0.75 / 400) = 0.021650635...
    let se = binomial_standard_error(100, 400);
    assert!((se - 0.021_650_635_094_610_966).abs() < 1e-15, "{se}");
    assert_eq!(binomial_standard_error(0, 0), 0.0);
    assert_eq!(binomial_standard_error(5, 5), 0.0);
    assert_eq!(binomial_standard_error_of(0.5, 100), 0.05);
}

/// Sampling a known distribution: the sampled shares fall within a few
/// standard errors of the true shares (deterministic generator).
#[test]
fn sampled_shares_agree_with_exact_shares_within_the_error() {
    // Exact "cycle" shares of three functions.
    let exact = [0.5, 0.3, 0.2];
    let n = 20_000u64;
    let mut counts = [0u64; 3];
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let u = (x >> 11) as f64 / (1u64 << 53) as f64;
        let i = if u < exact[0] {
            0
        } else if u < exact[0] + exact[1] {
            1
        } else {
            2
        };
        counts[i] += 1;
    }
    for (i, &q) in exact.iter().enumerate() {
        let p = counts[i] as f64 / n as f64;
        let se = binomial_standard_error_of(q, n);
        assert!((p - q).abs() <= 4.0 * se, "share {i}: {p} vs {q} (se {se})");
    }
}

#[test]
fn compare_share_against_exact_profile() {
    use retroprof_samples::{symbolise, SymboliseOptions};
    use retroprof_symbols::maps::{MapFile, MapFormat};
    use retroprof_symbols::{Symbol, SymbolKind, SymbolTable};
    let sym = |name: &str, addr: u64| Symbol {
        name: name.into(),
        addr,
        size: Some(0x100),
        kind: SymbolKind::Text,
        global: true,
        module: None,
        file: None,
        line: None,
    };
    let map = MapFile::from_symbols(
        SymbolTable::new(vec![sym("a", 0x1000), sym("b", 0x1100)]),
        MapFormat::Elf,
    );
    let mut h = Histogram::new(1);
    h.add(0x1010, 520);
    h.add(0x1110, 480);
    let p = symbolise(&h, &map, &SymboliseOptions::default()).unwrap();
    // Exact 50/50: se = sqrt(0.25 / 1000) = 0.0158; 0.52 is 1.26 se away.
    let c = p.compare_share("a", 0.5);
    assert!((c.sampled - 0.52).abs() < 1e-12);
    assert!(
        (c.z - 0.02 / (0.25f64 / 1000.0).sqrt()).abs() < 1e-9,
        "{c:?}"
    );
    assert!(c.agrees(3.0));
    // Exact 40 %: 0.52 is 7.7 se away: disagreement.
    assert!(!p.compare_share("a", 0.4).agrees(3.0));
    // A function never sampled has share 0.
    assert_eq!(p.compare_share("missing", 0.0).z, 0.0);
}
