//! The profiling engine: [`Profiler`], an [`MdObserver`].
//!
//! # Attribution (the hot path)
//! Before the run, [`Attribution::build`] turns the symbols' dense
//! [`FunctionIndex`] into one `u32` per 2-byte address of ROM and of work
//! RAM: an *attribution id* for each distinct (function, DWARF inline chain)
//! pair, so code the compiler inlined is charged to the inlined function
//! (shown "inlined in" its physical function). Per instruction the profiler
//! looks up one cell of the per-address table ([`crate::pccost`], which
//! holds a copy of the ids beside each address's master clocks), adds the
//! cost there, compares the cell's id with the running function's and adds
//! the cost into one running sum (charged to the function and its
//! call-tree node when the function changes, at a call, return or
//! exception, and at the frame's end): no search, no hashing, no
//! allocation, no bounds check that is not also the ROM test. The cost
//! parts (DMA freeze, FIFO wait, refresh, Z80 stall) are four more adds on
//! the instructions that have some.
//!
//! Every instruction's full cost (`InstrCost::total`: its bus cycles, wait
//! states, the DMA freeze, FIFO waits and the refresh penalty) goes to the
//! function at its PC. **Interrupt (and other exception) entry processing is
//! charged to the handler** the vector points at (e.g. SGDK's `_VINT`), so a
//! VBlank interrupt taken while the game waits counts as busy time of the
//! handler, not as idle time of the wait. With
//! [`crate::EntryCharge::Interrupted`] (`--entry interrupted`) entry goes to
//! the function of the last instruction that ran instead, as a
//! before-each-instruction hook (the reference harness's) charges it; only
//! the entry processing moves, the handler's instructions stay its own.
//!
//! # Idle time, loops and dropped frames
//! Idle = cycles of instructions inside an idle function (default
//! `VDP_waitVBlank` and `VDP_waitVSync`, whichever exist), plus time in
//! STOP. Busy = everything else, including interrupt handlers.
//!
//! A game loop **starts** when execution, at interrupt level 0 (not inside
//! an exception handler), moves from an idle function to code outside the
//! idle functions, except while a call made from inside the idle function
//! is in progress (SGDK's wait calls a load-recording helper before it
//! spins). Interrupts never start or end the wait: an interrupt taken
//! during the wait, or right at its edge (after the wait's `rts`, before
//! the game's next instruction), runs at level 1+ and is ignored; the loop
//! starts at the first game instruction after the `rte`. This is the
//! reference harness's rule (shared/reference/README.md) made exact with the
//! core's call/return/exception events instead of return-address guesses.
//! A frame is **dropped** when no game loop started during it. Frames
//! before the first loop ever started (boot) are marked dropped in their
//! records but are not counted in the summary's dropped frames.
//!
//! # Frames
//! Frame boundaries are the system's: a frame starts at the first VBlank
//! line (224 in V28) and ends after the last active line. An instruction
//! that straddles the boundary is split: the part past the boundary is
//! charged to the next frame.
//!
//! # Call stacks (inclusive time, flame graphs)
//! A shadow call stack is fed by the core's call (JSR/BSR), return
//! (RTS/RTR/RTE) and exception events. Each exception pushes a marker, so
//! each interrupt level has its own part of the stack; RTE (recognised by
//! its opcode, 0x4E73, in ROM) pops down to the marker. RTS/RTR pop every
//! frame whose return slot lies at or below the new stack pointer, and a
//! call first drops frames whose slot lies at or below its own push: code
//! that pops return addresses, `jmp`s out of functions or switches stacks
//! resynchronises at the next call or return. A call to a local label of
//! the same function (with labels merged) pushes nothing. The stack is
//! capped at [`MAX_STACK`] frames (deeper calls are charged to the deepest
//! frame). Time is aggregated per distinct stack in a call tree, never per
//! instruction sample.

use std::collections::BTreeMap;

use retroprof_megadrive::render::Renderer;
use retroprof_megadrive::ExceptionKind;
use retroprof_megadrive::{
    Clock, DmaEvent, DmaKind, FrameInfo, InstrCost, MdObserver, SystemView, VdpPort,
};
use retroprof_symbols::{FunctionIndex, FunctionOrigin};

use crate::stack::ShadowStack;

/// Deepest shadow stack kept.
pub const MAX_STACK: usize = 256;

/// First address of work RAM as the 68000 sees it (mirrored from 0xE00000;
/// code runs at 0xFF0000).
const RAM_BASE: u32 = 0xFF_0000;

/// What an attribution id stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttrInfo {
    /// Display name (`f`, or `g (inlined in f)`).
    pub name: String,
    /// Physical function id in the [`FunctionIndex`].
    pub function: u32,
    /// Start address of the physical function.
    pub addr: u32,
    pub file: Option<String>,
    pub line: Option<u32>,
    /// The physical function's name when this is inlined code.
    pub inlined_into: Option<String>,
    /// Inline chain names, outermost first.
    pub inline_chain: Vec<String>,
    pub origin: FunctionOrigin,
    pub idle: bool,
}

/// The dense PC -> attribution id tables and what each id means.
#[derive(Clone, Debug)]
pub struct Attribution {
    /// One id per 2 bytes of ROM (`0..rom_len`).
    rom: Vec<u32>,
    rom_len: u32,
    /// One id per 2 bytes of work RAM (0xFF0000..0x1000000).
    ram: Vec<u32>,
    pub attrs: Vec<AttrInfo>,
    /// `idle[id]`.
    idle: Vec<bool>,
    /// ROM bytes, to recognise RTE by its opcode.
    rom_bytes: Vec<u8>,
}

/// The index's function-id and inline-context slices for the `n`
/// addresses `start`, `start + 2`, ..., when one range answers all of them
/// with consecutive entries: what [`FunctionIndex::lookup`] and
/// [`FunctionIndex::inline_at`] give there (they take the first range
/// holding an address, so no earlier range may touch the span; the
/// inline slice may be shorter, even empty: missing entries are 0). `None`
/// otherwise (then ask address by address).
fn index_slices(index: &FunctionIndex, start: u64, n: usize) -> Option<(&[u32], &[u32])> {
    if n == 0 || index.shift() != 1 {
        return None;
    }
    let end = start + 2 * n as u64; // exclusive
    let ranges = index.ranges();
    for (k, r) in ranges.iter().enumerate() {
        let off = start.wrapping_sub(r.base);
        if off >= r.len {
            continue;
        }
        // `r` is the first range holding `start`; it must hold the whole
        // span, and no earlier range any of it.
        if off % 2 != 0 || end - r.base > r.len {
            return None;
        }
        if ranges[..k]
            .iter()
            .any(|q| q.base < end && start < q.base.saturating_add(q.len))
        {
            return None;
        }
        let first = (off >> 1) as usize;
        let ids = r.ids.get(first..first + n)?;
        let inline = r
            .inline
            .get(first.min(r.inline.len())..(first + n).min(r.inline.len()))?;
        return Some((ids, inline));
    }
    None
}

impl Attribution {
    /// Build from the function index (DWARF inline contexts included when
    /// it has them). `idle` names physical functions (names, aliases, or
    /// their compiler clones `name.part.0`, `name.isra.1`, ...): all code in
    /// them, inlined code included, is idle. Returns the table and the idle
    /// functions found.
    pub fn build(index: &FunctionIndex, rom: &[u8], idle: &[String]) -> (Attribution, Vec<String>) {
        Self::build_with(index, rom, idle, true)
    }

    /// [`Attribution::build`] asking `index.lookup` / `index.inline_at` at
    /// every address (the reference the fast path is tested against).
    #[doc(hidden)]
    pub fn build_reference(
        index: &FunctionIndex,
        rom: &[u8],
        idle: &[String],
    ) -> (Attribution, Vec<String>) {
        Self::build_with(index, rom, idle, false)
    }

    fn build_with(
        index: &FunctionIndex,
        rom: &[u8],
        idle: &[String],
        fast: bool,
    ) -> (Attribution, Vec<String>) {
        let funcs = index.functions();
        let mut idle_fn = vec![false; funcs.len()];
        let mut found = Vec::new();
        for (i, f) in funcs.iter().enumerate() {
            if f.origin != FunctionOrigin::Symbol {
                continue;
            }
            let hit = idle.iter().any(|n| {
                f.name == *n
                    || f.aliases.iter().any(|a| a == n)
                    || retroprof_symbols::clone_base_name(&f.name) == n
            });
            if hit {
                idle_fn[i] = true;
                found.push(f.name.clone());
            }
        }
        found.sort();
        found.dedup();
        let mut map: BTreeMap<(u32, u32), u32> = BTreeMap::new();
        let mut attrs: Vec<AttrInfo> = Vec::new();
        let mut idle_v = Vec::new();
        // Id 0 = the index's function 0 ([unknown]).
        let mut get =
            |fid: u32, ctx: u32, attrs: &mut Vec<AttrInfo>, idle_v: &mut Vec<bool>| -> u32 {
                *map.entry((fid, ctx)).or_insert_with(|| {
                    let f = index.function(fid);
                    let chain = index.inline_chain(ctx);
                    let (name, inlined_into, names) = if chain.is_empty() {
                        (f.name.clone(), None, Vec::new())
                    } else {
                        let leaf = &chain[chain.len() - 1].name;
                        (
                            format!("{leaf} (inlined in {})", f.name),
                            Some(f.name.clone()),
                            chain.iter().map(|c| c.name.clone()).collect(),
                        )
                    };
                    attrs.push(AttrInfo {
                        name,
                        function: fid,
                        addr: f.start as u32,
                        file: f.file.clone(),
                        line: f.line,
                        inlined_into,
                        inline_chain: names,
                        origin: f.origin,
                        idle: idle_fn[fid as usize],
                    });
                    idle_v.push(idle_fn[fid as usize]);
                    (attrs.len() - 1) as u32
                })
            };
        get(0, 0, &mut attrs, &mut idle_v);
        // Neighbouring addresses mostly share their (function, inline
        // context): the last pair's id answers them without the map (the
        // ids are the map's either way).
        let mut last: Option<((u32, u32), u32)> = None;
        let mut id_of =
            |key: (u32, u32), attrs: &mut Vec<AttrInfo>, idle_v: &mut Vec<bool>| match last {
                Some((k, id)) if k == key => id,
                _ => {
                    let id = get(key.0, key.1, attrs, idle_v);
                    last = Some((key, id));
                    id
                }
            };
        // One table: the ids of `n` addresses `start`, `start + 2`, ... in
        // ascending order (the order the map hands out ids in).
        let mut fill = |start: u64, n: usize, attrs: &mut Vec<AttrInfo>, idle_v: &mut Vec<bool>| {
            let mut tab = Vec::with_capacity(n);
            match fast.then(|| index_slices(index, start, n)).flatten() {
                Some((ids, inline)) => {
                    // A run of one key takes its id from the run's first
                    // address (what `id_of` would give again: its map).
                    let mut run: Option<((u32, u32), u32)> = None;
                    for (i, &fid) in ids.iter().enumerate() {
                        let key = (fid, inline.get(i).copied().unwrap_or(0));
                        let id = match run {
                            Some((k, id)) if k == key => id,
                            _ => {
                                let id = id_of(key, attrs, idle_v);
                                run = Some((key, id));
                                id
                            }
                        };
                        tab.push(id);
                    }
                }
                None => {
                    for i in 0..n as u64 {
                        let a = start + 2 * i;
                        let key = (index.lookup(a), index.inline_at(a));
                        tab.push(id_of(key, attrs, idle_v));
                    }
                }
            }
            tab
        };
        let rom_len = rom.len().min(0x40_0000) as u32;
        let rom_tab = fill(0, rom_len.div_ceil(2) as usize, &mut attrs, &mut idle_v);
        let ram_tab = fill(RAM_BASE as u64, 0x8000, &mut attrs, &mut idle_v);
        (
            Attribution {
                rom: rom_tab,
                rom_len,
                ram: ram_tab,
                attrs,
                idle: idle_v,
                rom_bytes: rom[..rom_len as usize].to_vec(),
            },
            found,
        )
    }

    /// Attribution id of the instruction at `pc`. An address is in ROM
    /// when its 2-byte unit starts there (`pc >> 1` below the ROM's
    /// 2-byte units: for an odd-sized ROM, its last byte's odd address
    /// too).
    #[inline(always)]
    pub fn id(&self, pc: u32) -> u32 {
        let pc = pc & 0xFF_FFFF;
        if let Some(&id) = self.rom.get((pc >> 1) as usize) {
            id
        } else if pc >= RAM_BASE {
            self.ram[((pc - RAM_BASE) >> 1) as usize]
        } else {
            0
        }
    }

    /// [`Attribution::id`] and the [`crate::pccost`] slot of `pc` with one
    /// range test (the per-instruction path).
    #[inline(always)]
    pub fn id_slot(&self, pc: u32) -> (u32, usize) {
        let pc = pc & 0xFF_FFFF;
        let i = (pc >> 1) as usize;
        if let Some(&id) = self.rom.get(i) {
            (id, i)
        } else if pc >= RAM_BASE {
            let i = ((pc - RAM_BASE) >> 1) as usize;
            (self.ram[i], self.rom.len() + i)
        } else {
            (0, self.rom.len() + self.ram.len())
        }
    }

    pub fn len(&self) -> usize {
        self.attrs.len()
    }

    /// Bytes of ROM the table covers (at most 4 MiB).
    pub fn rom_len(&self) -> u32 {
        self.rom_len
    }

    pub fn is_empty(&self) -> bool {
        self.attrs.is_empty()
    }

    #[inline]
    pub fn is_idle(&self, id: u32) -> bool {
        self.idle[id as usize]
    }

    /// Is the instruction at `pc` an RTE (ROM code only)?
    fn is_rte(&self, pc: u32) -> bool {
        crate::stack::is_rte(&self.rom_bytes, pc)
    }
}

/// Every colour of the VDP's palette memory is black (CRAM words are
/// `0000 BBB0 GGG0 RRR0`, Sega Genesis Software Manual, "Color RAM"): the
/// picture, backdrop included, can only be black.
fn cram_black(view: &SystemView) -> bool {
    view.vdp.snapshot().cram.iter().all(|&c| c & 0x0EEE == 0)
}

/// The picture the VDP's state draws is black on every 4th active line
/// (rendered from the registers and memories as they are now, at the
/// frame's end: megadrive's `Renderer::render_line`).
fn picture_black(r: &mut Renderer, view: &SystemView) -> bool {
    let v = view.vdp.snapshot();
    let h = Renderer::active_height(v.regs);
    let mut line = [0u32; 320];
    r.reset_line_state();
    (0..h).step_by(4).all(|y| {
        r.render_line(&v, y as u16, &mut line);
        line.iter().all(|&p| p & 0xFF_FFFF == 0)
    })
}

/// A node of the call tree: a distinct stack (path from the root).
#[derive(Clone, Copy, Debug)]
struct Node {
    parent: u32,
    attr: u32,
    first_child: u32,
    next_sibling: u32,
}

const NONE: u32 = u32::MAX;

/// Call-tree nodes found by [`Profiler::child`], direct-mapped by a hash of
/// (parent, attr); `NONE` or a stale node is a miss.
#[derive(Clone, Debug)]
struct ChildCache(Box<[u32; CHILD_CACHE]>);

/// Entries of [`ChildCache`] (a power of two).
const CHILD_CACHE: usize = 1 << 12;

impl ChildCache {
    fn new() -> Self {
        ChildCache(Box::new([NONE; CHILD_CACHE]))
    }

    #[inline]
    fn slot(parent: u32, attr: u32) -> usize {
        // Fibonacci hashing of the pair (multiplicative, top bits).
        let k = (parent as u64) << 32 | attr as u64;
        (k.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - CHILD_CACHE.trailing_zeros())) as usize
    }
}

/// A stack change requested by a call/ret event, applied after the
/// instruction's cost is charged (the event comes first).
#[derive(Clone, Copy, Debug)]
enum Pending {
    None,
    Call {
        target: u32,
        sp: u32,
        from: u32,
    },
    Ret {
        from: u32,
        target: u32,
        sp: u32,
    },
    /// A KDebug marker waits for its instruction's start time.
    KDebug,
}

/// Per-frame accumulators (reset at each frame end).
#[derive(Clone, Debug, Default)]
pub(crate) struct FrameAcc {
    pub loop_starts: u32,
    pub idle_enter_line: Option<u16>,
    pub loop_start_line: Option<u16>,
    pub dma_vblank: u64,
    pub dma_active: u64,
    pub dma_fill_copy: u64,
    pub dma_last_line: Option<u16>,
    pub freeze_mclk: u64,
    pub fifo_mclk: u64,
    pub refresh_mclk: u64,
    pub z80_stall_mclk: u64,
    pub interrupts: u32,
    /// Display enable (VDP register 1 bit 6) as the frame's events left it
    /// (set from the VDP at the frame's start, followed through register
    /// writes).
    pub display_now: bool,
    /// The display was enabled at some time during the frame's active
    /// lines (see [`crate::gameplay`]).
    pub display_shown: bool,
    /// The game marked this frame as loading ([`Profiler::mark_loading`]).
    pub loading_marked: bool,
    /// Every CRAM colour was black at the frame's start.
    pub black_at_start: bool,
    /// ... and at its end, or (a dropped frame) its picture at its end is
    /// black (see [`crate::gameplay`]).
    pub black: bool,
}

/// One finished frame, as the engine measured it (master clocks).
#[derive(Clone, Debug)]
pub(crate) struct RawFrame {
    pub frame: u64,
    pub busy_mclk: u64,
    pub idle_mclk: u64,
    pub frame_mclk: u64,
    pub acc: FrameAcc,
    pub instructions: u64,
    /// (attr, mclk) of the busiest non-idle attrs, sorted.
    pub top: Vec<(u32, u64)>,
    pub watch: Vec<u32>,
}

/// The profiler: implements [`MdObserver`]; call [`Profiler::frame_done`]
/// after each `System::run_frame` (the driver, [`crate::Session::run`], does).
pub struct Profiler {
    pub(crate) attr: Attribution,
    /// Master clocks per attribution id, whole run, up to the last
    /// [`Profiler::flush_acc`].
    pub(crate) mclk: Vec<u64>,
    /// Attribution ids whose `mclk` changed since the last frame's end,
    /// and the flag of each id for that list.
    touched: Vec<u32>,
    touched_flag: Vec<bool>,
    /// Scratch of [`Profiler::frame_done_at`]: the frame's busy ids and
    /// their time, before the busiest are kept (reused: no growing from
    /// empty every frame).
    top_scratch: Vec<(u32, u64)>,
    snap: Vec<u64>,
    /// Master clocks per attribution id over the counted frames.
    pub(crate) counted: Vec<u64>,
    pub(crate) calls: Vec<u64>,
    calls_base: Vec<u64>,
    // Call tree.
    nodes: Vec<Node>,
    child_cache: ChildCache,
    pub(crate) node_mclk: Vec<u64>,
    node_base: Vec<u64>,
    /// Shadow call stack; each entry's data is its call-tree node.
    stack: ShadowStack<u32>,
    cur_attr: u32,
    /// The attribution id an instruction takes the hot path with:
    /// `cur_attr` when nothing is pending, `NONE` (no instruction's id)
    /// while a call, return or KDebug marker waits for the instruction's
    /// report, so that one compare per instruction tests both (see
    /// [`Profiler::sync_hot`]).
    hot_attr: u32,
    /// Attribution id of the last instruction executed, unless
    /// `ahead_from` says otherwise (read it with [`Profiler::last_attr`]).
    last_attr: u32,
    /// A switch made ahead of its instruction ([`Profiler::switch_ahead_to`]):
    /// while no instruction has run since (`acc` is still 0: every
    /// instruction adds its time to it, and a flush of a non-zero `acc`
    /// clears this), the last instruction executed was `ahead_from`'s,
    /// not `last_attr`'s. `NONE`: no such switch.
    ahead_from: u32,
    /// Tests only: no switch ahead into a child of the top frame's node
    /// (the way before it, for the both-ways test).
    #[cfg(test)]
    no_child_ahead: bool,
    /// An exception came between a call or return event and its
    /// instruction's report: the next instruction is not at its target.
    pending_faulted: bool,
    /// Charge exception entry to the interrupted code
    /// ([`crate::EntryCharge::Interrupted`]).
    entry_to_interrupted: bool,
    cur_leaf: u32,
    acc: u64,
    pending: Pending,
    exc_depth: u32,
    // Loop detection.
    in_wait: bool,
    idle_calls: u32,
    /// Detect the game's wait-for-VBlank polling loop and make it the idle
    /// function ([`Profiler::detect_wait_loop`]).
    detect_wait: bool,
    /// Head addresses of the wait loops detected, in order.
    pub(crate) wait_loops: Vec<u32>,
    /// Polling loops seen that do not wait for VBlank.
    wait_rejected: Vec<u32>,
    /// Draws dropped frames' pictures for the gameplay rule (made on first
    /// use).
    renderer: Option<Box<Renderer>>,
    pub(crate) first_loop_frame: Option<u64>,
    // Frames (the frame in progress is the console's: `Clock::frame`).
    pub(crate) from: u64,
    fa: FrameAcc,
    top_n: usize,
    cpu_start: Option<u64>,
    last_instructions: u64,
    pub(crate) frames: Vec<RawFrame>,
    watches: Vec<(u32, u8)>,
    pub(crate) total_instructions: u64,
    /// The game's KDebug markers ([`crate::kdebug`]).
    pub(crate) kdebug: crate::kdebug::KDebug,
    /// Costs per instruction address (`crate::pccost`).
    pub(crate) pcs: crate::pccost::PcCosts,
}

impl Profiler {
    /// `from`: first counted frame; `top_n`: functions kept per frame;
    /// `watches`: (24-bit address, size 1/2/4) read at each frame's end.
    /// Where exception entry processing is charged (default: the handler).
    pub fn set_entry_charge(&mut self, e: crate::EntryCharge) {
        self.entry_to_interrupted = e == crate::EntryCharge::Interrupted;
    }

    pub fn new(attr: Attribution, from: u64, top_n: usize, watches: Vec<(u32, u8)>) -> Self {
        let n = attr.len();
        let root = Node {
            parent: NONE,
            attr: NONE,
            first_child: NONE,
            next_sibling: NONE,
        };
        let pcs = crate::pccost::PcCosts::new(&attr);
        Profiler {
            pcs,
            attr,
            mclk: vec![0; n],
            touched: Vec::with_capacity(n),
            touched_flag: vec![false; n],
            top_scratch: Vec::new(),
            snap: vec![0; n],
            counted: vec![0; n],
            calls: vec![0; n],
            calls_base: vec![0; n],
            nodes: vec![root],
            child_cache: ChildCache::new(),
            node_mclk: vec![0],
            node_base: Vec::new(),
            stack: ShadowStack::new(MAX_STACK),
            cur_attr: NONE,
            hot_attr: NONE,
            last_attr: 0,
            ahead_from: NONE,
            #[cfg(test)]
            no_child_ahead: false,
            pending_faulted: false,
            entry_to_interrupted: false,
            cur_leaf: 0,
            acc: 0,
            pending: Pending::None,
            exc_depth: 0,
            in_wait: false,
            idle_calls: 0,
            detect_wait: false,
            wait_loops: Vec::new(),
            wait_rejected: Vec::new(),
            renderer: None,
            first_loop_frame: None,
            from,
            fa: FrameAcc::default(),
            top_n,
            cpu_start: None,
            last_instructions: 0,
            frames: Vec::new(),
            watches,
            total_instructions: 0,
            kdebug: crate::kdebug::KDebug::new(),
        }
    }

    pub fn attribution(&self) -> &Attribution {
        &self.attr
    }

    /// Child of `parent` for `attr`, created on first use. A node with
    /// many children (a game's main loop calls hundreds of functions and,
    /// with `--keep-labels`, jumps between as many labels) made the walk
    /// of its sibling list the profiler's largest cost: the last node found
    /// for each (parent, attr) hash is remembered in [`ChildCache`], which
    /// answers most lookups with one compare (the walk is the fallback, so
    /// the tree is the same either way).
    /// The cache's hit is inlined into the (cold) callers: as a call of
    /// its own its register saves and restores were most of its cost.
    #[inline(always)]
    fn child(&mut self, parent: u32, attr: u32) -> u32 {
        let slot = ChildCache::slot(parent, attr);
        let hit = self.child_cache.0[slot];
        if let Some(n) = self.nodes.get(hit as usize) {
            if n.parent == parent && n.attr == attr {
                return hit;
            }
        }
        self.child_miss(parent, attr, slot)
    }

    /// [`Profiler::child`] when the cache has it (no walk, no new node, no
    /// change to the cache).
    #[inline(always)]
    fn child_cached(&self, parent: u32, attr: u32) -> Option<u32> {
        let hit = self.child_cache.0[ChildCache::slot(parent, attr)];
        let n = self.nodes.get(hit as usize)?;
        (n.parent == parent && n.attr == attr).then_some(hit)
    }

    /// [`Profiler::child`] when the cache misses: walk, and remember.
    #[cold]
    #[inline(never)]
    fn child_miss(&mut self, parent: u32, attr: u32, slot: usize) -> u32 {
        let id = self.child_walk(parent, attr);
        self.child_cache.0[slot] = id;
        id
    }

    /// [`Profiler::child`] without the cache: walk `parent`'s children.
    fn child_walk(&mut self, parent: u32, attr: u32) -> u32 {
        let mut c = self.nodes[parent as usize].first_child;
        while c != NONE {
            let n = &self.nodes[c as usize];
            if n.attr == attr {
                return c;
            }
            c = n.next_sibling;
        }
        let id = self.nodes.len() as u32;
        let first = self.nodes[parent as usize].first_child;
        self.nodes.push(Node {
            parent,
            attr,
            first_child: NONE,
            next_sibling: first,
        });
        self.nodes[parent as usize].first_child = id;
        self.node_mclk.push(0);
        id
    }

    /// Charge `acc` (time of `cur_attr` since the last flush) to
    /// `cur_attr` and to the call-tree leaf. Every change of `cur_attr` or
    /// `cur_leaf` and every reader of `mclk` flushes first.
    #[inline]
    fn flush_acc(&mut self) {
        let acc = std::mem::take(&mut self.acc);
        self.node_mclk[self.cur_leaf as usize] += acc;
        if acc != 0 {
            // An instruction ran since any switch made ahead of it.
            self.ahead_from = NONE;
            // Time is only ever added while a function runs.
            debug_assert!(self.cur_attr != NONE);
            let a = self.cur_attr as usize;
            if let Some(m) = self.mclk.get_mut(a) {
                *m += acc;
                self.touch(a as u32);
            }
        }
    }

    /// `mclk[a]` changed this frame: [`Profiler::frame_done_at`] looks at
    /// the attribution ids touched, not at every id.
    #[inline]
    fn touch(&mut self, a: u32) {
        let f = &mut self.touched_flag[a as usize];
        if !*f {
            *f = true;
            self.touched.push(a);
        }
    }

    /// The node for code of `attr` running in the top stack frame.
    fn leaf_for(&mut self, attr: u32) -> u32 {
        let frame_node = self.stack.top().map(|f| f.data).unwrap_or(0);
        if frame_node != 0 && self.nodes[frame_node as usize].attr == attr {
            frame_node
        } else {
            self.child(frame_node, attr)
        }
    }

    /// `hot_attr` after a change of `cur_attr` or `pending`.
    #[inline(always)]
    fn sync_hot(&mut self) {
        self.hot_attr = if matches!(self.pending, Pending::None) {
            self.cur_attr
        } else {
            NONE
        };
    }

    /// An instruction of attribution id `a` whose id is not `hot_attr`
    /// (cold path): the function changed, or a call, return or KDebug
    /// marker is pending, or both. Charges `t` (the instruction's total)
    /// like the hot path, in the order the events ask for: the switch
    /// first (the instruction is the new function's), then the pending
    /// stack change (which flushes the instruction's time with the
    /// function it ran in).
    #[cold]
    #[inline(never)]
    fn instruction_cold(
        &mut self,
        a: u32,
        total: u32,
        refresh: u32,
        z80_stall: u32,
        clock: &Clock,
    ) {
        let t = total as u64;
        // The first instruction after an exception entry comes here
        // (`exception` leaves `hot_attr` at `NONE`).
        self.pcs.last_entry = false;
        if a != self.cur_attr {
            if self.cpu_start.is_none() {
                self.cpu_start = Some(clock.mclk().saturating_sub(t));
            }
            self.switch(a, clock);
        }
        self.acc += t;
        if !matches!(self.pending, Pending::None) {
            // The parts it needs as scalars: an `InstrCost` argument
            // (passed by reference to a copy) was built on the stack for
            // every instruction.
            self.apply_pending(total, refresh, z80_stall, clock);
        }
        self.sync_hot();
    }

    /// The function at the PC changed (cold path): new call-tree leaf, and
    /// the wait / loop-start state machine. Inlined into its two (cold)
    /// callers: a call of its own saved and restored five registers.
    #[inline(always)]
    fn switch(&mut self, a: u32, clock: &Clock) {
        self.flush_acc();
        self.cur_attr = a;
        // The instruction (or polling passes) being charged is `a`'s; until
        // the next switch `last_attr` stays `cur_attr`.
        self.set_last_attr(a);
        self.cur_leaf = self.leaf_for(a);
        if self.exc_depth == 0 {
            let idle = self.attr.is_idle(a);
            if idle && !self.in_wait {
                self.in_wait = true;
                self.idle_calls = 0;
                if self.fa.idle_enter_line.is_none() {
                    self.fa.idle_enter_line = Some(clock.line());
                }
            } else if !idle && self.in_wait && self.idle_calls == 0 {
                self.in_wait = false;
                self.fa.loop_starts += 1;
                if self.fa.loop_start_line.is_none() {
                    self.fa.loop_start_line = Some(clock.line());
                }
                if self.first_loop_frame.is_none() {
                    self.first_loop_frame = Some(clock.frame());
                }
            }
        }
    }

    /// Attribution id of the last instruction executed (or of the last
    /// exception entry or polling passes).
    fn last_attr(&self) -> u32 {
        if self.ahead_from != NONE && self.acc == 0 {
            self.ahead_from
        } else {
            self.last_attr
        }
    }

    #[inline]
    fn set_last_attr(&mut self, a: u32) {
        self.last_attr = a;
        self.ahead_from = NONE;
    }

    /// After a call or return (its stack change applied, `acc` flushed):
    /// make now the switch to `a` that the next instruction, the one at
    /// the event's target (of attribution id `a`), would make, when the wait
    /// / loop-start state machine would not move (its transitions read the
    /// clock at that instruction, so they stay with it: `ahead_moves`) and
    /// its call-tree leaf (`leaf_for(a)`) is known without creating a node:
    /// after a call, the callee's frame node just pushed; after a return,
    /// the top stack frame's node when that is `a`'s, else its child for
    /// `a` when the child cache has it (a return to a local label of the
    /// caller, with `--keep-labels`: `ret_ahead_child`). The next
    /// instruction then takes the hot path. Until it has run, the last
    /// instruction executed is still the call's or return's
    /// ([`Profiler::last_attr`] tells by `acc`, 0 until an instruction
    /// adds to it), and an exception taken before it finds the leaf that
    /// was (the top stack frame's node, `exception`) and switches anyway.
    /// Otherwise (or when an exception came between the event and its
    /// instruction's report, `faulted`: the next instruction is the
    /// handler's) the switch waits for the instruction (`cur_attr` is
    /// `NONE`).
    #[inline(always)]
    fn switch_ahead_to(&mut self, a: u32, leaf: u32) {
        // `acc` was just flushed: no ahead switch is pending.
        debug_assert!(self.acc == 0 && self.ahead_from == NONE);
        self.ahead_from = self.last_attr;
        self.cur_attr = a;
        self.last_attr = a;
        self.cur_leaf = leaf;
    }

    /// Whether the switch to `a` would move the wait / loop-start state
    /// machine (see `switch`).
    #[inline(always)]
    fn ahead_moves(&self, a: u32) -> bool {
        self.exc_depth == 0 && {
            let idle = self.attr.is_idle(a);
            (idle && !self.in_wait) || (!idle && self.in_wait && self.idle_calls == 0)
        }
    }

    /// A return's switch made ahead to `a` when the top stack frame's node
    /// (`top`, also `cur_leaf`) is not `a`'s: `leaf_for(a)` is then its
    /// child for `a`, taken only from the child cache (a miss would create
    /// the node or change the cache here rather than at the instruction).
    /// Out of line: calls never come here.
    #[cold]
    #[inline(never)]
    fn ret_ahead_child(&mut self, top: u32, a: u32) -> bool {
        #[cfg(test)]
        if self.no_child_ahead {
            return false;
        }
        let Some(n) = self.child_cached(top, a) else {
            return false;
        };
        self.switch_ahead_to(a, n);
        true
    }

    #[inline]
    fn apply_pending(&mut self, total: u32, refresh: u32, z80_stall: u32, clock: &Clock) {
        if self.kdebug.has_queued() {
            // The instruction that wrote began `total` before its end.
            let cost = InstrCost {
                total,
                refresh,
                z80_stall,
                ..InstrCost::default()
            };
            let start = clock.instruction_end(&cost) - total as u64;
            self.kdebug.resolve(start);
        }
        let faulted = std::mem::take(&mut self.pending_faulted);
        match std::mem::replace(&mut self.pending, Pending::None) {
            Pending::None | Pending::KDebug => {}
            Pending::Call { target, sp, from } => {
                let ta = self.attr.id(target);
                let fa = self.attr.id(from);
                let callee_start = self.attr.attrs[ta as usize].addr == (target & 0xFF_FFFF);
                if self.exc_depth == 0 && self.in_wait && self.attr.is_idle(fa) {
                    self.idle_calls += 1;
                }
                if ta == fa && !callee_start {
                    // A local label of the same function: not a call.
                    return;
                }
                self.calls[ta as usize] += 1;
                // Drop frames whose return slot is at or below this push.
                self.stack.drop_stale(sp, |_, _| {});
                if self.stack.is_full() {
                    return;
                }
                self.flush_acc();
                let node = self.child(self.cur_leaf, ta);
                self.stack.push_call(sp, node);
                self.cur_leaf = node;
                // The next instruction (the callee's) finds its frame node
                // (`node`, which is `ta`'s) and runs the wait / loop-start
                // state machine, unless that can be done now.
                if faulted || self.ahead_moves(ta) {
                    self.cur_attr = NONE;
                } else {
                    self.switch_ahead_to(ta, node);
                }
            }
            Pending::Ret { from, target, sp } => {
                self.flush_acc();
                let rte = self.attr.is_rte(from);
                self.stack.ret(rte, sp, |_, _| {});
                if rte {
                    self.exc_depth = self.exc_depth.saturating_sub(1);
                }
                // The target's function (looked up once: the idle test and
                // the switch ahead both need it).
                let a = self.attr.id(target);
                if self.exc_depth == 0 && self.attr.is_idle(a) {
                    self.idle_calls = self.idle_calls.saturating_sub(1);
                }
                // Until the next instruction refines it, time (an interrupt
                // taken at once) goes under the caller's frame.
                let top = self.stack.top().map_or(0, |f| f.data);
                self.cur_leaf = top;
                // The next instruction recomputes its leaf, unless that can
                // be done now.
                if faulted || self.ahead_moves(a) {
                    self.cur_attr = NONE;
                } else if top != 0 && self.nodes[top as usize].attr == a {
                    self.switch_ahead_to(a, top);
                } else if !self.ret_ahead_child(top, a) {
                    self.cur_attr = NONE;
                }
            }
        }
    }

    /// With no idle function (no symbols): take the game's wait-for-VBlank
    /// polling loop as the idle function once it is seen. The loop is the
    /// one the 68000 core's polling fast path recognises (m68k `poll.rs`:
    /// `MOVE <ea>,Dn; BTST #n,Dn; Bcc.s` back to the MOVE) and whose passes
    /// the bus skips, which it does only for polls of bit 3 (VBlank) of the
    /// VDP status port (megadrive `Bus68k::poll_skip`); of those, only a
    /// loop closed by BEQ (spin while the flag is 0: wait *for* VBlank) is
    /// taken, not one that waits for VBlank to end. Its three instructions
    /// become a function of their own, `vblank_wait_0xADDRESS`, that is
    /// idle from then on (up to 4 such loops).
    pub fn set_detect_wait_loop(&mut self, on: bool) {
        self.detect_wait = on;
    }

    /// The polling loop at `pcs` had passes skipped: make it the idle
    /// function when it waits for VBlank (see
    /// [`Profiler::set_detect_wait_loop`]). Cold: once per loop found.
    #[cold]
    #[inline(never)]
    fn detect_wait_loop(&mut self, pcs: &[u32; 3], clock: &Clock) {
        let head = pcs[0] & 0xFF_FFFF;
        let bcc = (pcs[2] & 0xFF_FFFF) as usize;
        if self.wait_loops.len() >= 4
            || self.wait_loops.contains(&head)
            || self.wait_rejected.contains(&head)
        {
            return;
        }
        // ROM code only; BEQ.s = 0x67xx (68000 PRM, Bcc: condition 0111 EQ).
        let rom = &self.attr.rom_bytes;
        if bcc + 1 >= rom.len() || rom[bcc] != 0x67 {
            // Not a wait for VBlank: never look at it again.
            if self.wait_rejected.len() < 64 {
                self.wait_rejected.push(head);
            }
            return;
        }
        let id = self.attr.attrs.len() as u32;
        self.attr.attrs.push(AttrInfo {
            name: format!("vblank_wait_0x{head:06x}"),
            function: 0,
            addr: head,
            file: None,
            line: None,
            inlined_into: None,
            inline_chain: Vec::new(),
            origin: FunctionOrigin::Bucket,
            idle: true,
        });
        self.attr.idle.push(true);
        for v in [
            &mut self.mclk,
            &mut self.snap,
            &mut self.counted,
            &mut self.calls,
            &mut self.calls_base,
        ] {
            v.push(0);
        }
        self.touched_flag.push(false);
        self.pcs.push_attribution();
        // The loop's code: MOVE (2-6 bytes), BTST #3 (4), Bcc.s (2).
        let end = bcc as u32 + 2;
        let mut a = head;
        while a < end && a < self.attr.rom_len {
            self.attr.rom[(a >> 1) as usize] = id;
            self.pcs.set_id(a, id);
            a += 2;
        }
        self.wait_loops.push(head);
        // From here on the loop's time is idle: enter the wait now.
        self.switch(id, clock);
        self.sync_hot();
    }

    /// Mark the current frame as one the game itself says is loading (not
    /// gameplay; [`crate::gameplay`] rule "marked"). The hook for markers
    /// a game writes, such as KDebug's: call it from the observer that
    /// decodes them, on the marker's event.
    pub fn mark_loading(&mut self) {
        self.fa.loading_marked = true;
    }

    /// End of a frame: call after `System::run_frame` returned `info`, with
    /// the system's view (for the watches) and its instruction count.
    /// `now` is the CPU's time (`System::mclk`), which may be past the
    /// frame's end by the last instruction.
    /// `last_pc` is the address of the last instruction executed
    /// (`System::last_pc`), whose cost slot an overrun is split from.
    pub fn frame_done(
        &mut self,
        info: &FrameInfo,
        view: &SystemView,
        now: u64,
        instructions: u64,
        last_pc: Option<u32>,
    ) {
        let watch = self
            .watches
            .iter()
            .map(|&(a, s)| match s {
                1 => view.read_byte(a) as u32,
                2 => view.read_word(a) as u32,
                _ => view.read_long(a),
            })
            .collect();
        // The VDP's own register is the truth: a disagreement with the
        // followed writes (a write form not decoded) counts as shown.
        if view.vdp.display_enabled() != self.fa.display_now {
            self.fa.display_shown = true;
        }
        self.fa.black = self.fa.black_at_start && cram_black(view);
        if self.fa.loop_starts == 0 && !self.fa.black {
            // A dropped frame: is its picture black? (Cold: dropped frames
            // only, every 4th line.)
            let r = self.renderer.get_or_insert_with(Default::default);
            self.fa.black = picture_black(r, view);
        }
        self.frame_done_at(info, now, watch, instructions, last_pc);
    }

    /// [`Profiler::frame_done`] with the CPU's time `now` (master clocks,
    /// may be past `info.end_mclk` by the last instruction's overrun) and
    /// the watch values already read.
    pub fn frame_done_at(
        &mut self,
        info: &FrameInfo,
        now: u64,
        watch: Vec<u32>,
        instructions: u64,
        last_pc: Option<u32>,
    ) {
        self.flush_acc();
        // Split an instruction that ran past the frame's end.
        let over = now.saturating_sub(info.end_mclk);
        let last = self.last_attr();
        let over = over.min(self.mclk[last as usize] - self.snap[last as usize]);
        self.mclk[last as usize] -= over;
        let counted = info.frame >= self.from;
        let mut busy = 0u64;
        let mut idle = 0u64;
        let mut top = std::mem::take(&mut self.top_scratch);
        top.clear();
        // Only ids touched since the last frame can have changed (the sums
        // and the sorted top are the same in any order).
        for k in 0..self.touched.len() {
            let i = self.touched[k] as usize;
            self.touched_flag[i] = false;
            let d = self.mclk[i] - self.snap[i];
            if d == 0 {
                continue;
            }
            self.snap[i] = self.mclk[i];
            if counted {
                self.counted[i] += d;
            }
            if self.attr.idle[i] {
                idle += d;
            } else {
                busy += d;
                top.push((i as u32, d));
            }
        }
        self.touched.clear();
        self.mclk[last as usize] += over;
        if over != 0 {
            // Next frame's.
            self.touch(last);
        }
        // The busiest `top_n`, busiest first (ties by id: a total order, as
        // each id is in `top` once, so picking them first and sorting only
        // those gives the same list as sorting all).
        let order = |a: &(u32, u64), b: &(u32, u64)| b.1.cmp(&a.1).then(a.0.cmp(&b.0));
        if top.len() > self.top_n {
            top.select_nth_unstable_by(self.top_n, order);
            top.truncate(self.top_n);
        }
        top.sort_unstable_by(order);
        // The frame keeps the busiest in a list of their size.
        let kept = top.to_vec();
        self.top_scratch = top;
        let top = kept;
        let start = match self.cpu_start {
            Some(s) => s.max(info.start_mclk),
            None => info.end_mclk,
        };
        let span = info.end_mclk.saturating_sub(start);
        // STOP time (no instruction ran) counts as idle.
        let stopped = span.saturating_sub(busy + idle);
        idle += stopped;
        // Enabled at the frame's end: on for its last active line.
        self.fa.display_shown |= self.fa.display_now;
        let acc = std::mem::take(&mut self.fa);
        self.frames.push(RawFrame {
            frame: info.frame,
            busy_mclk: busy,
            idle_mclk: idle,
            frame_mclk: info.end_mclk - info.start_mclk,
            acc,
            instructions: instructions - self.last_instructions,
            top,
            watch,
        });
        self.total_instructions = instructions;
        self.last_instructions = instructions;
        self.pcs.frame_end(over, last, last_pc);
        if info.frame + 1 == self.from {
            self.mark_counted_start();
            self.pcs.mark_counted_start(over, last, last_pc);
        }
    }

    /// Statistics from here on (whole-run call tree and call counts are
    /// re-based).
    fn mark_counted_start(&mut self) {
        self.flush_acc();
        self.node_base = self.node_mclk.clone();
        self.calls_base = self.calls.clone();
    }

    /// Call counts and per-node cycles over the counted frames.
    pub(crate) fn counted_tree(&mut self) -> (Vec<u64>, Vec<u64>) {
        self.flush_acc();
        let mut nodes = self.node_mclk.clone();
        for (i, b) in self.node_base.iter().enumerate() {
            nodes[i] -= b;
        }
        let calls = if self.from == 0 {
            self.calls.clone()
        } else {
            self.calls
                .iter()
                .zip(self.calls_base.iter().chain(std::iter::repeat(&0)))
                .map(|(a, b)| a - b)
                .collect()
        };
        (nodes, calls)
    }

    /// The path of attrs of call-tree node `n`, root first.
    pub(crate) fn node_path(&self, mut n: u32) -> Vec<u32> {
        let mut v = Vec::new();
        while n != 0 && n != NONE {
            let node = self.nodes[n as usize];
            v.push(node.attr);
            n = node.parent;
        }
        v.reverse();
        v
    }

    /// Distinct stacks seen so far.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }
}

impl MdObserver for Profiler {
    #[inline(always)]
    fn frame_start(&mut self, _frame: u64, view: &SystemView) {
        self.fa.display_now = view.vdp.display_enabled();
        self.fa.black_at_start = cram_black(view);
    }

    /// The hot path: one look-up of the address's cell (its attribution
    /// id and its add, [`crate::pccost`]), one compare of the id with
    /// `hot_attr`, the function running while no call, return or KDebug
    /// marker is pending (a change of function or a pending event is the
    /// cold `Profiler::instruction_cold`), one add into `acc` (the running
    /// function's time since the last switch, charged to it and to its
    /// call-tree leaf by `Profiler::flush_acc`) and the cost parts (folded
    /// away when the adapter passes zeros).
    #[inline(always)]
    fn instruction(&mut self, pc: u32, cost: InstrCost, clock: &Clock) {
        let t = cost.total as u64;
        let a = self.pcs.charge(pc, t);
        self.fa.freeze_mclk += cost.dma_freeze as u64;
        self.fa.fifo_mclk += cost.fifo_wait as u64;
        self.fa.refresh_mclk += cost.refresh as u64;
        self.fa.z80_stall_mclk += cost.z80_stall as u64;
        if a == self.hot_attr {
            self.acc += t;
        } else {
            self.instruction_cold(a, cost.total, cost.refresh, cost.z80_stall, clock);
        }
    }

    #[inline(always)]
    fn accepts_poll_passes(&mut self, pcs: &[u32; 3]) -> bool {
        // Bulk charging is what `instruction` would do pass by pass only
        // when no attribution switch and no call/return is pending.
        matches!(self.pending, Pending::None)
            && pcs.iter().all(|&pc| self.attr.id(pc) == self.cur_attr)
    }

    // Inlined into the bus's idle-poll skip (about 100 reports a frame on
    // an idling game; its arrays then stay in registers).
    #[inline]
    fn poll_passes(
        &mut self,
        pcs: &[u32; 3],
        mclk: &[u64; 3],
        refresh: &[u64; 3],
        _passes: u64,
        clock: &Clock,
    ) {
        if self.detect_wait && !self.attr.is_idle(self.cur_attr) {
            self.detect_wait_loop(pcs, clock);
        }
        // `accepts_poll_passes` checked that every PC is in `cur_attr`
        // (or the loop just became a function of its own).
        let a = self.cur_attr;
        let t: u64 = mclk.iter().sum();
        for (&pc, &m) in pcs.iter().zip(mclk) {
            self.pcs.charge(pc, m);
        }
        self.pcs.last_entry = false;
        self.set_last_attr(a);
        // Charged to `a` with the next flush.
        self.acc += t;
        self.fa.refresh_mclk += refresh.iter().sum::<u64>();
    }

    fn exception(
        &mut self,
        kind: ExceptionKind,
        _vector: u8,
        handler: u32,
        mclk: u32,
        clock: &Clock,
    ) {
        if kind == ExceptionKind::Reset {
            return;
        }
        if self.cpu_start.is_none() {
            self.cpu_start = Some(clock.mclk().saturating_sub(mclk as u64));
        }
        if matches!(kind, ExceptionKind::Interrupt(_)) {
            self.fa.interrupts += 1;
        }
        if !matches!(self.pending, Pending::None) {
            // Inside the instruction that made the call or return: the
            // next instruction is the handler's, not at the event's target.
            self.pending_faulted = true;
        }
        let h = self.attr.id(handler);
        if self.ahead_from != NONE && self.acc == 0 {
            // A switch made ahead whose instruction has not run: the leaf
            // is the one before it, the top stack frame's node
            // (`switch_ahead_to`; no stack change since).
            self.cur_leaf = self.stack.top().map_or(0, |f| f.data);
        }
        if self.entry_to_interrupted {
            // Entry time goes to the function of the last instruction that
            // ran (the previous PC, also when that was the wait's `rts`)
            // and to its call-tree leaf, before the handler's frame is
            // pushed.
            let a = self.last_attr();
            self.flush_acc();
            self.mclk[a as usize] += mclk as u64;
            self.touch(a);
            self.node_mclk[self.cur_leaf as usize] += mclk as u64;
            self.pcs.charge_entry(a, mclk as u64);
        }
        self.flush_acc();
        self.exc_depth += 1;
        self.calls[h as usize] += 1;
        if !self.stack.is_full() {
            let node = self.child(self.cur_leaf, h);
            self.stack.push_exception(node);
            self.cur_leaf = node;
        } else {
            self.cur_leaf = self.child(self.cur_leaf, h);
        }
        let to_handler = !self.entry_to_interrupted;
        self.cur_attr = h;
        self.set_last_attr(h);
        // The next instruction takes the cold path, which notes that the
        // last charge is no longer this entry's (`PcCosts::last_entry`).
        self.hot_attr = NONE;
        if to_handler {
            // `acc` is `cur_attr`'s, now `h`.
            self.pcs.charge_entry(h, mclk as u64);
            self.acc += mclk as u64;
        }
    }

    #[inline(always)]
    fn call(&mut self, from_pc: u32, target: u32, _return_addr: u32, sp: u32) {
        self.pending = Pending::Call {
            target,
            sp,
            from: from_pc,
        };
        self.hot_attr = NONE;
    }

    #[inline(always)]
    fn ret(&mut self, from_pc: u32, target: u32, sp: u32) {
        self.pending = Pending::Ret {
            from: from_pc,
            target,
            sp,
        };
        self.hot_attr = NONE;
    }

    #[inline(always)]
    fn vdp_write(&mut self, port: VdpPort, value: u16, clock: &Clock) {
        use crate::kdebug::VdpWrite;
        match self.kdebug.write(port, value, clock) {
            // A KDebug marker (registers 29-31) is timed at this
            // instruction's `instruction` event (`apply_pending`, which a
            // call/return pending beside it also runs).
            VdpWrite::Marker if matches!(self.pending, Pending::None) => {
                self.pending = Pending::KDebug;
                self.hot_attr = NONE;
            }
            // Register 1, bit 6: display enable (the gameplay rule).
            VdpWrite::Register(1, v) => {
                let on = v & 0x40 != 0;
                // It was on for part of the active lines before this write.
                if self.fa.display_now && !clock.in_vblank() {
                    self.fa.display_shown = true;
                }
                self.fa.display_now = on;
            }
            _ => {}
        }
    }

    fn dma(&mut self, e: &DmaEvent) {
        match e.kind {
            DmaKind::FromCpu(_) => {
                self.fa.dma_vblank += e.span.bytes_vblank as u64;
                self.fa.dma_active += e.span.bytes_active as u64;
                if let Some(l) = e.span.last_active_line {
                    self.fa.dma_last_line = Some(self.fa.dma_last_line.map_or(l, |m| m.max(l)));
                }
            }
            DmaKind::Fill(_) | DmaKind::Copy => self.fa.dma_fill_copy += e.bytes as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use retroprof_megadrive::timing::{m68k_to_mclk, m68k_to_mclk32, LINES_NTSC, MCLK_PER_LINE};
    use retroprof_symbols::{Symbol, SymbolKind, SymbolTable};

    fn sym(name: &str, addr: u64) -> Symbol {
        Symbol {
            name: name.into(),
            addr,
            size: None,
            kind: SymbolKind::Text,
            global: true,
            module: None,
            file: None,
            line: None,
        }
    }

    /// game 0x200, VDP_waitVBlank 0x300 (idle), helper 0x400, handler
    /// 0x500 (RTE at 0x502), .lab label 0x220 inside game.
    fn profiler() -> Profiler {
        let table = SymbolTable::new(vec![
            sym("game", 0x200),
            sym(".lab", 0x220),
            sym("VDP_waitVBlank", 0x300),
            sym("helper", 0x400),
            sym("handler", 0x500),
            sym("_etext", 0x600),
        ]);
        let mut rom = vec![0u8; 0x800];
        rom[0x502] = 0x4E;
        rom[0x503] = 0x73;
        let idx = FunctionIndex::build(
            &table,
            None,
            &crate::romsyms::index_options(rom.len() as u64),
        )
        .unwrap();
        let (attr, found) = Attribution::build(
            &idx,
            &rom,
            &["VDP_waitVBlank".to_string(), "VDP_waitVSync".to_string()],
        );
        assert_eq!(found, vec!["VDP_waitVBlank".to_string()]);
        Profiler::new(attr, 0, 5, Vec::new())
    }

    fn cost(c: u32) -> InstrCost {
        InstrCost {
            total: m68k_to_mclk32(c),
            ..InstrCost::default()
        }
    }

    /// One NTSC frame (262 lines of 3,420 mclk).
    const FRAME: u64 = LINES_NTSC as u64 * MCLK_PER_LINE;

    fn info(frame: u64) -> FrameInfo {
        FrameInfo {
            frame,
            start_mclk: frame * FRAME,
            end_mclk: (frame + 1) * FRAME,
            lines: LINES_NTSC,
            active_lines: 224,
            pal: false,
        }
    }

    #[test]
    fn loop_start_rule_ignores_calls_from_the_wait_and_interrupts() {
        let mut p = profiler();
        let c = Clock::default();
        let i = |p: &mut Profiler, pc: u32, n: u32| p.instruction(pc, cost(n), &c);
        i(&mut p, 0x200, 10); // game
        p.call(0x210, 0x300, 0x214, 0xFFF0);
        i(&mut p, 0x210, 20); // jsr VDP_waitVBlank
        i(&mut p, 0x300, 8); // wait entered
        p.call(0x302, 0x400, 0x306, 0xFFEC);
        i(&mut p, 0x302, 18); // the wait calls a helper
        i(&mut p, 0x400, 30); // helper: busy, not a loop start
        p.ret(0x402, 0x306, 0xFFF0);
        i(&mut p, 0x402, 16);
        i(&mut p, 0x306, 10); // back in the wait
                              // An interrupt during the wait.
        p.exception(
            ExceptionKind::Interrupt(6),
            30,
            0x500,
            m68k_to_mclk32(44),
            &c,
        );
        i(&mut p, 0x500, 12);
        p.ret(0x502, 0x308, 0xFFF0);
        i(&mut p, 0x502, 20);
        i(&mut p, 0x308, 10); // still waiting
        assert_eq!(p.fa.loop_starts, 0);
        // The wait returns; an interrupt is taken at the edge.
        p.ret(0x30A, 0x214, 0xFFF4);
        i(&mut p, 0x30A, 16);
        p.exception(
            ExceptionKind::Interrupt(6),
            30,
            0x500,
            m68k_to_mclk32(44),
            &c,
        );
        i(&mut p, 0x500, 12);
        assert_eq!(
            p.fa.loop_starts, 0,
            "an interrupt at the wait's edge is not a loop start"
        );
        p.ret(0x502, 0x214, 0xFFF4);
        i(&mut p, 0x502, 20);
        i(&mut p, 0x214, 4); // game code again: the loop starts here
        assert_eq!(p.fa.loop_starts, 1);
        assert_eq!(p.first_loop_frame, Some(0));
        // A bsr to a local label of the same function is not a call.
        p.call(0x216, 0x220, 0x218, 0xFFF0);
        i(&mut p, 0x216, 18);
        i(&mut p, 0x220, 4);
        let total: u64 =
            10 + 20 + 8 + 18 + 30 + 16 + 10 + 44 + 12 + 20 + 10 + 16 + 44 + 12 + 20 + 4 + 18 + 4;
        p.frame_done_at(&info(0), 0, Vec::new(), 0, Some(0x220));
        let f = &p.frames[0];
        assert_eq!(f.acc.loop_starts, 1);
        assert_eq!(f.acc.interrupts, 2);
        let idle = 8 + 18 + 10 + 10 + 16;
        // STOP time: the test clock does not move, so the rest of the frame
        // counts as idle.
        assert_eq!(
            f.idle_mclk,
            m68k_to_mclk(idle) + (FRAME - m68k_to_mclk(total))
        );
        assert_eq!(f.busy_mclk, m68k_to_mclk(total - idle));
        let helper = p.attr.id(0x400) as usize;
        let game = p.attr.id(0x200) as usize;
        let handler = p.attr.id(0x500) as usize;
        let wait = p.attr.id(0x300) as usize;
        assert_eq!(p.calls[helper], 1);
        assert_eq!(p.calls[game], 0, "a label bsr is not a call");
        assert_eq!(p.calls[handler], 2);
        assert_eq!(p.calls[wait], 1);
        // Interrupt entry is charged to the handler.
        assert_eq!(p.mclk[handler], m68k_to_mclk((44 + 12 + 20) * 2));
        // Inclusive: the wait includes the helper and the interrupt it took.
        let (nodes, _) = p.counted_tree();
        let mut inc = 0;
        for (n, &m) in nodes.iter().enumerate() {
            if p.node_path(n as u32).contains(&(wait as u32)) {
                inc += m;
            }
        }
        assert_eq!(
            inc,
            m68k_to_mclk(8 + 18 + 30 + 16 + 10 + 44 + 12 + 20 + 10 + 16)
        );
    }

    /// The switch made ahead into a label of the caller after a return
    /// (`ret_ahead_child`) against the switch at the
    /// return target's instruction: the same times per function and per
    /// call-tree node, the same calls and tree, with interrupts taken
    /// right after the return (before the target's instruction) and not,
    /// both ways of charging exception entry.
    #[test]
    fn return_to_a_label_switched_ahead_or_not_charges_the_same() {
        for interrupted in [false, true] {
            let run = |no_child_ahead: bool| {
                let mut p = profiler();
                p.no_child_ahead = no_child_ahead;
                if interrupted {
                    p.set_entry_charge(crate::EntryCharge::Interrupted);
                }
                let c = Clock::default();
                let mut ahead = 0;
                for round in 0..6u32 {
                    p.instruction(0x200, cost(10), &c); // game
                    p.call(0x202, 0x400, 0x206, 0xFFF0);
                    p.instruction(0x202, cost(18), &c); // jsr helper
                    p.instruction(0x400, cost(30 + round), &c);
                    // helper returns into game's label .lab
                    p.ret(0x402, 0x220, 0xFFF4);
                    p.instruction(0x402, cost(16), &c);
                    if p.cur_attr != NONE {
                        ahead += 1;
                    }
                    if round % 2 == 1 {
                        // An interrupt before the label's first instruction.
                        p.exception(
                            ExceptionKind::Interrupt(6),
                            30,
                            0x500,
                            m68k_to_mclk32(44),
                            &c,
                        );
                        p.instruction(0x500, cost(12), &c);
                        p.ret(0x502, 0x220, 0xFFF4);
                        p.instruction(0x502, cost(20), &c);
                    }
                    p.instruction(0x220, cost(4 + round), &c); // .lab
                    p.instruction(0x222, cost(6), &c);
                    if round == 2 {
                        p.frame_done_at(&info(0), 0, Vec::new(), 0, Some(0x222));
                    }
                }
                p.frame_done_at(&info(1), 0, Vec::new(), 0, Some(0x222));
                let (nodes, calls) = p.counted_tree();
                let tree: Vec<(Vec<u32>, u64)> = (0..p.node_count())
                    .map(|n| (p.node_path(n as u32), nodes[n]))
                    .collect();
                let frames: Vec<_> = p
                    .frames
                    .iter()
                    .map(|f| (f.busy_mclk, f.idle_mclk, f.top.clone()))
                    .collect();
                (p.mclk.clone(), calls, tree, frames, ahead)
            };
            let (fast, slow) = (run(false), run(true));
            assert_eq!(fast.0, slow.0, "per-function time");
            assert_eq!(fast.1, slow.1, "calls");
            assert_eq!(fast.2, slow.2, "call tree");
            assert_eq!(fast.3, slow.3, "frames");
            assert_eq!(slow.4, 0);
            assert!(fast.4 >= 5, "the returns to .lab were switched ahead");
        }
    }

    #[test]
    fn straddling_instruction_is_split_and_drops_counted() {
        let mut p = profiler();
        let c = Clock::default();
        p.instruction(0x200, cost(100), &c);
        // The CPU ended 70 mclk past the frame end: those belong to frame 1.
        p.frame_done_at(&info(0), FRAME + 70, Vec::new(), 1, Some(0x200));
        p.instruction(0x202, cost(10), &c);
        p.frame_done_at(&info(1), 2 * FRAME, Vec::new(), 2, Some(0x202));
        assert_eq!(p.frames[0].busy_mclk, 700 - 70);
        assert_eq!(p.frames[0].idle_mclk, FRAME - 630);
        assert_eq!(p.frames[1].busy_mclk, 70 + 70);
        assert_eq!(p.frames[0].acc.loop_starts, 0);
    }
}
