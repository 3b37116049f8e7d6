//! speedscope JSON (<https://www.speedscope.app/file-format-schema.json>).

use std::io::Write;

use super::json::push_str;
use super::{io_err, validate};
use crate::{Error, StackProfile};

const SCHEMA: &str = "https://www.speedscope.app/file-format-schema.json";

/// speedscope's `ValueUnit` for one of our unit names ("none" when it has no
/// equivalent, e.g. cycles or counts).
pub(crate) fn unit(u: &str) -> &'static str {
    match u.to_ascii_lowercase().as_str() {
        "bytes" | "byte" => "bytes",
        "nanoseconds" | "nanosecond" | "ns" => "nanoseconds",
        "microseconds" | "microsecond" | "us" | "µs" => "microseconds",
        "milliseconds" | "millisecond" | "ms" => "milliseconds",
        "seconds" | "second" | "s" => "seconds",
        _ => "none",
    }
}

pub(crate) fn write<W: Write>(p: &StackProfile, w: W) -> Result<(), Error> {
    validate(p, None)?;
    let mut w = std::io::BufWriter::new(w);
    let mut out = String::with_capacity(4096);
    out.push_str("{\"$schema\":");
    push_str(&mut out, SCHEMA);
    out.push_str(",\"name\":");
    push_str(&mut out, &p.name);
    out.push_str(",\"exporter\":");
    push_str(&mut out, concat!("retroprof ", env!("CARGO_PKG_VERSION")));
    out.push_str(",\"activeProfileIndex\":");
    out.push_str(
        &p.default_value
            .min(p.value_types.len().saturating_sub(1))
            .to_string(),
    );
    out.push_str(",\n\"shared\":{\"frames\":[");
    for (i, f) in p.frames.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str("\n{\"name\":");
        if f.name.is_empty() {
            push_str(&mut out, "[unknown]");
        } else {
            push_str(&mut out, &f.name);
        }
        if let Some(file) = &f.file {
            out.push_str(",\"file\":");
            push_str(&mut out, file);
        }
        if let Some(line) = f.line {
            out.push_str(",\"line\":");
            out.push_str(&line.to_string());
        }
        out.push('}');
        if out.len() > 1 << 16 {
            w.write_all(out.as_bytes()).map_err(io_err)?;
            out.clear();
        }
    }
    out.push_str("]},\n\"profiles\":[");
    for (vi, vt) in p.value_types.iter().enumerate() {
        if vi > 0 {
            out.push(',');
        }
        let total: i64 = p
            .samples
            .iter()
            .map(|s| s.values[vi])
            .filter(|&v| v > 0)
            .fold(0i64, |a, v| a.saturating_add(v));
        out.push_str("\n{\"type\":\"sampled\",\"name\":");
        let name = if p.name.is_empty() {
            vt.kind.clone()
        } else {
            format!("{} ({})", p.name, vt.kind)
        };
        push_str(&mut out, &name);
        out.push_str(",\"unit\":");
        push_str(&mut out, unit(&vt.unit));
        out.push_str(",\"startValue\":0,\"endValue\":");
        out.push_str(&total.to_string());
        out.push_str(",\"samples\":[");
        let mut first = true;
        for s in &p.samples {
            if s.values[vi] <= 0 {
                continue;
            }
            if !first {
                out.push(',');
            }
            first = false;
            out.push('[');
            for (i, f) in s.stack.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&f.to_string());
            }
            out.push(']');
            if out.len() > 1 << 16 {
                w.write_all(out.as_bytes()).map_err(io_err)?;
                out.clear();
            }
        }
        out.push_str("],\"weights\":[");
        let mut first = true;
        for s in &p.samples {
            let v = s.values[vi];
            if v <= 0 {
                continue;
            }
            if !first {
                out.push(',');
            }
            first = false;
            out.push_str(&v.to_string());
            if out.len() > 1 << 16 {
                w.write_all(out.as_bytes()).map_err(io_err)?;
                out.clear();
            }
        }
        out.push_str("]}");
    }
    out.push_str("]}\n");
    w.write_all(out.as_bytes()).map_err(io_err)?;
    w.flush().map_err(io_err)?;
    Ok(())
}
