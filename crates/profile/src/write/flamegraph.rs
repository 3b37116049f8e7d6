//! Our own flame graph SVG writer (the layout follows flamegraph.pl's
//! conventions: root `all` at the bottom, children merged by name and sorted
//! alphabetically, widths proportional to value; no code from it or from
//! inferno).
//!
//! The SVG is self-contained: each frame is a `<g class="f">` holding a
//! `<title>` tooltip (`name (value unit, percent%)`), a `<rect>` and a
//! `<text>` label truncated to fit (`..` suffix). A small embedded script
//! gives click-to-zoom (click a frame; click `all`, "Reset Zoom" or press
//! Escape to reset) and search (the "Search" button or Ctrl-F: a regular
//! expression; matches are drawn purple and the matched share is shown).

use std::fmt::Write as _;
use std::io::Write;

use super::hash::FastMap;
use super::{frame_label, io_err, validate};
use crate::{Error, StackProfile};

/// Layout options for [`super::flamegraph_svg_with`].
#[derive(Clone, Debug)]
pub struct FlameGraphOptions {
    /// Image width in pixels.
    pub width: u32,
    /// Height of one frame row in pixels.
    pub frame_height: u32,
    /// Font size in pixels.
    pub font_size: u32,
    /// Frames narrower than this (in pixels) are left out, with their
    /// children.
    pub min_width: f64,
    /// Append ` (file:line)` to labels of frames with a source location.
    pub with_location: bool,
    /// Embed the click-to-zoom / search script.
    pub interactive: bool,
    /// Text shown under the title (e.g. the ROM name and frame count).
    pub subtitle: Option<String>,
}

impl Default for FlameGraphOptions {
    fn default() -> Self {
        FlameGraphOptions {
            width: 1200,
            frame_height: 16,
            font_size: 12,
            min_width: 0.1,
            with_location: false,
            interactive: true,
            subtitle: None,
        }
    }
}

/// Average glyph width as a fraction of the font size (Verdana-ish).
const FONT_WIDTH: f64 = 0.59;
const XPAD: f64 = 10.0;

/// One node of the merged call tree.
pub(crate) struct Node {
    /// Index into [`Tree::labels`].
    pub label: u32,
    pub inlined: bool,
    pub value: i64,
    /// Differential graphs: the base value of the same path, and both
    /// values of the samples that end here (self).
    pub base: i64,
    pub self_value: i64,
    pub self_base: i64,
}

/// The merged call tree: node 0 is `all`; children of node `n` are
/// `children[child_start[n]..child_start[n + 1]]`, sorted by label.
pub(crate) struct Tree {
    pub labels: Vec<String>,
    pub nodes: Vec<Node>,
    pub child_start: Vec<usize>,
    pub children: Vec<u32>,
}

impl Tree {
    pub fn label(&self, n: usize) -> &str {
        &self.labels[self.nodes[n].label as usize]
    }
    pub fn kids(&self, n: usize) -> &[u32] {
        &self.children[self.child_start[n]..self.child_start[n + 1]]
    }
}

/// Merge the samples into a tree (node 0 = `all`); only positive values
/// count. Frames with the same label under the same parent merge. With
/// `base_index`, each node also sums that value (paths only the base has
/// get nodes of value 0, which the layout leaves out).
pub(crate) fn tree(
    p: &StackProfile,
    value_index: usize,
    base_index: Option<usize>,
    with_location: bool,
) -> Result<Tree, Error> {
    validate(p, Some(value_index))?;
    if let Some(b) = base_index {
        validate(p, Some(b))?;
    }
    // Label ids in sorted label order, so sorting children by id sorts
    // them alphabetically. Id 0 is `all`.
    let frame_labels: Vec<String> = p
        .frames
        .iter()
        .map(|f| frame_label(f, with_location))
        .collect();
    let mut sorted: Vec<&str> = frame_labels.iter().map(String::as_str).collect();
    sorted.sort_unstable();
    sorted.dedup();
    let mut labels: Vec<String> = Vec::with_capacity(sorted.len() + 1);
    labels.push("all".to_string());
    labels.extend(sorted.iter().map(|s| s.to_string()));
    let frame_label_id: Vec<u32> = frame_labels
        .iter()
        .map(|l| {
            sorted
                .binary_search(&l.as_str())
                .map(|i| i as u32 + 1)
                .unwrap_or(0)
        })
        .collect();

    let mut nodes = vec![Node {
        label: 0,
        inlined: false,
        value: 0,
        base: 0,
        self_value: 0,
        self_base: 0,
    }];
    // (parent, label id) -> child; hashing only while building, the layout
    // order comes from the sorted edge list below.
    let mut edges: FastMap<(u32, u32), u32> = FastMap::default();
    for s in &p.samples {
        let v = s.values[value_index].max(0);
        let bv = base_index.map_or(0, |b| s.values[b].max(0));
        if v == 0 && bv == 0 {
            continue;
        }
        nodes[0].value = nodes[0].value.saturating_add(v);
        nodes[0].base = nodes[0].base.saturating_add(bv);
        let mut cur = 0u32;
        for &f in &s.stack {
            let label = frame_label_id[f as usize];
            let next_id = nodes.len() as u32;
            let next = *edges.entry((cur, label)).or_insert(next_id);
            if next == next_id {
                nodes.push(Node {
                    label,
                    inlined: p.frames[f as usize].inlined,
                    value: 0,
                    base: 0,
                    self_value: 0,
                    self_base: 0,
                });
            }
            let n = &mut nodes[next as usize];
            n.value = n.value.saturating_add(v);
            n.base = n.base.saturating_add(bv);
            cur = next;
        }
        let leaf = &mut nodes[cur as usize];
        leaf.self_value = leaf.self_value.saturating_add(v);
        leaf.self_base = leaf.self_base.saturating_add(bv);
    }
    let mut list: Vec<(u32, u32, u32)> = edges.into_iter().map(|((p, l), c)| (p, l, c)).collect();
    list.sort_unstable();
    let mut child_start = vec![0usize; nodes.len() + 1];
    for &(parent, _, _) in &list {
        child_start[parent as usize + 1] += 1;
    }
    for i in 0..nodes.len() {
        child_start[i + 1] += child_start[i];
    }
    let children = list.into_iter().map(|(_, _, c)| c).collect();
    Ok(Tree {
        labels,
        nodes,
        child_start,
        children,
    })
}

/// A laid-out frame: node, depth (0 = root), start offset in value units.
pub(crate) struct Placed {
    pub node: usize,
    pub depth: usize,
    pub start: i64,
}

/// Place the frames, pruning those narrower than `min_value`.
pub(crate) fn layout(t: &Tree, min_value: f64) -> Vec<Placed> {
    let mut out = Vec::new();
    // Depth-first, children in alphabetical order.
    let mut stack = vec![(0usize, 0usize, 0i64)];
    let mut kids = Vec::new();
    while let Some((n, depth, start)) = stack.pop() {
        if n != 0 && ((t.nodes[n].value as f64) < min_value || t.nodes[n].value <= 0) {
            continue;
        }
        out.push(Placed {
            node: n,
            depth,
            start,
        });
        let mut x = start;
        kids.clear();
        for &c in t.kids(n) {
            kids.push((c as usize, depth + 1, x));
            x += t.nodes[c as usize].value;
        }
        // Reverse so the first child is processed (and emitted) first.
        stack.extend(kids.iter().rev().copied());
    }
    out
}

fn fnv1a(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Deterministic colour from the name: warm ("hot") palette, aqua for
/// inlined frames.
pub(crate) fn colour(label: &str, inlined: bool) -> (u8, u8, u8) {
    let name = label.strip_suffix("_[i]").unwrap_or(label);
    let h = fnv1a(name);
    let v1 = ((h >> 8) & 0xff) as f64 / 255.0;
    let v2 = ((h >> 24) & 0xff) as f64 / 255.0;
    let v3 = ((h >> 40) & 0xff) as f64 / 255.0;
    if inlined {
        (
            (50.0 + 60.0 * v1) as u8,
            (165.0 + 55.0 * v1) as u8,
            (165.0 + 55.0 * v2) as u8,
        )
    } else {
        (
            (205.0 + 50.0 * v3) as u8,
            (230.0 * v1) as u8,
            (55.0 * v2) as u8,
        )
    }
}

fn xml_escape(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Characters XML 1.0 does not allow at all.
            c if (c as u32) < 0x20 && c != '\t' && c != '\n' && c != '\r' => out.push(' '),
            '\u{FFFE}' | '\u{FFFF}' => out.push(' '),
            c => out.push(c),
        }
    }
}

/// `1234567` -> `1,234,567`.
pub(crate) fn thousands(v: i64) -> String {
    let digits = v.unsigned_abs().to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    if v < 0 {
        out.push('-');
    }
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Fit `label` into `width` pixels: the whole label, or a prefix ending in
/// `..`, or nothing.
pub(crate) fn fit_label(label: &str, width: f64, font_size: f64) -> Option<String> {
    let chars = (width / (font_size * FONT_WIDTH)).floor() as usize;
    if chars < 3 {
        return None;
    }
    let n = label.chars().count();
    if n <= chars {
        return Some(label.to_string());
    }
    let mut s: String = label.chars().take(chars - 2).collect();
    s.push_str("..");
    Some(s)
}

/// Differential colour (Brendan Gregg's differential flame graphs): red
/// when the frame's self value grew, blue when it shrank, the deeper the
/// larger the change relative to `max_delta`; near white when unchanged.
pub(crate) fn diff_colour(delta: i64, max_delta: i64) -> (u8, u8, u8) {
    let t = if max_delta > 0 {
        (delta.unsigned_abs() as f64 / max_delta as f64).min(1.0)
    } else {
        0.0
    };
    let c = (250.0 - 200.0 * t) as u8;
    match delta.signum() {
        1 => (255, c, c),
        -1 => (c, c, 255),
        _ => (250, 250, 250),
    }
}

pub(crate) fn write<W: Write>(
    p: &StackProfile,
    value_index: usize,
    base_index: Option<usize>,
    title: &str,
    opts: &FlameGraphOptions,
    w: W,
) -> Result<(), Error> {
    if opts.width < 100 || opts.frame_height == 0 || opts.font_size == 0 {
        return Err(Error::Invalid(format!(
            "flame graph layout too small: width {} (min 100), frame height {}, font size {}",
            opts.width, opts.frame_height, opts.font_size
        )));
    }
    let t = tree(p, value_index, base_index, opts.with_location)?;
    let total = t.nodes[0].value;
    let unit = &p.value_types[value_index].unit;
    let kind = &p.value_types[value_index].kind;
    let width = opts.width as f64;
    let fh = opts.frame_height as f64;
    let fs = opts.font_size as f64;
    let per_value = if total > 0 {
        (width - 2.0 * XPAD) / total as f64
    } else {
        0.0
    };
    let min_value = if per_value > 0.0 {
        opts.min_width / per_value
    } else {
        0.0
    };
    let placed = if total > 0 {
        layout(&t, min_value)
    } else {
        Vec::new()
    };
    let max_depth = placed.iter().map(|f| f.depth).max().unwrap_or(0);
    let max_delta = placed
        .iter()
        .map(|f| (t.nodes[f.node].self_value - t.nodes[f.node].self_base).abs())
        .max()
        .unwrap_or(0);
    // Room for the title (and the subtitle) above the frames.
    let ypad1 = fs * 3.0
        + if opts.subtitle.is_some() {
            fs + 4.0
        } else {
            0.0
        };
    let ypad2 = fs * 2.0 + 10.0;
    let height = (max_depth + 1) as f64 * fh + ypad1 + ypad2;

    let mut w = std::io::BufWriter::new(w);
    let mut out = String::with_capacity(1 << 16);
    let _ = write!(
        out,
        "<?xml version=\"1.0\" standalone=\"no\"?>\n\
         <svg version=\"1.1\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" \
         xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\" \
         data-xpad=\"{XPAD}\" data-fontsize=\"{fs}\" data-fontwidth=\"{FONT_WIDTH}\" \
         data-total=\"{total}\" data-unit=\"",
        w = opts.width,
        h = height,
    );
    xml_escape(&mut out, unit);
    out.push_str("\">\n");
    let _ = write!(
        out,
        "<defs><linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">\
         <stop stop-color=\"#eeeeee\" offset=\"5%\"/><stop stop-color=\"#eeeeb0\" offset=\"95%\"/>\
         </linearGradient></defs>\n\
         <style type=\"text/css\">text {{ font-family: Verdana, sans-serif; font-size: {fs}px; fill: rgb(0,0,0); }} \
         #title {{ text-anchor: middle; font-size: {ts}px; }} .f:hover rect {{ stroke: black; stroke-width: 0.5; }} \
         #search, #reset {{ cursor: pointer; }} .hide {{ display: none; }}</style>\n\
         <rect x=\"0\" y=\"0\" width=\"{w}\" height=\"{h}\" fill=\"url(#background)\"/>\n\
         <text id=\"title\" x=\"{cx}\" y=\"{ty}\">",
        ts = fs + 5.0,
        w = opts.width,
        h = height,
        cx = width / 2.0,
        ty = fs * 2.0,
    );
    xml_escape(&mut out, title);
    out.push_str("</text>\n");
    if let Some(sub) = &opts.subtitle {
        let _ = write!(
            out,
            "<text x=\"{cx}\" y=\"{y}\" style=\"text-anchor: middle\">",
            cx = width / 2.0,
            y = fs * 2.0 + fs + 2.0
        );
        xml_escape(&mut out, sub);
        out.push_str("</text>\n");
    }
    let _ = writeln!(
        out,
        "<text id=\"details\" x=\"{XPAD}\" y=\"{y}\"> </text>",
        y = height - ypad2 / 2.0 + 4.0
    );
    if opts.interactive {
        let _ = write!(
            out,
            "<text id=\"reset\" x=\"{XPAD}\" y=\"{ty}\" class=\"hide\">Reset Zoom</text>\n\
             <text id=\"search\" x=\"{sx}\" y=\"{ty}\" style=\"text-anchor: end\">Search</text>\n\
             <text id=\"matched\" x=\"{sx}\" y=\"{my}\" style=\"text-anchor: end\"> </text>\n",
            ty = fs * 2.0,
            sx = width - XPAD,
            my = height - ypad2 / 2.0 + 4.0,
        );
    }
    out.push_str("<g id=\"frames\">\n");
    for f in &placed {
        let node = &t.nodes[f.node];
        let label = t.label(f.node);
        let x = XPAD + f.start as f64 * per_value;
        let wd = node.value as f64 * per_value;
        let y = height - ypad2 - (f.depth as f64 + 1.0) * fh;
        let (r, g, b) = match base_index {
            Some(_) => diff_colour(node.self_value - node.self_base, max_delta),
            None => colour(label, node.inlined),
        };
        let pct = node.value as f64 * 100.0 / total as f64;
        out.push_str("<g class=\"f\"><title>");
        xml_escape(&mut out, label);
        let base_note = match base_index {
            Some(_) => {
                let d = node.self_value - node.self_base;
                format!(
                    "; base {}, self {}{}",
                    thousands(node.base),
                    if d > 0 { "+" } else { "" },
                    thousands(d)
                )
            }
            None => String::new(),
        };
        let _ = write!(
            out,
            " ({} {}, {:.2}%{base_note})</title><rect x=\"{:.2}\" y=\"{}\" width=\"{:.2}\" height=\"{}\" \
             fill=\"rgb({r},{g},{b})\" rx=\"2\" ry=\"2\" data-d=\"{}\"/><text x=\"{:.2}\" y=\"{}\">",
            thousands(node.value),
            if unit.is_empty() { kind } else { unit },
            pct,
            x,
            y,
            wd,
            fh - 1.0,
            f.depth,
            x + 3.0,
            y + fh / 2.0 + fs / 2.0 - 2.0,
        );
        if let Some(text) = fit_label(label, wd, fs) {
            xml_escape(&mut out, &text);
        }
        out.push_str("</text></g>\n");
        if out.len() > 1 << 16 {
            w.write_all(out.as_bytes()).map_err(io_err)?;
            out.clear();
        }
    }
    out.push_str("</g>\n");
    if opts.interactive {
        out.push_str("<script type=\"text/ecmascript\"><![CDATA[\n");
        out.push_str(SCRIPT);
        out.push_str("]]></script>\n");
    }
    out.push_str("</svg>\n");
    w.write_all(out.as_bytes()).map_err(io_err)?;
    w.flush().map_err(io_err)?;
    Ok(())
}

/// Click-to-zoom and search. Frames keep their original geometry in
/// `data-` attributes on first use; zooming rescales x/width and hides the
/// frames outside the zoomed range.
const SCRIPT: &str = r#"(function () {
  var svg = document.documentElement;
  var xpad = parseFloat(svg.getAttribute("data-xpad"));
  var fs = parseFloat(svg.getAttribute("data-fontsize"));
  var fw = parseFloat(svg.getAttribute("data-fontwidth"));
  var W = parseFloat(svg.getAttribute("width"));
  var frames = Array.prototype.slice.call(document.querySelectorAll("g.f"));
  var details = document.getElementById("details");
  var reset = document.getElementById("reset");
  var matched = document.getElementById("matched");
  frames.forEach(function (g) {
    var r = g.querySelector("rect"), t = g.querySelector("title").textContent;
    g.ox = parseFloat(r.getAttribute("x"));
    g.ow = parseFloat(r.getAttribute("width"));
    g.name = t.replace(/ \([^()]*\)$/, "");
    g.fill = r.getAttribute("fill");
    g.addEventListener("mouseover", function () { details.textContent = t; });
    g.addEventListener("mouseout", function () { details.textContent = " "; });
    g.addEventListener("click", function () { zoom(g); });
  });
  function label(g, x, w) {
    var text = g.querySelector("text");
    text.setAttribute("x", (x + 3).toFixed(2));
    var n = Math.floor(w / (fs * fw));
    text.textContent = n < 3 ? "" : (g.name.length <= n ? g.name : g.name.substring(0, n - 2) + "..");
  }
  function place(z0, z1) {
    var s = (W - 2 * xpad) / (z1 - z0);
    frames.forEach(function (g) {
      var a = Math.max(g.ox, z0), b = Math.min(g.ox + g.ow, z1);
      var r = g.querySelector("rect");
      if (b - a <= 1e-6) { g.classList.add("hide"); return; }
      g.classList.remove("hide");
      var x = xpad + (a - z0) * s, w = (b - a) * s;
      r.setAttribute("x", x.toFixed(2));
      r.setAttribute("width", w.toFixed(2));
      label(g, x, w);
    });
  }
  function zoom(g) {
    if (g.querySelector("rect").getAttribute("data-d") === "0") { unzoom(); return; }
    place(g.ox, g.ox + g.ow);
    reset.classList.remove("hide");
  }
  function unzoom() { place(xpad, W - xpad); reset.classList.add("hide"); }
  reset.addEventListener("click", unzoom);
  function search() {
    var term = prompt("Search frames (regular expression); empty to clear", "");
    if (term === null) return;
    var re = null;
    if (term !== "") { try { re = new RegExp(term); } catch (e) { alert(e); return; } }
    var spans = [];
    frames.forEach(function (g) {
      var r = g.querySelector("rect");
      if (re && re.test(g.name)) { r.setAttribute("fill", "rgb(230,0,230)"); spans.push([g.ox, g.ox + g.ow]); }
      else r.setAttribute("fill", g.fill);
    });
    spans.sort(function (a, b) { return a[0] - b[0]; });
    var covered = 0, end = -1;
    spans.forEach(function (s) {
      if (s[0] >= end) { covered += s[1] - s[0]; end = s[1]; }
      else if (s[1] > end) { covered += s[1] - end; end = s[1]; }
    });
    matched.textContent = re ? "Matched: " + (100 * covered / (W - 2 * xpad)).toFixed(2) + "%" : " ";
  }
  document.getElementById("search").addEventListener("click", search);
  window.addEventListener("keydown", function (e) {
    if (e.key === "Escape") unzoom();
    if ((e.ctrlKey || e.metaKey) && e.key === "f") { e.preventDefault(); search(); }
  });
})();
"#;
