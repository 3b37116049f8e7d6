//! The profile model shared by every retroprof tool, and its writers.
//!
//! [`StackProfile`] is the common currency: a set of weighted call stacks
//! over a frame table. `profile` (Mega Drive), `heap` and `samples` all build
//! one and hand it to the writers in [`write`](mod@write): folded stacks, pprof,
//! speedscope, a flame graph SVG, and (not from a `StackProfile`) a
//! streaming Chrome/Perfetto trace writer, [`write::trace::TraceWriter`].
//! [`write::atomic`] writes any of them to a file whole or not at all.

pub mod write;

/// One frame of a stack: a function, optionally with a source location.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Frame {
    /// Function name (demangled where that applies).
    pub name: String,
    /// Start address of the function, if known.
    pub addr: Option<u64>,
    /// Source file, if known (DWARF, `nm -l`, map file).
    pub file: Option<String>,
    /// Source line, if known.
    pub line: Option<u32>,
    /// Module / object file / library, if the map gives one.
    pub module: Option<String>,
    /// True when this frame was inlined into its parent (DWARF).
    pub inlined: bool,
}

/// A kind of value carried by every sample, like pprof's `sample_type`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValueType {
    /// e.g. "cycles", "samples", "alloc_space".
    pub kind: String,
    /// e.g. "cycles", "count", "bytes".
    pub unit: String,
}

/// One weighted stack.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sample {
    /// Indices into [`StackProfile::frames`], ROOT FIRST, leaf last.
    pub stack: Vec<u32>,
    /// One value per entry of [`StackProfile::value_types`].
    pub values: Vec<i64>,
}

/// A profile as weighted stacks: what folded stacks, flame graphs, pprof and
/// speedscope all express.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StackProfile {
    /// Short name of what was profiled (ROM or program name).
    pub name: String,
    pub value_types: Vec<ValueType>,
    /// Index of the value type viewers should show by default.
    pub default_value: usize,
    pub frames: Vec<Frame>,
    pub samples: Vec<Sample>,
}

impl StackProfile {
    /// Intern a frame, returning its index (linear search is fine for
    /// building; callers with many frames keep their own map).
    pub fn frame_index(&mut self, frame: Frame) -> u32 {
        if let Some(i) = self.frames.iter().position(|f| *f == frame) {
            return i as u32;
        }
        self.frames.push(frame);
        (self.frames.len() - 1) as u32
    }
}

/// Errors from the writers.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("I/O error writing {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} already exists (name it explicitly to replace it)")]
    Exists { path: String },
    #[error("{0}")]
    Invalid(String),
    /// An output the safety checks refuse (it would destroy an input, a
    /// device node or a link, or two outputs share a path): the user's
    /// arguments are at fault.
    #[error("{0}")]
    Refused(String),
}
