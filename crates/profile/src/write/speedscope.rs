//! speedscope JSON (<https://www.speedscope.app/file-format-schema.json>).
//!
//! One `sampled` profile per value type (merged stacks of the whole run),
//! then any `evented` profiles of [`SpeedscopeOptions::evented`]: open /
//! close events in time order, which speedscope's "Time Order" view shows as
//! the real call timeline.

use std::collections::BTreeMap;
use std::io::Write;

use super::json::push_str;
use super::{io_err, validate};
use crate::{Error, Frame, StackProfile};

/// Open or close of a frame in an [`EventedProfile`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    Open,
    Close,
}

/// One event of an [`EventedProfile`]: `frame` indexes
/// [`EventedProfile::frames`], `at` is in the profile's unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    pub kind: EventKind,
    pub frame: u32,
    pub at: u64,
}

/// A speedscope `evented` profile: a timeline of nested calls.
///
/// Events are in time order (`at` never decreases), lie within
/// `start..=end`, and every close closes the innermost open frame; every
/// frame opened is closed by the end. The writer checks all of this and
/// refuses (with [`Error::Invalid`]) a profile that breaks it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EventedProfile {
    pub name: String,
    /// Our unit name ("nanoseconds", "cycles", ...; see [`unit`]).
    pub unit: String,
    pub start: u64,
    pub end: u64,
    /// Frames the events refer to; merged into `shared.frames` (a frame
    /// equal to one of the stack profile's is written once).
    pub frames: Vec<Frame>,
    pub events: Vec<Event>,
}

impl EventedProfile {
    /// Check the invariants listed on the type.
    pub fn validate(&self) -> Result<(), Error> {
        let bad = |i: usize, what: String| {
            Err(Error::Invalid(format!(
                "evented profile {:?}, event {i}: {what}",
                self.name
            )))
        };
        if self.start > self.end {
            return bad(0, format!("start {} after end {}", self.start, self.end));
        }
        let mut stack: Vec<u32> = Vec::new();
        let mut last = self.start;
        for (i, e) in self.events.iter().enumerate() {
            if e.frame as usize >= self.frames.len() {
                return bad(
                    i,
                    format!(
                        "frame {} but the profile has {} frame(s)",
                        e.frame,
                        self.frames.len()
                    ),
                );
            }
            if e.at < last || e.at > self.end {
                return bad(
                    i,
                    format!(
                        "at {} out of order (previous {last}, end {})",
                        e.at, self.end
                    ),
                );
            }
            last = e.at;
            match e.kind {
                EventKind::Open => stack.push(e.frame),
                EventKind::Close => match stack.pop() {
                    Some(f) if f == e.frame => {}
                    Some(f) => {
                        return bad(
                            i,
                            format!("closes frame {} but frame {f} is innermost", e.frame),
                        )
                    }
                    None => return bad(i, format!("closes frame {} with none open", e.frame)),
                },
            }
        }
        if let Some(f) = stack.last() {
            return bad(
                self.events.len(),
                format!(
                    "{} frame(s) still open at the end (innermost {f})",
                    stack.len()
                ),
            );
        }
        Ok(())
    }
}

/// Extras for [`super::speedscope_with`].
#[derive(Clone, Debug, Default)]
pub struct SpeedscopeOptions {
    /// Evented profiles written after the sampled ones.
    pub evented: Vec<EventedProfile>,
}

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

pub(crate) fn write<W: Write>(
    p: &StackProfile,
    opts: &SpeedscopeOptions,
    w: W,
) -> Result<(), Error> {
    validate(p, None)?;
    for e in &opts.evented {
        e.validate()?;
    }
    // Shared frames: the stack profile's, then the evented profiles' new
    // ones; `remap[k][i]` is the shared index of evented profile k's frame i.
    let mut frames: Vec<&Frame> = p.frames.iter().collect();
    let mut known: BTreeMap<&Frame, u32> = BTreeMap::new();
    for (i, f) in p.frames.iter().enumerate() {
        known.entry(f).or_insert(i as u32);
    }
    let mut remap: Vec<Vec<u32>> = Vec::with_capacity(opts.evented.len());
    for e in &opts.evented {
        let mut m = Vec::with_capacity(e.frames.len());
        for f in &e.frames {
            let next = frames.len() as u32;
            let i = *known.entry(f).or_insert_with(|| {
                frames.push(f);
                next
            });
            m.push(i);
        }
        remap.push(m);
    }
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
    for (i, f) in frames.iter().enumerate() {
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
    for (k, e) in opts.evented.iter().enumerate() {
        if k > 0 || !p.value_types.is_empty() {
            out.push(',');
        }
        out.push_str("\n{\"type\":\"evented\",\"name\":");
        push_str(&mut out, &e.name);
        out.push_str(",\"unit\":");
        push_str(&mut out, unit(&e.unit));
        out.push_str(",\"startValue\":");
        out.push_str(&e.start.to_string());
        out.push_str(",\"endValue\":");
        out.push_str(&e.end.to_string());
        out.push_str(",\"events\":[");
        for (i, ev) in e.events.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(match ev.kind {
                EventKind::Open => "\n{\"type\":\"O\",\"frame\":",
                EventKind::Close => "\n{\"type\":\"C\",\"frame\":",
            });
            out.push_str(&remap[k][ev.frame as usize].to_string());
            out.push_str(",\"at\":");
            out.push_str(&ev.at.to_string());
            out.push('}');
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
