//! The game's own KDebug markers (Gens KMod's debug registers, also
//! implemented by BlastEm; SGDK's `KDebug_*` functions and `kprintf`),
//! recognised from the CPU's writes to the VDP control port without
//! changing emulation: the real VDP has no registers 29-31, and ours only
//! counts the writes as invalid (`vdp.rs`, `write_register`), so the
//! profiler decodes them itself from [`MdObserver::vdp_write`](retroprof_megadrive::MdObserver::vdp_write)
//! (`shared/docs/sgdk.md`, section KDebug).
//!
//! # The protocol
//! A register write is a control-port word `0x8000 | reg << 8 | value`
//! that is NOT the second word of a command pair: the decoder keeps the
//! VDP's write-pending flag as the VDP does (`vdp.rs`, `write_control`):
//! a first word that is not a register write sets it, the next control
//! word (whatever its value) is the second word and clears it, and a
//! data-port write clears it. A long write (`move.l`) to the control port
//! is two word writes, high word first, each decoded the same way. (The
//! VDP also clears the flag on a status or data-port READ, which the
//! observer does not see; SGDK writes both words of a command back to
//! back, so this only matters for a game that reads the status between
//! the two words of a command, and then only for the one write after it.)
//! - Register 29 value 0: `KDebug_Halt()`, a halt marker (GensKMod pauses,
//!   BlastEm enters its debugger). Other values are GensKMod's window,
//!   dump and movie codes: counted, not shown.
//! - Register 30: one character of a message per write (`KDebug_Alert`,
//!   `KDebug_AlertNumber`, `kprintf`); value 0 ends the message (BlastEm
//!   prints `KDEBUG MESSAGE:` then; a 0 with no characters before it
//!   prints nothing).
//! - Register 31, bits `sr000000`: bit 7 set starts the timer
//!   (`KDebug_StartTimer()`, 0x9F80); bit 7 clear ends it
//!   (`KDebug_StopTimer()`, 0x9F40; 0x9F00 too): a span whose length is
//!   what BlastEm prints (`vdp.c`, `REG_KMOD_TIMER`: the master clocks
//!   from the start write to the stop write, divided by 7 with the
//!   fraction dropped, i.e. whole 68000 cycles; `timing::M68K_DIVIDER`).
//!   BlastEm restarts its timer on every write with bit 6 or 7 set, so
//!   there a second stop measures from the first; SGDK's API pairs a start
//!   with a stop, and here a stop with no start open is malformed.
//!
//! # Time of a write
//! [`MdObserver::vdp_write`](retroprof_megadrive::MdObserver::vdp_write) comes while its instruction runs, with the
//! clock of the previous instruction boundary; the instruction's own
//! [`MdObserver::instruction`](retroprof_megadrive::MdObserver::instruction) event follows. The profiler holds the
//! write's marker until then and times it at the instruction's start
//! (its end minus its cost), plus 4 cycles (one word bus cycle, M68000
//! User's Manual section 8) for each earlier control-port write of the
//! same instruction (the low word of a `move.l`). A timer span is the
//! difference of two such times: for SGDK's `KDebug_StartTimer` and
//! `KDebug_StopTimer`, which write with the same instruction (`move.w
//! #imm,(xxx).l`) and so at the same offset into it, that is exactly the
//! difference of the two write times that BlastEm takes.
//!
//! # Garbage
//! A game may hit these registers by accident (clownmdemu-core issue 10).
//! Nothing malformed is shown as data; it is counted by kind
//! ([`Malformed`]) and the first [`MAX_MALFORMED_KEPT`] are kept with
//! their place: a message with a byte outside printable ASCII (0x20-0x7E),
//! a message longer than [`MAX_MESSAGE`] characters (the rest up to its
//! end dropped, so an endless string costs no memory), a message still
//! open at the end of the run, a stop with no start open, a start while
//! a span is open (the span restarts, as in BlastEm), a timer value with
//! any of bits 5-0 set. At most [`MAX_KEPT`] spans and messages are kept
//! (the summary counts them all).

use std::fmt::Write as _;

use retroprof_megadrive::timing::{M68K_DIVIDER, MCLK_HZ_NTSC, MCLK_HZ_PAL};
use retroprof_megadrive::{Clock, VdpPort};
use serde::{Deserialize, Serialize};

use crate::report::Report;

/// Longest message kept, in characters; longer ones are malformed.
/// (GensKMod flushes its message buffer by itself at 255 characters;
/// SGDK's `kprintf` formats into a buffer of that size. Four times that
/// leaves room for any message a debugger would show whole.)
pub const MAX_MESSAGE: usize = 1024;
/// Timer spans and messages kept at most, each (the rest are counted).
pub const MAX_KEPT: usize = 100_000;
/// Malformed writes kept with their place, at most.
pub const MAX_MALFORMED_KEPT: usize = 100;
/// Messages shown in the terminal report before a count of the rest.
pub const TERMINAL_MESSAGES: usize = 10;

/// 68000 cycles between two word writes of one instruction (one bus cycle,
/// M68000 User's Manual section 8: 4 clocks per bus cycle).
const WORD_WRITE_MCLK: u64 = 4 * M68K_DIVIDER;
/// Control-port writes one 68000 instruction can make at most
/// (`movem.l` of 16 registers: 32 words).
const MAX_WRITES_PER_INSN: usize = 32;

/// Where and when a marker happened.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Place {
    pub frame: u64,
    /// Scanline (0 = first active line).
    pub line: u16,
    /// Master clocks since power-on.
    pub mclk: u64,
}

/// One `KDebug_StartTimer()` .. `KDebug_StopTimer()` span.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimerSpan {
    pub start: Place,
    /// The stop (the span counts in this frame).
    pub stop: Place,
    /// Whole 68000 cycles, as BlastEm prints them.
    pub cycles: u64,
}

/// One message (`KDebug_Alert`, `kprintf`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Alert {
    /// When its terminating write came.
    pub at: Place,
    pub text: String,
}

/// Malformed writes, by kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Malformed {
    /// Messages with a byte outside 0x20-0x7E.
    pub non_printable: u64,
    /// Messages longer than [`MAX_MESSAGE`].
    pub overlong: u64,
    /// A message still open when the run ended.
    pub unterminated: u64,
    /// Timer stops with no start open.
    pub stop_without_start: u64,
    /// Timer starts while a span was open (the span restarted).
    pub start_while_running: u64,
    /// Timer writes with bits 5-0 set (not `sr000000`).
    pub bad_timer_value: u64,
}

impl Malformed {
    pub fn total(&self) -> u64 {
        self.non_printable
            + self.overlong
            + self.unterminated
            + self.stop_without_start
            + self.start_while_running
            + self.bad_timer_value
    }

    /// `(count, description)` of each kind, in a fixed order.
    pub fn kinds(&self) -> [(u64, &'static str); 6] {
        [
            (self.stop_without_start, "stop without a start"),
            (self.start_while_running, "start while running"),
            (self.bad_timer_value, "bad timer value"),
            (self.non_printable, "non-printable message"),
            (self.overlong, "overlong message"),
            (self.unterminated, "unterminated message"),
        ]
    }
}

/// One malformed write, with its place.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MalformedMark {
    pub at: Place,
    /// `stop-without-start`, `start-while-running`, `bad-timer-value`,
    /// `non-printable`, `overlong`, `unterminated`.
    pub kind: String,
    /// The register value (timer) or the message's length so far.
    pub value: u64,
}

/// Timer spans over the whole run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TimerStats {
    pub spans: u64,
    pub total_cycles: u64,
    /// 0 with no span.
    pub min_cycles: u64,
    pub mean_cycles: f64,
    pub max_cycles: u64,
}

/// The KDebug section of a report (present when the game wrote any of
/// registers 29-31).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct KDebugReport {
    /// Register writes 29-31 decoded.
    pub writes: u64,
    pub timer: TimerStats,
    /// The spans in time order (the first [`MAX_KEPT`]).
    pub spans: Vec<TimerSpan>,
    pub spans_not_kept: u64,
    /// A span started and not stopped when the run ended.
    pub open_span: Option<Place>,
    /// Messages in time order (the first [`MAX_KEPT`]).
    pub alerts: Vec<Alert>,
    /// All well-formed messages (kept or not).
    pub alert_count: u64,
    pub alerts_not_kept: u64,
    /// `KDebug_Halt()` writes.
    pub halts: Vec<Place>,
    /// Register 29 writes with GensKMod's other codes (ignored).
    pub other_control_codes: u64,
    pub malformed: Malformed,
    /// The first [`MAX_MALFORMED_KEPT`] malformed writes.
    pub malformed_marks: Vec<MalformedMark>,
}

impl KDebugReport {
    /// The run used the timer (the per-frame CSV gets its columns).
    pub fn timer_protocol_seen(&self) -> bool {
        self.timer.spans > 0
    }
}

#[derive(Clone, Copy, Debug)]
enum Op {
    Halt,
    MessageEnd,
    Timer(u8),
}

/// What a VDP write was, as [`KDebug::write`] decodes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VdpWrite {
    /// A write to VDP register `.0` (0-28) with value `.1`.
    Register(u8, u8),
    /// A KDebug marker, timed at the instruction's start.
    Marker,
    /// Anything else (data, commands, KDebug writes that end nothing).
    Other,
}

impl VdpWrite {
    pub fn is_marker(self) -> bool {
        self == VdpWrite::Marker
    }
}

/// The decoder: feed it every VDP write and, after each instruction that
/// wrote, that instruction's start time.
#[derive(Debug)]
pub struct KDebug {
    /// The VDP's write-pending flag as the decoder sees it.
    second_word: bool,
    msg: Vec<u8>,
    msg_len: usize,
    msg_bad_char: bool,
    queue: Vec<(Op, (u64, u16))>,
    /// mclk of the boundary before the writes in `queue`.
    queued_at: u64,
    timer_start: Option<Place>,
    frames: Vec<(u64, u64, u64)>,
    out: KDebugReport,
}

impl Default for KDebug {
    fn default() -> Self {
        KDebug {
            second_word: false,
            msg: Vec::new(),
            msg_len: 0,
            msg_bad_char: false,
            queue: Vec::with_capacity(MAX_WRITES_PER_INSN),
            queued_at: 0,
            timer_start: None,
            frames: Vec::new(),
            out: KDebugReport::default(),
        }
    }
}

fn printable(b: u8) -> bool {
    (0x20..=0x7E).contains(&b)
}

impl KDebug {
    pub fn new() -> Self {
        KDebug::default()
    }

    /// A CPU write to the VDP, decoded once for the whole profiler: a
    /// control-port word `10rr rrrr dddd dddd` that is not the second half
    /// of a two-word command writes register r (Sega Genesis Software
    /// Manual, VDP "Register set"; a data-port access ends a half-written
    /// command). Registers 29-31 are KDebug's; [`VdpWrite::Marker`] says
    /// the write left a marker that waits for [`KDebug::resolve`] (the
    /// instruction's start time).
    #[inline]
    pub fn write(&mut self, port: VdpPort, v: u16, clock: &Clock) -> VdpWrite {
        if port == VdpPort::Data {
            self.second_word = false;
            return VdpWrite::Other;
        }
        if self.second_word {
            self.second_word = false;
            return VdpWrite::Other;
        }
        if v & 0xC000 != 0x8000 {
            self.second_word = true;
            return VdpWrite::Other;
        }
        let reg = ((v >> 8) & 0x1F) as u8;
        if reg < 29 {
            return VdpWrite::Register(reg, v as u8);
        }
        if self.register(reg, v as u8, clock) {
            VdpWrite::Marker
        } else {
            VdpWrite::Other
        }
    }

    #[cold]
    #[inline(never)]
    fn register(&mut self, reg: u8, val: u8, clock: &Clock) -> bool {
        self.out.writes += 1;
        let op = match reg {
            29 if val == 0 => Op::Halt,
            29 => {
                self.out.other_control_codes += 1;
                return false;
            }
            30 if val != 0 => {
                self.msg_len += 1;
                if self.msg.len() < MAX_MESSAGE {
                    self.msg.push(val);
                }
                if !printable(val) {
                    self.msg_bad_char = true;
                }
                return false;
            }
            30 if self.msg_len == 0 => return false,
            30 => Op::MessageEnd,
            _ => Op::Timer(val),
        };
        if self.queue.is_empty() {
            self.queued_at = clock.mclk();
        }
        if self.queue.len() == MAX_WRITES_PER_INSN {
            // More control-port words than one instruction can write: the
            // instruction event went missing (an exception in between);
            // time what is queued at the boundary seen last.
            self.resolve(self.queued_at);
            self.queued_at = clock.mclk();
        }
        self.queue.push((op, (clock.frame(), clock.line())));
        true
    }

    /// Markers wait for [`KDebug::resolve`].
    #[inline]
    pub fn has_queued(&self) -> bool {
        !self.queue.is_empty()
    }

    /// Time the queued markers: their instruction began at `start` (mclk).
    #[cold]
    #[inline(never)]
    pub fn resolve(&mut self, start: u64) {
        let queue = std::mem::take(&mut self.queue);
        for (k, &(op, (frame, line))) in queue.iter().enumerate() {
            let at = Place {
                frame,
                line,
                mclk: start + k as u64 * WORD_WRITE_MCLK,
            };
            self.apply(op, at);
        }
        self.queue = queue;
        self.queue.clear();
    }

    fn mark(&mut self, at: Place, kind: &str, value: u64) {
        if self.out.malformed_marks.len() < MAX_MALFORMED_KEPT {
            self.out.malformed_marks.push(MalformedMark {
                at,
                kind: kind.to_string(),
                value,
            });
        }
    }

    fn apply(&mut self, op: Op, at: Place) {
        match op {
            Op::Halt => {
                if self.out.halts.len() < MAX_KEPT {
                    self.out.halts.push(at);
                }
            }
            Op::MessageEnd => {
                let len = self.msg_len as u64;
                if self.msg_len > MAX_MESSAGE {
                    self.out.malformed.overlong += 1;
                    self.mark(at, "overlong", len);
                } else if self.msg_bad_char {
                    self.out.malformed.non_printable += 1;
                    self.mark(at, "non-printable", len);
                } else {
                    self.out.alert_count += 1;
                    if self.out.alerts.len() < MAX_KEPT {
                        // Printable ASCII only: valid UTF-8.
                        let text = self.msg.iter().map(|&b| b as char).collect();
                        self.out.alerts.push(Alert { at, text });
                    } else {
                        self.out.alerts_not_kept += 1;
                    }
                }
                self.msg.clear();
                self.msg_len = 0;
                self.msg_bad_char = false;
            }
            Op::Timer(v) if v & 0x3F != 0 => {
                self.out.malformed.bad_timer_value += 1;
                self.mark(at, "bad-timer-value", v as u64);
            }
            Op::Timer(v) if v & 0x80 != 0 => {
                if self.timer_start.is_some() {
                    self.out.malformed.start_while_running += 1;
                    self.mark(at, "start-while-running", v as u64);
                }
                self.timer_start = Some(at);
            }
            Op::Timer(v) => match self.timer_start.take() {
                None => {
                    self.out.malformed.stop_without_start += 1;
                    self.mark(at, "stop-without-start", v as u64);
                }
                Some(start) => {
                    // BlastEm: (now - start) / 7, whole cycles.
                    let cycles = at.mclk.saturating_sub(start.mclk) / M68K_DIVIDER;
                    let t = &mut self.out.timer;
                    t.min_cycles = if t.spans == 0 {
                        cycles
                    } else {
                        t.min_cycles.min(cycles)
                    };
                    t.max_cycles = t.max_cycles.max(cycles);
                    t.spans += 1;
                    t.total_cycles += cycles;
                    match self.frames.last_mut() {
                        Some(f) if f.0 == at.frame => {
                            f.1 += 1;
                            f.2 += cycles;
                        }
                        _ => self.frames.push((at.frame, 1, cycles)),
                    }
                    if self.out.spans.len() < MAX_KEPT {
                        self.out.spans.push(TimerSpan {
                            start,
                            stop: at,
                            cycles,
                        });
                    } else {
                        self.out.spans_not_kept += 1;
                    }
                }
            },
        }
    }

    /// Timer spans and their cycles that ended in `frame`.
    pub fn frame_timers(&self, frame: u64) -> (u64, u64) {
        match self.frames.binary_search_by_key(&frame, |f| f.0) {
            Ok(i) => (self.frames[i].1, self.frames[i].2),
            Err(_) => (0, 0),
        }
    }

    /// The first halt so far.
    pub fn first_halt(&self) -> Option<Place> {
        self.out.halts.first().copied()
    }

    /// The report section at the end of a run (`now`: the CPU's time);
    /// `None` when the game wrote no KDebug register.
    pub fn finish(&mut self, now: u64, frame: u64, line: u16) -> Option<KDebugReport> {
        if !self.queue.is_empty() {
            self.resolve(self.queued_at);
        }
        if self.out.writes == 0 {
            return None;
        }
        let mut out = self.out.clone();
        if self.msg_len > 0 {
            out.malformed.unterminated += 1;
            if out.malformed_marks.len() < MAX_MALFORMED_KEPT {
                out.malformed_marks.push(MalformedMark {
                    at: Place {
                        frame,
                        line,
                        mclk: now,
                    },
                    kind: "unterminated".into(),
                    value: self.msg_len as u64,
                });
            }
        }
        out.open_span = self.timer_start;
        if out.timer.spans > 0 {
            out.timer.mean_cycles = out.timer.total_cycles as f64 / out.timer.spans as f64;
        }
        Some(out)
    }
}

fn mclk_hz(r: &Report) -> u64 {
    if r.timing.pal {
        MCLK_HZ_PAL
    } else {
        MCLK_HZ_NTSC
    }
}

/// Seconds since power-on of `mclk`, 6 decimals.
fn seconds(r: &Report, mclk: u64) -> String {
    let hz = mclk_hz(r);
    let us = (mclk as u128 * 1_000_000 + hz as u128 / 2) / hz as u128;
    format!("{}.{:06}", us / 1_000_000, us % 1_000_000)
}

fn place(r: &Report, p: &Place) -> String {
    format!(
        "frame {} line {} ({} s)",
        p.frame,
        p.line,
        seconds(r, p.mclk)
    )
}

/// The terminal report's KDebug section (empty when the game wrote no
/// KDebug register); lines of at most 80 columns, messages cut to fit.
pub fn terminal(r: &Report, st: &crate::output::Style) -> String {
    let Some(k) = &r.kdebug else {
        return String::new();
    };
    use crate::output::thousands;
    let mut o = String::new();
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "{}",
        st.bold("KDebug markers (the game's own, whole run)")
    );
    let t = &k.timer;
    if t.spans > 0 {
        let _ = writeln!(
            o,
            "timer: {} spans, cycles per span min {} mean {:.1} max {}",
            t.spans,
            thousands(t.min_cycles as f64),
            t.mean_cycles,
            thousands(t.max_cycles as f64)
        );
        let _ = writeln!(o, "  total {} cycles", thousands(t.total_cycles as f64));
    } else {
        let _ = writeln!(o, "timer: no spans");
    }
    if let Some(p) = &k.open_span {
        let _ = writeln!(o, "  a span still open at the end: from {}", place(r, p));
    }
    let _ = writeln!(o, "messages: {}", k.alert_count);
    for a in k.alerts.iter().take(TERMINAL_MESSAGES) {
        let head = format!("  {:>6} {:>3} ", a.at.frame, a.at.line);
        let room = 80usize.saturating_sub(head.len());
        let text: String = if a.text.chars().count() > room {
            let mut s: String = a.text.chars().take(room.saturating_sub(1)).collect();
            s.push('~');
            s
        } else {
            a.text.clone()
        };
        let _ = writeln!(o, "{head}{text}");
    }
    if k.alert_count > TERMINAL_MESSAGES as u64 {
        let _ = writeln!(
            o,
            "  ... {} more (--kdebug-log FILE for all)",
            k.alert_count - TERMINAL_MESSAGES as u64
        );
    }
    if k.alert_count > 0 {
        let _ = writeln!(o, "{}", st.dim("  (frame, line, message)"));
    }
    match k.halts.first() {
        Some(h) => {
            let _ = writeln!(
                o,
                "halt: {} at {}",
                if k.halts.len() > 1 {
                    format!("{} times, first", k.halts.len())
                } else {
                    "once,".to_string()
                },
                place(r, h)
            );
        }
        None => {
            let _ = writeln!(o, "halt: none");
        }
    }
    let m = &k.malformed;
    if m.total() > 0 {
        let kinds: Vec<String> = m
            .kinds()
            .iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, d)| format!("{n} {d}"))
            .collect();
        let _ = writeln!(
            o,
            "{} {} (not shown as data): {}",
            st.yellow("malformed:"),
            m.total(),
            kinds.join(", ")
        );
        if let Some(first) = k.malformed_marks.first() {
            let _ = writeln!(o, "  first: {} at {}", first.kind, place(r, &first.at));
        }
    }
    if k.other_control_codes > 0 {
        let _ = writeln!(
            o,
            "ignored: {} GensKMod control codes (register 29, not halt)",
            k.other_control_codes
        );
    }
    o
}

/// Header of [`log`].
pub const LOG_HEADER: &str = "frame\tline\ttime_s\tmclk\tkind\ttext";

/// `--kdebug-log FILE`: every marker in time order, tab-separated
/// ([`LOG_HEADER`]): kinds `message` (text), `timer` (text: the span's
/// cycles; the row is at its stop), `halt`, `malformed` (text: the kind).
/// Messages are printable ASCII, so no field needs quoting. A last line
/// `# ...` says how many were not kept.
pub fn log<W: std::io::Write>(r: &Report, mut w: W) -> std::io::Result<()> {
    writeln!(w, "{LOG_HEADER}")?;
    let Some(k) = &r.kdebug else {
        return Ok(());
    };
    let mut rows: Vec<(u64, u8, String, &Place)> = Vec::new();
    for a in &k.alerts {
        rows.push((a.at.mclk, 0, format!("message\t{}", a.text), &a.at));
    }
    for s in &k.spans {
        rows.push((s.stop.mclk, 1, format!("timer\t{}", s.cycles), &s.stop));
    }
    for h in &k.halts {
        rows.push((h.mclk, 2, "halt\t".to_string(), h));
    }
    for m in &k.malformed_marks {
        rows.push((m.at.mclk, 3, format!("malformed\t{}", m.kind), &m.at));
    }
    rows.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
    for (_, _, what, p) in &rows {
        writeln!(
            w,
            "{}\t{}\t{}\t{}\t{what}",
            p.frame,
            p.line,
            seconds(r, p.mclk),
            p.mclk
        )?;
    }
    let missing = k.alerts_not_kept + k.spans_not_kept;
    let marks_missing = k.malformed.total() - k.malformed_marks.len() as u64;
    if missing > 0 || marks_missing > 0 {
        writeln!(
            w,
            "# not kept (limits {MAX_KEPT} each, {MAX_MALFORMED_KEPT} malformed): \
             {} messages, {} timer spans, {} malformed",
            k.alerts_not_kept, k.spans_not_kept, marks_missing
        )?;
    }
    Ok(())
}

/// [`log`] to `path`, whole or not at all.
pub fn write_log_file(
    r: &Report,
    path: &std::path::Path,
    replace: bool,
) -> Result<(), retroprof_profile::Error> {
    retroprof_profile::write::atomic(path, replace, |w| {
        log(r, w).map_err(|source| retroprof_profile::Error::Io {
            path: path.display().to_string(),
            source,
        })
    })
}

/// Track of the KDebug markers in the Perfetto trace ([`crate::trace`]).
pub(crate) const TRACE_TID: u32 = 4;

/// The KDebug track of the Perfetto trace: a slice `KDebug timer` per
/// span (args: cycles), an instant per message (name: the text), per halt
/// and per kept malformed write. `ns` converts master clocks to the
/// trace's time grid.
pub(crate) fn write_trace<W: std::io::Write>(
    t: &mut retroprof_profile::write::trace::TraceWriter<W>,
    pid: u32,
    k: &KDebugReport,
    ns: &dyn Fn(u64) -> u64,
) -> Result<(), retroprof_profile::Error> {
    use retroprof_profile::write::trace::{Arg, Scope};
    t.thread_name(pid, TRACE_TID, "KDebug (the game's markers)")?;
    t.thread_sort_index(pid, TRACE_TID, 3)?;
    for s in &k.spans {
        t.complete(
            "KDebug timer",
            "kdebug",
            pid,
            TRACE_TID,
            ns(s.start.mclk),
            ns(s.stop.mclk.max(s.start.mclk)),
            &[
                ("cycles", Arg::UInt(s.cycles)),
                ("frame", Arg::UInt(s.stop.frame)),
            ],
        )?;
    }
    for a in &k.alerts {
        t.instant(
            &a.text,
            "kdebug,message",
            pid,
            TRACE_TID,
            ns(a.at.mclk),
            Scope::Thread,
            &[
                ("frame", Arg::UInt(a.at.frame)),
                ("line", Arg::UInt(a.at.line as u64)),
            ],
        )?;
    }
    for h in &k.halts {
        t.instant(
            "KDebug halt",
            "kdebug,halt",
            pid,
            TRACE_TID,
            ns(h.mclk),
            Scope::Process,
            &[
                ("frame", Arg::UInt(h.frame)),
                ("line", Arg::UInt(h.line as u64)),
            ],
        )?;
    }
    for m in &k.malformed_marks {
        t.instant(
            &format!("KDebug malformed: {}", m.kind),
            "kdebug,malformed",
            pid,
            TRACE_TID,
            ns(m.at.mclk),
            Scope::Thread,
            &[("value", Arg::UInt(m.value))],
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feed control-port words, each its own instruction starting at
    /// 1,000 mclk after the previous one.
    fn feed(k: &mut KDebug, words: &[u16]) {
        let clock = Clock::default();
        for (i, &w) in words.iter().enumerate() {
            if k.write(VdpPort::Control, w, &clock).is_marker() {
                k.resolve(1_000 * (i as u64 + 1));
            }
        }
    }

    fn message(s: &[u8]) -> Vec<u16> {
        let mut v: Vec<u16> = s.iter().map(|&b| 0x9E00 | b as u16).collect();
        v.push(0x9E00);
        v
    }

    #[test]
    fn timer_span_is_whole_cycles_between_the_writes() {
        let mut k = KDebug::new();
        feed(&mut k, &[0x9F80, 0x8F02, 0x9F40]);
        let r = k.finish(0, 0, 0).unwrap();
        assert_eq!(r.spans.len(), 1);
        // (3,000 - 1,000) mclk / 7 = 285.7: 285 whole cycles (BlastEm).
        assert_eq!(r.spans[0].cycles, 285);
        assert_eq!(r.timer.spans, 1);
        assert_eq!(r.malformed.total(), 0);
    }

    #[test]
    fn second_word_of_a_command_is_not_a_register_write() {
        let mut k = KDebug::new();
        // A VRAM write command whose second word looks like a halt, then
        // one whose second word looks like a timer start.
        feed(&mut k, &[0x4000, 0x9D00, 0x4000, 0x9F80]);
        assert!(k.finish(0, 0, 0).is_none(), "no KDebug write at all");
        // A data-port write ends a half-written command (vdp.rs).
        let mut k = KDebug::new();
        let clock = Clock::default();
        k.write(VdpPort::Control, 0x4000, &clock);
        k.write(VdpPort::Data, 0x1234, &clock);
        assert!(k.write(VdpPort::Control, 0x9D00, &clock).is_marker());
        k.resolve(10);
        assert_eq!(k.finish(0, 0, 0).unwrap().halts.len(), 1);
    }

    #[test]
    fn long_write_is_two_register_writes_one_bus_cycle_apart() {
        let mut k = KDebug::new();
        let clock = Clock::default();
        // move.l #0x9F809F40: start then stop in one instruction.
        assert!(k.write(VdpPort::Control, 0x9F80, &clock).is_marker());
        assert!(k.write(VdpPort::Control, 0x9F40, &clock).is_marker());
        k.resolve(700);
        let r = k.finish(0, 0, 0).unwrap();
        assert_eq!(r.spans[0].cycles, 4);
        assert_eq!(r.spans[0].start.mclk, 700);
    }

    #[test]
    fn messages_and_garbage() {
        let mut k = KDebug::new();
        let mut words = message(b"HELLO 1");
        words.push(0x9E00); // an empty message: nothing (BlastEm)
        words.extend(message(b"BAD\x01"));
        words.extend(message(b"TAB\tNO"));
        words.push(0x9F40); // stop without start
        words.push(0x9F81); // bad timer value
        words.extend([0x9F80, 0x9F80, 0x9F00]); // start twice, then stop
        words.push(0x9D05); // GensKMod code, not a halt
        words.extend([0x9E41, 0x9E42]); // unterminated
        feed(&mut k, &words);
        let r = k.finish(99, 3, 7).unwrap();
        let texts: Vec<&str> = r.alerts.iter().map(|a| a.text.as_str()).collect();
        assert_eq!(texts, ["HELLO 1"]);
        assert_eq!(r.alert_count, 1);
        assert_eq!(r.malformed.non_printable, 2);
        assert_eq!(r.malformed.stop_without_start, 1);
        assert_eq!(r.malformed.bad_timer_value, 1);
        assert_eq!(r.malformed.start_while_running, 1);
        assert_eq!(r.malformed.unterminated, 1);
        assert_eq!(r.malformed.total(), 6);
        assert_eq!(r.malformed_marks.len(), 6);
        assert_eq!(r.spans.len(), 1);
        assert_eq!(r.other_control_codes, 1);
        assert!(r.halts.is_empty());
        assert!(r.open_span.is_none());
    }

    #[test]
    fn endless_string_is_bounded_and_overlong() {
        let mut k = KDebug::new();
        let clock = Clock::default();
        for _ in 0..1_000_000 {
            k.write(VdpPort::Control, 0x9E58, &clock);
        }
        assert!(k.msg.capacity() <= 2 * MAX_MESSAGE);
        assert!(k.write(VdpPort::Control, 0x9E00, &clock).is_marker());
        k.resolve(5);
        let r = k.finish(0, 0, 0).unwrap();
        assert_eq!(r.malformed.overlong, 1);
        assert!(r.alerts.is_empty());
        // A message of exactly MAX_MESSAGE characters is kept.
        let mut k = KDebug::new();
        feed(&mut k, &message(&[b'Z'; MAX_MESSAGE]));
        let r = k.finish(0, 0, 0).unwrap();
        assert_eq!(r.alerts[0].text.len(), MAX_MESSAGE);
    }

    #[test]
    fn kept_spans_and_messages_are_bounded() {
        let mut k = KDebug::new();
        let clock = Clock::default();
        for i in 0..(MAX_KEPT as u64 + 5) {
            k.write(VdpPort::Control, 0x9F80, &clock);
            k.resolve(i * 100);
            k.write(VdpPort::Control, 0x9F40, &clock);
            k.resolve(i * 100 + 70);
        }
        let r = k.finish(0, 0, 0).unwrap();
        assert_eq!(r.spans.len(), MAX_KEPT);
        assert_eq!(r.spans_not_kept, 5);
        assert_eq!(r.timer.spans, MAX_KEPT as u64 + 5);
        assert_eq!((r.timer.min_cycles, r.timer.max_cycles), (10, 10));
    }
}
