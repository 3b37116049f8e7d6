//! Writers for [`crate::StackProfile`].
//!
//! Each writer writes to any `std::io::Write`; [`atomic`] writes a file whole
//! or not at all (temporary file in the same folder, then rename).
//!
//! All writers are deterministic: the same profile gives the same bytes (no
//! hash-map iteration order, no timestamps; the gzip header of [`pprof`] has
//! mtime 0).
//!
//! I/O errors raised while writing to a plain `Write` carry the path
//! [`STREAM_PATH`]; [`atomic`] replaces it with the real file name.
//!
//! Frame labels (folded stacks and the flame graph) come from
//! [`frame_label`]: the function name, `;` replaced by `:`, control
//! characters (newline, tab, ...) replaced by a space, an empty name shown as
//! `[unknown]`, and inlined frames suffixed `_[i]` (the convention of
//! flamegraph.pl / `stackcollapse-perf.pl --inline`). With
//! [`FoldedOptions::with_location`] the source location is appended as
//! ` (file:line)` when the frame has one.

use std::io::Write;

use crate::{Error, StackProfile};

mod atomic;
mod flamegraph;
mod folded;
mod hash;
mod json;
mod plan;
mod pprof;
mod speedscope;
pub mod trace;

pub use self::flamegraph::FlameGraphOptions;
pub use self::folded::FoldedOptions;
pub use self::plan::OutputPlan;
pub use self::pprof::PprofOptions;
pub use self::speedscope::{Event, EventKind, EventedProfile, SpeedscopeOptions};

/// The `path` of an [`Error::Io`] raised while writing to a stream that has
/// no file name; [`atomic`] replaces it with the file it was writing.
pub const STREAM_PATH: &str = "<output stream>";

/// True when `path` names this process's standard output: `-` (the
/// command-line convention; [`atomic`] writes it there, never to a file
/// named `-`), `/dev/stdout`, `/dev/fd/1` or `/proc/self/fd/1`.
pub fn is_stdout(path: &std::path::Path) -> bool {
    matches!(
        path.as_os_str().to_str(),
        Some("-" | "/dev/stdout" | "/dev/fd/1" | "/proc/self/fd/1")
    )
}

pub(crate) fn io_err(source: std::io::Error) -> Error {
    Error::Io {
        path: STREAM_PATH.to_string(),
        source,
    }
}

/// Check that a profile is self-consistent: every sample has one value per
/// value type and its frame indices exist; `value_index` (when given) names
/// a value type.
pub fn validate(p: &StackProfile, value_index: Option<usize>) -> Result<(), Error> {
    if let Some(v) = value_index {
        if v >= p.value_types.len() {
            return Err(Error::Invalid(format!(
                "value index {v} out of range: the profile has {} value type(s)",
                p.value_types.len()
            )));
        }
    }
    if !p.value_types.is_empty() && p.default_value >= p.value_types.len() {
        return Err(Error::Invalid(format!(
            "default value index {} out of range: the profile has {} value type(s)",
            p.default_value,
            p.value_types.len()
        )));
    }
    for (i, s) in p.samples.iter().enumerate() {
        if s.values.len() != p.value_types.len() {
            return Err(Error::Invalid(format!(
                "sample {i} has {} value(s), expected {} (one per value type)",
                s.values.len(),
                p.value_types.len()
            )));
        }
        if let Some(&bad) = s.stack.iter().find(|&&f| f as usize >= p.frames.len()) {
            return Err(Error::Invalid(format!(
                "sample {i} refers to frame {bad}, but the profile has {} frame(s)",
                p.frames.len()
            )));
        }
    }
    Ok(())
}

/// The label of a frame in folded stacks and flame graphs (see the module
/// documentation for the escaping rules).
pub fn frame_label(frame: &crate::Frame, with_location: bool) -> String {
    let mut s = String::with_capacity(frame.name.len() + 8);
    if frame.name.is_empty() {
        s.push_str("[unknown]");
    } else {
        for c in frame.name.chars() {
            s.push(sanitize_char(c));
        }
    }
    if with_location {
        if let Some(file) = &frame.file {
            s.push_str(" (");
            for c in file.chars() {
                s.push(sanitize_char(c));
            }
            if let Some(line) = frame.line {
                s.push(':');
                s.push_str(&line.to_string());
            }
            s.push(')');
        }
    }
    if frame.inlined {
        s.push_str("_[i]");
    }
    s
}

fn sanitize_char(c: char) -> char {
    match c {
        ';' => ':',
        c if c.is_control() => ' ',
        c => c,
    }
}

/// Brendan Gregg's folded stacks: `root;mid;leaf VALUE` per line, using
/// value `value_index`, lines sorted for determinism.
///
/// Identical stacks are merged (values added); stacks whose total is 0 are
/// left out; a sample with an empty stack is written as `[no stack]`.
pub fn folded<W: Write>(p: &StackProfile, value_index: usize, w: W) -> Result<(), Error> {
    folded::write(p, value_index, &FoldedOptions::default(), w)
}

/// [`folded`] with options (source locations in labels).
pub fn folded_with<W: Write>(
    p: &StackProfile,
    value_index: usize,
    opts: &FoldedOptions,
    w: W,
) -> Result<(), Error> {
    folded::write(p, value_index, opts, w)
}

/// Gzip-compressed pprof `profile.proto`.
///
/// One pprof location per distinct physical frame + inline chain: a frame
/// with `inlined == true` is folded into the location of the frame below it
/// (its caller), as an extra `line` entry before the caller's, so locations
/// list their lines innermost first as pprof expects. Location ids in samples
/// are leaf first. Functions are keyed by (name, file); each location's
/// `line` entries carry the frame's line (0 when unknown) and its function
/// the frame's file, so `pprof -list` finds the source where the profile
/// has it. `period_type` / `period` are the default value type and 1 (every
/// unit counted) unless [`PprofOptions::period`] says otherwise.
pub fn pprof<W: Write>(p: &StackProfile, w: W) -> Result<(), Error> {
    pprof::write(p, &PprofOptions::default(), &[], w)
}

/// [`pprof`] with optional period, duration and comments.
pub fn pprof_with<W: Write>(p: &StackProfile, opts: &PprofOptions, w: W) -> Result<(), Error> {
    pprof::write(p, opts, &[], w)
}

/// [`pprof_with`] with string labels per sample (`labels[i]` for sample
/// `i`; samples past the end of `labels` have none), e.g. pprof's own
/// `pprof::base=true` on the negated base samples of a `-diff_base`
/// profile.
pub fn pprof_labelled<W: Write>(
    p: &StackProfile,
    opts: &PprofOptions,
    labels: &[Vec<(String, String)>],
    w: W,
) -> Result<(), Error> {
    pprof::write(p, opts, labels, w)
}

/// speedscope JSON (sampled profile per value type).
///
/// `shared.frames` are the profile's frames in order (so frame indices are
/// the same); each value type becomes one `sampled` profile whose samples are
/// root-first frame-index lists with their weights; samples whose value is 0
/// or negative are left out of that profile. `activeProfileIndex` is the
/// default value type.
pub fn speedscope<W: Write>(p: &StackProfile, w: W) -> Result<(), Error> {
    speedscope::write(p, &SpeedscopeOptions::default(), w)
}

/// [`speedscope`] with evented profiles (call timelines) after the sampled
/// ones: their frames are merged into `shared.frames` (frames equal to the
/// stack profile's are shared) and each is checked first
/// ([`EventedProfile::validate`]: time order, closes matching opens).
pub fn speedscope_with<W: Write>(
    p: &StackProfile,
    opts: &SpeedscopeOptions,
    w: W,
) -> Result<(), Error> {
    speedscope::write(p, opts, w)
}

/// A self-contained flame graph SVG of value `value_index`.
pub fn flamegraph_svg<W: Write>(
    p: &StackProfile,
    value_index: usize,
    title: &str,
    w: W,
) -> Result<(), Error> {
    flamegraph::write(
        p,
        value_index,
        None,
        title,
        &FlameGraphOptions::default(),
        w,
    )
}

/// [`flamegraph_svg`] with layout options.
pub fn flamegraph_svg_with<W: Write>(
    p: &StackProfile,
    value_index: usize,
    title: &str,
    opts: &FlameGraphOptions,
    w: W,
) -> Result<(), Error> {
    flamegraph::write(p, value_index, None, title, opts, w)
}

/// A differential flame graph SVG (Brendan Gregg's differential flame
/// graphs, as `difffolded.pl | flamegraph.pl` draws them): frame widths are
/// value `new_index`, the colour is the change of the frame's self value
/// from value `base_index` to `new_index` (red grew, blue shrank, the deeper
/// the larger relative to the largest change; near white unchanged). The
/// tooltip adds the base value of the frame and the self delta. Paths the
/// base has and the new profile does not are not drawn (their width is 0),
/// as in Gregg's graphs; they still count in their parents' base values.
pub fn flamegraph_diff_svg<W: Write>(
    p: &StackProfile,
    base_index: usize,
    new_index: usize,
    title: &str,
    opts: &FlameGraphOptions,
    w: W,
) -> Result<(), Error> {
    flamegraph::write(p, new_index, Some(base_index), title, opts, w)
}

/// Write `path` whole or not at all: the closure writes into a temporary
/// file in the same folder, which is renamed over `path` on success.
/// If `path` exists and `replace` is false, fails with [`Error::Exists`].
///
/// `-` is standard output (written there through the process's own handle,
/// never to a file named `-`). A character device, a FIFO or a
/// standard-stream name (`/dev/stdout`) is written in place instead (a rename would replace the node); a symbolic
/// link's final target is written (atomically, beside it); a directory, a
/// block device, a socket or a dangling link is refused
/// ([`Error::Refused`]). Stale temporaries of the same output left by a
/// killed process are removed first.
///
/// On any error (or a panic in the closure) the temporary file is removed
/// and `path` is left as it was. I/O errors the closure reports with path
/// [`STREAM_PATH`] are re-labelled with `path`.
pub fn atomic<F>(path: &std::path::Path, replace: bool, f: F) -> Result<(), Error>
where
    F: FnOnce(&mut dyn Write) -> Result<(), Error>,
{
    atomic::write(path, replace, f)
}

/// Remove the temporaries of [`atomic`] writes in flight when the process
/// gets SIGINT, SIGTERM or SIGHUP, then end as the signal would (Unix; a
/// no-op elsewhere). Call once, early, from a binary. SIGKILL cannot be
/// caught: it may leave one `.NAME.PID-N.tmp`, which the next write of
/// that output removes.
pub fn install_signal_cleanup() {
    atomic::cleanup::install()
}
