//! The Perfetto / Chrome trace of a run of the known-costs ROM: valid JSON
//! with the fields the trace-event format requires, one slice per frame,
//! dropped frames marked, counters, and properly nested function slices
//! for --trace-frames whose durations match the ROM's known costs.

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
    let mut tracer = FunctionTracer::new(a, b);
    let report = session.run_with(&mut tracer, &mut |_, _| {});
    let ft = tracer.finish(&session.index);
    assert!(!ft.slices.is_empty());
    assert_eq!(ft.dropped, 0);
    let bytes = trace::write(&report, Some(&ft), Vec::new()).unwrap();
    // Deterministic.
    assert_eq!(bytes, trace::write(&report, Some(&ft), Vec::new()).unwrap());

    let v: serde_json::Value = serde_json::from_slice(&bytes).expect("valid JSON");
    let events = v["traceEvents"].as_array().expect("traceEvents array");
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
        assert!(
            *s >= w0 - 1e-3 && *e <= w1 + 1e-3,
            "{name} {s}..{e} outside {w0}..{w1}"
        );
        open.truncate(*depth as usize);
        if let Some(&(ps, pe)) = open.last() {
            assert!(
                *s >= ps - 1e-3 && *e <= pe + 1e-3,
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

#[test]
fn trace_without_functions_is_valid_json() {
    let report = retroprof_mdprof::Report::default();
    let bytes = trace::write(&report, None, Vec::new()).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    assert!(v["traceEvents"].is_array());
}
