//! The replay: events in log order against the live set.
//!
//! Memory grows with the live set (plus one entry per distinct freed
//! address, for double-free detection, and one per call site), never with
//! the length of the log — except the per-frame timeline when
//! [`ReplayOptions::keep_timeline`] asks for it.

use std::collections::{BTreeMap, HashMap};

use retroprof_profile::Frame;

use crate::event::{EventKind, HeapEvent};
use crate::live::{Block, FastMap, FreedCache, LiveSet};
pub use crate::model::{
    Analysis, Anomalies, Anomaly, AnomalyKind, At, Churn, ExactSize, Histogram, LiveBlock, Peak,
    Site, SiteStats, SizeBucket, Snapshot, Span, TimelineRow,
};
use crate::symbolize::Symbolizer;

/// Timeline rows kept (issue 21: `--window 1` on a 10-million-event log
/// took 946 MB and wrote 2.8 GB of JSON). Rows past this are counted in
/// [`Churn::rows`] but not kept: `timeline.len() < churn.rows` tells a
/// caller the timeline was cut, so it can say so.
pub const MAX_TIMELINE_ROWS: usize = 1_000_000;

/// Bytes of a log line quoted in an anomaly (a longer one is cut and its
/// length given).
pub const MAX_QUOTED: usize = 160;

/// Events per timeline row when the log has no frame markers and no
/// `--window` is given.
pub const DEFAULT_WINDOW: u64 = 10_000;

#[derive(Clone, Debug)]
pub struct ReplayOptions {
    /// Freed within this span = temporary. `None`: within the same frame
    /// when the log has frame markers, else within 1 event (freed before
    /// any other event happened).
    pub temporary: Option<Span>,
    /// Timeline rows of this many events; `None`: one row per frame (or
    /// [`DEFAULT_WINDOW`] events while no frame marker has been seen).
    pub window: Option<u64>,
    /// Allocator housekeeping bytes per block (SGDK: 2).
    pub header: u64,
    /// Allocator alignment of header + payload (SGDK: 2).
    pub align: u64,
    /// Larger requests are anomalies (absurd size) and are not tracked.
    pub max_size: u64,
    /// Snapshot the live set here.
    pub at: Option<At>,
    /// Keep every timeline row (for CSV/JSON); otherwise only summaries.
    pub keep_timeline: bool,
    /// Anomalies listed per kind (all are counted).
    pub max_listed: usize,
    /// Address width in bits (32: an allocation must end below 2^32).
    pub address_bits: u32,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            temporary: None,
            window: None,
            header: 0,
            align: 1,
            max_size: 256 << 20,
            at: None,
            keep_timeline: false,
            max_listed: 100,
            address_bits: 32,
        }
    }
}

/// Replays events. Feed it with [`Replay::push`] (library users, e.g. an
/// emulator bridge) or [`Replay::feed`] (with the log line for anomaly
/// listings), then call [`Replay::finish`].
pub struct Replay {
    opts: ReplayOptions,
    symbolizer: Symbolizer,
    name: String,
    live: LiveSet,
    freed: FreedCache,
    /// Pointers of allocations rejected as absurd (their frees are quiet).
    rejected: FastMap<u64, ()>,
    stack_sites: FastMap<u64, u32>,
    long_stack_sites: HashMap<Vec<u64>, u32>,
    site_keys: HashMap<Vec<Frame>, u32>,
    sites: Vec<Site>,
    // global counters
    events: u64,
    lines: u64,
    allocs: u64,
    frees: u64,
    bytes_allocated: u64,
    bytes_freed: u64,
    null_frees: u64,
    evicted: u64,
    live_bytes: u64,
    live_blocks: u64,
    live_header: u64,
    live_waste: u64,
    frame: u64,
    has_frames: bool,
    frame_markers: u64,
    first_frame: Option<u64>,
    time: Option<u64>,
    peak: Peak,
    peak_dirty: bool,
    touched: Vec<u32>,
    touched_flag: Vec<bool>,
    // histogram
    buckets: [SizeBucket; 65],
    exact_small: Vec<u64>,
    exact: FastMap<u64, u64>,
    // timeline
    row: TimelineRow,
    row_open: bool,
    churn: Churn,
    timeline: Vec<TimelineRow>,
    // anomalies
    anomaly_counts: [u64; AnomalyKind::ALL.len()],
    anomaly_listed: [usize; AnomalyKind::ALL.len()],
    anomalies: Vec<Anomaly>,
    snapshot: Option<Snapshot>,
}

/// Sizes below this are counted in an array, larger ones in a map.
const EXACT_SMALL: usize = 4096;

fn align_up(v: u64, align: u64) -> u64 {
    if align <= 1 {
        v
    } else {
        v.div_ceil(align).saturating_mul(align)
    }
}

impl Replay {
    pub fn new(opts: ReplayOptions, symbolizer: Symbolizer) -> Self {
        let buckets = std::array::from_fn(|k| {
            let (lo, hi) = if k == 0 {
                (0, 0)
            } else if k == 64 {
                (1u64 << 63, u64::MAX)
            } else {
                (1u64 << (k - 1), (1u64 << k) - 1)
            };
            SizeBucket {
                lo,
                hi,
                ..SizeBucket::default()
            }
        });
        let mut opts = opts;
        opts.align = opts.align.max(1);
        Replay {
            opts,
            symbolizer,
            name: String::new(),
            live: LiveSet::default(),
            freed: FreedCache::new(),
            rejected: FastMap::default(),
            stack_sites: FastMap::default(),
            long_stack_sites: HashMap::new(),
            site_keys: HashMap::new(),
            sites: Vec::new(),
            events: 0,
            lines: 0,
            allocs: 0,
            frees: 0,
            bytes_allocated: 0,
            bytes_freed: 0,
            null_frees: 0,
            evicted: 0,
            live_bytes: 0,
            live_blocks: 0,
            live_header: 0,
            live_waste: 0,
            frame: 0,
            has_frames: false,
            frame_markers: 0,
            first_frame: None,
            time: None,
            peak: Peak::default(),
            peak_dirty: false,
            touched: Vec::new(),
            touched_flag: Vec::new(),
            buckets,
            exact_small: vec![0; EXACT_SMALL],
            exact: FastMap::default(),
            row: TimelineRow {
                first_event: 1,
                ..TimelineRow::default()
            },
            row_open: false,
            churn: Churn::default(),
            timeline: Vec::new(),
            anomaly_counts: [0; AnomalyKind::ALL.len()],
            anomaly_listed: [0; AnomalyKind::ALL.len()],
            anomalies: Vec::new(),
            snapshot: None,
        }
    }

    /// Names the log in the results.
    pub fn set_name(&mut self, name: &str) {
        self.name = name.to_string();
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn symbolizer_mut(&mut self) -> &mut Symbolizer {
        &mut self.symbolizer
    }

    pub fn symbolizer(&self) -> &Symbolizer {
        &self.symbolizer
    }

    /// The live set now, sorted by address (e.g. for a picture of the
    /// current state from an emulator bridge).
    pub fn live_now(&self) -> Vec<LiveBlock> {
        self.live
            .iter()
            .map(|(ptr, b)| LiveBlock {
                ptr,
                size: b.size,
                site: b.site,
                event: b.event,
                frame: b.frame,
                line: b.line,
                array: b.array,
            })
            .collect()
    }

    /// Alloc/free events replayed so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    pub fn live_bytes(&self) -> u64 {
        self.live_bytes
    }

    pub fn live_blocks(&self) -> u64 {
        self.live_blocks
    }

    /// Feeds an event without a log line (anomalies quote the event in the
    /// generic format and give the event number as the line).
    pub fn push(&mut self, ev: &HeapEvent) {
        let n = self.lines + 1;
        self.feed(ev, n, "");
    }

    /// Records a line that could not be parsed.
    pub fn malformed(&mut self, line: u64, text: &str, detail: String) {
        self.lines = self.lines.max(line);
        self.anomaly_raw(AnomalyKind::Malformed, line, text, detail);
    }

    /// Counts a line that carried no event (blank, comment, header).
    pub fn skip_line(&mut self, line: u64) {
        self.lines = self.lines.max(line);
    }

    fn anomaly_raw(&mut self, kind: AnomalyKind, line: u64, text: &str, detail: String) {
        let i = kind.index();
        self.anomaly_counts[i] += 1;
        if self.anomaly_listed[i] < self.opts.max_listed {
            self.anomaly_listed[i] += 1;
            // At most a short prefix of a bad line is echoed.
            let text = if text.len() > MAX_QUOTED {
                let mut end = MAX_QUOTED;
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                format!("{}… ({} bytes)", &text[..end], text.len())
            } else {
                text.to_string()
            };
            self.anomalies.push(Anomaly {
                kind,
                line,
                text,
                detail,
            });
        }
    }

    fn anomaly(
        &mut self,
        kind: AnomalyKind,
        ev: &HeapEvent,
        line: u64,
        text: &[u8],
        detail: String,
    ) {
        if text.is_empty() {
            let t = ev.to_line();
            self.anomaly_raw(kind, line, &t, detail);
        } else {
            let t = String::from_utf8_lossy(text);
            self.anomaly_raw(kind, line, &t, detail);
        }
    }

    /// Feeds one event read from log line `line` (`text` is that line, for
    /// anomaly listings).
    pub fn feed(&mut self, ev: &HeapEvent, line: u64, text: &str) {
        self.feed_bytes(ev, line, text.as_bytes());
    }

    /// [`Replay::feed`] with the line as raw bytes (decoded, lossily, only
    /// when an anomaly quotes it).
    pub fn feed_bytes(&mut self, ev: &HeapEvent, line: u64, text: &[u8]) {
        self.lines = self.lines.max(line);
        if let Some(t) = ev.time {
            match self.time {
                Some(prev) if t < prev => self.anomaly(
                    AnomalyKind::TimeBackwards,
                    ev,
                    line,
                    text,
                    format!("time {t} is before the previous time {prev}"),
                ),
                _ => {
                    self.time = Some(t);
                    if self.row.time.is_none() {
                        self.row.time = Some(t);
                    }
                }
            }
        }
        match ev.kind {
            EventKind::Frame(n) => {
                self.frame_markers += 1;
                self.frame_to(n, ev, line, text);
            }
            EventKind::Alloc { size, ptr, caller } => {
                if let Some(f) = ev.frame {
                    self.frame_to(f, ev, line, text);
                }
                self.window_check();
                self.events += 1;
                self.alloc(size, ptr, caller, ev, line, text);
                self.after_event();
            }
            EventKind::Free { ptr, caller } => {
                if let Some(f) = ev.frame {
                    self.frame_to(f, ev, line, text);
                }
                self.window_check();
                self.events += 1;
                self.free(ptr, caller, ev, line, text);
                self.after_event();
            }
        }
    }

    fn frame_to(&mut self, n: u64, ev: &HeapEvent, line: u64, text: &[u8]) {
        if !self.has_frames {
            self.has_frames = true;
            self.first_frame = Some(n);
            // Rows so far were windows of events before the first marker.
            if self.opts.window.is_none() && self.row_open {
                self.close_row();
            }
            self.frame = n;
            self.row.frame = n;
            return;
        }
        if n < self.frame {
            self.anomaly(
                AnomalyKind::FrameBackwards,
                ev,
                line,
                text,
                format!("frame {n} after frame {}", self.frame),
            );
            return;
        }
        if n == self.frame {
            return;
        }
        if let Some(At::Frame(f)) = self.opts.at {
            if self.snapshot.is_none() && self.frame <= f && f < n {
                self.take_snapshot(false);
            }
        }
        if self.opts.window.is_none() {
            self.close_row();
            self.row.frame = n;
        }
        self.frame = n;
    }

    fn window_check(&mut self) {
        let w = match self.opts.window {
            Some(w) => w.max(1),
            None if !self.has_frames => DEFAULT_WINDOW,
            None => return,
        };
        if self.row.events >= w {
            self.close_row();
        }
    }

    fn close_row(&mut self) {
        let mut row = std::mem::take(&mut self.row);
        row.live_bytes = self.live_bytes;
        row.live_blocks = self.live_blocks;
        row.max_live_bytes = row.max_live_bytes.max(self.live_bytes);
        self.row = TimelineRow {
            frame: self.frame,
            first_event: self.events + 1,
            max_live_bytes: self.live_bytes,
            ..TimelineRow::default()
        };
        self.row_open = false;
        // Only per-frame rows may be empty (a frame without events).
        if row.events == 0 && (self.opts.window.is_some() || !self.has_frames) {
            return;
        }
        self.churn.rows += 1;
        self.churn.allocs = self.churn.allocs.saturating_add(row.allocs);
        self.churn.bytes_allocated = self
            .churn
            .bytes_allocated
            .saturating_add(row.bytes_allocated);
        if row.allocs > 0 {
            self.churn.rows_with_allocs += 1;
        }
        let key = |r: &TimelineRow| (r.allocs + r.frees, r.bytes_allocated + r.bytes_freed);
        let busiest = &mut self.churn.busiest;
        let k = key(&row);
        if row.events > 0 && (busiest.len() < 5 || k > key(busiest.last().unwrap())) {
            let pos = busiest
                .iter()
                .position(|b| key(b) < k)
                .unwrap_or(busiest.len());
            busiest.insert(pos, row.clone());
            busiest.truncate(5);
        }
        if self.opts.keep_timeline && self.timeline.len() < MAX_TIMELINE_ROWS {
            self.timeline.push(row);
        }
    }

    fn after_event(&mut self) {
        self.row_open = true;
        self.row.events += 1;
        if self.live_bytes > self.row.max_live_bytes {
            self.row.max_live_bytes = self.live_bytes;
        }
        if let Some(At::Event(n)) = self.opts.at {
            if self.snapshot.is_none() && self.events == n {
                self.take_snapshot(false);
            }
        }
    }

    fn take_snapshot(&mut self, ended: bool) {
        let blocks = self.live_now();
        self.snapshot = Some(Snapshot {
            at: self.opts.at,
            event: self.events,
            frame: self.frame,
            line: self.lines,
            live_bytes: self.live_bytes,
            live_blocks: self.live_blocks,
            blocks,
            log_ended_first: ended,
        });
    }

    fn site_for(&mut self, caller: u64, stack: &[u64]) -> u32 {
        if stack.is_empty() {
            if let Some(&s) = self.stack_sites.get(&caller) {
                return s;
            }
        } else {
            let mut key = Vec::with_capacity(stack.len() + 1);
            key.push(caller);
            key.extend_from_slice(stack);
            if let Some(&s) = self.long_stack_sites.get(&key) {
                return s;
            }
        }
        let mut full = Vec::with_capacity(stack.len() + 1);
        full.push(caller);
        full.extend_from_slice(stack);
        let frames = self.symbolizer.site_frames(&full);
        let next = self.sites.len() as u32;
        let id = *self.site_keys.entry(frames.clone()).or_insert(next);
        if id == next {
            self.sites.push(Site {
                frames,
                addrs: Vec::new(),
                callers: Vec::new(),
                stats: SiteStats {
                    min_size: u64::MAX,
                    ..SiteStats::default()
                },
            });
            self.touched_flag.push(false);
        }
        let addrs = &mut self.sites[id as usize].addrs;
        if addrs.len() < 8 && !addrs.contains(&caller) {
            addrs.push(caller);
        }
        if stack.is_empty() {
            self.stack_sites.insert(caller, id);
        } else {
            self.long_stack_sites.insert(full, id);
        }
        id
    }

    /// Before live bytes go down from a peak, copy the sites changed since
    /// the last copy into their "at peak" figures.
    #[inline]
    fn settle_peak(&mut self) {
        if self.peak_dirty {
            self.peak_dirty = false;
            for &s in &self.touched {
                let st = &mut self.sites[s as usize].stats;
                st.at_peak_bytes = st.leaked_bytes;
                st.at_peak_blocks = st.leaked_blocks;
                self.touched_flag[s as usize] = false;
            }
            self.touched.clear();
        }
    }

    #[inline]
    fn touch(&mut self, site: u32) {
        if !self.touched_flag[site as usize] {
            self.touched_flag[site as usize] = true;
            self.touched.push(site);
        }
    }

    fn cost(&self, size: u64) -> (u64, u64) {
        let h = self.opts.header;
        let total = align_up(size.saturating_add(h), self.opts.align);
        (h, total - size - h)
    }

    fn alloc(&mut self, size: u64, ptr: u64, caller: u64, ev: &HeapEvent, line: u64, text: &[u8]) {
        if ptr == 0 {
            self.anomaly(
                AnomalyKind::NullAlloc,
                ev,
                line,
                text,
                format!("the allocation of {size} bytes returned null"),
            );
            return;
        }
        let limit = if self.opts.address_bits >= 64 {
            u64::MAX
        } else {
            1u64 << self.opts.address_bits
        };
        let end = ptr.checked_add(size.max(1));
        if size > self.opts.max_size || end.is_none_or(|e| e > limit) {
            let detail = if size > self.opts.max_size {
                format!(
                    "{size} bytes is above the limit of {} bytes",
                    self.opts.max_size
                )
            } else {
                format!(
                    "{size} bytes at 0x{ptr:x} run past the end of the {}-bit address space",
                    self.opts.address_bits
                )
            };
            self.anomaly(AnomalyKind::AbsurdSize, ev, line, text, detail);
            self.rejected.insert(ptr, ());
            return;
        }
        if size == 0 {
            self.anomaly(
                AnomalyKind::ZeroSize,
                ev,
                line,
                text,
                "an allocation of 0 bytes".to_string(),
            );
        }
        let extent = size.max(1);
        // Overlap with live blocks: the one before (if it reaches ptr) and
        // any starting inside [ptr, ptr + extent).
        let mut overlapped: Vec<u64> = Vec::new();
        // One descent: the last block starting before our end. If it starts
        // inside us, or reaches into us, there is an overlap (rare): then
        // collect every overlapped block.
        if let Some((p, b)) = self.live.before(ptr + extent, false) {
            if p >= ptr || p + b.size.max(1) > ptr {
                if let Some((p, b)) = self.live.before(ptr, true) {
                    if p + b.size.max(1) > ptr {
                        overlapped.push(p);
                    }
                }
                self.live
                    .starting_in(ptr.saturating_add(1), ptr + extent, &mut overlapped);
            }
        }
        if !overlapped.is_empty() {
            self.settle_peak();
            for p in overlapped {
                let b = self.live.remove(p).expect("overlapped block is live");
                self.anomaly(
                    AnomalyKind::Overlap,
                    ev,
                    line,
                    text,
                    format!(
                        "overlaps the live block 0x{p:08x} ({} bytes, allocated at line {}); \
                         that block is dropped (its free was not logged?)",
                        b.size, b.line
                    ),
                );
                self.evicted += 1;
                self.unlink(&b);
            }
        }
        let site = self.site_for(caller, &ev.stack);
        let (header, waste) = self.cost(size);
        let new_live = self.live_bytes + size;
        if self.peak_dirty && new_live <= self.peak.bytes {
            self.settle_peak();
        }
        self.live.insert(
            ptr,
            Block {
                size,
                site,
                event: self.events,
                frame: self.frame,
                line,
                array: ev.array,
            },
        );
        // A tomb for ptr may stay: the next free of ptr overwrites it.
        self.live_bytes = new_live;
        self.live_blocks += 1;
        self.live_header += header;
        self.live_waste = self.live_waste.saturating_add(waste);
        self.allocs += 1;
        self.bytes_allocated = self.bytes_allocated.saturating_add(size);
        {
            let st = &mut self.sites[site as usize].stats;
            st.allocs += 1;
            st.bytes = st.bytes.saturating_add(size);
            st.leaked_bytes = st.leaked_bytes.saturating_add(size);
            st.leaked_blocks += 1;
            st.peak_bytes = st.peak_bytes.max(st.leaked_bytes);
            st.peak_blocks = st.peak_blocks.max(st.leaked_blocks);
            st.min_size = st.min_size.min(size);
            st.max_size = st.max_size.max(size);
        }
        self.touch(site);
        if new_live > self.peak.bytes || (self.peak.bytes == 0 && self.peak.event == 0) {
            self.peak.bytes = new_live;
            self.peak.blocks = self.live_blocks;
            self.peak.event = self.events;
            self.peak.frame = self.frame;
            self.peak.line = line;
            self.peak.time = self.time;
            self.peak.header_bytes = self.live_header;
            self.peak.align_waste = self.live_waste;
            self.peak_dirty = true;
        }
        if self.live_blocks > self.peak.max_blocks {
            self.peak.max_blocks = self.live_blocks;
            self.peak.max_blocks_event = self.events;
        }
        // histogram
        let k = if size == 0 {
            0
        } else {
            64 - size.leading_zeros() as usize
        };
        let b = &mut self.buckets[k];
        b.allocs += 1;
        b.bytes = b.bytes.saturating_add(size);
        b.header_bytes += header;
        b.align_waste = b.align_waste.saturating_add(waste);
        if (size as usize) < EXACT_SMALL {
            self.exact_small[size as usize] += 1;
        } else {
            *self.exact.entry(size).or_insert(0) += 1;
        }
        // timeline
        self.row.allocs += 1;
        self.row.bytes_allocated = self.row.bytes_allocated.saturating_add(size);
    }

    /// Removes a block's contribution to the live figures.
    fn unlink(&mut self, b: &Block) {
        let (header, waste) = self.cost(b.size);
        self.live_bytes -= b.size;
        self.live_blocks -= 1;
        self.live_header -= header;
        self.live_waste -= waste;
        let st = &mut self.sites[b.site as usize].stats;
        st.leaked_bytes -= b.size;
        st.leaked_blocks -= 1;
        self.touch(b.site);
    }

    fn free(&mut self, ptr: u64, _caller: u64, ev: &HeapEvent, line: u64, text: &[u8]) {
        if ptr == 0 {
            self.null_frees += 1;
            return;
        }
        let Some(b) = self.live.remove(ptr) else {
            if self.rejected.remove(&ptr).is_some() {
                // Its allocation was already reported as absurd.
                return;
            }
            match self.freed.get(ptr) {
                Some(at) => {
                    self.anomaly(
                        AnomalyKind::DoubleFree,
                        ev,
                        line,
                        text,
                        format!("0x{ptr:08x} was already freed at line {at}"),
                    );
                }
                None => {
                    let inside = self
                        .live
                        .before(ptr, false)
                        .filter(|(p, b)| p + b.size > ptr)
                        .map(|(p, b)| (p, b.size));
                    let detail = match inside {
                        Some((p, s)) => format!(
                            "0x{ptr:08x} points inside the live block 0x{p:08x} ({s} bytes), not at its start"
                        ),
                        None => format!(
                            "0x{ptr:08x} was never allocated (allocated outside the tracker?)"
                        ),
                    };
                    self.anomaly(AnomalyKind::UnknownFree, ev, line, text, detail);
                }
            }
            return;
        };
        if b.array != ev.array {
            let (a, f) = if b.array {
                ("new[]", "delete")
            } else {
                ("new", "delete[]")
            };
            self.anomaly(
                AnomalyKind::KindMismatch,
                ev,
                line,
                text,
                format!(
                    "0x{ptr:08x} was allocated with {a} (line {}) and freed with {f}",
                    b.line
                ),
            );
        }
        self.settle_peak();
        self.unlink(&b);
        self.freed.insert(ptr, line);
        self.frees += 1;
        self.bytes_freed = self.bytes_freed.saturating_add(b.size);
        // Saturating: a log can hold any frame numbers (issue 21 campaign:
        // `frame 18446744073709551615` overflowed the lifetime sums).
        let life_ev = self.events.saturating_sub(b.event);
        let life_fr = self.frame.saturating_sub(b.frame);
        let (te, tf) = match self.opts.temporary {
            Some(Span::Events(n)) => (n, None),
            Some(Span::Frames(n)) => (0, Some(n)),
            None => (1, Some(0)),
        };
        let st = &mut self.sites[b.site as usize].stats;
        st.frees += 1;
        st.freed_bytes = st.freed_bytes.saturating_add(b.size);
        st.lifetime_events = st.lifetime_events.saturating_add(life_ev);
        st.lifetime_frames = st.lifetime_frames.saturating_add(life_fr);
        if life_ev <= te {
            st.temp_ev.0 += 1;
            st.temp_ev.1 = st.temp_ev.1.saturating_add(b.size);
        }
        if let Some(tf) = tf {
            if life_fr <= tf {
                st.temp_fr.0 += 1;
                st.temp_fr.1 = st.temp_fr.1.saturating_add(b.size);
            }
        }
        self.row.frees += 1;
        self.row.bytes_freed = self.row.bytes_freed.saturating_add(b.size);
    }

    /// Ends the replay.
    pub fn finish(mut self) -> Analysis {
        self.settle_peak();
        // A peak that was never reached again keeps its settled figures;
        // sites untouched since keep theirs too.
        if self.snapshot.is_none() {
            if let Some(at) = self.opts.at {
                let ended = match at {
                    At::Event(n) => self.events < n,
                    At::Frame(f) => self.frame < f || !self.has_frames,
                };
                self.take_snapshot(ended);
            }
        }
        if self.row_open || self.row.events > 0 || (self.has_frames && self.opts.window.is_none()) {
            self.close_row();
        }
        self.churn.unit = match self.opts.window {
            Some(w) => format!("window of {w} events"),
            None if self.has_frames => "frame".to_string(),
            None => format!("window of {DEFAULT_WINDOW} events"),
        };
        let span = self.opts.temporary.unwrap_or(if self.has_frames {
            Span::Frames(0)
        } else {
            Span::Events(1)
        });
        let use_frames = matches!(span, Span::Frames(_));
        let (mut temporary, mut temporary_bytes) = (0, 0);
        let has_symbols = self.symbolizer.has_symbols();
        for s in &mut self.sites {
            s.callers = if !has_symbols {
                Vec::new()
            } else {
                s.addrs
                    .iter()
                    .map(|&ra| {
                        let frames = self.symbolizer.frames_for(ra);
                        let parts: Vec<String> = frames
                            .iter()
                            .map(crate::symbolize::describe_frame)
                            .collect();
                        format!("0x{ra:08x}: {}", parts.join(" <- "))
                    })
                    .collect()
            };
            let st = &mut s.stats;
            let (n, b) = if use_frames { st.temp_fr } else { st.temp_ev };
            st.temporary = n;
            st.temporary_bytes = b;
            temporary += n;
            temporary_bytes += b;
            if st.min_size == u64::MAX {
                st.min_size = 0;
            }
        }
        let buckets: Vec<SizeBucket> = self
            .buckets
            .iter()
            .filter(|b| b.allocs > 0)
            .cloned()
            .collect();
        let small = self
            .exact_small
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(size, &n)| (size as u64, n));
        let distinct_sizes = small.clone().count() as u64 + self.exact.len() as u64;
        let mut top: Vec<ExactSize> = small
            .chain(self.exact.iter().map(|(&s, &n)| (s, n)))
            .map(|(size, allocs)| ExactSize {
                size,
                allocs,
                bytes: size.saturating_mul(allocs),
            })
            .collect();
        top.sort_by(|a, b| b.allocs.cmp(&a.allocs).then(a.size.cmp(&b.size)));
        top.truncate(10);
        let histogram = Histogram {
            header: self.opts.header,
            align: self.opts.align,
            header_bytes: buckets.iter().map(|b| b.header_bytes).sum(),
            align_waste: buckets.iter().map(|b| b.align_waste).sum(),
            buckets,
            top_sizes: top,
            distinct_sizes,
        };
        let mut counts = BTreeMap::new();
        for k in AnomalyKind::ALL {
            let c = self.anomaly_counts[k.index()];
            if c > 0 {
                counts.insert(k, c);
            }
        }
        let mut listed = std::mem::take(&mut self.anomalies);
        listed.sort_by(|a, b| a.line.cmp(&b.line).then(a.kind.cmp(&b.kind)));
        let end: Vec<LiveBlock> = self.live_now();
        Analysis {
            name: self.name,
            arch: self.symbolizer.arch,
            grouping: self.symbolizer.grouping,
            events: self.events,
            lines: self.lines,
            allocs: self.allocs,
            frees: self.frees,
            bytes_allocated: self.bytes_allocated,
            bytes_freed: self.bytes_freed,
            null_frees: self.null_frees,
            evicted_blocks: self.evicted,
            has_frames: self.has_frames,
            frame_markers: self.frame_markers,
            first_frame: self.first_frame.unwrap_or(0),
            last_frame: self.frame,
            last_time: self.time,
            live_bytes: self.live_bytes,
            live_blocks: self.live_blocks,
            peak: self.peak,
            temporary_span: span,
            temporary,
            temporary_bytes,
            sites: self.sites,
            histogram,
            anomalies: Anomalies { counts, listed },
            churn: self.churn,
            timeline: self.timeline,
            snapshot: self.snapshot,
            end,
        }
    }
}
