//! `retroprof profile` end to end: the built-in demo, golden report and
//! CSV (RETROPROF_BLESS=1 rewrites them), outputs, CI gates, determinism,
//! bad input.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_retroprof"))
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("run retroprof")
}

fn tmp(name: &str) -> PathBuf {
    common::fresh_dir("profile-cli", name)
}

fn golden(name: &str, actual: &str) {
    let path = retroprof_testkit::golden_path(env!("CARGO_MANIFEST_DIR"), name);
    retroprof_testkit::check_golden_text(&path, actual);
}

#[test]
fn demo_report_and_csv_are_golden_and_deterministic() {
    let d = tmp("demo");
    let csv = d.join("frames.csv");
    let funcs = d.join("funcs.csv");
    let out = run(&[
        "profile",
        "--frames",
        "420",
        "--csv",
        csv.to_str().unwrap(),
        "--functions",
        funcs.to_str().unwrap(),
        "--watch",
        "loop_count",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.lines().next().unwrap().contains("built-in demo"),
        "first line says it is the demo"
    );
    assert!(!stdout.contains('\x1b'), "no colour when not on a terminal");
    let csv_text = std::fs::read_to_string(&csv).unwrap();
    assert!(csv_text.starts_with(
        "frame,busy_cycles,idle_cycles,load_pct,dropped,dma_vblank_bytes,dma_active_bytes"
    ));
    let f_text = std::fs::read_to_string(&funcs).unwrap();
    assert!(f_text.starts_with("function,self_cycles,inclusive_cycles,calls"));
    golden("profile_demo_report.txt", &stdout);
    golden("profile_demo_frames.csv", &csv_text);
    // Same run, same bytes.
    let csv2 = d.join("frames2.csv");
    let out2 = run(&[
        "profile",
        "--frames",
        "420",
        "--csv",
        csv2.to_str().unwrap(),
        "--watch",
        "loop_count",
    ]);
    assert!(out2.status.success());
    assert_eq!(std::fs::read(&csv2).unwrap(), csv_text.as_bytes());
    assert_eq!(String::from_utf8(out2.stdout).unwrap(), stdout);
}

#[test]
fn stack_outputs_and_json() {
    let d = tmp("outs");
    let p = |n: &str| d.join(n).to_str().unwrap().to_string();
    let out = run(&[
        "profile",
        "--frames",
        "120",
        "--json",
        &p("r.json"),
        "--folded",
        &p("s.folded"),
        "--flamegraph",
        &p("f.svg"),
        "--pprof",
        &p("p.pb.gz"),
        "--speedscope",
        &p("s.json"),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("r.json")).unwrap()).unwrap();
    assert_eq!(j["schema"], "retroprof-mdprof-report/1");
    assert_eq!(j["frames"].as_array().unwrap().len(), 120);
    let folded = std::fs::read_to_string(d.join("s.folded")).unwrap();
    assert!(
        folded.lines().any(|l| l.contains("main;")),
        "stacks under main"
    );
    assert!(
        std::fs::read_to_string(d.join("f.svg"))
            .unwrap()
            .starts_with("<?xml")
            || std::fs::read_to_string(d.join("f.svg"))
                .unwrap()
                .contains("<svg")
    );
    assert_eq!(
        &std::fs::read(d.join("p.pb.gz")).unwrap()[..2],
        &[0x1f, 0x8b]
    );
    let ss: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("s.json")).unwrap()).unwrap();
    assert!(ss["profiles"].is_array());
    assert!(
        ss["profiles"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["type"] != "evented"),
        "no --trace-frames: no evented profile"
    );

    // --trace-frames with --speedscope alone (no --trace): the window's call
    // timeline is an evented profile after the sampled one.
    let out = run(&[
        "profile",
        "--frames",
        "40",
        "--trace-frames",
        "30-31",
        "--speedscope",
        &p("t.json"),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ss: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("t.json")).unwrap()).unwrap();
    let profiles = ss["profiles"].as_array().unwrap();
    assert_eq!(profiles[0]["type"], "sampled");
    let ev = profiles
        .iter()
        .find(|p| p["type"] == "evented")
        .expect("an evented profile");
    let events = ev["events"].as_array().unwrap();
    assert!(events.len() > 10, "{} events", events.len());
    let ats: Vec<f64> = events.iter().map(|e| e["at"].as_f64().unwrap()).collect();
    assert!(ats.windows(2).all(|w| w[0] <= w[1]), "events in time order");
}

#[test]
fn reference_rules_are_recorded_and_warned() {
    let d = tmp("rules");
    let p = |n: &str| d.join(n).to_str().unwrap().to_string();
    let out = run(&[
        "profile",
        "--frames",
        "60",
        "--reference-rule",
        "z80-7f-waits",
        "--reference-rule",
        "busreq-at-insn-start",
        "--json",
        &p("r.json"),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(all.contains("reference timing rules in force"), "{all}");
    let j: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("r.json")).unwrap()).unwrap();
    assert_eq!(
        j["options"]["reference_rules"],
        serde_json::json!(["busreq-at-insn-start", "z80-7f-waits"])
    );
    // Without the option: no key, no warning.
    let out = run(&["profile", "--frames", "60", "--json", &p("plain.json")]);
    assert!(out.status.success());
    let j: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("plain.json")).unwrap()).unwrap();
    assert!(j["options"].get("reference_rules").is_none());
    assert!(!String::from_utf8_lossy(&out.stderr).contains("reference timing rules"));
    // An unknown rule is a usage error naming the choices.
    let out = run(&["profile", "--frames", "1", "--reference-rule", "fast"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("busreq-at-insn-start"));
}

#[test]
fn ci_gates_exit_3_and_name_frames() {
    // Phase B of the demo ROM drops frames from about frame 430 on.
    let out = run(&[
        "profile",
        "--frames",
        "480",
        "--fail-over-load",
        "90",
        "--fail-dropped-over",
        "0",
    ]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("over 90% load:"), "{err}");
    assert!(err.contains("dropped frame(s), more than 0:"), "{err}");
    // A light run passes.
    let ok = run(&[
        "profile",
        "--frames",
        "200",
        "--from",
        "30",
        "--fail-over-load",
        "90",
        "--fail-dropped-over",
        "0",
    ]);
    assert_eq!(
        ok.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
}

#[test]
fn bad_input_is_a_usage_error() {
    let out = run(&["profile", "--frames", "10", "--watch", "no_such_symbol"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no_such_symbol"));
    let out = run(&["profile", "/nonexistent/rom.bin"]);
    assert_eq!(out.status.code(), Some(2));
    let out = run(&["profile", "--frames", "10", "--input", "x-y:R"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn no_symbols_profiles_by_address_and_mismatch_warns() {
    let d = tmp("nosym");
    let rom = d.join("game.bin");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testroms/out/knowncosts/rom.bin"),
        &rom,
    )
    .unwrap();
    let out = run(&["profile", "--frames", "60", rom.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("no symbols"), "{s}");
    assert!(s.contains("rom_0x"), "{s}");
    // Symbols of another ROM: a warning.
    let other = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testroms/out/heap/symbol.txt");
    let out = run(&[
        "profile",
        "--frames",
        "30",
        "--symbols",
        other.to_str().unwrap(),
        rom.to_str().unwrap(),
    ]);
    let s = String::from_utf8_lossy(&out.stdout);
    // The heap ROM shares the runtime (same vectors, same entry point):
    // only the call-target check tells the builds apart.
    assert!(s.contains("warning:") && s.contains("jsr` targets"), "{s}");
    // Mean and max load describe the same frames (p50/p95/p99 between).
    let load = s
        .lines()
        .find(|l| l.contains("load:"))
        .unwrap_or_else(|| panic!("no load line: {s}"));
    let pcts: Vec<f64> = load
        .split_whitespace()
        .filter_map(|w| w.strip_suffix('%'))
        .filter_map(|w| w.parse().ok())
        .collect();
    assert!(pcts.len() >= 2 && pcts[0] <= pcts[pcts.len() - 1], "{load}");
}

#[test]
fn several_roms_run_in_parallel_in_order() {
    let d = tmp("multi");
    let a = d.join("a.bin");
    let b = d.join("b.bin");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testroms/out/knowncosts/rom.bin");
    std::fs::copy(&src, &a).unwrap();
    std::fs::copy(&src, &b).unwrap();
    let out = run(&[
        "profile",
        "--frames",
        "60",
        "--jobs",
        "2",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = String::from_utf8_lossy(&out.stdout);
    let ia = s.find("a.bin").unwrap();
    let ib = s.find("b.bin").unwrap();
    assert!(ia < ib);
}

/// The KDebug test ROM end to end: `--kdebug-log` holds every marker
/// (written through the output layer),
/// `--stop-on-halt` ends the run at the halt's frame with exit code 0, and
/// the log may not overwrite the ROM.
#[test]
fn kdebug_log_and_stop_on_halt() {
    let rom = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testroms/out/kdebug/rom.bin"
    );
    let d = tmp("kdebug");
    let log = d.join("kdebug.tsv");
    let csv = d.join("frames.csv");
    let out = run(&[
        "profile",
        rom,
        "--frames",
        "40",
        "--kdebug-log",
        log.to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains("KDebug markers"), "{stdout}");
    assert!(stdout.contains("timer: 8 spans"), "{stdout}");
    // The log: a header, then every marker in time order (crates/mdprof's
    // kdebug test holds the whole file as a golden file).
    let text = std::fs::read_to_string(&log).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("frame\tline\ttime_s\tmclk\tkind\ttext"));
    let kinds: Vec<&str> = lines.map(|l| l.split('\t').nth(4).unwrap()).collect();
    let n = |k: &str| kinds.iter().filter(|x| **x == k).count();
    assert_eq!(
        (n("message"), n("timer"), n("halt"), n("malformed")),
        (12, 8, 1, 3)
    );
    assert!(text.contains("\tmessage\tKDEBUG TEST ROM\n"), "{text}");
    let head = std::fs::read_to_string(&csv).unwrap();
    assert!(head
        .lines()
        .next()
        .unwrap()
        .ends_with(",top_function,top_cycles,loading,kdebug_timer_spans,kdebug_timer_cycles"));

    let out = run(&[
        "profile",
        rom,
        "--frames",
        "40",
        "--stop-on-halt",
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.contains("run ended at the game's KDebug halt (--stop-on-halt)"),
        "{stdout}"
    );
    let rows = std::fs::read_to_string(&csv).unwrap().lines().count() - 1;
    assert!(rows < 40, "{rows} frames");

    let out = run(&["profile", rom, "--frames", "5", "--kdebug-log", rom]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
