//! `retroprof diff` and `profile --baseline` end to end, and the CI gate
//! script of docs/ci.md (docs/ci-gate.sh) on two builds of the known-costs
//! ROM that differ in one instruction's immediate: burn(500) vs burn(600).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_retroprof")
}

fn run(args: &[&str]) -> Output {
    Command::new(bin())
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("run retroprof")
}

fn tmp(name: &str) -> PathBuf {
    common::fresh_dir("diff-cli", name)
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn json(p: &Path) -> serde_json::Value {
    let s = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&s).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Build the known-costs ROM from a copy of testroms/ with burn's loop
/// count set to `n` (the committed testroms/out is never touched).
/// The m68k toolchain must be installed: a missing one fails the test.
fn build_knowncosts(dir: &Path, n: u32) -> PathBuf {
    let gcc = Command::new("m68k-linux-gnu-gcc").arg("--version").output();
    assert!(
        gcc.is_ok_and(|o| o.status.success()),
        "m68k-linux-gnu-gcc not found: this test builds ROM variants from testroms/ \
         (apt-get install gcc-m68k-linux-gnu binutils-m68k-linux-gnu)"
    );
    let src = dir.join(format!("src{n}"));
    let st = Command::new("cp")
        .arg("-r")
        .arg(repo().join("testroms"))
        .arg(&src)
        .status()
        .unwrap();
    assert!(st.success());
    let _ = std::fs::remove_dir_all(src.join("out"));
    let burn = src.join("lib/burn.s");
    let s = std::fs::read_to_string(&burn).unwrap();
    assert!(s.contains("move.w  #500,%d0"), "lib/burn.s changed: {s}");
    std::fs::write(&burn, s.replace("#500,%d0", &format!("#{n},%d0"))).unwrap();
    let out = dir.join(format!("out{n}"));
    let o = Command::new(src.join("build.sh"))
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "build.sh failed: {:?}", text(&o));
    out.join("knowncosts/rom.bin")
}

fn gate(rom: &Path, out: &Path, baseline: Option<&Path>, extra: &[&str]) -> Output {
    let mut c = Command::new(repo().join("docs/ci-gate.sh"));
    c.arg(rom).arg(out);
    if let Some(b) = baseline {
        c.arg(b);
    }
    if !extra.is_empty() {
        c.arg("--").args(extra);
    }
    c.env("RETROPROF", bin())
        .env("RETROPROF_FRAMES", "240")
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

fn function<'a>(d: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    d["functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == name)
        .unwrap_or_else(|| panic!("{name} not in the diff"))
}

fn m(v: &serde_json::Value, field: &str, which: &str) -> f64 {
    v[field][which].as_f64().unwrap()
}

/// burn(500) -> burn(600): 100 more `dbra` iterations per call. M68000
/// User's Manual, section 8, table 8-9 (conditional instruction execution
/// times): DBcc, condition false, count not expired (branch taken) = 10
/// cycles; the other instructions
/// (move.w #imm,Dn 8, the expiring dbra 14, rts 16) are the same. So each
/// call costs 100 x 10 = 1,000 table cycles more. The DRAM refresh adds 2
/// cycles at the first instruction boundary at least 128 cycles after the
/// previous one (crates/megadrive/src/timing.rs, md-timing.md): inside the
/// dbra loop that is every 13 iterations (13 x 10 = 130 >= 128 - 2), so
/// 100 extra iterations bring 100/13 = 7.69 more refresh penalties on
/// average (1,000 x 2/130 = 15.4 cycles), and a call gets 7 or 8 of them:
/// +1,014 or +1,016 cycles per call, the mean over the run between the two.
/// (Measured: 5,114.0 -> 6,130.0, +1,016.0: every call enters the loop at
/// the same refresh phase.)
const BURN_EXTRA_TABLE_CYCLES: f64 = 100.0 * 10.0;

#[test]
fn ci_gate_script_on_two_builds_of_the_known_costs_rom() {
    let d = tmp("gate");
    let rom500 = build_knowncosts(&d, 500);
    let rom600 = build_knowncosts(&d, 600);
    // The main branch's run: no baseline, writes the report.
    let main = d.join("main");
    let o = gate(&rom500, &main, None, &[]);
    assert!(o.status.success(), "{:?}", text(&o));
    let base_json = main.join("report.json");
    assert!(main.join("report.html").is_file());
    // The slower build: the function gate trips on burn.
    let pr = d.join("pr");
    let o = gate(&rom600, &pr, Some(&base_json), &[]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(3), "{out}\n{err}");
    assert!(err.contains("FAIL: function regression"), "{err}");
    assert!(err.contains("burn (+19."), "{err}");
    assert!(err.contains("ci-gate: FAILED"), "{err}");
    assert!(out.contains("functions by change in self cycles"), "{out}");
    assert!(pr.join("diff.html").is_file());
    let dj = json(&pr.join("diff.json"));
    assert_eq!(dj["schema"], "retroprof-diff/1");
    let burn = function(&dj, "burn");
    let calls = m(burn, "calls", "base");
    assert!(calls > 200.0, "burn calls {calls}");
    assert_eq!(m(burn, "calls", "new"), calls, "same number of game loops");
    let per_call = m(burn, "cycles_per_call", "delta");
    println!(
        "burn cycles/call {:.2} -> {:.2}: {per_call:+.3}",
        m(burn, "cycles_per_call", "base"),
        m(burn, "cycles_per_call", "new")
    );
    // 1,000 table cycles plus 7 to 8 refresh penalties of 2 cycles.
    let refresh = per_call - BURN_EXTRA_TABLE_CYCLES;
    assert!(
        (14.0..=16.0).contains(&refresh),
        "burn per call grew by {per_call}: {refresh} beyond the tables, expected 14-16 (refresh)"
    );
    // Everything else the game loop calls runs the same code the same
    // number of times: no change beyond refresh noise (a 2-cycle penalty
    // lands on another instruction), and the same calls.
    let total = m(&dj["summary"], "total_cycles", "base");
    for f in dj["functions"].as_array().unwrap() {
        let name = f["name"].as_str().unwrap();
        if name == "burn" || f["idle"] == true {
            continue;
        }
        assert_eq!(f["match"], "same", "{name}");
        assert_eq!(m(f, "calls", "delta"), 0.0, "{name} calls");
        let base = m(f, "self_cycles", "base");
        let delta = m(f, "self_cycles", "delta").abs();
        assert!(
            delta <= base * 2.0 / 128.0 + 2.0,
            "{name}: self cycles {base} changed by {delta}: more than refresh can move"
        );
        assert!(delta < total * 1e-4, "{name}: {delta}");
    }
    // The whole-run picture: the busy time grew by burn's growth (within
    // refresh noise), the idle wait shrank by as much, no new drops.
    let busy = m(&dj["summary"], "busy_cycles", "delta");
    let burn_delta = m(burn, "self_cycles", "delta");
    assert!(
        (busy - burn_delta).abs() < burn_delta * 0.01,
        "busy +{busy}, burn +{burn_delta}"
    );
    assert_eq!(m(&dj["summary"], "dropped_frames", "delta"), 0.0);
    assert!(dj["new_functions"].as_array().unwrap().is_empty());
    assert!(dj["removed_functions"].as_array().unwrap().is_empty());
    // The same build twice: nothing changed, no gate trips.
    let again = d.join("again");
    let o = gate(&rom500, &again, Some(&base_json), &[]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    assert!(out.contains("ci-gate: pass"), "{out}");
    let dj = json(&again.join("diff.json"));
    for f in dj["functions"].as_array().unwrap() {
        assert_eq!(m(f, "self_cycles", "delta"), 0.0, "{}", f["name"]);
    }
    assert!(dj["top_frames"].as_array().unwrap().is_empty());
    assert!(
        dj["warnings"].as_array().unwrap().is_empty(),
        "{}",
        dj["warnings"]
    );
    // `diff` on the two ROMs directly (profiled here with the same
    // options), every output.
    let o = run(&[
        "diff",
        rom500.to_str().unwrap(),
        rom600.to_str().unwrap(),
        "--frames",
        "240",
        "--json",
        d.join("d.json").to_str().unwrap(),
        "--csv",
        d.join("frames.csv").to_str().unwrap(),
        "--functions",
        d.join("functions.csv").to_str().unwrap(),
        "--html",
        d.join("d.html").to_str().unwrap(),
        "--flamegraph",
        d.join("d.svg").to_str().unwrap(),
        "--pprof",
        d.join("d.pb.gz").to_str().unwrap(),
        "--fail-new-drops",
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    let direct = json(&d.join("d.json"));
    assert_eq!(
        m(function(&direct, "burn"), "cycles_per_call", "delta"),
        per_call,
        "ROM sides give the same figures as the reports"
    );
    let csv = std::fs::read_to_string(d.join("functions.csv")).unwrap();
    assert!(
        csv.lines().nth(1).unwrap().starts_with("burn,,same,0,"),
        "{csv}"
    );
    let svg = std::fs::read_to_string(d.join("d.svg")).unwrap();
    assert!(svg.contains("<title>burn ("), "burn in the flame graph");
    for l in out.lines() {
        assert!(
            l.chars().count() <= 80,
            "{} columns: {l}",
            l.chars().count()
        );
    }
    pprof_matches_diff_base(&d, &rom500, &rom600, &d.join("d.pb.gz"));
}

/// `go tool pprof -top` of our one-file diff profile gives the same table
/// as `-diff_base` on the two sides' own profiles. Needs Go (`.ci/run`
/// installs golang-go): fails, not skips, without it.
fn pprof_matches_diff_base(d: &Path, base: &Path, new: &Path, diff: &Path) {
    let go = Command::new("go").arg("version").output();
    assert!(
        go.is_ok_and(|o| o.status.success()),
        "this test needs Go's pprof (`go tool pprof`): install golang-go (.ci/run does)"
    );
    for (rom, out) in [(base, "base.pb.gz"), (new, "new.pb.gz")] {
        let o = run(&[
            "profile",
            rom.to_str().unwrap(),
            "--frames",
            "240",
            "--pprof",
            d.join(out).to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{:?}", text(&o));
    }
    let top = |args: &[&Path], diff_base: Option<&Path>| {
        let mut c = Command::new("go");
        c.args(["tool", "pprof", "-top", "-nodecount=1000"]);
        if let Some(b) = diff_base {
            c.arg(format!("-diff_base={}", b.display()));
        }
        c.args(args);
        c.env("PPROF_TMPDIR", d).env("HOME", d);
        let o = c.output().unwrap();
        let (out, err) = text(&o);
        assert!(o.status.success(), "go tool pprof: {err}");
        // Drop the header lines that name the file.
        out.lines()
            .skip_while(|l| !l.trim_start().starts_with("flat"))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let ours = top(&[diff], None);
    let theirs = top(&[&d.join("new.pb.gz")], Some(&d.join("base.pb.gz")));
    assert!(ours.len() > 3, "{ours:?}");
    assert_eq!(ours, theirs, "pprof -top of the diff profile vs -diff_base");
    assert!(ours.iter().any(|l| l.ends_with(" burn")), "{ours:?}");
}

#[test]
fn diff_of_a_report_with_itself_and_bad_input() {
    let d = tmp("self");
    let base = d.join("base.json");
    let o = run(&[
        "profile",
        "--frames",
        "120",
        "--json",
        base.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    let b = base.to_str().unwrap();
    let o = run(&[
        "diff",
        b,
        b,
        "--fail-load-regression",
        "0",
        "--fail-function-regression",
        "0",
        "--fail-new-drops",
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    assert!(
        out.contains("functions by change in self cycles (0 of "),
        "{out}"
    );
    assert!(
        !out.contains('\x1b'),
        "no colour with NO_COLOR / off a terminal"
    );
    // A report against a ROM: the ROM is profiled with --frames 120 too.
    let o = run(&[
        "diff",
        b,
        "--frames",
        "120",
        &repo()
            .join("testroms/out/knowncosts/rom.bin")
            .to_string_lossy(),
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    // Bad input: each names the file and what it is.
    let trunc = d.join("trunc.json");
    let full = std::fs::read_to_string(&base).unwrap();
    std::fs::write(&trunc, &full[..full.len() / 3]).unwrap();
    let heap = d.join("heap.json");
    std::fs::write(&heap, "{\"format\": \"retroprof-heap\", \"version\": 1}").unwrap();
    let v2 = d.join("v2.json");
    std::fs::write(
        &v2,
        full.replace("retroprof-mdprof-report/1", "retroprof-mdprof-report/2"),
    )
    .unwrap();
    for (file, want) in [
        (&trunc, "truncated JSON"),
        (&heap, "`retroprof heap` report"),
        (&v2, "report schema \"retroprof-mdprof-report/2\""),
    ] {
        let o = run(&["diff", b, file.to_str().unwrap()]);
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(&file.display().to_string()), "{err}");
        assert!(err.contains(want), "{want:?} in {err}");
    }
    // An output may not replace an input.
    let o = run(&["diff", b, b, "--json", b]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(std::fs::read_to_string(&base).unwrap(), full);
    // Gates need a baseline in `profile`.
    let o = run(&["profile", "--frames", "10", "--fail-new-drops"]);
    assert_eq!(o.status.code(), Some(2));
    // profile --baseline: the same demo run, no change, gates pass.
    let dj = d.join("diff.json");
    let o = run(&[
        "profile",
        "--frames",
        "120",
        "--baseline",
        b,
        "--fail-function-regression",
        "0",
        "--diff-json",
        dj.to_str().unwrap(),
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    assert!(out.contains("diff (base -> new)"), "{out}");
    assert_eq!(json(&dj)["summary"]["mean_load_pct"]["delta"], 0.0);
}

/// `profile`'s own report carries the load percentiles (nearest rank over
/// the counted frames from the first game loop on), in the terminal, the
/// JSON and the HTML.
#[test]
fn profile_reports_load_percentiles() {
    let d = tmp("pct");
    let j = d.join("r.json");
    let h = d.join("r.html");
    // 700 frames: phase B's divisions make the loads spread out.
    let o = run(&[
        "profile",
        "--frames",
        "700",
        "--json",
        j.to_str().unwrap(),
        "--html",
        h.to_str().unwrap(),
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    let r = json(&j);
    let s = &r["summary"];
    let first = s["first_loop_frame"].as_u64().unwrap();
    let mut loads: Vec<f64> = r["frames"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["counted"] == true && f["frame"].as_u64().unwrap() >= first)
        .map(|f| f["load_pct"].as_f64().unwrap())
        .collect();
    loads.sort_by(f64::total_cmp);
    let n = loads.len();
    let rank = |p: f64| loads[((p / 100.0 * n as f64).ceil() as usize).clamp(1, n) - 1];
    let (p50, p95, p99) = (
        s["p50_load_pct"].as_f64().unwrap(),
        s["p95_load_pct"].as_f64().unwrap(),
        s["p99_load_pct"].as_f64().unwrap(),
    );
    assert_eq!(p50, rank(50.0));
    assert_eq!(p95, rank(95.0));
    assert_eq!(p99, rank(99.0));
    let max = s["max_load_pct"].as_f64().unwrap();
    assert!(
        p50 < p95 && p95 <= p99 && p99 <= max,
        "{p50} {p95} {p99} {max}"
    );
    assert!(
        out.contains(&format!("p50 {p50:.1}%  p95 {p95:.1}%  p99 {p99:.1}%")),
        "{out}"
    );
    let html = std::fs::read_to_string(&h).unwrap();
    assert!(
        html.contains(&format!("{p50:.1} / {p95:.1} / {p99:.1} %")),
        "percentiles in the HTML"
    );
}
