//! retroprof-heap: replays allocation logs (the Daedalus tracker's
//! `Allocating`/`Freeing` lines, or our generic line format described in
//! `FORMAT.md`) and reports leaks, the peak, per-call-site figures,
//! temporary allocations, churn over time, a size histogram with allocator
//! overhead, anomalies, and a picture of the memory map.
//!
//! Library use (e.g. from an emulator bridge):
//! ```
//! use retroprof_heap::{HeapEvent, Replay, ReplayOptions, Symbolizer};
//! let mut replay = Replay::new(ReplayOptions::default(), Symbolizer::default());
//! replay.push(&HeapEvent::frame(1));
//! replay.push(&HeapEvent::alloc(32, 0xff0100, 0x2a4));
//! replay.push(&HeapEvent::alloc(16, 0xff0200, 0x2b0));
//! replay.push(&HeapEvent::free(0xff0100, 0x2c0));
//! let analysis = replay.finish();
//! assert_eq!(analysis.live_bytes, 16);
//! assert_eq!(analysis.peak.bytes, 48);
//! let text = retroprof_heap::report::terminal(&analysis, &Default::default());
//! assert!(text.contains("Leaks"));
//! ```

pub mod event;
pub mod font;
mod live;
pub mod memmap;
pub mod model;
pub mod output;
pub mod reader;
pub mod replay;
pub mod report;
pub mod symbolize;
pub mod synth;

pub use event::{Dialect, EventKind, HeapEvent, LogWriter, Parsed};
pub use reader::LogReader;
pub use replay::{
    Analysis, Anomaly, AnomalyKind, At, LiveBlock, Replay, ReplayOptions, Site, SiteStats,
    Snapshot, Span,
};
pub use symbolize::{Arch, Grouping, Resolve, Symbolizer};

/// Errors of the heap analyser.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot read {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: read error after line {line}: {source}")]
    Read {
        path: String,
        line: u64,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}:{line}: {message}")]
    Malformed {
        path: String,
        line: u64,
        message: String,
    },
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Profile(#[from] retroprof_profile::Error),
}

/// How [`replay_log`] treats the input.
#[derive(Clone, Copy, Debug, Default)]
pub struct DriveOptions {
    /// A malformed line is an error ([`Error::Malformed`]) instead of an
    /// anomaly.
    pub strict: bool,
    /// The architecture was given by the user or the ELF file: do not
    /// take it from the log (header `arch=`, or MIPS for Daedalus lines).
    pub arch_fixed: bool,
}

/// Replays a whole log into `replay`. Returns the dialect of the first
/// event (None for a log without events).
pub fn replay_log(
    reader: &mut LogReader,
    replay: &mut Replay,
    opts: DriveOptions,
) -> Result<Option<Dialect>, Error> {
    let mut dialect = None;
    let mut arch_fixed = opts.arch_fixed;
    let name = reader.name().to_string();
    if replay_name_is_empty(replay) {
        replay.set_name(&name);
    }
    loop {
        let (line_no, line) = match reader.next_line() {
            Ok(Some(l)) => l,
            Ok(None) => break,
            // An over-long line: an anomaly (or, strict, an error).
            Err(Error::Malformed { line, message, .. }) if !opts.strict => {
                replay.malformed(line, "", message);
                continue;
            }
            Err(e) => return Err(e),
        };
        match event::parse_line(line) {
            Ok(Parsed::Event(ev, d)) => {
                // Frame markers look alike in both dialects.
                if dialect.is_none() && !matches!(ev.kind, EventKind::Frame(_)) {
                    dialect = Some(d);
                    if !arch_fixed && d == Dialect::Daedalus {
                        // The tracker ran on the PSP (MIPS).
                        replay.symbolizer_mut().arch = Arch::Mips;
                    }
                    arch_fixed = true;
                }
                // The text is decoded only when an anomaly quotes it.
                replay.feed_bytes(&ev, line_no, line);
            }
            Ok(Parsed::Nothing) => replay.skip_line(line_no),
            Ok(Parsed::Header { arch }) => {
                replay.skip_line(line_no);
                if let Some(a) = arch {
                    match Arch::parse(&a) {
                        Some(a) if !arch_fixed => replay.symbolizer_mut().arch = a,
                        Some(_) => {}
                        None => {
                            let msg = format!("unknown architecture '{a}' (expected mips or m68k)");
                            if opts.strict {
                                return Err(Error::Malformed {
                                    path: name,
                                    line: line_no,
                                    message: msg,
                                });
                            }
                            let t = String::from_utf8_lossy(line).into_owned();
                            replay.malformed(line_no, &t, msg);
                        }
                    }
                }
            }
            Err(message) => {
                if opts.strict {
                    return Err(Error::Malformed {
                        path: name,
                        line: line_no,
                        message,
                    });
                }
                let t = String::from_utf8_lossy(line).into_owned();
                replay.malformed(line_no, &t, message);
            }
        }
    }
    Ok(dialect)
}

fn replay_name_is_empty(replay: &Replay) -> bool {
    replay.name().is_empty()
}

/// The profile writers (pprof, folded stacks, ...) of `retroprof-profile`.
pub use retroprof_profile::write as profile_write;

/// Writes `path` whole or not at all (temporary file in the same folder,
/// then rename), replacing an existing file: callers pass only paths the
/// user named.
pub fn write_file<F>(path: &std::path::Path, f: F) -> Result<(), Error>
where
    F: FnOnce(&mut dyn std::io::Write) -> Result<(), Error>,
{
    retroprof_profile::write::atomic(path, true, |w| {
        f(w).map_err(|e| match e {
            Error::Profile(p) => p,
            other => retroprof_profile::Error::Invalid(other.to_string()),
        })
    })
    .map_err(Error::Profile)
}
