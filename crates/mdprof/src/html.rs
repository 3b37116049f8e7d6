//! `--html FILE`: one self-contained HTML report (nothing from elsewhere:
//! no network, fonts, style sheets or images; inline CSS, inline SVG
//! plots, one small inline script, the screenshot as a base64 `data:`
//! PNG).
//!
//! Contents: the summary (mean/max load, dropped frames, DMA, loading
//! frames set aside), warnings, an SVG plot of load % per frame (y axis to
//! the data's maximum, 100 % line, dropped frames marked in red, frames
//! before `--from` shaded grey, loading frames set aside shaded yellow), an
//! SVG plot of DMA bytes per frame (VBlank and active display stacked), the
//! top functions table, the worst gameplay frames with their top
//! functions, and a screenshot of the worst gameplay frame
//! ([`crate::gameplay`]).
//!
//! # What happened in this frame
//! Hovering a plot shows the frame under the pointer in a panel (load,
//! busy cycles, dropped or not, loading or gameplay, the DMA split, the
//! wait line, the frame's top functions); a click pins it (click again to
//! unpin). The per-frame data is embedded once, compactly, as JSON in a
//! `<script type="application/json" id="frame-data">` element
//! ([`frame_data`]); the page's script (under 3 KB) only reads it.
//!
//! # The worst frame's screenshot
//! The worst frame is known only after the run, and rendering every frame
//! "just in case" would slow the profiler down. [`screenshot`] therefore
//! runs the emulation AGAIN from power-on, with no observer (the fast
//! path), the same ROM, region and input scripts, up to that frame, and
//! asks the system for its picture: the emulator is deterministic, so it is
//! the same frame. Cost: one more run up to the worst frame at full
//! emulation speed (no attribution), typically a second or two for 1,800
//! frames.
//!
//! # API for the CLI
//! ```ignore
//! let shot = report.worst_frames.first()
//!     .and_then(|&f| html::screenshot(&session, f).ok().flatten());
//! html::write_file(&report, shot.as_ref(), &path, true)?;
//! ```

use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;

use retroprof_megadrive::timing::M68K_DIVIDER;
use retroprof_megadrive::{InputScript, System};

use crate::columns::FrameColumn;
use crate::report::Report;
use crate::Session;

/// The per-frame columns of the worst-frames table (names in
/// [`crate::columns::FRAME_COLUMNS`]), before the top functions.
const WORST_COLUMNS: &[&str] = &[
    "frame",
    "load_pct",
    "busy_cycles",
    "dropped",
    "idle_enter_line",
    "dma_active_bytes",
];

/// A picture of one frame, PNG-encoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Screenshot {
    pub frame: u64,
    pub width: u32,
    pub height: u32,
    pub png: Vec<u8>,
}

/// Errors of [`screenshot`].
#[derive(Debug, thiserror::Error)]
pub enum HtmlError {
    #[error("screenshot of frame {frame}: {message}")]
    Screenshot { frame: u64, message: String },
}

/// Re-run `session`'s ROM from power-on to `frame` and take its picture
/// (see the module documentation). `Ok(None)` when the frame is past the
/// run (the emulation stopped earlier).
pub fn screenshot(session: &Session, frame: u64) -> Result<Option<Screenshot>, HtmlError> {
    let err = |message: String| HtmlError::Screenshot { frame, message };
    let pad1 = InputScript::parse(&session.options.input).map_err(|e| err(e.to_string()))?;
    let pad2 = InputScript::parse(&session.options.input2).map_err(|e| err(e.to_string()))?;
    // The run's own configuration (region and reference rules), so the
    // picture is of the frame the report measured.
    let mut sys = System::new(&session.rom, session.config());
    for f in 0..=frame {
        sys.set_pad(0, pad1.buttons_at(f));
        sys.set_pad(1, pad2.buttons_at(f));
        if f == frame {
            sys.request_screenshot();
        }
        if let Err(e) = sys.run_frame_unobserved() {
            if f < frame {
                return Ok(None);
            }
            return Err(err(e.to_string()));
        }
    }
    let Some((n, img)) = sys.take_screenshot() else {
        return Ok(None);
    };
    let png = retroprof_megadrive::render::encode_png(&img).map_err(|e| err(e.to_string()))?;
    Ok(Some(Screenshot {
        frame: n,
        width: img.width,
        height: img.height,
        png,
    }))
}

/// Standard base64 (RFC 4648, with padding).
pub fn base64(data: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::with_capacity(data.len().div_ceil(3) * 4);
    for c in data.chunks(3) {
        let b = [c[0], *c.get(1).unwrap_or(&0), *c.get(2).unwrap_or(&0)];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        s.push(T[(n >> 18) as usize & 63] as char);
        s.push(T[(n >> 12) as usize & 63] as char);
        s.push(if c.len() > 1 {
            T[(n >> 6) as usize & 63] as char
        } else {
            '='
        });
        s.push(if c.len() > 2 {
            T[n as usize & 63] as char
        } else {
            '='
        });
    }
    s
}

/// Escape text for HTML content and attribute values.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

fn num(v: f64) -> String {
    // Thousands separators, no decimals.
    let n = v.round() as i64;
    let s = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    if n < 0 {
        format!("-{out}")
    } else {
        out
    }
}

const CSS: &str = "body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:24px;color:#1d1d1f;background:#fafafa}\
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}\
.sub{color:#666;margin-bottom:16px}.cards{display:flex;flex-wrap:wrap;gap:10px}\
.card{background:#fff;border:1px solid #ddd;border-radius:6px;padding:8px 14px;min-width:130px}\
.card b{display:block;font-size:20px}.card span{color:#666;font-size:12px}.bad b{color:#c0392b}\
table{border-collapse:collapse;background:#fff;font-size:13px}th,td{border:1px solid #ddd;padding:3px 8px}\
th{background:#f0f0f0;text-align:left}td.n{text-align:right;font-variant-numeric:tabular-nums}\
.warn{background:#fff4e5;border:1px solid #f0c36d;padding:6px 10px;margin:4px 0;border-radius:4px}\
svg{background:#fff;border:1px solid #ddd}.legend{font-size:12px;color:#444}\
img.shot{image-rendering:pixelated;border:1px solid #999}\
.plots{display:flex;gap:14px;align-items:flex-start}.plots h2{margin-top:16px}\
.info{position:sticky;top:10px;background:#fff;border:1px solid #ddd;border-radius:6px;padding:8px 12px;min-width:260px;font-size:13px}\
.info table{margin-top:6px}.info .pin{color:#2c6fbb}";

/// The page's script: reads `#frame-data`, follows the pointer over the
/// plots (same x mapping as [`Axes::x`]), fills `#frame-info`.
const SCRIPT: &str = r#"(function(){
var D=JSON.parse(document.getElementById('frame-data').textContent);
var info=document.getElementById('frame-info'),pinned=-1,L=56,R=12,W=1000;
var why={b:'loading: boot (before the first game loop)',d:'loading: display off during all active lines',k:'loading: nothing but black on screen',s:'loading: in a stall (10+ frames without a VBlank wait)',m:'loading: marked by the game'};
function n(v){return Math.round(v).toLocaleString('en-US');}
function e(t){return String(t).replace(/[&<>"']/g,function(c){return '&#'+c.charCodeAt(0)+';';});}
function show(i){var f=D.f[i];if(!f)return;
var h='<b>Frame '+(D.first+i)+'</b>'+(i===pinned?' <span class="pin">(pinned)</span>':'')+'<br>load '+(f[0]/100).toFixed(1)+' % ('+n(f[1])+' busy cycles of '+n(D.fc)+')<br>'+(f[2]?'<b style="color:#c0392b">dropped</b> (no new game loop)':'not dropped')+'<br>'+(f[3]?why[f[3]]:'gameplay')+(f[4]?'':' &middot; before --from')+'<br>DMA: '+n(f[5])+' bytes in VBlank, '+n(f[6])+' in active display, '+n(f[7])+' fill/copy<br>waited for VBlank from line '+(f[8]<0?'- (never)':f[8]);
if(f[9].length){h+='<table><tr><th>top functions</th><th>cycles</th></tr>';for(var k=0;k<f[9].length;k+=2){h+='<tr><td>'+e(D.fn[f[9][k]])+'</td><td class="n">'+n(f[9][k+1])+'</td></tr>';}h+='</table>';}
info.innerHTML=h;}
function idx(ev,svg){var b=svg.getBoundingClientRect(),x=(ev.clientX-b.left)*W/b.width;return Math.floor((x-L)*D.f.length/(W-L-R));}
document.querySelectorAll('svg.plot').forEach(function(svg){
svg.addEventListener('mousemove',function(ev){if(pinned<0){var i=idx(ev,svg);if(i>=0&&i<D.f.length)show(i);}});
svg.addEventListener('click',function(ev){var i=idx(ev,svg);if(i<0||i>=D.f.length)return;pinned=(pinned===i)?-1:i;show(i);});});
})();"#;

const PLOT_W: f64 = 1000.0;
const PLOT_H: f64 = 220.0;
const M_L: f64 = 56.0;
const M_B: f64 = 28.0;
const M_T: f64 = 10.0;
const M_R: f64 = 12.0;

/// Frame axis and value axis of a plot: x of frame index `i`, y of value.
struct Axes {
    n: usize,
    max: f64,
}

impl Axes {
    fn x(&self, i: usize) -> f64 {
        let w = PLOT_W - M_L - M_R;
        M_L + w * (i as f64 + 0.5) / self.n.max(1) as f64
    }
    fn y(&self, v: f64) -> f64 {
        let h = PLOT_H - M_T - M_B;
        M_T + h * (1.0 - (v / self.max).clamp(0.0, 1.0))
    }
    fn bar_w(&self) -> f64 {
        ((PLOT_W - M_L - M_R) / self.n.max(1) as f64).max(0.5)
    }
}

fn nice_max(v: f64) -> f64 {
    if v <= 0.0 {
        return 1.0;
    }
    let p = 10f64.powf(v.log10().floor());
    for m in [1.0, 2.0, 2.5, 5.0, 10.0] {
        if v <= m * p {
            return m * p;
        }
    }
    10.0 * p
}

fn axes_svg(s: &mut String, a: &Axes, first_frame: u64, unit: &str, id: &str, title: &str) {
    let _ = write!(
        s,
        "<svg id=\"{id}\" class=\"plot\" width=\"{PLOT_W}\" height=\"{PLOT_H}\" viewBox=\"0 0 {PLOT_W} {PLOT_H}\" role=\"img\"><title>{}</title>",
        esc(title)
    );
    for k in 0..=4 {
        let v = a.max * k as f64 / 4.0;
        let y = a.y(v);
        let _ = write!(
            s,
            "<line x1=\"{M_L}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#eee\"/><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"end\" fill=\"#666\">{}{unit}</text>",
            PLOT_W - M_R,
            M_L - 4.0,
            y + 3.0,
            num(v)
        );
    }
    // Frame ticks: about 10.
    let step = nice_max(a.n as f64 / 10.0).max(1.0) as usize;
    let mut i = 0;
    while i < a.n {
        let x = a.x(i);
        let _ = write!(
            s,
            "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"#999\"/><text x=\"{x:.1}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"middle\" fill=\"#666\">{}</text>",
            PLOT_H - M_B,
            PLOT_H - M_B + 4.0,
            PLOT_H - M_B + 15.0,
            first_frame + i as u64
        );
        i += step;
    }
    let _ = write!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"middle\" fill=\"#666\">frame</text>",
        M_L + (PLOT_W - M_L - M_R) / 2.0,
        PLOT_H - 2.0
    );
}

/// Contiguous runs of frame indices where `pick` holds, as (first, last).
fn runs(r: &Report, pick: impl Fn(&crate::report::FrameRecord) -> bool) -> Vec<(usize, usize)> {
    let mut v: Vec<(usize, usize)> = Vec::new();
    for (i, f) in r.frames.iter().enumerate() {
        if pick(f) {
            match v.last_mut() {
                Some(l) if l.1 + 1 == i => l.1 = i,
                _ => v.push((i, i)),
            }
        }
    }
    v
}

/// Shaded bands behind a plot: frames before `--from` (grey) and counted
/// loading frames set aside ([`crate::gameplay`], yellow).
fn bands(s: &mut String, r: &Report, a: &Axes) {
    let half = a.bar_w() / 2.0;
    let mut band = |runs: Vec<(usize, usize)>, class: &str, fill: &str, what: &str| {
        for (i, j) in runs {
            let x0 = a.x(i) - half;
            let x1 = a.x(j) + half;
            let _ = write!(
                s,
                "<rect class=\"{class}\" x=\"{x0:.1}\" y=\"{M_T}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{fill}\"><title>{what}: frames {}-{}</title></rect>",
                x1 - x0,
                PLOT_H - M_T - M_B,
                r.frames[i].frame,
                r.frames[j].frame
            );
        }
    };
    band(
        runs(r, |f| !f.counted),
        "before-from",
        "#e5e5e5",
        "before --from",
    );
    if !r.options.include_loading {
        band(
            runs(r, |f| f.counted && f.loading.is_some()),
            "loading",
            "#fcf3cf",
            "set aside as loading",
        );
    }
}

/// Axis maximum for data up to `v`: the next of 1, 1.2, 1.5, 2, 2.5, 3,
/// 4, 5, 6, 8 times a power of ten (so 100 % stays 100 %).
fn axis_max(v: f64) -> f64 {
    if v <= 0.0 {
        return 1.0;
    }
    let p = 10f64.powf(v.log10().floor());
    for m in [1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0] {
        if v <= m * p * (1.0 + 1e-9) {
            return m * p;
        }
    }
    10.0 * p
}

fn load_plot(r: &Report) -> String {
    let frames = &r.frames;
    let max_load = frames.iter().map(|f| f.load_pct).fold(0.0f64, f64::max);
    let a = Axes {
        n: frames.len(),
        max: axis_max(max_load),
    };
    let mut s = String::new();
    let first = frames.first().map(|f| f.frame).unwrap_or(0);
    axes_svg(&mut s, &a, first, "%", "load-plot", "CPU load % per frame");
    bands(&mut s, r, &a);
    // Dropped frames: red background bars.
    let bw = a.bar_w();
    let mut d = String::new();
    // Dropped frames in red; loading frames set aside have their yellow
    // band instead (the panel still says when one dropped).
    let aside = |f: &crate::report::FrameRecord| {
        f.counted && f.loading.is_some() && !r.options.include_loading
    };
    for (i, f) in frames.iter().enumerate() {
        if f.dropped && !aside(f) {
            let _ = write!(d, "M{:.1} {:.1}V{:.1}", a.x(i), M_T, PLOT_H - M_B);
        }
    }
    if !d.is_empty() {
        let _ = write!(
            s,
            "<path class=\"dropped\" d=\"{d}\" stroke=\"#f5b7b1\" stroke-width=\"{bw:.2}\"/>"
        );
    }
    // Frames before --from in grey.
    let mut pts = String::new();
    for (i, f) in frames.iter().enumerate() {
        let _ = write!(
            pts,
            "{}{:.1},{:.1}",
            if i == 0 { "" } else { " " },
            a.x(i),
            a.y(f.load_pct)
        );
    }
    if a.max >= 100.0 {
        let y100 = a.y(100.0);
        let _ = write!(
            s,
            "<line x1=\"{M_L}\" x2=\"{:.1}\" y1=\"{y100:.1}\" y2=\"{y100:.1}\" stroke=\"#c0392b\" stroke-dasharray=\"4 3\"/>",
            PLOT_W - M_R
        );
    }
    if !pts.is_empty() {
        let _ = write!(
            s,
            "<polyline class=\"load\" fill=\"none\" stroke=\"#2c6fbb\" stroke-width=\"1.2\" points=\"{pts}\"/>"
        );
    }
    s.push_str("</svg>");
    s
}

fn dma_plot(r: &Report) -> String {
    let frames = &r.frames;
    let max = frames
        .iter()
        .map(|f| (f.dma_vblank_bytes + f.dma_active_bytes) as f64)
        .fold(0.0, f64::max);
    let a = Axes {
        n: frames.len(),
        max: axis_max(max),
    };
    let mut s = String::new();
    let first = frames.first().map(|f| f.frame).unwrap_or(0);
    axes_svg(&mut s, &a, first, "", "dma-plot", "DMA bytes per frame");
    bands(&mut s, r, &a);
    let bw = a.bar_w();
    let (mut vb, mut ac) = (String::new(), String::new());
    for (i, f) in frames.iter().enumerate() {
        let x = a.x(i);
        let v = f.dma_vblank_bytes as f64;
        let t = v + f.dma_active_bytes as f64;
        if v > 0.0 {
            let _ = write!(vb, "M{x:.1} {:.1}V{:.1}", a.y(0.0), a.y(v));
        }
        if f.dma_active_bytes > 0 {
            let _ = write!(ac, "M{x:.1} {:.1}V{:.1}", a.y(v), a.y(t));
        }
    }
    if !vb.is_empty() {
        let _ = write!(
            s,
            "<path class=\"dma-vblank\" d=\"{vb}\" stroke=\"#2c6fbb\" stroke-width=\"{bw:.2}\"/>"
        );
    }
    if !ac.is_empty() {
        let _ = write!(
            s,
            "<path class=\"dma-active\" d=\"{ac}\" stroke=\"#e67e22\" stroke-width=\"{bw:.2}\"/>"
        );
    }
    s.push_str("</svg>");
    s
}

fn card(s: &mut String, value: &str, label: &str, bad: bool) {
    let _ = write!(
        s,
        "<div class=\"card{}\"><b>{}</b><span>{}</span></div>",
        if bad { " bad" } else { "" },
        esc(value),
        esc(label)
    );
}

/// The per-frame data the page's script reads, as compact JSON:
/// `{"first":F,"fc":cycles per frame,"fn":[function names],"f":[...]}`,
/// one array per frame: `[load % x 100, busy cycles, dropped 0/1, loading
/// ("" gameplay, "b" boot, "d" display off, "k" black, "s" stall, "m" marked), counted 0/1, DMA
/// VBlank bytes, DMA active bytes, fill/copy bytes, wait line (-1: none),
/// [function index, cycles, ...]]` (cycles rounded). `fn` holds only the
/// functions some frame's top list names, in the report's order.
pub fn frame_data(r: &Report) -> String {
    use crate::gameplay::Loading;
    let mut used = vec![usize::MAX; r.functions.len()];
    let mut names: Vec<usize> = Vec::new();
    for f in &r.frames {
        for t in &f.top {
            if t.function < used.len() && used[t.function] == usize::MAX {
                used[t.function] = 0;
                names.push(t.function);
            }
        }
    }
    names.sort_unstable();
    for (k, &i) in names.iter().enumerate() {
        used[i] = k;
    }
    let mut s = String::with_capacity(64 * r.frames.len() + 64);
    let _ = write!(
        s,
        "{{\"first\":{},\"fc\":{:.1},\"fn\":[",
        r.frames.first().map_or(0, |f| f.frame),
        r.timing.cycles_per_frame
    );
    for (k, &i) in names.iter().enumerate() {
        if k > 0 {
            s.push(',');
        }
        s.push_str(&json_str(&r.functions[i].name));
    }
    s.push_str("],\"f\":[");
    for (k, f) in r.frames.iter().enumerate() {
        if k > 0 {
            s.push(',');
        }
        let why = match f.loading {
            None => "",
            Some(Loading::Boot) => "b",
            Some(Loading::DisplayOff) => "d",
            Some(Loading::Black) => "k",
            Some(Loading::Stall) => "s",
            Some(Loading::Marked) => "m",
        };
        let _ = write!(
            s,
            "[{},{},{},\"{why}\",{},{},{},{},{},[",
            (f.load_pct * 100.0).round() as i64,
            f.busy_cycles.round() as i64,
            f.dropped as u8,
            f.counted as u8,
            f.dma_vblank_bytes,
            f.dma_active_bytes,
            f.dma_fill_copy_bytes,
            f.idle_enter_line.map_or(-1, i32::from),
        );
        let mut first = true;
        for t in f.top.iter().filter(|t| t.function < used.len()) {
            if !first {
                s.push(',');
            }
            first = false;
            let _ = write!(s, "{},{}", used[t.function], t.cycles.round() as i64);
        }
        s.push_str("]]");
    }
    s.push_str("]}");
    s
}

/// A JSON string literal that is also safe inside a `<script>` element
/// (`<` escaped, so no `</script>` can appear).
fn json_str(v: &str) -> String {
    let mut o = String::with_capacity(v.len() + 2);
    o.push('"');
    for c in v.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '<' => o.push_str("\\u003c"),
            '>' => o.push_str("\\u003e"),
            '&' => o.push_str("\\u0026"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// The whole report as one HTML page.
pub fn render(report: &Report, shot: Option<&Screenshot>) -> String {
    let r = report;
    let sm = &r.summary;
    let mut s = String::with_capacity(64 * 1024 + shot.map_or(0, |x| x.png.len() * 4 / 3));
    let title = format!("retroprof profile: {}", r.rom.path);
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{CSS}</style></head><body>\n",
        esc(&title)
    );
    let _ = writeln!(
        s,
        "<h1>{}</h1><div class=\"sub\">{} &middot; {} &middot; {} frames run, statistics from frame {} &middot; symbols: {}</div>",
        esc(&title),
        esc(r.rom.title.trim()),
        esc(&crate::output::region_name(&r.rom.region)),
        sm.frames_run,
        r.options.from,
        esc(&r.symbols.source)
    );
    s.push_str("<div class=\"cards\">");
    card(
        &mut s,
        &format!("{:.1} %", sm.mean_load_pct),
        "mean load",
        false,
    );
    card(
        &mut s,
        &format!(
            "{:.1} / {:.1} / {:.1} %",
            sm.p50_load_pct, sm.p95_load_pct, sm.p99_load_pct
        ),
        "load p50 / p95 / p99",
        false,
    );
    card(
        &mut s,
        &format!("{:.1} %", sm.max_load_pct),
        &match sm.max_load_frame {
            Some(f) => format!("max load (frame {f})"),
            None => "max load".into(),
        },
        sm.max_load_pct > 100.0,
    );
    card(
        &mut s,
        &sm.dropped_frames.to_string(),
        if r.options.include_loading {
            "dropped frames"
        } else {
            "dropped gameplay frames"
        },
        sm.dropped_frames > 0,
    );
    if !r.options.include_loading {
        card(
            &mut s,
            &format!(
                "{} ({} dropped)",
                sm.loading_frames, sm.dropped_loading_frames
            ),
            &format!(
                "loading frames set aside: {} boot, {} display off, {} black, {} stall, {} marked",
                sm.loading_boot_frames,
                sm.loading_display_off_frames,
                sm.loading_black_frames,
                sm.loading_stall_frames,
                sm.loading_marked_frames
            ),
            false,
        );
    }
    card(
        &mut s,
        &num(sm.dma_vblank_bytes as f64),
        "DMA bytes in VBlank",
        false,
    );
    card(
        &mut s,
        &num(sm.dma_active_bytes as f64),
        "DMA bytes in active display",
        sm.dma_active_bytes > 0,
    );
    card(&mut s, &sm.loops.to_string(), "game loops", false);
    s.push_str("</div>\n");
    if let Some(stop) = &r.stopped {
        let _ = write!(s, "<div class=\"warn\">{}</div>", esc(stop));
    }
    for w in &r.warnings {
        let _ = write!(s, "<div class=\"warn\">warning: {}</div>", esc(w));
    }

    s.push_str("<h2>CPU load per frame</h2>\n");
    s.push_str("<div class=\"plots\"><div>");
    s.push_str(&load_plot(r));
    s.push_str("<div class=\"legend\">blue: busy cycles / frame length; dashed red: 100 %; red bands: dropped frames (no new game loop started); grey: before --from; yellow: loading frames set aside (before the first game loop, display off, black screen, stalls of 10+ frames without a VBlank wait, marked by the game)</div>\n");
    s.push_str("<h2>DMA per frame</h2>\n");
    s.push_str(&dma_plot(r));
    s.push_str("<div class=\"legend\">blue: 68000&rarr;VDP DMA bytes moved in VBlank; orange: moved during active display. Hover a plot for a frame's details, click to pin it.</div>\n");
    s.push_str("</div><div id=\"frame-info\" class=\"info\"><b>Frame details</b><br>Hover a plot to see what happened in a frame; click to pin it.</div></div>\n");
    s.push_str("<script type=\"application/json\" id=\"frame-data\">");
    s.push_str(&frame_data(r));
    s.push_str("</script>\n<script>");
    s.push_str(SCRIPT);
    s.push_str("</script>\n");

    s.push_str("<h2>Top functions</h2>\n<table id=\"functions\"><tr><th>function</th><th>self cycles</th><th>% all</th><th>% busy</th><th>calls</th><th>cycles/call</th><th>inclusive cycles</th></tr>\n");
    for f in r.functions.iter().take(r.options.top.max(1)) {
        let name = if f.idle {
            format!("{} (idle)", f.name)
        } else {
            f.name.clone()
        };
        let _ = writeln!(
            s,
            "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{:.2}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            esc(&name),
            num(f.self_cycles),
            f.pct_all,
            if f.idle {
                "idle".to_string()
            } else {
                format!("{:.2}", f.pct_busy)
            },
            // Entered only by jumps or falling through: no per-call figure.
            if f.calls == 0 {
                "-".to_string()
            } else {
                f.calls.to_string()
            },
            if f.calls == 0 {
                "-".to_string()
            } else {
                format!("{:.1}", f.cycles_per_call)
            },
            num(f.inclusive_cycles)
        );
    }
    s.push_str("</table>\n");

    let worst_cols: Vec<&FrameColumn> = WORST_COLUMNS
        .iter()
        .filter_map(|n| crate::columns::column(n))
        .collect();
    s.push_str(if r.options.include_loading {
        "<h2>Worst frames</h2>\n"
    } else {
        "<h2>Worst gameplay frames</h2>\n"
    });
    s.push_str("<table id=\"worst\"><tr>");
    for c in &worst_cols {
        let _ = write!(s, "<th>{}</th>", esc(c.label));
    }
    s.push_str("<th>top functions</th></tr>\n");
    for &n in &r.worst_frames {
        let Some(f) = r.frame(n) else { continue };
        let tops: Vec<String> = f
            .top
            .iter()
            .take(3)
            .filter_map(|t| {
                r.functions
                    .get(t.function)
                    .map(|fs| format!("{} {}", esc(&fs.name), num(t.cycles)))
            })
            .collect();
        s.push_str("<tr>");
        for c in &worst_cols {
            let cell = (c.get)(r, f);
            let class = if cell.is_numeric() {
                " class=\"n\""
            } else {
                ""
            };
            let _ = write!(s, "<td{class}>{}</td>", esc(&cell.human()));
        }
        let _ = writeln!(s, "<td>{}</td></tr>", tops.join(", "));
    }
    s.push_str("</table>\n");

    s.push_str(&crate::code::html_section(r));

    s.push_str("<h2>Worst frame</h2>\n");
    match shot {
        Some(p) => {
            let _ = writeln!(
                s,
                "<p>Frame {} (the worst{} frame) as the console drew it ({}x{}):</p><img class=\"shot\" alt=\"frame {}\" width=\"{}\" height=\"{}\" src=\"data:image/png;base64,{}\">",
                p.frame,
                if r.options.include_loading { "" } else { " gameplay" },
                p.width,
                p.height,
                p.frame,
                p.width * 2,
                p.height * 2,
                base64(&p.png)
            );
        }
        None => s.push_str(
            "<p>No screenshot (no counted frame, or the emulation stopped before it).</p>\n",
        ),
    }
    let _ = write!(
        s,
        "<p class=\"legend\">Written by retroprof. Cycles are 68000 cycles (master clocks / \
         {M68K_DIVIDER}).</p>\n</body></html>\n"
    );
    s
}

/// Write the page to `w`.
pub fn write<W: Write>(
    report: &Report,
    shot: Option<&Screenshot>,
    mut w: W,
) -> std::io::Result<()> {
    w.write_all(render(report, shot).as_bytes())
}

/// [`write()`] to `path` whole or not at all (`replace`: named explicitly).
pub fn write_file(
    report: &Report,
    shot: Option<&Screenshot>,
    path: &Path,
    replace: bool,
) -> Result<(), retroprof_profile::Error> {
    retroprof_profile::write::atomic(path, replace, |w| {
        write(report, shot, w).map_err(|source| retroprof_profile::Error::Io {
            path: path.display().to_string(),
            source,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_rfc4648_vectors() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn escaping() {
        assert_eq!(
            esc("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
        assert_eq!(num(1234567.4), "1,234,567");
        assert_eq!(num(-1000.0), "-1,000");
        assert_eq!(nice_max(87.0), 100.0);
    }
}
