//! The VDP (315-5313) as the CPU sees it: registers, ports, memories, status,
//! HV counter, interrupts, DMA timing and the write FIFO. Pixels are drawn by
//! [`crate::render`] only when a picture is asked for.
//!
//! Port protocol (Sega Genesis Software Manual; Charles MacDonald's
//! genvdp.txt): a control-port word `10rrrrrr vvvvvvvv` writes register r
//! (when no command is half written); otherwise two words form a command:
//! first `CD1 CD0 A13..A0`, second `0000 0000 CD5 CD4 CD3 CD2 00 A15 A14`.
//! Codes: 0001 VRAM write, 0011 CRAM write, 0101 VSRAM write, 0000 VRAM read,
//! 1000 CRAM read, 0100 VSRAM read, 1100 8-bit VRAM read; CD5 starts a DMA
//! when register 1 bit 4 allows it. Register 23 bits 7-6: 0x = 68000 -> VDP,
//! 10 = VRAM fill (started by the next data-port write), 11 = VRAM copy.
//!
//! Times passed in are master clocks (mclk) on the console's single
//! timebase. The VDP keeps no frame origin, lines or frame number of its
//! own: every access that needs them is passed the System's [`Clock`] (the
//! one place that holds them) and derives the line and the position in it
//! from that ([`Vdp::position`]).

use crate::observer::Clock;
use crate::render::{FrameSprites, Mode, SpriteScratch, VdpSnapshot};
use crate::timing::{
    dma_bytes_per_line, h_counter, v_counter, DmaBandwidth, FrameGeometry, FIFO_DEPTH,
    FIFO_SLOTS_CRAM, FIFO_SLOTS_VRAM, FILL_START_DELAY_BYTES, HBLANK_H32, HBLANK_H40,
    MCLK_PER_LINE, SLOTS_H32, SLOTS_H40,
};

/// Where a DMA writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DmaTarget {
    Vram,
    Cram,
    Vsram,
}

/// Kind of DMA, for observers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DmaKind {
    /// 68000 memory -> VRAM/CRAM/VSRAM; the 68000 is frozen meanwhile.
    FromCpu(DmaTarget),
    /// VRAM (or CRAM/VSRAM) fill; runs beside the CPU.
    Fill(DmaTarget),
    /// VRAM -> VRAM copy; runs beside the CPU.
    Copy,
}

/// When a DMA runs and how its bytes split between VBlank and active
/// display (by the line at which each byte moved).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DmaSpan {
    pub start: u64,
    pub end: u64,
    pub bytes_vblank: u32,
    pub bytes_active: u32,
    /// Last active-display line (0-based) in which bytes moved.
    pub last_active_line: Option<u16>,
    /// Line at the start.
    pub start_line: u16,
}

/// What a control-port write asks the console to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ControlAction {
    None,
    /// Run a 68000 -> VDP DMA: `words` words from 68000 address `source`.
    DmaFromCpu {
        source: u32,
        words: u32,
        target: DmaTarget,
    },
    /// A VRAM copy was started (already done in memory).
    CopyStarted(DmaSpan, u32),
}

/// Result of a data-port write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataWrite {
    /// mclk the CPU waited (FIFO full, fill/copy in progress).
    pub wait: u64,
    /// Part of `wait` spent on a full FIFO.
    pub fifo_wait: u64,
    /// A fill started by this write: its span and byte count.
    pub fill: Option<(DmaSpan, u32, DmaTarget)>,
}

#[derive(Clone, Copy, Debug, Default)]
struct SpriteFlags {
    /// Frame these were computed for (`u64::MAX`: never).
    frame: u64,
    overflow_line: Option<u16>,
    collision_line: Option<u16>,
    overflow_read: bool,
    collision_read: bool,
}

/// The VDP state.
#[derive(Clone)]
pub struct Vdp {
    /// VRAM, big-endian: the word at even address A has its high byte at A.
    pub vram: Box<[u8; 0x10000]>,
    /// CRAM entries in the hardware form `0000BBB0GGG0RRR0`.
    pub cram: [u16; 64],
    pub vsram: [u16; 40],
    pub regs: [u8; 24],
    /// First control word received, waiting for the second.
    pending: bool,
    code: u8,
    addr: u16,
    /// VINT pending (status bit 7, "F").
    pub vint_pending: bool,
    pub hint_pending: bool,
    hint_counter: u8,
    /// Fill/copy in progress until this mclk.
    dma_busy_until: u64,
    /// FIFO: completion times of queued writes (ring).
    fifo: [u64; FIFO_DEPTH],
    fifo_head: usize,
    fifo_len: usize,
    fifo_last_done: u64,
    /// The data words held by the 4 FIFO entries (a ring; `fifo_wp` is the
    /// entry the next write fills). Exodus (RogerSanders/Exodus,
    /// Devices/315-5313/S315-5313_General.cpp, PerformReadCacheOperation),
    /// from hardware tests: CRAM (mask 0x0EEE), VSRAM (0x07FF) and 8-bit
    /// VRAM (0x00FF) reads set only their bits; the other bits come from
    /// the next FIFO entry (the one the next write fills: reads wait for
    /// the FIFO to drain). Nemesis' VDP FIFO test ROM, test 1, shows the
    /// ring of 4: after writes 1111..6666 the next entry holds 3333.
    fifo_vals: [u16; FIFO_DEPTH],
    fifo_wp: usize,
    /// Address as written by the last control-port command (A15-A0). The
    /// working address `addr` advances with each access; every control
    /// word, whole or partial, reloads `addr` from this one (Exodus,
    /// S315-5313_Ports.cpp, WriteInterface: "Even doing a partial command
    /// port write will cause the internal command address register to be
    /// fully reloaded from the original command address").
    orig_addr: u16,
    /// Address of the last stored word (a fill continues from it).
    last_write_addr: u16,
    /// A fill in progress, advanced lazily ([`Vdp::advance_fill`]) on each
    /// port access, line start and frame start: steps still to do (0: no
    /// fill), the time up to which it has been advanced, start-delay bytes
    /// still to pass, the address of the last write, the word it writes
    /// (VRAM: its high byte) and its target code (CD3-CD0).
    fill_left: u32,
    fill_t: u64,
    /// The latest status read that left the fill where it was
    /// ([`Vdp::read_status`]: such a read's result does not depend on the
    /// fill's progress); every advance goes at least this far, and
    /// [`Vdp::settle_fill`] catches up to it.
    fill_read: u64,
    fill_skip: u64,
    fill_addr: u16,
    fill_word: u16,
    fill_code: u8,
    hv_latch: Option<u16>,
    pal: bool,
    odd_frame: bool,
    sprites: SpriteFlags,
    /// Scratch of [`Vdp::compute_sprite_flags`] (every line's sprites; no
    /// state: rewritten by each computation before it is read).
    frame_sprites: Box<FrameSprites>,
    /// Writes with an invalid code (counted, ignored).
    pub invalid_writes: u64,
}

impl Vdp {
    pub fn new(pal: bool) -> Self {
        Vdp {
            vram: Box::new([0; 0x10000]),
            cram: [0; 64],
            vsram: [0; 40],
            regs: [0; 24],
            pending: false,
            code: 0,
            addr: 0,
            vint_pending: false,
            hint_pending: false,
            hint_counter: 0,
            dma_busy_until: 0,
            fifo: [0; FIFO_DEPTH],
            fifo_head: 0,
            fifo_len: 0,
            fifo_last_done: 0,
            fifo_vals: [0; FIFO_DEPTH],
            fifo_wp: 0,
            orig_addr: 0,
            last_write_addr: 0,
            fill_left: 0,
            fill_t: 0,
            fill_read: 0,
            fill_skip: 0,
            fill_addr: 0,
            fill_word: 0,
            fill_code: 0,
            hv_latch: None,
            pal,
            odd_frame: false,
            sprites: SpriteFlags {
                frame: u64::MAX,
                ..Default::default()
            },
            frame_sprites: Box::new(FrameSprites::new()),
            invalid_writes: 0,
        }
    }

    /// The memories and registers, for the renderer.
    pub fn snapshot(&self) -> VdpSnapshot<'_> {
        VdpSnapshot {
            vram: &self.vram,
            cram: &self.cram,
            vsram: &self.vsram,
            regs: &self.regs,
        }
    }

    #[inline]
    pub fn h40(&self) -> bool {
        // Register 12 bit 0 (RS1) selects the H40 dot clock.
        self.regs[12] & 0x01 != 0
    }

    #[inline]
    pub fn v30(&self) -> bool {
        self.regs[1] & 0x08 != 0
    }

    #[inline]
    pub fn display_enabled(&self) -> bool {
        self.regs[1] & 0x40 != 0
    }

    pub fn pal(&self) -> bool {
        self.pal
    }

    /// Interlace mode bits (register 12 bits 2-1): 0 none, 1 mode 1, 3 mode 2.
    pub fn interlace(&self) -> u8 {
        (self.regs[12] >> 1) & 3
    }

    /// Geometry for a frame starting now (V30 only in PAL).
    pub fn current_geometry(&self) -> FrameGeometry {
        FrameGeometry::new(self.pal, self.v30() && self.pal, self.h40())
    }

    /// A frame starts at `origin` (mclk). `ended` is the clock of the frame
    /// that ends there (its origin, lines and number): a fill still running
    /// is advanced to the boundary on that frame's lines.
    pub fn begin_frame(&mut self, ended: &Clock, origin: u64) {
        self.advance_fill(ended, origin);
        if self.interlace() != 0 {
            self.odd_frame = !self.odd_frame;
        } else {
            self.odd_frame = false;
        }
    }

    /// (line, mclk into the line) at time `now`, in the frame of `c`.
    #[inline]
    pub fn position(&self, c: &Clock, now: u64) -> (u16, u64) {
        let rel = now.saturating_sub(c.frame_origin);
        let idx = rel / MCLK_PER_LINE;
        let off = rel - idx * MCLK_PER_LINE;
        // (first line + idx) mod lines, without a division in the usual
        // case (within the frame: at most one wrap). The first line is the
        // first VBlank line.
        let lines = c.geom.lines as u64;
        let mut line = c.geom.active as u64 + idx;
        if line >= lines {
            line -= lines;
            if line >= lines {
                line %= lines;
            }
        }
        (line as u16, off)
    }

    /// Lines where DMA and FIFO run at blank speed: while the VBlank flag
    /// is set (from the first VBlank line to the start of the frame's last
    /// line), or the display is off. The frame's last line (261 in NTSC)
    /// runs at active-display speed: a VRAM fill in the reference moves
    /// 11,598 bytes per NTSC H40 frame = 37 x 204 + 225 x 18
    /// (shared/reference/*.frames.csv, frames 14-17), not 38 x 204 + 224 x 18.
    #[inline]
    fn blank_line(&self, c: &Clock, line: u16) -> bool {
        (line >= c.geom.active && line + 1 < c.geom.lines) || !self.display_enabled()
    }

    /// Called at the start of each line (HINT counter, md-timing.md: "the
    /// line counter (reg 10) is decremented at the start of each active line
    /// and of the first VBlank line; on underflow HINT is raised at mclk 0 of
    /// the line and the counter reloads"; it is reloaded on the other VBlank
    /// lines).
    pub fn line_start(&mut self, c: &Clock, line: u16) {
        if self.fill_left != 0 {
            // Keep VRAM current for the renderer while a fill runs.
            let lines = c.geom.lines as u64;
            let idx = (line as u64 + lines - c.geom.active as u64) % lines;
            self.advance_fill(c, c.frame_origin + idx * MCLK_PER_LINE);
        }
        if line <= c.geom.active {
            if self.hint_counter == 0 {
                self.hint_counter = self.regs[10];
                self.hint_pending = true;
            } else {
                self.hint_counter -= 1;
            }
        } else {
            self.hint_counter = self.regs[10];
        }
    }

    /// Whether [`Vdp::line_start`] for `line` (not the first VBlank line,
    /// `active`) and for the line after it (if the 68000 reaches it before
    /// running again: `Bus68k::poll_cross_ok`) change nothing a polling
    /// 68000 can see: no fill to advance and no change of the interrupt
    /// level. HINT becomes pending at a line start of the display (or the
    /// frame's line 0) whose counter is 0, and changes the level only when
    /// enabled and not already pending (VINT above it). The counter itself
    /// is not visible.
    pub fn line_start_is_quiet(&self, c: &Clock, line: u16) -> bool {
        let (active, lines) = (c.geom.active, c.geom.lines);
        let no_hint = if line < active {
            // This line decrements a counter of 2 or more, the next one
            // (also in the display, or past the frame) one of 1 or more.
            self.hint_counter >= 2
        } else {
            // VBlank lines reload the counter; line 0 then tests it.
            line + 1 < lines || self.regs[10] != 0
        };
        self.fill_left == 0 && (no_hint || self.hint_pending || self.regs[0] & 0x10 == 0)
    }

    /// VINT time (md-timing.md: 788 mclk into the first VBlank line in H40,
    /// 770 in H32): sets the F flag.
    pub fn raise_vint(&mut self) {
        self.vint_pending = true;
    }

    /// Interrupt priority level the VDP asserts: 6 for VINT (register 1 bit
    /// 5 enables), 4 for HINT (register 0 bit 4 enables).
    #[inline]
    pub fn ipl(&self) -> u8 {
        if self.vint_pending && self.regs[1] & 0x20 != 0 {
            6
        } else if self.hint_pending && self.regs[0] & 0x10 != 0 {
            4
        } else {
            0
        }
    }

    /// The 68000 acknowledged an interrupt of `level`.
    pub fn acknowledge(&mut self, level: u8) {
        match level {
            6 => self.vint_pending = false,
            4 => self.hint_pending = false,
            _ => {}
        }
    }

    // ----- status, HV counter ----------------------------------------

    fn hv_now(&self, c: &Clock, now: u64) -> u16 {
        let (line, off) = self.position(c, now);
        let mut v = v_counter(line, self.pal, c.geom.active == 240);
        if self.interlace() == 3 {
            // Interlace mode 2: bits 7-1 are V6-V0, bit 0 is V8 of the
            // double-resolution counter (genvdp.txt).
            let v2 = (v << 1) | self.odd_frame as u16;
            v = (v2 & 0xFE) | ((v2 >> 8) & 1);
        } else if self.interlace() == 1 {
            v = (v & 0xFE) | ((v >> 8) & 1);
        }
        let h = h_counter(off, self.h40()) >> 1;
        ((v & 0xFF) << 8) | (h & 0xFF)
    }

    /// HV counter read (0xC00008).
    pub fn read_hv(&self, c: &Clock, now: u64) -> u16 {
        match self.hv_latch {
            Some(v) if self.regs[0] & 0x02 != 0 => v,
            _ => self.hv_now(c, now),
        }
    }

    fn fifo_drain(&mut self, now: u64) {
        while self.fifo_len > 0 && self.fifo[self.fifo_head] <= now {
            self.fifo_head = (self.fifo_head + 1) % FIFO_DEPTH;
            self.fifo_len -= 1;
        }
    }

    #[inline(always)]
    fn update_sprite_flags(&mut self, c: &Clock) {
        if self.sprites.frame != c.frame {
            self.compute_sprite_flags(c);
        }
    }

    #[inline(never)]
    fn compute_sprite_flags(&mut self, c: &Clock) {
        let mut f = SpriteFlags {
            frame: c.frame,
            ..Default::default()
        };
        if self.display_enabled() {
            let active = c.geom.active as usize;
            // Only lines with two or more sprites can overflow or collide:
            // ask the renderer's sprite evaluator for the exact answer there
            // (one walk of the table gives every line's sprites, their
            // count overflow and their cells, so the overflow needs no
            // look at a sprite; the lists kept from the last frame, so no
            // clearing of them).
            let snap = VdpSnapshot {
                vram: &self.vram,
                cram: &self.cram,
                vsram: &self.vsram,
                regs: &self.regs,
            };
            let m = Mode::decode(snap.regs);
            let frame = &mut *self.frame_sprites;
            frame.scan(&snap, &m, active);
            let mut scratch = SpriteScratch::new();
            let mut buf = [0u8; 320];
            for line in 0..active {
                if frame.count(line) < 2 {
                    continue;
                }
                if f.overflow_line.is_none() && frame.line_overflow(&m, line) {
                    f.overflow_line = Some(line as u16);
                }
                // The collision needs the line's pixels where shown sprites
                // overlap; only until the first collision line.
                if f.collision_line.is_none()
                    && frame.line_status(&snap, &m, line, &mut scratch, &mut buf).1
                {
                    f.collision_line = Some(line as u16);
                }
                if f.overflow_line.is_some() && f.collision_line.is_some() {
                    break;
                }
            }
        }
        self.sprites = f;
    }

    /// Status register read (0xC00004). `open_bus` supplies bits 15-10
    /// (hardware: the bus's previous contents).
    pub fn read_status(&mut self, c: &Clock, now: u64, open_bus: u16) -> u16 {
        // The common read (the FIFO empty, this frame's sprite flags
        // computed, no fill or one still in its busy time) has nothing to
        // advance, drain or compute: a leaf, with the rest a call of its
        // own.
        if self.fifo_len != 0
            || self.sprites.frame != c.frame
            || (self.fill_left != 0 && now >= self.dma_busy_until)
        {
            return self.read_status_slow(c, now, open_bus);
        }
        self.pending = false;
        if self.fill_left != 0 {
            // See `read_status_slow`.
            self.fill_read = self.fill_read.max(now);
        }
        self.status_word(c, now, (open_bus & 0xFC00) | 0x0200)
    }

    /// [`Vdp::read_status`] without its common-case shortcut (for the
    /// tests that run it both ways; hidden, not API).
    #[doc(hidden)]
    pub fn read_status_full(&mut self, c: &Clock, now: u64, open_bus: u16) -> u16 {
        self.read_status_slow(c, now, open_bus)
    }

    /// [`Vdp::read_status`] in every case.
    #[inline(never)]
    fn read_status_slow(&mut self, c: &Clock, now: u64, open_bus: u16) -> u16 {
        self.pending = false;
        if self.fill_left != 0 && now < self.dma_busy_until && self.sprites.frame == c.frame {
            // A fill's progress changes no status bit before its busy time
            // ends (bit 1 is set until then; the sprite flags of this
            // frame are computed): its steps to `now` can wait for the
            // next access, line start or `settle_fill` (the steps of
            // [a, b) and [b, c) are those of [a, c), `dma_bytes_between`).
            self.fill_read = self.fill_read.max(now);
        } else {
            self.advance_fill(c, now);
        }
        self.fifo_drain(now);
        let mut s = open_bus & 0xFC00;
        if self.fifo_len == 0 {
            s |= 0x0200;
        }
        if self.fifo_len == FIFO_DEPTH {
            s |= 0x0100;
        }
        // Sprite overflow (bit 6) and collision (bit 5): computed from the
        // sprite table only when the status is read, once per frame; set
        // once the beam has passed the line, cleared by the read.
        self.update_sprite_flags(c);
        self.status_word(c, now, s)
    }

    /// The status word at `now` from its bits 15-8 `s` (open bus and
    /// FIFO), this frame's sprite flags computed; a sprite flag reported
    /// is marked read.
    #[inline(always)]
    fn status_word(&mut self, c: &Clock, now: u64, mut s: u16) -> u16 {
        let (line, off) = self.position(c, now);
        if self.vint_pending {
            s |= 0x0080;
        }
        if self.sprite_flag_due(
            c,
            line,
            self.sprites.overflow_line,
            self.sprites.overflow_read,
        ) {
            s |= 0x0040;
            self.sprites.overflow_read = true;
        }
        if self.sprite_flag_due(
            c,
            line,
            self.sprites.collision_line,
            self.sprites.collision_read,
        ) {
            s |= 0x0020;
            self.sprites.collision_read = true;
        }
        if self.odd_frame {
            s |= 0x0010;
        }
        // VBlank: from the first VBlank line until the start of the frame's
        // last line (genvdp.txt: cleared at V counter 0xFF in NTSC), and
        // always while the display is disabled.
        if self.blank_line(c, line) {
            s |= 0x0008;
        }
        let (hb0, hb1) = if self.h40() { HBLANK_H40 } else { HBLANK_H32 };
        if off >= hb0 && off < hb1 {
            s |= 0x0004;
        }
        // DMA busy: a fill or copy still moving bytes, or CD5 set (a fill
        // waiting for its data word). Exodus: "the DMA flag in the status
        // register is the literal realtime state of the CD5 bit".
        if now < self.dma_busy_until || self.code & 0x20 != 0 {
            s |= 0x0002;
        }
        if self.pal {
            s |= 0x0001;
        }
        s
    }

    /// For the 68000's polling-loop fast path: if a status read at `now`
    /// would change nothing in the VDP (no control-port write pending, the
    /// FIFO empty, this frame's sprite flags computed and none about to be
    /// reported), its VBlank flag (bit 3); `None` otherwise. Such a read
    /// stays side-effect free, with the same VBlank flag, until the next
    /// line starts (the flag and the sprite flags' "passed" test change
    /// only at line starts, display enable and the FIFO only with CPU
    /// writes).
    #[inline]
    pub fn status_read_repeats(&self, c: &Clock, now: u64) -> Option<bool> {
        if self.pending || self.fifo_len != 0 || self.sprites.frame != c.frame {
            return None;
        }
        let (line, _) = self.position(c, now);
        if self.sprite_flag_due(
            c,
            line,
            self.sprites.overflow_line,
            self.sprites.overflow_read,
        ) || self.sprite_flag_due(
            c,
            line,
            self.sprites.collision_line,
            self.sprites.collision_read,
        ) {
            return None;
        }
        Some(self.blank_line(c, line))
    }

    /// Whether a status read on `line` reports a sprite flag found on
    /// `flag_line`: once the beam has passed that line (or in VBlank), and
    /// only if no read has reported it yet.
    #[inline]
    fn sprite_flag_due(&self, c: &Clock, line: u16, flag_line: Option<u16>, read: bool) -> bool {
        !read && flag_line.is_some_and(|l| line >= c.geom.active || l < line)
    }

    /// Status without side effects (for observers and tests).
    pub fn peek_status(&self, c: &Clock, now: u64) -> u16 {
        let mut v = self.clone();
        v.read_status(c, now, 0)
    }

    // ----- control port ----------------------------------------------

    fn write_register(&mut self, c: &Clock, r: usize, v: u8, now: u64) {
        if r >= 24 {
            self.invalid_writes += 1;
            return;
        }
        // In mode 4 only registers 0-10 are reachable (genvdp.txt).
        if self.regs[1] & 0x04 == 0 && r > 10 {
            return;
        }
        if r == 0 && v & 0x02 != 0 && self.regs[0] & 0x02 == 0 {
            // HV counter latch enabled: it holds the value of this moment.
            self.hv_latch = Some(self.hv_now(c, now));
        }
        self.regs[r] = v;
    }

    /// Control-port word write (0xC00004).
    pub fn write_control(&mut self, c: &Clock, v: u16, now: u64) -> ControlAction {
        self.advance_fill(c, now);
        if !self.pending {
            // First word (Exodus, S315-5313_Ports.cpp, WriteInterface and
            // ProcessCommandDataWriteFirstHalf, from hardware tests): it
            // always lands in the code (CD1-CD0) and address (A13-A0)
            // registers and sets CD4 (no read target is valid until the
            // second word), even when it is a register write; a register
            // write (CD1-CD0 = 10) then takes its number and value from
            // those bits. CD5, CD3, CD2 and A15-A14 are kept.
            self.code = (self.code & 0x2C) | 0x10 | ((v >> 14) as u8 & 3);
            self.orig_addr = (self.orig_addr & 0xC000) | (v & 0x3FFF);
            self.addr = self.orig_addr;
            if v & 0xC000 == 0x8000 {
                self.write_register(c, ((v >> 8) & 0x1F) as usize, v as u8, now);
                return ControlAction::None;
            }
            self.pending = true;
            return ControlAction::None;
        }
        self.pending = false;
        // Second word: CD5-CD2 and A15-A14; CD5 only while DMA is enabled
        // (register 1 bit 4): "when the DMA enable bit is cleared, the state
        // of CD5 is unable to be modified by a control port write" (Exodus,
        // ProcessCommandDataWriteSecondHalf, hardware-verified).
        let dma_on = self.regs[1] & 0x10 != 0;
        let mask = if dma_on { 0x3C } else { 0x1C };
        self.code = (self.code & !mask & 0x3F) | ((v >> 2) as u8 & mask);
        self.orig_addr = (self.orig_addr & 0x3FFF) | ((v & 3) << 14);
        self.addr = self.orig_addr;
        if self.code & 0x20 == 0 || !dma_on {
            return ControlAction::None;
        }
        match self.regs[23] >> 6 {
            0 | 1 => {
                let target = match self.code & 0x0F {
                    0x01 => DmaTarget::Vram,
                    0x03 => DmaTarget::Cram,
                    0x05 => DmaTarget::Vsram,
                    _ => {
                        self.invalid_writes += 1;
                        self.code &= !0x20;
                        return ControlAction::None;
                    }
                };
                let source = ((self.regs[21] as u32)
                    | (self.regs[22] as u32) << 8
                    | ((self.regs[23] & 0x7F) as u32) << 16)
                    << 1;
                ControlAction::DmaFromCpu {
                    source,
                    words: self.dma_length(),
                    target,
                }
            }
            // Fill: CD5 stays set (the DMA busy flag reads set) until the
            // data-port write that starts it (Exodus,
            // ProcessCommandDataWriteSecondHalf: "the DMA bit in the status
            // register is set when a control port write has been made to
            // setup a DMA fill operation, but the data port write has not
            // yet been made").
            2 => ControlAction::None,
            _ => {
                let (span, bytes) = self.run_copy(c, now);
                ControlAction::CopyStarted(span, bytes)
            }
        }
    }

    /// DMA length register (19/20); 0 means 0x10000 for 68000 DMA, fill
    /// and copy alike: the length counter is decremented before it is
    /// tested for 0 (Exodus, S315-5313_General.cpp, AdvanceDMAState:
    /// `_dmaLengthCounter = (_dmaLengthCounter - 1) & 0xFFFF` then
    /// `if (_dmaLengthCounter == 0)`, hardware-tested; Genesis Plus GX also
    /// loads 0x10000 for 0).
    fn dma_length(&self) -> u32 {
        let l = self.regs[19] as u32 | (self.regs[20] as u32) << 8;
        if l == 0 {
            0x10000
        } else {
            l
        }
    }

    /// After a 68000 DMA: length registers count down to 0, the source
    /// registers advance (within the 128 KB window).
    /// What-if aid for comparisons with the reference (examples only, never
    /// called by the emulation): end a fill/copy's busy time at `now` (its
    /// VRAM writes are already done). Genesis Plus GX ends a 64 KB fill
    /// within the frame when the fill's data-port write lands in the last
    /// ~190 mclk of an active line (its DMA step count goes negative and is
    /// compared unsigned, so the whole fill is done at once and the busy flag
    /// only waits for the next VBlank start, where it is cleared); the
    /// `platformer` reference shows this at frame 1071 (see the `probe`
    /// example's `END_FILL_AFTER`).
    pub fn end_fill_copy_busy(&mut self, now: u64) {
        self.dma_busy_until = self.dma_busy_until.min(now);
    }

    pub fn finish_cpu_dma(&mut self, source_end: u32) {
        // CD5 clears when the length counter reaches 0 (Exodus,
        // S315-5313_General.cpp, AdvanceDMAState).
        self.code &= !0x20;
        self.regs[19] = 0;
        self.regs[20] = 0;
        let s = source_end >> 1;
        self.regs[21] = s as u8;
        self.regs[22] = (s >> 8) as u8;
    }

    // ----- DMA timing --------------------------------------------------

    /// When a DMA of `bytes` starting at `start` ends, using the per-line
    /// bandwidth of md-timing.md (each line moves its bytes evenly over its
    /// 3,420 mclk; blank lines at blank speed).
    pub fn schedule_dma(&self, c: &Clock, start: u64, bytes: u64, kind: DmaBandwidth) -> DmaSpan {
        let h40 = self.h40();
        let (start_line, _) = self.position(c, start);
        let mut span = DmaSpan {
            start,
            end: start,
            start_line,
            ..Default::default()
        };
        let mut t = start;
        let mut rem = bytes;
        let mut guard = 0;
        while rem > 0 && guard < 100_000 {
            guard += 1;
            let (line, off) = self.position(c, t);
            let bw = dma_bytes_per_line(kind, self.blank_line(c, line), h40);
            let left = MCLK_PER_LINE - off;
            // Bytes this line can still move: bw * left / 3420, counted from
            // the line start so that no fraction is lost between lines.
            let done_before = bw * off / MCLK_PER_LINE;
            let avail = bw - done_before;
            let moved = rem.min(avail);
            if rem <= avail {
                // Time at which the (done_before + rem)-th byte of the line
                // has moved.
                let at = ((done_before + rem) * MCLK_PER_LINE).div_ceil(bw);
                t = t - off + at.max(off);
            } else {
                t += left;
            }
            rem -= moved;
            if line >= c.geom.active {
                span.bytes_vblank += moved as u32;
            } else {
                span.bytes_active += moved as u32;
                if moved > 0 {
                    span.last_active_line = Some(line);
                }
            }
        }
        span.end = t;
        span
    }

    fn run_copy(&mut self, c: &Clock, now: u64) -> (DmaSpan, u32) {
        let len = self.dma_length();
        let mut src = self.regs[21] as u16 | (self.regs[22] as u16) << 8;
        let inc = self.regs[15] as u16;
        for _ in 0..len {
            // Byte copy in the VDP's byte-lane addressing (genvdp.txt: copy
            // and fill address bytes with A0 inverted).
            self.vram[(self.addr ^ 1) as usize] = self.vram[(src ^ 1) as usize];
            src = src.wrapping_add(1);
            self.addr = self.addr.wrapping_add(inc);
        }
        self.regs[19] = 0;
        self.regs[20] = 0;
        self.regs[21] = src as u8;
        self.regs[22] = (src >> 8) as u8;
        self.code &= !0x20;
        let start = now.max(self.dma_busy_until);
        let span = self.schedule_dma(c, start, len as u64, DmaBandwidth::Copy);
        self.dma_busy_until = span.end;
        (span, len)
    }

    // ----- data port ----------------------------------------------------

    /// Store a word at the current address according to the code, then
    /// advance the address. Used by data-port writes and 68000 DMA.
    #[inline]
    pub fn store(&mut self, v: u16) {
        self.last_write_addr = self.addr;
        match self.code & 0x0F {
            0x01 => {
                let a = self.addr as usize;
                let [hi, lo] = if a & 1 != 0 {
                    v.swap_bytes().to_be_bytes()
                } else {
                    v.to_be_bytes()
                };
                self.vram[a & 0xFFFE] = hi;
                self.vram[a | 1] = lo;
            }
            0x03 => self.cram[((self.addr >> 1) & 63) as usize] = v & 0x0EEE,
            0x05 => {
                let i = ((self.addr >> 1) & 0x3F) as usize;
                if i < 40 {
                    self.vsram[i] = v & 0x07FF;
                }
            }
            _ => self.invalid_writes += 1,
        }
        // The word occupies the next FIFO entry, whatever its target
        // (68000 DMA words too: test 3 of Nemesis' FIFO test ROM reads them
        // back in CRAM/VSRAM reads' unused bits).
        self.fifo_vals[self.fifo_wp] = v;
        self.fifo_wp = (self.fifo_wp + 1) % FIFO_DEPTH;
        self.addr = self.addr.wrapping_add(self.regs[15] as u16);
    }

    /// [`Vdp::store`] of each big-endian word of `src` in turn (a 68000
    /// DMA's words read from a slice of its source): the code and the
    /// increment cannot change between the words, so the target is picked
    /// once and the address, the FIFO ring's position and the last write's
    /// address stay in locals.
    pub fn store_words(&mut self, src: &[u8]) {
        let mut run = WordRun {
            inc: self.regs[15] as u16,
            addr: self.addr,
            last: self.last_write_addr,
            wp: self.fifo_wp,
            fifo: self.fifo_vals,
        };
        match self.code & 0x0F {
            0x01 => {
                let vram = &mut *self.vram;
                run.each(src, |a, v| {
                    let a = a as usize;
                    let [hi, lo] = if a & 1 != 0 {
                        v.swap_bytes().to_be_bytes()
                    } else {
                        v.to_be_bytes()
                    };
                    vram[a & 0xFFFE] = hi;
                    vram[a | 1] = lo;
                });
            }
            0x03 => {
                let cram = &mut self.cram;
                run.each(src, |a, v| cram[((a >> 1) & 63) as usize] = v & 0x0EEE);
            }
            0x05 => {
                let vsram = &mut self.vsram;
                run.each(src, |a, v| {
                    let i = ((a >> 1) & 0x3F) as usize;
                    if i < 40 {
                        vsram[i] = v & 0x07FF;
                    }
                });
            }
            _ => {
                let invalid = &mut self.invalid_writes;
                run.each(src, |_, _| *invalid += 1);
            }
        }
        self.addr = run.addr;
        self.last_write_addr = run.last;
        self.fifo_wp = run.wp;
        self.fifo_vals = run.fifo;
    }

    /// What [`Vdp::store`] moves besides the memories: the address, the
    /// last write's address, the FIFO ring's position and words, and the
    /// count of writes to no target (for the tests of
    /// [`Vdp::store_words`]).
    #[doc(hidden)]
    pub fn store_state(&self) -> (u16, u16, usize, [u16; FIFO_DEPTH], u64) {
        (
            self.addr,
            self.last_write_addr,
            self.fifo_wp,
            self.fifo_vals,
            self.invalid_writes,
        )
    }

    /// A CRAM/VSRAM word write at `a` (fills).
    fn poke_word(&mut self, target: DmaTarget, a: u16, w: u16) {
        match target {
            DmaTarget::Cram => self.cram[((a >> 1) & 63) as usize] = w & 0x0EEE,
            DmaTarget::Vsram => {
                let i = ((a >> 1) & 0x3F) as usize;
                if i < 40 {
                    self.vsram[i] = w & 0x07FF;
                }
            }
            DmaTarget::Vram => {}
        }
    }

    /// The next external access slot strictly after `t` (mclk). On blank
    /// lines the FIFO is not modelled (md-timing.md: "modelled only during
    /// active display with the display enabled"): the write completes at `t`.
    fn next_slot(&self, c: &Clock, t: u64) -> u64 {
        let (line, off) = self.position(c, t);
        if self.blank_line(c, line) {
            return t;
        }
        let slots: &[u16] = if self.h40() { &SLOTS_H40 } else { &SLOTS_H32 };
        let base = t - off;
        if let Some(&s) = slots.iter().find(|&&s| s as u64 > off) {
            return base + s as u64;
        }
        let next = base + MCLK_PER_LINE;
        let (nline, _) = self.position(c, next);
        if self.blank_line(c, nline) {
            next
        } else {
            next + slots[0] as u64
        }
    }

    /// Queue a write in the FIFO at `t`; returns the time the CPU may go on
    /// (later than `t` when the FIFO was full: md-timing.md "When the FIFO is
    /// full, the CPU waits until the oldest entry drains").
    fn fifo_push(&mut self, c: &Clock, t: u64, slots: u32) -> u64 {
        self.fifo_drain(t);
        let mut t = t;
        if self.fifo_len == FIFO_DEPTH {
            t = self.fifo[self.fifo_head];
            self.fifo_drain(t);
        }
        let mut done = t.max(self.fifo_last_done);
        for _ in 0..slots {
            let next = self.next_slot(c, done);
            if next == done {
                // A blank line (`next_slot` returns its time only there):
                // the other slots are taken at once too.
                break;
            }
            done = next;
        }
        let tail = (self.fifo_head + self.fifo_len) % FIFO_DEPTH;
        self.fifo[tail] = done;
        self.fifo_len += 1;
        self.fifo_last_done = done;
        t
    }

    /// Data-port word write (0xC00000) at `now`.
    pub fn write_data(&mut self, c: &Clock, v: u16, now: u64) -> DataWrite {
        self.pending = false;
        self.advance_fill(c, now);
        let filling = self.fill_left != 0;
        // A copy in progress holds data-port writes until its end; a fill
        // does not: the write takes the next access slot, lands at the
        // address the fill reached, and the fill goes on after it from
        // there with the new data (Exodus, S315-5313_General.cpp,
        // PerformDMAFillOperation notes; Nemesis' FIFO test ROM, tests
        // 31-33, "DP Writes During DMA Fill").
        let mut t = if filling {
            now
        } else {
            now.max(self.dma_busy_until)
        };
        let busy_wait = t - now;
        // A fill starts with the data-port write when CD5 is set and
        // register 23 selects fill, whether or not DMA is still enabled
        // (Exodus, ProcessCommandDataWriteSecondHalf: the DMA enable bit
        // "does not actually disable DMA operations").
        if !filling && self.code & 0x20 != 0 && self.regs[23] & 0xC0 == 0x80 {
            let (span, bytes, target) = self.run_fill(c, v, t);
            self.code |= 0x10;
            return DataWrite {
                wait: round7(busy_wait),
                fifo_wait: 0,
                fill: Some((span, bytes, target)),
            };
        }
        let slots = if self.code & 0x0F == 0x01 {
            FIFO_SLOTS_VRAM
        } else {
            FIFO_SLOTS_CRAM
        };
        let t0 = t;
        t = self.fifo_push(c, t, slots);
        self.store(v);
        if filling {
            self.fill_addr = self.last_write_addr;
            self.fill_word = if self.fill_code == 0x01 {
                v
            } else {
                self.fifo_vals[self.fifo_wp]
            };
        }
        // A data-port write sets CD4: no read target is valid until the
        // next command (Exodus, S315-5313_Ports.cpp, WriteInterface).
        self.code |= 0x10;
        let fifo_wait = t - t0;
        if busy_wait == 0 && fifo_wait == 0 {
            // The common write (what the general case gives for no wait).
            return DataWrite {
                wait: 0,
                fifo_wait: 0,
                fill: None,
            };
        }
        DataWrite {
            wait: round7(busy_wait + fifo_wait),
            fifo_wait: round7(fifo_wait).min(round7(busy_wait + fifo_wait)),
            fill: None,
        }
    }

    fn run_fill(&mut self, c: &Clock, v: u16, t: u64) -> (DmaSpan, u32, DmaTarget) {
        let len = self.dma_length();
        let target = match self.code & 0x0F {
            0x03 => DmaTarget::Cram,
            0x05 => DmaTarget::Vsram,
            _ => DmaTarget::Vram,
        };
        // An invalid target writes nothing (Exodus: no case for it).
        let valid = matches!(self.code & 0x0F, 0x01 | 0x03 | 0x05);
        // The data word is an ordinary FIFO write at the address; then each
        // of `len` fill steps first advances the address by the increment
        // and writes there (Exodus, S315-5313_General.cpp,
        // PerformDMAFillOperation, hardware-verified):
        // - VRAM: the data word's high byte, as a byte write (A0 inverted:
        //   the VDP's VRAM is byte-swapped; genvdp.txt, "DMA fill");
        // - CRAM/VSRAM: a whole word, but not the data written: the one in
        //   the next FIFO entry after it ("it is the data in the next
        //   available FIFO slot that is used for the fill data").
        // The steps run at the fill's per-line rate (advance_fill).
        self.store(v);
        self.fill_code = if valid { self.code & 0x0F } else { 0 };
        self.fill_addr = self.last_write_addr;
        self.fill_word = if target == DmaTarget::Vram {
            v
        } else {
            self.fifo_vals[self.fifo_wp]
        };
        self.fill_left = len;
        self.fill_t = t;
        self.fill_skip = FILL_START_DELAY_BYTES;
        // Length counts down to 0 as the steps run (advance_fill).
        self.regs[19] = len as u8;
        self.regs[20] = (len >> 8) as u8;
        let span = self.schedule_dma(
            c,
            t,
            len as u64 + FILL_START_DELAY_BYTES,
            DmaBandwidth::Fill,
        );
        self.dma_busy_until = span.end;
        (span, len, target)
    }

    /// Bytes a DMA of `kind` moves between `a` and `b` (mclk, `a <= b`),
    /// by the per-line rates of [`Vdp::schedule_dma`] (additive: the bytes
    /// of [a, b) and [b, c) sum to those of [a, c)).
    fn dma_bytes_between(&self, c: &Clock, a: u64, b: u64, kind: DmaBandwidth) -> u64 {
        let h40 = self.h40();
        let mut t = a;
        let mut total = 0;
        while t < b {
            let (line, off) = self.position(c, t);
            let bw = dma_bytes_per_line(kind, self.blank_line(c, line), h40);
            let base = t - off;
            let e = b.min(base + MCLK_PER_LINE);
            total += bw * (e - base) / MCLK_PER_LINE - bw * off / MCLK_PER_LINE;
            t = e;
        }
        total
    }

    /// Run the fill's steps due by `now` (and by the latest status read
    /// that left them, `fill_read`).
    #[inline]
    fn advance_fill(&mut self, c: &Clock, now: u64) {
        if self.fill_left != 0 {
            let now = now.max(self.fill_read);
            if now > self.fill_t {
                self.advance_fill_slow(c, now);
            }
        }
    }

    /// Run the fill's steps up to the latest status read (which left them
    /// for later, [`Vdp::read_status`]): VRAM, the length and source
    /// registers and the address are then what they were after that read
    /// with the steps run at each read. The system calls it at the end of
    /// each frame and before an observer looks at the VDP mid-frame.
    #[inline]
    pub fn settle_fill(&mut self, c: &Clock) {
        self.advance_fill(c, self.fill_read);
    }

    #[inline(never)]
    fn advance_fill_slow(&mut self, c: &Clock, now: u64) {
        let mut n = self.dma_bytes_between(c, self.fill_t, now, DmaBandwidth::Fill);
        self.fill_t = now;
        let skip = n.min(self.fill_skip);
        self.fill_skip -= skip;
        n -= skip;
        let steps = n.min(self.fill_left as u64) as u32;
        if steps == 0 {
            return;
        }
        // The increment in force at each step (Exodus reads it live).
        let inc = self.regs[15] as u16;
        let mut a = self.fill_addr;
        match self.fill_code {
            0x01 => {
                let b = (self.fill_word >> 8) as u8;
                for _ in 0..steps {
                    a = a.wrapping_add(inc);
                    self.vram[(a ^ 1) as usize] = b;
                }
            }
            0x03 | 0x05 => {
                let target = if self.fill_code == 0x03 {
                    DmaTarget::Cram
                } else {
                    DmaTarget::Vsram
                };
                for _ in 0..steps {
                    a = a.wrapping_add(inc);
                    self.poke_word(target, a, self.fill_word);
                }
            }
            _ => a = a.wrapping_add(inc.wrapping_mul(steps as u16)),
        }
        self.fill_addr = a;
        // The working address advances with each step too (Exodus:
        // "_commandAddress += _autoIncrementData").
        self.addr = self.addr.wrapping_add(inc.wrapping_mul(steps as u16));
        self.fill_left -= steps;
        // Length registers count down; the source address registers
        // advance by one per step even though a fill reads no source
        // (Exodus, AdvanceDMAState: "including a DMA fill operation, even
        // though a DMA fill doesn't actually use the source address").
        let left = self.fill_left as u16;
        self.regs[19] = left as u8;
        self.regs[20] = (left >> 8) as u8;
        let src = (self.regs[21] as u16 | (self.regs[22] as u16) << 8).wrapping_add(steps as u16);
        self.regs[21] = src as u8;
        self.regs[22] = (src >> 8) as u8;
        if self.fill_left == 0 {
            // CD5 clears when the length counter reaches 0 (AdvanceDMAState).
            self.code &= !0x20;
        }
    }

    /// Data-port word read (0xC00000): (value, wait in mclk).
    pub fn read_data(&mut self, c: &Clock, now: u64) -> (u16, u64) {
        self.pending = false;
        self.advance_fill(c, now);
        // A read first lets the FIFO drain ("performing a data port read
        // does fully flush the FIFO before returning the read data",
        // Exodus, S315-5313_Ports.cpp, hardware-verified).
        self.fifo_drain(now);
        let drained = if self.fifo_len > 0 {
            self.fifo_last_done
        } else {
            now
        };
        let wait = self.dma_busy_until.max(drained).saturating_sub(now);
        self.fifo_drain(now + wait);
        // Read targets are decoded from CD4-CD0; the bits a CRAM, VSRAM or
        // 8-bit VRAM read does not set come from the next FIFO entry
        // (Exodus, PerformReadCacheOperation and M5ReadCRAM/M5ReadVSRAM/
        // M5ReadVRAM8Bit: masks 0x0EEE, 0x07FF, 0x00FF). VRAM word reads
        // ignore A0 and never swap bytes.
        let fifo = self.fifo_vals[self.fifo_wp];
        let v = match self.code & 0x1F {
            0x00 => {
                let a = (self.addr & 0xFFFE) as usize;
                u16::from_be_bytes([self.vram[a], self.vram[a + 1]])
            }
            0x08 => self.cram[((self.addr >> 1) & 63) as usize] | (fifo & !0x0EEE),
            0x04 => {
                let i = ((self.addr >> 1) & 0x3F) as usize;
                let v = if i < 40 { self.vsram[i] } else { self.vsram[0] };
                v | (fifo & !0x07FF)
            }
            0x0C => self.vram[(self.addr ^ 1) as usize] as u16 | (fifo & 0xFF00),
            _ => {
                // Hardware locks up (the read never gets data: Exodus);
                // we count it and return the FIFO's word.
                self.invalid_writes += 1;
                fifo
            }
        };
        self.addr = self.addr.wrapping_add(self.regs[15] as u16);
        (v, round7(wait))
    }

    /// Current address register (tests, observers).
    pub fn address(&self) -> u16 {
        self.addr
    }

    /// Current code register (tests, observers).
    pub fn code(&self) -> u8 {
        self.code
    }

    pub fn dma_busy_until(&self) -> u64 {
        self.dma_busy_until
    }
}

/// A wait of `m` master clocks rounded up to whole 68000 cycles (a
/// multiple of `timing::M68K_DIVIDER`, 7 mclk), in master clocks:
/// md-timing.md: "GPGX rounds the wait up to a multiple of 7 mclk".
#[inline]
fn round7(m: u64) -> u64 {
    crate::timing::m68k_to_mclk(crate::timing::mclk_to_m68k_ceil(m))
}

/// What [`Vdp::store_words`] moves for every word, whatever its target, as
/// [`Vdp::store`] does: the address and its step, the last write's address
/// and the FIFO ring's position and words (in locals for the run).
struct WordRun {
    inc: u16,
    addr: u16,
    last: u16,
    wp: usize,
    fifo: [u16; FIFO_DEPTH],
}

impl WordRun {
    /// Each big-endian word `v` of `src` in turn: `put(addr, v)` (its
    /// target's write), then the FIFO entry and the address's step.
    #[inline(always)]
    fn each(&mut self, src: &[u8], mut put: impl FnMut(u16, u16)) {
        for p in src.chunks_exact(2) {
            let v = u16::from_be_bytes([p[0], p[1]]);
            self.last = self.addr;
            put(self.addr, v);
            self.fifo[self.wp % FIFO_DEPTH] = v;
            self.wp = (self.wp + 1) % FIFO_DEPTH;
            self.addr = self.addr.wrapping_add(self.inc);
        }
    }
}
