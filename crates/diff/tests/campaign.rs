//! Mutation campaign on the JSON report reader (issue 21), in `cargo
//! test`: a fixed seed, a fixed number of cases (about a second in
//! release). A real report (built here from the report model and written
//! with serde, as `profile --json` writes it; no emulator runs) is damaged:
//! cut at every k-th byte, bytes overwritten, numbers replaced by huge,
//! out-of-range, negative or NaN-like values, values replaced by deep
//! nesting, a 24 MB string. Each case must not panic, must stay within a
//! memory bound (a counting allocator measures the peak), and must either
//! give an error naming the file (and, for a JSON error, the line and
//! column) or a report that round-trips (written again and re-read: equal).
//!
//! Inputs that ever failed are kept in tests/fixtures/regress/ and replayed
//! first; put a new one there when this test finds it.
//!
//! `read_report` takes a path, not a reader, so the big string is a real
//! file (24 MB rather than 100 MB: the bound checked is relative to the
//! file's size, and the reader refuses anything over
//! `MAX_REPORT_BYTES` before parsing).

use std::path::{Path, PathBuf};

use retroprof_diff::{parse_report, read_report, DiffError};
use retroprof_mdprof::report::*;

#[global_allocator]
static A: retroprof_testkit::CountingAlloc = retroprof_testkit::CountingAlloc;

/// The peak is process-wide: the tests take turns.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// A fixed-seed PRNG (splitmix64): no dependency, same cases every run.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }
}

fn seed() -> u64 {
    std::env::var("RETROPROF_CAMPAIGN_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5AFE_D1FF)
}

/// A small but complete report: every section filled, fractional cycle
/// counts, watches, warnings, a stop message.
fn base_report() -> Report {
    let fc = 128_005.7;
    let names = ["main", "vblank_handler", "update_sprites", "_skip_chars"];
    let functions: Vec<FunctionStats> = names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let self_c = 10_000.25 / (i as f64 + 1.0);
            FunctionStats {
                name: (*n).into(),
                addr: 0x200 + 0x40 * i as u32,
                origin: "symbol".into(),
                self_cycles: self_c,
                inclusive_cycles: self_c * 1.5,
                calls: 3 + i as u64,
                cycles_per_call: self_c / (3 + i) as f64,
                pct_all: 12.5 / (i as f64 + 1.0),
                ..FunctionStats::default()
            }
        })
        .collect();
    let frames: Vec<FrameRecord> = (0..6u64)
        .map(|i| {
            let load = 40.0 + 11.3 * i as f64;
            FrameRecord {
                frame: i,
                counted: i > 0,
                busy_cycles: load * fc / 100.0,
                idle_cycles: fc - load * fc / 100.0,
                frame_cycles: fc,
                load_pct: load,
                dropped: load > 90.0,
                loop_starts: 1,
                top: vec![FrameFunction {
                    function: (i % 4) as usize,
                    cycles: 1234.5 + i as f64,
                }],
                idle_enter_line: Some(200 + i as u16),
                watch: vec![i as u32 * 7],
                ..FrameRecord::default()
            }
        })
        .collect();
    Report {
        schema: SCHEMA.into(),
        rom: RomInfo {
            path: "game.bin".into(),
            bytes: 524_288,
            title: "CAMPAIGN \"QUOTED\" \u{e9}".into(),
            region: "NTSC UsaNtsc".into(),
            checksum_ok: true,
        },
        symbols: SymbolsInfo {
            source: "elf".into(),
            path: "game.elf".into(),
            ..SymbolsInfo::default()
        },
        options: RunOptions {
            frames: 6,
            entry: "handler".into(),
            top: 10,
            ..RunOptions::default()
        },
        timing: Timing {
            cycles_per_frame: fc,
            ..Timing::default()
        },
        summary: Summary {
            busy_cycles: 400_000.5,
            idle_cycles: 368_034.2,
            total_cycles: fc * 6.0,
            mean_load_pct: 68.25,
            max_load_pct: 96.5,
            p50_load_pct: 62.6,
            p95_load_pct: 96.5,
            p99_load_pct: 96.5,
            ..Summary::default()
        },
        functions,
        frames,
        watches: vec![WatchSpec {
            spec: "player_x:2".into(),
            symbol: Some("player_x".into()),
            addr: 0xFF_0000,
            size: 2,
        }],
        worst_frames: vec![5, 4, 3],
        stacks: vec![
            StackSample {
                stack: vec![0],
                mclk: 70_000,
            },
            StackSample {
                stack: vec![0, 1, 2],
                mclk: 3_500,
            },
        ],
        warnings: vec!["idle function `wait_vblank` not found".into()],
        stopped: Some("CPU halted at $000302".into()),
        kdebug: None,
        code: Default::default(),
    }
}

/// Replace every number in `json` (a digit run, with its sign, point and
/// exponent) by `with` with probability 1/`every`.
fn replace_numbers(rng: &mut Rng, json: &[u8], with: &[&str], every: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(json.len());
    let mut i = 0;
    let mut in_string = false;
    while i < json.len() {
        let b = json[i];
        if in_string {
            out.push(b);
            if b == b'\\' && i + 1 < json.len() {
                out.push(json[i + 1]);
                i += 1;
            } else if b == b'"' {
                in_string = false;
            }
            i += 1;
            continue;
        }
        if b == b'"' {
            in_string = true;
            out.push(b);
            i += 1;
            continue;
        }
        if b == b'-' || b.is_ascii_digit() {
            let start = i;
            while i < json.len()
                && matches!(json[i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
            {
                i += 1;
            }
            if rng.below(every) == 0 {
                out.extend_from_slice(with[rng.below(with.len() as u64) as usize].as_bytes());
            } else {
                out.extend_from_slice(&json[start..i]);
            }
            continue;
        }
        out.push(b);
        i += 1;
    }
    out
}

const ODD_NUMBERS: &[&str] = &[
    "18446744073709551616",
    "18446744073709551615",
    "-1",
    "-9223372036854775809",
    "1e400",
    "-1e400",
    "1e-400",
    "4294967296",
    "NaN",
    "Infinity",
    "-Infinity",
    "nan",
    "1.7976931348623157e308",
    "0.1000000000000000055511151231257827",
    "123456789012345678901234567890",
    "-0",
    "0x10",
    "01",
    "1.",
    ".5",
    "+1",
    "null",
    "\"12\"",
    "true",
    "[]",
];

/// Replace one value (after a `:`) by `depth` nested arrays or objects.
fn deep(rng: &mut Rng, json: &[u8], depth: usize) -> Vec<u8> {
    let colons: Vec<usize> = json
        .iter()
        .enumerate()
        .filter(|(_, &b)| b == b':')
        .map(|(i, _)| i)
        .collect();
    let at = colons[rng.below(colons.len() as u64) as usize] + 1;
    let mut out = json[..at].to_vec();
    let obj = rng.below(2) == 0;
    for _ in 0..depth {
        out.extend_from_slice(if obj { b"{\"a\":" } else { b"[" });
    }
    out.extend_from_slice(b"1");
    for _ in 0..depth {
        out.push(if obj { b'}' } else { b']' });
    }
    // Skip the value that was there (up to the next `,` or `}` at this
    // level is good enough: a mismatch is just more damage).
    let rest = &json[at..];
    let end = rest
        .iter()
        .position(|&b| b == b',' || b == b'\n')
        .unwrap_or(rest.len());
    out.extend_from_slice(&rest[end..]);
    out
}

fn mutate(rng: &mut Rng, base: &[u8]) -> Vec<u8> {
    let mut v = base.to_vec();
    match rng.below(9) {
        0 | 1 => {
            let junk = b"{}[]\":,0123456789-+.eE \t\r\n\x00\xff\\u nulltruefalse";
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(v.len() as u64) as usize;
                v[at] = junk[rng.below(junk.len() as u64) as usize];
            }
        }
        2 => {
            // Random bytes, any value (invalid UTF-8 too).
            for _ in 0..1 + rng.below(3) {
                let at = rng.below(v.len() as u64) as usize;
                v[at] = rng.next() as u8;
            }
        }
        3 | 4 => {
            let every = 1 + rng.below(40);
            v = replace_numbers(rng, &v, ODD_NUMBERS, every);
        }
        5 => {
            let depth = [10, 127, 129, 5_000, 200_000][rng.below(5) as usize];
            v = deep(rng, &v, depth);
        }
        6 => {
            // A slice of the document repeated or dropped.
            let a = rng.below(v.len() as u64) as usize;
            let b = a + rng.below((v.len() - a) as u64 + 1) as usize;
            if rng.below(2) == 0 {
                let piece = v[a..b].to_vec();
                v.splice(b..b, piece);
            } else {
                v.drain(a..b);
            }
        }
        7 => {
            // Unknown fields, duplicated keys, a BOM, trailing data.
            match rng.below(4) {
                0 => {
                    v.splice(1..1, b"\"extra\":{\"x\":[1,2,3]},".iter().copied());
                }
                1 => {
                    v.splice(
                        1..1,
                        b"\"schema\":\"retroprof-mdprof-report/1\",".iter().copied(),
                    );
                }
                2 => {
                    v.splice(0..0, b"\xef\xbb\xbf".iter().copied());
                }
                _ => v.extend_from_slice(b"\n{}"),
            }
        }
        _ => {
            // An escape sequence broken in a string.
            let s = [
                &b"\\u"[..],
                b"\\ud800",
                b"\\uDC00\\u0041",
                b"\\x41",
                b"\\",
                b"\xc3",
            ][rng.below(6) as usize];
            let quotes: Vec<usize> = v
                .iter()
                .enumerate()
                .filter(|(_, &b)| b == b'"')
                .map(|(i, _)| i)
                .collect();
            let at = quotes[rng.below(quotes.len() as u64) as usize] + 1;
            v.splice(at..at, s.iter().copied());
        }
    }
    v
}

/// Check one outcome; panics (with the input's description) when the
/// outcome is neither a good error nor a report that round-trips.
fn check(path: &Path, input: &[u8], got: Result<Report, DiffError>, what: &str) {
    let name = path.display().to_string();
    match got {
        Ok(r) => {
            let again = serde_json::to_vec_pretty(&r).unwrap();
            match parse_report(path, &again) {
                Ok(r2) => assert!(r2 == r, "{what}: re-read report differs"),
                Err(e) => panic!(
                    "{what}: accepted, but its own re-serialization is refused: {e}\n\
                     input: {}",
                    String::from_utf8_lossy(&input[..input.len().min(400)])
                ),
            }
        }
        Err(e) => {
            let msg = e.to_string();
            assert!(
                msg.starts_with(&format!("{name}: ")),
                "{what}: error does not name the file: {msg}"
            );
            assert!(
                msg.len() < 2_000,
                "{what}: error too long ({} bytes)",
                msg.len()
            );
            let is_json = ["truncated JSON", "not valid JSON", "not a profile report: "]
                .iter()
                .any(|k| msg.contains(k));
            if is_json {
                let at = msg.rsplit_once(" at line ").map(|(_, t)| t);
                let ok = at.is_some_and(|t| {
                    let mut it = t.split(" column ");
                    matches!(
                        (
                            it.next().map(str::parse::<u64>),
                            it.next().map(str::parse::<u64>)
                        ),
                        (Some(Ok(_)), Some(Ok(_)))
                    )
                });
                assert!(ok, "{what}: JSON error without line and column: {msg}");
            } else {
                // The semantic refusals name what is wrong.
                assert!(
                    [
                        "schema",
                        "frames[",
                        "frame ",
                        "stacks[",
                        "not a JSON report"
                    ]
                    .iter()
                    .any(|k| msg.contains(k)),
                    "{what}: error names neither a position nor a field: {msg}"
                );
            }
        }
    }
}

/// The memory bound: the parsed report of a file is a few times its size
/// (a `Vec<u8>` of the file, the probe, the model); 16x plus 1 MB is far
/// below what an unbounded reader would take.
fn bound(len: usize) -> usize {
    16 * len + (1 << 20)
}

fn tmp() -> PathBuf {
    let d = std::env::temp_dir().join(format!("retroprof-diff-campaign-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn fixtures() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures"))
}

#[test]
fn base_report_round_trips() {
    let _serial = serial();
    let r = base_report();
    let json = serde_json::to_vec_pretty(&r).unwrap();
    let back = parse_report(Path::new("base.json"), &json).unwrap();
    assert_eq!(back, r);
    // The same report as a file, for the regression fixtures made from it
    // (regenerate with RETROPROF_BLESS=1 when the report model changes).
    let fixture = fixtures().join("base_report.json");
    if retroprof_testkit::bless() {
        std::fs::write(&fixture, &json).unwrap();
    }
    let on_disk = read_report(&fixture).unwrap();
    assert_eq!(
        on_disk,
        r,
        "{} is stale (RETROPROF_BLESS=1)",
        fixture.display()
    );
}

#[test]
fn regression_fixtures_replay() {
    let _serial = serial();
    let dir = fixtures().join("regress");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "json") {
            let bytes = std::fs::read(&p).unwrap();
            let (got, peak) = retroprof_testkit::peak_during(|| read_report(&p));
            match &got {
                Ok(_) => eprintln!("{}: read, round-trips", p.display()),
                Err(e) => eprintln!("{e}"),
            }
            check(&p, &bytes, got, &p.display().to_string());
            assert!(peak <= bound(bytes.len()), "{}: peak {peak}", p.display());
            n += 1;
        }
    }
    assert!(n > 0, "no regression fixtures in {}", dir.display());
}

#[test]
fn mutated_reports_error_or_round_trip() {
    let _serial = serial();
    let base = serde_json::to_vec_pretty(&base_report()).unwrap();
    let path = Path::new("mutated.json");
    let mut rng = Rng(seed());
    let (mut ok, mut err) = (0usize, 0usize);
    let mut worst = 0usize;

    // Cut at every k-th byte: every prefix must be refused as truncated
    // (or, for the whole file, accepted).
    let k = 7;
    for cut in (0..base.len()).step_by(k) {
        let input = &base[..cut];
        let (got, peak) = retroprof_testkit::peak_during(|| parse_report(path, input));
        worst = worst.max(peak);
        let what = format!("cut at {cut}");
        match &got {
            Ok(_) => panic!("{what}: a cut report was accepted"),
            Err(e) if cut > 0 && base[..cut].iter().any(|b| !b.is_ascii_whitespace()) => {
                let m = e.to_string();
                assert!(m.contains("truncated JSON"), "{what}: {m}");
            }
            Err(_) => {}
        }
        check(path, input, got, &what);
        assert!(peak <= bound(input.len()), "{what}: peak {peak}");
        err += 1;
    }

    // Random mutations.
    let cases = 3_000;
    for case in 0..cases {
        let input = mutate(&mut rng, &base);
        let (got, peak) = retroprof_testkit::peak_during(|| parse_report(path, &input));
        let what = format!("case {case} (seed {})", seed());
        worst = worst.max(peak);
        assert!(
            peak <= bound(input.len()),
            "{what}: peak {peak} bytes for {} input bytes",
            input.len()
        );
        if got.is_ok() {
            ok += 1;
        } else {
            err += 1;
        }
        check(path, &input, got, &what);
    }
    eprintln!(
        "report reader campaign: {} cuts + {cases} mutations, {ok} accepted (round-tripped), \
         {err} refused, worst peak {worst} bytes",
        base.len().div_ceil(k)
    );
    // The mutations are not all fatal (unknown fields, a duplicated key,
    // a number replaced by an equal one): some must be accepted, most not.
    assert!(ok > 0 && err > ok, "{ok} accepted, {err} refused");
}

#[test]
fn files_through_read_report() {
    let _serial = serial();
    let d = tmp();
    let base = serde_json::to_vec_pretty(&base_report()).unwrap();
    let mut rng = Rng(seed() ^ 0xF11E);

    // Through the file reader: the error names the path given.
    for case in 0..100 {
        let input = mutate(&mut rng, &base);
        let p = d.join(format!("m{case}.json"));
        std::fs::write(&p, &input).unwrap();
        let (got, peak) = retroprof_testkit::peak_during(|| read_report(&p));
        check(&p, &input, got, &format!("file case {case}"));
        assert!(peak <= bound(input.len()), "file case {case}: peak {peak}");
        std::fs::remove_file(&p).unwrap();
    }

    // A 24 MB string (the ROM title) and a 24 MB run of blanks: accepted
    // and round-tripped, or refused, within the bound.
    let big = 24 << 20;
    for (name, input) in [
        ("bigstring.json", {
            let mut r = base_report();
            r.rom.title = "x".repeat(big);
            serde_json::to_vec(&r).unwrap()
        }),
        ("blanks.json", {
            let mut v = base.clone();
            v.splice(1..1, std::iter::repeat_n(b' ', big));
            v
        }),
        ("bigstring-cut.json", {
            let mut v = base[..20].to_vec();
            v.push(b'"');
            v.extend(std::iter::repeat_n(b'y', big));
            v
        }),
    ] {
        let p = d.join(name);
        std::fs::write(&p, &input).unwrap();
        let len = input.len();
        drop(input);
        let (got, peak) = retroprof_testkit::peak_during(|| read_report(&p));
        // Keep the check's own re-serialization out of the measured peak.
        let input = std::fs::read(&p).unwrap();
        check(&p, &input, got, name);
        assert!(
            peak <= 4 * len + (1 << 20),
            "{name}: peak {peak} for {len} bytes"
        );
        eprintln!("{name}: {len} bytes, peak {peak} bytes");
        std::fs::remove_file(&p).unwrap();
    }

    // Not a regular report: a directory, a missing file.
    assert!(read_report(&d.join("missing.json"))
        .unwrap_err()
        .to_string()
        .contains("missing.json"));
    assert!(read_report(&d)
        .unwrap_err()
        .to_string()
        .contains(&d.display().to_string()));
    std::fs::remove_dir_all(&d).ok();
}
