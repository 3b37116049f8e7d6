//! Agreement with the Genesis Plus GX reference figures
//! (../shared/reference/NAME.frames.csv, NAME.funcs.csv) on the shared SGDK
//! ROMs, same scripted input, 1,200 frames, run with the reference's
//! charging rules (interrupt entry charged to the interrupted instruction,
//! local labels kept).
//!
//! The criteria are issue #15's ("How agreement with the reference is
//! judged from now on"), over frames 60 on (platformer up to frame 1,070:
//! the reference's VRAM-fill fork at 1,071, crates/megadrive/README.md):
//! - dropped-frame flags identical;
//! - busy total within 0.5 %;
//! - busy cycles summed over 10-frame windows within 1 % on >= 95 % of the
//!   windows;
//! - each of the reference's top-10 busy functions (idle excluded) within
//!   2 % of its cycles (whole run: the reference gives only that);
//! - 68000 -> VDP DMA bytes in total within 2 %.
//!
//! The per-frame agreement (within max(1 %, 0.2 % of a frame)) is printed
//! as information only: issue #5's "95 % of frames within 1 %" is retired,
//! the remaining per-frame differences being the Z80's phase, which the
//! reference cannot arbitrate.

use std::ops::Range;
use std::path::PathBuf;

use retroprof_mdprof::{load_symbols, report::Report, EntryCharge, ProfileOptions, Session};
use retroprof_megadrive::{ReferenceRules, Rom};

/// The reference's input script (../shared/reference/README.md: the same
/// for vnmd, platformer and castlecat2).
const INPUT: &str =
    "60-600:R,200-210:C,300-305:S,600-605:S,700-1199:R,900-910:C,1000-1010:C,1100-1110:C";

fn shared() -> PathBuf {
    let p = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared"));
    assert!(
        p.join("roms").is_dir() && p.join("reference").is_dir(),
        "../shared (roms/, reference/) is missing: these tests need it at {}",
        p.display()
    );
    p
}

struct RefFrame {
    busy: f64,
    dropped: bool,
    /// dma_vblank_bytes + dma_active_bytes (68000 -> VDP).
    dma: u64,
    fill_copy: u64,
}

fn read(path: &std::path::Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn reference_frames(name: &str) -> Vec<RefFrame> {
    let path = shared().join(format!("reference/{name}.frames.csv"));
    let text = read(&path);
    let header = text.lines().next().unwrap_or("");
    assert!(
        header.starts_with(
            "frame,busy_cycles,idle_cycles,frame_cycles,load_pct,dropped,loop_starts,\
             idle_enter_line,loop_start_line,dma_vblank_bytes,dma_active_bytes,\
             dma_last_line,dma_fill_copy_bytes"
        ),
        "{}: unexpected header {header:?}",
        path.display()
    );
    text.lines()
        .skip(1)
        .enumerate()
        .map(|(i, l)| {
            let c: Vec<&str> = l.split(',').collect();
            let where_ = format!("{} line {}: {l:?}", path.display(), i + 2);
            assert!(
                c.len() >= 13 && c[0].parse::<usize>().ok() == Some(i),
                "{where_}: expected 13 fields, frame {i} first"
            );
            let int = |k: usize| c[k].parse::<u64>().unwrap_or_else(|_| panic!("{where_}"));
            RefFrame {
                busy: c[1].parse().unwrap_or_else(|_| panic!("{where_}")),
                dropped: c[5] == "1",
                dma: int(9) + int(10),
                fill_copy: int(12),
            }
        })
        .collect()
}

/// The reference's top `n` busy functions (idle excluded) and their cycles,
/// local labels kept as in the file.
fn reference_top(name: &str, n: usize) -> Vec<(String, f64)> {
    let path = shared().join(format!("reference/{name}.funcs.csv"));
    read(&path)
        .lines()
        .skip(1)
        .filter(|l| !l.ends_with(",1"))
        .map(|l| {
            let c: Vec<&str> = l.split(',').collect();
            let cycles = c[2]
                .parse()
                .unwrap_or_else(|_| panic!("{}: {l:?}", path.display()));
            (c[0].to_string(), cycles)
        })
        .take(n)
        .collect()
}

/// A profiling session of shared ROM `name` (symbols found next to it).
fn session(name: &str, opts: ProfileOptions) -> Session {
    let rom_path = shared().join(format!("roms/{name}/rom.bin"));
    let rom = Rom::load(&rom_path).expect("shared ROM");
    let syms = load_symbols(&rom_path, None).expect("symbols");
    Session::new(rom, name.into(), syms, opts).expect("session")
}

fn profile(name: &str, reference_rules: ReferenceRules) -> Report {
    let opts = ProfileOptions {
        reference_rules,
        frames: 1200,
        input: vec![INPUT.to_string()],
        keep_labels: true,
        top: 10,
        // The reference's hook charges interrupt entry to the interrupted
        // instruction (shared/docs/md-timing.md): compare like with like.
        entry: EntryCharge::Interrupted,
        ..ProfileOptions::default()
    };
    let r = session(name, opts).run(&mut |_, _| {});
    assert!(r.stopped.is_none(), "{name}: {:?}", r.stopped);
    assert_eq!(r.frames.len(), 1200, "{name}: frames run");
    assert_eq!(r.frames[100].frame, 100, "frames are indexed by number");
    r
}

/// Our names as the reference writes them: a kept label `f:.x` is `.x`.
fn ref_name(n: &str) -> String {
    match n.find(":.") {
        Some(i) => n[i + 1..].to_string(),
        None => n.to_string(),
    }
}

/// "Frames 60 on".
const FROM_60: Range<u64> = 60..1200;
/// Platformer up to frame 1,070: the reference ends the 64 KB VRAM fill of
/// the 7th VDP_resetScreen (frame 1,071) at once, ours (and hardware)
/// takes ~760k cycles (crates/megadrive/README.md).
const PLATFORMER_BEFORE_FORK: Range<u64> = 60..1071;

/// Every figure of issue #15's criteria, measured over `frames`.
struct Agreement {
    /// Frames within max(1 %, 0.2 % of a frame) (information).
    frames_ok: usize,
    frames_n: usize,
    dropped_diff: Vec<u64>,
    /// (ours - reference) / reference over the frames compared.
    total_diff: f64,
    windows_ok: usize,
    windows_n: usize,
    /// Reference's top 10: (name, reference cycles, ours, relative diff).
    top: Vec<(String, f64, f64, f64)>,
    /// For each of `top`: our cycles in frames before `frames.end` and from
    /// it on, summed from the per-frame top-10 lists.
    top_split: Vec<(f64, f64)>,
    dma_ours: u64,
    dma_ref: u64,
}

impl Agreement {
    fn dma_diff(&self) -> f64 {
        (self.dma_ours as f64 - self.dma_ref as f64) / (self.dma_ref as f64).max(1.0)
    }
}

fn measure(name: &str, rules: ReferenceRules, frames: Range<u64>) -> Agreement {
    let r = profile(name, rules);
    let rf = reference_frames(name);
    assert_eq!(rf.len(), 1200, "{name}: reference frames");
    let ours_busy = |f: u64| r.frames[f as usize].busy_cycles;
    let ref_busy = |f: u64| rf[f as usize].busy;
    let frame_cycles = r.timing.cycles_per_frame;

    let mut frames_ok = 0;
    let mut worst: Vec<(f64, u64)> = Vec::new();
    for f in frames.clone() {
        let (a, b) = (ours_busy(f), ref_busy(f));
        if (a - b).abs() <= (0.01 * b).max(0.002 * frame_cycles) {
            frames_ok += 1;
        } else {
            worst.push(((a - b).abs() / b.max(1.0), f));
        }
    }
    worst.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));

    let dropped_diff: Vec<u64> = frames
        .clone()
        .filter(|&f| r.frames[f as usize].dropped != rf[f as usize].dropped)
        .collect();

    let total_ours: f64 = frames.clone().map(ours_busy).sum();
    let total_ref: f64 = frames.clone().map(ref_busy).sum();
    let total_diff = (total_ours - total_ref) / total_ref;

    let windows: Vec<(u64, f64)> = frames
        .clone()
        .step_by(10)
        .filter(|s| s + 10 <= frames.end)
        .map(|s| {
            let a: f64 = (s..s + 10).map(ours_busy).sum();
            let b: f64 = (s..s + 10).map(ref_busy).sum();
            (s, (a - b) / b)
        })
        .collect();
    let windows_ok = windows.iter().filter(|(_, d)| d.abs() <= 0.01).count();

    let top: Vec<(String, f64, f64, f64)> = reference_top(name, 10)
        .into_iter()
        .map(|(n, theirs)| {
            let ours: f64 = r
                .functions
                .iter()
                .filter(|f| ref_name(&f.name) == n)
                .map(|f| f.self_cycles)
                .sum();
            let d = (ours - theirs) / theirs;
            (n, theirs, ours, d)
        })
        .collect();

    let top_split: Vec<(f64, f64)> = top
        .iter()
        .map(|(n, ..)| {
            let mut split = (0.0, 0.0);
            for fr in &r.frames {
                for t in &fr.top {
                    if ref_name(&r.functions[t.function].name) == *n {
                        if fr.frame < frames.end {
                            split.0 += t.cycles;
                        } else {
                            split.1 += t.cycles;
                        }
                    }
                }
            }
            split
        })
        .collect();

    let dma_ours: u64 = frames
        .clone()
        .map(|f| {
            let x = &r.frames[f as usize];
            x.dma_vblank_bytes + x.dma_active_bytes
        })
        .sum();
    let dma_ref: u64 = frames.clone().map(|f| rf[f as usize].dma).sum();
    let fill_ours: u64 = frames
        .clone()
        .map(|f| r.frames[f as usize].dma_fill_copy_bytes)
        .sum();
    let fill_ref: u64 = frames.clone().map(|f| rf[f as usize].fill_copy).sum();

    let a = Agreement {
        frames_ok,
        frames_n: frames.clone().count(),
        dropped_diff,
        total_diff,
        windows_ok,
        windows_n: windows.len(),
        top,
        top_split,
        dma_ours,
        dma_ref,
    };
    let span = format!("frames {}-{}", frames.start, frames.end - 1);
    println!(
        "{name} ({span}): per-frame busy within max(1%, 0.2% of a frame): {}/{} ({:.1}%) [information]",
        a.frames_ok,
        a.frames_n,
        100.0 * a.frames_ok as f64 / a.frames_n as f64
    );
    for (_, f) in worst.iter().take(5) {
        let (x, y) = (ours_busy(*f), ref_busy(*f));
        println!(
            "  frame {f}: ours {x:.1} reference {y:.1} ({:+.2}%)",
            100.0 * (x - y) / y.max(1.0)
        );
    }
    println!(
        "{name}: dropped ours {} reference {} in {span}; flags that differ: {:?}",
        frames
            .clone()
            .filter(|&f| r.frames[f as usize].dropped)
            .count(),
        frames.clone().filter(|&f| rf[f as usize].dropped).count(),
        a.dropped_diff
    );
    println!(
        "{name}: busy total ours {total_ours:.1} reference {total_ref:.1} ({:+.3}%)",
        100.0 * a.total_diff
    );
    let worst_window = windows
        .iter()
        .max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()))
        .copied()
        .unwrap_or((0, 0.0));
    println!(
        "{name}: 10-frame windows within 1%: {}/{} ({:.1}%); worst frames {}-{} {:+.3}%",
        a.windows_ok,
        a.windows_n,
        100.0 * a.windows_ok as f64 / a.windows_n as f64,
        worst_window.0,
        worst_window.0 + 9,
        100.0 * worst_window.1
    );
    println!("{name}: reference top-10 busy functions (whole run), reference / ours:");
    for (n, theirs, ours, d) in &a.top {
        println!("  {n:40} {theirs:12.1} {ours:12.1} {:+.3}%", 100.0 * d);
    }
    println!(
        "{name}: 68000->VDP DMA bytes ours {} reference {} ({:+.3}%); fill/copy bytes ours {fill_ours} reference {fill_ref} [information]",
        a.dma_ours,
        a.dma_ref,
        100.0 * a.dma_diff()
    );
    a
}

/// A top-10 function the criterion is not applied to as it stands, with
/// the reason and the check made instead.
struct Exception {
    function: &'static str,
    reason: &'static str,
}

/// Platformer's `VDP_resetScreen`: its seventh call (frame 1,071) starts a
/// 64 KB VRAM fill that Genesis Plus GX ends at once (a signed/unsigned
/// comparison in its fill timing when the starting write lands in the last
/// ~190 mclk of an active line; the reference's frames.csv books 496 fill
/// bytes for it against ~66,000 for each of the other six), while ours
/// paces it as hardware does: 18 bytes per active line, 204 per blank line
/// in H40 (../shared/docs/md-timing.md), ~760k cycles, as both emulators
/// do for the first six calls (crates/megadrive/README.md, "Platformer's
/// fork"). The reference gives function cycles only for the whole run, so
/// the check is instead: our cycles before the fork are no more than the
/// reference's, and the reference's remainder (its seventh call) is less
/// than our seventh call (a fill cannot finish faster than the hardware
/// pace) but not negative.
const PLATFORMER_EXCEPTIONS: &[Exception] = &[Exception {
    function: "VDP_resetScreen",
    reason: "the reference ends the 64 KB VRAM fill of the 7th call (frame 1,071) at once",
}];

/// Issue #15's criteria, asserted on `name` over `frames`. Every failure
/// is reported together, with its figures.
fn assert_agrees(name: &str, frames: Range<u64>, exceptions: &[Exception]) {
    let a = measure(name, ReferenceRules::default(), frames);
    let mut fails = Vec::new();
    if !a.dropped_diff.is_empty() {
        fails.push(format!("dropped flags differ on {:?}", a.dropped_diff));
    }
    if a.total_diff.abs() > 0.005 {
        fails.push(format!("busy total {:+.3}% (> 0.5%)", 100.0 * a.total_diff));
    }
    if (a.windows_ok as f64) < 0.95 * a.windows_n as f64 {
        fails.push(format!(
            "10-frame windows within 1%: {}/{} (< 95%)",
            a.windows_ok, a.windows_n
        ));
    }
    for ((n, theirs, ours, d), (before, after)) in a.top.iter().zip(&a.top_split) {
        if let Some(e) = exceptions.iter().find(|e| e.function == n) {
            let rest = theirs - before;
            println!(
                "{name}: {n} [exception: {}]: ours before the fork {before:.1}, from it on {after:.1}; \
                 the reference's remainder after our first part {rest:.1}",
                e.reason
            );
            if !(rest >= 0.0 && rest < *after) {
                fails.push(format!(
                    "{n} (exception): reference {theirs:.1}, ours before the fork {before:.1}, \
                     from it on {after:.1}: expected 0 <= reference - before < after"
                ));
            }
            continue;
        }
        if d.abs() > 0.02 {
            fails.push(format!(
                "top-10 {n}: ours {ours:.1} reference {theirs:.1} ({:+.3}%, > 2%)",
                100.0 * d
            ));
        }
    }
    if a.dma_diff().abs() > 0.02 {
        fails.push(format!(
            "DMA bytes ours {} reference {} ({:+.3}%, > 2%)",
            a.dma_ours,
            a.dma_ref,
            100.0 * a.dma_diff()
        ));
    }
    assert!(fails.is_empty(), "{name}: {}", fails.join("; "));
}

#[test]
fn vnmd_agrees_with_the_reference() {
    assert_agrees("vnmd", FROM_60, &[]);
}

#[test]
fn platformer_agrees_with_the_reference_before_its_fork() {
    assert_agrees("platformer", PLATFORMER_BEFORE_FORK, PLATFORMER_EXCEPTIONS);
}

#[test]
fn castlecat2_agrees_with_the_reference() {
    assert_agrees("castlecat2", FROM_60, &[]);
}
/// Two of the reference emulator's timing rules (BUSREQ/RESET writes at the
/// instruction's start, the 68000's loss per Z80 bank access from the phase
/// before its wait, crates/megadrive/README.md) move the Z80's phase
/// towards the reference's. With the VDP port model of issue #15 they
/// raise vnmd's per-frame agreement (within max(1 %, 0.2 % of a frame))
/// from 990 to 1,130 of 1,140 frames; on platformer before the fork they no
/// longer help (990 without, 980 with, of 1,011): its per-frame misses are
/// not the Z80's phase that these rules move. What is asserted: vnmd's
/// per-frame agreement rises with the rules, and the rules change no
/// dropped-frame flag on either ROM.
#[test]
fn reference_rules_move_the_z80_phase_towards_the_reference() {
    let rules = ReferenceRules {
        busreq_at_insn_start: true,
        reset_at_insn_start: true,
        bank_stall_before_wait: true,
        ..ReferenceRules::default()
    };
    for (name, frames) in [("vnmd", FROM_60), ("platformer", PLATFORMER_BEFORE_FORK)] {
        let without = measure(name, ReferenceRules::default(), frames.clone());
        let with = measure(name, rules, frames);
        println!(
            "{name}: per-frame agreement without the rules {}/{}, with them {}/{}",
            without.frames_ok, without.frames_n, with.frames_ok, with.frames_n
        );
        if name == "vnmd" {
            assert!(
                with.frames_ok > without.frames_ok,
                "vnmd: the reference rules do not raise the per-frame agreement ({} <= {})",
                with.frames_ok,
                without.frames_ok
            );
        }
        assert!(
            with.dropped_diff.is_empty(),
            "{name} with the rules: dropped flags differ on {:?}",
            with.dropped_diff
        );
    }
}

/// An observer that takes no polling-loop passes in bulk: beside it the
/// profiler sees every instruction of SGDK's VBlank wait one by one.
struct EveryInstruction;
impl retroprof_megadrive::MdObserver for EveryInstruction {}

/// The profiler charging skipped VBlank-wait passes in bulk (its
/// `poll_passes`) gives the same report, byte for byte, as seeing every
/// instruction.
#[test]
fn bulk_charged_wait_passes_give_the_same_report() {
    for name in ["vnmd", "platformer"] {
        let opts = ProfileOptions {
            frames: 700,
            input: vec![INPUT.to_string()],
            ..ProfileOptions::default()
        };
        let s = session(name, opts);
        let json = |r: &Report| {
            let mut v = Vec::new();
            retroprof_mdprof::output::json(r, &mut v).expect("json");
            v
        };
        let bulk = json(&s.run(&mut |_, _| {}));
        let each = json(&s.run_with(&mut EveryInstruction, &mut |_, _| {}));
        assert!(bulk == each, "{name}: reports differ");
    }
}
