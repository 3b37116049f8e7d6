//! retroprof-diff: compare two frame-budget profiles (`retroprof profile
//! --json` reports) and gate CI on the result.
//!
//! - [`load`]: read a report, with a clear error when the file is
//!   something else (another schema version, a `heap` or `samples` report,
//!   truncated JSON).
//! - [`model`]: [`diff`] matches functions by name (compiler clones by base
//!   name) and frames by number (optionally aligned at the first game loop)
//!   and computes the deltas; the [`Diff`] is the JSON output (schema
//!   [`model::SCHEMA`]).
//! - [`gates`]: `--fail-load-regression`, `--fail-function-regression`,
//!   `--fail-new-drops`.
//! - [`output`]: terminal text, CSV, JSON, HTML; [`stacks`]: differential
//!   flame graph and pprof.
//!
//! No emulator code is instantiated here: this crate only reads reports.

pub mod gates;
pub mod load;
pub mod model;
pub mod output;
pub mod stacks;

pub use gates::{check as check_gates, Gates};
pub use load::{parse_report, read_report};
pub use model::{diff, Diff, DiffOptions};

/// Errors: all about the user's files.
#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {reason}")]
    BadReport { path: String, reason: String },
    #[error("{0}")]
    Incompatible(String),
}

#[cfg(test)]
mod tests;
