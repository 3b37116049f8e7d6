//! Outputs of a [`Diff`]: terminal text (80 columns), CSV per function and
//! per frame, JSON, self-contained HTML.
//!
//! The file writers take any `Write` and return `retroprof_profile::Error`
//! (I/O errors with path [`retroprof_profile::write::STREAM_PATH`]), so the
//! CLI hands them to `retroprof_profile::write::atomic` like every other
//! output. All outputs are deterministic.

use retroprof_mdprof::html::esc as html_escape;
use std::fmt::Write as _;
use std::io::Write;

use retroprof_profile::write::STREAM_PATH;
use retroprof_profile::Error;

use crate::model::{Diff, FunctionDelta, Match, Metric};
pub use retroprof_mdprof::output::thousands;
use retroprof_mdprof::output::Style;

fn io(source: std::io::Error) -> Error {
    Error::Io {
        path: STREAM_PATH.to_string(),
        source,
    }
}

/// Terminal width the text report keeps to.
pub const WIDTH: usize = 80;

/// Red when worse (grew), green when better; `good_when_up` flips it.
fn paint_delta(st: &Style, d: f64, good_when_up: bool, s: &str) -> String {
    if d == 0.0 || !d.is_finite() {
        s.to_string()
    } else if (d > 0.0) != good_when_up {
        st.paint("31", s)
    } else {
        st.paint("32", s)
    }
}

fn signed_thousands(v: f64) -> String {
    if v.round() > 0.0 {
        format!("+{}", thousands(v))
    } else if v.round() == 0.0 {
        "0".to_string()
    } else {
        thousands(v)
    }
}

fn pct_change(m: &Metric) -> String {
    match m.change_pct {
        Some(c) if c.abs() < 0.005 => "0.00%".to_string(),
        Some(c) => format!("{c:+.2}%"),
        None if m.new != 0.0 => "new".to_string(),
        None => String::new(),
    }
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n.saturating_sub(1)).collect();
        t.push('~');
        t
    }
}

/// Keep the end of a long path: `~/out600/knowncosts/rom.bin`.
fn truncate_left(s: &str, n: usize) -> String {
    let len = s.chars().count();
    if len <= n {
        s.to_string()
    } else {
        let mut t = String::from("~");
        t.extend(s.chars().skip(len - n + 1));
        t
    }
}

fn fmt_metric(v: f64, unit: &str) -> String {
    match unit {
        "%" => format!("{v:.2}%"),
        _ => thousands(v),
    }
}

fn fmt_delta(m: &Metric, unit: &str) -> String {
    match unit {
        "%" => format!("{:+.2} pt", m.delta),
        _ => signed_thousands(m.delta),
    }
}

fn side_line(label: &str, s: &crate::model::Side) -> String {
    format!(
        "{label}\"{}\", {}, {} frames, first loop {}",
        s.title,
        s.region,
        s.frames_run,
        s.first_loop_frame
            .map_or("never".to_string(), |f| format!("in frame {f}"))
    )
}

/// Functions that changed, in the diff's order (largest self change first).
fn changed(d: &Diff) -> impl Iterator<Item = &FunctionDelta> {
    d.functions.iter().filter(|f| {
        f.self_cycles.delta != 0.0
            || f.inclusive_cycles.delta != 0.0
            || f.calls.delta != 0.0
            || matches!(f.matched, Match::New | Match::Removed)
    })
}

/// The terminal report: the two sides, warnings, summary deltas, the `top`
/// functions with the largest change in self cycles, the frames whose load
/// changed most, and the renamed / new / removed functions. Lines fit
/// [`WIDTH`] columns (long names are cut with `~`). `color`: ANSI colours.
pub fn terminal(d: &Diff, top: usize, color: bool) -> String {
    let st = Style { on: color };
    let mut o = String::new();
    let _ = writeln!(o, "{} (base -> new)", st.bold("diff"));
    for (label, s) in [("base:", &d.base), ("new: ", &d.new)] {
        let _ = writeln!(o, "  {label} {}", truncate_left(&s.label, WIDTH - 8));
        if s.rom_path != s.label {
            let _ = writeln!(o, "        {}", truncate_left(&s.rom_path, WIDTH - 8));
        }
        let _ = writeln!(o, "        {}", truncate(&side_line("", s), WIDTH - 8));
    }
    if d.aligned_first_loop {
        let _ = writeln!(
            o,
            "  frames aligned at the first game loop: new frame n = base frame n{:+}",
            d.frame_offset
        );
    }
    for w in &d.warnings {
        let _ = writeln!(o, "{} {w}", st.yellow("warning:"));
    }
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "{}",
        st.bold(&format!(
            "{:<27} {:>14} {:>14} {:>12} {:>8}",
            "summary", "base", "new", "delta", "change"
        ))
    );
    for (name, m, unit) in d.summary.rows() {
        let up_good = false;
        let delta = fmt_delta(m, unit);
        let change = if unit == "%" {
            String::new()
        } else {
            pct_change(m)
        };
        let _ = writeln!(
            o,
            "{:<27} {:>14} {:>14} {} {:>8}",
            name,
            fmt_metric(m.base, unit),
            fmt_metric(m.new, unit),
            paint_delta(&st, m.delta, up_good, &format!("{delta:>12}")),
            change
        );
    }
    if !d.summary.newly_dropped.is_empty() {
        let v: Vec<String> = d
            .summary
            .newly_dropped
            .iter()
            .take(12)
            .map(|f| f.to_string())
            .collect();
        let more = d.summary.newly_dropped.len().saturating_sub(12);
        let _ = writeln!(
            o,
            "  dropped now, not before: {}{}",
            v.join(" "),
            if more > 0 {
                format!(" ... ({more} more)")
            } else {
                String::new()
            }
        );
    }
    let _ = writeln!(o);
    let nchanged = changed(d).count();
    let _ = writeln!(
        o,
        "{}",
        st.bold(&format!(
            "functions by change in self cycles ({nchanged} of {} changed)",
            d.functions.len()
        ))
    );
    if nchanged > 0 {
        let _ = writeln!(
            o,
            "{}",
            st.dim(&format!(
                "{:<29} {:>12} {:>12} {:>13} {:>9}",
                "function", "self base", "self new", "delta", "change"
            ))
        );
        let _ = writeln!(
            o,
            "{}",
            st.dim("    inclusive base -> new, calls base -> new, cycles/call base -> new")
        );
    }
    for f in changed(d).take(top) {
        let mut name = f.name.clone();
        if f.idle {
            name.push_str(" [idle]");
        }
        match f.matched {
            Match::New => name.push_str(" [new]"),
            Match::Removed => name.push_str(" [removed]"),
            _ => {}
        }
        let delta = signed_thousands(f.self_cycles.delta);
        let _ = writeln!(
            o,
            "{:<29} {:>12} {:>12} {} {:>9}",
            truncate(&name, 29),
            thousands(f.self_cycles.base),
            thousands(f.self_cycles.new),
            if f.idle {
                format!("{delta:>13}")
            } else {
                paint_delta(&st, f.self_cycles.delta, false, &format!("{delta:>13}"))
            },
            pct_change(&f.self_cycles)
        );
        let line2 = format!(
            "    {} -> {}, {} -> {} calls, {:.1} -> {:.1}",
            thousands(f.inclusive_cycles.base),
            thousands(f.inclusive_cycles.new),
            thousands(f.calls.base),
            thousands(f.calls.new),
            f.cycles_per_call.base,
            f.cycles_per_call.new
        );
        let _ = writeln!(o, "{}", st.dim(&truncate(&line2, WIDTH)));
        if let Some(b) = &f.base_name {
            let _ = writeln!(o, "{}", st.dim(&truncate(&format!("    was {b}"), WIDTH)));
        }
    }
    if nchanged > top {
        let _ = writeln!(o, "  ... {} more changed (--top N)", nchanged - top);
    }
    if !d.top_frames.is_empty() {
        let _ = writeln!(o);
        let _ = writeln!(o, "{}", st.bold("frames whose load changed most"));
        let _ = writeln!(
            o,
            "{}",
            st.dim(&format!(
                "{:>7} {:>10} {:>10} {:>10} {:>11} {:>10}  {}",
                "frame", "base frame", "load base", "load new", "delta", "busy delta", "dropped"
            ))
        );
        for &n in &d.top_frames {
            let Some(f) = d.frames.iter().find(|f| f.frame == n) else {
                continue;
            };
            let delta = format!("{:+.2} pt", f.load_pct.delta);
            let yn = |b: bool| if b { "yes" } else { "no" };
            let _ = writeln!(
                o,
                "{:>7} {:>10} {:>9.2}% {:>9.2}% {} {:>10}  {}",
                f.frame,
                f.base_frame,
                f.load_pct.base,
                f.load_pct.new,
                paint_delta(&st, f.load_pct.delta, false, &format!("{delta:>11}")),
                signed_thousands(f.busy_cycles.delta),
                if f.dropped_base == f.dropped_new {
                    yn(f.dropped_new).to_string()
                } else {
                    format!("{} -> {}", yn(f.dropped_base), yn(f.dropped_new))
                }
            );
        }
    }
    let list = |o: &mut String, title: &str, v: &[String]| {
        if v.is_empty() {
            return;
        }
        let _ = writeln!(o);
        let _ = writeln!(o, "{} ({})", st.bold(title), v.len());
        let mut line = String::from(" ");
        for n in v.iter().take(40) {
            if line.len() + n.len() + 1 > WIDTH {
                let _ = writeln!(o, "{line}");
                line = String::from(" ");
            }
            line.push(' ');
            line.push_str(&truncate(n, WIDTH - 3));
        }
        if v.len() > 40 {
            line.push_str(&format!(" ... ({} more)", v.len() - 40));
        }
        let _ = writeln!(o, "{}", truncate(&line, WIDTH));
    };
    let renamed: Vec<String> = d
        .renamed
        .iter()
        .map(|r| format!("{} -> {}", r.base, r.new))
        .collect();
    list(
        &mut o,
        "renamed (compiler clones matched by base name)",
        &renamed,
    );
    list(&mut o, "new functions", &d.new_functions);
    list(&mut o, "removed functions", &d.removed_functions);
    o
}

/// Quote a CSV field when it needs it (RFC 4180).
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn opt_pct(v: Option<f64>) -> String {
    v.map(|c| format!("{c:.3}")).unwrap_or_default()
}

/// Header of [`functions_csv`].
pub const FUNCTIONS_CSV_HEADER: &str =
    "function,base_name,match,idle,self_base,self_new,self_delta,\
self_change_pct,inclusive_base,inclusive_new,inclusive_delta,calls_base,calls_new,\
cycles_per_call_base,cycles_per_call_new,cycles_per_call_delta,delta_pct_of_all";

/// One row per function, in the diff's order (largest self change first).
/// `match` is `same`, `clone`, `new` or `removed`; `self_change_pct` is
/// empty when the base had 0 cycles; cycles with 1 decimal.
pub fn functions_csv(d: &Diff, w: &mut dyn Write) -> Result<(), Error> {
    let mut w = std::io::BufWriter::new(w);
    writeln!(w, "{FUNCTIONS_CSV_HEADER}").map_err(io)?;
    for f in &d.functions {
        writeln!(
            w,
            "{},{},{},{},{:.1},{:.1},{:.1},{},{:.1},{:.1},{:.1},{},{},{:.1},{:.1},{:.1},{:.4}",
            csv_field(&f.name),
            csv_field(f.base_name.as_deref().unwrap_or("")),
            match f.matched {
                Match::Same => "same",
                Match::Clone => "clone",
                Match::New => "new",
                Match::Removed => "removed",
            },
            f.idle as u8,
            f.self_cycles.base,
            f.self_cycles.new,
            f.self_cycles.delta,
            opt_pct(f.self_cycles.change_pct),
            f.inclusive_cycles.base,
            f.inclusive_cycles.new,
            f.inclusive_cycles.delta,
            f.calls.base,
            f.calls.new,
            f.cycles_per_call.base,
            f.cycles_per_call.new,
            f.cycles_per_call.delta,
            f.delta_pct_of_all
        )
        .map_err(io)?;
    }
    w.flush().map_err(io)
}

/// Header of [`frames_csv`].
pub const FRAMES_CSV_HEADER: &str = "frame,base_frame,load_base,load_new,load_delta,busy_base,\
busy_new,busy_delta,dropped_base,dropped_new,dma_active_base,dma_active_new";

/// One row per matched frame, in frame order; loads in percent with 2
/// decimals (delta in points), dropped as 0/1.
pub fn frames_csv(d: &Diff, w: &mut dyn Write) -> Result<(), Error> {
    let mut w = std::io::BufWriter::new(w);
    writeln!(w, "{FRAMES_CSV_HEADER}").map_err(io)?;
    for f in &d.frames {
        writeln!(
            w,
            "{},{},{:.2},{:.2},{:.2},{:.1},{:.1},{:.1},{},{},{},{}",
            f.frame,
            f.base_frame,
            f.load_pct.base,
            f.load_pct.new,
            f.load_pct.delta,
            f.busy_cycles.base,
            f.busy_cycles.new,
            f.busy_cycles.delta,
            f.dropped_base as u8,
            f.dropped_new as u8,
            f.dma_active_bytes.base,
            f.dma_active_bytes.new
        )
        .map_err(io)?;
    }
    w.flush().map_err(io)
}

/// The whole diff as pretty JSON (schema [`crate::model::SCHEMA`],
/// documented in [`crate::model`]).
pub fn json(d: &Diff, w: &mut dyn Write) -> Result<(), Error> {
    let mut w = std::io::BufWriter::new(w);
    serde_json::to_writer_pretty(&mut w, d).map_err(|e| Error::Invalid(e.to_string()))?;
    writeln!(w).map_err(io)?;
    w.flush().map_err(io)
}

/// The per-frame plot: base and new load (top panel) and the load delta
/// as bars (bottom panel, red = slower, green = faster).
fn plot(d: &Diff) -> String {
    let (w, h1, h2, pad) = (1000.0f64, 200.0f64, 160.0f64, 44.0f64);
    let mut s = String::new();
    let n = d.frames.len();
    let _ = write!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{}\" \
         viewBox=\"0 0 {w} {}\" role=\"img\" aria-label=\"per-frame load\">",
        h1 + h2 + 3.0 * pad,
        h1 + h2 + 3.0 * pad
    );
    if n == 0 {
        s.push_str("<text x=\"10\" y=\"20\">no matched frames</text></svg>");
        return s;
    }
    let first = d.frames[0].frame as f64;
    let last = d.frames[n - 1].frame as f64;
    let span = (last - first).max(1.0);
    let x = |f: u64| pad + (f as f64 - first) / span * (w - 2.0 * pad);
    let maxload = d
        .frames
        .iter()
        .map(|f| f.load_pct.base.max(f.load_pct.new))
        .fold(100.0f64, f64::max);
    let y1 = |v: f64| pad + h1 - v / maxload * h1;
    // Top panel: loads.
    let _ = write!(
        s,
        "<text x=\"{pad}\" y=\"{}\" font-size=\"13\">load per frame (%): \
         <tspan fill=\"#888\">base</tspan>, <tspan fill=\"#1f5fbf\">new</tspan></text>",
        pad - 10.0
    );
    for v in [0.0, 50.0, 100.0] {
        let _ = write!(
            s,
            "<line x1=\"{pad}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#ddd\"/>\
             <text x=\"{}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"end\">{v}</text>",
            w - pad,
            pad - 4.0,
            y1(v) + 3.0,
            y = y1(v)
        );
    }
    for (side, colour) in [(0, "#999"), (1, "#1f5fbf")] {
        let mut pts = String::new();
        for f in &d.frames {
            let v = if side == 0 {
                f.load_pct.base
            } else {
                f.load_pct.new
            };
            let _ = write!(pts, "{:.1},{:.1} ", x(f.frame), y1(v));
        }
        let _ = write!(
            s,
            "<polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"1\" points=\"{}\"/>",
            pts.trim_end()
        );
    }
    // Bottom panel: delta bars.
    let top2 = 2.0 * pad + h1;
    let maxd = d
        .frames
        .iter()
        .map(|f| f.load_pct.delta.abs())
        .fold(0.0f64, f64::max)
        .max(0.01);
    let mid = top2 + h2 / 2.0;
    let y2 = |v: f64| mid - v / maxd * (h2 / 2.0);
    let _ = write!(
        s,
        "<text x=\"{pad}\" y=\"{}\" font-size=\"13\">load delta per frame (points, new - base; \
         <tspan fill=\"#c0392b\">slower</tspan> / <tspan fill=\"#27ae60\">faster</tspan>)</text>",
        top2 - 10.0
    );
    let bw = ((w - 2.0 * pad) / span).max(1.0);
    for f in &d.frames {
        let v = f.load_pct.delta;
        if v == 0.0 {
            continue;
        }
        let (ya, yb) = (y2(v.max(0.0)), y2(v.min(0.0)));
        let _ = write!(
            s,
            "<rect x=\"{:.1}\" y=\"{ya:.1}\" width=\"{bw:.2}\" height=\"{:.1}\" fill=\"{}\">\
             <title>frame {}: {:+.2} points</title></rect>",
            x(f.frame) - bw / 2.0,
            (yb - ya).max(0.5),
            if v > 0.0 { "#c0392b" } else { "#27ae60" },
            f.frame,
            v
        );
    }
    let _ = write!(
        s,
        "<line x1=\"{pad}\" x2=\"{}\" y1=\"{mid:.1}\" y2=\"{mid:.1}\" stroke=\"#333\"/>\
         <text x=\"{}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"end\">{:+.2}</text>\
         <text x=\"{}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"end\">0</text>\
         <text x=\"{}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"end\">{:+.2}</text>",
        w - pad,
        pad - 4.0,
        top2 + 8.0,
        maxd,
        pad - 4.0,
        mid + 3.0,
        pad - 4.0,
        top2 + h2,
        -maxd
    );
    let _ = write!(
        s,
        "<text x=\"{pad}\" y=\"{:.1}\" font-size=\"10\">frame {}</text>\
         <text x=\"{}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"end\">frame {}</text></svg>",
        top2 + h2 + 16.0,
        d.frames[0].frame,
        w - pad,
        top2 + h2 + 16.0,
        d.frames[n - 1].frame
    );
    s
}

/// `ROM, ` when the side's label (a report file) is not the ROM itself.
fn rom_of(s: &crate::model::Side) -> String {
    if s.label == s.rom_path {
        String::new()
    } else {
        format!("{}, ", html_escape(&s.rom_path))
    }
}

/// A self-contained HTML page (no external resources): the two sides,
/// warnings, the summary table, the per-frame load and load-delta plot,
/// the function table (every changed function, largest self change first)
/// and the renamed / new / removed lists.
pub fn html(d: &Diff, w: &mut dyn Write) -> Result<(), Error> {
    let e = html_escape;
    let mut o = String::new();
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>retroprof diff: {} -> {}</title><style>\
         body{{font-family:sans-serif;margin:1.5em;color:#222}}\
         table{{border-collapse:collapse;margin:0.5em 0 1.5em}}\
         td,th{{padding:2px 8px;border-bottom:1px solid #eee;text-align:right}}\
         td:first-child,th:first-child{{text-align:left}}\
         th{{background:#f3f3f3}} .up{{color:#c0392b}} .down{{color:#27ae60}}\
         .warn{{color:#9a6700}} code{{font-size:90%}}</style></head><body>\n",
        e(&d.base.label),
        e(&d.new.label)
    );
    let _ = writeln!(
        o,
        "<h1>retroprof diff</h1><p>base: <code>{}</code> ({}{}), new: <code>{}</code> ({}{})</p>",
        e(&d.base.label),
        rom_of(&d.base),
        e(&side_line("", &d.base)),
        e(&d.new.label),
        rom_of(&d.new),
        e(&side_line("", &d.new))
    );
    if d.aligned_first_loop {
        let _ = write!(
            o,
            "<p>Frames aligned at the first game loop: new frame n = base frame n{:+}.</p>",
            d.frame_offset
        );
    }
    for w in &d.warnings {
        let _ = writeln!(o, "<p class=\"warn\">warning: {}</p>", e(w));
    }
    let cls = |v: f64, good_up: bool| {
        if v == 0.0 {
            ""
        } else if (v > 0.0) != good_up {
            "up"
        } else {
            "down"
        }
    };
    o.push_str("<h2>Summary</h2><table><tr><th></th><th>base</th><th>new</th><th>delta</th><th>change</th></tr>\n");
    for (name, m, unit) in d.summary.rows() {
        let _ = writeln!(
            o,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"{}\">{}</td><td>{}</td></tr>",
            e(name),
            fmt_metric(m.base, unit),
            fmt_metric(m.new, unit),
            cls(m.delta, false),
            fmt_delta(m, unit),
            if unit == "%" {
                String::new()
            } else {
                pct_change(m)
            }
        );
    }
    o.push_str("</table>\n<h2>Per frame</h2>\n");
    o.push_str(&plot(d));
    let nchanged = changed(d).count();
    let _ = write!(
        o,
        "\n<h2>Functions</h2><p>{nchanged} of {} functions changed, largest change in self cycles first.</p>\
         <table><tr><th>function</th><th>self base</th><th>self new</th><th>delta</th><th>change</th>\
         <th>inclusive base</th><th>inclusive new</th><th>calls base</th><th>calls new</th>\
         <th>cycles/call base</th><th>cycles/call new</th></tr>\n",
        d.functions.len()
    );
    for f in changed(d) {
        let mut name = e(&f.name);
        if let Some(b) = &f.base_name {
            name.push_str(&format!(" <small>(was {})</small>", e(b)));
        }
        if f.idle {
            name.push_str(" <small>[idle]</small>");
        }
        match f.matched {
            Match::New => name.push_str(" <small>[new]</small>"),
            Match::Removed => name.push_str(" <small>[removed]</small>"),
            _ => {}
        }
        let _ = writeln!(
            o,
            "<tr><td>{name}</td><td>{}</td><td>{}</td><td class=\"{}\">{}</td><td>{}</td>\
             <td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1}</td><td>{:.1}</td></tr>",
            thousands(f.self_cycles.base),
            thousands(f.self_cycles.new),
            if f.idle {
                ""
            } else {
                cls(f.self_cycles.delta, false)
            },
            signed_thousands(f.self_cycles.delta),
            pct_change(&f.self_cycles),
            thousands(f.inclusive_cycles.base),
            thousands(f.inclusive_cycles.new),
            thousands(f.calls.base),
            thousands(f.calls.new),
            f.cycles_per_call.base,
            f.cycles_per_call.new
        );
    }
    o.push_str("</table>\n");
    for (title, v) in [
        (
            "Renamed (compiler clones matched by base name)",
            d.renamed
                .iter()
                .map(|r| format!("{} -> {}", r.base, r.new))
                .collect::<Vec<_>>(),
        ),
        ("New functions", d.new_functions.clone()),
        ("Removed functions", d.removed_functions.clone()),
    ] {
        if v.is_empty() {
            continue;
        }
        let _ = write!(o, "<h2>{title} ({})</h2><p>", v.len());
        let items: Vec<String> = v.iter().map(|n| format!("<code>{}</code>", e(n))).collect();
        o.push_str(&items.join(", "));
        o.push_str("</p>\n");
    }
    o.push_str("<p><small>retroprof diff (schema retroprof-diff/1)</small></p></body></html>\n");
    let mut w = std::io::BufWriter::new(w);
    w.write_all(o.as_bytes()).map_err(io)?;
    w.flush().map_err(io)
}
