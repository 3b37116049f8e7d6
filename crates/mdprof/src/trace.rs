//! `--trace FILE.json [--trace-frames A-B]`: a Chrome / Perfetto trace of a
//! profiling run (trace-event JSON, `{"traceEvents":[...]}`, written with
//! `retroprof_profile::write::trace::TraceWriter`; open it in
//! <https://ui.perfetto.dev> or `chrome://tracing`).
//!
//! # Tracks (process 1, named after the ROM)
//! - `Frames` (tid 1): one complete event per frame, `frame N` (or
//!   `frame N DROPPED`, category `frame,dropped`), spanning the frame
//!   (first VBlank line to the end of the active display); args: busy and
//!   idle cycles, load %, DMA bytes, interrupts. Inside it, an instant
//!   `wait entered` (args: `line` L) where the game entered the idle wait.
//! - `Busy / idle` (tid 2): per frame, a `busy` slice from the frame start
//!   lasting the frame's busy cycles, then an `idle` slice for the rest.
//!   The busy time of a frame is not one contiguous span (VBlank work, then
//!   the game loop): these slices show the AMOUNTS, laid end to end, not
//!   where in the frame they happened; the wait-entry instants show where.
//! - `DMA` (tid 3): `DMA in active display` from the first active line to
//!   the end of the last line with 68000 -> VDP DMA (`dma_last_line`) in
//!   frames where DMA spilled out of VBlank; args: bytes.
//! - Counters `load %` and `DMA bytes` (series `vblank`, `active`) per frame.
//! - `KDebug` (tid 4, when the game wrote KDebug registers): a slice
//!   `KDebug timer` per span (args: cycles, frame), an instant per
//!   message (named by its text), per halt and per kept malformed write
//!   ([`crate::kdebug`]).
//! - `Functions` (tid 10): nested function slices from the shadow call
//!   stack for frames A..B (`--trace-frames A-B`), recorded by
//!   [`FunctionTracer`] while the profile runs; interrupt handlers are
//!   slices of category `interrupt` nested where they interrupted.
//!
//! Times: frame `n` starts at `n * mclk_per_frame` master clocks (the
//! system's frame origin; frames are contiguous), converted to time with
//! the region's master clock (md-timing.md: 53,693,175 Hz NTSC,
//! 53,203,424 Hz PAL) and rounded to the writer's exact 125 ns grid
//! (`trace::to_grid_ns`; under one 68000 cycle, 130 ns). Every slice is
//! written from its integer start and end master clocks, both converted by
//! that one monotone function, so a frame (or busy/idle slice) ends exactly
//! where the next one starts and a function slice ends inside its caller's,
//! in Perfetto and speedscope alike.
//!
//! # API for the CLI
//! ```ignore
//! let (a, b) = trace::parse_frames("100-110")?;            // --trace-frames
//! let mut tracer = FunctionTracer::new(a, b, &session.rom.data); // bounded memory
//! let report = session.run_with(&mut tracer, &mut progress); // or in a pair with others
//! let slices = tracer.finish(&session.index);
//! trace::write_file(&report, Some(&slices), &path, true)?; // atomic
//! ```
//! Without `--trace-frames`, pass `None` (no tracer needed).

use std::io::Write;
use std::path::Path;

use retroprof_megadrive::timing::{self, m68k_to_mclk_f64, mclk_to_m68k_f64, MCLK_PER_LINE};
use retroprof_megadrive::ExceptionKind;
use retroprof_megadrive::{Clock, InstrCost, MdObserver, SystemView};
use retroprof_profile::write::trace::{to_grid_ns, Arg, Scope, TraceWriter};
use retroprof_symbols::FunctionIndex;

use crate::report::Report;
use crate::stack::{is_rte, Entry, ShadowStack};

/// Function slices kept at most; later ones are dropped and counted
/// (bounded memory whatever `--trace-frames` asks for).
pub const MAX_SLICES: usize = 2_000_000;

/// Shadow stack depth kept at most.
const MAX_DEPTH: usize = 256;

const PID: u32 = 1;
const TID_FRAMES: u32 = 1;
const TID_BUSY: u32 = 2;
const TID_DMA: u32 = 3;
const TID_FUNCS: u32 = 10;

/// Errors of `--trace-frames`.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error(
        "--trace-frames {0:?}: expected A-B (first and last frame, A <= B) or a single frame N"
    )]
    BadFrames(String),
}

/// Parse `--trace-frames A-B` (or `N`).
pub fn parse_frames(s: &str) -> Result<(u64, u64), TraceError> {
    let bad = || TraceError::BadFrames(s.to_string());
    let (a, b) = match s.split_once('-') {
        Some((a, b)) => (a.trim(), b.trim()),
        None => (s.trim(), s.trim()),
    };
    let a: u64 = a.parse().map_err(|_| bad())?;
    let b: u64 = b.parse().map_err(|_| bad())?;
    if a > b {
        return Err(bad());
    }
    Ok((a, b))
}

#[derive(Clone, Copy, Debug)]
struct Open {
    /// Entry address (call target or exception handler).
    addr: u32,
    start: u64,
}

/// A call seen; its time is fixed at the instruction's end.
#[derive(Clone, Copy, Debug)]
struct PendingCall {
    addr: u32,
    /// Where the return address was pushed.
    sp: u32,
}

/// One recorded slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct RawSlice {
    addr: u32,
    depth: u16,
    interrupt: bool,
    start: u64,
    end: u64,
}

/// The slices recorded inside the window.
struct Recorder {
    window_start: Option<u64>,
    slices: Vec<RawSlice>,
    dropped: u64,
}

impl Recorder {
    fn close(&mut self, o: Entry<Open>, depth: usize, end: u64) {
        let Some(ws) = self.window_start else {
            return;
        };
        if end <= ws {
            return;
        }
        if self.slices.len() >= MAX_SLICES {
            self.dropped += 1;
            return;
        }
        self.slices.push(RawSlice {
            addr: o.data.addr,
            depth: depth.min(u16::MAX as usize) as u16,
            interrupt: o.exception,
            start: o.data.start.max(ws),
            end,
        });
    }
}

/// Records function enter/exit times (master clocks) from the 68000's
/// calls, returns and exceptions, for frames `first..=last`.
///
/// The shadow stack (the profiler's, `stack.rs`: the same rules for
/// calls, returns, RTE and exception entries) is kept for the whole run (a
/// push or pop per call or return, no allocation past its fixed capacity),
/// so slices that began before frame `first` are shown clipped to its
/// start; slices are stored only inside the window.
pub struct FunctionTracer {
    first: u64,
    last: u64,
    window_end: Option<u64>,
    active: bool,
    now: u64,
    stack: ShadowStack<Open>,
    /// ROM bytes, for recognising RTE by its opcode.
    rom: Vec<u8>,
    /// A call/return seen; its time is fixed at the next instruction
    /// boundary.
    pending_push: Option<PendingCall>,
    /// A return seen: (its PC, the stack pointer after it).
    pending_pop: Option<(u32, u32)>,
    rec: Recorder,
}

impl FunctionTracer {
    /// Record frames `first..=last` of a run of the ROM `rom` (its bytes:
    /// RTE is recognised by its opcode there, as the profiler does).
    pub fn new(first: u64, last: u64, rom: &[u8]) -> Self {
        FunctionTracer {
            first,
            last,
            window_end: None,
            active: false,
            now: 0,
            stack: ShadowStack::new(MAX_DEPTH),
            rom: rom.to_vec(),
            pending_push: None,
            pending_pop: None,
            rec: Recorder {
                window_start: None,
                slices: Vec::new(),
                dropped: 0,
            },
        }
    }

    /// Stop and name the slices with `index` (the profile's function
    /// index).
    pub fn finish(mut self, index: &FunctionIndex) -> FunctionTrace {
        if self.active {
            // The run ended inside the window: close what is open.
            let end = self.now;
            self.window_end = Some(end);
            while let Some(o) = self.stack.pop() {
                let d = self.stack.len();
                self.rec.close(o, d, end);
            }
        }
        // The instruction that straddles the window's end may close slices
        // just past it: clip every slice to the window.
        let limit = self.window_end.unwrap_or(u64::MAX);
        let mut slices: Vec<Slice> = self
            .rec
            .slices
            .iter()
            .map(|s| {
                let end = s.end.min(limit);
                Slice {
                    name: index.function_at(s.addr as u64).name.clone(),
                    addr: s.addr,
                    depth: s.depth,
                    interrupt: s.interrupt,
                    start_mclk: s.start.min(end),
                    end_mclk: end,
                }
            })
            .collect();
        slices.sort_by(|a, b| {
            (a.start_mclk, a.depth, std::cmp::Reverse(a.end_mclk), a.addr).cmp(&(
                b.start_mclk,
                b.depth,
                std::cmp::Reverse(b.end_mclk),
                b.addr,
            ))
        });
        FunctionTrace {
            first: self.first,
            last: self.last,
            start_mclk: self.rec.window_start,
            end_mclk: self.window_end,
            slices,
            dropped: self.rec.dropped,
        }
    }
}

impl MdObserver for FunctionTracer {
    fn frame_start(&mut self, frame: u64, view: &SystemView) {
        if frame == self.first {
            self.active = true;
            self.rec.window_start = Some(view.clock.frame_start_mclk());
        } else if frame == self.last + 1 && self.active {
            // Close everything still open at the window's end: the frame
            // boundary itself (this event comes at the first instruction
            // boundary after it; `finish` clips later ends to it).
            let end = view.clock.frame_start_mclk();
            self.window_end = Some(end);
            for (d, o) in self.stack.entries().iter().enumerate().rev() {
                self.rec.close(*o, d, end);
            }
            self.active = false;
        }
    }

    #[inline(always)]
    fn instruction(&mut self, _pc: u32, cost: InstrCost, clock: &Clock) {
        let start = clock
            .instruction_end(&cost)
            .saturating_sub(cost.total as u64);
        // A JSR/BSR enters its target when it ends; an RTS leaves when it
        // ends.
        let end = start + cost.total as u64;
        let active = self.active;
        let rec = &mut self.rec;
        let mut gone = |o: Entry<Open>, d: usize| {
            if active {
                rec.close(o, d, end);
            }
        };
        if let Some((from, sp)) = self.pending_pop.take() {
            self.stack.ret(is_rte(&self.rom, from), sp, &mut gone);
        }
        if let Some(c) = self.pending_push.take() {
            self.stack.drop_stale(c.sp, &mut gone);
            self.stack.push_call(
                c.sp,
                Open {
                    addr: c.addr,
                    start: end,
                },
            );
        }
        self.now = end;
    }

    #[inline(always)]
    fn exception(
        &mut self,
        kind: ExceptionKind,
        _vector: u8,
        handler: u32,
        mclk: u32,
        _clock: &Clock,
    ) {
        let _ = kind;
        // Exception processing starts now (after the last instruction).
        let start = self.now;
        self.now += mclk as u64;
        self.stack.push_exception(Open {
            addr: handler & 0xFF_FFFF,
            start,
        });
    }

    #[inline(always)]
    fn call(&mut self, _from_pc: u32, target: u32, _return_addr: u32, sp: u32) {
        self.pending_push = Some(PendingCall {
            addr: target & 0xFF_FFFF,
            sp,
        });
    }

    #[inline(always)]
    fn ret(&mut self, from_pc: u32, _target: u32, sp: u32) {
        self.pending_pop = Some((from_pc, sp));
    }
}

/// One function slice of [`FunctionTrace`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slice {
    pub name: String,
    pub addr: u32,
    /// Shadow stack depth (0 = outermost).
    pub depth: u16,
    /// An exception handler entry (interrupt).
    pub interrupt: bool,
    pub start_mclk: u64,
    pub end_mclk: u64,
}

/// What [`FunctionTracer::finish`] returns: slices sorted by start, depth.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FunctionTrace {
    pub first: u64,
    pub last: u64,
    /// The window actually recorded (`None`: frame `first` never ran).
    pub start_mclk: Option<u64>,
    pub end_mclk: Option<u64>,
    pub slices: Vec<Slice>,
    /// Slices not kept ([`MAX_SLICES`]).
    pub dropped: u64,
}

fn mclk_hz(report: &Report) -> u64 {
    timing::mclk_hz(report.timing.pal)
}

/// Write the trace of `report` (and the function slices, when recorded)
/// to `w`.
pub fn write<W: Write>(
    report: &Report,
    functions: Option<&FunctionTrace>,
    w: W,
) -> Result<W, retroprof_profile::Error> {
    let hz = mclk_hz(report);
    let ns = |mclk: u64| to_grid_ns(mclk, hz);
    let per_frame = report.timing.mclk_per_frame.max(1);
    let lines = report.timing.lines.max(1) as u64;
    let active = report.timing.active_lines as u64;
    let cyc = m68k_to_mclk_f64;
    let mut t = TraceWriter::new(w)?;
    let title = if report.rom.title.trim().is_empty() {
        format!("Mega Drive: {}", report.rom.path)
    } else {
        format!(
            "Mega Drive: {} ({})",
            report.rom.path,
            report.rom.title.trim()
        )
    };
    t.process_name(PID, &title)?;
    t.thread_name(PID, TID_FRAMES, "Frames")?;
    t.thread_sort_index(PID, TID_FRAMES, 0)?;
    t.thread_name(PID, TID_BUSY, "Busy / idle (amounts, laid end to end)")?;
    t.thread_sort_index(PID, TID_BUSY, 1)?;
    t.thread_name(PID, TID_DMA, "DMA in active display")?;
    t.thread_sort_index(PID, TID_DMA, 2)?;
    if let Some(f) = functions {
        t.thread_name(
            PID,
            TID_FUNCS,
            &format!("Functions (frames {}-{})", f.first, f.last),
        )?;
        t.thread_sort_index(PID, TID_FUNCS, 3)?;
    }
    // Offset of line `l` from the frame start (the frame starts at the
    // first VBlank line, `active`): md-timing.md, 3,420 mclk per line.
    let line_offset = |l: u16| ((l as u64 + lines - active) % lines) * MCLK_PER_LINE;
    for fr in &report.frames {
        let start = fr.frame * per_frame;
        let ts = ns(start);
        let frame_end = ns(start + per_frame);
        let name = if fr.dropped {
            format!("frame {} DROPPED", fr.frame)
        } else {
            format!("frame {}", fr.frame)
        };
        t.complete(
            &name,
            if fr.dropped { "frame,dropped" } else { "frame" },
            PID,
            TID_FRAMES,
            ts,
            frame_end,
            &[
                ("frame", Arg::UInt(fr.frame)),
                ("busy_cycles", Arg::Float(fr.busy_cycles)),
                ("idle_cycles", Arg::Float(fr.idle_cycles)),
                ("load_pct", Arg::Float(fr.load_pct)),
                ("dropped", Arg::Bool(fr.dropped)),
                ("counted", Arg::Bool(fr.counted)),
                ("dma_vblank_bytes", Arg::UInt(fr.dma_vblank_bytes)),
                ("dma_active_bytes", Arg::UInt(fr.dma_active_bytes)),
                ("interrupts", Arg::UInt(fr.interrupts as u64)),
            ],
        )?;
        if let Some(l) = fr.idle_enter_line {
            t.instant(
                "wait entered",
                "wait",
                PID,
                TID_FRAMES,
                ns(start + line_offset(l)),
                Scope::Thread,
                &[("line", Arg::UInt(l as u64))],
            )?;
        }
        let busy = (cyc(fr.busy_cycles).round() as u64).min(per_frame);
        if busy > 0 {
            t.complete(
                "busy",
                "load",
                PID,
                TID_BUSY,
                ts,
                ns(start + busy),
                &[("cycles", Arg::Float(fr.busy_cycles))],
            )?;
        }
        if busy < per_frame {
            t.complete(
                "idle",
                "load",
                PID,
                TID_BUSY,
                ns(start + busy),
                frame_end,
                &[("cycles", Arg::Float(fr.idle_cycles))],
            )?;
        }
        if fr.dma_active_bytes > 0 {
            let a = start + line_offset(0);
            let last = fr.dma_last_line.unwrap_or(0);
            let e = start + line_offset(last) + MCLK_PER_LINE;
            t.complete(
                "DMA in active display",
                "dma",
                PID,
                TID_DMA,
                ns(a),
                ns(e.max(a)),
                &[
                    ("bytes", Arg::UInt(fr.dma_active_bytes)),
                    ("last_line", Arg::UInt(last as u64)),
                ],
            )?;
        }
        t.counter("load %", PID, ts, &[("load", fr.load_pct)])?;
        t.counter(
            "DMA bytes",
            PID,
            ts,
            &[
                ("vblank", fr.dma_vblank_bytes as f64),
                ("active", fr.dma_active_bytes as f64),
            ],
        )?;
    }
    if let Some(f) = functions {
        for s in &f.slices {
            t.complete(
                &s.name,
                if s.interrupt { "interrupt" } else { "function" },
                PID,
                TID_FUNCS,
                ns(s.start_mclk),
                ns(s.end_mclk.max(s.start_mclk)),
                &[
                    (
                        "cycles",
                        Arg::Float(mclk_to_m68k_f64((s.end_mclk - s.start_mclk) as f64)),
                    ),
                    ("depth", Arg::UInt(s.depth as u64)),
                ],
            )?;
        }
        if f.dropped > 0 {
            t.instant(
                "function slices not kept",
                "function",
                PID,
                TID_FUNCS,
                ns(f.end_mclk.unwrap_or(0)),
                Scope::Thread,
                &[
                    ("dropped", Arg::UInt(f.dropped)),
                    ("limit", Arg::UInt(MAX_SLICES as u64)),
                ],
            )?;
        }
    }
    if let Some(k) = &report.kdebug {
        crate::kdebug::write_trace(&mut t, PID, k, &ns)?;
    }
    t.finish()
}

/// [`write()`] to `path` whole or not at all (`replace`: the user named the
/// file explicitly).
pub fn write_file(
    report: &Report,
    functions: Option<&FunctionTrace>,
    path: &Path,
    replace: bool,
) -> Result<(), retroprof_profile::Error> {
    retroprof_profile::write::atomic(path, replace, |w| write(report, functions, w).map(|_| ()))
}

/// The function slices of `functions` as a speedscope `evented` profile
/// (open/close events in time order, nanoseconds from the run's start), so
/// speedscope's "Time Order" view shows the real call timeline of the
/// `--trace-frames` window. Frames are those of
/// [`crate::output::stack_profile`] where the function is in the report (so
/// the sampled and evented profiles share them). Slices are nested by time:
/// a slice that would outlast its caller is clipped to the caller's end;
/// empty slices are left out. `None` when the window never ran.
pub fn evented_profile(
    report: &Report,
    functions: &FunctionTrace,
) -> Option<retroprof_profile::write::EventedProfile> {
    use retroprof_profile::write::{Event, EventKind, EventedProfile};
    use retroprof_profile::Frame;
    use std::collections::BTreeMap;
    let (w0, w1) = (functions.start_mclk?, functions.end_mclk?);
    let hz = mclk_hz(report) as u128;
    let ns = |m: u64| ((m as u128 * 1_000_000_000 + hz / 2) / hz) as u64;
    let frame_of = |f: &crate::report::FunctionStats| Frame {
        name: f.name.clone(),
        addr: Some(f.addr as u64),
        file: f.file.clone(),
        line: f.line,
        module: None,
        inlined: false,
    };
    // Slices are named after the index's function (whatever address the
    // call entered it at): find that function's row by name, physical
    // functions before inlined entries.
    let mut by_name: BTreeMap<&str, &crate::report::FunctionStats> = BTreeMap::new();
    for f in report.functions.iter().filter(|f| f.inlined_into.is_none()) {
        by_name.entry(f.name.as_str()).or_insert(f);
    }
    for f in &report.functions {
        by_name.entry(f.name.as_str()).or_insert(f);
    }
    let mut frames: Vec<Frame> = Vec::new();
    let mut frame_ids: BTreeMap<&str, u32> = BTreeMap::new();
    let mut events: Vec<Event> = Vec::with_capacity(functions.slices.len() * 2);
    // Open slices: (end mclk, frame).
    let mut open: Vec<(u64, u32)> = Vec::new();
    let close = |events: &mut Vec<Event>, (at, frame): (u64, u32)| {
        events.push(Event {
            kind: EventKind::Close,
            frame,
            at: ns(at),
        })
    };
    for sl in &functions.slices {
        if sl.end_mclk <= sl.start_mclk {
            continue;
        }
        while let Some(&(end, f)) = open.last() {
            if end <= sl.start_mclk || open.len() > sl.depth as usize {
                open.pop();
                close(&mut events, (end.min(sl.start_mclk), f));
            } else {
                break;
            }
        }
        let next = frames.len() as u32;
        let id = *frame_ids.entry(sl.name.as_str()).or_insert_with(|| {
            frames.push(match by_name.get(sl.name.as_str()) {
                Some(f) => frame_of(f),
                None => Frame {
                    name: sl.name.clone(),
                    addr: Some(sl.addr as u64),
                    ..Frame::default()
                },
            });
            next
        });
        let end = open.last().map_or(sl.end_mclk, |p| sl.end_mclk.min(p.0));
        events.push(Event {
            kind: EventKind::Open,
            frame: id,
            at: ns(sl.start_mclk),
        });
        open.push((end, id));
    }
    while let Some(o) = open.pop() {
        close(&mut events, o);
    }
    Some(EventedProfile {
        name: format!(
            "{} frames {}-{} (call timeline)",
            report.rom.path, functions.first, functions.last
        ),
        unit: "nanoseconds".into(),
        start: ns(w0),
        end: ns(w1.max(w0)),
        frames,
        events,
    })
}

/// `--speedscope` with the call timeline: the whole run's merged stacks
/// (sampled profile of [`crate::output::stack_profile`]) plus, when
/// `functions` was recorded, its [`evented_profile`].
pub fn write_speedscope<W: Write>(
    report: &Report,
    functions: Option<&FunctionTrace>,
    w: W,
) -> Result<(), retroprof_profile::Error> {
    let sp = crate::output::stack_profile(report);
    let opts = retroprof_profile::write::SpeedscopeOptions {
        evented: functions
            .and_then(|f| evented_profile(report, f))
            .into_iter()
            .collect(),
    };
    retroprof_profile::write::speedscope_with(&sp, &opts, w)
}

/// [`write_speedscope`] to `path` whole or not at all.
pub fn write_speedscope_file(
    report: &Report,
    functions: Option<&FunctionTrace>,
    path: &Path,
    replace: bool,
) -> Result<(), retroprof_profile::Error> {
    retroprof_profile::write::atomic(path, replace, |w| write_speedscope(report, functions, w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_option() {
        assert_eq!(parse_frames("10-20").unwrap(), (10, 20));
        assert_eq!(parse_frames("7").unwrap(), (7, 7));
        assert!(parse_frames("20-10").is_err());
        assert!(parse_frames("a-b").is_err());
    }
}
