//! Writers for [`crate::StackProfile`] (contract; bodies being written).
//!
//! Each writer writes to any `std::io::Write`; [`atomic`] writes a file whole
//! or not at all (temporary file in the same folder, then rename).

use std::io::Write;

use crate::{Error, StackProfile};

fn todo_writer(what: &str) -> Error {
    Error::Invalid(format!("the {what} writer is not built yet"))
}

/// Brendan Gregg's folded stacks: `root;mid;leaf VALUE` per line, using
/// value `value_index`, lines sorted for determinism.
pub fn folded<W: Write>(_p: &StackProfile, _value_index: usize, _w: W) -> Result<(), Error> {
    Err(todo_writer("folded"))
}

/// Gzip-compressed pprof `profile.proto`.
pub fn pprof<W: Write>(_p: &StackProfile, _w: W) -> Result<(), Error> {
    Err(todo_writer("pprof"))
}

/// speedscope JSON (sampled profile per value type).
pub fn speedscope<W: Write>(_p: &StackProfile, _w: W) -> Result<(), Error> {
    Err(todo_writer("speedscope"))
}

/// A self-contained flame graph SVG of value `value_index`.
pub fn flamegraph_svg<W: Write>(
    _p: &StackProfile,
    _value_index: usize,
    _title: &str,
    _w: W,
) -> Result<(), Error> {
    Err(todo_writer("flame graph"))
}

/// Write `path` whole or not at all: the closure writes into a temporary
/// file in the same folder, which is renamed over `path` on success.
/// If `path` exists and `replace` is false, fails with [`Error::Exists`].
pub fn atomic<F>(_path: &std::path::Path, _replace: bool, _f: F) -> Result<(), Error>
where
    F: FnOnce(&mut dyn Write) -> Result<(), Error>,
{
    Err(todo_writer("atomic file"))
}
