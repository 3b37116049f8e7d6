//! Cartridge address space: ROM (linear up to 4 MB, SSF2-style bank mapper
//! above), and the SRAM declared in the header.
//!
//! Mapper (public documentation of the Super Street Fighter II mapper,
//! e.g. plutiedev "SSF2 mapper"): the 4 MB window is 8 slots of 512 KB; slot 0
//! is fixed to bank 0, slots 1-7 are selected by writing a bank number to
//! 0xA130F3, F5, F7, F9, FB, FD, FF. 0xA130F1 bit 0 maps SRAM over ROM at
//! 0x200000 (on cartridges larger than 2 MB), bit 1 write-protects it.

use std::sync::Arc;

use retroprof_m68k::FetchWindow;

use crate::rom::{Rom, SramInfo, LINEAR_ROM_BYTES};

/// With the mapper, slot 0 (the first 512 KB) always shows bank 0.
const MAPPER_FIXED_BYTES: usize = 0x80000;

#[derive(Clone, Debug)]
pub struct Cart {
    /// The image, padded with one spare byte pair for word reads at the end.
    rom: Vec<u8>,
    rom_len: usize,
    /// Bank base offsets of the 8 slots (only with the mapper).
    banks: [usize; 8],
    pub mapper: bool,
    pub sram_info: Option<SramInfo>,
    pub sram: Vec<u8>,
    /// SRAM visible (always when the ROM ends before the SRAM start; else
    /// per 0xA130F1 bit 0).
    pub sram_mapped: bool,
    pub sram_write_protect: bool,
    pub sram_dirty: bool,
    /// The mapped SRAM window as (first address, length); length 0 when
    /// unmapped. Kept so the hot ROM path tests it with one compare.
    win_lo: u32,
    win_len: u32,
    /// Addresses below this are plain ROM (no mapper, below the SRAM
    /// window, inside the image): the hot read path's single test.
    plain_end: usize,
    /// The ROM words that read the same whatever the mapper and SRAM
    /// registers hold (from address 0: below the mapper's fixed slot end
    /// and the declared SRAM start, inside the image): word reads there are
    /// one bounds test and one load.
    fixed: Arc<[u16]>,
    /// `fixed` as the 68000's fetch window; `None` when empty. Tests clear
    /// it to run every fetch through the bus.
    pub(crate) code: Option<Arc<[u16]>>,
}

impl Cart {
    pub fn new(rom: &Rom) -> Self {
        let mut data = rom.data.clone();
        let rom_len = data.len();
        data.extend_from_slice(&[0xFF, 0xFF]);
        let sram_info = rom.header.sram;
        let sram = sram_info.map(|s| vec![0xFF; s.size()]).unwrap_or_default();
        let sram_mapped = sram_info.is_some_and(|s| (s.start as usize) >= rom_len);
        let mut banks = [0usize; 8];
        for (i, b) in banks.iter_mut().enumerate() {
            *b = i * 0x80000;
        }
        Cart {
            rom: data,
            rom_len,
            banks,
            mapper: rom_len > LINEAR_ROM_BYTES,
            sram_info,
            sram,
            sram_mapped,
            sram_write_protect: false,
            sram_dirty: false,
            win_lo: 0,
            win_len: 0,
            plain_end: 0,
            fixed: Arc::new([]),
            code: None,
        }
        .with_window()
        .with_code()
    }

    fn with_code(mut self) -> Self {
        let mut end = self.rom_len;
        if self.mapper {
            end = end.min(MAPPER_FIXED_BYTES);
        }
        if let Some(s) = self.sram_info {
            end = end.min((s.start & !1) as usize);
        }
        let words: Arc<[u16]> = self.rom[..end & !1]
            .chunks_exact(2)
            .map(|p| u16::from_be_bytes([p[0], p[1]]))
            .collect();
        self.code = (!words.is_empty()).then(|| Arc::clone(&words));
        self.fixed = words;
        self
    }

    /// The 68000's fetch window: ROM words no mapper or SRAM register can
    /// change, whose fetches (like every cartridge ROM read) take no wait
    /// state and whose only side effect is the open-bus latch.
    pub(crate) fn fetch_window(&self) -> Option<FetchWindow> {
        self.code.as_ref().map(|w| FetchWindow {
            base: 0,
            words: Arc::clone(w),
        })
    }

    fn with_window(mut self) -> Self {
        self.update_window();
        self
    }

    fn update_window(&mut self) {
        match self.sram_info {
            Some(s) if self.sram_mapped => {
                self.win_lo = s.start & !1;
                self.win_len = (s.end | 1) - (s.start & !1) + 1;
            }
            _ => {
                self.win_lo = 0;
                self.win_len = 0;
            }
        }
        self.plain_end = if self.mapper {
            0
        } else if self.win_len != 0 {
            self.rom_len.min(self.win_lo as usize)
        } else {
            self.rom_len
        };
    }

    pub fn rom_len(&self) -> usize {
        self.rom_len
    }

    /// ROM offset of 68000 address `addr` (< 0x400000).
    #[inline(always)]
    fn offset(&self, addr: u32) -> usize {
        if self.mapper {
            self.banks[((addr >> 19) & 7) as usize] | (addr as usize & 0x7FFFF)
        } else {
            addr as usize
        }
    }

    #[inline]
    fn sram_index(&self, addr: u32) -> Option<usize> {
        let s = self.sram_info?;
        if !self.sram_mapped || addr < s.start || addr > s.end {
            return None;
        }
        if s.odd_only {
            if addr & 1 == 0 {
                return None;
            }
            Some(((addr - s.start) >> 1) as usize)
        } else if s.even_only {
            if addr & 1 != 0 {
                return None;
            }
            Some(((addr - s.start) >> 1) as usize)
        } else {
            Some((addr - s.start) as usize)
        }
    }

    /// Whether `addr` lies in the declared SRAM window while it is mapped.
    #[inline]
    pub fn in_sram_window(&self, addr: u32) -> bool {
        addr.wrapping_sub(self.win_lo) < self.win_len
    }

    /// Byte read; `None` past the end of the ROM (open bus).
    #[inline(always)]
    pub fn read_byte(&self, addr: u32) -> Option<u8> {
        let a = addr as usize;
        if a < self.plain_end {
            return Some(self.rom[a]);
        }
        if self.in_sram_window(addr) {
            return Some(match self.sram_index(addr) {
                Some(i) => self.sram.get(i).copied().unwrap_or(0xFF),
                None => 0xFF,
            });
        }
        let off = self.offset(addr);
        if off < self.rom_len {
            Some(self.rom[off])
        } else {
            None
        }
    }

    /// The `len` bytes from 68000 address `addr` when all of them are
    /// plain ROM (no mapper, below the SRAM window, inside the image):
    /// there [`Cart::read_byte`] returns exactly these bytes. `None`
    /// otherwise. The Z80's bank window keeps its 32 KB this way for a run
    /// (the cartridge's registers cannot change while the Z80 runs).
    #[inline(always)]
    pub fn plain_rom(&self, addr: u32, len: usize) -> Option<&[u8]> {
        let (a, end) = (addr as usize, addr as usize + len);
        if end <= self.plain_end {
            self.rom.get(a..end)
        } else {
            None
        }
    }

    /// Word read at an even address; `None` past the end of the ROM.
    #[inline(always)]
    pub fn read_word(&self, addr: u32) -> Option<u16> {
        if let Some(&w) = self.fixed.get((addr >> 1) as usize) {
            return Some(w);
        }
        let a = addr as usize;
        if a < self.plain_end {
            // `rom` has a spare byte pair past `rom_len`.
            return Some(u16::from_be_bytes([self.rom[a], self.rom[a + 1]]));
        }
        if self.in_sram_window(addr) {
            let hi = self.read_byte(addr).unwrap_or(0xFF);
            let lo = self.read_byte(addr | 1).unwrap_or(0xFF);
            return Some(u16::from_be_bytes([hi, lo]));
        }
        let off = self.offset(addr);
        if off < self.rom_len {
            Some(u16::from_be_bytes([self.rom[off], self.rom[off + 1]]))
        } else {
            None
        }
    }

    /// Byte write into the cartridge space: SRAM when mapped; `false` when
    /// nothing took it.
    pub fn write_byte(&mut self, addr: u32, v: u8) -> bool {
        if let Some(i) = self.sram_index(addr) {
            if !self.sram_write_protect {
                if let Some(b) = self.sram.get_mut(i) {
                    *b = v;
                    self.sram_dirty = true;
                }
            }
            return true;
        }
        self.in_sram_window(addr)
    }

    /// Mapper/SRAM control register write at 0xA130F1-0xA130FF (odd).
    pub fn write_mapper(&mut self, addr: u32, v: u8) {
        let reg = ((addr & 0xF) >> 1) as usize;
        if reg == 0 {
            if self.sram_info.is_some() {
                self.sram_mapped = v & 1 != 0 || self.sram_always_visible();
                self.sram_write_protect = v & 2 != 0;
                self.update_window();
            }
        } else if self.mapper {
            self.banks[reg] = ((v & 0x3F) as usize) * 0x80000;
        }
    }

    fn sram_always_visible(&self) -> bool {
        self.sram_info
            .is_some_and(|s| (s.start as usize) >= self.rom_len)
    }
}
