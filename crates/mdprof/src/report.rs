//! The report model: everything one profiling run measured, in plain data.
//!
//! [`Report`] is what [`crate::Session::run`] returns and what every
//! output reads: the terminal report, the CSV files, the JSON file (which is
//! this structure serialised with serde, schema [`SCHEMA`]), the stack
//! profile writers, and the HTML and trace writers.
//!
//! # Units and conventions
//! - Cycles are 68000 cycles = master clocks / 7 (design-notes.md "One
//!   timebase"), kept as `f64` because a frame is 128,005.7 cycles in NTSC;
//!   the exact master-clock figures are kept beside them where they are
//!   summed (`*_mclk`).
//! - Frames count from 0. A frame starts at the first VBlank line (line 224
//!   in V28, 240 in V30) and ends after the last active line: the system's
//!   frame boundary (`retroprof_megadrive::system`), the same as Genesis Plus
//!   GX, so the VBlank that lets a new game loop start opens the frame that
//!   loop runs in.
//! - Function references are indices into [`Report::functions`].
//! - Lines: 0 is the first active line; VBlank lines are `active_lines..lines`
//!   (224..261 in NTSC V28).
//! - Everything is deterministic: vectors are in a documented order with
//!   tie-breaks, no wall-clock values are stored.

use serde::{Deserialize, Serialize};

/// Identifier of this JSON schema (`"schema"` field).
pub const SCHEMA: &str = "retroprof-mdprof-report/1";

/// One profiling run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Always [`SCHEMA`].
    pub schema: String,
    pub rom: RomInfo,
    pub symbols: SymbolsInfo,
    pub options: RunOptions,
    pub timing: Timing,
    pub summary: Summary,
    /// Every function that was charged at least one cycle or called at
    /// least once, sorted by self cycles descending, then by address, then
    /// by name. Index = function reference used elsewhere in the report.
    pub functions: Vec<FunctionStats>,
    /// One record per frame run (statistics frames and the frames before
    /// `--from` alike; [`FrameRecord::counted`] tells them apart), in order.
    pub frames: Vec<FrameRecord>,
    /// The `--watch` values, in the order given; each frame's
    /// [`FrameRecord::watch`] has one value per entry.
    pub watches: Vec<WatchSpec>,
    /// Frame numbers of the worst counted gameplay frames
    /// ([`crate::gameplay`]; all counted frames with
    /// `options.include_loading`), highest busy cycles first, ties by frame
    /// number, at most `options.top`.
    pub worst_frames: Vec<u64>,
    /// Weighted call stacks (see [`StackSample`]), sorted by stack.
    pub stacks: Vec<StackSample>,
    /// Things the user should know (symbols missing or mismatched, idle
    /// function not found, emulation stopped early).
    pub warnings: Vec<String>,
    /// Set when the emulation stopped before `options.frames` (the error
    /// message); the report then covers the frames that ran.
    pub stopped: Option<String>,
    /// The game's own KDebug markers (timer spans, messages, halts;
    /// [`crate::kdebug`]); absent when it wrote none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kdebug: Option<crate::kdebug::KDebugReport>,
    /// Costs per instruction address and per source line
    /// ([`crate::code`]); not in the JSON (the `--lines` CSV has them).
    #[serde(skip)]
    pub code: crate::code::CodeProfile,
}

/// The ROM profiled.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RomInfo {
    /// As given on the command line (or `<built-in demo>`).
    pub path: String,
    pub bytes: u64,
    /// Header title (overseas name, else domestic).
    pub title: String,
    /// `NTSC` or `PAL` and the region in force (`JapanNtsc`, `UsaNtsc`,
    /// `EuropePal`).
    pub region: String,
    pub checksum_ok: bool,
}

/// Where function names came from.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SymbolsInfo {
    /// `elf`, `nm` or `none` (then functions are 256-byte address ranges
    /// named `rom_0x001200`, `ram_0xff0000`).
    pub source: String,
    /// The file read (empty when `none`).
    pub path: String,
    /// Other files consulted (an nm listing next to the ELF).
    pub also_read: Vec<String>,
    /// Code symbols that start functions.
    pub function_symbols: u64,
    /// DWARF present: inlined functions are reported under their own name.
    pub dwarf: bool,
    /// Local labels (`.loop`) kept as functions of their own.
    pub keep_labels: bool,
}

/// The options the run used.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunOptions {
    pub frames: u64,
    /// Statistics start at this frame.
    pub from: u64,
    pub input: Vec<String>,
    pub input2: Vec<String>,
    /// Idle function names asked for (defaults: `VDP_waitVBlank`,
    /// `VDP_waitVSync`).
    pub idle: Vec<String>,
    /// The idle functions found in the symbols (functions matched by name
    /// or alias, also as compiler clones such as `VDP_waitVBlank.part.0`).
    pub idle_found: Vec<String>,
    pub top: usize,
    /// Where interrupt entry processing was charged: `handler` (default)
    /// or `interrupted` (`--entry`). Absent in older reports: `handler`.
    #[serde(default = "default_entry")]
    pub entry: String,
    /// The reference emulator's timing rules emulated instead of the
    /// hardware's (`--reference-rule`, kebab-case names such as
    /// `busreq-at-insn-start`); absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reference_rules: Vec<String>,
    /// `--stop-on-halt`: the run ends with the frame in which the game
    /// called `KDebug_Halt()` (absent when off).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stop_on_halt: bool,
    /// `--include-loading`: no frame is set aside as loading
    /// ([`crate::gameplay`]); absent when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub include_loading: bool,
}

fn default_entry() -> String {
    "handler".to_string()
}

/// Frame timing of the run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Timing {
    pub pal: bool,
    /// Master clocks per frame (896,040 NTSC; md-timing.md).
    pub mclk_per_frame: u64,
    /// 68000 cycles per frame (mclk / 7).
    pub cycles_per_frame: f64,
    pub lines: u16,
    pub active_lines: u16,
}

/// Whole-run figures over the counted frames (`from..`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub frames_run: u64,
    /// Frames in the statistics (`frames_run - from`, at least 0).
    pub frames_counted: u64,
    pub busy_cycles: f64,
    pub idle_cycles: f64,
    /// Busy + idle (all the CPU did; STOP time is counted as idle).
    pub total_cycles: f64,
    /// Mean load over the same frames as `max_load_pct`: the counted
    /// gameplay frames ([`crate::gameplay`]; all counted frames with
    /// `options.include_loading`).
    pub mean_load_pct: f64,
    /// Highest load of a counted gameplay frame (boot and loading frames,
    /// which are 100 % busy, set aside; see [`crate::gameplay`]).
    pub max_load_pct: f64,
    /// First such frame with the highest load (`None` with no frames).
    pub max_load_frame: Option<u64>,
    /// Load percentiles over the same frames as `mean_load_pct`,
    /// nearest-rank ([`percentile`]: a load some frame really had; p100 is
    /// `max_load_pct`). Absent in older reports: 0.
    #[serde(default)]
    pub p50_load_pct: f64,
    #[serde(default)]
    pub p95_load_pct: f64,
    #[serde(default)]
    pub p99_load_pct: f64,
    /// Counted dropped gameplay frames (0 when no game loop was ever
    /// detected; with `options.include_loading`, every counted dropped
    /// frame). Loading frames' records still say `dropped`.
    pub dropped_frames: u64,
    /// Those frames, in order.
    pub dropped: Vec<u64>,
    /// Counted frames set aside as loading ([`crate::gameplay`]): the sum
    /// of the five reasons below (0 with `options.include_loading`).
    #[serde(default)]
    pub loading_frames: u64,
    /// ... before the first game loop.
    #[serde(default)]
    pub loading_boot_frames: u64,
    /// ... with the display disabled during all active lines.
    #[serde(default)]
    pub loading_display_off_frames: u64,
    /// ... with nothing but black on screen.
    #[serde(default)]
    pub loading_black_frames: u64,
    /// ... in a stall (a long run of frames without a VBlank wait).
    #[serde(default)]
    pub loading_stall_frames: u64,
    /// ... marked as loading by the game.
    #[serde(default)]
    pub loading_marked_frames: u64,
    /// Dropped frames among the loading frames (0 when no game loop was
    /// ever detected).
    #[serde(default)]
    pub dropped_loading_frames: u64,
    /// First frame in which a game loop started (`None`: never).
    pub first_loop_frame: Option<u64>,
    pub loops: u64,
    pub dma_vblank_bytes: u64,
    pub dma_active_bytes: u64,
    pub dma_fill_copy_bytes: u64,
    /// Counted frames with 68000 -> VDP DMA during active display.
    pub frames_with_active_dma: u64,
    /// Highest active-display line with DMA (`None`: none).
    pub max_dma_last_line: Option<u16>,
    pub dma_freeze_cycles: f64,
    pub fifo_wait_cycles: f64,
    pub refresh_cycles: f64,
    /// Cycles the 68000 waited while the Z80 used its bus (absent in
    /// reports written before the field existed: 0).
    #[serde(default)]
    pub z80_stall_cycles: f64,
    pub interrupts: u64,
    pub instructions: u64,
}

/// One function of the flat and inclusive profile.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FunctionStats {
    /// Display name. An inlined function is shown as
    /// `inlined_name (inlined in caller)`; see [`FunctionStats::inlined_into`].
    pub name: String,
    /// Start address of the (physical) function, 24-bit.
    pub addr: u32,
    /// Source location of the function start, when known.
    pub file: Option<String>,
    pub line: Option<u32>,
    /// For a function the compiler inlined (DWARF): the name of the
    /// physical function whose code it is part of.
    pub inlined_into: Option<String>,
    /// The DWARF inline chain, root (outermost inlined function) first,
    /// when this entry stands for inlined code.
    pub inline_chain: Vec<String>,
    /// `symbol`, `label` (kept local label), `bucket` (address range, no
    /// symbols), `unknown`, `interrupt-entry` (unused: interrupt entry is
    /// charged to the handler).
    pub origin: String,
    /// Time inside it counts as idle.
    pub idle: bool,
    /// Cycles of instructions at its addresses (plus exception processing
    /// when it is an exception handler), over the counted frames.
    pub self_cycles: f64,
    /// Cycles while it was on the shadow call stack (itself included,
    /// recursion counted once), over the whole run.
    pub inclusive_cycles: f64,
    /// JSR/BSR calls to it plus exception entries to it, whole run.
    pub calls: u64,
    pub pct_all: f64,
    /// Percent of busy cycles; 0 for idle functions.
    pub pct_busy: f64,
    /// self_cycles / calls (0 when never called).
    pub cycles_per_call: f64,
    /// inclusive_cycles / calls (0 when never called).
    pub inclusive_per_call: f64,
}

/// One `--watch` entry.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WatchSpec {
    /// As given (`vblank_count`, `0xFF0010:w`).
    pub spec: String,
    /// Symbol name, when given by name.
    pub symbol: Option<String>,
    /// 24-bit address read.
    pub addr: u32,
    /// Bytes read: 1, 2 or 4 (big-endian, unsigned).
    pub size: u8,
}

/// A function's share of one frame.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FrameFunction {
    /// Index into [`Report::functions`].
    pub function: usize,
    pub cycles: f64,
}

/// Everything measured in one frame.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FrameRecord {
    pub frame: u64,
    /// In the statistics (`frame >= from`).
    pub counted: bool,
    /// Cycles outside the idle functions (including interrupt handlers and
    /// interrupt entry).
    pub busy_cycles: f64,
    /// Cycles inside the idle functions, plus STOP time.
    pub idle_cycles: f64,
    /// Nominal frame length (128,005.7 NTSC).
    pub frame_cycles: f64,
    /// busy / frame * 100.
    pub load_pct: f64,
    /// No new game loop started during this frame.
    pub dropped: bool,
    /// Why the frame is not gameplay ([`crate::gameplay`]); absent for
    /// gameplay frames. Set whether or not `--include-loading` counts it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loading: Option<crate::gameplay::Loading>,
    /// Game loops that started in this frame (normally 0 or 1).
    pub loop_starts: u32,
    /// Line where the game entered the idle wait (the first time in this
    /// frame), `None` if it did not.
    pub idle_enter_line: Option<u16>,
    /// Line where the first game loop of this frame started.
    pub loop_start_line: Option<u16>,
    /// 68000 -> VDP DMA bytes moved during VBlank / active display
    /// (by DMAs started in this frame).
    pub dma_vblank_bytes: u64,
    pub dma_active_bytes: u64,
    /// VRAM fill and copy bytes (no 68000 bus use), counted apart.
    pub dma_fill_copy_bytes: u64,
    /// Last active-display line in which 68000 -> VDP DMA bytes moved.
    pub dma_last_line: Option<u16>,
    /// Cycles the 68000 was frozen by its DMAs.
    pub dma_freeze_cycles: f64,
    /// Cycles the 68000 waited on the VDP FIFO (or a fill/copy) at
    /// data-port accesses.
    pub fifo_wait_cycles: f64,
    /// DRAM refresh penalty cycles.
    pub refresh_cycles: f64,
    /// Cycles the 68000 waited while the Z80 used its bus (its banked
    /// reads and writes of the 68000 side), charged at the instruction
    /// boundary after them (absent in older reports: 0).
    #[serde(default)]
    pub z80_stall_cycles: f64,
    /// Interrupts taken (exception processing of interrupt kind).
    pub interrupts: u32,
    /// 68000 instructions executed.
    pub instructions: u64,
    /// The frame's busiest non-idle functions (at most `options.top`),
    /// by cycles descending, ties by function index.
    pub top: Vec<FrameFunction>,
    /// `--watch` values read at the end of the frame, one per
    /// [`Report::watches`] entry.
    pub watch: Vec<u32>,
    /// KDebug timer spans that ended in this frame (absent when 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub kdebug_timer_spans: u64,
    /// Their whole 68000 cycles, summed (absent when 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub kdebug_timer_cycles: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// One distinct call stack and the cycles spent with it on top.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StackSample {
    /// Function indices, root first, leaf (the function at the PC) last.
    /// An interrupt handler starts a new root below the interrupted stack:
    /// the stack is `interrupted...; handler; ...`.
    pub stack: Vec<usize>,
    /// Master clocks with this stack (whole run).
    pub mclk: u64,
}

/// Nearest-rank percentile of ascending `sorted`: the value at rank
/// `ceil(p * n / 100)` (1-based), clamped to 1..=n; 0 when empty.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let n = sorted.len();
    let rank = ((p / 100.0) * n as f64).ceil() as usize;
    sorted[rank.clamp(1, n) - 1]
}

impl Report {
    /// Frames in the statistics.
    pub fn counted_frames(&self) -> impl Iterator<Item = &FrameRecord> {
        self.frames.iter().filter(|f| f.counted)
    }

    /// Frames in the load statistics: counted frames that are gameplay, or
    /// all counted frames with `options.include_loading`.
    pub fn load_frames(&self) -> impl Iterator<Item = &FrameRecord> {
        let all = self.options.include_loading;
        self.frames
            .iter()
            .filter(move |f| f.counted && (all || f.loading.is_none()))
    }

    /// Record of frame `n`, if it ran.
    pub fn frame(&self, n: u64) -> Option<&FrameRecord> {
        self.frames.get(n as usize).filter(|f| f.frame == n)
    }

    /// Function by name (display name, first match).
    pub fn function(&self, name: &str) -> Option<&FunctionStats> {
        self.functions.iter().find(|f| f.name == name)
    }
}
