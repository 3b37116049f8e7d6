//! Reading a `retroprof profile --json` report, with errors that say what
//! the file is when it is not one.

use std::io::Read;
use std::path::Path;

use retroprof_mdprof::report::{Report, SCHEMA};
use serde::Deserialize;

use crate::DiffError;

/// Reports bigger than this are refused (a 1,800-frame report with the
/// default `--top` is about 2 MB; this bounds memory on hostile input).
pub const MAX_REPORT_BYTES: u64 = 1 << 30;

/// The fields that tell one JSON document of ours from another.
#[derive(Deserialize)]
struct Probe {
    schema: Option<serde_json::Value>,
    format: Option<serde_json::Value>,
    total_samples: Option<serde_json::Value>,
    #[serde(rename = "$schema")]
    dollar_schema: Option<serde_json::Value>,
    #[serde(rename = "traceEvents")]
    trace_events: Option<serde_json::Value>,
}

/// Does `bytes` look like JSON (first non-blank byte `{`)? The CLI uses
/// this to tell a report from a ROM.
pub fn looks_like_json(bytes: &[u8]) -> bool {
    bytes
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|&b| b == b'{')
}

fn json_error(path: &Path, bytes: &[u8], e: &serde_json::Error) -> DiffError {
    // serde_json's message without its " at line L column C" (added below).
    let full = e.to_string();
    let msg = full
        .rsplit_once(" at line ")
        .map_or(full.as_str(), |(m, _)| m);
    // An error at the very end of the data is a cut-off file whatever
    // token it was in the middle of.
    let at_end = {
        let end = bytes.trim_ascii_end();
        let lines = end.iter().filter(|&&b| b == b'\n').count() + 1;
        let last_col = end.len() - end.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        e.line() > lines || (e.line() == lines && e.column() >= last_col)
    };
    let what = match e.classify() {
        serde_json::error::Category::Eof => {
            "truncated JSON (the file ends in the middle of the document)".to_string()
        }
        serde_json::error::Category::Syntax if at_end => {
            format!("truncated JSON (the file ends in the middle of the document: {msg})")
        }
        serde_json::error::Category::Syntax => format!("not valid JSON: {msg}"),
        serde_json::error::Category::Data => format!("not a profile report: {msg}"),
        serde_json::error::Category::Io => format!("read error: {msg}"),
    };
    DiffError::BadReport {
        path: path.display().to_string(),
        reason: format!("{what} at line {} column {}", e.line(), e.column()),
    }
}

/// Parse a report from its bytes; `path` names it in errors.
pub fn parse_report(path: &Path, bytes: &[u8]) -> Result<Report, DiffError> {
    let bad = |reason: String| DiffError::BadReport {
        path: path.display().to_string(),
        reason,
    };
    if !looks_like_json(bytes) {
        return Err(bad(
            "not a JSON report (give the file `retroprof profile --json FILE` wrote, or a ROM)"
                .into(),
        ));
    }
    let probe: Probe = serde_json::from_slice(bytes).map_err(|e| json_error(path, bytes, &e))?;
    match (&probe.schema, &probe.format) {
        (Some(serde_json::Value::String(s)), _) if s == SCHEMA => {}
        (Some(serde_json::Value::String(s)), _) if s.starts_with("retroprof-mdprof-report/") => {
            return Err(bad(format!(
                "report schema {s:?}, but this retroprof reads {SCHEMA:?} \
                 (made by a different retroprof version: profile both builds with the same one)"
            )))
        }
        (Some(serde_json::Value::String(s)), _) if s.starts_with("retroprof-diff/") => {
            return Err(bad(format!(
                "a `retroprof diff --json` result ({s}), not a profile report"
            )))
        }
        (Some(s), _) => {
            return Err(bad(format!(
                "unknown schema {s}: not a `retroprof profile --json` report (expected {SCHEMA:?})"
            )))
        }
        (None, Some(serde_json::Value::String(f))) if f == "retroprof-heap" => {
            return Err(bad(
                "a `retroprof heap` report, not a `retroprof profile --json` report".into(),
            ))
        }
        (None, _) if probe.total_samples.is_some() => {
            return Err(bad(
                "a `retroprof samples` report, not a `retroprof profile --json` report".into(),
            ))
        }
        (None, _) if probe.dollar_schema.is_some() => {
            return Err(bad(
                "a speedscope file, not a `retroprof profile --json` report".into(),
            ))
        }
        (None, _) if probe.trace_events.is_some() => {
            return Err(bad(
                "a Chrome/Perfetto trace (`--trace`), not a `retroprof profile --json` report"
                    .into(),
            ))
        }
        (None, _) => {
            return Err(bad(format!(
                "no \"schema\" field: not a `retroprof profile --json` report (expected {SCHEMA:?})"
            )))
        }
    }
    let r: Report = serde_json::from_slice(bytes).map_err(|e| json_error(path, bytes, &e))?;
    check_consistent(&r).map_err(bad)?;
    Ok(r)
}

/// The cross-references a diff relies on: function indices in frames and
/// stacks, frame numbers in order.
fn check_consistent(r: &Report) -> Result<(), String> {
    let nf = r.functions.len();
    for (i, f) in r.frames.iter().enumerate() {
        if f.frame != i as u64 {
            return Err(format!(
                "frames[{i}] is frame {}, expected {i} (frames must be in order from 0)",
                f.frame
            ));
        }
        if let Some(t) = f.top.iter().find(|t| t.function >= nf) {
            return Err(format!(
                "frame {i} refers to function {} but the report has {nf}",
                t.function
            ));
        }
    }
    for (i, s) in r.stacks.iter().enumerate() {
        if let Some(&b) = s.stack.iter().find(|&&x| x >= nf) {
            return Err(format!(
                "stacks[{i}] refers to function {b} but the report has {nf}"
            ));
        }
    }
    Ok(())
}

/// Read and parse a report file.
pub fn read_report(path: &Path) -> Result<Report, DiffError> {
    let io = |e: std::io::Error| DiffError::Io {
        path: path.display().to_string(),
        source: e,
    };
    let f = std::fs::File::open(path).map_err(io)?;
    let mut bytes = Vec::new();
    f.take(MAX_REPORT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > MAX_REPORT_BYTES {
        return Err(DiffError::BadReport {
            path: path.display().to_string(),
            reason: format!("larger than {MAX_REPORT_BYTES} bytes: not a profile report"),
        });
    }
    parse_report(path, &bytes)
}
