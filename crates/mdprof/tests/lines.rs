//! Per-line and per-instruction costs (src/code.rs) on the known-costs ROM
//! (ELF with DWARF) and on a shared SGDK release build (no line tables for
//! its game code): the hot lines of `burn`, the invariant that a
//! function's self cycles are its addresses' cycles plus its exception
//! entry, the pprof Line entries, --annotate, and golden files of the new
//! report sections.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use retroprof_mdprof::code::{self, HotRow};
use retroprof_mdprof::{load_symbols, rom_label, ProfileOptions, Report, Session};
use retroprof_megadrive::Rom;
use retroprof_testkit::{check_golden_text, golden_path};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn shared() -> PathBuf {
    let p = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared"));
    assert!(
        p.join("roms").is_dir(),
        "the shared test material is missing at {}",
        p.display()
    );
    p.to_path_buf()
}

fn session(rom: &Path, frames: u64, from: u64, source_dir: Option<&Path>) -> Session {
    let r = Rom::load(rom).unwrap();
    let syms = load_symbols(rom, None).unwrap();
    let opts = ProfileOptions {
        frames,
        from,
        ..ProfileOptions::default()
    };
    let mut s = Session::new(r, rom_label(rom), syms, opts).unwrap();
    s.source_dir = source_dir.map(Path::to_path_buf);
    s
}

fn knowncosts_rom() -> PathBuf {
    repo().join("testroms/out/knowncosts/rom.bin")
}

/// The known-costs ROM, 300 frames, with a session of it (for
/// --annotate; sessions are not `Sync`, so each caller gets its own).
fn knowncosts() -> (Session, &'static Report) {
    static R: OnceLock<Report> = OnceLock::new();
    let s = session(&knowncosts_rom(), 300, 0, None);
    let r = R.get_or_init(|| s.run(&mut |_, _| {}));
    (s, r)
}

fn castlecat2() -> &'static Report {
    static R: OnceLock<Report> = OnceLock::new();
    R.get_or_init(|| {
        let s = session(&shared().join("roms/castlecat2/rom.bin"), 300, 0, None);
        s.run(&mut |_, _| {})
    })
}

/// Self cycles of every function = its instructions' cycles + its
/// exception entry (exact in master clocks).
fn assert_self_is_sum_of_addresses(r: &Report) {
    let c = &r.code;
    let mut sum = vec![0u64; r.functions.len()];
    for i in &c.instructions {
        sum[i.function] += i.mclk;
    }
    let mut entry = vec![0.0; r.functions.len()];
    for &(f, cy) in &c.entry {
        entry[f] += cy;
    }
    for (i, f) in r.functions.iter().enumerate() {
        let got = sum[i] as f64 / 7.0 + entry[i];
        assert!(
            (got - f.self_cycles).abs() < 1e-6,
            "{}: self {} but addresses + entry give {got}",
            f.name,
            f.self_cycles
        );
    }
    // Lines add up to the instructions they cover.
    for l in &c.lines {
        let m: u64 = c
            .instructions
            .iter()
            .filter(|i| i.line.is_some_and(|k| std::ptr::eq(&c.lines[k], l)))
            .map(|i| i.mclk)
            .sum();
        assert_eq!(m, l.mclk, "line {}:{}", l.file, l.line);
    }
}

/// The combined look-up gives the attribution id and the per-address slot
/// the cost table uses, and the table's cells (the profiler's hot path)
/// hold the same ids.
#[test]
fn id_slot_agrees_with_the_tables() {
    let (s, _) = knowncosts();
    let attr = &s.attribution;
    let pcs = retroprof_mdprof::pccost::PcCosts::new(attr);
    let mut pcs_seen = 0;
    for pc in (0..0x2_0000u32)
        .step_by(2)
        .chain((0xFF_0000..0x100_0000).step_by(2))
        .chain([0x40_0000, 0xA1_0000, 0xFF_FFFF, 0x1FF_0000, 0xE0FF_0000])
    {
        let (a, slot) = attr.id_slot(pc);
        assert_eq!(a, attr.id(pc), "{pc:#x}");
        assert_eq!(slot, pcs.slot(pc), "{pc:#x}");
        // The hot path's cells hold the same ids.
        assert_eq!(pcs.id(pc), a, "{pc:#x}");
        if let Some(p) = pcs.slot_pc(slot) {
            assert_eq!(p, pc & 0xFF_FFFE, "{pc:#x}");
            pcs_seen += 1;
        }
    }
    // ROM, RAM, and 0xFFFFFF, 0x1FF0000 and 0xE0FF0000 (RAM in 24 bits).
    assert_eq!(pcs_seen, 0x1_0000 + 0x8000 + 3);
}

/// The hot path's charge takes the PC unmasked: an address with bits
/// above the 24 address lines (the core's 32-bit PC, such as a sign-extended
/// `JSR ($8000).W` at 0xFFFF8000) is charged to the cell of its 24-bit
/// address, with that cell's id, as a masked one is.
#[test]
fn charge_masks_addresses_above_24_bits() {
    let (s, _) = knowncosts();
    let attr = &s.attribution;
    let mut pcs = retroprof_mdprof::pccost::PcCosts::new(attr);
    let mut want = std::collections::BTreeMap::new();
    // Bits above the 24 address lines only (0xFF00_0000 | 0xFF_8000 is
    // the sign-extended 0xFFFF8000).
    let high = [0xFF00_0000u32, 0x0100_0000, 0x0200_0000, 0x8000_0000];
    let low = [0x200u32, 0x1000, 0xFF_8000, 0xFF_0000, 0x40_0000, 0xA1_0000];
    for (k, &base) in high.iter().enumerate() {
        for (j, &a) in low.iter().enumerate() {
            let pc = base | a;
            let m = (1 + k * low.len() + j) as u64;
            assert_eq!(pcs.charge(pc, m), pcs.id(pc & 0xFF_FFFF), "{pc:#x}");
            assert_eq!(pcs.charge(a, 1000 * m), attr.id(a), "{a:#x}");
            *want.entry(pcs.slot(a)).or_insert(0) += 1001 * m;
        }
    }
    for (&slot, &m) in &want {
        assert_eq!(pcs.counted(slot), m, "slot {slot}");
    }
}

#[test]
fn burn_dbra_line_carries_its_loop() {
    let (_, r) = knowncosts();
    let fi = r.functions.iter().position(|f| f.name == "burn").unwrap();
    let f = &r.functions[fi];
    let rows = r.code.rows(fi);
    let HotRow::Line(top) = rows[0] else {
        panic!("burn's hottest row is not a source line: {:?}", rows[0]);
    };
    assert_eq!(r.code.files[top.file].name, "testroms/lib/burn.s");
    assert_eq!(top.line, 10, "the dbra line");
    assert_eq!(top.text.as_deref(), Some("1:  dbra    %d0,1b"));
    // testroms/README.md: dbra 500 x 10 + 14 = 5,014 cycles by the
    // tables, plus the refresh and interrupt share of burn's measured
    // ~5,113 cycles per call.
    let per_call = top.cycles / f.calls as f64;
    assert!((5014.0..5110.0).contains(&per_call), "{per_call}");
    assert!(f.cycles_per_call > 5038.0 && f.cycles_per_call < 5130.0);
    // move.w #500,d0 (8) and rts (16) are the other two lines.
    let lines: Vec<u32> = rows
        .iter()
        .filter_map(|r| match r {
            HotRow::Line(l) => Some(l.line),
            _ => None,
        })
        .collect();
    assert_eq!(lines, vec![10, 11, 9]);
}

#[test]
fn self_cycles_are_the_sum_of_the_addresses() {
    assert_self_is_sum_of_addresses(knowncosts().1);
    assert_self_is_sum_of_addresses(castlecat2());
    // With --from the counted frames' split holds too.
    let s = session(&knowncosts_rom(), 120, 47, None);
    let r = s.run(&mut |_, _| {});
    assert_self_is_sum_of_addresses(&r);
}

#[test]
fn release_build_shows_mains_hot_instructions() {
    let r = castlecat2();
    let hot = code::hot_functions(r, code::TERMINAL_FUNCTIONS);
    assert_eq!(r.functions[hot[0]].name, "main");
    let rows = r.code.rows(hot[0]);
    assert!(rows.len() > 50, "{}", rows.len());
    for row in rows.iter().take(5) {
        let HotRow::Instr(i) = row else {
            panic!("main has no DWARF lines: {row:?}");
        };
        let text = r.code.text(i);
        assert!(!text.is_empty() && !text.starts_with('('), "{i:?}: {text}");
    }
    let text = code::terminal_section(r, false);
    assert!(text.contains("hot instructions"), "{text}");
    for l in text.lines() {
        assert!(l.chars().count() <= 80, "over 80 columns: {l:?}");
    }
    check_golden_text(
        &golden_path(env!("CARGO_MANIFEST_DIR"), "lines_castlecat2_terminal.txt"),
        &text,
    );
}

#[test]
fn golden_sections_of_the_known_costs_rom() {
    let (s, r) = knowncosts();
    let text = code::terminal_section(r, false);
    for l in text.lines() {
        assert!(l.chars().count() <= 80, "over 80 columns: {l:?}");
    }
    let dir = env!("CARGO_MANIFEST_DIR");
    check_golden_text(&golden_path(dir, "lines_knowncosts_terminal.txt"), &text);
    check_golden_text(
        &golden_path(dir, "lines_knowncosts_html.txt"),
        &code::html_section(r),
    );
    let ann = code::annotate(&s, r, "burn").unwrap();
    check_golden_text(&golden_path(dir, "lines_annotate_burn.txt"), &ann);
    let mut csv = Vec::new();
    code::lines_csv(r, &mut csv).unwrap();
    let csv = String::from_utf8(csv).unwrap();
    let burn: String = csv
        .lines()
        .filter(|l| l.starts_with("burn,") || l.starts_with("function,"))
        .map(|l| format!("{l}\n"))
        .collect();
    check_golden_text(&golden_path(dir, "lines_knowncosts_burn.csv"), &burn);
}

#[test]
fn annotate_unknown_function_lists_near_names() {
    let (s, r) = knowncosts();
    let e = code::annotate(&s, r, "brun").unwrap_err().to_string();
    assert!(e.contains("\"brun\": no such function"), "{e}");
    assert!(e.contains("near names: burn"), "{e}");
    let e = code::annotate(&s, r, "qqqqqqqq").unwrap_err().to_string();
    assert!(e.ends_with("no such function"), "{e}");
}

#[test]
fn source_dir_is_checked_and_searched_first() {
    let e = code::check_source_dir(&knowncosts_rom()).unwrap_err();
    assert!(e.to_string().contains("is not a folder"), "{e}");
    let e = code::check_source_dir(Path::new("/nonexistent/dir")).unwrap_err();
    assert!(e.to_string().contains("cannot open it"), "{e}");
    // A copy of burn.s with a different line 10 under --source-dir wins.
    let dir = std::env::temp_dir().join(format!("retroprof-lines-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("lib")).unwrap();
    let src = std::fs::read_to_string(repo().join("testroms/lib/burn.s")).unwrap();
    let mut lines: Vec<&str> = src.lines().collect();
    lines[9] = "1: dbra %d0,1b | from --source-dir";
    std::fs::write(dir.join("lib/burn.s"), lines.join("\n")).unwrap();
    code::check_source_dir(&dir).unwrap();
    let s = session(&knowncosts_rom(), 40, 0, Some(&dir));
    let r = s.run(&mut |_, _| {});
    let l = r
        .code
        .lines
        .iter()
        .find(|l| r.code.files[l.file].name == "testroms/lib/burn.s" && l.line == 10)
        .unwrap();
    assert_eq!(
        l.text.as_deref(),
        Some("1: dbra %d0,1b | from --source-dir")
    );
    assert_eq!(
        r.code.files[l.file].found.as_deref(),
        Some(dir.join("lib/burn.s").as_path())
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

// ---- pprof: a minimal protobuf decoder ----------------------------------

use retroprof_testkit::protobuf::{decode, get_u, msgs, packed, Msg, Val};

#[test]
fn pprof_has_line_entries_for_burn() {
    let (_, r) = knowncosts();
    let sp = code::stack_profile_with_lines(r);
    let mut gz = Vec::new();
    retroprof_profile::write::pprof(&sp, &mut gz).unwrap();
    let mut raw = Vec::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_end(&mut raw)
        .unwrap();
    let p = decode(&raw);
    let strings: Vec<String> = p
        .get(&6)
        .unwrap()
        .iter()
        .map(|v| match v {
            Val::Bytes(b) => String::from_utf8(b.clone()).unwrap(),
            v => panic!("{v:?}"),
        })
        .collect();
    let funcs = msgs(&p, 5);
    let burn: Vec<&Msg> = funcs
        .iter()
        .filter(|f| strings[get_u(f, 2) as usize] == "burn")
        .collect();
    assert_eq!(burn.len(), 1, "one Function for burn");
    let burn_id = get_u(burn[0], 1);
    assert_eq!(strings[get_u(burn[0], 4) as usize], "testroms/lib/burn.s");
    // Locations of burn and their lines.
    let mut line_of_loc: BTreeMap<u64, u64> = BTreeMap::new();
    for loc in msgs(&p, 4) {
        let lines = msgs(&loc, 4);
        if lines.len() == 1 && get_u(&lines[0], 1) == burn_id {
            line_of_loc.insert(get_u(&loc, 1), get_u(&lines[0], 2));
        }
    }
    let lines: std::collections::BTreeSet<u64> = line_of_loc.values().copied().collect();
    assert!(
        lines.is_superset(&[9, 10, 11].into()),
        "burn's locations carry lines {lines:?}"
    );
    // Flat cycles per line (leaf location) match the line costs.
    let mut flat: BTreeMap<u64, i64> = BTreeMap::new();
    for s in msgs(&p, 2) {
        let locs = packed(&s, 1);
        let v = packed(&s, 2)[0] as i64;
        if let Some(l) = line_of_loc.get(&locs[0]) {
            *flat.entry(*l).or_default() += v;
        }
    }
    let fi = r.functions.iter().position(|f| f.name == "burn").unwrap();
    for row in r.code.rows(fi) {
        if let HotRow::Line(l) = row {
            let got = flat[&(l.line as u64)] as f64;
            // Each stack's split is rounded to whole cycles.
            assert!(
                (got - l.cycles).abs() <= r.stacks.len() as f64,
                "line {}: pprof {got}, measured {}",
                l.line,
                l.cycles
            );
        }
    }
}

/// The per-frame CSV writes its numbers by hand (output::push_csv_cell);
/// both ways: every row equals the columns' own `Cell::csv` strings
/// joined, over random frames with the figures a run gives (master clocks
/// / 7, percentages, exact ties such as x.25 and x.125, zero) and edge
/// values (negative, non-finite, huge, tiny), names that need quoting,
/// absent lines and `--watch` values.
#[test]
fn frames_csv_matches_the_columns_formatting() {
    use retroprof_mdprof::columns::csv_columns;
    use retroprof_mdprof::output::{frames_csv, frames_csv_header};
    use retroprof_mdprof::report::{FrameFunction, FrameRecord, FunctionStats, WatchSpec};
    let mut rng = retroprof_testkit::SplitMix64::new(0x5EED_C5F1);
    let edge = [
        0.0,
        -0.0,
        0.05,
        0.25,
        0.125,
        0.995,
        -1.25,
        1e15,
        9.99e14,
        1e300,
        5e-324,
        1e-30,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ];
    let fig = |rng: &mut retroprof_testkit::SplitMix64| -> f64 {
        match rng.below(6) {
            0 => rng.below(1 << 40) as f64 / 7.0,
            1 => rng.below(1 << 20) as f64 * 0.125,
            2 => rng.below(10_000_000) as f64 / 7.0 * 100.0 / 128_005.7,
            3 => rng.below(1 << 30) as f64 / 100.0,
            4 => edge[rng.below(edge.len() as u64) as usize],
            _ => f64::from_bits(rng.below(u64::MAX)),
        }
    };
    for kdebug in [false, true] {
        let mut r = Report::default();
        for name in ["main", "a,b", "say \"hi\"", "line\nbreak", ""] {
            r.functions.push(FunctionStats {
                name: name.into(),
                ..FunctionStats::default()
            });
        }
        r.watches = ["0xFF0000:w", "x,y"]
            .iter()
            .map(|s| WatchSpec {
                spec: s.to_string(),
                symbol: None,
                addr: 0xFF_0000,
                size: 2,
            })
            .collect();
        if kdebug {
            let mut k = retroprof_mdprof::kdebug::KDebugReport::default();
            k.timer.spans = 1;
            r.kdebug = Some(k);
        }
        for i in 0..4000u64 {
            let line = |rng: &mut retroprof_testkit::SplitMix64| {
                (rng.below(3) != 0).then(|| rng.below(65536) as u16)
            };
            let big = |rng: &mut retroprof_testkit::SplitMix64| match rng.below(3) {
                0 => rng.below(u64::MAX),
                1 => rng.below(10),
                _ => rng.below(1_000_000),
            };
            let top = (0..rng.below(3))
                .map(|_| FrameFunction {
                    function: rng.below(7) as usize,
                    cycles: fig(&mut rng),
                })
                .collect();
            r.frames.push(FrameRecord {
                frame: if i % 97 == 0 { u64::MAX - i } else { i },
                counted: rng.below(2) == 0,
                busy_cycles: fig(&mut rng),
                idle_cycles: fig(&mut rng),
                frame_cycles: fig(&mut rng),
                load_pct: fig(&mut rng),
                dropped: rng.below(2) == 0,
                loading: [None, Some(retroprof_mdprof::gameplay::Loading::Stall)]
                    [rng.below(2) as usize],
                loop_starts: big(&mut rng) as u32,
                idle_enter_line: line(&mut rng),
                loop_start_line: line(&mut rng),
                dma_vblank_bytes: big(&mut rng),
                dma_active_bytes: big(&mut rng),
                dma_fill_copy_bytes: big(&mut rng),
                dma_last_line: line(&mut rng),
                dma_freeze_cycles: fig(&mut rng),
                fifo_wait_cycles: fig(&mut rng),
                refresh_cycles: fig(&mut rng),
                z80_stall_cycles: fig(&mut rng),
                interrupts: big(&mut rng) as u32,
                instructions: big(&mut rng),
                top,
                watch: vec![big(&mut rng) as u32, u32::MAX - i as u32],
                kdebug_timer_spans: big(&mut rng),
                kdebug_timer_cycles: big(&mut rng),
            });
        }
        let mut want = frames_csv_header(&r);
        want.push('\n');
        let cols: Vec<_> = csv_columns(&r).collect();
        for f in &r.frames {
            let mut cells: Vec<String> = cols.iter().map(|c| (c.get)(&r, f).csv()).collect();
            cells.extend(f.watch.iter().map(|v| v.to_string()));
            want.push_str(&cells.join(","));
            want.push('\n');
        }
        let mut got = Vec::new();
        frames_csv(&r, &mut got).unwrap();
        let got = String::from_utf8(got).unwrap();
        for (k, (g, w)) in got.lines().zip(want.lines()).enumerate() {
            assert_eq!(g, w, "row {k} (kdebug columns: {kdebug})");
        }
        assert_eq!(got, want);
    }
}
