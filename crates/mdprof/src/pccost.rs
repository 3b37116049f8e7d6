//! Costs per instruction address: the dense table beside the attribution
//! table (one `u64` of master clocks per 2-byte address of ROM and of work
//! RAM), filled by [`crate::engine::Profiler`] with one more add per
//! instruction (no hashing, no allocation on the hot path).
//!
//! Slots: `0..rom_slots` are ROM addresses `slot * 2`; `rom_slots ..
//! rom_slots + 0x8000` are work RAM `0xFF0000 + (slot - rom_slots) * 2`;
//! the last slot takes instructions anywhere else (attribution id 0).
//!
//! Exception entry processing is not an instruction: it is kept per
//! attribution id in `PcCosts::entry`, so a function's self time is
//! exactly the sum of its addresses' slots plus its entry time.

use crate::engine::Attribution;

/// Work RAM base as the 68000 sees it (code runs at 0xFF0000).
const RAM_BASE: u32 = 0xFF_0000;
/// 2-byte slots of work RAM.
const RAM_SLOTS: usize = 0x8000;
/// [`PcCosts::last`] when the last charge was exception entry.
const LAST_ENTRY: usize = usize::MAX;

/// The per-address table and its counted-frames baseline.
#[derive(Clone, Debug)]
pub struct PcCosts {
    rom_len: u32,
    rom_slots: usize,
    /// Master clocks per slot, whole run.
    pub(crate) mclk: Vec<u64>,
    /// `mclk` when the counted frames began (empty: from frame 0).
    base: Vec<u64>,
    /// Exception entry master clocks per attribution id, whole run.
    pub(crate) entry: Vec<u64>,
    entry_base: Vec<u64>,
    /// Slot of the last charge ([`LAST_ENTRY`]: exception entry).
    pub(crate) last: usize,
    /// The last finished frame's overrun: (slot or [`LAST_ENTRY`],
    /// attribution id, master clocks) of the charge that ran past its end,
    /// which no counted frame has (yet).
    tail: (usize, u32, u64),
}

impl PcCosts {
    pub fn new(attr: &Attribution) -> PcCosts {
        let rom_len = attr.rom_len();
        let rom_slots = rom_len.div_ceil(2) as usize;
        PcCosts {
            rom_len,
            rom_slots,
            mclk: vec![0; rom_slots + RAM_SLOTS + 1],
            base: Vec::new(),
            entry: vec![0; attr.len()],
            entry_base: Vec::new(),
            last: 0,
            tail: (0, 0, 0),
        }
    }

    /// Slot of the instruction at `pc` (24-bit address space).
    #[inline(always)]
    pub fn slot(&self, pc: u32) -> usize {
        let pc = pc & 0xFF_FFFF;
        if pc < self.rom_len {
            (pc >> 1) as usize
        } else if pc >= RAM_BASE {
            self.rom_slots + ((pc - RAM_BASE) >> 1) as usize
        } else {
            self.rom_slots + RAM_SLOTS
        }
    }

    /// Address of `slot` (`None`: the slot of addresses outside ROM and RAM).
    pub fn slot_pc(&self, slot: usize) -> Option<u32> {
        if slot < self.rom_slots {
            Some(slot as u32 * 2)
        } else if slot < self.rom_slots + RAM_SLOTS {
            Some(RAM_BASE + (slot - self.rom_slots) as u32 * 2)
        } else {
            None
        }
    }

    pub fn slots(&self) -> usize {
        self.mclk.len()
    }

    /// Charge `mclk` to the instruction at `pc` (the hot path's add).
    #[inline(always)]
    pub fn charge(&mut self, pc: u32, mclk: u64) {
        let s = self.slot(pc);
        self.mclk[s] += mclk;
        self.last = s;
    }

    /// Charge `mclk` to `slot` ([`Attribution::id_slot`]'s, which is
    /// [`PcCosts::slot`]).
    #[inline(always)]
    pub fn charge_slot(&mut self, slot: usize, mclk: u64) {
        self.mclk[slot] += mclk;
        self.last = slot;
    }

    /// One more attribution id (the engine found a wait-for-VBlank loop
    /// and made it a function of its own).
    pub(crate) fn push_attribution(&mut self) {
        self.entry.push(0);
        if !self.entry_base.is_empty() {
            self.entry_base.push(0);
        }
    }

    /// Charge exception entry to attribution id `attr`.
    #[inline]
    pub fn charge_entry(&mut self, attr: u32, mclk: u64) {
        self.entry[attr as usize] += mclk;
        self.last = LAST_ENTRY;
    }

    /// The counted frames start now. `over` master clocks of the last
    /// charge ran past the previous frame's end and belong to the counted
    /// frames (as the engine splits them per function); `last_attr` is the
    /// attribution id they were charged to.
    pub(crate) fn mark_counted_start(&mut self, over: u64, last_attr: u32) {
        self.base = self.mclk.clone();
        self.entry_base = self.entry.clone();
        if self.last == LAST_ENTRY {
            let e = &mut self.entry_base[last_attr as usize];
            *e = e.saturating_sub(over);
        } else {
            let b = &mut self.base[self.last];
            *b = b.saturating_sub(over);
        }
    }

    /// A frame ended with `over` master clocks of the last charge (to
    /// attribution id `last_attr`) past its end: the next frame has them.
    pub(crate) fn frame_end(&mut self, over: u64, last_attr: u32) {
        self.tail = (self.last, last_attr, over);
    }

    /// Master clocks of `slot` over the counted frames.
    pub fn counted(&self, slot: usize) -> u64 {
        let tail = if self.tail.0 == slot { self.tail.2 } else { 0 };
        (self.mclk[slot] - self.base.get(slot).copied().unwrap_or(0)).saturating_sub(tail)
    }

    /// Exception entry master clocks of attribution id `attr` over the
    /// counted frames.
    pub fn counted_entry(&self, attr: u32) -> u64 {
        let a = attr as usize;
        let tail = if self.tail.0 == LAST_ENTRY && self.tail.1 == attr {
            self.tail.2
        } else {
            0
        };
        (self.entry[a] - self.entry_base.get(a).copied().unwrap_or(0)).saturating_sub(tail)
    }
}
