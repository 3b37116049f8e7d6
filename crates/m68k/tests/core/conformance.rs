//! 68000 conformance: every test of the SingleStepTests/m68000 collection
//! (`../shared/m68000-tests/v1`, 317,500 tests) must pass, except those
//! listed in `tests/known_failures.txt`, and every listed failure must still
//! fail (so the list stays true).
//!
//! ```text
//! cargo test --release -p retroprof-m68k --test core conformance:: -- --nocapture
//! ```
//!
//! Regenerate the list from the current core (keeps the reasons of entries
//! that still apply; new entries get `unexplained: <first difference>`, to be
//! edited by hand before committing):
//!
//! ```text
//! RETROPROF_BLESS=1 cargo test --release -p retroprof-m68k --test core conformance::conformance
//! ```
//!
//! The runner `cargo run --release -p retroprof-m68k --features
//! conformance-runner --example m68000_single_step -- --show 5 FILTER` shows
//! failures in detail.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use crate::singlestep::*;

const LIST: &str = "known_failures.txt";

fn list_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(LIST)
}

/// The collection's files, panicking loudly if it is missing.
fn collection() -> Vec<PathBuf> {
    let dir = default_dir();
    list_files(&dir).unwrap_or_else(|e| {
        panic!(
            "the 68000 conformance tests need ../shared/m68000-tests/v1 next to the \
             repository: {e}"
        )
    })
}

/// Loads each file in turn on all cores and hands it to `job`; only what
/// `job` returns is kept, so the whole collection is never in memory.
fn for_each_file<T: Send>(job: impl Fn(TestFile) -> T + Sync) -> Vec<T> {
    let files = collection();
    let stop = AtomicBool::new(false);
    parallel_map(files.len(), thread_count(), &stop, |i| {
        job(load_file(&files[i]).unwrap_or_else(|e| panic!("{e}")))
    })
    .into_iter()
    .map(Option::unwrap)
    .collect()
}

/// One file's outcome and its failing tests.
struct Checked {
    stem: String,
    name: String,
    result: FileResult,
    failing: Vec<(usize, Test)>,
}

/// Writes to stderr without the test harness capturing it, so the summary
/// shows in a normal `cargo test` run.
fn report(s: &str) {
    let mut e = std::io::stderr().lock();
    let _ = e.write_all(s.as_bytes());
    let _ = e.flush();
}

// ---------------------------------------------------------------------------
// known_failures.txt
// ---------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq, Eq)]
enum Pattern {
    Exact(String),
    /// `*` alone (every test) or `prefix*`.
    Prefix(String),
}

#[derive(Clone, Debug)]
struct KnownFailure {
    line: usize,
    file: String,
    pattern: Pattern,
    reason: String,
}

impl KnownFailure {
    fn matches(&self, file: &str, test: &str) -> bool {
        self.file == file
            && match &self.pattern {
                Pattern::Exact(n) => n == test,
                Pattern::Prefix(p) => test.starts_with(p.as_str()),
            }
    }

    fn render(&self) -> String {
        let t = match &self.pattern {
            Pattern::Exact(n) => n.clone(),
            Pattern::Prefix(p) => format!("{p}*"),
        };
        format!("{} | {} | {}", self.file, t, self.reason)
    }
}

const HEADER: &str = "\
# Known failures of the 68000 single-step conformance test (tests/conformance.rs).
# One entry per line: FILE | TEST | REASON
#   FILE    file stem, e.g. MOVE.w (the file without .json.bin)
#   TEST    an exact test name, e.g. 004 TAS (d8, A3, Xn) 4af3
#           or a pattern: * (every test of the file) or a prefix ending in *
#   REASON  why this failure is accepted (required)
# The test fails on any failure not listed here, and on any entry that no
# longer matches a failing test. Regenerate (then edit the reasons by hand):
#   RETROPROF_BLESS=1 cargo test --release -p retroprof-m68k --test conformance
";

fn parse_list(text: &str, path: &Path) -> Result<Vec<KnownFailure>, String> {
    let mut v = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at = || format!("{}:{}", path.display(), i + 1);
        let parts: Vec<&str> = line.splitn(3, '|').map(str::trim).collect();
        if parts.len() != 3 {
            return Err(format!(
                "{}: expected `FILE | TEST | REASON`, found {line:?}",
                at()
            ));
        }
        if parts[0].is_empty() || parts[1].is_empty() || parts[2].is_empty() {
            return Err(format!(
                "{}: FILE, TEST and REASON must all be non-empty in {line:?}",
                at()
            ));
        }
        let pattern = match parts[1].strip_suffix('*') {
            Some(p) => Pattern::Prefix(p.to_string()),
            None => Pattern::Exact(parts[1].to_string()),
        };
        v.push(KnownFailure {
            line: i + 1,
            file: parts[0].to_string(),
            pattern,
            reason: parts[2].to_string(),
        });
    }
    Ok(v)
}

fn write_atomic(path: &Path, text: &str) {
    let tmp = path.with_extension("txt.tmp");
    std::fs::write(&tmp, text).unwrap_or_else(|e| panic!("{}: {e}", tmp.display()));
    std::fs::rename(&tmp, path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

#[test]
fn conformance() {
    let path = list_path();
    let bless = retroprof_testkit::bless();
    let known = match std::fs::read_to_string(&path) {
        Ok(t) => parse_list(&t, &path).unwrap_or_else(|e| panic!("{e}")),
        Err(e) if bless => {
            report(&format!("{}: {e}; creating it\n", path.display()));
            Vec::new()
        }
        Err(e) => panic!(
            "{}: {e} (create it with RETROPROF_BLESS=1 cargo test --release -p \
             retroprof-m68k --test conformance)",
            path.display()
        ),
    };

    let files: Vec<Checked> = for_each_file(|mut f| {
        let result = run_file(&f, |_| true);
        let failing = result
            .failing
            .iter()
            .map(|&i| (i, std::mem::take(&mut f.tests[i])))
            .collect();
        Checked {
            stem: f.stem().to_string(),
            name: f.name,
            result,
            failing,
        }
    });
    let results: Vec<FileResult> = files.iter().map(|c| c.result.clone()).collect();

    let mut summary = String::new();
    for r in results
        .iter()
        .filter(|r| r.failed() > 0 || r.observer_mismatch > 0)
    {
        let _ = writeln!(summary, "{r}");
    }
    let _ = writeln!(summary, "{}", total_line(&results));
    report(&summary);

    // Match failures against the list (exact names through a hash index,
    // patterns by scanning: there are few).
    let mut exact: HashMap<(&str, &str), Vec<usize>> = HashMap::new();
    let mut patterns = Vec::new();
    for (k, kf) in known.iter().enumerate() {
        match &kf.pattern {
            Pattern::Exact(n) => exact.entry((&kf.file, n)).or_default().push(k),
            Pattern::Prefix(_) => patterns.push(k),
        }
    }
    let matches_of = |stem: &str, name: &str| -> Vec<usize> {
        let mut v: Vec<usize> = exact.get(&(stem, name)).cloned().unwrap_or_default();
        v.extend(
            patterns
                .iter()
                .copied()
                .filter(|&k| known[k].matches(stem, name)),
        );
        v.sort_unstable();
        v
    };
    let mut used = vec![false; known.len()];
    let mut unexpected: Vec<(usize, usize)> = Vec::new();
    // Per file, per failing test: the entries that match it.
    let mut matched: Vec<Vec<Vec<usize>>> = Vec::new();
    for (fi, f) in files.iter().enumerate() {
        let mut per_test = Vec::new();
        for (k, (_, t)) in f.failing.iter().enumerate() {
            let m = matches_of(&f.stem, &t.name);
            for &e in &m {
                used[e] = true;
            }
            if m.is_empty() {
                unexpected.push((fi, k));
            }
            per_test.push(m);
        }
        matched.push(per_test);
    }
    let stale: Vec<&KnownFailure> = known
        .iter()
        .zip(&used)
        .filter(|(_, &u)| !u)
        .map(|(k, _)| k)
        .collect();

    if bless {
        let mut out = String::from(HEADER);
        for (f, per_test) in files.iter().zip(&matched) {
            let mut pattern_hit = std::collections::BTreeSet::new();
            let mut lines = Vec::new();
            for ((_, t), m) in f.failing.iter().zip(per_test) {
                if let Some(&k) = m
                    .iter()
                    .find(|&&k| matches!(known[k].pattern, Pattern::Prefix(_)))
                {
                    pattern_hit.insert(k);
                    continue;
                }
                let reason = match m.first() {
                    Some(&k) => known[k].reason.clone(),
                    None => format!("unexplained: {}", first_difference(t)),
                };
                lines.push(format!("{} | {} | {}", f.stem, t.name, reason));
            }
            for k in pattern_hit {
                let _ = writeln!(out, "{}", known[k].render());
            }
            for l in lines {
                let _ = writeln!(out, "{l}");
            }
        }
        write_atomic(&path, &out);
        report(&format!(
            "RETROPROF_BLESS: wrote {} ({} unexpected failures added, {} stale entries dropped)\n",
            path.display(),
            unexpected.len(),
            stale.len()
        ));
        return;
    }

    let mut msg = String::new();
    let observer_mismatch: usize = results.iter().map(|r| r.observer_mismatch).sum();
    if observer_mismatch > 0 {
        let _ = writeln!(
            msg,
            "in {observer_mismatch} test(s) the observer's instruction + exception cycles differ \
             from the step's cycles (see the per-file lines above; the runner's --show lists \
             them with the observer calls)"
        );
    }
    if !unexpected.is_empty() {
        let _ = writeln!(
            msg,
            "{} test(s) fail that {} does not list; the first ones:",
            unexpected.len(),
            LIST
        );
        for &(fi, k) in unexpected.iter().take(40) {
            let f = &files[fi];
            let t = &f.failing[k].1;
            let _ = writeln!(msg, "  {} | {} | {}", f.stem, t.name, first_difference(t));
        }
        if let Some(&(fi, k)) = unexpected.first() {
            let (ti, t) = &files[fi].failing[k];
            let _ = writeln!(msg);
            msg.push_str(&detail(&files[fi].name, *ti, t));
        }
    }
    if !stale.is_empty() {
        let _ = writeln!(
            msg,
            "{} {} of {} no longer match{} a failing test (now passing, or naming no test); remove:",
            stale.len(),
            if stale.len() == 1 { "entry" } else { "entries" },
            LIST,
            if stale.len() == 1 { "es" } else { "" }
        );
        for k in stale.iter().take(40) {
            let _ = writeln!(msg, "  line {}: {}", k.line, k.render());
        }
    }
    if !msg.is_empty() {
        panic!(
            "68000 conformance: {}\n{msg}\n(regenerate the list with RETROPROF_BLESS=1, then \
             review the reasons; details: cargo run --release -p retroprof-m68k --features \
             conformance-runner --example m68000_single_step -- --show 5 FILTER)",
            total_line(&results)
        );
    }
}

/// The harness itself: every file parses, has the advertised shape, and each
/// expected bus-cycle list is reproduced exactly when replayed through the
/// same conversion the recording bus uses (so a mismatch can only come from
/// the core).
#[test]
fn harness_reproduces_expected_transactions() {
    let counts = for_each_file(|f| {
        assert_eq!(f.tests.len(), 2500, "{}: expected 2,500 tests", f.name);
        for t in &f.tests {
            check_replay(&f.name, t);
        }
        f.tests.len()
    });
    assert_eq!(counts.len(), 127, "expected 127 files in the collection");
    assert_eq!(counts.iter().sum::<usize>(), 317_500);
}

fn check_replay(file: &str, t: &Test) {
    assert!(
        !t.name.contains('|'),
        "{file}: test name {:?} contains '|', which known_failures.txt uses as separator",
        t.name
    );
    let sum: i64 = t.transactions.iter().map(|e| e.cycles).sum();
    assert_eq!(
        sum, t.total_cycles as i64,
        "{file} {}: transaction cycles do not add up to total_cycles",
        t.name
    );
    // Replay: accesses at their start times, as a core would report them.
    let start = 1000u64;
    let mut time = start;
    let mut log = Vec::new();
    for e in &t.transactions {
        assert_ne!(e.kind, KIND_TAS, "{file} {}: kind 3 (TAS) entry", t.name);
        if e.kind != KIND_IDLE {
            log.push(Access {
                kind: e.kind,
                fc: e.fc,
                addr: e.addr,
                data: e.data,
                uds: e.uds,
                lds: e.lds,
                start: time,
                len: e.cycles as u32,
            });
        }
        time += e.cycles as u64;
    }
    let got = to_entries(&log, start, t.total_cycles as u64);
    assert_eq!(
        compare_entries(&t.transactions, &got),
        None,
        "{file} {}: replay differs\nexpected {:?}\ngot {:?}",
        t.name,
        t.transactions,
        got
    );
}

/// Corrupt input gives an error naming the file and offset, never a panic.
#[test]
fn parser_rejects_damaged_files() {
    let files = collection();
    let path = files
        .iter()
        .find(|p| p.ends_with("NOP.json.bin"))
        .expect("NOP.json.bin in the collection");
    let good = std::fs::read(path).unwrap();
    parse_file(path, &good).expect("NOP parses");

    // Truncation anywhere in the first tests.
    for cut in [0, 3, 7, 8, 13, 20, 60, 100, 200, 333, good.len() - 1] {
        let e = parse_file(path, &good[..cut]).expect_err("truncated file must fail");
        let s = e.to_string();
        assert!(s.contains("NOP.json.bin"), "{s}");
        assert!(e.offset <= cut, "offset {} past cut {cut}: {s}", e.offset);
    }
    // Bad magics.
    let mut bad = good.clone();
    bad[0] ^= 1;
    let e = parse_file(path, &bad).unwrap_err();
    assert_eq!(e.offset, 0);
    assert!(e.to_string().contains("magic"), "{e}");
    let mut bad = good.clone();
    bad[12] ^= 0xff; // first test block's magic
    let e = parse_file(path, &bad).unwrap_err();
    assert_eq!(e.offset, 12, "{e}");
    // Absurd lengths and counts.
    let mut bad = good.clone();
    bad[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(parse_file(path, &bad).is_err());
    let mut bad = good.clone();
    bad[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(parse_file(path, &bad).is_err());
    // Every single-byte corruption of the first test is an error or a
    // different parse, never a panic.
    let first_len = u32::from_le_bytes(good[8..12].try_into().unwrap()) as usize;
    for i in 0..first_len + 8 {
        let mut b = good.clone();
        b[i] = b[i].wrapping_add(0x5b);
        let _ = parse_file(path, &b);
    }
}

#[test]
fn known_failures_list_parses() {
    let path = list_path();
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    parse_list(&text, &path).unwrap_or_else(|e| panic!("{e}"));
    assert!(parse_list("X | y", &path).is_err());
    assert!(parse_list("X | | r", &path).is_err());
    let l = parse_list("TAS | * | unverified\nNOP | 000 NOP 4e71 | r", &path).unwrap();
    assert!(l[0].matches("TAS", "123 TAS (A1) 4ad1"));
    assert!(!l[0].matches("TST.b", "123 TAS (A1) 4ad1"));
    assert!(l[1].matches("NOP", "000 NOP 4e71"));
    assert!(!l[1].matches("NOP", "001 NOP 4e71"));
}
