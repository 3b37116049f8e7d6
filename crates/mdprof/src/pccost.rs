//! Costs per instruction address: the dense table of the profiler's hot
//! path. One `Cell` per 2-byte address of ROM and of work RAM holds the
//! address's attribution id (a copy of [`Attribution::id`]'s table) beside
//! its master clocks, so [`crate::engine::Profiler`]'s per-instruction work
//! is one look-up of one cell: its id to compare with the function running,
//! and its add (no hashing, no allocation on the hot path). The ROM cells
//! are a slice whose length is the ROM test itself (one compare, which is
//! also the bounds check); the work RAM cells are a fixed-size array indexed
//! by a masked address (no bounds check).
//!
//! Slots: `0..rom_slots` are ROM addresses `slot * 2`; `rom_slots ..
//! rom_slots + 0x8000` are work RAM `0xFF0000 + (slot - rom_slots) * 2`;
//! the last slot takes instructions anywhere else (attribution id 0). An
//! address is in ROM when its 2-byte unit starts in the ROM
//! (`(pc & 0xFFFFFF) >> 1 < rom_slots`, see [`Attribution::id`]).
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

/// One 2-byte address: its attribution id and its master clocks.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Cell {
    /// Master clocks, whole run.
    mclk: u64,
    /// Attribution id of the address.
    id: u32,
}

/// The per-address table and its counted-frames baseline.
#[derive(Clone, Debug)]
pub struct PcCosts {
    /// One cell per 2 bytes of ROM.
    rom: Box<[Cell]>,
    /// One cell per 2 bytes of work RAM.
    ram: Box<[Cell; RAM_SLOTS]>,
    /// Instructions anywhere else.
    other: Cell,
    /// Master clocks per slot when the counted frames began (empty: from
    /// frame 0).
    base: Vec<u64>,
    /// Exception entry master clocks per attribution id, whole run.
    pub(crate) entry: Vec<u64>,
    entry_base: Vec<u64>,
    /// The last charge was exception entry (else it was the instruction
    /// whose address the engine passes to the frame's end).
    pub(crate) last_entry: bool,
    /// The last finished frame's overrun: (slot or [`LAST_ENTRY`],
    /// attribution id, master clocks) of the charge that ran past its end,
    /// which no counted frame has (yet).
    tail: (usize, u32, u64),
}

impl PcCosts {
    pub fn new(attr: &Attribution) -> PcCosts {
        let rom_slots = attr.rom_len().div_ceil(2) as usize;
        // `cell` relies on it (an unmasked PC's `pc >> 1` below it has no
        // bit above the 24 address lines).
        assert!(rom_slots <= 0x20_0000, "ROM slots beyond 4 MB");
        let rom = (0..rom_slots)
            .map(|s| Cell {
                mclk: 0,
                id: attr.id(s as u32 * 2),
            })
            .collect();
        let mut ram = Box::new([Cell::default(); RAM_SLOTS]);
        for (s, c) in ram.iter_mut().enumerate() {
            c.id = attr.id(RAM_BASE + s as u32 * 2);
        }
        PcCosts {
            rom,
            ram,
            other: Cell::default(),
            base: Vec::new(),
            entry: vec![0; attr.len()],
            entry_base: Vec::new(),
            last_entry: false,
            tail: (0, 0, 0),
        }
    }

    /// The cell and slot of the instruction at `pc` (24-bit address space).
    #[inline(always)]
    fn cell(&mut self, pc: u32) -> (&mut Cell, usize) {
        // The ROM test without masking the PC to 24 bits first: there are
        // at most 0x200000 ROM slots (`Attribution` keeps 4 MB; asserted in
        // `new`), so an unmasked `pc >> 1` below them is a PC in ROM without
        // bits above the 24 address lines. A ROM PC with such bits fails it
        // and is not in work RAM: `cell_other` tests it masked.
        let rom_half = (pc >> 1) as usize;
        let rom_slots = self.rom.len();
        if rom_half < rom_slots {
            (&mut self.rom[rom_half], rom_half)
        } else if pc & 0xFF_FFFF >= RAM_BASE {
            let i = rom_half & (RAM_SLOTS - 1);
            (&mut self.ram[i], rom_slots + i)
        } else {
            self.cell_other(pc)
        }
    }

    /// [`PcCosts::cell`] of a PC outside work RAM and not in ROM unmasked:
    /// in ROM once masked to 24 bits (out of line, so that the common
    /// cases' code does not share its loads), or anywhere else.
    #[cold]
    #[inline(never)]
    fn cell_other(&mut self, pc: u32) -> (&mut Cell, usize) {
        let half = ((pc & 0xFF_FFFF) >> 1) as usize;
        let rom_slots = self.rom.len();
        if half < rom_slots {
            (&mut self.rom[half], half)
        } else {
            (&mut self.other, rom_slots + RAM_SLOTS)
        }
    }

    /// The cell of `slot`.
    fn cell_at(&self, slot: usize) -> &Cell {
        let r = self.rom.len();
        if slot < r {
            &self.rom[slot]
        } else if slot < r + RAM_SLOTS {
            &self.ram[slot - r]
        } else {
            &self.other
        }
    }

    /// Slot of the instruction at `pc` (24-bit address space).
    #[inline(always)]
    pub fn slot(&self, pc: u32) -> usize {
        let half = ((pc & 0xFF_FFFF) >> 1) as usize;
        let rom_slots = self.rom.len();
        if half < rom_slots {
            half
        } else if pc & 0xFF_FFFF >= RAM_BASE {
            rom_slots + (half & (RAM_SLOTS - 1))
        } else {
            rom_slots + RAM_SLOTS
        }
    }

    /// Address of `slot` (`None`: the slot of addresses outside ROM and RAM).
    pub fn slot_pc(&self, slot: usize) -> Option<u32> {
        let r = self.rom.len();
        if slot < r {
            Some(slot as u32 * 2)
        } else if slot < r + RAM_SLOTS {
            Some(RAM_BASE + (slot - r) as u32 * 2)
        } else {
            None
        }
    }

    pub fn slots(&self) -> usize {
        self.rom.len() + RAM_SLOTS + 1
    }

    /// Attribution id of the instruction at `pc` (the table's copy of
    /// [`Attribution::id`]).
    pub fn id(&self, pc: u32) -> u32 {
        self.cell_at(self.slot(pc)).id
    }

    /// Charge `mclk` to the instruction at `pc` and return its attribution
    /// id (the hot path: one cell, its id and its add; the engine clears
    /// `last_entry` at the first instruction after an exception entry).
    #[inline(always)]
    pub fn charge(&mut self, pc: u32, mclk: u64) -> u32 {
        let (c, _) = self.cell(pc);
        c.mclk += mclk;
        c.id
    }

    /// The code at `pc` is attribution id `id` from now on (the engine
    /// made a wait-for-VBlank loop a function of its own).
    pub(crate) fn set_id(&mut self, pc: u32, id: u32) {
        self.cell(pc).0.id = id;
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
        self.last_entry = true;
    }

    /// Master clocks of `slot`, whole run.
    fn mclk(&self, slot: usize) -> u64 {
        self.cell_at(slot).mclk
    }

    /// Slot of the last charge, the last instruction's being at
    /// `last_pc` ([`LAST_ENTRY`]: exception entry).
    fn last_slot(&self, last_pc: Option<u32>) -> usize {
        if self.last_entry {
            LAST_ENTRY
        } else {
            last_pc.map_or(0, |pc| self.slot(pc))
        }
    }

    /// The counted frames start now. `over` master clocks of the last
    /// charge (exception entry, or the instruction at `last_pc`) ran past
    /// the previous frame's end and belong to the counted frames (as the
    /// engine splits them per function); `last_attr` is the attribution id
    /// they were charged to.
    pub(crate) fn mark_counted_start(&mut self, over: u64, last_attr: u32, last_pc: Option<u32>) {
        self.base = (0..self.slots()).map(|s| self.mclk(s)).collect();
        self.entry_base = self.entry.clone();
        let last = self.last_slot(last_pc);
        if last == LAST_ENTRY {
            let e = &mut self.entry_base[last_attr as usize];
            *e = e.saturating_sub(over);
        } else {
            let b = &mut self.base[last];
            *b = b.saturating_sub(over);
        }
    }

    /// A frame ended with `over` master clocks of the last charge (to
    /// attribution id `last_attr`; exception entry, or the instruction at
    /// `last_pc`) past its end: the next frame has them.
    pub(crate) fn frame_end(&mut self, over: u64, last_attr: u32, last_pc: Option<u32>) {
        self.tail = (self.last_slot(last_pc), last_attr, over);
    }

    /// Master clocks of `slot` over the counted frames.
    pub fn counted(&self, slot: usize) -> u64 {
        let tail = if self.tail.0 == slot { self.tail.2 } else { 0 };
        (self.mclk(slot) - self.base.get(slot).copied().unwrap_or(0)).saturating_sub(tail)
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
