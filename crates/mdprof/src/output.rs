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

/// Quote a CSV field when it needs it (RFC 4180).
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn opt_line(l: Option<u16>) -> String {
    l.map_or_else(|| "-1".to_string(), |v| v.to_string())
}

/// Header of [`frames_csv`] (watch columns follow, named by their spec).
pub const FRAMES_CSV_HEADER: &str = "frame,busy_cycles,idle_cycles,load_pct,dropped,dma_vblank_bytes,dma_active_bytes,\
frame_cycles,loop_starts,idle_enter_line,loop_start_line,dma_last_line,dma_fill_copy_bytes,\
dma_freeze_cycles,fifo_wait_cycles,refresh_cycles,z80_stall_cycles,interrupts,instructions,counted,top_function,top_cycles";

/// Per-frame CSV: one row per frame run; lines are -1 when absent;
/// `dropped` and `counted` are 0/1; `top_function` is the frame's busiest
/// non-idle function. `--watch` values follow as extra columns.
pub fn frames_csv<W: Write>(r: &Report, mut w: W) -> Result<(), OutputError> {
    let mut head = FRAMES_CSV_HEADER.to_string();
    for ws in &r.watches {
        head.push(',');
        head.push_str(&csv_field(&ws.spec));
    }
    writeln!(w, "{head}")?;
    for f in &r.frames {
        let (tn, tc) = match f.top.first() {
            Some(t) => (
                csv_field(&r.functions[t.function].name),
                format!("{:.1}", t.cycles),
            ),
            None => (String::new(), String::new()),
        };
        write!(
            w,
            "{},{:.1},{:.1},{:.2},{},{},{},{:.1},{},{},{},{},{},{:.1},{:.1},{:.1},{:.1},{},{},{},{},{}",
            f.frame,
            f.busy_cycles,
            f.idle_cycles,
            f.load_pct,
            f.dropped as u8,
            f.dma_vblank_bytes,
            f.dma_active_bytes,
            f.frame_cycles,
            f.loop_starts,
            opt_line(f.idle_enter_line),
            opt_line(f.loop_start_line),
            opt_line(f.dma_last_line),
            f.dma_fill_copy_bytes,
            f.dma_freeze_cycles,
            f.fifo_wait_cycles,
            f.refresh_cycles,
            f.z80_stall_cycles,
            f.interrupts,
            f.instructions,
            f.counted as u8,
            tn,
            tc
        )?;
        for v in &f.watch {
            write!(w, ",{v}")?;
        }
        writeln!(w)?;
    }
    Ok(())
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
/// value is its master clocks / 7 rounded to the nearest cycle).
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
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n - 1).collect();
        t.push('~');
        t
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

/// The terminal report: summary, top functions, worst frames. `color`:
/// ANSI colours (only when writing to a terminal).
pub fn terminal(r: &Report, color: bool) -> String {
    let st = Style { on: color };
    let s = &r.summary;
    let mut o = String::new();
    let sym = if r.symbols.source == "none" {
        "no symbols (address ranges)".to_string()
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
    let _ = writeln!(
        o,
        "{} {} ({} bytes, {}) - symbols: {}",
        st.bold("profile:"),
        r.rom.path,
        r.rom.bytes,
        r.rom.region,
        sym
    );
    for w in &r.warnings {
        let _ = writeln!(o, "{} {w}", st.yellow("warning:"));
    }
    let first = r.frames.iter().find(|f| f.counted).map_or(0, |f| f.frame);
    let last = r.frames.last().map_or(0, |f| f.frame);
    let _ = writeln!(
        o,
        "frames {first}-{last} ({} counted, {:.1} cycles each), idle = {}",
        s.frames_counted,
        r.timing.cycles_per_frame,
        if r.options.idle_found.is_empty() {
            "(none found)".to_string()
        } else {
            r.options.idle_found.join(", ")
        }
    );
    let dropped = format!("{}", s.dropped_frames);
    let boot = match s.first_loop_frame {
        Some(f) => format!("first game loop in frame {f}"),
        None => "no game loop detected".to_string(),
    };
    let _ = writeln!(
        o,
        "load: mean {:.1}%  p50 {:.1}%  p95 {:.1}%  p99 {:.1}%  max {}{}",
        s.mean_load_pct,
        s.p50_load_pct,
        s.p95_load_pct,
        s.p99_load_pct,
        load_style(&st, s.max_load_pct, &format!("{:.1}%", s.max_load_pct)),
        s.max_load_frame
            .map(|f| format!(" (frame {f})"))
            .unwrap_or_default(),
    );
    let _ = writeln!(
        o,
        "dropped frames: {} ({})",
        if s.dropped_frames > 0 {
            st.red(&dropped)
        } else {
            dropped
        },
        boot
    );
    if !s.dropped.is_empty() {
        let list: Vec<String> = s.dropped.iter().take(12).map(|f| f.to_string()).collect();
        let _ = writeln!(
            o,
            "  dropped: {}{}",
            list.join(" "),
            if s.dropped.len() > 12 {
                format!(" ... ({} more)", s.dropped.len() - 12)
            } else {
                String::new()
            }
        );
    }
    let _ =
        writeln!(
        o,
        "dma 68k->vdp: {} bytes in VBlank, {} in active display ({} frames{}); fill/copy {} bytes",
        thousands(s.dma_vblank_bytes as f64),
        thousands(s.dma_active_bytes as f64),
        s.frames_with_active_dma,
        s.max_dma_last_line.map(|l| format!(", last line {l}")).unwrap_or_default(),
        thousands(s.dma_fill_copy_bytes as f64)
    );
    let _ = writeln!(
        o,
        "cpu: frozen by DMA {} cycles, FIFO waits {} cycles, refresh {} cycles, {} interrupts",
        thousands(s.dma_freeze_cycles),
        thousands(s.fifo_wait_cycles),
        thousands(s.refresh_cycles),
        s.interrupts
    );
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "{}",
        st.bold("top functions (self cycles over the counted frames)")
    );
    let _ = writeln!(
        o,
        "{}",
        st.dim(&format!(
            "{:>3}  {:<40} {:>13} {:>7} {:>7} {:>8} {:>10} {:>13}",
            "#", "function", "self", "%all", "%busy", "calls", "cyc/call", "inclusive"
        ))
    );
    for (i, f) in r.functions.iter().take(r.options.top).enumerate() {
        let busy = if f.idle {
            "idle".to_string()
        } else {
            format!("{:.2}", f.pct_busy)
        };
        let _ = writeln!(
            o,
            "{:>3}  {:<40} {:>13} {:>7.2} {:>7} {:>8} {:>10.1} {:>13}",
            i + 1,
            truncate(&f.name, 40),
            thousands(f.self_cycles),
            f.pct_all,
            busy,
            f.calls,
            f.cycles_per_call,
            thousands(f.inclusive_cycles)
        );
    }
    let _ = writeln!(o);
    let _ = writeln!(o, "{}", st.bold("worst frames"));
    let _ = writeln!(
        o,
        "{}",
        st.dim(&format!(
            "{:>6} {:>7} {:>9} {:>7} {:>5} {:>7}  top functions",
            "frame", "load%", "busy", "dropped", "wait", "dma-act"
        ))
    );
    for &n in &r.worst_frames {
        let Some(f) = r.frame(n) else { continue };
        let _ = writeln!(o, "{}", worst_line(r, f, &st));
    }
    o.push_str(&crate::code::terminal_section(r, color));
    o
}

fn worst_line(r: &Report, f: &FrameRecord, st: &Style) -> String {
    let tops: Vec<String> = f
        .top
        .iter()
        .take(3)
        .map(|t| {
            format!(
                "{} {}",
                truncate(&r.functions[t.function].name, 32),
                thousands(t.cycles)
            )
        })
        .collect();
    format!(
        "{:>6} {} {:>9} {:>7} {:>5} {:>7}  {}",
        f.frame,
        load_style(st, f.load_pct, &format!("{:>7.1}", f.load_pct)),
        thousands(f.busy_cycles),
        if f.dropped { "yes" } else { "no" },
        opt_line(f.idle_enter_line),
        f.dma_active_bytes,
        tops.join(", ")
    )
}

/// Frames over `max_load` percent (counted frames).
pub fn frames_over_load(r: &Report, max_load: f64) -> Vec<u64> {
    r.counted_frames()
        .filter(|f| f.load_pct > max_load)
        .map(|f| f.frame)
        .collect()
}
