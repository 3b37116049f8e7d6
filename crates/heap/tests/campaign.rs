//! Mutation campaign on the log reader and replay (issue 21), in
//! `cargo test`: fixed seeds, a fixed number of cases (about a second in
//! release). Logs in both formats, plain and gzip, are damaged (bytes
//! overwritten, cut, lines repeated, NUL floods, over-long lines, huge
//! numbers) and replayed strict and lenient. Each case must not panic,
//! must stay within a memory bound (a counting allocator measures the
//! peak), and must either give an analysis or an error naming the log (and
//! the line, for a malformed line). A replayed log's generic-format
//! rendering replays to the same figures (round trip).
//!
//! Inputs that ever failed are kept in tests/fixtures/regress/ and replayed
//! first; put a new one there when this test finds it.

use std::io::Write;

use retroprof_heap::synth::{self, Rng};
use retroprof_heap::{DriveOptions, Error, LogReader, Replay, ReplayOptions, Symbolizer};

#[global_allocator]
static A: retroprof_testkit::CountingAlloc = retroprof_testkit::CountingAlloc;

fn gzip(b: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(b).unwrap();
    gz.finish().unwrap()
}

fn mutate(rng: &mut Rng, base: &[u8]) -> Vec<u8> {
    let mut v = base.to_vec();
    match rng.below(8) {
        0 => {
            let junk =
                b"0xF :-=\t\r\n\x00\xffAllocating Freeing frame alloc free 99999999999999999999";
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
            // A NUL flood or an over-long line in the middle.
            let at = rng.below(v.len() as u64 + 1) as usize;
            let n = [100, 70_000, 300_000][rng.below(3) as usize];
            let fill = if rng.below(2) == 0 { 0u8 } else { b'x' };
            v.splice(at..at, std::iter::repeat_n(fill, n));
        }
        3 => {
            // Huge numbers.
            let at = rng.below(v.len() as u64 + 1) as usize;
            let s: &[u8] = match rng.below(4) {
                0 => b"\nalloc 18446744073709551615 0xffffffffffffffff 0x1\n",
                1 => b"\nfree 0xffffffffffffffffff 0x1\n",
                2 => b"\nframe 18446744073709551615\n",
                _ => b"\nAllocating 4294967295 bytes - ffffffff - RA is ffffffff\n",
            };
            v.splice(at..at, s.iter().copied());
        }
        4 if !v.is_empty() => {
            // Repeat a slice (double frees, overlaps).
            let a = rng.below(v.len() as u64) as usize;
            let b = (a + 1 + rng.below(2000) as usize).min(v.len());
            let piece = v[a..b].to_vec();
            v.extend_from_slice(&piece);
        }
        5 => {
            // CR-only / mixed line ends.
            for b in v.iter_mut() {
                if *b == b'\n' && rng.below(3) == 0 {
                    *b = b'\r';
                }
            }
        }
        6 => {
            // Random bytes.
            let n = rng.below(4096) as usize;
            v = (0..n).map(|_| rng.next_u64() as u8).collect();
        }
        _ => {}
    }
    v
}

/// One case: returns an error message or the number of events.
fn replay(name: &str, data: Vec<u8>, strict: bool) -> Result<u64, String> {
    let mut r = LogReader::from_reader(Box::new(std::io::Cursor::new(data)), name)
        .map_err(|e| e.to_string())?;
    let mut rp = Replay::new(ReplayOptions::default(), Symbolizer::default());
    match retroprof_heap::replay_log(
        &mut r,
        &mut rp,
        DriveOptions {
            strict,
            arch_fixed: false,
        },
    ) {
        Ok(_) => {
            let a = rp.finish();
            // Bounded echo: no anomaly quotes more than a short prefix.
            for an in &a.anomalies.listed {
                assert!(
                    an.text.len() < 400,
                    "{name}: anomaly echoes {} bytes",
                    an.text.len()
                );
            }
            Ok(a.events)
        }
        Err(e) => {
            let m = e.to_string();
            assert!(m.contains(name), "error does not name the log: {m}");
            if let Error::Malformed { line, .. } = &e {
                assert!(m.contains(&format!(":{line}:")), "{m}");
            }
            assert!(m.len() < 600, "error message of {} bytes", m.len());
            Err(m)
        }
    }
}

#[test]
fn damaged_logs_never_panic_and_stay_bounded() {
    let events = synth::game_like(3000, 7);
    let bases = [
        synth::generic_text(&events, Some("m68k")),
        synth::daedalus_text(&events),
    ];
    let mut cases: Vec<(String, Vec<u8>)> = Vec::new();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/regress");
    if let Ok(rd) = std::fs::read_dir(&dir) {
        let mut files: Vec<_> = rd.flatten().map(|e| e.path()).collect();
        files.sort();
        for p in files {
            if p.extension().is_some_and(|e| e == "md") {
                continue;
            }
            cases.push((p.display().to_string(), std::fs::read(&p).unwrap()));
        }
    }
    let mut rng = Rng::new(0x2121);
    for i in 0..300 {
        let base = &bases[i % 2];
        let mut v = mutate(&mut rng, base);
        let name = format!("case{i}.log");
        if rng.below(4) == 0 {
            v = gzip(&v);
        }
        cases.push((name, v));
    }
    let (mut ok, mut refused) = (0, 0);
    for (name, data) in cases {
        let len = data.len();
        for strict in [false, true] {
            let d = data.clone();
            let (r, peak) = retroprof_testkit::peak_during(|| {
                std::panic::catch_unwind(|| replay(&name, d, strict))
            });
            let r = r.unwrap_or_else(|_| panic!("{name} (strict {strict}) panicked"));
            // Chunks in flight (4 x 256 KiB, lines up to 64 KiB) plus the
            // replay's tables: a fixed bound, whatever the input holds.
            assert!(
                peak < 24 << 20,
                "{name}: {peak} bytes at peak for a {len}-byte input"
            );
            match r {
                Ok(_) => ok += 1,
                Err(_) => refused += 1,
            }
        }
    }
    assert!(ok > 100 && refused > 50, "ok {ok} refused {refused}");
}

#[test]
fn generic_rendering_round_trips() {
    let events = synth::game_like(2000, 11);
    for (name, text) in [
        ("g.log", synth::generic_text(&events, None)),
        ("d.log", synth::daedalus_text(&events)),
    ] {
        let a = replay(name, text.clone(), true).unwrap();
        let b = replay(name, gzip(&text), true).unwrap();
        assert_eq!(a, b, "{name}: gzip differs");
    }
    let a = replay("g", synth::generic_text(&events, None), true).unwrap();
    let b = replay("d", synth::daedalus_text(&events), true).unwrap();
    assert_eq!(a, b, "the two formats of one log differ");
}
