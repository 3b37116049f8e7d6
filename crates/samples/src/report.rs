//! Reports of a [`SampleProfile`]: terminal table, JSON, CSV, and the
//! shared [`StackProfile`] for the folded/pprof/speedscope writers.

use std::fmt::Write as _;
use std::io::Write;

use retroprof_profile::{Frame, Sample, StackProfile, ValueType};

use crate::symbolise::{binomial_standard_error, SampleProfile};

fn pct(k: u64, n: u64) -> f64 {
    if n == 0 {
        0.0
    } else {
        100.0 * k as f64 / n as f64
    }
}

/// The terminal table: the `top` hottest functions, modules, unattributed
/// samples, the hottest addresses and the warnings.
pub fn table(p: &SampleProfile, top: usize) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{}: {} samples, {} attributed to functions ({:.1}%){}",
        p.name,
        p.total,
        p.attributed,
        pct(p.attributed, p.total),
        if p.bucket_bytes > 1 {
            format!(", {}-byte buckets", p.bucket_bytes)
        } else {
            String::new()
        }
    );
    let _ = writeln!(s);
    let namew = p
        .functions
        .iter()
        .take(top)
        .map(|f| display_width(&f.name))
        .max()
        .unwrap_or(8)
        .clamp(8, 40);
    let with_module = p.functions.iter().take(top).any(|f| f.module.is_some());
    let header = format!(
        "{:>9} {:>7} {:>6} {:>7}  {}  {:<10} {}",
        "samples",
        "% all",
        "±se",
        "% attr",
        pad("function", namew),
        "address",
        if with_module { "module" } else { "" }
    );
    let _ = writeln!(s, "{}", header.trim_end());
    for f in p.functions.iter().take(top) {
        let se = 100.0 * binomial_standard_error(f.samples, p.total);
        let row = format!(
            "{:>9} {:>6.2}% {:>6.2} {:>6.2}%  {}  {:<10} {}",
            f.samples,
            pct(f.samples, p.total),
            se,
            pct(f.samples, p.attributed),
            pad(&f.name, namew),
            format!("0x{:X}", f.addr),
            f.module.as_deref().unwrap_or("")
        );
        let _ = writeln!(s, "{}", row.trim_end());
    }

    if p.functions.len() > top {
        let rest: u64 = p.functions[top..].iter().map(|f| f.samples).sum();
        let _ = writeln!(
            s,
            "{:>9} {:>6.2}%  ({} more functions; --top to see them)",
            rest,
            pct(rest, p.total),
            p.functions.len() - top
        );
    }
    if !p.functions.is_empty() {
        let _ = writeln!(
            s,
            "(±se: binomial standard error of % all, in percentage points)"
        );
    }
    if !p.modules.is_empty() {
        let _ = writeln!(s, "\nModules");
        let _ = writeln!(s, "{:>9} {:>7}  module", "samples", "% all");
        for m in &p.modules {
            let _ = writeln!(
                s,
                "{:>9} {:>6.2}%  {}",
                m.samples,
                pct(m.samples, p.total),
                m.name
            );
        }
    }
    if !p.unattributed.is_empty() {
        let _ = writeln!(s, "\nNot attributed to a function");
        for u in &p.unattributed {
            let _ = writeln!(
                s,
                "{:>9} {:>6.2}%  {}: {}",
                u.samples,
                pct(u.samples, p.total),
                u.what,
                u.explanation
            );
        }
    }
    if !p.hot.is_empty() {
        let _ = writeln!(s, "\nHottest addresses");
        let _ = writeln!(
            s,
            "{:>9} {:>7}  {:<10}  location",
            "samples", "% all", "address"
        );
        for h in &p.hot {
            let _ = writeln!(
                s,
                "{:>9} {:>6.2}%  {:<10}  {}{}",
                h.samples,
                pct(h.samples, p.total),
                format!("0x{:X}", h.addr),
                h.location,
                h.source
                    .as_deref()
                    .map(|src| format!("  ({src})"))
                    .unwrap_or_default()
            );
        }
    }
    for w in &p.warnings {
        let _ = writeln!(s, "\nwarning: {w}");
    }
    s
}

/// Terminal columns a string takes: East Asian wide characters (kanji,
/// kana, full-width forms) take two.
fn display_width(s: &str) -> usize {
    s.chars()
        .map(|c| {
            let u = c as u32;
            let wide = matches!(u,
                0x1100..=0x115F
                | 0x2E80..=0x303E
                | 0x3041..=0x33FF
                | 0x3400..=0x4DBF
                | 0x4E00..=0x9FFF
                | 0xA000..=0xA4CF
                | 0xAC00..=0xD7A3
                | 0xF900..=0xFAFF
                | 0xFE30..=0xFE4F
                | 0xFF00..=0xFF60
                | 0xFFE0..=0xFFE6
                | 0x20000..=0x3FFFD);
            if wide {
                2
            } else {
                1
            }
        })
        .sum()
}

/// `s` padded with spaces to `width` terminal columns.
fn pad(s: &str, width: usize) -> String {
    let w = display_width(s);
    format!("{s}{}", " ".repeat(width.saturating_sub(w)))
}

fn json_str(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            '\t' => o.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

fn json_opt(s: Option<&str>) -> String {
    s.map(json_str).unwrap_or_else(|| "null".into())
}

fn share(k: u64, n: u64) -> String {
    if n == 0 {
        "0".into()
    } else {
        format!("{:.6}", k as f64 / n as f64)
    }
}

/// The whole profile as JSON (stable key order, shares with 6 decimals).
pub fn write_json<W: Write>(p: &SampleProfile, mut w: W) -> std::io::Result<()> {
    let mut s = String::new();
    s.push_str("{\n");
    let _ = writeln!(s, "  \"name\": {},", json_str(&p.name));
    let _ = writeln!(s, "  \"total_samples\": {},", p.total);
    let _ = writeln!(s, "  \"attributed_samples\": {},", p.attributed);
    let _ = writeln!(s, "  \"bucket_bytes\": {},", p.bucket_bytes);
    s.push_str("  \"functions\": [");
    for (i, f) in p.functions.iter().enumerate() {
        s.push_str(if i == 0 { "\n" } else { ",\n" });
        let aliases: Vec<String> = f.aliases.iter().map(|a| json_str(a)).collect();
        let _ = write!(
            s,
            "    {{\"name\": {}, \"address\": {}, \"end\": {}, \"module\": {}, \"file\": {}, \
             \"line\": {}, \"samples\": {}, \"share_of_all\": {}, \"share_of_attributed\": {}, \
             \"std_error\": {:.6}, \"saturated_buckets\": {}, \"aliases\": [{}]}}",
            json_str(&f.name),
            f.addr,
            f.end
                .map(|e| e.to_string())
                .unwrap_or_else(|| "null".into()),
            json_opt(f.module.as_deref()),
            json_opt(f.file.as_deref()),
            f.line
                .map(|l| l.to_string())
                .unwrap_or_else(|| "null".into()),
            f.samples,
            share(f.samples, p.total),
            share(f.samples, p.attributed),
            binomial_standard_error(f.samples, p.total),
            f.saturated_buckets,
            aliases.join(", ")
        );
    }
    s.push_str("\n  ],\n  \"modules\": [");
    for (i, m) in p.modules.iter().enumerate() {
        s.push_str(if i == 0 { "\n" } else { ",\n" });
        let _ = write!(
            s,
            "    {{\"name\": {}, \"samples\": {}, \"share_of_all\": {}}}",
            json_str(&m.name),
            m.samples,
            share(m.samples, p.total)
        );
    }
    s.push_str("\n  ],\n  \"unattributed\": [");
    for (i, u) in p.unattributed.iter().enumerate() {
        s.push_str(if i == 0 { "\n" } else { ",\n" });
        let kind = match u.kind {
            crate::UnattributedKind::OutsideCode => "outside_code",
            crate::UnattributedKind::NoSymbol => "no_symbol",
            crate::UnattributedKind::External => "outside_program",
            crate::UnattributedKind::UnreadableMapLine => "unreadable_map_line",
        };
        let _ = write!(
            s,
            "    {{\"kind\": \"{kind}\", \"what\": {}, \"samples\": {}, \"share_of_all\": {}, \
             \"explanation\": {}}}",
            json_str(&u.what),
            u.samples,
            share(u.samples, p.total),
            json_str(&u.explanation)
        );
    }
    s.push_str("\n  ],\n  \"hot_addresses\": [");
    for (i, h) in p.hot.iter().enumerate() {
        s.push_str(if i == 0 { "\n" } else { ",\n" });
        let _ = write!(
            s,
            "    {{\"address\": {}, \"samples\": {}, \"location\": {}, \"source\": {}}}",
            h.addr,
            h.samples,
            json_str(&h.location),
            json_opt(h.source.as_deref())
        );
    }
    s.push_str("\n  ],\n  \"warnings\": [");
    for (i, x) in p.warnings.iter().enumerate() {
        s.push_str(if i == 0 { "\n    " } else { ",\n    " });
        s.push_str(&json_str(x));
    }
    s.push_str("\n  ]\n}\n");
    w.write_all(s.as_bytes())
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// One row per function, then one per unattributed group.
pub fn write_csv<W: Write>(p: &SampleProfile, mut w: W) -> std::io::Result<()> {
    let mut s = String::from(
        "kind,name,address,module,samples,share_of_all,share_of_attributed,std_error\n",
    );
    for f in &p.functions {
        let _ = writeln!(
            s,
            "function,{},0x{:X},{},{},{},{},{:.6}",
            csv_field(&f.name),
            f.addr,
            csv_field(f.module.as_deref().unwrap_or("")),
            f.samples,
            share(f.samples, p.total),
            share(f.samples, p.attributed),
            binomial_standard_error(f.samples, p.total)
        );
    }
    for u in &p.unattributed {
        let _ = writeln!(
            s,
            "unattributed,{},,,{},{},,{:.6}",
            csv_field(&u.what),
            u.samples,
            share(u.samples, p.total),
            binomial_standard_error(u.samples, p.total)
        );
    }
    w.write_all(s.as_bytes())
}

/// The profile as weighted one-frame stacks (value type `samples`/`count`),
/// unattributed samples as bracketed pseudo-functions, so totals match.
pub fn to_stack_profile(p: &SampleProfile) -> StackProfile {
    let mut sp = StackProfile {
        name: p.name.clone(),
        value_types: vec![ValueType {
            kind: "samples".into(),
            unit: "count".into(),
        }],
        default_value: 0,
        frames: Vec::new(),
        samples: Vec::new(),
    };
    for f in &p.functions {
        sp.frames.push(Frame {
            name: f.name.clone(),
            addr: Some(f.addr),
            file: f.file.clone(),
            line: f.line,
            module: f.module.clone(),
            inlined: false,
        });
        sp.samples.push(Sample {
            stack: vec![(sp.frames.len() - 1) as u32],
            values: vec![f.samples as i64],
        });
    }
    for u in &p.unattributed {
        sp.frames.push(Frame {
            name: u.what.clone(),
            ..Default::default()
        });
        sp.samples.push(Sample {
            stack: vec![(sp.frames.len() - 1) as u32],
            values: vec![u.samples as i64],
        });
    }
    sp
}
