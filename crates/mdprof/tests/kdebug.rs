//! The game's own KDebug markers on our KDebug test ROM
//! (testroms/kdebug, testroms/README.md "The KDebug ROM"): timer spans
//! against burn()'s measured cost and the 68000 tables, the exact
//! messages, the deliberate garbage counted as malformed, the halt, and
//! `stop_on_halt`; golden files for the terminal section and the log.

use std::path::PathBuf;

use retroprof_mdprof::kdebug::{self, KDebugReport};
use retroprof_mdprof::{output, report::Report, trace, ProfileOptions, Session};
use retroprof_megadrive::timing::{REFRESH_INTERVAL_CYCLES, REFRESH_PENALTY_CYCLES};
use retroprof_megadrive::Rom;
use retroprof_symbols::Symbols;
use retroprof_testkit::{check_golden_text, golden_path};

fn dir() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testroms/out/kdebug"
    ))
}

fn run(stop_on_halt: bool) -> Report {
    let d = dir();
    let rom = Rom::load(&d.join("rom.bin"))
        .expect("testroms/out/kdebug/rom.bin (build with testroms/build.sh)");
    let syms = Symbols::load_nm(&d.join("symbol.txt")).expect("symbol.txt");
    let opts = ProfileOptions {
        frames: 40,
        stop_on_halt,
        ..ProfileOptions::default()
    };
    let s = Session::new(rom, "kdebug".into(), Some(syms), opts).expect("session");
    let r = s.run(&mut |_, _| {});
    assert!(r.stopped.is_none(), "emulation stopped: {:?}", r.stopped);
    r
}

fn k(r: &Report) -> &KDebugReport {
    r.kdebug
        .as_ref()
        .expect("the KDebug ROM writes KDebug registers")
}

const MESSAGES: [&str; 12] = [
    "KDEBUG TEST ROM",
    "1234ABCD",
    "A",
    "00000000",
    "00000001",
    "00000002",
    "00000003",
    "00000004",
    "00000005",
    "00000006",
    "00000007",
    "DONE",
];

/// Span by hand (testroms/README.md): KDebug_StartTimer's `move.w
/// #imm,(xxx).l` 20 + `rts` 16, `jsr burn` 20, burn 5,038, `jsr
/// KDebug_StopTimer` 20 (M68000 User's Manual, section 8).
const SPAN_BY_HAND: u64 = 20 + 16 + 20 + 5_038 + 20;
/// The timer calls' own cycles inside the span besides KDebug_StartTimer's
/// (the two `jsr (xxx).l` of `timed_burn`, 20 each), before refresh.
const JSRS: f64 = 40.0;

#[test]
fn timer_spans_messages_garbage_and_halt() {
    let r = run(false);
    let k = k(&r);
    // Spans: 8, each burn() between the timer calls.
    assert_eq!(k.timer.spans, 8);
    assert_eq!(k.spans.len(), 8);
    // With DRAM refresh (timing.rs `Refresh`: REFRESH_PENALTY_CYCLES at the
    // first instruction boundary at or after each REFRESH_INTERVAL_CYCLES):
    // the span is the by-hand count plus whole refresh penalties, at most
    // one per interval and at least one per interval + the longest
    // instruction in the span (20 cycles) + the penalty.
    for s in &k.spans {
        let extra = s.cycles - SPAN_BY_HAND;
        let pen = REFRESH_PENALTY_CYCLES as u64;
        assert_eq!(extra % pen, 0, "span {} cycles", s.cycles);
        let n = extra / pen;
        let most = s.cycles.div_ceil(REFRESH_INTERVAL_CYCLES);
        let least = s.cycles / (REFRESH_INTERVAL_CYCLES + 20 + pen);
        assert!(
            (least..=most).contains(&n),
            "span {} cycles: {n} refresh penalties, {least}..={most} expected",
            s.cycles
        );
        assert_eq!(s.start.frame, s.stop.frame);
    }
    // Against the profile of the same run: burn's and KDebug_StartTimer's
    // measured cycles per call plus the two jsr with their refresh share.
    let per_call = |name: &str| {
        r.function(name)
            .unwrap_or_else(|| panic!("{name} in the profile"))
            .cycles_per_call
    };
    let measured = per_call("burn") + per_call("KDebug_StartTimer") + JSRS;
    let mean = k.timer.mean_cycles;
    eprintln!(
        "spans {:?}, mean {mean:.2}; burn {:.2}/call, KDebug_StartTimer {:.2}/call, \
         expected {measured:.2}",
        k.spans.iter().map(|s| s.cycles).collect::<Vec<_>>(),
        per_call("burn"),
        per_call("KDebug_StartTimer")
    );
    // Whole cycles (the fraction of each span dropped, as BlastEm does)
    // against averages: within one cycle.
    assert!(
        (mean - measured).abs() <= 1.0,
        "mean span {mean}, profile {measured}"
    );
    assert_eq!(
        k.timer.total_cycles,
        k.spans.iter().map(|s| s.cycles).sum::<u64>()
    );
    // Per frame: the CSV columns add up to the spans.
    let per_frame: u64 = r.frames.iter().map(|f| f.kdebug_timer_spans).sum();
    assert_eq!(per_frame, 8);
    let cyc: u64 = r.frames.iter().map(|f| f.kdebug_timer_cycles).sum();
    assert_eq!(cyc, k.timer.total_cycles);
    let mut csv = Vec::new();
    output::frames_csv(&r, &mut csv).unwrap();
    let csv = String::from_utf8(csv).unwrap();
    let head: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = head
        .iter()
        .position(|h| *h == "kdebug_timer_spans")
        .unwrap();
    assert_eq!(head[col + 1], "kdebug_timer_cycles");
    let sum: u64 = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(col).unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(sum, 8);

    // Messages, exactly; garbage counted, not shown.
    let texts: Vec<&str> = k.alerts.iter().map(|a| a.text.as_str()).collect();
    assert_eq!(texts, MESSAGES);
    assert_eq!(k.alert_count, 12);
    assert_eq!(k.malformed.stop_without_start, 1);
    assert_eq!(k.malformed.non_printable, 1);
    assert_eq!(k.malformed.bad_timer_value, 1);
    assert_eq!(k.malformed.total(), 3);
    assert_eq!(k.malformed_marks.len(), 3);
    // The two command pairs' second words (0x9F00, 0x9D00) are no markers.
    assert_eq!(k.other_control_codes, 0);
    assert!(k.open_span.is_none());
    // Register writes 29-31: stop 1, "KDEBUG TEST ROM" 16, "1234ABCD" 9,
    // "BAD\x01STRING" 11, bad timer 1, long "A" 2, 8 x (start, stop, 9
    // digits) 88, halt 1, "DONE" 5.
    assert_eq!(k.writes, 134);
    // One halt, in the frame of loop 5's message, after it.
    assert_eq!(k.halts.len(), 1);
    let h = k.halts[0];
    let five = &k.alerts[8];
    assert_eq!(five.text, "00000005");
    assert_eq!(h.frame, five.at.frame);
    assert!(h.mclk > five.at.mclk);
    // Messages come in frame order, on lines of the frame.
    assert!(k.alerts.windows(2).all(|w| w[0].at.mclk < w[1].at.mclk));
    assert!(k.alerts.iter().all(|a| a.at.line < r.timing.lines));

    // JSON round trip of the section; the trace's KDebug track.
    let json = serde_json::to_string(&r).unwrap();
    let back: Report = serde_json::from_str(&json).unwrap();
    assert_eq!(back.kdebug, r.kdebug);
    let bytes = trace::write(&r, None, Vec::new()).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let events = v["traceEvents"].as_array().unwrap();
    let count = |cat: &str| events.iter().filter(|e| e["cat"] == cat).count();
    assert_eq!(count("kdebug"), 8, "timer slices");
    assert_eq!(count("kdebug,message"), 12);
    assert_eq!(count("kdebug,halt"), 1);
    assert_eq!(count("kdebug,malformed"), 3);
    let slice = events.iter().find(|e| e["cat"] == "kdebug").unwrap();
    assert_eq!(slice["ph"], "X");
    assert_eq!(slice["args"]["cycles"], k.spans[0].cycles);

    // Golden files: the terminal section and the log.
    let st = output::Style { on: false };
    check_golden_text(
        &golden_path(env!("CARGO_MANIFEST_DIR"), "kdebug_terminal.txt"),
        &kdebug::terminal(&r, &st),
    );
    let mut log = Vec::new();
    kdebug::log(&r, &mut log).unwrap();
    check_golden_text(
        &golden_path(env!("CARGO_MANIFEST_DIR"), "kdebug_log.tsv"),
        &String::from_utf8(log).unwrap(),
    );
}

#[test]
fn stop_on_halt_ends_the_run_with_the_halt_frame() {
    let full = run(false);
    let halt = k(&full).halts[0];
    let r = run(true);
    assert_eq!(r.frames.len() as u64, halt.frame + 1);
    assert!(r.options.stop_on_halt);
    let k = k(&r);
    assert_eq!(k.halts, vec![halt]);
    let texts: Vec<&str> = k.alerts.iter().map(|a| a.text.as_str()).collect();
    assert_eq!(texts, MESSAGES[..9]);
    assert!(r
        .warnings
        .iter()
        .any(|w| w.contains("KDebug halt") && w.contains("--stop-on-halt")));
    // The frames that ran are measured as in the full run (function
    // indices aside: the function list is sorted over the frames run).
    for (a, b) in r.frames.iter().zip(&full.frames) {
        assert_eq!(
            (
                a.frame,
                a.busy_cycles,
                a.idle_cycles,
                a.dropped,
                a.instructions
            ),
            (
                b.frame,
                b.busy_cycles,
                b.idle_cycles,
                b.dropped,
                b.instructions
            )
        );
        assert_eq!(
            (a.kdebug_timer_spans, a.kdebug_timer_cycles),
            (b.kdebug_timer_spans, b.kdebug_timer_cycles)
        );
    }
}

#[test]
fn roms_without_kdebug_writes_have_no_section() {
    let d = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testroms/out/knowncosts"
    ));
    let rom = Rom::load(&d.join("rom.bin")).expect("knowncosts ROM");
    let syms = Symbols::load_nm(&d.join("symbol.txt")).expect("symbol.txt");
    let opts = ProfileOptions {
        frames: 30,
        ..ProfileOptions::default()
    };
    let s = Session::new(rom, "knowncosts".into(), Some(syms), opts).expect("session");
    let r = s.run(&mut |_, _| {});
    assert!(r.kdebug.is_none());
    assert_eq!(kdebug::terminal(&r, &output::Style { on: false }), "");
    let json = serde_json::to_string(&r).unwrap();
    // (The field names; the worktree's path may hold the word.)
    assert!(!json.contains("\"kdebug"));
    let mut csv = Vec::new();
    output::frames_csv(&r, &mut csv).unwrap();
    assert!(!String::from_utf8(csv).unwrap().contains(",kdebug_timer"));
}
