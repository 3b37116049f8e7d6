//! 68000 single-step conformance runner.
//!
//! ```text
//! cargo run --release -p retroprof-m68k --features conformance-runner \
//!     --example m68000_single_step -- \
//!     [DIR] [FILTER...] [--show N] [--test SUBSTR] [--stop-after N] \
//!     [--list-failures] [--quiet]
//! ```
//!
//! Runs every test of the SingleStepTests/m68000 collection (default DIR:
//! `../shared/m68000-tests/v1` next to the repository; from `/work/main`
//! pass `../shared/m68000-tests/v1`) on a fresh `Cpu`, one `step` each, and
//! checks registers, prefetch, memory, cycle count and the bus-cycle
//! sequence (see `tests/support/singlestep.rs` for the exact rules).
//!
//! - `FILTER`: run only files whose name contains one of these substrings
//!   (e.g. `MOVE.l`, `DIVU`). A positional argument that names an existing
//!   directory or contains a `/` is taken as DIR instead.
//! - `--show N`: print the first N failing tests in detail (which part
//!   differs, register diff, memory diff, expected vs recorded bus cycles,
//!   observer calls); tests that pass but whose observer cycles do not add
//!   up to the step's are shown too.
//! - `--test SUBSTR`: run only tests whose name contains SUBSTR
//!   (e.g. `--test "(A7)+"`, or a test number like `--test "017 "`).
//! - `--stop-after N`: stop starting new files once N tests have failed
//!   (files are reported in order up to the one that reached N).
//! - `--list-failures`: print `FILE | TEST NAME` for every failing test.
//! - `--quiet`: only the final line.
//!
//! Output: one line per file, then last exactly
//! `total: P passed, F failed of N; address-error cases: PA passed of NA; bus cycles matched in B`.
//! Files are processed on `RETROPROF_THREADS` threads (default: all cores);
//! output order does not depend on it. Exit status 1 if any test failed, 2 on
//! a usage or input error.

#[path = "../tests/support/singlestep.rs"]
mod singlestep;

// The core as `singlestep` runs it (`super::Cpu`): the real one, on the
// recording bus and observer.
use retroprof_m68k::Cpu;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use singlestep::*;

struct Opts {
    dir: PathBuf,
    filters: Vec<String>,
    show: usize,
    test: Option<String>,
    stop_after: Option<usize>,
    list_failures: bool,
    quiet: bool,
}

fn usage() -> &'static str {
    "usage: m68000_single_step [DIR] [FILTER...] [--show N] [--test SUBSTR] \
     [--stop-after N] [--list-failures] [--quiet]"
}

fn parse_args() -> Result<Opts, String> {
    let mut o = Opts {
        dir: default_dir(),
        filters: Vec::new(),
        show: 0,
        test: None,
        stop_after: None,
        list_failures: false,
        quiet: false,
    };
    let mut args = std::env::args().skip(1);
    let num = |flag: &str, v: Option<String>| -> Result<usize, String> {
        let v = v.ok_or_else(|| format!("{flag} needs a number"))?;
        v.parse()
            .map_err(|_| format!("{flag}: expected a number, got {v:?}"))
    };
    while let Some(a) = args.next() {
        match a.as_str() {
            "--show" => o.show = num("--show", args.next())?,
            "--stop-after" => o.stop_after = Some(num("--stop-after", args.next())?),
            "--test" => {
                o.test = Some(args.next().ok_or("--test needs a substring")?);
            }
            "--list-failures" => o.list_failures = true,
            "--quiet" | "-q" => o.quiet = true,
            "--help" | "-h" => return Err(usage().to_string()),
            s if s.starts_with("--") => return Err(format!("unknown option {s}\n{}", usage())),
            s => {
                let p = PathBuf::from(s);
                if p.is_dir() || s.contains('/') {
                    o.dir = p;
                } else {
                    o.filters.push(s.to_string());
                }
            }
        }
    }
    Ok(o)
}

struct Done {
    result: FileResult,
    details: Vec<String>,
    failing_names: Vec<String>,
}

fn main() -> ExitCode {
    let o = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let files = match list_files(&o.dir) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let files: Vec<PathBuf> = files
        .into_iter()
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            o.filters.is_empty() || o.filters.iter().any(|f| n.contains(f.as_str()))
        })
        .collect();
    if files.is_empty() {
        eprintln!("error: no file matches {:?}", o.filters);
        return ExitCode::from(2);
    }

    let t0 = Instant::now();
    let stop = AtomicBool::new(false);
    // Failure counts of finished files, to decide --stop-after in file order.
    let progress: Mutex<Vec<Option<usize>>> = Mutex::new(vec![None; files.len()]);
    let results = parallel_map(files.len(), thread_count(), &stop, |i| {
        let f = load_file(&files[i])?;
        let test_filter = |t: &Test| match &o.test {
            None => true,
            Some(s) => t.name.contains(s.as_str()),
        };
        let result = run_file(&f, test_filter);
        // Failing tests, and tests whose observer accounting is off.
        let mut to_show: Vec<usize> = result
            .failing
            .iter()
            .chain(&result.observer_failing)
            .copied()
            .collect();
        to_show.sort_unstable();
        to_show.dedup();
        let details = to_show
            .iter()
            .take(o.show)
            .map(|&k| detail(&f.name, k, &f.tests[k]))
            .collect();
        let failing_names = if o.list_failures {
            result
                .failing
                .iter()
                .map(|&k| format!("{} | {}", f.stem(), f.tests[k].name))
                .collect()
        } else {
            Vec::new()
        };
        if let Some(limit) = o.stop_after {
            let mut p = progress.lock().unwrap();
            p[i] = Some(result.failed());
            let mut sum = 0;
            for v in p.iter() {
                match v {
                    Some(n) => sum += n,
                    None => break,
                }
                if sum >= limit {
                    stop.store(true, Ordering::Relaxed);
                    break;
                }
            }
        }
        Ok::<Done, ParseError>(Done {
            result,
            details,
            failing_names,
        })
    });
    let elapsed = t0.elapsed();

    let mut summary = Vec::new();
    let mut details = Vec::new();
    let mut names = Vec::new();
    let mut failed_total = 0;
    let mut input_error = false;
    for r in results {
        let Some(r) = r else { break };
        match r {
            Ok(d) => {
                if !o.quiet {
                    println!("{}", d.result);
                }
                failed_total += d.result.failed();
                details.extend(d.details);
                names.extend(d.failing_names);
                summary.push(d.result);
            }
            Err(e) => {
                eprintln!("error: {e}");
                input_error = true;
            }
        }
        if o.stop_after.is_some_and(|n| failed_total >= n) {
            break;
        }
    }
    for d in details.iter().take(o.show) {
        println!();
        print!("{d}");
    }
    if !names.is_empty() {
        println!();
        for n in &names {
            println!("{n}");
        }
    }
    eprintln!(
        "{} file(s) in {:.2} s on {} thread(s)",
        summary.len(),
        elapsed.as_secs_f64(),
        thread_count()
    );
    println!("{}", total_line(&summary));
    if input_error {
        ExitCode::from(2)
    } else if failed_total > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
