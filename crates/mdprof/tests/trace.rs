//! The Perfetto / Chrome trace of a run of the known-costs ROM: valid JSON
//! with the fields the trace-event format requires, one slice per frame,
//! dropped frames marked, counters, and properly nested function slices
//! for --trace-frames whose durations match the ROM's known costs; on every
//! track, slices never overlap except by proper nesting (computed in
//! doubles, as viewers do). The same run's speedscope file: its evented
//! profile is the call timeline of the window, in the schema's shape.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use retroprof_mdprof::trace::{self, FunctionTracer};
use retroprof_mdprof::{load_symbols, ProfileOptions, Session};
use retroprof_megadrive::Rom;

fn rom_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testroms/out/knowncosts/rom.bin")
}

#[test]
fn trace_is_valid_and_nested() {
    let path = rom_path();
    let rom = Rom::load(&path).expect("testroms/out/knowncosts/rom.bin");
    let syms = load_symbols(&path, None).unwrap();
    let frames = 480;
    let session = Session::new(
        rom,
        "knowncosts".into(),
        syms,
        ProfileOptions {
            frames,
            ..ProfileOptions::default()
        },
    )
    .unwrap();
    let (a, b) = trace::parse_frames("440-442").unwrap();
    let mut tracer = FunctionTracer::new(a, b, &session.rom.data);
    let report = session.run_with(&mut tracer, &mut |_, _| {});
    let ft = tracer.finish(&session.index);
    assert!(!ft.slices.is_empty());
    assert_eq!(ft.dropped, 0);
    let bytes = trace::write(&report, Some(&ft), Vec::new()).unwrap();
    // Deterministic.
    assert_eq!(bytes, trace::write(&report, Some(&ft), Vec::new()).unwrap());

    let v: serde_json::Value = serde_json::from_slice(&bytes).expect("valid JSON");
    let events = v["traceEvents"].as_array().expect("traceEvents array");
    check_tracks(events);
    // One name for the wait instants, the line as an argument.
    let waits: Vec<&serde_json::Value> = events.iter().filter(|e| e["ph"] == "i").collect();
    assert!(!waits.is_empty());
    for w in &waits {
        assert_eq!(w["name"], "wait entered", "{w}");
        assert!(w["args"]["line"].is_u64(), "{w}");
    }
    check_speedscope(&report, &ft);
    let mut frame_slices = 0;
    let mut dropped = 0;
    let mut counters = 0;
    let mut funcs: Vec<(f64, f64, String, u64)> = Vec::new();
    for e in events {
        let ph = e["ph"].as_str().expect("ph");
        assert!(e["name"].is_string(), "{e}");
        assert!(e["pid"].is_u64() && e["tid"].is_u64(), "{e}");
        if ph != "M" {
            assert!(e["ts"].as_f64().unwrap() >= 0.0, "{e}");
        }
        match ph {
            "X" => {
                assert!(e["dur"].as_f64().unwrap() >= 0.0, "{e}");
                if e["tid"] == 1 {
                    frame_slices += 1;
                    if e["args"]["dropped"] == true {
                        dropped += 1;
                        assert!(e["name"].as_str().unwrap().contains("DROPPED"));
                    }
                }
                if e["tid"] == 10 {
                    funcs.push((
                        e["ts"].as_f64().unwrap(),
                        e["ts"].as_f64().unwrap() + e["dur"].as_f64().unwrap(),
                        e["name"].as_str().unwrap().to_string(),
                        e["args"]["depth"].as_u64().unwrap(),
                    ));
                }
            }
            "C" => counters += 1,
            "i" | "M" => {}
            other => panic!("unexpected phase {other}"),
        }
    }
    assert_eq!(frame_slices, frames);
    // Every frame record marked dropped (frames before the first game
    // loop included; the summary counts only frames after it).
    assert_eq!(dropped, report.frames.iter().filter(|f| f.dropped).count());
    assert!(dropped >= report.summary.dropped.len());
    assert!(dropped > 0, "phase B drops frames by frame 480");
    assert_eq!(counters, 2 * frames);

    // Function slices: inside the window, and nested (each slice lies
    // within the enclosing slice one level up).
    let us_per_frame = report.timing.mclk_per_frame as f64 * 1e6 / 53_693_175.0;
    let w0 = a as f64 * us_per_frame;
    let w1 = (b + 1) as f64 * us_per_frame;
    let mut open: Vec<(f64, f64)> = Vec::new();
    for (s, e, name, depth) in &funcs {
        // Times are rounded to the 125 ns grid: within half a cell.
        assert!(
            *s >= w0 - 0.0625 && *e <= w1 + 0.0625,
            "{name} {s}..{e} outside {w0}..{w1}"
        );
        open.truncate(*depth as usize);
        if let Some(&(ps, pe)) = open.last() {
            assert!(
                *s >= ps && *e <= pe,
                "{name} {s}..{e} not inside {ps}..{pe}"
            );
        }
        if open.len() == *depth as usize {
            open.push((*s, *e));
        }
    }
    // burn(): 5,113 cycles per call in this emulator (testroms/README.md),
    // one call per game loop.
    let burns: Vec<f64> = funcs
        .iter()
        .filter(|f| f.2 == "burn")
        .map(|f| (f.1 - f.0) * 53.693175 / 7.0)
        .collect();
    assert!(!burns.is_empty());
    for c in &burns {
        assert!((c - 5113.3).abs() < 5113.3 * 0.002, "burn took {c} cycles");
    }
    assert!(funcs.iter().any(|f| f.2 == "VDP_waitVBlank"));
    assert!(funcs.iter().any(|f| f.2 == "__divsi3"));
}

/// Per track (pid, tid), complete events never overlap except by proper
/// nesting: sorted by start (longer first), each slice either starts at or
/// after the end of the enclosing open slice or ends inside it. Ends are
/// `ts + dur` in doubles, as speedscope computes them, and every time is
/// exact on the 125 ns grid (Perfetto's `ts * 1000` truncation gives the
/// same nanoseconds). Frames and busy/idle slices tile time exactly.
fn check_tracks(events: &[serde_json::Value]) {
    // (pid, tid) -> slices (start, end, name).
    type Slices = Vec<(f64, f64, String)>;
    let mut tracks: BTreeMap<(u64, u64), Slices> = BTreeMap::new();
    for e in events {
        if e["ph"] != "M" {
            let ts = e["ts"].as_f64().unwrap();
            assert_eq!((ts * 8.0).fract(), 0.0, "ts off the 125 ns grid: {e}");
            let ns = (ts * 1000.0) as u64;
            assert_eq!(ns % 125, 0, "Perfetto would read {ns} ns: {e}");
        }
        if e["ph"] != "X" {
            continue;
        }
        let (ts, dur) = (e["ts"].as_f64().unwrap(), e["dur"].as_f64().unwrap());
        assert_eq!((dur * 8.0).fract(), 0.0, "dur off the grid: {e}");
        tracks
            .entry((e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap()))
            .or_default()
            .push((ts, ts + dur, e["name"].as_str().unwrap().to_string()));
    }
    assert!(
        tracks.len() >= 3,
        "frames, busy/idle, functions: {tracks:?}"
    );
    for ((_, tid), slices) in &mut tracks {
        slices.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.total_cmp(&a.1)));
        let mut open: Vec<&(f64, f64, String)> = Vec::new();
        let mut nested = 0;
        for s in slices.iter() {
            while open.last().is_some_and(|p| p.1 <= s.0) {
                open.pop();
            }
            if let Some(p) = open.last() {
                assert!(
                    s.1 <= p.1,
                    "track {tid}: {} {}..{} overlaps {} {}..{} without nesting",
                    s.2,
                    s.0,
                    s.1,
                    p.2,
                    p.0,
                    p.1
                );
                nested += 1;
            }
            open.push(s);
        }
        if *tid == 1 || *tid == 2 {
            // Frames / busy-idle: laid end to end, no nesting, no gaps.
            assert_eq!(nested, 0, "track {tid} nests");
            for w in slices.windows(2) {
                assert_eq!(
                    w[0].1, w[1].0,
                    "track {tid}: {} ends off {}",
                    w[0].2, w[1].2
                );
            }
        }
        if *tid == 10 {
            assert!(nested > 0, "function slices nest");
        }
    }
}

/// The speedscope file of the same run: the sampled profile of the whole
/// run first, then the window's evented profile: O/C events at monotone
/// `at` within startValue..endValue, each close matching the innermost
/// open frame, one open and close per non-empty function slice, `burn`
/// lasting its known cost.
fn check_speedscope(report: &retroprof_mdprof::Report, ft: &trace::FunctionTrace) {
    let bytes = {
        let mut v = Vec::new();
        trace::write_speedscope(report, Some(ft), &mut v).unwrap();
        v
    };
    let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(
        v["$schema"],
        "https://www.speedscope.app/file-format-schema.json"
    );
    let frames = v["shared"]["frames"].as_array().unwrap();
    let profiles = v["profiles"].as_array().unwrap();
    assert_eq!(profiles.len(), 2);
    assert_eq!(profiles[0]["type"], "sampled");
    assert_eq!(v["activeProfileIndex"], 0);
    let ev = &profiles[1];
    assert_eq!(ev["type"], "evented");
    assert_eq!(ev["unit"], "nanoseconds");
    for key in ["name", "startValue", "endValue", "events"] {
        assert!(ev.get(key).is_some(), "evented profile lacks {key}");
    }
    let (start, end) = (
        ev["startValue"].as_u64().unwrap(),
        ev["endValue"].as_u64().unwrap(),
    );
    let hz = 53_693_175u128;
    let ns = |m: u64| ((m as u128 * 1_000_000_000 + hz / 2) / hz) as u64;
    assert_eq!(start, ns(ft.start_mclk.unwrap()));
    assert_eq!(end, ns(ft.end_mclk.unwrap()));
    let mut last = start;
    let mut stack: Vec<(u64, u64)> = Vec::new();
    let mut opens = 0;
    let mut burns = Vec::new();
    for e in ev["events"].as_array().unwrap() {
        let f = e["frame"].as_u64().unwrap();
        assert!((f as usize) < frames.len(), "{e}");
        let at = e["at"].as_u64().unwrap();
        assert!(at >= last && at <= end, "{e} after {last} / past {end}");
        last = at;
        match e["type"].as_str().unwrap() {
            "O" => {
                opens += 1;
                stack.push((f, at));
            }
            "C" => {
                let (open, t0) = stack.pop().expect("close with nothing open");
                assert_eq!(open, f, "{e} closes the wrong frame");
                if frames[f as usize]["name"] == "burn" {
                    burns.push(at - t0);
                }
            }
            t => panic!("event type {t}"),
        }
    }
    assert!(stack.is_empty());
    let slices = ft
        .slices
        .iter()
        .filter(|s| s.end_mclk > s.start_mclk)
        .count();
    assert_eq!(opens, slices);
    // burn(): 5,113 cycles = 35,791 mclk = 666.6 us per call.
    assert!(!burns.is_empty());
    for b in burns {
        let cycles = b as f64 * 53.693175 / 7.0 / 1000.0;
        assert!((cycles - 5113.3).abs() < 5113.3 * 0.002, "burn {cycles}");
    }
    // Frames the sampled profile has (one per report function, first) are
    // shared by the timeline, not repeated after them.
    let sampled = report.functions.len();
    assert!(frames.len() >= sampled);
    for f in &frames[sampled..] {
        assert!(
            !frames[..sampled].iter().any(|g| g["name"] == f["name"]),
            "{f} repeats a sampled frame"
        );
    }
    // Without a window: only the sampled profile.
    let mut plain = Vec::new();
    trace::write_speedscope(report, None, &mut plain).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&plain).unwrap();
    assert_eq!(v["profiles"].as_array().unwrap().len(), 1);
}

#[test]
fn trace_without_functions_is_valid_json() {
    let report = retroprof_mdprof::Report::default();
    let bytes = trace::write(&report, None, Vec::new()).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    assert!(v["traceEvents"].is_array());
}
