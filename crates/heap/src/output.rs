//! File outputs: our JSON, DHAT JSON, the CSV timeline, and the
//! [`StackProfile`] for pprof and folded stacks.

use std::io::Write;

use retroprof_profile::{Frame, Sample, StackProfile, ValueType};
use serde::Serialize;

use crate::replay::{Analysis, LiveBlock, TimelineRow};
use crate::Error;

fn io(e: std::io::Error) -> Error {
    Error::Profile(retroprof_profile::Error::Io {
        path: retroprof_profile::write::STREAM_PATH.to_string(),
        source: e,
    })
}

#[derive(Serialize)]
struct JsonDoc<'a> {
    format: &'static str,
    version: u32,
    #[serde(flatten)]
    analysis: &'a Analysis,
}

/// Our JSON report (schema in `FORMAT.md`): the whole [`Analysis`].
pub fn write_json<W: Write>(a: &Analysis, w: W) -> Result<(), Error> {
    let doc = JsonDoc {
        format: "retroprof-heap",
        version: 1,
        analysis: a,
    };
    let mut w = std::io::BufWriter::new(w);
    serde_json::to_writer_pretty(&mut w, &doc).map_err(|e| Error::Invalid(e.to_string()))?;
    w.write_all(b"\n").map_err(io)?;
    w.flush().map_err(io)
}

/// A timeline output at least this big gets a warning before it is written
/// (issue 21: `--window 1` on a 10-million-event log wrote 2.8 GB of JSON).
pub const LARGE_TIMELINE_BYTES: u64 = 256 << 20;

/// Estimated bytes the kept timeline takes in `--csv` and in `--json`:
/// its rows times the mean size of up to 256 rows spread over it, each
/// rendered as the writer renders it (CSV line; pretty JSON object at the
/// depth of the report's `timeline` array, with its separator).
pub fn timeline_bytes(a: &Analysis) -> (u64, u64) {
    let n = a.timeline.len();
    if n == 0 {
        return (0, 0);
    }
    let k = n.min(256);
    let (mut csv, mut json) = (0u64, 0u64);
    for j in 0..k {
        let i = j * n / k;
        let r = &a.timeline[i];
        let line = format!("{}\n", CsvRow(i, r));
        csv += line.len() as u64;
        let obj = serde_json::to_string_pretty(r).unwrap_or_default();
        // Each of its lines indented 4 more (array in the top object), plus
        // ",\n" and the first line's indent.
        json += obj.len() as u64 + 4 * obj.lines().count() as u64 + 2;
    }
    let per = |total: u64| total.div_ceil(k as u64);
    (per(csv) * n as u64, per(json) * n as u64)
}

/// Human size: `2.8 GB`, `310 MB`, `12 kB` (powers of 1000).
pub fn human_bytes(b: u64) -> String {
    match b {
        0..1_000 => format!("{b} bytes"),
        1_000..1_000_000 => format!("{} kB", b / 1_000),
        1_000_000..1_000_000_000 => format!("{} MB", b / 1_000_000),
        _ => format!("{:.1} GB", b as f64 / 1e9),
    }
}

/// The warning to print before writing the timeline to `--csv` (`csv`)
/// and/or `--json` (`json`) when either would be at least `limit` bytes;
/// `None` when both are smaller. Says the size and how to reduce it.
pub fn timeline_size_warning(a: &Analysis, csv: bool, json: bool, limit: u64) -> Option<String> {
    let (c, j) = timeline_bytes(a);
    let mut parts = Vec::new();
    if json && j >= limit {
        parts.push(format!("--json about {}", human_bytes(j)));
    }
    if csv && c >= limit {
        parts.push(format!("--csv about {}", human_bytes(c)));
    }
    if parts.is_empty() {
        return None;
    }
    let rows = a.timeline.len() as u64;
    Some(format!(
        "the timeline has {rows} rows ({}), so {} will be written; a larger --window \
         gives fewer rows (10 times the window, a tenth of the size), or leave out the \
         output you do not need",
        a.churn.unit,
        parts.join(" and ")
    ))
}

/// Row `.0` of the timeline CSV (`--csv`), as [`write_csv`] writes it and
/// [`timeline_bytes`] sizes it.
struct CsvRow<'a>(usize, &'a TimelineRow);

impl std::fmt::Display for CsvRow<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (i, r) = (self.0, self.1);
        write!(
            f,
            "{i},{},{},{},{},{},{},{},{},{},{},{}",
            r.frame,
            r.first_event,
            r.events,
            r.allocs,
            r.frees,
            r.bytes_allocated,
            r.bytes_freed,
            r.live_bytes,
            r.live_blocks,
            r.max_live_bytes,
            r.time.map(|t| t.to_string()).unwrap_or_default()
        )
    }
}

/// The CSV timeline, one row per frame or window.
pub fn write_csv<W: Write>(a: &Analysis, w: W) -> Result<(), Error> {
    let mut w = std::io::BufWriter::new(w);
    writeln!(
        w,
        "row,frame,first_event,events,allocs,frees,bytes_allocated,bytes_freed,live_bytes,live_blocks,max_live_bytes,time"
    )
    .map_err(io)?;
    for (i, r) in a.timeline.iter().enumerate() {
        writeln!(w, "{}", CsvRow(i, r)).map_err(io)?;
    }
    w.flush().map_err(io)
}

fn dhat_frame(f: &Frame) -> String {
    let unresolved = f.name.starts_with("0x") && f.file.is_none();
    let name = if unresolved { "???" } else { f.name.as_str() };
    let mut s = match f.addr {
        Some(a) => format!("0x{a:X}: {name}"),
        None => name.to_string(),
    };
    match (&f.file, f.line) {
        (Some(file), Some(line)) => s.push_str(&format!(" ({file}:{line})")),
        (Some(file), None) => s.push_str(&format!(" ({file})")),
        _ => {}
    }
    s
}

/// DHAT JSON (`dhatFileVersion` 2, heap mode, block lifetimes without
/// accesses) for Valgrind's `dh_view.html`. Time is in frames when the log
/// has frame markers, else in events.
pub fn write_dhat<W: Write>(a: &Analysis, w: W) -> Result<(), Error> {
    use serde_json::{json, Value};
    let frames = a.has_frames;
    let (tu, mtu) = if frames {
        ("frames", "Mframes")
    } else {
        ("events", "Mevents")
    };
    let te = if frames { a.last_frame } else { a.events };
    let tg = if frames { a.peak.frame } else { a.peak.event };
    let tuth = match a.temporary_span {
        crate::Span::Frames(n) if frames => n.max(1),
        crate::Span::Events(n) if !frames => n.max(1),
        _ => 1,
    };
    // Lifetimes of the blocks still live count up to the end.
    let mut live_life = vec![0u64; a.sites.len()];
    for b in &a.end {
        live_life[b.site as usize] += if frames {
            a.last_frame - b.frame
        } else {
            a.events - b.event
        };
    }
    let mut ftbl: Vec<String> = vec!["[root]".to_string()];
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut pps = Vec::with_capacity(a.sites.len());
    for (i, s) in a.sites.iter().enumerate() {
        let st = &s.stats;
        let fs: Vec<usize> = s
            .frames
            .iter()
            .map(|f| {
                let text = dhat_frame(f);
                *index.entry(text.clone()).or_insert_with(|| {
                    ftbl.push(text);
                    ftbl.len() - 1
                })
            })
            .collect();
        let tl = if frames {
            st.lifetime_frames
        } else {
            st.lifetime_events
        } + live_life[i];
        pps.push(json!({
            "tb": st.bytes, "tbk": st.allocs, "tl": tl,
            "mb": st.peak_bytes, "mbk": st.peak_blocks,
            "gb": st.at_peak_bytes, "gbk": st.at_peak_blocks,
            "eb": st.leaked_bytes, "ebk": st.leaked_blocks,
            "fs": fs,
        }));
    }
    let doc: Value = json!({
        "dhatFileVersion": 2,
        "mode": "heap",
        "verb": "Allocated",
        "bklt": true,
        "bkacc": false,
        "tu": tu,
        "Mtu": mtu,
        "tuth": tuth,
        "cmd": format!("retroprof heap {}", a.name),
        "pid": 0,
        "te": te,
        "tg": tg,
        "pps": pps,
        "ftbl": ftbl,
    });
    let mut w = std::io::BufWriter::new(w);
    serde_json::to_writer(&mut w, &doc).map_err(|e| Error::Invalid(e.to_string()))?;
    w.write_all(b"\n").map_err(io)?;
    w.flush().map_err(io)
}

/// Value types of [`stack_profile`], pprof's heap convention.
pub const HEAP_VALUE_TYPES: [(&str, &str); 4] = [
    ("alloc_objects", "count"),
    ("alloc_space", "bytes"),
    ("inuse_objects", "count"),
    ("inuse_space", "bytes"),
];

/// One sample per call site: allocations over the whole log and what is
/// in use in `inuse` (the end state, or a snapshot). Default value
/// `inuse_space`, as `go tool pprof` expects of heap profiles.
pub fn stack_profile(a: &Analysis, inuse: &[LiveBlock]) -> StackProfile {
    let mut p = StackProfile {
        name: a.name.clone(),
        value_types: HEAP_VALUE_TYPES
            .iter()
            .map(|(k, u)| ValueType {
                kind: k.to_string(),
                unit: u.to_string(),
            })
            .collect(),
        default_value: 3,
        frames: Vec::new(),
        samples: Vec::new(),
    };
    let mut live = vec![(0i64, 0i64); a.sites.len()];
    for b in inuse {
        live[b.site as usize].0 += 1;
        live[b.site as usize].1 += b.size as i64;
    }
    let mut index: std::collections::HashMap<Frame, u32> = std::collections::HashMap::new();
    for (i, s) in a.sites.iter().enumerate() {
        let mut stack: Vec<u32> = Vec::with_capacity(s.frames.len());
        for f in s.frames.iter().rev() {
            let id = *index.entry(f.clone()).or_insert_with(|| {
                p.frames.push(f.clone());
                (p.frames.len() - 1) as u32
            });
            stack.push(id);
        }
        p.samples.push(Sample {
            stack,
            values: vec![
                s.stats.allocs as i64,
                s.stats.bytes as i64,
                live[i].0,
                live[i].1,
            ],
        });
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::{Replay, ReplayOptions};
    use crate::synth;
    use crate::{Arch, Grouping, Symbolizer};

    fn analysis(events: u64, window: u64) -> Analysis {
        let mut r = Replay::new(
            ReplayOptions {
                window: Some(window),
                keep_timeline: true,
                ..ReplayOptions::default()
            },
            Symbolizer::new(Arch::Unknown, Grouping::Function, None),
        );
        for ev in synth::game_like(events, 21) {
            r.push(&ev);
        }
        r.finish()
    }

    /// Issue 21: `--window 1` on a big log gives a warning before the
    /// outputs are written; the estimate is the size the writers produce.
    #[test]
    fn large_timeline_is_warned_before_writing() {
        let a = analysis(20_000, 1);
        assert_eq!(a.timeline.len(), 20_000);
        let (c, j) = timeline_bytes(&a);
        let mut csv = Vec::new();
        write_csv(&a, &mut csv).unwrap();
        let mut js = Vec::new();
        write_json(&a, &mut js).unwrap();
        // The CSV is the timeline (plus its header); the JSON also holds
        // the rest of the analysis, so the timeline is most of it.
        let close = |est: u64, got: u64| est.abs_diff(got) * 10 < got;
        assert!(
            close(c, csv.len() as u64),
            "csv estimate {c}, wrote {}",
            csv.len()
        );
        assert!(
            j < js.len() as u64 && close(j, js.len() as u64),
            "json estimate {j}, wrote {}",
            js.len()
        );
        // A limit below the size: a warning that names both sizes and the
        // remedy; above: none.
        let w = timeline_size_warning(&a, true, true, 500_000).unwrap();
        eprintln!(
            "csv estimate {c} wrote {}, json estimate {j} wrote {}: {w}",
            csv.len(),
            js.len()
        );
        assert!(
            w.contains("20000 rows") && w.contains("--json about ") && w.contains("--csv about "),
            "{w}"
        );
        assert!(w.contains("a larger --window"), "{w}");
        assert!(timeline_size_warning(&a, true, true, 100_000_000).is_none());
        assert!(timeline_size_warning(&a, false, false, 1).is_none());
        // The real limit on the case: 10 million events with
        // --window 1 keep MAX_TIMELINE_ROWS rows, scaled from this one.
        let per_row = j / a.timeline.len() as u64;
        let full = per_row * crate::replay::MAX_TIMELINE_ROWS as u64;
        assert!(full >= LARGE_TIMELINE_BYTES, "{full}");
        // A window of 1000 events: 20 rows, no warning at the real limit.
        let b = analysis(20_000, 1000);
        assert!(timeline_size_warning(&b, true, true, LARGE_TIMELINE_BYTES).is_none());
    }

    #[test]
    fn human_sizes() {
        assert_eq!(human_bytes(999), "999 bytes");
        assert_eq!(human_bytes(12_345), "12 kB");
        assert_eq!(human_bytes(310_000_000), "310 MB");
        assert_eq!(human_bytes(2_800_000_000), "2.8 GB");
    }
}
