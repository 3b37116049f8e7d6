//! File outputs: our JSON, DHAT JSON, the CSV timeline, and the
//! [`StackProfile`] for pprof and folded stacks.

use std::io::Write;

use retroprof_profile::{Frame, Sample, StackProfile, ValueType};
use serde::Serialize;

use crate::replay::{Analysis, LiveBlock};
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

/// The CSV timeline, one row per frame or window.
pub fn write_csv<W: Write>(a: &Analysis, w: W) -> Result<(), Error> {
    let mut w = std::io::BufWriter::new(w);
    writeln!(
        w,
        "row,frame,first_event,events,allocs,frees,bytes_allocated,bytes_freed,live_bytes,live_blocks,max_live_bytes,time"
    )
    .map_err(io)?;
    for (i, r) in a.timeline.iter().enumerate() {
        writeln!(
            w,
            "{},{},{},{},{},{},{},{},{},{},{},{}",
            i,
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
        .map_err(io)?;
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
