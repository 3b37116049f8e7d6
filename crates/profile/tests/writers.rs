//! Golden-file and decode tests for the profile writers.
//!
//! `RETROPROF_BLESS=1 cargo test -p retroprof-profile` rewrites the golden
//! files in tests/golden/ (review the diff before committing).

use std::collections::BTreeMap;
use std::io::Read;

use retroprof_profile::write::{
    self, Event, EventKind, EventedProfile, FlameGraphOptions, FoldedOptions, PprofOptions,
    SpeedscopeOptions,
};
use retroprof_profile::{Frame, Sample, StackProfile, ValueType};

fn frame(name: &str, addr: u64, file: Option<&str>, line: Option<u32>, inlined: bool) -> Frame {
    Frame {
        name: name.to_string(),
        addr: Some(addr),
        file: file.map(str::to_string),
        line,
        module: None,
        inlined,
    }
}

/// A small profile: main -> game_loop -> {update_physics (inlined), VDP_waitVBlank,
/// draw -> DMA_queueDma}, plus an interrupt stack and awkward names.
fn sample_profile() -> StackProfile {
    let mut p = StackProfile {
        name: "test.bin".to_string(),
        value_types: vec![
            ValueType {
                kind: "cycles".into(),
                unit: "cycles".into(),
            },
            ValueType {
                kind: "samples".into(),
                unit: "count".into(),
            },
        ],
        default_value: 0,
        ..Default::default()
    };
    let main = p.frame_index(frame("main", 0x61e, Some("src/main.c"), Some(40), false));
    let game = p.frame_index(frame(
        "game_loop",
        0x700,
        Some("src/main.c"),
        Some(88),
        false,
    ));
    let phys = p.frame_index(frame(
        "update_physics",
        0x700,
        Some("src/physics.h"),
        Some(12),
        true,
    ));
    let wait = p.frame_index(frame("VDP_waitVBlank", 0xc758, None, None, false));
    let draw = p.frame_index(frame("draw", 0x900, Some("src/draw.c"), Some(5), false));
    let dma = p.frame_index(frame("DMA_queueDma", 0xa000, None, None, false));
    let vint = p.frame_index(frame("_VINT", 0x200, None, None, false));
    let odd = p.frame_index(frame(
        "odd;name\nwith <xml> & \"quotes\"",
        0x300,
        None,
        None,
        false,
    ));
    let s = |stack: Vec<u32>, c: i64, n: i64| Sample {
        stack,
        values: vec![c, n],
    };
    p.samples = vec![
        s(vec![main, game, phys], 5000, 5),
        s(vec![main, game, wait], 60000, 60),
        s(vec![main, game, draw, dma], 12000, 12),
        s(vec![main, game, draw], 3000, 3),
        s(vec![main, game, phys], 1000, 1), // merges with the first
        s(vec![main], 700, 2),
        s(vec![vint, odd], 250, 1),
        s(vec![vint], 0, 1), // zero cycles: left out of cycle outputs
    ];
    p
}

fn golden(name: &str, got: &[u8]) {
    let path = retroprof_testkit::golden_path(env!("CARGO_MANIFEST_DIR"), name);
    retroprof_testkit::check_golden(&path, got);
}

#[test]
fn folded_golden() {
    let p = sample_profile();
    let mut out = Vec::new();
    write::folded(&p, 0, &mut out).unwrap();
    let text = String::from_utf8(out.clone()).unwrap();
    // Merged, sorted, zero lines dropped, `;` and newline escaped.
    assert_eq!(
        text,
        "_VINT;odd:name with <xml> & \"quotes\" 250\n\
         main 700\n\
         main;game_loop;VDP_waitVBlank 60000\n\
         main;game_loop;draw 3000\n\
         main;game_loop;draw;DMA_queueDma 12000\n\
         main;game_loop;update_physics_[i] 6000\n"
    );
    golden("profile.folded", &out);

    let mut out = Vec::new();
    write::folded_with(
        &p,
        1,
        &FoldedOptions {
            with_location: true,
        },
        &mut out,
    )
    .unwrap();
    golden("profile-lines.folded", &out);
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains(
        "main (src/main.c:40);game_loop (src/main.c:88);update_physics (src/physics.h:12)_[i] 6\n"
    ));
    assert!(text.contains("_VINT 1\n"));
}

#[test]
fn writers_reject_bad_profiles() {
    let mut p = sample_profile();
    let mut sink = Vec::new();
    let e = write::folded(&p, 2, &mut sink).unwrap_err();
    assert!(e.to_string().contains("value index 2"), "{e}");
    p.samples[0].stack.push(99);
    for e in [
        write::folded(&p, 0, &mut sink).unwrap_err(),
        write::pprof(&p, &mut sink).unwrap_err(),
        write::speedscope(&p, &mut sink).unwrap_err(),
        write::flamegraph_svg(&p, 0, "t", &mut sink).unwrap_err(),
    ] {
        assert!(e.to_string().contains("frame 99"), "{e}");
    }
    let mut p = sample_profile();
    p.samples[2].values.pop();
    let e = write::pprof(&p, &mut sink).unwrap_err();
    assert!(e.to_string().contains("sample 2 has 1 value"), "{e}");
}

// ---- pprof ---------------------------------------------------------------

use retroprof_testkit::protobuf::{decode, get_u, msgs, packed, Val};

#[test]
fn pprof_decodes_to_the_same_stacks() {
    let p = sample_profile();
    let mut gz = Vec::new();
    write::pprof_with(
        &p,
        &PprofOptions {
            period: Some((
                ValueType {
                    kind: "cpu".into(),
                    unit: "cycles".into(),
                },
                1,
            )),
            duration_nanos: Some(16_666_667),
            comments: vec!["test profile".into()],
        },
        &mut gz,
    )
    .unwrap();
    assert_eq!(&gz[..2], &[0x1f, 0x8b], "gzip magic");
    let mut raw = Vec::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_end(&mut raw)
        .unwrap();
    golden("profile.pb", &raw);

    let prof = decode(&raw);
    let strings: Vec<String> = prof[&6]
        .iter()
        .map(|v| match v {
            Val::Bytes(b) => String::from_utf8(b.clone()).unwrap(),
            v => panic!("{v:?}"),
        })
        .collect();
    assert_eq!(strings[0], "", "string_table[0] must be empty");
    let st = |i: u64| strings[i as usize].clone();

    let types: Vec<(String, String)> = msgs(&prof, 1)
        .iter()
        .map(|m| (st(get_u(m, 1)), st(get_u(m, 2))))
        .collect();
    assert_eq!(
        types,
        vec![
            ("cycles".to_string(), "cycles".to_string()),
            ("samples".to_string(), "count".to_string())
        ]
    );
    assert_eq!(st(get_u(&prof, 14)), "cycles", "default_sample_type");
    assert_eq!(get_u(&prof, 10), 16_666_667);
    assert_eq!(get_u(&prof, 12), 1);
    assert_eq!(st(packed(&prof, 13)[0]), "test profile");

    let functions: BTreeMap<u64, (String, String)> = msgs(&prof, 5)
        .iter()
        .map(|m| (get_u(m, 1), (st(get_u(m, 2)), st(get_u(m, 4)))))
        .collect();
    assert_eq!(functions.len(), 8);
    assert_eq!(
        functions
            .values()
            .find(|f| f.0 == "update_physics")
            .unwrap()
            .1,
        "src/physics.h"
    );
    // location id -> (address, lines innermost first as (function name, line)).
    let mut locations: BTreeMap<u64, (u64, Vec<(String, i64)>)> = BTreeMap::new();
    for m in msgs(&prof, 4) {
        assert_eq!(get_u(&m, 2), 1, "mapping id");
        let lines = msgs(&m, 4)
            .iter()
            .map(|l| (functions[&get_u(l, 1)].0.clone(), get_u(l, 2) as i64))
            .collect();
        locations.insert(get_u(&m, 1), (get_u(&m, 3), lines));
    }
    // The inlined frame shares the location of its caller, innermost first.
    let inl = locations
        .values()
        .find(|(_, lines)| lines.len() == 2)
        .expect("a location with an inline chain");
    assert_eq!(
        inl,
        &(
            0x700,
            vec![
                ("update_physics".to_string(), 12),
                ("game_loop".to_string(), 88)
            ]
        )
    );
    assert_eq!(
        locations.values().filter(|(_, l)| l.len() == 2).count(),
        1,
        "only one inline chain"
    );

    // Rebuild the stacks (root first, inline chains expanded) and compare
    // with the input samples.
    let samples = msgs(&prof, 2);
    assert_eq!(samples.len(), p.samples.len());
    for (s, want) in samples.iter().zip(&p.samples) {
        let mut names = Vec::new();
        for id in packed(s, 1) {
            // leaf first: within a location, lines are innermost first too.
            for (name, _) in &locations[&id].1 {
                names.push(name.clone());
            }
        }
        names.reverse();
        let want_names: Vec<String> = want
            .stack
            .iter()
            .map(|&f| p.frames[f as usize].name.clone())
            .collect();
        assert_eq!(names, want_names);
        let vals: Vec<i64> = packed(s, 2).into_iter().map(|v| v as i64).collect();
        assert_eq!(vals, want.values);
    }
    let mappings = msgs(&prof, 3);
    assert_eq!(mappings.len(), 1);
    assert_eq!(get_u(&mappings[0], 7), 1, "has_functions");
    assert_eq!(get_u(&mappings[0], 10), 1, "has_inline_frames");

    // Deterministic bytes.
    let mut gz2 = Vec::new();
    write::pprof_with(
        &p,
        &PprofOptions {
            period: Some((
                ValueType {
                    kind: "cpu".into(),
                    unit: "cycles".into(),
                },
                1,
            )),
            duration_nanos: Some(16_666_667),
            comments: vec!["test profile".into()],
        },
        &mut gz2,
    )
    .unwrap();
    assert_eq!(gz, gz2);
}

#[test]
fn pprof_negative_values_round_trip() {
    let mut p = sample_profile();
    p.samples[0].values[0] = -5;
    let mut gz = Vec::new();
    write::pprof(&p, &mut gz).unwrap();
    let mut raw = Vec::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_end(&mut raw)
        .unwrap();
    let prof = decode(&raw);
    let s = &msgs(&prof, 2)[0];
    assert_eq!(packed(s, 2)[0] as i64, -5);
}

/// The plain writer (what `profile --pprof` calls): `period_type` is the
/// default value type with period 1, and every location's `line` entries
/// carry the frame's function (with its file) and line.
#[test]
fn pprof_default_period_type_and_line_entries() {
    let p = sample_profile();
    let mut gz = Vec::new();
    write::pprof(&p, &mut gz).unwrap();
    let mut raw = Vec::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_end(&mut raw)
        .unwrap();
    let prof = decode(&raw);
    let strings: Vec<String> = prof[&6]
        .iter()
        .map(|v| match v {
            Val::Bytes(b) => String::from_utf8(b.clone()).unwrap(),
            v => panic!("{v:?}"),
        })
        .collect();
    let st = |i: u64| strings[i as usize].clone();
    // sample_type (1): both value types; period_type (11): cycles/cycles.
    let types: Vec<(String, String)> = msgs(&prof, 1)
        .iter()
        .map(|m| (st(get_u(m, 1)), st(get_u(m, 2))))
        .collect();
    assert_eq!(types[0], ("cycles".to_string(), "cycles".to_string()));
    let pt = msgs(&prof, 11);
    assert_eq!(pt.len(), 1, "one period_type");
    assert_eq!(
        (st(get_u(&pt[0], 1)), st(get_u(&pt[0], 2))),
        ("cycles".to_string(), "cycles".to_string())
    );
    assert_eq!(get_u(&prof, 12), 1, "period");
    assert_eq!(get_u(&prof, 10), 0, "no duration unless given");

    // Function id -> (name, system_name, filename).
    let functions: BTreeMap<u64, (String, String, String)> = msgs(&prof, 5)
        .iter()
        .map(|m| {
            (
                get_u(m, 1),
                (st(get_u(m, 2)), st(get_u(m, 3)), st(get_u(m, 4))),
            )
        })
        .collect();
    // Every frame of the profile is at some location as (name, file, line).
    let mut seen: Vec<(String, String, i64, u64)> = Vec::new();
    for m in msgs(&prof, 4) {
        let addr = get_u(&m, 3);
        let lines = msgs(&m, 4);
        assert!(!lines.is_empty(), "location {} has no line", get_u(&m, 1));
        for l in &lines {
            let (name, sys, file) = &functions[&get_u(l, 1)];
            assert_eq!(name, sys);
            seen.push((name.clone(), file.clone(), get_u(l, 2) as i64, addr));
        }
    }
    for f in &p.frames {
        let want = (
            f.name.clone(),
            f.file.clone().unwrap_or_default(),
            f.line.unwrap_or(0) as i64,
        );
        assert!(
            seen.iter().any(|s| (s.0.clone(), s.1.clone(), s.2) == want),
            "{want:?} not among {seen:?}"
        );
    }
    // Concretely: main at 0x61e is src/main.c line 40.
    assert!(seen.contains(&("main".into(), "src/main.c".into(), 40, 0x61e)));
    let mappings = msgs(&prof, 3);
    assert_eq!(get_u(&mappings[0], 8), 1, "has_filenames");
    assert_eq!(get_u(&mappings[0], 9), 1, "has_line_numbers");
}

// ---- speedscope ----------------------------------------------------------

#[test]
fn speedscope_has_schema_required_fields() {
    let p = sample_profile();
    let mut out = Vec::new();
    write::speedscope(&p, &mut out).unwrap();
    golden("profile.speedscope.json", &out);
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    // Required by file-format-schema.json: FileFormat.File requires
    // $schema, shared (with frames), profiles.
    assert_eq!(
        v["$schema"],
        "https://www.speedscope.app/file-format-schema.json"
    );
    let frames = v["shared"]["frames"].as_array().unwrap();
    assert_eq!(frames.len(), p.frames.len());
    for (f, want) in frames.iter().zip(&p.frames) {
        // Frame requires name; file/line optional.
        assert_eq!(f["name"], want.name.as_str());
        assert_eq!(
            f.get("line").and_then(|l| l.as_u64()),
            want.line.map(u64::from)
        );
        assert_eq!(f.get("file").and_then(|l| l.as_str()), want.file.as_deref());
    }
    let profiles = v["profiles"].as_array().unwrap();
    assert_eq!(profiles.len(), 2);
    for (i, prof) in profiles.iter().enumerate() {
        // SampledProfile requires type, name, unit, startValue, endValue,
        // samples, weights.
        for key in [
            "type",
            "name",
            "unit",
            "startValue",
            "endValue",
            "samples",
            "weights",
        ] {
            assert!(prof.get(key).is_some(), "profile {i} lacks {key}");
        }
        assert_eq!(prof["type"], "sampled");
        let unit = prof["unit"].as_str().unwrap();
        assert!(
            [
                "none",
                "nanoseconds",
                "microseconds",
                "milliseconds",
                "seconds",
                "bytes"
            ]
            .contains(&unit),
            "{unit}"
        );
        let samples = prof["samples"].as_array().unwrap();
        let weights = prof["weights"].as_array().unwrap();
        assert_eq!(samples.len(), weights.len());
        let total: i64 = weights.iter().map(|w| w.as_i64().unwrap()).sum();
        assert_eq!(prof["endValue"].as_i64().unwrap(), total);
        let want_total: i64 = p
            .samples
            .iter()
            .map(|s| s.values[i])
            .filter(|&v| v > 0)
            .sum();
        assert_eq!(total, want_total);
        for s in samples {
            for f in s.as_array().unwrap() {
                assert!((f.as_u64().unwrap() as usize) < frames.len());
            }
        }
    }
    // The zero-cycle sample is absent from the cycles profile only.
    assert_eq!(profiles[0]["samples"].as_array().unwrap().len(), 7);
    assert_eq!(profiles[1]["samples"].as_array().unwrap().len(), 8);
    // Root first: the first sample is main, game_loop, update_physics.
    assert_eq!(profiles[0]["samples"][0], serde_json::json!([0, 1, 2]));
    assert_eq!(v["activeProfileIndex"], 0);
}

// ---- flame graph ---------------------------------------------------------

#[derive(Debug)]
struct Rect {
    title: String,
    x: f64,
    y: f64,
    w: f64,
    text: String,
}

fn parse_svg(svg: &[u8]) -> Vec<Rect> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_reader(svg);
    let mut buf = Vec::new();
    let mut stack: Vec<String> = Vec::new();
    let mut rects = Vec::new();
    let mut cur: Option<Rect> = None;
    loop {
        let ev = reader.read_event_into(&mut buf).expect("well-formed XML");
        match ev {
            Event::Eof => break,
            Event::Start(e) => {
                let name = String::from_utf8(e.name().as_ref().to_vec()).unwrap();
                if name == "g"
                    && e.attributes()
                        .any(|a| a.unwrap().unescape_value().unwrap() == "f")
                {
                    cur = Some(Rect {
                        title: String::new(),
                        x: 0.0,
                        y: 0.0,
                        w: 0.0,
                        text: String::new(),
                    });
                }
                stack.push(name);
            }
            Event::Empty(e) if e.name().as_ref() == b"rect" => {
                if let Some(r) = cur.as_mut() {
                    for a in e.attributes() {
                        let a = a.unwrap();
                        let v = a.unescape_value().unwrap().to_string();
                        match a.key.as_ref() {
                            b"x" => r.x = v.parse().unwrap(),
                            b"y" => r.y = v.parse().unwrap(),
                            b"width" => r.w = v.parse().unwrap(),
                            _ => {}
                        }
                    }
                }
            }
            Event::Text(t) => {
                if let Some(r) = cur.as_mut() {
                    let s = t.unescape().unwrap().to_string();
                    match stack.last().map(String::as_str) {
                        Some("title") => r.title.push_str(&s),
                        Some("text") => r.text.push_str(&s),
                        _ => {}
                    }
                }
            }
            Event::End(e) => {
                let name = stack.pop().expect("balanced tags");
                assert_eq!(name.as_bytes(), e.name().as_ref());
                if name == "g" {
                    if let Some(r) = cur.take() {
                        rects.push(r);
                    }
                }
            }
            _ => {}
        }
        buf.clear();
    }
    assert!(stack.is_empty(), "unclosed tags: {stack:?}");
    rects
}

#[test]
fn flamegraph_svg_is_well_formed_and_widths_add_up() {
    let p = sample_profile();
    let mut out = Vec::new();
    write::flamegraph_svg(&p, 0, "Test <flame> graph", &mut out).unwrap();
    golden("profile.svg", &out);
    let rects = parse_svg(&out);
    let find = |prefix: &str| -> &Rect {
        rects
            .iter()
            .find(|r| r.title.starts_with(prefix))
            .unwrap_or_else(|| panic!("no frame {prefix}: {rects:?}"))
    };
    let all = find("all (");
    assert!(
        (all.w - 1180.0).abs() < 0.01,
        "root spans the width: {}",
        all.w
    );
    assert!(
        all.title.contains("81,950 cycles, 100.00%"),
        "{}",
        all.title
    );
    // Children of the root: _VINT then main (alphabetical), summing to root.
    let vint = find("_VINT (");
    let main = find("main (");
    assert!(vint.x < main.x);
    assert!((vint.w + main.w - all.w).abs() < 0.02);
    // main's width is proportional to its value.
    let want = 1180.0 * 81700.0 / 81950.0;
    assert!((main.w - want).abs() < 0.01, "{} vs {want}", main.w);
    // game_loop children are sorted alphabetically and sit inside it.
    let game = find("game_loop (");
    let wait = find("VDP_waitVBlank (");
    let draw = find("draw (");
    let phys = find("update_physics_[i] (");
    assert!(wait.x < draw.x && draw.x < phys.x);
    let sum = wait.w + draw.w + phys.w;
    assert!((sum - game.w).abs() < 0.03, "{sum} vs {}", game.w);
    assert!(wait.x >= game.x - 0.01 && phys.x + phys.w <= game.x + game.w + 0.01);
    // Children sit one row above their parent.
    assert!((main.y - all.y + 16.0).abs() < 0.01);
    // The zero-cycle sample adds nothing; escaped name shows in the title.
    assert!(rects.iter().any(|r| r
        .title
        .starts_with("odd:name with <xml> & \"quotes\" (250 cycles")));
    // Labels fit: text no wider than the rectangle.
    for r in &rects {
        let chars = r.text.chars().count() as f64;
        assert!(chars * 12.0 * 0.59 <= r.w + 0.01, "{r:?}");
        if !r.text.is_empty() && r.text.ends_with("..") {
            let name = r.title.rsplit_once(" (").unwrap().0;
            assert!(name.starts_with(r.text.trim_end_matches("..")));
        }
    }
}

#[test]
fn flamegraph_prunes_narrow_frames() {
    let mut p = sample_profile();
    // A tiny sample: 1 cycle of ~82k is 0.014 px wide.
    let tiny = p.frame_index(Frame {
        name: "tiny".into(),
        ..Default::default()
    });
    p.samples.push(Sample {
        stack: vec![tiny],
        values: vec![1, 1],
    });
    let mut out = Vec::new();
    write::flamegraph_svg(&p, 0, "t", &mut out).unwrap();
    let rects = parse_svg(&out);
    assert!(!rects.iter().any(|r| r.title.starts_with("tiny")));
    let mut out = Vec::new();
    write::flamegraph_svg_with(
        &p,
        0,
        "t",
        &FlameGraphOptions {
            min_width: 0.0,
            interactive: false,
            ..Default::default()
        },
        &mut out,
    )
    .unwrap();
    let rects = parse_svg(&out);
    assert!(rects.iter().any(|r| r.title.starts_with("tiny")));
    assert!(!String::from_utf8(out).unwrap().contains("<script"));
}

/// A call timeline: main -> (game_loop -> draw), then an interrupt.
fn evented() -> EventedProfile {
    let f = |n: &str| Frame {
        name: n.to_string(),
        ..Default::default()
    };
    let ev = |kind, frame, at| Event { kind, frame, at };
    use EventKind::{Close as C, Open as O};
    EventedProfile {
        name: "frames 1-2".into(),
        unit: "nanoseconds".into(),
        start: 100,
        end: 1_000,
        frames: vec![f("main"), f("game_loop"), f("draw"), f("_VINT")],
        events: vec![
            ev(O, 0, 100),
            ev(O, 1, 150),
            ev(O, 2, 200),
            ev(C, 2, 300),
            ev(C, 1, 300),
            ev(O, 3, 300),
            ev(C, 3, 400),
            ev(C, 0, 1_000),
        ],
    }
}

/// Check a speedscope file's evented profiles as the schema and the viewer
/// need them: type/name/unit/startValue/endValue/events, O/C events with a
/// frame index into shared.frames and `at` within the range, in time
/// order, each close matching the innermost open frame, none left open.
fn check_evented(v: &serde_json::Value) -> usize {
    let nframes = v["shared"]["frames"].as_array().unwrap().len() as u64;
    let mut n = 0;
    for prof in v["profiles"].as_array().unwrap() {
        if prof["type"] != "evented" {
            continue;
        }
        n += 1;
        for key in ["name", "unit", "startValue", "endValue", "events"] {
            assert!(prof.get(key).is_some(), "evented profile lacks {key}");
        }
        let (start, end) = (
            prof["startValue"].as_f64().unwrap(),
            prof["endValue"].as_f64().unwrap(),
        );
        let mut last = start;
        let mut stack = Vec::new();
        for e in prof["events"].as_array().unwrap() {
            let frame = e["frame"].as_u64().unwrap();
            assert!(frame < nframes);
            let at = e["at"].as_f64().unwrap();
            assert!(at >= last && at <= end, "{e} out of order or range");
            last = at;
            match e["type"].as_str().unwrap() {
                "O" => stack.push(frame),
                "C" => assert_eq!(stack.pop(), Some(frame), "{e} closes the wrong frame"),
                t => panic!("event type {t}"),
            }
        }
        assert!(stack.is_empty(), "frames left open: {stack:?}");
    }
    n
}

#[test]
fn speedscope_evented_profile_follows_the_schema() {
    let p = sample_profile();
    let e = evented();
    let mut out = Vec::new();
    write::speedscope_with(
        &p,
        &SpeedscopeOptions {
            evented: vec![e.clone()],
        },
        &mut out,
    )
    .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let profiles = v["profiles"].as_array().unwrap();
    // The sampled profiles stay (and stay first: activeProfileIndex).
    assert_eq!(profiles.len(), 3);
    assert_eq!(profiles[0]["type"], "sampled");
    assert_eq!(profiles[1]["type"], "sampled");
    assert_eq!(v["activeProfileIndex"], 0);
    assert_eq!(check_evented(&v), 1);
    let ev = &profiles[2];
    assert_eq!(ev["unit"], "nanoseconds");
    assert_eq!(ev["startValue"], 100);
    assert_eq!(ev["endValue"], 1_000);
    // Frames equal to the stack profile's are shared, new ones appended:
    // "main" (with no file here) differs from the profile's main
    // (src/main.c:40), so all four are new.
    let frames = v["shared"]["frames"].as_array().unwrap();
    assert_eq!(frames.len(), p.frames.len() + 4);
    let events = ev["events"].as_array().unwrap();
    assert_eq!(events.len(), 8);
    assert_eq!(
        frames[events[2]["frame"].as_u64().unwrap() as usize]["name"],
        "draw"
    );
    // The same frame as the profile's is not duplicated.
    let mut shared = e.clone();
    shared.frames[0] = p.frames[0].clone();
    let mut out = Vec::new();
    write::speedscope_with(
        &p,
        &SpeedscopeOptions {
            evented: vec![shared],
        },
        &mut out,
    )
    .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(
        v["shared"]["frames"].as_array().unwrap().len(),
        p.frames.len() + 3
    );
    assert_eq!(v["profiles"][2]["events"][0]["frame"], 0);
    // Without evented profiles the bytes are those of `speedscope`.
    let (mut a, mut b) = (Vec::new(), Vec::new());
    write::speedscope(&p, &mut a).unwrap();
    write::speedscope_with(&p, &SpeedscopeOptions::default(), &mut b).unwrap();
    assert_eq!(a, b);
}

#[test]
fn speedscope_refuses_broken_timelines() {
    let p = sample_profile();
    let bad = |f: &dyn Fn(&mut EventedProfile)| {
        let mut e = evented();
        f(&mut e);
        let err =
            write::speedscope_with(&p, &SpeedscopeOptions { evented: vec![e] }, &mut Vec::new())
                .unwrap_err();
        err.to_string()
    };
    // Time going backwards.
    assert!(bad(&|e| e.events[3].at = 190).contains("out of order"));
    // A close that is not the innermost open frame.
    assert!(bad(&|e| e.events.swap(3, 4)).contains("innermost"));
    // Left open.
    assert!(bad(&|e| {
        e.events.pop();
    })
    .contains("still open"));
    // Past the end, unknown frame.
    assert!(bad(&|e| e.events[7].at = 1_001).contains("out of order"));
    assert!(bad(&|e| e.events[0].frame = 9).contains("frame 9"));
}

#[test]
fn empty_profile_gives_valid_outputs() {
    let p = StackProfile {
        name: "empty".into(),
        value_types: vec![ValueType {
            kind: "cycles".into(),
            unit: "cycles".into(),
        }],
        ..Default::default()
    };
    let mut out = Vec::new();
    write::folded(&p, 0, &mut out).unwrap();
    assert!(out.is_empty());
    let mut out = Vec::new();
    write::flamegraph_svg(&p, 0, "empty", &mut out).unwrap();
    assert!(parse_svg(&out).is_empty());
    let mut out = Vec::new();
    write::speedscope(&p, &mut out).unwrap();
    let _: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let mut out = Vec::new();
    write::pprof(&p, &mut out).unwrap();
}

#[test]
fn atomic_with_writer() {
    let dir = std::env::temp_dir().join(format!("retroprof-writers-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("p.folded");
    let p = sample_profile();
    write::atomic(&path, false, |w| write::folded(&p, 0, w)).unwrap();
    let mut direct = Vec::new();
    write::folded(&p, 0, &mut direct).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), direct);
    let e = write::atomic(&path, false, |w| write::folded(&p, 0, w)).unwrap_err();
    assert!(matches!(e, retroprof_profile::Error::Exists { .. }));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn outputs_are_deterministic() {
    // Hash maps used while building get a new random seed each time: the
    // bytes must not depend on it.
    let mut p = sample_profile();
    // More distinct stacks, so iteration orders would differ.
    for i in 0..200u32 {
        let f = p.frame_index(Frame {
            name: format!("f{}", i % 37),
            addr: Some(0x1000 + i as u64),
            ..Default::default()
        });
        p.samples.push(Sample {
            stack: vec![0, 1, f, (i % 5) + 2],
            values: vec![i as i64 + 1, 1],
        });
    }
    type W = fn(&StackProfile, &mut Vec<u8>);
    let writers: [W; 4] = [
        |p, o| write::folded(p, 0, o).unwrap(),
        |p, o| write::pprof(p, o).unwrap(),
        |p, o| write::speedscope(p, o).unwrap(),
        |p, o| write::flamegraph_svg(p, 0, "t", o).unwrap(),
    ];
    for w in writers {
        let mut first = Vec::new();
        w(&p, &mut first);
        for _ in 0..5 {
            let mut again = Vec::new();
            w(&p, &mut again);
            assert!(again == first);
        }
    }
}
