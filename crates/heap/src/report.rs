//! The terminal report.

use std::fmt::Write as _;

use crate::replay::{Analysis, AnomalyKind, Site, TimelineRow};
use crate::symbolize::describe_frame;

/// Options for [`terminal`].
#[derive(Clone, Debug)]
pub struct TerminalOptions {
    /// ANSI colours (only when writing to a terminal).
    pub color: bool,
    /// Rows per table.
    pub top: usize,
    /// Anomalies listed.
    pub anomalies: usize,
}

impl Default for TerminalOptions {
    fn default() -> Self {
        TerminalOptions {
            color: false,
            top: 10,
            anomalies: 20,
        }
    }
}

/// `1234567` -> `1,234,567`.
pub fn num(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `1234567` -> `1,234,567 B (1.18 MiB)`.
pub fn bytes(n: u64) -> String {
    if n < 1024 {
        format!("{} B", num(n))
    } else if n < 1 << 20 {
        format!("{} B ({:.1} KiB)", num(n), n as f64 / 1024.0)
    } else {
        format!("{} B ({:.2} MiB)", num(n), n as f64 / (1 << 20) as f64)
    }
}

/// `1 block`, `2 blocks`.
pub fn blocks(n: u64) -> String {
    if n == 1 {
        "1 block".to_string()
    } else {
        format!("{} blocks", num(n))
    }
}

fn pct(part: u64, whole: u64) -> String {
    if whole == 0 {
        "-".to_string()
    } else {
        format!("{:.1}%", part as f64 * 100.0 / whole as f64)
    }
}

/// Short name of a site: its leaf frame, then up to two callers.
pub fn site_name(site: &Site) -> String {
    let mut parts: Vec<String> = site.frames.iter().take(3).map(describe_frame).collect();
    if site.frames.len() > 3 {
        parts.push("...".into());
    }
    parts.join(" <- ")
}

/// Short label for pictures: the leaf function name.
pub fn site_label(site: &Site) -> String {
    site.frames
        .first()
        .map(|f| f.name.clone())
        .unwrap_or_else(|| "?".into())
}

struct Out {
    s: String,
    color: bool,
}

impl Out {
    fn head(&mut self, title: &str) {
        if self.color {
            let _ = writeln!(self.s, "\n\x1b[1;36m== {title} ==\x1b[0m");
        } else {
            let _ = writeln!(self.s, "\n== {title} ==");
        }
    }
    fn warn(&self, t: &str) -> String {
        if self.color {
            format!("\x1b[1;31m{t}\x1b[0m")
        } else {
            t.to_string()
        }
    }
    fn line(&mut self, t: &str) {
        self.s.push_str(t);
        self.s.push('\n');
    }
}

fn when(a: &Analysis, event: u64, frame: u64, line: u64) -> String {
    if a.has_frames {
        format!(
            "event {}, frame {}, line {}",
            num(event),
            num(frame),
            num(line)
        )
    } else {
        format!("event {}, line {}", num(event), num(line))
    }
}

fn lifetime(a: &Analysis, s: &crate::SiteStats) -> String {
    let v = if a.has_frames {
        s.mean_lifetime_frames()
    } else {
        s.mean_lifetime_events()
    };
    match v {
        Some(v) => format!("{v:.1}"),
        None => "-".into(),
    }
}

/// The whole report as text.
pub fn terminal(a: &Analysis, o: &TerminalOptions) -> String {
    let mut out = Out {
        s: String::new(),
        color: o.color,
    };
    let top = o.top.max(1);
    out.head("Summary");
    out.line(&format!("log:        {} ({} lines)", a.name, num(a.lines)));
    out.line(&format!(
        "events:     {} ({} allocations, {} frees{})",
        num(a.events),
        num(a.allocs),
        num(a.frees),
        if a.null_frees > 0 {
            format!(", {} frees of null ignored", num(a.null_frees))
        } else {
            String::new()
        }
    ));
    out.line(&format!("allocated:  {}", bytes(a.bytes_allocated)));
    out.line(&format!("freed:      {}", bytes(a.bytes_freed)));
    if a.has_frames {
        out.line(&format!(
            "frames:     {} to {} ({} markers)",
            num(a.first_frame),
            num(a.last_frame),
            num(a.frame_markers)
        ));
    } else {
        out.line("frames:     none marked (time is the event number)");
    }
    out.line(
        &format!(
            "call sites: {} (grouped by {:?}, arch {})",
            num(a.sites.len() as u64),
            a.grouping,
            a.arch.name()
        )
        .to_lowercase(),
    );
    let anomalies = a.anomalies.total();
    if anomalies > 0 {
        let t = format!("anomalies:  {} (see below)", num(anomalies));
        let w = out.warn(&t);
        out.line(&w);
    } else {
        out.line("anomalies:  none");
    }

    // Leaks.
    out.head("Leaks (live at the end of the log)");
    if a.live_blocks == 0 {
        out.line("none: every allocation was freed");
    } else {
        let t = format!("{} in {}", bytes(a.live_bytes), blocks(a.live_blocks));
        let w = out.warn(&t);
        out.line(&w);
        out.line(&format!("{:>14} {:>8}  call site", "bytes", "blocks"));
        let order = a.sites_by(|s| s.leaked_bytes);
        for &i in order.iter().take(top) {
            let s = &a.sites[i];
            if s.stats.leaked_blocks == 0 {
                break;
            }
            out.line(&format!(
                "{:>14} {:>8}  {}",
                num(s.stats.leaked_bytes),
                num(s.stats.leaked_blocks),
                site_name(s)
            ));
            for c in s.callers.iter().take(3) {
                out.line(&format!("{:24}{}", "", c));
            }
            if let Some(b) = a.end.iter().find(|b| b.site as usize == i) {
                out.line(&format!(
                    "{:24}e.g. {} bytes at 0x{:08x}, log line {}",
                    "",
                    num(b.size),
                    b.ptr,
                    num(b.line)
                ));
            }
        }
    }

    // Peak.
    out.head("Peak");
    let p = &a.peak;
    out.line(&format!(
        "{} in {} at {}{}",
        bytes(p.bytes),
        blocks(p.blocks),
        when(a, p.event, p.frame, p.line),
        p.time.map(|t| format!(", time {t}")).unwrap_or_default()
    ));
    if a.histogram.header > 0 || a.histogram.align > 1 {
        out.line(&format!(
            "with allocator overhead: {} headers + {} alignment = {} in use ({} overhead)",
            bytes(p.header_bytes),
            bytes(p.align_waste),
            bytes(p.bytes + p.header_bytes + p.align_waste),
            pct(
                p.header_bytes + p.align_waste,
                p.bytes + p.header_bytes + p.align_waste
            )
        ));
    }
    out.line(&format!(
        "most blocks live: {} at event {}",
        num(p.max_blocks),
        num(p.max_blocks_event)
    ));
    out.line(&format!(
        "{:>14} {:>8}  call site (live at the peak)",
        "bytes", "blocks"
    ));
    for &i in a.sites_by(|s| s.at_peak_bytes).iter().take(top) {
        let s = &a.sites[i];
        if s.stats.at_peak_blocks == 0 {
            break;
        }
        out.line(&format!(
            "{:>14} {:>8}  {}",
            num(s.stats.at_peak_bytes),
            num(s.stats.at_peak_blocks),
            site_name(s)
        ));
    }

    // Snapshot.
    if let Some(snap) = &a.snapshot {
        let what = snap
            .at
            .map(|at| at.to_string())
            .unwrap_or_else(|| "snapshot".into());
        out.head(&format!("Live set {what}"));
        if snap.log_ended_first {
            let w = out.warn("the log ended before that point: this is the end state");
            out.line(&w);
        }
        out.line(&format!(
            "{} in {} at {}",
            bytes(snap.live_bytes),
            blocks(snap.live_blocks),
            when(a, snap.event, snap.frame, snap.line)
        ));
        let mut per: Vec<(u64, u64, usize)> = vec![(0, 0, 0); a.sites.len()];
        for b in &snap.blocks {
            let e = &mut per[b.site as usize];
            e.0 += b.size;
            e.1 += 1;
            e.2 = b.site as usize;
        }
        per.retain(|e| e.1 > 0);
        per.sort_by(|x, y| y.0.cmp(&x.0).then(x.2.cmp(&y.2)));
        out.line(&format!("{:>14} {:>8}  call site", "bytes", "blocks"));
        for (b, n, i) in per.iter().take(top) {
            out.line(&format!(
                "{:>14} {:>8}  {}",
                num(*b),
                num(*n),
                site_name(&a.sites[*i])
            ));
        }
    }

    // Call sites.
    out.head("Call sites by bytes allocated");
    out.line(&format!(
        "{:>9} {:>14} {:>12} {:>12} {:>9} {:>9}  call site",
        "allocs",
        "bytes",
        "peak live",
        "leaked",
        "temp",
        format!("life({})", if a.has_frames { "fr" } else { "ev" })
    ));
    for &i in a.sites_by(|s| s.bytes).iter().take(top) {
        let s = &a.sites[i];
        let st = &s.stats;
        out.line(&format!(
            "{:>9} {:>14} {:>12} {:>12} {:>9} {:>9}  {}",
            num(st.allocs),
            num(st.bytes),
            num(st.peak_bytes),
            num(st.leaked_bytes),
            num(st.temporary),
            lifetime(a, st),
            site_name(s)
        ));
    }

    // Temporary.
    out.head(&format!(
        "Temporary allocations (freed within {})",
        a.temporary_span
    ));
    out.line(&format!(
        "{} of {} allocations ({}), {}",
        num(a.temporary),
        num(a.allocs),
        pct(a.temporary, a.allocs),
        bytes(a.temporary_bytes)
    ));
    for &i in a.sites_by(|s| s.temporary).iter().take(top) {
        let s = &a.sites[i];
        if s.stats.temporary == 0 {
            break;
        }
        out.line(&format!(
            "{:>9} {:>14}  {}",
            num(s.stats.temporary),
            num(s.stats.temporary_bytes),
            site_name(s)
        ));
    }

    // Churn.
    out.head(&format!("Churn (per {})", a.churn.unit));
    let c = &a.churn;
    if c.rows == 0 {
        out.line("no events");
    } else {
        out.line(&format!(
            "{} rows, {} with allocations; {:.1} allocations and {} per row on average",
            num(c.rows),
            num(c.rows_with_allocs),
            c.allocs as f64 / c.rows as f64,
            bytes(c.bytes_allocated / c.rows)
        ));
        out.line("busiest:");
        out.line(&format!(
            "{:>12} {:>9} {:>9} {:>12} {:>12} {:>12}",
            if a.has_frames && a.churn.unit == "frame" {
                "frame"
            } else {
                "first event"
            },
            "allocs",
            "frees",
            "bytes alloc",
            "bytes freed",
            "live after"
        ));
        for r in &c.busiest {
            out.line(&row_line(a, r));
        }
    }

    // Histogram.
    out.head("Allocation sizes");
    let h = &a.histogram;
    let max = h.buckets.iter().map(|b| b.allocs).max().unwrap_or(0);
    out.line(&format!(
        "{:>21} {:>10} {:>14} {:>12}  ",
        "size", "allocs", "bytes", "overhead"
    ));
    for b in &h.buckets {
        let range = if b.lo == b.hi {
            num(b.lo)
        } else {
            format!("{}..{}", num(b.lo), num(b.hi))
        };
        let bar = if max > 0 {
            "#".repeat(((b.allocs * 30).div_ceil(max)) as usize)
        } else {
            String::new()
        };
        out.line(&format!(
            "{:>21} {:>10} {:>14} {:>12}  {}",
            range,
            num(b.allocs),
            num(b.bytes),
            num(b.header_bytes + b.align_waste),
            bar
        ));
    }
    if !h.top_sizes.is_empty() {
        let sizes: Vec<String> = h
            .top_sizes
            .iter()
            .map(|e| format!("{} B x{}", num(e.size), num(e.allocs)))
            .collect();
        out.line(&format!(
            "most common sizes ({} distinct): {}",
            num(h.distinct_sizes),
            sizes.join(", ")
        ));
    }
    if h.header > 0 || h.align > 1 {
        out.line(&format!(
            "allocator overhead (header {} B, align {} B): {} headers + {} alignment = {} over all allocations",
            h.header,
            h.align,
            bytes(h.header_bytes),
            bytes(h.align_waste),
            pct(h.header_bytes + h.align_waste, a.bytes_allocated + h.header_bytes + h.align_waste)
        ));
        let small: u64 = h
            .buckets
            .iter()
            .filter(|b| b.hi <= 32)
            .map(|b| b.allocs)
            .sum();
        if small > 0 {
            out.line(&format!(
                "{} allocations of 32 bytes or less ({}): candidates for a pool or free list",
                num(small),
                pct(small, a.allocs)
            ));
        }
    } else {
        out.line("(give --header BYTES --align BYTES for the allocator's overhead)");
    }

    // Anomalies.
    out.head("Anomalies");
    if anomalies == 0 {
        out.line("none");
    } else {
        for k in AnomalyKind::ALL {
            let n = a.anomalies.count(k);
            if n > 0 {
                let t = format!("{:>10}  {}", num(n), k.describe());
                let w = out.warn(&t);
                out.line(&w);
            }
        }
        let shown = a.anomalies.listed.len().min(o.anomalies);
        if shown > 0 {
            out.line(&format!("first {shown}:"));
        }
        for an in a.anomalies.listed.iter().take(o.anomalies) {
            out.line(&format!(
                "  line {}: {}: {}",
                num(an.line),
                an.kind.describe(),
                an.detail
            ));
            out.line(&format!("      | {}", an.text));
        }
    }
    out.s
}

fn row_line(a: &Analysis, r: &TimelineRow) -> String {
    let first = if a.has_frames && a.churn.unit == "frame" {
        num(r.frame)
    } else {
        num(r.first_event)
    };
    format!(
        "{:>12} {:>9} {:>9} {:>12} {:>12} {:>12}",
        first,
        num(r.allocs),
        num(r.frees),
        num(r.bytes_allocated),
        num(r.bytes_freed),
        num(r.live_bytes)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(num(0), "0");
        assert_eq!(num(999), "999");
        assert_eq!(num(1000), "1,000");
        assert_eq!(num(1234567), "1,234,567");
        assert_eq!(bytes(2048), "2,048 B (2.0 KiB)");
    }
}
