//! Report outputs: the terminal report, per-frame and per-function CSV,
//! JSON, and the [`StackProfile`] for the folded / flame graph / pprof /
//! speedscope writers of `retroprof-profile`.
//!
//! All outputs are deterministic: same report, same bytes. Numbers use `.`
//! as decimal separator and fixed precision (cycles 1 decimal, percentages
//! 2 decimals).

use retroprof_megadrive::timing::M68K_DIVIDER;
use std::fmt::Write as _;
use std::io::Write;

use retroprof_profile::{Frame, Sample, StackProfile, ValueType};

use crate::report::{FrameRecord, Report};

/// Errors from the writers.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Json(#[from] serde_json::Error),
}

use crate::columns::{csv_columns, csv_field};

/// Header of [`frames_csv`] for report `r`: the names of its
/// [`crate::columns::FRAME_COLUMNS`], then the `--watch` columns named by
/// their spec.
pub fn frames_csv_header(r: &Report) -> String {
    let mut head: Vec<String> = csv_columns(r).map(|c| c.name.to_string()).collect();
    head.extend(r.watches.iter().map(|ws| csv_field(&ws.spec)));
    head.join(",")
}

/// Per-frame CSV: one row per frame run, one column per
/// [`crate::columns::FRAME_COLUMNS`] entry (lines are -1 when absent;
/// `dropped` and `counted` are 0/1; `top_function` is the frame's busiest
/// non-idle function). `--watch` values follow as extra columns.
pub fn frames_csv<W: Write>(r: &Report, mut w: W) -> Result<(), OutputError> {
    writeln!(w, "{}", frames_csv_header(r))?;
    let cols: Vec<_> = csv_columns(r).collect();
    let mut row = String::new();
    for f in &r.frames {
        row.clear();
        for (i, c) in cols.iter().enumerate() {
            if i > 0 {
                row.push(',');
            }
            push_csv_cell(&mut row, &(c.get)(r, f));
        }
        for &v in &f.watch {
            row.push(',');
            push_u64(&mut row, v as u64);
        }
        row.push('\n');
        w.write_all(row.as_bytes())?;
    }
    Ok(())
}

/// Append `c` as [`crate::columns::Cell::csv`] writes it, into one
/// buffer and without `core::fmt` for the numbers (the per-frame CSV's
/// rows: one per frame of every run).
pub fn push_csv_cell(row: &mut String, c: &crate::columns::Cell) {
    use crate::columns::Cell;
    match *c {
        Cell::Count(v) | Cell::Bytes(v) | Cell::WholeCycles(v) => push_u64(row, v),
        Cell::Cycles(v) => push_fixed(row, v, 1),
        Cell::Pct(v) => push_fixed(row, v, 2),
        Cell::Flag(b) => row.push(if b { '1' } else { '0' }),
        Cell::Line(None) => row.push_str("-1"),
        Cell::Line(Some(v)) => push_u64(row, v as u64),
        Cell::OptCycles(c) => {
            if let Some(v) = c {
                push_fixed(row, v, 1)
            }
        }
        Cell::Text(t) => push_csv_field(row, t.unwrap_or_default()),
        Cell::Name(n) => push_csv_field(row, n.unwrap_or_default()),
    }
}

/// [`csv_field`] appended to `row`.
fn push_csv_field(row: &mut String, s: &str) {
    if s.contains([',', '"', '\n', '\r']) {
        row.push_str(&csv_field(s));
    } else {
        row.push_str(s);
    }
}

/// `v` in decimal, as `{v}` writes it.
fn push_u64(row: &mut String, mut v: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    for &b in &buf[i..] {
        row.push(b as char);
    }
}

/// `v` with `digits` (1 or 2) decimals, as `{v:.1}` / `{v:.2}` writes
/// it: the exact binary value rounded to the nearest, ties to even (what
/// `core::fmt` does), from the value's mantissa and exponent in integer
/// arithmetic. Negative, non-finite and very large values (none of the
/// per-frame figures) go through `core::fmt` itself.
fn push_fixed(row: &mut String, v: f64, digits: u32) {
    let scale: u64 = if digits == 1 { 10 } else { 100 };
    if !(v.is_finite() && v < 1e15) || v.is_sign_negative() || digits > 2 {
        let _ = write!(row, "{v:.*}", digits as usize);
        return;
    }
    // v = mant * 2^e exactly.
    let bits = v.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    let (mant, e) = if exp == 0 {
        (frac, -1074)
    } else {
        (frac | (1 << 52), exp - 1075)
    };
    // q = v * scale rounded to the nearest integer, ties to even.
    let q: u64 = if e >= 0 {
        (mant << e) * scale // v < 1e15: an integer that fits
    } else {
        let s = (-e) as u32;
        let n = mant as u128 * scale as u128; // < 2^60
        if s >= 128 {
            0 // below 2^-68: rounds to 0
        } else {
            let q = (n >> s) as u64;
            let r = n & ((1u128 << s) - 1);
            let half = 1u128 << (s - 1);
            if r > half || (r == half && q & 1 == 1) {
                q + 1
            } else {
                q
            }
        }
    };
    push_u64(row, q / scale);
    row.push('.');
    let f = q % scale;
    if digits == 2 && f < 10 {
        row.push('0');
    }
    push_u64(row, f);
}

/// Header of [`functions_csv`].
pub const FUNCTIONS_CSV_HEADER: &str =
    "function,self_cycles,inclusive_cycles,calls,pct_all,pct_busy,cycles_per_call,\
inclusive_per_call,addr,idle,origin,inlined_into,file,line";

/// The flat + inclusive profile as CSV, in the report's order (self cycles
/// descending).
pub fn functions_csv<W: Write>(r: &Report, mut w: W) -> Result<(), OutputError> {
    writeln!(w, "{FUNCTIONS_CSV_HEADER}")?;
    for f in &r.functions {
        writeln!(
            w,
            "{},{:.1},{:.1},{},{:.3},{:.3},{:.1},{:.1},0x{:06x},{},{},{},{},{}",
            csv_field(&f.name),
            f.self_cycles,
            f.inclusive_cycles,
            f.calls,
            f.pct_all,
            f.pct_busy,
            f.cycles_per_call,
            f.inclusive_per_call,
            f.addr,
            f.idle as u8,
            f.origin,
            csv_field(f.inlined_into.as_deref().unwrap_or("")),
            csv_field(f.file.as_deref().unwrap_or("")),
            f.line.map(|l| l.to_string()).unwrap_or_default()
        )?;
    }
    Ok(())
}

/// The whole report as pretty JSON (schema: [`crate::report`], field
/// `schema` = [`crate::report::SCHEMA`]).
pub fn json<W: Write>(r: &Report, mut w: W) -> Result<(), OutputError> {
    serde_json::to_writer_pretty(&mut w, r)?;
    writeln!(w)?;
    Ok(())
}

/// The call stacks as a [`StackProfile`] with one value type,
/// `cycles`/`cycles` (68000 cycles rounded from master clocks; a stack's
/// value is its master clocks / `M68K_DIVIDER` rounded to the nearest cycle).
pub fn stack_profile(r: &Report) -> StackProfile {
    let frames = r
        .functions
        .iter()
        .map(|f| Frame {
            name: f.name.clone(),
            addr: Some(f.addr as u64),
            file: f.file.clone(),
            line: f.line,
            module: None,
            inlined: false,
        })
        .collect();
    let samples = r
        .stacks
        .iter()
        .filter(|s| s.mclk > 0)
        .map(|s| Sample {
            stack: s.stack.iter().map(|&i| i as u32).collect(),
            // mclk -> 68000 cycles, rounded to nearest.
            values: vec![((s.mclk + M68K_DIVIDER / 2) / M68K_DIVIDER) as i64],
        })
        .collect();
    StackProfile {
        name: r.rom.path.clone(),
        value_types: vec![ValueType {
            kind: "cycles".into(),
            unit: "cycles".into(),
        }],
        default_value: 0,
        frames,
        samples,
    }
}

/// ANSI styling of terminal reports, or none (`on: false`); shared by the
/// profile report and `retroprof-diff`'s.
pub struct Style {
    pub on: bool,
}

impl Style {
    /// `s` in the SGR style `code` (e.g. `"1"` bold, `"31"` red).
    pub fn paint(&self, code: &str, s: &str) -> String {
        if self.on {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
    pub fn bold(&self, s: &str) -> String {
        self.paint("1", s)
    }
    pub fn red(&self, s: &str) -> String {
        self.paint("31;1", s)
    }
    pub fn yellow(&self, s: &str) -> String {
        self.paint("33", s)
    }
    pub fn dim(&self, s: &str) -> String {
        self.paint("2", s)
    }
}

/// `1234567.4` -> `1,234,567` (rounded; any value, `i64::MIN` included).
pub fn thousands(v: f64) -> String {
    let n = v.round() as i64;
    let s = n.unsigned_abs().to_string();
    let mut out = String::new();
    if n < 0 {
        out.push('-');
    }
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Width of the terminal report: every line fits 80 columns (file paths
/// longer than a line are the only text that can overrun it: they are
/// never cut).
pub const TERMINAL_WIDTH: usize = 80;

/// `s` cut to `n` characters, the last one an ellipsis when cut.
fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// Columns `s` takes on a terminal: characters outside ANSI SGR sequences.
fn visible_len(s: &str) -> usize {
    let mut n = 0;
    let mut in_esc = false;
    for c in s.chars() {
        if in_esc {
            in_esc = c != 'm';
        } else if c == '\x1b' {
            in_esc = true;
        } else {
            n += 1;
        }
    }
    n
}

/// `text` (words separated by single spaces, styled words allowed) as
/// lines of at most [`TERMINAL_WIDTH`] columns, continuation lines
/// indented by two spaces; a word longer than a line (a long path) gets a
/// line of its own.
fn wrapped(o: &mut String, text: &str) {
    let body = text.trim_start_matches(' ');
    let lead = text.len() - body.len();
    let mut line = " ".repeat(lead);
    let mut len = lead;
    let mut fresh = true;
    for w in body.split(' ') {
        let wl = visible_len(w);
        if !fresh && len + 1 + wl > TERMINAL_WIDTH {
            let _ = writeln!(o, "{line}");
            line = " ".repeat(lead + 2);
            len = lead + 2;
            fresh = true;
        }
        if !fresh {
            line.push(' ');
            len += 1;
        }
        line.push_str(w);
        len += wl;
        fresh = false;
    }
    let _ = writeln!(o, "{line}");
}

/// `NTSC UsaNtsc` (the JSON's [`crate::report::RomInfo::region`]) as
/// people say it: `USA, NTSC`.
pub fn region_name(region: &str) -> String {
    let area = match region.split(' ').nth(1) {
        Some("UsaNtsc") => "USA",
        Some("JapanNtsc") => "Japan",
        Some("EuropePal") => "Europe",
        _ => return region.to_string(),
    };
    let tv = region.split(' ').next().unwrap_or("");
    format!("{area}, {tv}")
}

/// `calls` and `cyc/call` of a function: `-` when no call or exception
/// entered it (code reached only by jumps or by falling through: local
/// labels, tail calls), where a per-call figure means nothing.
fn per_call(calls: u64, v: f64) -> (String, String) {
    if calls == 0 {
        ("-".into(), "-".into())
    } else if v < 100_000.0 {
        (calls.to_string(), format!("{v:.1}"))
    } else {
        (calls.to_string(), format!("{v:.0}"))
    }
}

fn load_style(st: &Style, load: f64, text: &str) -> String {
    if load >= 100.0 {
        st.red(text)
    } else if load >= 80.0 {
        st.yellow(text)
    } else {
        text.to_string()
    }
}

/// The terminal report: summary, top functions, worst frames, every line
/// within [`TERMINAL_WIDTH`] columns (function names cut with an
/// ellipsis, numbers never). `color`: ANSI colours (only when writing to
/// a terminal).
pub fn terminal(r: &Report, color: bool) -> String {
    let st = Style { on: color };
    let s = &r.summary;
    let mut o = String::new();
    wrapped(
        &mut o,
        &format!(
            "{} {} ({} bytes, {})",
            st.bold("profile:"),
            r.rom.path,
            thousands(r.rom.bytes as f64),
            region_name(&r.rom.region)
        ),
    );
    let sym = if r.symbols.source == "none" {
        "none (functions are 256-byte address ranges)".to_string()
    } else {
        format!(
            "{} {} ({} functions{}{})",
            r.symbols.source,
            r.symbols.path,
            r.symbols.function_symbols,
            if r.symbols.dwarf {
                ", DWARF inlining"
            } else {
                ""
            },
            if r.symbols.keep_labels {
                ", labels kept"
            } else {
                ""
            }
        )
    };
    wrapped(&mut o, &format!("symbols: {sym}"));
    for w in &r.warnings {
        wrapped(&mut o, &format!("{} {w}", st.yellow("warning:")));
    }
    let first = r.frames.iter().find(|f| f.counted).map_or(0, |f| f.frame);
    let last = r.frames.last().map_or(0, |f| f.frame);
    wrapped(
        &mut o,
        &format!(
            "frames {first}-{last} ({} counted, {:.1} cycles each), idle = {}",
            s.frames_counted,
            r.timing.cycles_per_frame,
            if r.options.idle_found.is_empty() {
                "(none found)".to_string()
            } else {
                r.options.idle_found.join(", ")
            }
        ),
    );
    wrapped(&mut o, &loading_line(r));
    wrapped(
        &mut o,
        &format!(
            "load: mean {:.1}%  p50 {:.1}%  p95 {:.1}%  p99 {:.1}%  max {}{}",
            s.mean_load_pct,
            s.p50_load_pct,
            s.p95_load_pct,
            s.p99_load_pct,
            load_style(&st, s.max_load_pct, &format!("{:.1}%", s.max_load_pct)),
            s.max_load_frame
                .map(|f| format!(" (frame {f})"))
                .unwrap_or_default(),
        ),
    );
    let dropped = s.dropped_frames.to_string();
    let boot = match s.first_loop_frame {
        Some(f) => format!("first game loop in frame {f}"),
        None => "no game loop detected".to_string(),
    };
    let split = if r.options.include_loading {
        String::new()
    } else {
        format!(" gameplay, {} loading", s.dropped_loading_frames)
    };
    wrapped(
        &mut o,
        &format!(
            "dropped frames: {}{split} ({boot})",
            if s.dropped_frames > 0 {
                st.red(&dropped)
            } else {
                dropped
            },
        ),
    );
    if !s.dropped.is_empty() {
        let list: Vec<String> = s.dropped.iter().take(12).map(|f| f.to_string()).collect();
        wrapped(
            &mut o,
            &format!(
                "  dropped: {}{}",
                list.join(" "),
                if s.dropped.len() > 12 {
                    format!(" ... ({} more)", s.dropped.len() - 12)
                } else {
                    String::new()
                }
            ),
        );
    }
    wrapped(
        &mut o,
        &format!(
            "dma 68k->vdp: {} bytes in VBlank, {} in active display ({} frames{}); \
             fill/copy {} bytes",
            thousands(s.dma_vblank_bytes as f64),
            thousands(s.dma_active_bytes as f64),
            s.frames_with_active_dma,
            s.max_dma_last_line
                .map(|l| format!(", last line {l}"))
                .unwrap_or_default(),
            thousands(s.dma_fill_copy_bytes as f64)
        ),
    );
    wrapped(
        &mut o,
        &format!(
            "cpu: frozen by DMA {} cycles, FIFO waits {} cycles, refresh {} cycles, {} interrupts",
            thousands(s.dma_freeze_cycles),
            thousands(s.fifo_wait_cycles),
            thousands(s.refresh_cycles),
            s.interrupts
        ),
    );
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "{}",
        st.bold("top functions (self cycles over the counted frames)")
    );
    // 2+2+22+1+11+1+5+1+5+1+7+1+9+1+11 = 80 columns; numbers wider than
    // their column (very long runs) take the room from the names.
    let shown = &r.functions[..r.options.top.min(r.functions.len())];
    let wide = |v: &dyn Fn(&crate::report::FunctionStats) -> f64| {
        shown
            .iter()
            .map(|f| thousands(v(f)).len())
            .max()
            .unwrap_or(0)
            .max(11)
    };
    let (ws, wi) = (wide(&|f| f.self_cycles), wide(&|f| f.inclusive_cycles));
    let wn = 22usize.saturating_sub(ws - 11 + wi - 11).max(12);
    let _ = writeln!(
        o,
        "{}",
        st.dim(&format!(
            "{:>2}  {:<wn$} {:>ws$} {:>5} {:>5} {:>7} {:>9} {:>wi$}",
            "#", "function", "self", "%all", "%busy", "calls", "cyc/call", "inclusive"
        ))
    );
    for (i, f) in shown.iter().enumerate() {
        let busy = if f.idle {
            "idle".to_string()
        } else {
            format!("{:.1}", f.pct_busy)
        };
        let (calls, cpc) = per_call(f.calls, f.cycles_per_call);
        let _ = writeln!(
            o,
            "{:>2}  {:<wn$} {:>ws$} {:>5.1} {:>5} {:>7} {:>9} {:>wi$}",
            i + 1,
            truncate(&f.name, wn),
            thousands(f.self_cycles),
            f.pct_all,
            busy,
            calls,
            cpc,
            thousands(f.inclusive_cycles)
        );
    }
    if r.functions.iter().take(r.options.top).any(|f| f.calls == 0) {
        let _ = writeln!(
            o,
            "{}",
            st.dim("calls -: entered only by jumps or falling through (no JSR/BSR/exception)")
        );
    }
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "{}",
        st.bold(if r.options.include_loading {
            "worst frames (loading frames included)"
        } else {
            "worst frames (gameplay)"
        })
    );
    let _ = writeln!(
        o,
        "{}",
        st.dim(&format!(
            "{:>6} {:>6} {:>9} {:>4} {:>4} {:>7}  top functions",
            "frame", "load%", "busy", "drop", "wait", "dma-act"
        ))
    );
    for &n in &r.worst_frames {
        let Some(f) = r.frame(n) else { continue };
        let _ = writeln!(o, "{}", worst_line(r, f, &st));
    }
    if !r.worst_frames.is_empty() {
        let _ = writeln!(
            o,
            "{}",
            st.dim("wait: line where the game began waiting for VBlank (- = it never waited)")
        );
    }
    o.push_str(&crate::kdebug::terminal(r, &st));
    o.push_str(&crate::code::terminal_section(r, color));
    o
}

/// How many frames the gameplay rule set aside, and why.
fn loading_line(r: &Report) -> String {
    let s = &r.summary;
    if r.options.include_loading {
        let n = r
            .frames
            .iter()
            .filter(|f| f.counted && f.loading.is_some())
            .count();
        return format!("loading frames: {n}, counted like gameplay (--include-loading)");
    }
    if s.loading_frames == 0 {
        return "loading frames set aside: none".to_string();
    }
    let mut why = Vec::new();
    if s.loading_boot_frames > 0 {
        why.push(format!(
            "{} before the first game loop",
            s.loading_boot_frames
        ));
    }
    if s.loading_display_off_frames > 0 {
        why.push(format!(
            "{} with the display off",
            s.loading_display_off_frames
        ));
    }
    if s.loading_black_frames > 0 {
        why.push(format!("{} black on screen", s.loading_black_frames));
    }
    if s.loading_stall_frames > 0 {
        why.push(format!(
            "{} in stalls of {}+ frames without a VBlank wait",
            s.loading_stall_frames,
            crate::gameplay::STALL_FRAMES
        ));
    }
    if s.loading_marked_frames > 0 {
        why.push(format!(
            "{} marked as loading by the game",
            s.loading_marked_frames
        ));
    }
    format!(
        "loading frames set aside: {} ({}); --include-loading counts them",
        s.loading_frames,
        why.join(", ")
    )
}

fn worst_line(r: &Report, f: &FrameRecord, st: &Style) -> String {
    // 6+1+6+1+9+1+4+1+4+1+7+2 = 43 columns before the functions.
    let head = format!(
        "{:>6} {} {:>9} {:>4} {:>4} {:>7}  ",
        f.frame,
        load_style(st, f.load_pct, &format!("{:>6.1}", f.load_pct)),
        thousands(f.busy_cycles),
        if f.dropped { "yes" } else { "no" },
        f.idle_enter_line
            .map_or_else(|| "-".to_string(), |l| l.to_string()),
        f.dma_active_bytes,
    );
    let room = TERMINAL_WIDTH.saturating_sub(visible_len(&head));
    let tops: Vec<(&str, String)> = f
        .top
        .iter()
        .take(3)
        .map(|t| (r.functions[t.function].name.as_str(), thousands(t.cycles)))
        .collect();
    // All three when they fit; else as many as fit with names of at least
    // 10 characters (the first always), the names cut to share the room.
    let full = |k: usize| {
        tops[..k]
            .iter()
            .map(|(n, c)| format!("{n} {c}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut text = full(tops.len());
    if text.chars().count() > room {
        for k in (1..=tops.len()).rev() {
            let fixed: usize =
                tops[..k].iter().map(|(_, c)| c.len() + 1).sum::<usize>() + 2 * (k - 1);
            let w = room.saturating_sub(fixed) / k;
            if w >= 10 || k == 1 {
                text = tops[..k]
                    .iter()
                    .map(|(n, c)| format!("{} {c}", truncate(n, w.max(4))))
                    .collect::<Vec<_>>()
                    .join(", ");
                break;
            }
        }
    }
    format!("{head}{text}")
}

/// Frames over `max_load` percent: the frames of the load statistics
/// ([`Report::load_frames`]: counted gameplay frames, or all counted
/// frames with `--include-loading`).
pub fn frames_over_load(r: &Report, max_load: f64) -> Vec<u64> {
    r.load_frames()
        .filter(|f| f.load_pct > max_load)
        .map(|f| f.frame)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{FrameFunction, FunctionStats, Summary};

    #[test]
    fn terminal_fits_80_columns_and_explains_its_dashes() {
        let long = "a_function_with_a_name_much_longer_than_any_column".to_string();
        let mut r = Report {
            functions: vec![
                FunctionStats {
                    name: long.clone(),
                    self_cycles: 123_456_789_012.0,
                    inclusive_cycles: 223_456_789_012.0,
                    calls: 0,
                    pct_all: 99.5,
                    pct_busy: 99.9,
                    ..FunctionStats::default()
                },
                FunctionStats {
                    name: "short".into(),
                    self_cycles: 1000.0,
                    calls: 4,
                    cycles_per_call: 250.0,
                    ..FunctionStats::default()
                },
            ],
            summary: Summary {
                frames_counted: 1,
                ..Summary::default()
            },
            worst_frames: vec![0],
            warnings: vec!["a warning long enough to need wrapping: ".repeat(4)],
            ..Report::default()
        };
        r.rom.region = "NTSC UsaNtsc".into();
        r.options.top = 10;
        r.frames.push(FrameRecord {
            frame: 0,
            counted: true,
            load_pct: 100.0,
            busy_cycles: 128_006.0,
            top: vec![
                FrameFunction {
                    function: 0,
                    cycles: 100_000.0,
                },
                FrameFunction {
                    function: 1,
                    cycles: 28_006.0,
                },
                FrameFunction {
                    function: 0,
                    cycles: 1.0,
                },
            ],
            ..FrameRecord::default()
        });
        let t = terminal(&r, false);
        for l in t.lines() {
            assert!(l.chars().count() <= TERMINAL_WIDTH, "{l:?}");
        }
        // The region once, in words.
        assert!(t.contains("USA, NTSC"), "{t}");
        assert!(!t.contains("UsaNtsc"));
        // Names cut with an ellipsis, numbers whole.
        assert!(t.contains("a_function_wi…"), "{t}");
        assert!(t.contains("123,456,789,012"));
        assert!(t.contains("223,456,789,012"));
        // No calls: dashes, explained; the wait column explained.
        let row = t.lines().find(|l| l.contains("a_function")).unwrap();
        assert_eq!(
            row.split_whitespace().filter(|w| *w == "-").count(),
            2,
            "{row}"
        );
        assert!(t.contains("calls -: entered only by jumps"));
        assert!(t.contains("wait: line where the game began waiting"));
        let worst = t
            .lines()
            .find(|l| l.trim_start().starts_with("0 "))
            .unwrap();
        assert!(worst.contains(" - "), "no wait: {worst}");
        assert!(worst.contains("100,000"), "{worst}");
        // Colour codes do not count as columns.
        for l in terminal(&r, true).lines() {
            assert!(visible_len(l) <= TERMINAL_WIDTH, "{l:?}");
        }
    }

    #[test]
    fn region_names() {
        assert_eq!(region_name("NTSC JapanNtsc"), "Japan, NTSC");
        assert_eq!(region_name("PAL EuropePal"), "Europe, PAL");
        assert_eq!(region_name("odd"), "odd");
    }
}
