//! The diff model: two reports turned into matched functions, matched
//! frames and summary deltas. This is what `retroprof diff --json` writes
//! (schema [`SCHEMA`]); every output reads it.
//!
//! # Conventions
//! - "base" is the first report (the reference build), "new" the second.
//!   Every `delta` is `new - base`; every `change_pct` is
//!   `delta * 100 / base`, `None` when base is 0.
//! - Cycles are 68000 cycles as in the reports (master clocks / 7).
//! - Load figures (mean, percentiles, max) are over each report's counted
//!   frames from its first game loop on (all counted frames when no loop
//!   started), as `profile` defines `mean_load_pct`; load deltas are in
//!   percentage points.
//! - Percentiles are nearest-rank: the p-th percentile of n sorted values
//!   is the value at rank `ceil(p * n / 100)` (1-based), so p100 = max and
//!   every percentile is a load some frame really had.

use std::collections::BTreeMap;

use retroprof_mdprof::report::{FunctionStats, Report};
use serde::{Deserialize, Serialize};

use crate::DiffError;

/// Identifier of this JSON schema (`"schema"` field).
pub const SCHEMA: &str = "retroprof-diff/1";

/// How to compare.
#[derive(Clone, Debug)]
pub struct DiffOptions {
    /// How the two sides are named in messages (file names).
    pub base_label: String,
    pub new_label: String,
    /// Compare frame `n` of new with frame `n - (new first loop - base
    /// first loop)` of base instead of frame `n`.
    pub align_first_loop: bool,
    /// Frames listed in [`Diff::top_frames`].
    pub top_frames: usize,
}

impl Default for DiffOptions {
    fn default() -> Self {
        DiffOptions {
            base_label: "base".into(),
            new_label: "new".into(),
            align_first_loop: false,
            top_frames: 10,
        }
    }
}

/// The result of comparing two reports.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Diff {
    /// Always [`SCHEMA`].
    pub schema: String,
    pub base: Side,
    pub new: Side,
    /// `--align-first-loop` was given (and both sides have a game loop).
    pub aligned_first_loop: bool,
    /// New frame `n` is compared with base frame `n - frame_offset`
    /// (0 unless aligned).
    pub frame_offset: i64,
    /// What differs between the two runs besides the code (inputs, frames,
    /// region, options, ROM title, first loop, symbols).
    pub warnings: Vec<String>,
    pub summary: SummaryDelta,
    /// Every function of either side, matched by name, sorted by the size
    /// of the change in self cycles (absolute value, largest first), then
    /// by name.
    pub functions: Vec<FunctionDelta>,
    /// Functions matched by base name because only a compiler clone suffix
    /// changed (`.isra.0`, `.constprop.N`, `.lto_priv.N`, `.part.N`,
    /// `.cold`), in name order.
    pub renamed: Vec<Renamed>,
    /// Functions only in new / only in base, in name order.
    pub new_functions: Vec<String>,
    pub removed_functions: Vec<String>,
    /// Matched frames (counted on both sides), in order of the new frame.
    pub frames: Vec<FrameDelta>,
    /// New frame numbers of the frames whose load changed most (absolute
    /// change, largest first, ties by frame), at most `top_frames`.
    pub top_frames: Vec<u64>,
}

/// One side of the comparison.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Side {
    /// As given on the command line.
    pub label: String,
    /// The report's `rom.path`, `rom.title`, `rom.bytes`, `rom.region`.
    pub rom_path: String,
    pub title: String,
    pub rom_bytes: u64,
    pub region: String,
    /// `elf`, `nm` or `none`.
    pub symbols: String,
    pub frames_run: u64,
    pub from: u64,
    pub first_loop_frame: Option<u64>,
    /// Busy + idle cycles over the counted frames.
    pub total_cycles: f64,
}

/// A figure on both sides.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    pub base: f64,
    pub new: f64,
    pub delta: f64,
    pub change_pct: Option<f64>,
}

/// Differences below this fraction of the larger value are rounding, not
/// change: a figure read back from JSON can differ from the one computed
/// in memory in its last bit (serde_json parses floats to within 1 ulp);
/// one master clock in a whole run is far above it (1 in 10^12 cycles).
pub const REL_EPSILON: f64 = 1e-12;

impl Metric {
    pub fn new(base: f64, new: f64) -> Metric {
        let delta = new - base;
        if delta.abs() <= REL_EPSILON * base.abs().max(new.abs()) {
            return Metric {
                base,
                new,
                delta: 0.0,
                change_pct: if base != 0.0 { Some(0.0) } else { None },
            };
        }
        Metric {
            base,
            new,
            delta,
            change_pct: change_pct(base, new),
        }
    }
}

fn change_pct(base: f64, new: f64) -> Option<f64> {
    if base != 0.0 {
        Some((new - base) * 100.0 / base)
    } else {
        None
    }
}

/// Whole-run figures (each side's `summary`, load percentiles computed
/// from its frames).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SummaryDelta {
    pub mean_load_pct: Metric,
    pub p50_load_pct: Metric,
    pub p95_load_pct: Metric,
    pub p99_load_pct: Metric,
    pub max_load_pct: Metric,
    pub dropped_frames: Metric,
    /// New frames dropped whose matched base frame was not dropped.
    pub newly_dropped: Vec<u64>,
    pub busy_cycles: Metric,
    pub total_cycles: Metric,
    pub dma_vblank_bytes: Metric,
    pub dma_active_bytes: Metric,
    pub frames_with_active_dma: Metric,
    pub dma_freeze_cycles: Metric,
    pub fifo_wait_cycles: Metric,
    pub refresh_cycles: Metric,
    pub interrupts: Metric,
    pub instructions: Metric,
}

impl SummaryDelta {
    /// The rows the terminal, CSV and HTML outputs show: name, figure,
    /// unit (`%` for load in percent, `` for counts, `cycles`, `bytes`).
    pub fn rows(&self) -> Vec<(&'static str, &Metric, &'static str)> {
        vec![
            ("load mean", &self.mean_load_pct, "%"),
            ("load p50", &self.p50_load_pct, "%"),
            ("load p95", &self.p95_load_pct, "%"),
            ("load p99", &self.p99_load_pct, "%"),
            ("load max", &self.max_load_pct, "%"),
            ("dropped frames", &self.dropped_frames, ""),
            ("busy cycles", &self.busy_cycles, "cycles"),
            ("DMA bytes in VBlank", &self.dma_vblank_bytes, "bytes"),
            (
                "DMA bytes in active display",
                &self.dma_active_bytes,
                "bytes",
            ),
            ("frames with active DMA", &self.frames_with_active_dma, ""),
            ("frozen by DMA", &self.dma_freeze_cycles, "cycles"),
            ("FIFO wait", &self.fifo_wait_cycles, "cycles"),
            ("refresh", &self.refresh_cycles, "cycles"),
            ("interrupts", &self.interrupts, ""),
            ("instructions", &self.instructions, ""),
        ]
    }
}

/// How a function was matched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Match {
    /// Same name on both sides.
    Same,
    /// Same base name, different compiler clone suffix.
    Clone,
    /// Only in new.
    New,
    /// Only in base.
    Removed,
}

/// One function on both sides.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FunctionDelta {
    /// The new name (the base name for a removed function).
    pub name: String,
    /// The base name when it differs (clones), else `None`.
    pub base_name: Option<String>,
    #[serde(rename = "match")]
    pub matched: Match,
    /// Idle function on either side (its time is the wait).
    pub idle: bool,
    pub self_cycles: Metric,
    pub inclusive_cycles: Metric,
    pub calls: Metric,
    pub cycles_per_call: Metric,
    /// `self_cycles.delta` as a percentage of the base's total cycles.
    pub delta_pct_of_all: f64,
}

/// A function matched by base name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Renamed {
    pub base: String,
    pub new: String,
}

/// One matched frame.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FrameDelta {
    /// Frame number in new.
    pub frame: u64,
    /// Frame number in base.
    pub base_frame: u64,
    pub load_pct: Metric,
    pub busy_cycles: Metric,
    pub dropped_base: bool,
    pub dropped_new: bool,
    pub dma_active_bytes: Metric,
}

/// The gcc clone suffixes recognised (each optionally followed by `.N`).
pub const CLONE_SUFFIXES: &[&str] = &["isra", "constprop", "part", "lto_priv", "cold"];

/// `name` without compiler clone suffixes (`VDP_waitVBlank.part.0` ->
/// `VDP_waitVBlank`, `f.constprop.0.isra.0` -> `f`; also inside an
/// inlined function's display name `g (inlined in f.isra.0)`).
pub fn base_name(name: &str) -> String {
    let b = name.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut out = String::with_capacity(name.len());
    let mut i = 0;
    'outer: while i < b.len() {
        if b[i] == b'.' && i > 0 && ident(b[i - 1]) {
            for s in CLONE_SUFFIXES {
                let w = s.as_bytes();
                if b[i + 1..].starts_with(w) {
                    let mut j = i + 1 + w.len();
                    if j + 1 < b.len() && b[j] == b'.' && b[j + 1].is_ascii_digit() {
                        j += 1;
                        while j < b.len() && b[j].is_ascii_digit() {
                            j += 1;
                        }
                    }
                    if j == b.len() || !ident(b[j]) {
                        i = j;
                        continue 'outer;
                    }
                }
            }
        }
        let c = name[i..].chars().next().expect("char boundary");
        out.push(c);
        i += c.len_utf8();
    }
    out
}

/// Nearest-rank percentile of ascending `sorted` (module docs); 0 when
/// empty. The same function `profile` computes its p50/p95/p99 with.
pub use retroprof_mdprof::report::percentile;

/// The loads the summary's mean and max describe: counted frames from the
/// first game loop on (all counted frames if none), ascending.
pub fn summary_loads(r: &Report) -> Vec<f64> {
    let mut v: Vec<f64> = r
        .counted_frames()
        .filter(|f| !matches!(r.summary.first_loop_frame, Some(fl) if f.frame < fl))
        .map(|f| f.load_pct)
        .collect();
    v.sort_by(f64::total_cmp);
    v
}

fn side(label: &str, r: &Report) -> Side {
    Side {
        label: label.to_string(),
        rom_path: r.rom.path.clone(),
        title: r.rom.title.trim().to_string(),
        rom_bytes: r.rom.bytes,
        region: r.rom.region.clone(),
        symbols: r.symbols.source.clone(),
        frames_run: r.summary.frames_run,
        from: r.options.from,
        first_loop_frame: r.summary.first_loop_frame,
        total_cycles: r.summary.total_cycles,
    }
}

fn summary(base: &Report, new: &Report) -> SummaryDelta {
    let (b, n) = (&base.summary, &new.summary);
    let (lb, ln) = (summary_loads(base), summary_loads(new));
    let m = |x: f64, y: f64| Metric::new(x, y);
    let u = |x: u64, y: u64| Metric::new(x as f64, y as f64);
    SummaryDelta {
        mean_load_pct: m(b.mean_load_pct, n.mean_load_pct),
        p50_load_pct: m(percentile(&lb, 50.0), percentile(&ln, 50.0)),
        p95_load_pct: m(percentile(&lb, 95.0), percentile(&ln, 95.0)),
        p99_load_pct: m(percentile(&lb, 99.0), percentile(&ln, 99.0)),
        max_load_pct: m(b.max_load_pct, n.max_load_pct),
        dropped_frames: u(b.dropped_frames, n.dropped_frames),
        newly_dropped: Vec::new(),
        busy_cycles: m(b.busy_cycles, n.busy_cycles),
        total_cycles: m(b.total_cycles, n.total_cycles),
        dma_vblank_bytes: u(b.dma_vblank_bytes, n.dma_vblank_bytes),
        dma_active_bytes: u(b.dma_active_bytes, n.dma_active_bytes),
        frames_with_active_dma: u(b.frames_with_active_dma, n.frames_with_active_dma),
        dma_freeze_cycles: m(b.dma_freeze_cycles, n.dma_freeze_cycles),
        fifo_wait_cycles: m(b.fifo_wait_cycles, n.fifo_wait_cycles),
        refresh_cycles: m(b.refresh_cycles, n.refresh_cycles),
        interrupts: u(b.interrupts, n.interrupts),
        instructions: u(b.instructions, n.instructions),
    }
}

/// Pair functions: same name first, then same base name (clones); pairs
/// within a group in address order. Returns (base index, new index) pairs
/// with the match kind; unmatched indices appear with `None` on the other
/// side.
pub fn match_functions(
    base: &[FunctionStats],
    new: &[FunctionStats],
) -> Vec<(Option<usize>, Option<usize>, Match)> {
    let mut out = Vec::new();
    let mut used_b = vec![false; base.len()];
    let mut used_n = vec![false; new.len()];
    let pair = |key: &dyn Fn(&FunctionStats) -> String,
                used_b: &mut Vec<bool>,
                used_n: &mut Vec<bool>,
                kind: Match,
                out: &mut Vec<(Option<usize>, Option<usize>, Match)>| {
        let mut groups: BTreeMap<String, (Vec<usize>, Vec<usize>)> = BTreeMap::new();
        for (i, f) in base.iter().enumerate().filter(|(i, _)| !used_b[*i]) {
            groups.entry(key(f)).or_default().0.push(i);
        }
        for (i, f) in new.iter().enumerate().filter(|(i, _)| !used_n[*i]) {
            groups.entry(key(f)).or_default().1.push(i);
        }
        for (_, (mut bs, mut ns)) in groups {
            bs.sort_by_key(|&i| (base[i].addr, i));
            ns.sort_by_key(|&i| (new[i].addr, i));
            for (&bi, &ni) in bs.iter().zip(ns.iter()) {
                used_b[bi] = true;
                used_n[ni] = true;
                out.push((Some(bi), Some(ni), kind));
            }
        }
    };
    pair(
        &|f| f.name.clone(),
        &mut used_b,
        &mut used_n,
        Match::Same,
        &mut out,
    );
    pair(
        &|f| base_name(&f.name),
        &mut used_b,
        &mut used_n,
        Match::Clone,
        &mut out,
    );
    for (i, u) in used_b.iter().enumerate() {
        if !u {
            out.push((Some(i), None, Match::Removed));
        }
    }
    for (i, u) in used_n.iter().enumerate() {
        if !u {
            out.push((None, Some(i), Match::New));
        }
    }
    out
}

fn function_delta(
    b: Option<&FunctionStats>,
    n: Option<&FunctionStats>,
    kind: Match,
    total_base: f64,
) -> FunctionDelta {
    let z = FunctionStats::default();
    let (bf, nf) = (b.unwrap_or(&z), n.unwrap_or(&z));
    let self_cycles = Metric::new(bf.self_cycles, nf.self_cycles);
    let name = n.or(b).map(|f| f.name.clone()).unwrap_or_default();
    FunctionDelta {
        base_name: match (b, n) {
            (Some(b), Some(n)) if b.name != n.name => Some(b.name.clone()),
            _ => None,
        },
        name,
        matched: kind,
        idle: bf.idle || nf.idle,
        self_cycles,
        inclusive_cycles: Metric::new(bf.inclusive_cycles, nf.inclusive_cycles),
        calls: Metric::new(bf.calls as f64, nf.calls as f64),
        cycles_per_call: Metric::new(bf.cycles_per_call, nf.cycles_per_call),
        delta_pct_of_all: if total_base > 0.0 {
            self_cycles.delta * 100.0 / total_base
        } else {
            0.0
        },
    }
}

fn differs<T: PartialEq + std::fmt::Debug>(
    w: &mut Vec<String>,
    what: &str,
    b: &T,
    n: &T,
    why: &str,
) {
    if b != n {
        w.push(format!("{what} differ: base {b:?}, new {n:?}{why}"));
    }
}

/// Compare two reports. Errors when the comparison would be nonsense
/// (no function in common although both have symbols); everything else
/// that differs between the runs becomes a warning.
pub fn diff(base: &Report, new: &Report, opts: &DiffOptions) -> Result<Diff, DiffError> {
    let mut warnings = Vec::new();
    let (bo, no) = (&base.options, &new.options);
    differs(
        &mut warnings,
        "ROM titles",
        &base.rom.title.trim(),
        &new.rom.title.trim(),
        " (are these builds of the same game?)",
    );
    differs(
        &mut warnings,
        "regions",
        &base.rom.region,
        &new.rom.region,
        " (frame lengths and loads are not comparable)",
    );
    differs(
        &mut warnings,
        "frames run",
        &base.summary.frames_run,
        &new.summary.frames_run,
        " (summaries cover different spans)",
    );
    differs(&mut warnings, "--frames", &bo.frames, &no.frames, "");
    differs(&mut warnings, "--from", &bo.from, &no.from, "");
    differs(
        &mut warnings,
        "pad 1 inputs",
        &bo.input,
        &no.input,
        " (the game did different things)",
    );
    differs(
        &mut warnings,
        "pad 2 inputs",
        &bo.input2,
        &no.input2,
        " (the game did different things)",
    );
    differs(&mut warnings, "idle functions", &bo.idle, &no.idle, "");
    differs(
        &mut warnings,
        "idle functions found",
        &bo.idle_found,
        &no.idle_found,
        "",
    );
    differs(&mut warnings, "--entry", &bo.entry, &no.entry, "");
    differs(
        &mut warnings,
        "reference rules",
        &bo.reference_rules,
        &no.reference_rules,
        "",
    );
    differs(
        &mut warnings,
        "--keep-labels",
        &base.symbols.keep_labels,
        &new.symbols.keep_labels,
        " (function names are not comparable)",
    );
    differs(
        &mut warnings,
        "symbol sources",
        &base.symbols.source,
        &new.symbols.source,
        " (inlined functions and names may not match)",
    );
    for (label, r) in [(&opts.base_label, base), (&opts.new_label, new)] {
        if r.symbols.source == "none" {
            warnings.push(format!(
                "{label}: no symbols, functions are address ranges: a rebuild moves code, \
                 so the function comparison means little (keep symbol.txt or rom.out next to the ROM)"
            ));
        }
        if let Some(s) = &r.stopped {
            warnings.push(format!("{label}: {s}"));
        }
    }
    // Functions.
    let pairs = match_functions(&base.functions, &new.functions);
    let common = pairs
        .iter()
        .filter(|(b, n, _)| b.is_some() && n.is_some())
        .count();
    let both_named = base.symbols.source != "none" && new.symbols.source != "none";
    if both_named && common == 0 && !base.functions.is_empty() && !new.functions.is_empty() {
        return Err(DiffError::Incompatible(format!(
            "{} ({:?}) and {} ({:?}) have no function name in common: \
             they are profiles of different programs",
            opts.base_label,
            base.rom.title.trim(),
            opts.new_label,
            new.rom.title.trim()
        )));
    }
    let total_base = if base.summary.total_cycles > 0.0 {
        base.summary.total_cycles
    } else {
        new.summary.total_cycles
    };
    let mut functions: Vec<FunctionDelta> = pairs
        .iter()
        .map(|&(b, n, k)| {
            function_delta(
                b.map(|i| &base.functions[i]),
                n.map(|i| &new.functions[i]),
                k,
                total_base,
            )
        })
        .collect();
    functions.sort_by(|a, b| {
        b.self_cycles
            .delta
            .abs()
            .total_cmp(&a.self_cycles.delta.abs())
            .then_with(|| a.name.cmp(&b.name))
            .then_with(|| a.base_name.cmp(&b.base_name))
    });
    let mut renamed: Vec<Renamed> = functions
        .iter()
        .filter(|f| f.matched == Match::Clone)
        .map(|f| Renamed {
            base: f.base_name.clone().unwrap_or_default(),
            new: f.name.clone(),
        })
        .collect();
    renamed.sort_by(|a, b| a.new.cmp(&b.new).then(a.base.cmp(&b.base)));
    let list = |k: Match| {
        let mut v: Vec<String> = functions
            .iter()
            .filter(|f| f.matched == k)
            .map(|f| f.name.clone())
            .collect();
        v.sort();
        v
    };
    let new_functions = list(Match::New);
    let removed_functions = list(Match::Removed);
    // Frames.
    let (bl, nl) = (base.summary.first_loop_frame, new.summary.first_loop_frame);
    let mut offset = 0i64;
    let mut aligned = false;
    if opts.align_first_loop {
        match (bl, nl) {
            (Some(b), Some(n)) => {
                offset = n as i64 - b as i64;
                aligned = true;
            }
            _ => warnings.push(format!(
                "--align-first-loop: no game loop in {} (frames compared by number)",
                if bl.is_none() {
                    &opts.base_label
                } else {
                    &opts.new_label
                }
            )),
        }
    } else if bl != nl {
        let f = |x: Option<u64>| x.map_or("never".to_string(), |v| format!("in frame {v}"));
        warnings.push(format!(
            "the first game loop starts {} in base and {} in new: frames are compared by number, \
             so each frame is compared with one {} frame(s) away in the game; \
             use --align-first-loop",
            f(bl),
            f(nl),
            match (bl, nl) {
                (Some(b), Some(n)) => b.abs_diff(n).to_string(),
                _ => "an unknown number of".to_string(),
            }
        ));
    }
    let mut frames = Vec::new();
    let mut newly_dropped = Vec::new();
    let after = |r: &Report, f: u64| !matches!(r.summary.first_loop_frame, Some(fl) if f < fl);
    for nf in new.counted_frames() {
        let bn = nf.frame as i64 - offset;
        if bn < 0 {
            continue;
        }
        let Some(bf) = base.frame(bn as u64).filter(|f| f.counted) else {
            continue;
        };
        if nf.dropped && !bf.dropped && after(new, nf.frame) && after(base, bf.frame) {
            newly_dropped.push(nf.frame);
        }
        frames.push(FrameDelta {
            frame: nf.frame,
            base_frame: bf.frame,
            load_pct: Metric::new(bf.load_pct, nf.load_pct),
            busy_cycles: Metric::new(bf.busy_cycles, nf.busy_cycles),
            dropped_base: bf.dropped,
            dropped_new: nf.dropped,
            dma_active_bytes: Metric::new(bf.dma_active_bytes as f64, nf.dma_active_bytes as f64),
        });
    }
    if frames.is_empty() && !new.frames.is_empty() && !base.frames.is_empty() {
        warnings.push("no frame is counted in both reports: no per-frame comparison".into());
    }
    let mut order: Vec<&FrameDelta> = frames.iter().collect();
    order.sort_by(|a, b| {
        b.load_pct
            .delta
            .abs()
            .total_cmp(&a.load_pct.delta.abs())
            .then(a.frame.cmp(&b.frame))
    });
    let top_frames = order
        .iter()
        .filter(|f| f.load_pct.delta != 0.0)
        .take(opts.top_frames)
        .map(|f| f.frame)
        .collect();
    let mut sm = summary(base, new);
    sm.newly_dropped = newly_dropped;
    Ok(Diff {
        schema: SCHEMA.to_string(),
        base: side(&opts.base_label, base),
        new: side(&opts.new_label, new),
        aligned_first_loop: aligned,
        frame_offset: offset,
        warnings,
        summary: sm,
        functions,
        renamed,
        new_functions,
        removed_functions,
        frames,
        top_frames,
    })
}
