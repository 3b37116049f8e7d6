//! Heap tracking inside an emulated SGDK game: `retroprof profile ROM --heap [FILE]`.
//!
//! [`HeapBridge`] is an [`MdObserver`] that hooks SGDK's `MEM_alloc` and
//! `MEM_free` with breakpoints (so code that does not allocate pays only the
//! one-bit breakpoint test per instruction), turns what it sees into
//! [`retroprof_heap::HeapEvent`]s with frame numbers, master-clock times and
//! real call sites (the return address pushed by the `JSR`/`BSR`), feeds them
//! to `retroprof-heap`'s [`Replay`] (the very analysis of `retroprof heap`),
//! and can write them as a log in the heap crate's generic line format
//! (`FORMAT.md` of `crates/heap`), which `retroprof heap FILE` reads back.
//!
//! # Hooks (../shared/docs/sgdk.md, "Heap")
//! - `MEM_alloc` entry: `0(SP)` = return address, `4(SP)` = the size as a
//!   32-bit slot, so the u16 size is at `6(SP)`.
//! - `MEM_alloc` return: the pointer is in `d0`. Instead of a breakpoint at
//!   each caller's return address (which would have to be learnt while the
//!   system runs), the bridge breaks on every `RTS` inside `MEM_alloc`
//!   (found by scanning the function's words for `0x4E75` once; a match
//!   that is an extension word is never executed, so it costs nothing). At
//!   that `RTS`, `SP` is back to its value at entry and `d0` holds the
//!   result; the pending call is matched by `SP`, so nested calls (an
//!   interrupt handler allocating while the game is inside `MEM_alloc`) and
//!   recursion pair up correctly. A pending call that is never matched (its
//!   stack frame was abandoned) is counted and reported.
//! - `d0 == 0`: the allocation failed; counted, and logged as an allocation
//!   at pointer 0, which `retroprof heap` reports as an out-of-memory
//!   anomaly (and does not track).
//! - `MEM_free` entry: the pointer at `4(SP)`, the return address at
//!   `0(SP)`. SGDK does not mark `MEM_free` `NO_INLINE`: when the build has
//!   no `MEM_free` symbol (LTO inlined it), frees cannot be seen and the
//!   report says so; it also says so when frees exist but the live set never
//!   shrank.
//!
//! # API for the CLI (`crates/cli/src/cmd/profile.rs`)
//! ```ignore
//! let index = symbols.build_index(&retroprof_mdprof::romsyms::index_options(rom.size() as u64))?;
//! let mut heap = HeapBridge::new(rom.data(), &index, HeapBridgeOptions {
//!     name: rom_name.into(),
//!     keep_log: args.heap_file.is_some(),
//!     ..Default::default()
//! })?;
//! // Merge its breakpoints with any others and give them to the system:
//! let mut bp = heap.breakpoints().clone();
//! system.set_breakpoints(Some(bp));
//! // Run with the profiler and the bridge side by side: `(profiler, &mut heap)`
//! // (MdObserver is implemented for pairs and for Option<T>).
//! for _ in 0..frames { system.run_frame(&mut (&mut profiler, &mut heap))?; }
//! let out = heap.finish();
//! if let Some(path) = &args.heap_file { out.write_log(path)?; }
//! print!("{}", out.report(&TerminalOptions { color, top: 10, anomalies: 20 }));
//! ```
//! The `Analysis` in [`HeapOutcome::analysis`] is the same structure
//! `retroprof heap` reports from, so its JSON/PNG/pprof writers
//! (`retroprof_heap::output`, `retroprof_heap::memmap`) work on it too.

use std::io::Write;
use std::path::Path;

use retroprof_heap::report::TerminalOptions;
use retroprof_heap::{
    Analysis, AnomalyKind, Arch, Grouping, HeapEvent, Replay, ReplayOptions, Symbolizer,
};
use retroprof_megadrive::{MdObserver, PcSet, SystemView};
use retroprof_profile::Frame;
use retroprof_symbols::{FunctionIndex, FunctionOrigin};

/// The 68000 `RTS` opcode (M68000 PRM: 0x4E75).
const RTS: u16 = 0x4E75;

/// Calls to `MEM_alloc` in flight kept at most (a deeper stack means
/// abandoned frames; the oldest are dropped and counted).
const MAX_PENDING: usize = 64;

/// Errors building a [`HeapBridge`].
#[derive(Debug, thiserror::Error)]
pub enum HeapBridgeError {
    #[error("--heap: the symbols have no MEM_alloc function, so allocations cannot be hooked (is this an SGDK build, with its symbol.txt or rom.out?)")]
    NoMemAlloc,
    #[error("--heap: MEM_alloc at 0x{start:06x}..0x{end:06x} contains no RTS instruction inside the ROM; the symbols do not seem to match the ROM")]
    NoReturn { start: u64, end: u64 },
    #[error("--heap: cannot write {path}: {source}")]
    Write {
        path: String,
        #[source]
        source: retroprof_profile::Error,
    },
}

/// Options for [`HeapBridge::new`].
#[derive(Clone, Debug)]
pub struct HeapBridgeOptions {
    /// Name of the run in the report (the ROM's file name).
    pub name: String,
    /// Keep the event log in memory for [`HeapOutcome::write_log`].
    pub keep_log: bool,
    /// Replay options (defaults: SGDK's 2-byte block header and 2-byte
    /// alignment, 16-bit sizes).
    pub replay: ReplayOptions,
}

impl Default for HeapBridgeOptions {
    fn default() -> Self {
        HeapBridgeOptions {
            name: "rom".into(),
            keep_log: false,
            replay: ReplayOptions {
                // sgdk.md: u16 header per block, sizes even.
                header: 2,
                align: 2,
                // MEM_alloc takes a u16.
                max_size: 0xFFFF,
                address_bits: 24,
                ..ReplayOptions::default()
            },
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Pending {
    sp: u32,
    ret: u32,
    size: u16,
}

/// Figures of the bridge itself (what it hooked and saw).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BridgeStats {
    pub mem_alloc: u32,
    /// `RTS` addresses inside `MEM_alloc` used as return hooks.
    pub alloc_returns: Vec<u32>,
    pub mem_free: Option<u32>,
    /// `MEM_alloc` calls that returned a pointer.
    pub allocs: u64,
    /// `MEM_alloc` calls that returned NULL.
    pub failed: u64,
    /// `MEM_free` calls (including `MEM_free(NULL)`).
    pub frees: u64,
    /// `MEM_free(NULL)` calls.
    pub null_frees: u64,
    /// Calls whose return was never seen (stack frame abandoned).
    pub abandoned: u64,
    /// Deepest nesting of `MEM_alloc` calls seen.
    pub max_nesting: usize,
    /// Frames run while the bridge was attached.
    pub frames: u64,
}

/// The heap observer (see the module documentation).
pub struct HeapBridge {
    alloc_entry: u32,
    alloc_returns: Vec<u32>,
    free_entry: Option<u32>,
    breakpoints: PcSet,
    pending: Vec<Pending>,
    replay: Replay,
    log: Option<Vec<u8>>,
    frame: u64,
    frames_seen: u64,
    stats: BridgeStats,
    /// Largest live byte count seen, and whether it ever went down.
    shrank: bool,
}

/// Function-name resolver built from the PC index (local labels merged,
/// as the profiler names functions).
struct IndexResolver {
    funcs: Vec<(u64, u64, String)>,
}

impl retroprof_heap::Resolve for IndexResolver {
    fn resolve(&self, addr: u64) -> Vec<Frame> {
        let a = addr & 0xFF_FFFF;
        let i = self.funcs.partition_point(|f| f.0 <= a);
        match i.checked_sub(1).map(|i| &self.funcs[i]) {
            Some((start, end, name)) if a < *end => vec![Frame {
                name: name.clone(),
                addr: Some(*start),
                ..Frame::default()
            }],
            _ => Vec::new(),
        }
    }
}

impl HeapBridge {
    /// Hook `MEM_alloc` / `MEM_free` of the ROM `rom` (its bytes, for
    /// finding `MEM_alloc`'s `RTS` instructions) described by `index`.
    pub fn new(
        rom: &[u8],
        index: &FunctionIndex,
        opts: HeapBridgeOptions,
    ) -> Result<HeapBridge, HeapBridgeError> {
        let find = |name: &str| {
            index
                .find(name)
                .map(|id| index.function(id))
                .filter(|f| matches!(f.origin, FunctionOrigin::Symbol | FunctionOrigin::Label))
        };
        let alloc = find("MEM_alloc").ok_or(HeapBridgeError::NoMemAlloc)?;
        let mut alloc_returns = Vec::new();
        let mut a = alloc.start & !1;
        while a + 1 < alloc.end && (a as usize) + 1 < rom.len() {
            let w = u16::from_be_bytes([rom[a as usize], rom[a as usize + 1]]);
            if w == RTS {
                alloc_returns.push(a as u32);
            }
            a += 2;
        }
        if alloc_returns.is_empty() {
            return Err(HeapBridgeError::NoReturn {
                start: alloc.start,
                end: alloc.end,
            });
        }
        let free_entry = find("MEM_free").map(|f| f.start as u32);
        let mut breakpoints = PcSet::new();
        breakpoints.insert(alloc.start as u32);
        for &r in &alloc_returns {
            breakpoints.insert(r);
        }
        if let Some(f) = free_entry {
            breakpoints.insert(f);
        }
        let funcs = index
            .functions()
            .iter()
            .filter(|f| matches!(f.origin, FunctionOrigin::Symbol | FunctionOrigin::Label))
            .map(|f| (f.start, f.end, f.name.clone()))
            .collect::<Vec<_>>();
        let mut funcs = funcs;
        funcs.sort();
        let symbolizer = Symbolizer::new(
            Arch::M68k,
            Grouping::Function,
            Some(Box::new(IndexResolver { funcs })),
        );
        let mut replay = Replay::new(opts.replay, symbolizer);
        replay.set_name(&opts.name);
        let log = if opts.keep_log {
            let mut v = Vec::with_capacity(1 << 16);
            let _ = writeln!(v, "retroprof-heap 1 arch=m68k");
            let _ = writeln!(
                v,
                "# retroprof profile --heap: {} (MEM_alloc at 0x{:06x}, MEM_free {}); time in master clocks",
                opts.name,
                alloc.start,
                match free_entry {
                    Some(f) => format!("at 0x{f:06x}"),
                    None => "not in the symbols".into(),
                }
            );
            Some(v)
        } else {
            None
        };
        let stats = BridgeStats {
            mem_alloc: alloc.start as u32,
            alloc_returns: alloc_returns.clone(),
            mem_free: free_entry,
            ..Default::default()
        };
        Ok(HeapBridge {
            alloc_entry: alloc.start as u32,
            alloc_returns,
            free_entry,
            breakpoints,
            pending: Vec::with_capacity(MAX_PENDING),
            replay,
            log,
            frame: 0,
            frames_seen: 0,
            stats,
            shrank: false,
        })
    }

    /// The addresses the bridge needs as breakpoints
    /// ([`retroprof_megadrive::System::set_breakpoints`]); merge them with
    /// any others the run needs.
    pub fn breakpoints(&self) -> &PcSet {
        &self.breakpoints
    }

    /// Insert the bridge's breakpoints into `set`.
    pub fn add_breakpoints(&self, set: &mut PcSet) {
        set.insert(self.alloc_entry);
        for &r in &self.alloc_returns {
            set.insert(r);
        }
        if let Some(f) = self.free_entry {
            set.insert(f);
        }
    }

    /// Whether the build has a `MEM_free` symbol (frees can be seen).
    pub fn sees_frees(&self) -> bool {
        self.free_entry.is_some()
    }

    fn emit(&mut self, ev: HeapEvent) {
        if let Some(log) = &mut self.log {
            log.extend_from_slice(ev.to_line().as_bytes());
            log.push(b'\n');
        }
        let before = self.replay.live_bytes();
        self.replay.push(&ev);
        if self.replay.live_bytes() < before {
            self.shrank = true;
        }
    }

    fn on_alloc_entry(&mut self, view: &SystemView) {
        let sp = view.sp();
        let ret = view.read_long(sp) & 0xFF_FFFF;
        let size = view.read_word(sp.wrapping_add(6));
        if self.pending.len() == MAX_PENDING {
            self.pending.remove(0);
            self.stats.abandoned += 1;
        }
        self.pending.push(Pending { sp, ret, size });
        self.stats.max_nesting = self.stats.max_nesting.max(self.pending.len());
    }

    fn on_alloc_return(&mut self, view: &SystemView) {
        let sp = view.sp();
        let Some(i) = self.pending.iter().rposition(|p| p.sp == sp) else {
            return;
        };
        // Calls above it never returned through an RTS of MEM_alloc.
        self.stats.abandoned += (self.pending.len() - i - 1) as u64;
        let p = self.pending[i];
        self.pending.truncate(i);
        let ptr = view.regs.d[0] & 0xFF_FFFF;
        let (frame, time) = (self.frame, view.mclk());
        if view.regs.d[0] == 0 {
            // Logged as an allocation at NULL: the replay reports it as
            // an out-of-memory anomaly and tracks nothing.
            self.stats.failed += 1;
        } else {
            self.stats.allocs += 1;
        }
        self.emit(
            HeapEvent::alloc(p.size as u64, ptr as u64, p.ret as u64)
                .at_frame(frame)
                .at_time(time),
        );
    }

    fn on_free(&mut self, view: &SystemView) {
        let sp = view.sp();
        let caller = view.read_long(sp) & 0xFF_FFFF;
        let ptr = view.read_long(sp.wrapping_add(4));
        self.stats.frees += 1;
        if ptr == 0 {
            self.stats.null_frees += 1;
        }
        let (frame, time) = (self.frame, view.mclk());
        self.emit(
            HeapEvent::free((ptr & 0xFF_FFFF) as u64, caller as u64)
                .at_frame(frame)
                .at_time(time),
        );
    }

    /// Events replayed so far (allocations and frees).
    pub fn events(&self) -> u64 {
        self.replay.events()
    }

    /// Stop: the analysis, the log, and notes for the user.
    pub fn finish(mut self) -> HeapOutcome {
        self.stats.abandoned += self.pending.len() as u64;
        self.stats.frames = self.frames_seen;
        let mut notes = Vec::new();
        let s = &self.stats;
        if s.mem_free.is_none() {
            notes.push(
                "this build has no MEM_free symbol (inlined by LTO): frees cannot be seen, \
                 so every block allocated looks live at the end and \"leaks\" below are not real leaks"
                    .to_string(),
            );
        } else if s.allocs > 0 && !self.shrank {
            notes.push(format!(
                "the live set never shrank: {} MEM_free call(s) seen, none of them freed a live block \
                 (frees may be inlined into their callers by LTO, or the game never frees)",
                s.frees
            ));
        }
        if s.allocs == 0 && s.failed == 0 {
            notes.push(format!(
                "no MEM_alloc call in {} frame(s): the game allocated nothing while profiled",
                s.frames
            ));
        }
        if s.failed > 0 {
            notes.push(format!(
                "{} MEM_alloc call(s) returned NULL (out of memory): see the anomalies",
                s.failed
            ));
        }
        if s.abandoned > 0 {
            notes.push(format!(
                "{} MEM_alloc call(s) never returned through MEM_alloc's RTS (stack frame abandoned, \
                 or the run ended inside it): their pointers are unknown",
                s.abandoned
            ));
        }
        if s.max_nesting > 1 {
            notes.push(format!(
                "MEM_alloc calls nested up to {} deep (an interrupt handler allocating inside MEM_alloc)",
                s.max_nesting
            ));
        }
        let analysis = self.replay.finish();
        let overlaps = analysis.anomalies.count(AnomalyKind::Overlap);
        if overlaps > 0 && self.stats.mem_free.is_some() {
            notes.push(format!(
                "{overlaps} allocation(s) reused memory of a block whose free was not seen: \
                 some frees do not go through the MEM_free function (SGDK does not mark it \
                 NO_INLINE; LTO inlines it into some callers), so part of the \"leaks\" are not real"
            ));
        }
        HeapOutcome {
            analysis,
            log: self.log,
            notes,
            stats: self.stats,
        }
    }
}

impl MdObserver for HeapBridge {
    #[inline]
    fn frame_start(&mut self, frame: u64, view: &SystemView) {
        self.frame = frame;
        self.frames_seen += 1;
        let ev = HeapEvent::frame(frame).at_time(view.mclk());
        if let Some(log) = &mut self.log {
            log.extend_from_slice(ev.to_line().as_bytes());
            log.push(b'\n');
        }
        self.replay.push(&ev);
    }

    fn at_pc(&mut self, pc: u32, view: &SystemView) {
        if pc == self.alloc_entry {
            self.on_alloc_entry(view);
        } else if Some(pc) == self.free_entry {
            self.on_free(view);
        } else if self.alloc_returns.contains(&pc) {
            self.on_alloc_return(view);
        }
    }
}

/// What [`HeapBridge::finish`] returns.
pub struct HeapOutcome {
    /// `retroprof heap`'s analysis of the events.
    pub analysis: Analysis,
    /// The log in the generic format (when `keep_log` was set).
    pub log: Option<Vec<u8>>,
    /// Things the user must know (no `MEM_free`, failures, ...).
    pub notes: Vec<String>,
    pub stats: BridgeStats,
}

impl HeapOutcome {
    /// The terminal report: the bridge's notes, then `retroprof heap`'s
    /// report.
    pub fn report(&self, opts: &TerminalOptions) -> String {
        let mut s = String::new();
        s.push_str("Heap (MEM_alloc / MEM_free hooked in the emulator)\n");
        s.push_str(&format!(
            "  MEM_alloc at 0x{:06x} ({} return hook(s)), MEM_free {}\n",
            self.stats.mem_alloc,
            self.stats.alloc_returns.len(),
            match self.stats.mem_free {
                Some(f) => format!("at 0x{f:06x}"),
                None => "NOT FOUND".into(),
            }
        ));
        s.push_str(&format!(
            "  {} allocations, {} failed, {} frees ({} of NULL) in {} frames\n",
            self.stats.allocs,
            self.stats.failed,
            self.stats.frees,
            self.stats.null_frees,
            self.stats.frames
        ));
        for n in &self.notes {
            s.push_str("  note: ");
            s.push_str(n);
            s.push('\n');
        }
        s.push_str(&retroprof_heap::report::terminal(&self.analysis, opts));
        s
    }

    /// Write the event log (generic format) to `path` whole or not at all,
    /// replacing an existing file (the user named it). Writes only the
    /// header when the bridge did not keep a log.
    pub fn write_log(&self, path: &Path) -> Result<(), HeapBridgeError> {
        let data: &[u8] = self
            .log
            .as_deref()
            .unwrap_or(b"retroprof-heap 1 arch=m68k\n");
        retroprof_profile::write::atomic(path, true, |w| {
            w.write_all(data)
                .map_err(|source| retroprof_profile::Error::Io {
                    path: path.display().to_string(),
                    source,
                })
        })
        .map_err(|source| HeapBridgeError::Write {
            path: path.display().to_string(),
            source,
        })
    }
}
