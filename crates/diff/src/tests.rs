//! Unit tests on synthetic reports.

use retroprof_mdprof::report::*;

use crate::gates::{check, Gates};
use crate::load::parse_report;
use crate::model::{base_name, diff, match_functions, percentile, DiffOptions, Match};
use crate::DiffError;

fn func(name: &str, addr: u32, self_c: f64, calls: u64) -> FunctionStats {
    FunctionStats {
        name: name.into(),
        addr,
        origin: "symbol".into(),
        self_cycles: self_c,
        inclusive_cycles: self_c,
        calls,
        cycles_per_call: if calls > 0 {
            self_c / calls as f64
        } else {
            0.0
        },
        ..FunctionStats::default()
    }
}

/// A report with `loads` per frame (first loop in `first_loop`), the
/// functions given, one stack per function.
fn report(loads: &[f64], first_loop: u64, funcs: Vec<FunctionStats>) -> Report {
    let fc = 128_005.7;
    let frames: Vec<FrameRecord> = loads
        .iter()
        .enumerate()
        .map(|(i, &l)| FrameRecord {
            frame: i as u64,
            counted: true,
            busy_cycles: l * fc / 100.0,
            idle_cycles: fc - l * fc / 100.0,
            frame_cycles: fc,
            load_pct: l,
            dropped: (i as u64) < first_loop || l > 100.0,
            loop_starts: ((i as u64) >= first_loop && l <= 100.0) as u32,
            ..FrameRecord::default()
        })
        .collect();
    let after: Vec<&FrameRecord> = frames.iter().filter(|f| f.frame >= first_loop).collect();
    let mean = after.iter().map(|f| f.load_pct).sum::<f64>() / after.len().max(1) as f64;
    let max = after.iter().map(|f| f.load_pct).fold(0.0, f64::max);
    let dropped: Vec<u64> = after
        .iter()
        .filter(|f| f.dropped)
        .map(|f| f.frame)
        .collect();
    let total: f64 = frames.len() as f64 * fc;
    let stacks = (0..funcs.len())
        .map(|i| StackSample {
            stack: vec![i],
            mclk: (funcs[i].self_cycles * 7.0) as u64,
        })
        .collect();
    Report {
        schema: SCHEMA.into(),
        rom: RomInfo {
            path: "rom.bin".into(),
            bytes: 131072,
            title: "KNOWN COSTS".into(),
            region: "NTSC UsaNtsc".into(),
            checksum_ok: true,
        },
        symbols: SymbolsInfo {
            source: "elf".into(),
            path: "rom.elf".into(),
            ..SymbolsInfo::default()
        },
        options: RunOptions {
            frames: loads.len() as u64,
            entry: "handler".into(),
            top: 10,
            ..RunOptions::default()
        },
        timing: Timing {
            cycles_per_frame: fc,
            ..Timing::default()
        },
        summary: Summary {
            frames_run: loads.len() as u64,
            frames_counted: loads.len() as u64,
            total_cycles: total,
            busy_cycles: frames.iter().map(|f| f.busy_cycles).sum(),
            mean_load_pct: mean,
            max_load_pct: max,
            dropped_frames: dropped.len() as u64,
            dropped,
            first_loop_frame: Some(first_loop),
            ..Summary::default()
        },
        functions: funcs,
        frames,
        stacks,
        ..Report::default()
    }
}

fn opts() -> DiffOptions {
    DiffOptions {
        base_label: "base.json".into(),
        new_label: "new.json".into(),
        ..DiffOptions::default()
    }
}

#[test]
fn base_names_strip_clone_suffixes() {
    assert_eq!(base_name("VDP_waitVBlank.part.0"), "VDP_waitVBlank");
    assert_eq!(base_name("f.constprop.0.isra.0"), "f");
    assert_eq!(base_name("g.lto_priv.12"), "g");
    assert_eq!(base_name("h.cold"), "h");
    assert_eq!(base_name("k.isra"), "k");
    assert_eq!(base_name("inl (inlined in f.isra.0)"), "inl (inlined in f)");
    // Not clone suffixes: left alone.
    assert_eq!(base_name("a.partial"), "a.partial");
    assert_eq!(base_name("x.isra0"), "x.isra0");
    assert_eq!(base_name(".isra.0"), ".isra.0");
    assert_eq!(base_name("loop.1"), "loop.1");
}

#[test]
fn percentiles_are_nearest_rank() {
    let v: Vec<f64> = (1..=100).map(|i| i as f64).collect();
    assert_eq!(percentile(&v, 50.0), 50.0);
    assert_eq!(percentile(&v, 95.0), 95.0);
    assert_eq!(percentile(&v, 99.0), 99.0);
    assert_eq!(percentile(&v, 100.0), 100.0);
    assert_eq!(percentile(&[7.0], 99.0), 7.0);
    assert_eq!(percentile(&[1.0, 2.0, 3.0], 50.0), 2.0);
    assert_eq!(percentile(&[], 50.0), 0.0);
}

#[test]
fn functions_match_by_name_then_clone_base_name() {
    let b = vec![
        func("main", 0x200, 100.0, 1),
        func("update.isra.0", 0x300, 50.0, 10),
        func("gone", 0x400, 5.0, 1),
        func("dup", 0x500, 1.0, 1),
        func("dup", 0x600, 2.0, 1),
    ];
    let n = vec![
        func("main", 0x210, 110.0, 1),
        func("update.constprop.1", 0x310, 60.0, 10),
        func("fresh", 0x410, 7.0, 1),
        func("dup", 0x520, 1.5, 1),
        func("dup", 0x620, 2.5, 1),
    ];
    let pairs = match_functions(&b, &n);
    let find = |bi: Option<usize>, ni: Option<usize>| {
        pairs
            .iter()
            .find(|(x, y, _)| *x == bi && *y == ni)
            .map(|p| p.2)
    };
    assert_eq!(find(Some(0), Some(0)), Some(Match::Same));
    assert_eq!(find(Some(1), Some(1)), Some(Match::Clone));
    assert_eq!(find(Some(2), None), Some(Match::Removed));
    assert_eq!(find(None, Some(2)), Some(Match::New));
    // Same-named static functions pair in address order.
    assert_eq!(find(Some(3), Some(3)), Some(Match::Same));
    assert_eq!(find(Some(4), Some(4)), Some(Match::Same));
    assert_eq!(pairs.len(), 6);
}

#[test]
fn diff_of_a_report_with_itself_is_all_zero() {
    let r = report(
        &[100.0, 40.0, 50.0, 60.0],
        1,
        vec![
            func("main", 0x200, 1000.0, 4),
            func("burn", 0x300, 500.0, 4),
        ],
    );
    let d = diff(&r, &r, &opts()).unwrap();
    assert!(d.warnings.is_empty(), "{:?}", d.warnings);
    assert!(d.functions.iter().all(|f| f.self_cycles.delta == 0.0));
    assert!(d.frames.iter().all(|f| f.load_pct.delta == 0.0));
    assert!(d.top_frames.is_empty());
    assert_eq!(d.summary.mean_load_pct.delta, 0.0);
    let g = Gates {
        load_regression_pts: Some(0.0),
        function_regression_pct: Some(0.0),
        new_drops: true,
    };
    assert!(check(&d, &g).is_empty());
}

#[test]
fn deltas_sorting_percentiles_and_gates() {
    let b = report(
        &[100.0, 40.0, 50.0, 60.0, 70.0],
        1,
        vec![
            func("main", 0x200, 100_000.0, 4),
            func("burn", 0x300, 20_000.0, 4),
            func("VDP_waitVBlank", 0x400, 300_000.0, 4),
        ],
    );
    let mut n = report(
        &[100.0, 40.0, 55.0, 60.0, 101.0],
        1,
        vec![
            func("main", 0x200, 100_010.0, 4),
            func("burn", 0x300, 24_000.0, 4),
            func("VDP_waitVBlank", 0x400, 290_000.0, 4),
        ],
    );
    n.functions[2].idle = true;
    let d = diff(&b, &n, &opts()).unwrap();
    // Sorted by |self delta|: the idle wait (-10,000), burn (+4,000), main (+10).
    let names: Vec<&str> = d.functions.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["VDP_waitVBlank", "burn", "main"]);
    let burn = &d.functions[1];
    assert_eq!(burn.self_cycles.delta, 4000.0);
    assert_eq!(burn.self_cycles.change_pct, Some(20.0));
    assert_eq!(burn.cycles_per_call.delta, 1000.0);
    // Loads after the first loop: base 40 50 60 70, new 40 55 60 101.
    assert_eq!(d.summary.p50_load_pct.base, 50.0);
    assert_eq!(d.summary.p50_load_pct.new, 55.0);
    assert_eq!(d.summary.p99_load_pct.new, 101.0);
    assert_eq!(d.summary.dropped_frames.delta, 1.0);
    assert_eq!(d.summary.newly_dropped, vec![4]);
    assert_eq!(d.top_frames, vec![4, 2]);
    // Gates.
    let none = Gates::default();
    assert!(check(&d, &none).is_empty());
    let fails = check(
        &d,
        &Gates {
            load_regression_pts: Some(5.0),
            ..Gates::default()
        },
    );
    assert_eq!(fails.len(), 2, "{fails:?}"); // mean +9 and p99 +31
    assert!(fails[0].contains("mean load grew"), "{}", fails[0]);
    assert!(check(
        &d,
        &Gates {
            load_regression_pts: Some(40.0),
            ..Gates::default()
        }
    )
    .is_empty());
    // burn grew 20 %, by 4,000 cycles > 0.1 % of 640,028 cycles; main
    // grew 0.01 % (and under the floor); the idle wait never counts.
    let f = check(
        &d,
        &Gates {
            function_regression_pct: Some(10.0),
            ..Gates::default()
        },
    );
    assert_eq!(f.len(), 1);
    assert!(f[0].contains("burn (+20.00%"), "{}", f[0]);
    assert!(!f[0].contains("main"), "{}", f[0]);
    assert!(check(
        &d,
        &Gates {
            function_regression_pct: Some(25.0),
            ..Gates::default()
        }
    )
    .is_empty());
    let f = check(
        &d,
        &Gates {
            new_drops: true,
            ..Gates::default()
        },
    );
    assert_eq!(f.len(), 1);
    assert!(f[0].contains("1 dropped frame(s), base had 0"), "{}", f[0]);
    assert!(f[0].contains(": 4"), "{}", f[0]);
}

#[test]
fn function_floor_keeps_tiny_functions_from_tripping() {
    let b = report(&[50.0; 10], 0, vec![func("tiny", 0x200, 10.0, 1)]);
    let n = report(&[50.0; 10], 0, vec![func("tiny", 0x200, 100.0, 1)]);
    let d = diff(&b, &n, &opts()).unwrap();
    // +900 % but 90 cycles < 0.1 % of 1,280,057 cycles.
    let g = Gates {
        function_regression_pct: Some(1.0),
        ..Gates::default()
    };
    assert!(check(&d, &g).is_empty());
}

#[test]
fn warnings_name_what_differs() {
    let b = report(&[100.0, 50.0, 50.0], 1, vec![func("main", 0x200, 1.0, 1)]);
    let mut n = report(
        &[100.0, 100.0, 50.0, 50.0],
        2,
        vec![func("main", 0x200, 1.0, 1)],
    );
    n.options.input = vec!["60-600:R".into()];
    n.rom.title = "OTHER".into();
    n.rom.region = "PAL EuropePal".into();
    n.options.entry = "interrupted".into();
    let d = diff(&b, &n, &opts()).unwrap();
    let all = d.warnings.join("\n");
    for want in [
        "ROM titles differ",
        "regions differ",
        "--frames differ",
        "pad 1 inputs differ",
        "--entry differ",
        "first game loop starts in frame 1 in base and in frame 2 in new",
        "--align-first-loop",
    ] {
        assert!(all.contains(want), "missing {want:?} in:\n{all}");
    }
    // Aligned: new frame 2 compares with base frame 1.
    let d = diff(
        &b,
        &n,
        &DiffOptions {
            align_first_loop: true,
            ..opts()
        },
    )
    .unwrap();
    assert!(d.aligned_first_loop);
    assert_eq!(d.frame_offset, 1);
    assert_eq!(d.frames[0].frame, 1);
    assert_eq!(d.frames[0].base_frame, 0);
    let f2 = d.frames.iter().find(|f| f.frame == 2).unwrap();
    assert_eq!(f2.base_frame, 1);
    assert_eq!(f2.load_pct.delta, 0.0);
    assert!(!d.warnings.join("\n").contains("first game loop starts"));
}

#[test]
fn different_programs_are_an_error() {
    let b = report(&[50.0], 0, vec![func("main", 0x200, 1.0, 1)]);
    let n = report(&[50.0], 0, vec![func("start", 0x200, 1.0, 1)]);
    let e = diff(&b, &n, &opts()).unwrap_err();
    assert!(matches!(e, DiffError::Incompatible(_)));
    let s = e.to_string();
    assert!(s.contains("base.json") && s.contains("new.json"), "{s}");
    assert!(s.contains("no function name in common"), "{s}");
}

fn parse_err(text: &str) -> String {
    parse_report(std::path::Path::new("x/r.json"), text.as_bytes())
        .unwrap_err()
        .to_string()
}

#[test]
fn bad_input_is_named() {
    let good = serde_json::to_string(&report(&[50.0], 0, vec![func("m", 0, 1.0, 1)])).unwrap();
    assert!(parse_report(std::path::Path::new("r.json"), good.as_bytes()).is_ok());
    // A report written before the percentiles were added still reads.
    let mut old: serde_json::Value = serde_json::from_str(&good).unwrap();
    for k in ["p50_load_pct", "p95_load_pct", "p99_load_pct"] {
        assert!(old["summary"].as_object_mut().unwrap().remove(k).is_some());
    }
    assert!(parse_report(std::path::Path::new("old.json"), old.to_string().as_bytes()).is_ok());
    let e = parse_err(&good[..good.len() / 2]);
    assert!(e.starts_with("x/r.json: truncated JSON"), "{e}");
    assert!(e.contains("line 1 column"), "{e}");
    let pretty =
        serde_json::to_string_pretty(&report(&[50.0], 0, vec![func("m", 0, 1.0, 1)])).unwrap();
    for cut in (1..pretty.len()).step_by(7) {
        let e = parse_err(&pretty[..cut]);
        assert!(e.contains("truncated JSON"), "cut at {cut}: {e}");
    }
    let e = parse_err(&good.replace(SCHEMA, "retroprof-mdprof-report/2"));
    assert!(e.contains("\"retroprof-mdprof-report/2\""), "{e}");
    assert!(e.contains("different retroprof version"), "{e}");
    let e = parse_err("{\"format\": \"retroprof-heap\", \"version\": 1}");
    assert!(e.contains("`retroprof heap` report"), "{e}");
    let e = parse_err("{\"name\": \"x\", \"total_samples\": 5, \"functions\": []}");
    assert!(e.contains("`retroprof samples` report"), "{e}");
    let e = parse_err("{\"a\": 1}");
    assert!(e.contains("no \"schema\" field"), "{e}");
    let e = parse_err("SEGA MEGA DRIVE");
    assert!(e.contains("not a JSON report"), "{e}");
    let e = parse_err("{\"schema\": \"retroprof-diff/1\"}");
    assert!(e.contains("`retroprof diff --json` result"), "{e}");
    // Right schema, wrong content.
    let e = parse_err(&format!("{{\"schema\": \"{SCHEMA}\"}}"));
    assert!(e.contains("not a profile report: missing field"), "{e}");
    // Broken cross-references.
    let mut r = report(&[50.0], 0, vec![func("m", 0, 1.0, 1)]);
    r.stacks[0].stack = vec![5];
    let e = parse_err(&serde_json::to_string(&r).unwrap());
    assert!(e.contains("stacks[0] refers to function 5"), "{e}");
}

#[test]
fn outputs_fit_80_columns_and_are_deterministic() {
    let b = report(
        &[100.0, 40.0, 50.0],
        1,
        vec![
            func(
                "a_function_with_a_really_long_name_that_does_not_fit_anywhere",
                0x200,
                123_456_789.0,
                1_234_567,
            ),
            func("update.isra.0", 0x300, 5.0, 1),
            func("gone", 0x310, 5.0, 1),
        ],
    );
    let n = report(
        &[100.0, 45.0, 50.0],
        1,
        vec![
            func(
                "a_function_with_a_really_long_name_that_does_not_fit_anywhere",
                0x200,
                223_456_789.0,
                2_234_567,
            ),
            func("update.part.0", 0x300, 6.0, 1),
            func("fresh", 0x310, 5.0, 1),
        ],
    );
    let d = diff(&b, &n, &opts()).unwrap();
    let t = crate::output::terminal(&d, 10, false);
    for l in t.lines() {
        assert!(
            l.chars().count() <= 80,
            "{} columns: {l}",
            l.chars().count()
        );
    }
    assert!(t.contains("update.isra.0 -> update.part.0"), "{t}");
    assert!(t.contains("new functions (1)"), "{t}");
    assert!(t.contains("removed functions (1)"), "{t}");
    assert!(t.contains("load p99"), "{t}");
    // Colour only when asked.
    assert!(!t.contains('\x1b'));
    assert!(crate::output::terminal(&d, 10, true).contains("\x1b[31m"));
    let mut a = Vec::new();
    let mut b2 = Vec::new();
    crate::output::json(&d, &mut a).unwrap();
    crate::output::json(&d, &mut b2).unwrap();
    assert_eq!(a, b2);
    // The JSON reads back (figures to serde_json's float precision).
    let back: crate::Diff = serde_json::from_slice(&a).unwrap();
    assert_eq!(back.functions.len(), d.functions.len());
    assert_eq!(back.renamed, d.renamed);
    let mut csv = Vec::new();
    crate::output::functions_csv(&d, &mut csv).unwrap();
    let csv = String::from_utf8(csv).unwrap();
    assert_eq!(csv.lines().count(), 1 + d.functions.len());
    assert!(
        csv.contains("update.part.0,update.isra.0,clone,0,5.0,6.0,1.0,20.000"),
        "{csv}"
    );
    let mut fr = Vec::new();
    crate::output::frames_csv(&d, &mut fr).unwrap();
    let fr = String::from_utf8(fr).unwrap();
    assert!(
        fr.lines()
            .nth(2)
            .unwrap()
            .starts_with("1,1,40.00,45.00,5.00,"),
        "{fr}"
    );
    let mut h = Vec::new();
    crate::output::html(&d, &mut h).unwrap();
    let h = String::from_utf8(h).unwrap();
    assert!(h.contains("<svg") && h.contains("update.part.0"));
    assert!(!h.contains("http://") || !h.contains("src=\"http"));
}

/// Decode just enough protobuf to read the samples back.
mod pb {
    pub fn varint(b: &[u8], i: &mut usize) -> u64 {
        let mut v = 0u64;
        let mut s = 0;
        loop {
            let x = b[*i];
            *i += 1;
            v |= ((x & 0x7f) as u64) << s;
            if x < 0x80 {
                return v;
            }
            s += 7;
        }
    }
    /// (field, wire, value or bytes)
    pub fn fields(b: &[u8]) -> Vec<(u64, u64, u64, Vec<u8>)> {
        let mut i = 0;
        let mut out = Vec::new();
        while i < b.len() {
            let k = varint(b, &mut i);
            let (f, w) = (k >> 3, k & 7);
            match w {
                0 => out.push((f, w, varint(b, &mut i), Vec::new())),
                2 => {
                    let n = varint(b, &mut i) as usize;
                    out.push((f, w, 0, b[i..i + n].to_vec()));
                    i += n;
                }
                _ => panic!("wire type {w}"),
            }
        }
        out
    }
}

#[test]
fn pprof_is_new_plus_negated_labelled_base() {
    use std::io::Read;
    let b = report(
        &[50.0],
        0,
        vec![func("main", 0x200, 700.0, 1), func("old", 0x300, 70.0, 1)],
    );
    let n = report(&[50.0], 0, vec![func("main", 0x200, 1400.0, 1)]);
    let d = diff(&b, &n, &opts()).unwrap();
    let mut gz = Vec::new();
    crate::stacks::pprof(&b, &n, &d, &mut gz).unwrap();
    let mut raw = Vec::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_end(&mut raw)
        .unwrap();
    let top = pb::fields(&raw);
    let strings: Vec<String> = top
        .iter()
        .filter(|f| f.0 == 6)
        .map(|f| String::from_utf8(f.3.clone()).unwrap())
        .collect();
    let mut got = Vec::new();
    for s in top.iter().filter(|f| f.0 == 2) {
        let fs = pb::fields(&s.3);
        let vals = fs.iter().find(|f| f.0 == 2).unwrap();
        let mut i = 0;
        let v = pb::varint(&vals.3, &mut i) as i64;
        let label = fs.iter().find(|f| f.0 == 3).map(|l| {
            let lf = pb::fields(&l.3);
            (
                strings[lf[0].2 as usize].clone(),
                strings[lf[1].2 as usize].clone(),
            )
        });
        got.push((v, label));
    }
    let base = Some(("pprof::base".to_string(), "true".to_string()));
    assert_eq!(got, vec![(1400, None), (-700, base.clone()), (-70, base)]);
}

#[test]
fn differential_flame_graph_colours_growth_red() {
    let b = report(
        &[50.0],
        0,
        vec![func("main", 0x200, 700.0, 1), func("same", 0x300, 700.0, 1)],
    );
    let n = report(
        &[50.0],
        0,
        vec![
            func("main", 0x200, 1400.0, 1),
            func("same", 0x300, 700.0, 1),
        ],
    );
    let d = diff(&b, &n, &opts()).unwrap();
    let mut svg = Vec::new();
    crate::stacks::flamegraph(&b, &n, &d, &mut svg).unwrap();
    let svg = String::from_utf8(svg).unwrap();
    // main grew by the largest delta: full red; same unchanged: near white.
    let g = |name: &str| {
        let i = svg.find(&format!("<title>{name} (")).unwrap();
        svg[i..i + 300].to_string()
    };
    assert!(
        g("main").contains("fill=\"rgb(255,50,50)\""),
        "{}",
        g("main")
    );
    assert!(g("main").contains("base 700, self +700"), "{}", g("main"));
    assert!(
        g("same").contains("fill=\"rgb(250,250,250)\""),
        "{}",
        g("same")
    );
}
