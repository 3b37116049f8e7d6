//! What a replay produces: the serialisable analysis model (`Analysis`
//! with its sites, peak, snapshot, timeline, churn, histogram and
//! anomalies) and the time spans and instants of its options.

use std::collections::BTreeMap;

use retroprof_profile::Frame;
use serde::Serialize;

/// A span of time: a number of events or of frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Span {
    Events(u64),
    Frames(u64),
}

impl Span {
    /// `N` (events) or `frame:N` / `frames:N`.
    pub fn parse(s: &str) -> Option<Span> {
        if let Some(n) = s
            .strip_prefix("frame:")
            .or_else(|| s.strip_prefix("frames:"))
        {
            return n.parse().ok().map(Span::Frames);
        }
        let n = s
            .strip_prefix("event:")
            .or_else(|| s.strip_prefix("events:"))
            .unwrap_or(s);
        n.parse().ok().map(Span::Events)
    }
}

impl std::fmt::Display for Span {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Span::Events(n) => write!(f, "{n} event{}", if *n == 1 { "" } else { "s" }),
            Span::Frames(n) => write!(f, "{n} frame{}", if *n == 1 { "" } else { "s" }),
        }
    }
}

/// A point in the replay (`--at`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum At {
    /// After this many alloc/free events.
    Event(u64),
    /// At the end of this frame (just before the next frame's marker).
    Frame(u64),
}

impl At {
    /// `N` (event count) or `frame:N`.
    pub fn parse(s: &str) -> Option<At> {
        match Span::parse(s)? {
            Span::Events(n) => Some(At::Event(n)),
            Span::Frames(n) => Some(At::Frame(n)),
        }
    }
}

impl std::fmt::Display for At {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            At::Event(n) => write!(f, "after event {n}"),
            At::Frame(n) => write!(f, "at the end of frame {n}"),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AnomalyKind {
    /// A line that is not an event.
    Malformed,
    /// A free of a block that was already freed.
    DoubleFree,
    /// A free of a pointer that was never allocated (or was allocated
    /// outside the tracker, e.g. by malloc).
    UnknownFree,
    /// An allocation overlapping a live block (the old block is dropped:
    /// its free was probably not logged).
    Overlap,
    /// An allocation of 0 bytes (tracked).
    ZeroSize,
    /// A size above the limit or past the end of the address space (not
    /// tracked).
    AbsurdSize,
    /// An allocation that returned a null pointer (out of memory).
    NullAlloc,
    /// `new[]` freed by `delete` or `new` by `delete[]`.
    KindMismatch,
    /// A frame number lower than the current one (ignored).
    FrameBackwards,
    /// A timestamp lower than the previous one (ignored).
    TimeBackwards,
}

impl AnomalyKind {
    pub const ALL: [AnomalyKind; 10] = [
        AnomalyKind::Malformed,
        AnomalyKind::DoubleFree,
        AnomalyKind::UnknownFree,
        AnomalyKind::Overlap,
        AnomalyKind::ZeroSize,
        AnomalyKind::AbsurdSize,
        AnomalyKind::NullAlloc,
        AnomalyKind::KindMismatch,
        AnomalyKind::FrameBackwards,
        AnomalyKind::TimeBackwards,
    ];

    pub fn describe(self) -> &'static str {
        match self {
            AnomalyKind::Malformed => "malformed line",
            AnomalyKind::DoubleFree => "double free",
            AnomalyKind::UnknownFree => "free of an unknown pointer",
            AnomalyKind::Overlap => "allocation overlapping a live block",
            AnomalyKind::ZeroSize => "zero-size allocation",
            AnomalyKind::AbsurdSize => "absurd size",
            AnomalyKind::NullAlloc => "allocation returned null",
            AnomalyKind::KindMismatch => "new/delete[] or new[]/delete mismatch",
            AnomalyKind::FrameBackwards => "frame number going backwards",
            AnomalyKind::TimeBackwards => "time going backwards",
        }
    }

    pub(crate) fn index(self) -> usize {
        AnomalyKind::ALL
            .iter()
            .position(|k| *k == self)
            .unwrap_or(0)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Anomaly {
    pub kind: AnomalyKind,
    /// Line in the log (1-based; for events pushed without a line, the
    /// event number).
    pub line: u64,
    /// The log line as written.
    pub text: String,
    /// What is wrong.
    pub detail: String,
}

/// Per call site figures.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SiteStats {
    pub allocs: u64,
    pub bytes: u64,
    pub frees: u64,
    pub freed_bytes: u64,
    /// Live at the end of the log: leaked.
    pub leaked_bytes: u64,
    pub leaked_blocks: u64,
    /// This site's own maximum of live bytes (and of live blocks).
    pub peak_bytes: u64,
    pub peak_blocks: u64,
    /// Live at the moment of the global peak (of live bytes).
    pub at_peak_bytes: u64,
    pub at_peak_blocks: u64,
    /// Sum of lifetimes of the freed blocks.
    pub lifetime_events: u64,
    pub lifetime_frames: u64,
    /// Freed within the temporary span.
    pub temporary: u64,
    pub temporary_bytes: u64,
    pub min_size: u64,
    pub max_size: u64,
    #[serde(skip)]
    pub(crate) temp_ev: (u64, u64),
    #[serde(skip)]
    pub(crate) temp_fr: (u64, u64),
}

impl SiteStats {
    /// Mean lifetime of the freed blocks, in events.
    pub fn mean_lifetime_events(&self) -> Option<f64> {
        (self.frees > 0).then(|| self.lifetime_events as f64 / self.frees as f64)
    }

    pub fn mean_lifetime_frames(&self) -> Option<f64> {
        (self.frees > 0).then(|| self.lifetime_frames as f64 / self.frees as f64)
    }
}

/// A call site: a group of call stacks with the same key frames.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Site {
    /// Key frames, leaf (the caller of the allocator) first.
    #[serde(serialize_with = "ser_frames")]
    pub frames: Vec<Frame>,
    /// Distinct return addresses seen for this site (the first 8).
    pub addrs: Vec<u64>,
    /// Each of `addrs` described with its source line(s), innermost
    /// first: `0x08953a94: fn (file.c:12) <- outer (file.c:40)`.
    pub callers: Vec<String>,
    pub stats: SiteStats,
}

fn ser_frames<S: serde::Serializer>(frames: &[Frame], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::{SerializeMap, SerializeSeq};
    struct F<'a>(&'a Frame);
    impl Serialize for F<'_> {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let f = self.0;
            let mut m = s.serialize_map(None)?;
            m.serialize_entry("name", &f.name)?;
            if let Some(a) = f.addr {
                m.serialize_entry("addr", &a)?;
            }
            if let Some(file) = &f.file {
                m.serialize_entry("file", file)?;
            }
            if let Some(line) = f.line {
                m.serialize_entry("line", &line)?;
            }
            if let Some(module) = &f.module {
                m.serialize_entry("module", module)?;
            }
            if f.inlined {
                m.serialize_entry("inlined", &true)?;
            }
            m.end()
        }
    }
    let mut seq = s.serialize_seq(Some(frames.len()))?;
    for f in frames {
        seq.serialize_element(&F(f))?;
    }
    seq.end()
}

/// A live block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct LiveBlock {
    pub ptr: u64,
    pub size: u64,
    /// Index into [`Analysis::sites`].
    pub site: u32,
    /// Event number of its allocation (1-based).
    pub event: u64,
    pub frame: u64,
    /// Log line of its allocation.
    pub line: u64,
    pub array: bool,
}

/// The live set at one moment.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Snapshot {
    pub at: Option<At>,
    /// Events replayed when it was taken.
    pub event: u64,
    pub frame: u64,
    pub line: u64,
    pub live_bytes: u64,
    pub live_blocks: u64,
    /// Sorted by address.
    pub blocks: Vec<LiveBlock>,
    /// True when the log ended before the requested point.
    pub log_ended_first: bool,
}

/// The moment of the peak of live bytes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Peak {
    pub bytes: u64,
    /// Blocks live at that moment.
    pub blocks: u64,
    /// Event number, frame, log line and timestamp of the peak.
    pub event: u64,
    pub frame: u64,
    pub line: u64,
    pub time: Option<u64>,
    /// Housekeeping (headers) and alignment waste of the blocks live then.
    pub header_bytes: u64,
    pub align_waste: u64,
    /// The largest number of live blocks, and when.
    pub max_blocks: u64,
    pub max_blocks_event: u64,
}

/// One row of the timeline (a frame or a window of events).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TimelineRow {
    /// The frame (for per-frame rows: the frame; for windows: the frame
    /// current when the window started).
    pub frame: u64,
    /// First event number in the row (the row may hold no event).
    pub first_event: u64,
    pub events: u64,
    pub allocs: u64,
    pub frees: u64,
    pub bytes_allocated: u64,
    pub bytes_freed: u64,
    /// At the end of the row.
    pub live_bytes: u64,
    pub live_blocks: u64,
    /// Largest live bytes within the row.
    pub max_live_bytes: u64,
    /// First timestamp seen in the row.
    pub time: Option<u64>,
}

/// Churn figures over all rows.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Churn {
    /// "frame" or "window of N events".
    pub unit: String,
    pub rows: u64,
    pub rows_with_allocs: u64,
    pub allocs: u64,
    pub bytes_allocated: u64,
    /// The busiest rows (by allocations + frees, then bytes), at most 5.
    pub busiest: Vec<TimelineRow>,
}

/// A power-of-two size class: sizes in `[lo, hi]`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SizeBucket {
    pub lo: u64,
    pub hi: u64,
    pub allocs: u64,
    pub bytes: u64,
    /// Allocator header bytes for these allocations (`--header`).
    pub header_bytes: u64,
    /// Rounding up to `--align`.
    pub align_waste: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ExactSize {
    pub size: u64,
    pub allocs: u64,
    pub bytes: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Histogram {
    pub header: u64,
    pub align: u64,
    /// Non-empty buckets, smallest first.
    pub buckets: Vec<SizeBucket>,
    /// The most common exact sizes (by allocations, then size), at most 10.
    pub top_sizes: Vec<ExactSize>,
    pub distinct_sizes: u64,
    pub header_bytes: u64,
    pub align_waste: u64,
}

/// Anomaly counts (all) and the listed ones (the first few per kind).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Anomalies {
    pub counts: BTreeMap<AnomalyKind, u64>,
    pub listed: Vec<Anomaly>,
}

impl Anomalies {
    pub fn total(&self) -> u64 {
        self.counts.values().sum()
    }

    pub fn count(&self, kind: AnomalyKind) -> u64 {
        self.counts.get(&kind).copied().unwrap_or(0)
    }
}

/// Everything the replay found.
#[derive(Clone, Debug, Serialize)]
pub struct Analysis {
    pub name: String,
    pub arch: crate::Arch,
    pub grouping: crate::Grouping,
    /// Alloc and free events replayed.
    pub events: u64,
    pub lines: u64,
    pub allocs: u64,
    pub frees: u64,
    pub bytes_allocated: u64,
    pub bytes_freed: u64,
    /// Frees of the null pointer (legal, not tracked).
    pub null_frees: u64,
    /// Live blocks dropped because a new allocation overlapped them.
    pub evicted_blocks: u64,
    pub has_frames: bool,
    pub frame_markers: u64,
    pub first_frame: u64,
    pub last_frame: u64,
    pub last_time: Option<u64>,
    /// Live at the end (= leaked).
    pub live_bytes: u64,
    pub live_blocks: u64,
    pub peak: Peak,
    pub temporary_span: Span,
    pub temporary: u64,
    pub temporary_bytes: u64,
    pub sites: Vec<Site>,
    pub histogram: Histogram,
    pub anomalies: Anomalies,
    pub churn: Churn,
    /// Every row, when kept.
    pub timeline: Vec<TimelineRow>,
    pub snapshot: Option<Snapshot>,
    /// The live set at the end, sorted by address.
    pub end: Vec<LiveBlock>,
}

impl Analysis {
    /// Sites sorted by a key, largest first, ties by site index.
    pub fn sites_by<F: Fn(&SiteStats) -> u64>(&self, key: F) -> Vec<usize> {
        let mut v: Vec<usize> = (0..self.sites.len()).collect();
        v.sort_by(|&a, &b| {
            key(&self.sites[b].stats)
                .cmp(&key(&self.sites[a].stats))
                .then(a.cmp(&b))
        });
        v
    }

    /// The time unit lifetimes are shown in.
    pub fn time_unit(&self) -> &'static str {
        if self.has_frames {
            "frames"
        } else {
            "events"
        }
    }
}
