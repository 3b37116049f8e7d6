//! Replays of logs whose leaks, peak, histogram, churn and anomalies are
//! known by construction, in both dialects, with and without frame
//! markers, plain and gzip.

use std::io::Write;

use retroprof_heap::{
    output, replay_log, synth, Analysis, AnomalyKind, Arch, At, DriveOptions, Grouping, HeapEvent,
    LogReader, Replay, ReplayOptions, Span, Symbolizer,
};
use retroprof_symbols::{Symbol, SymbolKind, SymbolTable};

fn run_text(text: &[u8], opts: ReplayOptions, sym: Symbolizer) -> Analysis {
    let mut reader =
        LogReader::from_reader(Box::new(std::io::Cursor::new(text.to_vec())), "test.log").unwrap();
    let mut replay = Replay::new(opts, sym);
    replay_log(&mut reader, &mut replay, DriveOptions::default()).unwrap();
    replay.finish()
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(data).unwrap();
    gz.finish().unwrap()
}

const F: u64 = 0x0040_0100;
const G: u64 = 0x0040_0200;
const H: u64 = 0x0040_0300;

/// Three frames; leaks: 20 + 50 bytes from G; peak 4,120 bytes in 3
/// blocks at event 5 (frame 2); one temporary (8 bytes from H).
fn known_events(frames: bool) -> Vec<HeapEvent> {
    let mut v = Vec::new();
    let mark = |v: &mut Vec<HeapEvent>, n| {
        if frames {
            v.push(HeapEvent::frame(n))
        }
    };
    mark(&mut v, 1);
    v.push(HeapEvent::alloc(100, 0x1000, F));
    v.push(HeapEvent::alloc(20, 0x1100, G));
    v.push(HeapEvent::alloc(8, 0x1200, H));
    v.push(HeapEvent::free(0x1200, 0x400400));
    mark(&mut v, 2);
    v.push(HeapEvent::alloc(4000, 0x2000, F));
    v.push(HeapEvent::free(0x1000, 0x400400));
    mark(&mut v, 3);
    v.push(HeapEvent::alloc(50, 0x1000, G));
    v.push(HeapEvent::free(0x2000, 0x400400));
    v
}

fn site_of(a: &Analysis, ra: u64) -> &retroprof_heap::SiteStats {
    let name = format!("0x{ra:08x}");
    &a.sites
        .iter()
        .find(|s| s.frames[0].name == name)
        .unwrap_or_else(|| panic!("no site {name}"))
        .stats
}

fn check_known(a: &Analysis, frames: bool, what: &str) {
    assert_eq!(a.anomalies.total(), 0, "{what}: {:?}", a.anomalies.listed);
    assert_eq!(a.events, 8, "{what}");
    assert_eq!((a.allocs, a.frees), (5, 3), "{what}");
    assert_eq!(a.bytes_allocated, 4178, "{what}");
    assert_eq!(a.bytes_freed, 4108, "{what}");
    assert_eq!((a.live_bytes, a.live_blocks), (70, 2), "{what}");
    assert_eq!(
        a.end.iter().map(|b| b.ptr).collect::<Vec<_>>(),
        [0x1000, 0x1100]
    );
    assert_eq!(
        (a.peak.bytes, a.peak.blocks, a.peak.event),
        (4120, 3, 5),
        "{what}"
    );
    assert_eq!(a.has_frames, frames, "{what}");
    if frames {
        assert_eq!(a.peak.frame, 2, "{what}");
        assert_eq!((a.first_frame, a.last_frame), (1, 3), "{what}");
    }
    let (f, g, h) = (site_of(a, F), site_of(a, G), site_of(a, H));
    assert_eq!((f.allocs, f.bytes, f.frees), (2, 4100, 2), "{what}");
    assert_eq!((f.at_peak_bytes, f.at_peak_blocks), (4100, 2), "{what}");
    assert_eq!((g.at_peak_bytes, g.at_peak_blocks), (20, 1), "{what}");
    assert_eq!((h.at_peak_bytes, h.at_peak_blocks), (0, 0), "{what}");
    assert_eq!(
        (f.peak_bytes, g.peak_bytes, h.peak_bytes),
        (4100, 70, 8),
        "{what}"
    );
    assert_eq!((g.leaked_bytes, g.leaked_blocks), (70, 2), "{what}");
    assert_eq!((f.leaked_bytes, h.leaked_bytes), (0, 0), "{what}");
    // Lifetimes: F's blocks lived 5 and 3 events (1 and 1 frames).
    assert_eq!(f.mean_lifetime_events(), Some(4.0), "{what}");
    if frames {
        assert_eq!(f.mean_lifetime_frames(), Some(1.0), "{what}");
        assert_eq!(a.temporary_span, Span::Frames(0));
    } else {
        assert_eq!(a.temporary_span, Span::Events(1));
    }
    assert_eq!((a.temporary, a.temporary_bytes), (1, 8), "{what}");
    assert_eq!((h.temporary, f.temporary, g.temporary), (1, 0, 0), "{what}");
    // Histogram: 8 | 20 | 50 | 100 | 4000, one each.
    let b: Vec<(u64, u64, u64)> = a
        .histogram
        .buckets
        .iter()
        .map(|b| (b.lo, b.hi, b.allocs))
        .collect();
    assert_eq!(
        b,
        [
            (8, 15, 1),
            (16, 31, 1),
            (32, 63, 1),
            (64, 127, 1),
            (2048, 4095, 1)
        ],
        "{what}"
    );
    assert_eq!(a.histogram.distinct_sizes, 5);
    // --header 2 --align 4: 2 bytes each, alignment 2+2+2+2+0.
    assert_eq!(a.histogram.header_bytes, 10, "{what}");
    assert_eq!(a.histogram.align_waste, 8, "{what}");
    // At the peak A1 (100 -> 104), A2 (20 -> 24), A4 (4000 -> 4004) live.
    assert_eq!((a.peak.header_bytes, a.peak.align_waste), (6, 6), "{what}");
}

fn known_opts() -> ReplayOptions {
    ReplayOptions {
        header: 2,
        align: 4,
        keep_timeline: true,
        ..ReplayOptions::default()
    }
}

#[test]
fn known_log_in_every_form() {
    for frames in [false, true] {
        let evs = known_events(frames);
        let forms = [
            ("daedalus", synth::daedalus_text(&evs)),
            ("generic", synth::generic_text(&evs, None)),
        ];
        for (name, text) in forms {
            for gz in [false, true] {
                let data = if gz { gzip(&text) } else { text.clone() };
                let a = run_text(&data, known_opts(), Symbolizer::default());
                check_known(&a, frames, &format!("{name} frames={frames} gzip={gz}"));
                // Daedalus lines come from the PSP: MIPS unless told.
                let want = if name == "daedalus" {
                    Arch::Mips
                } else {
                    Arch::Unknown
                };
                assert_eq!(a.arch, want);
            }
        }
    }
}

#[test]
fn frame_fields_act_as_markers() {
    // The generic format may carry frame=N on events instead of markers.
    let text = "\
alloc 100 0x1000 0x400100 frame=1
alloc 20 0x1100 0x400200 frame=1
alloc 8 0x1200 0x400300 frame=1
free 0x1200 0x400400 frame=1
alloc 4000 0x2000 0x400100 frame=2
free 0x1000 0x400400 frame=2
alloc 50 0x1000 0x400200 frame=3
free 0x2000 0x400400 frame=3
";
    let a = run_text(text.as_bytes(), known_opts(), Symbolizer::default());
    check_known(&a, true, "frame= fields");
}

#[test]
fn churn_per_frame_and_per_window() {
    let evs = known_events(true);
    let a = run_text(
        &synth::daedalus_text(&evs),
        known_opts(),
        Symbolizer::default(),
    );
    let rows: Vec<_> = a
        .timeline
        .iter()
        .map(|r| {
            (
                r.frame,
                r.allocs,
                r.frees,
                r.bytes_allocated,
                r.bytes_freed,
                r.live_bytes,
                r.live_blocks,
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            (1, 3, 1, 128, 8, 120, 2),
            (2, 1, 1, 4000, 100, 4020, 2),
            (3, 1, 1, 50, 4000, 70, 2)
        ]
    );
    assert_eq!(a.timeline[1].max_live_bytes, 4120);
    assert_eq!(a.churn.unit, "frame");
    assert_eq!(a.churn.rows, 3);
    assert_eq!(a.churn.busiest[0].frame, 1);

    let opts = ReplayOptions {
        window: Some(3),
        ..known_opts()
    };
    let a = run_text(&synth::daedalus_text(&evs), opts, Symbolizer::default());
    let rows: Vec<_> = a
        .timeline
        .iter()
        .map(|r| (r.first_event, r.events, r.allocs, r.frees))
        .collect();
    assert_eq!(rows, [(1, 3, 3, 0), (4, 3, 1, 2), (7, 2, 1, 1)]);

    // The CSV has a header and one row per timeline row.
    let mut csv = Vec::new();
    output::write_csv(&a, &mut csv).unwrap();
    let csv = String::from_utf8(csv).unwrap();
    assert_eq!(csv.lines().count(), 4);
    assert!(csv.starts_with("row,frame,first_event,events,allocs,frees,bytes_allocated,"));
    assert!(
        csv.contains("\n1,1,4,3,1,2,4000,108,4020,2,4120,\n"),
        "{csv}"
    );
}

#[test]
fn snapshots_at_event_and_frame() {
    let evs = known_events(true);
    let text = synth::daedalus_text(&evs);
    let opts = ReplayOptions {
        at: Some(At::Event(5)),
        ..known_opts()
    };
    let a = run_text(&text, opts, Symbolizer::default());
    let s = a.snapshot.as_ref().unwrap();
    assert_eq!((s.event, s.live_bytes, s.live_blocks), (5, 4120, 3));
    assert_eq!(
        s.blocks.iter().map(|b| (b.ptr, b.size)).collect::<Vec<_>>(),
        [(0x1000, 100), (0x1100, 20), (0x2000, 4000)]
    );
    assert!(!s.log_ended_first);

    let opts = ReplayOptions {
        at: Some(At::Frame(2)),
        ..known_opts()
    };
    let a = run_text(&text, opts, Symbolizer::default());
    let s = a.snapshot.as_ref().unwrap();
    assert_eq!((s.frame, s.event, s.live_bytes), (2, 6, 4020));

    let opts = ReplayOptions {
        at: Some(At::Event(1000)),
        ..known_opts()
    };
    let a = run_text(&text, opts, Symbolizer::default());
    let s = a.snapshot.as_ref().unwrap();
    assert!(s.log_ended_first);
    assert_eq!(s.live_bytes, 70);
}

#[test]
fn temporary_span_options() {
    let text = synth::daedalus_text(&known_events(true));
    let count = |span| {
        let a = run_text(
            &text,
            ReplayOptions {
                temporary: Some(span),
                ..known_opts()
            },
            Symbolizer::default(),
        );
        (a.temporary, a.temporary_bytes)
    };
    assert_eq!(count(Span::Events(1)), (1, 8));
    assert_eq!(count(Span::Events(3)), (2, 4008));
    assert_eq!(count(Span::Events(5)), (3, 4108));
    assert_eq!(count(Span::Frames(1)), (3, 4108));
}

const ANOMALOUS: &str = "\
Allocating 16 bytes - 00001000 - RA is 00400100
Freeing 00001000 - RA is 00400104
Freeing 00001000 - RA is 00400108
Freeing 00005000 - RA is 0040010c
Allocating 64 bytes - 00002000 - RA is 00400110
Allocating 16 bytes - 00002020 - RA is 00400114
Allocating 0 bytes - 00003000 - RA is 00400118
Allocating 4000000000 bytes - 00004000 - RA is 0040011c
Freeing 00004000 - RA is 00400120
Allocating 8 bytes - 00000000 - RA is 00400124
Allocating[] 8 bytes - 00006000 - RA is 00400128
Freeing 00006000 - RA is 0040012c
this is not a line
Allocating 12 bytes - zz - RA is 1
Frame 5
Frame 3
Freeing 00002024 - RA is 00400130
Freeing 00000000 - RA is 00400134
";

#[test]
fn anomalies_are_counted_and_listed_with_lines() {
    for gz in [false, true] {
        let data = if gz {
            gzip(ANOMALOUS.as_bytes())
        } else {
            ANOMALOUS.as_bytes().to_vec()
        };
        let a = run_text(&data, ReplayOptions::default(), Symbolizer::default());
        let c = |k| a.anomalies.count(k);
        assert_eq!(c(AnomalyKind::Malformed), 2);
        assert_eq!(c(AnomalyKind::DoubleFree), 1);
        assert_eq!(c(AnomalyKind::UnknownFree), 2);
        assert_eq!(c(AnomalyKind::Overlap), 1);
        assert_eq!(c(AnomalyKind::ZeroSize), 1);
        assert_eq!(c(AnomalyKind::AbsurdSize), 1);
        assert_eq!(c(AnomalyKind::NullAlloc), 1);
        assert_eq!(c(AnomalyKind::KindMismatch), 1);
        assert_eq!(c(AnomalyKind::FrameBackwards), 1);
        assert_eq!(c(AnomalyKind::TimeBackwards), 0);
        assert_eq!(a.anomalies.total(), 11);
        let lines: Vec<(u64, AnomalyKind)> = a
            .anomalies
            .listed
            .iter()
            .map(|x| (x.line, x.kind))
            .collect();
        assert_eq!(
            lines,
            [
                (3, AnomalyKind::DoubleFree),
                (4, AnomalyKind::UnknownFree),
                (6, AnomalyKind::Overlap),
                (7, AnomalyKind::ZeroSize),
                (8, AnomalyKind::AbsurdSize),
                (10, AnomalyKind::NullAlloc),
                (12, AnomalyKind::KindMismatch),
                (13, AnomalyKind::Malformed),
                (14, AnomalyKind::Malformed),
                (16, AnomalyKind::FrameBackwards),
                (17, AnomalyKind::UnknownFree),
            ]
        );
        let listed = &a.anomalies.listed;
        assert_eq!(listed[0].text, "Freeing 00001000 - RA is 00400108");
        assert!(listed[0].detail.contains("already freed at line 2"));
        assert!(
            listed[2].detail.contains("0x00002000"),
            "{}",
            listed[2].detail
        );
        assert!(listed[9].detail.contains("frame 3 after frame 5"));
        assert!(
            listed[10]
                .detail
                .contains("inside the live block 0x00002020"),
            "{}",
            listed[10].detail
        );
        assert!(listed[8].detail.contains("'zz'"), "{}", listed[8].detail);
        // Live: 16 bytes at 0x2020 and the zero-size block; 0x2000 was
        // dropped by the overlap.
        assert_eq!((a.live_bytes, a.live_blocks), (16, 2));
        assert_eq!(a.evicted_blocks, 1);
        assert_eq!(a.null_frees, 1);
        assert_eq!(a.lines, 18);
    }
}

#[test]
fn strict_mode_stops_at_the_first_malformed_line() {
    let mut reader = LogReader::from_reader(
        Box::new(std::io::Cursor::new(ANOMALOUS.as_bytes().to_vec())),
        "bad.log",
    )
    .unwrap();
    let mut replay = Replay::new(ReplayOptions::default(), Symbolizer::default());
    let err = replay_log(
        &mut reader,
        &mut replay,
        DriveOptions {
            strict: true,
            arch_fixed: false,
        },
    )
    .unwrap_err();
    let msg = err.to_string();
    assert!(msg.starts_with("bad.log:13: expected an event"), "{msg}");
}

#[test]
fn the_live_set_stays_bounded_and_a_long_log_has_no_anomalies() {
    let evs = synth::game_like(200_000, 7);
    let mut replay = Replay::new(ReplayOptions::default(), Symbolizer::default());
    let mut max_live = 0;
    for e in &evs {
        replay.push(e);
        max_live = max_live.max(replay.live_blocks());
    }
    let a = replay.finish();
    assert_eq!(a.anomalies.total(), 0, "{:?}", a.anomalies.listed);
    assert_eq!(a.events, 200_000);
    assert!(max_live <= 20_001);
    // Accounting holds: allocated - freed = live.
    assert_eq!(a.bytes_allocated - a.bytes_freed, a.live_bytes);
    let site_leaks: u64 = a.sites.iter().map(|s| s.stats.leaked_bytes).sum();
    assert_eq!(site_leaks, a.live_bytes);
    let at_peak: u64 = a.sites.iter().map(|s| s.stats.at_peak_bytes).sum();
    assert_eq!(at_peak, a.peak.bytes);
    let at_peak_blocks: u64 = a.sites.iter().map(|s| s.stats.at_peak_blocks).sum();
    assert_eq!(at_peak_blocks, a.peak.blocks);
}

#[test]
fn site_peak_is_not_global_peak() {
    let mut r = Replay::new(ReplayOptions::default(), Symbolizer::default());
    r.push(&HeapEvent::alloc(100, 0x100, 0xA));
    r.push(&HeapEvent::free(0x100, 0xF));
    r.push(&HeapEvent::alloc(150, 0x200, 0xB));
    r.push(&HeapEvent::alloc(10, 0x400, 0xA));
    r.push(&HeapEvent::free(0x200, 0xF));
    let a = r.finish();
    assert_eq!((a.peak.bytes, a.peak.event), (160, 4));
    let (sa, sb) = (site_of(&a, 0xA), site_of(&a, 0xB));
    assert_eq!((sa.peak_bytes, sa.at_peak_bytes), (100, 10));
    assert_eq!((sb.peak_bytes, sb.at_peak_bytes), (150, 150));
}

fn sym(name: &str, addr: u64) -> Symbol {
    Symbol {
        name: name.into(),
        addr,
        size: None,
        kind: SymbolKind::Text,
        global: true,
        module: None,
        file: None,
        line: None,
    }
}

#[test]
fn grouping_by_function_and_address_with_mips_adjustment() {
    let table = SymbolTable::new(vec![
        sym("Memory_Init", 0x0895_0000),
        sym("Texture_Create", 0x0895_0100),
        sym("Texture_Destroy", 0x0895_0200),
    ]);
    // Two calls in Texture_Create; one whose RA is the first byte of
    // Texture_Destroy (the call is the last instruction of Texture_Create).
    let text = "\
Allocating 64 bytes - 09000000 - RA is 08950108
Allocating 64 bytes - 09000040 - RA is 08950150
Allocating 64 bytes - 09000080 - RA is 08950200
Allocating 32 bytes - 090000c0 - RA is 08950010
";
    let by = |g| {
        let s = Symbolizer::new(Arch::Unknown, g, Some(Box::new(table.clone())));
        run_text(text.as_bytes(), ReplayOptions::default(), s)
    };
    let a = by(Grouping::Function);
    assert_eq!(a.arch, Arch::Mips);
    let mut names: Vec<(String, u64)> = a
        .sites
        .iter()
        .map(|s| (s.frames[0].name.clone(), s.stats.allocs))
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            ("Memory_Init".to_string(), 1),
            ("Texture_Create".to_string(), 3)
        ]
    );
    let a = by(Grouping::Address);
    assert_eq!(a.sites.len(), 4);
}

#[test]
fn sgdk_elf_symbols_and_m68k_call_sites() {
    let rom = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/roms/platformer/rom.out"
    );
    assert!(
        std::path::Path::new(rom).exists(),
        "missing {rom}: the shared folder (../shared) must be beside the repository"
    );
    let file = retroprof_heap::symbolize::SymbolFile::load(std::path::Path::new(rom)).unwrap();
    assert_eq!(file.arch, Some(Arch::M68k));
    // Return addresses after `jsr MEM_alloc` (6-byte JSR abs.l) in the
    // platformer sample (m68k-linux-gnu-objdump -d rom.out).
    let text = "\
retroprof-heap 1 arch=m68k
frame 1
alloc 1024 0xff1000 0x796
alloc 64 0xff1400 0x5adc
alloc 32 0xff1440 0x8946
free 0xff1440 0x0
";
    let s = Symbolizer::new(Arch::M68k, Grouping::Function, Some(Box::new(file)));
    let a = run_text(text.as_bytes(), ReplayOptions::default(), s);
    let mut names: Vec<&str> = a.sites.iter().map(|s| s.frames[0].name.as_str()).collect();
    names.sort();
    assert_eq!(names, ["DMA_setBufferSize", "MAP_create", "main"]);
    assert_eq!(a.live_bytes, 1088);
}

#[test]
fn dhat_json_is_consistent() {
    let a = run_text(
        &synth::daedalus_text(&known_events(true)),
        known_opts(),
        Symbolizer::default(),
    );
    let mut out = Vec::new();
    output::write_dhat(&a, &mut out).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["dhatFileVersion"], 2);
    assert_eq!(v["mode"], "heap");
    assert_eq!(v["verb"], "Allocated");
    assert_eq!(v["bklt"], true);
    assert_eq!(v["bkacc"], false);
    assert_eq!(v["tu"], "frames");
    assert_eq!(v["te"], 3);
    assert_eq!(v["tg"], 2);
    let ftbl = v["ftbl"].as_array().unwrap();
    assert_eq!(ftbl[0], "[root]");
    let pps = v["pps"].as_array().unwrap();
    assert_eq!(pps.len(), 3);
    let sum = |k: &str| pps.iter().map(|p| p[k].as_u64().unwrap()).sum::<u64>();
    assert_eq!(sum("tb"), 4178);
    assert_eq!(sum("tbk"), 5);
    assert_eq!(sum("gb"), 4120);
    assert_eq!(sum("eb"), 70);
    assert_eq!(sum("ebk"), 2);
    for p in pps {
        for f in p["fs"].as_array().unwrap() {
            assert!((f.as_u64().unwrap() as usize) < ftbl.len());
        }
        assert!(p["mb"].as_u64() <= p["tb"].as_u64());
    }
}

#[test]
fn json_report_is_deterministic_and_parses() {
    let text = synth::daedalus_text(&synth::game_like(5_000, 3));
    let render = || {
        let a = run_text(&text, known_opts(), Symbolizer::default());
        let mut out = Vec::new();
        output::write_json(&a, &mut out).unwrap();
        out
    };
    let one = render();
    assert_eq!(one, render());
    let v: serde_json::Value = serde_json::from_slice(&one).unwrap();
    assert_eq!(v["format"], "retroprof-heap");
    assert_eq!(v["version"], 1);
    assert_eq!(v["events"], 5000);
    assert!(v["sites"].as_array().unwrap().len() > 10);
    assert!(v["timeline"].as_array().unwrap().len() > 10);
}

#[test]
fn stack_profile_follows_the_heap_convention() {
    let a = run_text(
        &synth::daedalus_text(&known_events(false)),
        known_opts(),
        Symbolizer::default(),
    );
    let p = output::stack_profile(&a, &a.end);
    let kinds: Vec<&str> = p.value_types.iter().map(|v| v.kind.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "alloc_objects",
            "alloc_space",
            "inuse_objects",
            "inuse_space"
        ]
    );
    assert_eq!(p.value_types[p.default_value].kind, "inuse_space");
    let total = |i: usize| p.samples.iter().map(|s| s.values[i]).sum::<i64>();
    assert_eq!((total(0), total(1), total(2), total(3)), (5, 4178, 2, 70));
}

#[test]
fn dwarf_inlined_frames_from_an_elf() {
    // tests/fixtures/inline.elf, built from inline.c (see its header): the
    // `jsr mem_alloc` at 0x80000128 is inside `make_node`, inlined into
    // `spawn_enemy`; the return address is 0x8000012e.
    let elf = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/inline.elf");
    let file = retroprof_heap::symbolize::SymbolFile::load(std::path::Path::new(elf)).unwrap();
    assert_eq!(file.arch, Some(Arch::M68k));
    assert!(file.debug.is_some(), "the fixture has DWARF");
    let s = Symbolizer::new(Arch::M68k, Grouping::Line, Some(Box::new(file)));
    let frames = s.site_frames(&[0x8000_012e]);
    let got: Vec<(String, Option<u32>, bool)> = frames
        .iter()
        .map(|f| (f.name.clone(), f.line, f.inlined))
        .collect();
    assert_eq!(
        got,
        [
            ("make_node".to_string(), Some(17), true),
            ("spawn_enemy".to_string(), Some(22), false)
        ]
    );
    assert!(frames[0].file.as_deref().unwrap().ends_with("inline.c"));
    // Grouped by function, the lines go but the inline chain stays.
    let s = Symbolizer::new(
        Arch::M68k,
        Grouping::Function,
        Some(Box::new(
            retroprof_heap::symbolize::SymbolFile::load(std::path::Path::new(elf)).unwrap(),
        )),
    );
    let frames = s.site_frames(&[0x8000_012e]);
    assert_eq!(frames.len(), 2);
    assert_eq!((frames[0].line, frames[1].line), (None, None));
}

#[test]
fn garbage_and_extreme_values_never_panic() {
    let mut rng = synth::Rng::new(99);
    let words = [
        "Allocating",
        "Allocating[]",
        "Freeing",
        "Freeing[]",
        "alloc",
        "free",
        "frame",
        "Frame",
        "bytes",
        "-",
        "RA",
        "is",
        "0",
        "1",
        "ffffffffffffffff",
        "0xffffffffffffffff",
        "18446744073709551615",
        "18446744073709551616",
        "frame=3",
        "time=0",
        "stack=1,2",
        "stack=",
        "\u{e9}\u{e9}",
        "#",
        "retroprof-heap",
    ];
    let mut text = String::new();
    for _ in 0..20_000 {
        let n = 1 + rng.below(10);
        for i in 0..n {
            if i > 0 {
                text.push(' ');
            }
            text.push_str(words[rng.below(words.len() as u64) as usize]);
        }
        text.push('\n');
    }
    // Well-formed events with extreme values too.
    for _ in 0..20_000 {
        let v = |r: &mut synth::Rng| match r.below(4) {
            0 => 0,
            1 => u64::MAX - r.below(4),
            2 => r.below(64),
            _ => r.next_u64(),
        };
        match rng.below(3) {
            0 => text.push_str(&format!(
                "alloc {} 0x{:x} 0x{:x}\n",
                v(&mut rng),
                v(&mut rng),
                v(&mut rng)
            )),
            1 => text.push_str(&format!("free 0x{:x} 0x{:x}\n", v(&mut rng), v(&mut rng))),
            _ => text.push_str(&format!("frame {}\n", v(&mut rng))),
        }
    }
    let mut data = text.into_bytes();
    data.extend_from_slice(b"\xff\xfe not utf-8\n");
    for bits in [16, 32, 64] {
        let opts = ReplayOptions {
            address_bits: bits,
            keep_timeline: true,
            at: Some(At::Frame(5)),
            header: 3,
            align: 8,
            ..ReplayOptions::default()
        };
        let a = run_text(&data, opts, Symbolizer::default());
        assert!(a.anomalies.count(AnomalyKind::Malformed) > 1000);
        assert_eq!(a.lines, 40_001);
        let img = retroprof_heap::memmap::render(&a, &a.end, &Default::default());
        assert!(img.width > 0);
        let mut sink = Vec::new();
        output::write_json(&a, &mut sink).unwrap();
        output::write_dhat(&a, &mut sink).unwrap();
        let _ = retroprof_heap::report::terminal(&a, &Default::default());
    }
}
