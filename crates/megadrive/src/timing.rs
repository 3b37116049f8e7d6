//! Every hardware timing constant of the console, in one place.
//!
//! Times are master clocks (mclk) unless the name says otherwise. Sources are
//! cited next to each constant; "md-timing.md" is
//! `shared/docs/md-timing.md` (facts collected from public documentation and
//! from Genesis Plus GX, "GPGX").

/// md-timing.md: master clock 53,693,175 Hz (NTSC).
pub const MCLK_HZ_NTSC: u64 = 53_693_175;
/// md-timing.md: master clock 53,203,424 Hz (PAL).
pub const MCLK_HZ_PAL: u64 = 53_203_424;
/// md-timing.md: "68000 = mclk / 7".
pub const M68K_DIVIDER: u64 = 7;
/// Master clocks per second, PAL or NTSC (md-timing.md).
#[inline]
pub const fn mclk_hz(pal: bool) -> u64 {
    if pal {
        MCLK_HZ_PAL
    } else {
        MCLK_HZ_NTSC
    }
}

/// 68000 cycles as master clocks: the one place the two units meet
/// (every other conversion in the workspace goes through these).
#[inline(always)]
pub const fn m68k_to_mclk(cycles: u64) -> u64 {
    cycles * M68K_DIVIDER
}

/// [`m68k_to_mclk`] for one instruction's cost parts (`u32`).
#[inline(always)]
pub const fn m68k_to_mclk32(cycles: u32) -> u32 {
    cycles * M68K_DIVIDER as u32
}

/// The first 68000 cycle at or after `mclk` master clocks (rounded up).
#[inline(always)]
pub const fn mclk_to_m68k_ceil(mclk: u64) -> u64 {
    mclk.div_ceil(M68K_DIVIDER)
}

/// Whole 68000 cycles in `mclk` master clocks (rounded down), for tools
/// that print integer cycle counts.
#[inline(always)]
pub const fn mclk_to_m68k_floor(mclk: u64) -> u64 {
    mclk / M68K_DIVIDER
}

/// Master clocks as (fractional) 68000 cycles, for reports.
#[inline]
pub fn mclk_to_m68k_f64(mclk: f64) -> f64 {
    mclk / M68K_DIVIDER as f64
}

/// (Fractional) 68000 cycles as master clocks, for reports.
#[inline]
pub fn m68k_to_mclk_f64(cycles: f64) -> f64 {
    cycles * M68K_DIVIDER as f64
}

/// md-timing.md: "Z80 = mclk / 15".
pub const Z80_DIVIDER: u64 = 15;
/// md-timing.md: "3,420 master clocks (mclk) per scanline".
pub const MCLK_PER_LINE: u64 = 3420;
/// md-timing.md: "262 lines per NTSC frame".
pub const LINES_NTSC: u16 = 262;
/// md-timing.md: "313 PAL".
pub const LINES_PAL: u16 = 313;

/// md-timing.md: VINT fires 788 mclk into the first VBlank line in H40.
pub const VINT_MCLK_H40: u64 = 788;
/// md-timing.md: VINT fires 770 mclk into the first VBlank line in H32.
pub const VINT_MCLK_H32: u64 = 770;

/// md-timing.md: HBlank flag set at mclk 280, cleared at 860 (H32).
pub const HBLANK_H32: (u64, u64) = (280, 860);
/// md-timing.md: HBlank flag set at mclk 228, cleared at 872 (H40).
pub const HBLANK_H40: (u64, u64) = (228, 872);

/// md-timing.md, DRAM refresh (GPGX model): 2 CPU cycles added...
pub const REFRESH_PENALTY_CYCLES: u32 = 2;
/// ...when 128 CPU cycles have passed since the last one.
pub const REFRESH_INTERVAL_CYCLES: u64 = 128;

/// md-timing.md, bus penalties: 68000 access to the Z80 area costs +1 CPU
/// cycle.
pub const Z80_AREA_WAIT_CYCLES: u32 = 1;
/// md-timing.md, bus penalties: a Z80 access to the 68000 bus (banked window)
/// costs about +3 Z80 cycles...
pub const Z80_BANK_WAIT_TSTATES: usize = 3;

/// ...and "the 68000 loses the bus meanwhile". How long: GPGX charges the
/// 68000 `((z80_mclk % 7) + 72) / 7 * 7` mclk per Z80 access to its bus (70
/// or 77 mclk depending on the Z80's phase against the 68000 clock; fact
/// read from GPGX's Z80 bank handlers). With it, the functions that run
/// while the XGM driver streams samples from ROM match the reference
/// (vnmd's `VDP_drawText`, `VDP_clearTextBG`).
#[inline]
pub const fn z80_bank_m68k_stall_mclk(z80_mclk: u64) -> u64 {
    ((z80_mclk % 7) + 72) / 7 * 7
}

/// md-timing.md, VDP FIFO: "4-entry FIFO".
pub const FIFO_DEPTH: usize = 4;
/// md-timing.md, VDP FIFO: external access slots per line (mclk from line
/// start), H32.
pub const SLOTS_H32: [u16; 16] = [
    230, 510, 810, 970, 1130, 1450, 1610, 1770, 2090, 2250, 2410, 2730, 2890, 3050, 3350, 3370,
];
/// md-timing.md, VDP FIFO: external access slots per line, H40.
pub const SLOTS_H40: [u16; 18] = [
    352, 820, 948, 1076, 1332, 1460, 1588, 1844, 1972, 2100, 2356, 2484, 2612, 2868, 2996, 3124,
    3364, 3380,
];
/// md-timing.md: "A VRAM write uses 2 slots (byte-wide VRAM access)".
pub const FIFO_SLOTS_VRAM: u32 = 2;
/// md-timing.md: "CRAM/VSRAM 1".
pub const FIFO_SLOTS_CRAM: u32 = 1;

/// Kinds of VDP DMA, for the bandwidth table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DmaBandwidth {
    /// 68000 -> VRAM.
    ToVram,
    /// 68000 -> CRAM or VSRAM.
    ToCramVsram,
    /// VRAM fill.
    Fill,
    /// VRAM copy.
    Copy,
}

/// md-timing.md, "VDP DMA bandwidth (bytes per line)": returns the bytes one
/// line moves for (`kind`, blank, H40) (the 68000 -> CRAM/VSRAM row counts
/// words: twice as many bytes). "blank" = VBlank lines or display
/// disabled.
#[inline]
pub fn dma_bytes_per_line(kind: DmaBandwidth, blank: bool, h40: bool) -> u64 {
    // | mode | H32 active | H40 active | H32 blank | H40 blank |
    match (kind, blank, h40) {
        (DmaBandwidth::ToVram, false, false) => 16,
        (DmaBandwidth::ToVram, false, true) => 18,
        (DmaBandwidth::ToVram, true, false) => 166,
        (DmaBandwidth::ToVram, true, true) => 204,
        // This row of the table is in WORDS (md-timing.md: "68k ->
        // CRAM/VSRAM (words)"; Sega's Genesis Software Manual, DMA transfer
        // counts: bytes, except 68K -> CRAM/VSRAM, in words): CRAM and VSRAM
        // take a word per access slot where VRAM takes a byte. Returned as
        // bytes, like every other row.
        (DmaBandwidth::ToCramVsram, false, false) => 16 * 2,
        (DmaBandwidth::ToCramVsram, false, true) => 18 * 2,
        (DmaBandwidth::ToCramVsram, true, false) => 161 * 2,
        (DmaBandwidth::ToCramVsram, true, true) => 198 * 2,
        (DmaBandwidth::Fill, false, false) => 16,
        (DmaBandwidth::Fill, false, true) => 18,
        (DmaBandwidth::Fill, true, false) => 166,
        (DmaBandwidth::Fill, true, true) => 204,
        (DmaBandwidth::Copy, false, false) => 8,
        (DmaBandwidth::Copy, false, true) => 9,
        (DmaBandwidth::Copy, true, false) => 83,
        (DmaBandwidth::Copy, true, true) => 102,
    }
}

/// md-timing.md: "Fill starts after a delay of about 2 slots". We charge two
/// H40 slot spacings of the blank-time bandwidth, i.e. 2 bytes' worth of
/// time at the fill rate of the current line (see `Vdp::start_fill`).
pub const FILL_START_DELAY_BYTES: u64 = 2;

/// YM2612: its clock is mclk / 7 (the 68000 clock; public YM2612 notes,
/// Sega Genesis technical overview: "YM2612 clocked at 7.67 MHz").
pub const YM_DIVIDER: u64 = 7;
/// YM2612: one output sample every 144 YM clocks (OPN2 datasheet: 6
/// prescaler x 24 operator slots), i.e. 1,008 mclk. Timer A counts once per
/// sample.
pub const YM_SAMPLE_MCLK: u64 = 144 * YM_DIVIDER;
/// YM2612: timer B counts once every 16 samples (OPN datasheet: timer B
/// period = 16 x timer A's unit).
pub const YM_TIMER_B_SAMPLES: u64 = 16;
/// YM2612 busy flag after a data write: 32 internal cycles of 6 YM clocks
/// (public YM2612 notes), i.e. 32 * 6 * 7 mclk. Approximate.
pub const YM_BUSY_MCLK: u64 = 32 * 6 * YM_DIVIDER;
/// One YM2612 internal cycle (6 YM clocks = 42 mclk): the grid on which the
/// reference ends the busy flag (Genesis Plus GX sound.c, `YM2612_CLOCK_RATIO`
/// = 7 * 6; used only under `ReferenceRules::ym_busy_grid`).
pub const YM_BUSY_GRID_MCLK: u64 = 6 * YM_DIVIDER;

/// 6-button pad: the TH transition counter resets when TH has not changed
/// for about 1.5 ms (public 6-button protocol notes, e.g. plutiedev
/// "6-button controller": "the counter resets after ~1.5 ms"). In mclk
/// (NTSC master clock): 1.5e-3 * 53,693,175.
pub const PAD6_TIMEOUT_MCLK: u64 = 80_540;

/// Geometry of one frame in the current video mode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FrameGeometry {
    /// Total lines: md-timing.md 262 (NTSC) or 313 (PAL).
    pub lines: u16,
    /// Active lines: 224 (V28) or 240 (V30); the first VBlank line has this
    /// number (md-timing.md: "VBlank flag set at the start of line 224 (V28)
    /// / 240 (V30)").
    pub active: u16,
    pub h40: bool,
    pub pal: bool,
}

impl FrameGeometry {
    pub fn new(pal: bool, v30: bool, h40: bool) -> Self {
        FrameGeometry {
            lines: if pal { LINES_PAL } else { LINES_NTSC },
            active: if v30 { 240 } else { 224 },
            h40,
            pal,
        }
    }

    pub fn mclk_per_frame(&self) -> u64 {
        self.lines as u64 * MCLK_PER_LINE
    }

    /// The line that the frame's line start number `idx` begins (0: the
    /// first VBlank line, `active`; `idx < lines`): `(active + idx) %
    /// lines`, without a division (`active < lines`: one wrap at most).
    #[inline]
    pub fn line_of_start(&self, idx: u16) -> u16 {
        debug_assert!(idx < self.lines && self.active < self.lines);
        let l = self.active + idx;
        if l >= self.lines {
            l - self.lines
        } else {
            l
        }
    }

    /// VINT offset into the first VBlank line.
    pub fn vint_offset(&self) -> u64 {
        if self.h40 {
            VINT_MCLK_H40
        } else {
            VINT_MCLK_H32
        }
    }

    pub fn in_vblank(&self, line: u16) -> bool {
        line >= self.active
    }
}

/// The 8-bit V counter for `line` (0 = first active line).
///
/// Public VDP documentation (Charles MacDonald's genvdp.txt, "HV counter"):
/// NTSC V28: 00-EA, E5-FF; NTSC V30: 00-FF, 00-05; PAL V28: 00-102, 1CA-1FF;
/// PAL V30: 00-10A, 1D2-1FF. The value read is the low 8 bits.
pub fn v_counter(line: u16, pal: bool, v30: bool) -> u16 {
    let jump = match (pal, v30) {
        (false, false) => Some((0xEA, 0xE5)),
        (false, true) => None,
        (true, false) => Some((0x102, 0x1CA)),
        (true, true) => Some((0x10A, 0x1D2)),
    };
    let v = match jump {
        Some((last, restart)) if line > last => restart + (line - last - 1),
        _ => line,
    };
    v & 0x1FF
}

/// The 9-bit H pixel counter `mclk` master clocks into a line.
///
/// Sequences (genvdp.txt): H32 000-127, 1D2-1FF (342 pixels of 10 mclk);
/// H40 000-16C, 1C9-1FF (420 pixels). Anchor: md-timing.md puts the HBlank
/// flag at mclk 280 (H32) / 228 (H40); genvdp.txt puts the HBlank flag's
/// start at H counter 0x126 (H32) / 0x166 (H40) (the read value 0x93 / 0xB3).
/// H40 pixels are of mixed 8- and 10-mclk width on hardware; we spread the
/// 420 pixels evenly over 3,420 mclk (approximation, within 2 pixels).
pub fn h_counter(mclk: u64, h40: bool) -> u16 {
    let (pixels, anchor_mclk, anchor_index, first_end, restart) = if h40 {
        (420u64, HBLANK_H40.0, 0x166u64, 0x16Cu64, 0x1C9u64)
    } else {
        (342u64, HBLANK_H32.0, 0x126u64, 0x127u64, 0x1D2u64)
    };
    // index = position in the 0..pixels sequence (0 = counter value 0).
    let rel = (mclk + MCLK_PER_LINE - anchor_mclk) % MCLK_PER_LINE;
    let index = (anchor_index + rel * pixels / MCLK_PER_LINE) % pixels;
    let v = if index <= first_end {
        index
    } else {
        restart + (index - first_end - 1)
    };
    v as u16
}

/// DRAM refresh delay model (md-timing.md, "68000 DRAM refresh", GPGX model):
/// at each instruction boundary, when the CPU clock has reached `due`, the
/// instruction just finished is charged 2 extra CPU cycles and the next
/// refresh is due 128 CPU cycles later.
///
/// `due` is computed from the boundary time *before* the penalty is added;
/// with this choice the `burn(500)` loop of md-timing.md costs 5,115-5,116
/// cycles per call on average, as GPGX measured (see the unit test).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Refresh {
    /// CPU cycle at or after which the next refresh penalty applies.
    pub due: u64,
}

impl Refresh {
    /// Extra CPU cycles to charge at a boundary at CPU time `now`.
    #[inline(always)]
    pub fn at_boundary(&mut self, now: u64) -> u32 {
        if now >= self.due {
            self.due = now + REFRESH_INTERVAL_CYCLES;
            REFRESH_PENALTY_CYCLES
        } else {
            0
        }
    }
}
