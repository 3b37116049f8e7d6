//! YM2612 (OPN2) register interface: address/data ports, busy flag, timers
//! A and B with their overflow flags. No sound is produced.
//!
//! Registers (YM2612 / OPN manual): 0x24-0x25 timer A value (10 bits: 0x24
//! = bits 9-2, 0x25 bits 1-0 = bits 1-0), 0x26 timer B (8 bits), 0x27:
//! bit 0 load (run) A, bit 1 load B, bit 2 enable A's flag, bit 3 enable B's
//! flag, bit 4 reset A's flag, bit 5 reset B's flag. Status: bit 7 busy,
//! bit 1 timer B overflow, bit 0 timer A overflow.

use crate::timing::{YM_BUSY_GRID_MCLK, YM_BUSY_MCLK, YM_SAMPLE_MCLK, YM_TIMER_B_SAMPLES};

#[derive(Clone, Copy, Debug, Default)]
struct Timer {
    running: bool,
    /// mclk of the next overflow.
    next: u64,
    /// Overflow period (mclk).
    period: u64,
}

impl Timer {
    /// The earliest `now` at which [`Timer::advance`] can do anything
    /// (`u64::MAX`: never, until the timer is written).
    fn due(&self) -> u64 {
        if self.running && self.period != 0 {
            self.next
        } else {
            u64::MAX
        }
    }

    /// Overflows between the last update and `now` (and re-arm).
    fn advance(&mut self, now: u64) -> bool {
        if !self.running || now < self.next || self.period == 0 {
            return false;
        }
        let n = (now - self.next) / self.period + 1;
        self.next += n * self.period;
        true
    }
}

#[derive(Clone)]
pub struct Ym2612 {
    addr: [u8; 2],
    regs: [[u8; 256]; 2],
    flags: u8,
    busy_until: u64,
    a: Timer,
    b: Timer,
    /// Data writes seen (for tests/observers).
    pub writes: u64,
    /// Origin (mclk) of the reference's 42-mclk busy grid, the current
    /// frame's start, while [`crate::z80::ReferenceRules::ym_busy_grid`] is
    /// in force; `None`: busy for 32 x 42 mclk from the write.
    pub busy_grid: Option<u64>,
    /// The earliest mclk at which a timer can overflow (the lesser
    /// [`Timer::due`]; 0 with the skip off): before it, `update` has
    /// nothing to do and returns after one compare (the XGM driver's
    /// sample output writes the DAC 200-odd times a frame). Derived state:
    /// not in the `Debug` output.
    next_due: u64,
    /// `update` runs in full at every access (tests: the skip both ways).
    no_skip: bool,
}

/// The registers, flags, busy time, timers and counters, as
/// `#[derive(Debug)]` would print them without the derived `next_due` and
/// the test switch `no_skip`.
impl std::fmt::Debug for Ym2612 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ym2612")
            .field("addr", &self.addr)
            .field("regs", &self.regs)
            .field("flags", &self.flags)
            .field("busy_until", &self.busy_until)
            .field("a", &self.a)
            .field("b", &self.b)
            .field("writes", &self.writes)
            .field("busy_grid", &self.busy_grid)
            .finish()
    }
}

impl Default for Ym2612 {
    fn default() -> Self {
        Ym2612 {
            addr: [0; 2],
            regs: [[0; 256]; 2],
            flags: 0,
            busy_until: 0,
            a: Timer::default(),
            b: Timer::default(),
            writes: 0,
            busy_grid: None,
            next_due: u64::MAX,
            no_skip: false,
        }
    }
}

impl Ym2612 {
    pub fn reset(&mut self) {
        *self = Ym2612 {
            writes: self.writes,
            busy_grid: self.busy_grid,
            no_skip: self.no_skip,
            next_due: if self.no_skip { 0 } else { u64::MAX },
            ..Default::default()
        };
    }

    /// Tests: with `on` false, every status read and write updates the
    /// timers in full (no `next_due` skip); results are the same either way.
    pub fn set_due_skip(&mut self, on: bool) {
        self.no_skip = !on;
        self.rearm();
    }

    /// `next_due` after a timer changed.
    #[inline]
    fn rearm(&mut self) {
        self.next_due = if self.no_skip {
            0
        } else {
            self.a.due().min(self.b.due())
        };
    }

    fn period_a(&self) -> u64 {
        let na = (self.regs[0][0x24] as u64) << 2 | (self.regs[0][0x25] as u64 & 3);
        (1024 - na) * YM_SAMPLE_MCLK
    }

    fn period_b(&self) -> u64 {
        (256 - self.regs[0][0x26] as u64) * YM_TIMER_B_SAMPLES * YM_SAMPLE_MCLK
    }

    #[inline(always)]
    fn update(&mut self, now: u64) {
        if now >= self.next_due {
            self.update_timers(now);
        }
    }

    fn update_timers(&mut self, now: u64) {
        let ctl = self.regs[0][0x27];
        if self.a.advance(now) && ctl & 0x04 != 0 {
            self.flags |= 1;
        }
        if self.b.advance(now) && ctl & 0x08 != 0 {
            self.flags |= 2;
        }
        self.rearm();
    }

    /// Status read (any port; the Mega Drive decodes port 0 reliably).
    pub fn read(&mut self, now: u64) -> u8 {
        self.update(now);
        let busy = if now < self.busy_until { 0x80 } else { 0 };
        busy | self.flags
    }

    /// Write to port `port` (0-3: address 0, data 0, address 1, data 1).
    pub fn write(&mut self, port: u32, v: u8, now: u64) {
        self.update(now);
        let part = ((port >> 1) & 1) as usize;
        if port & 1 == 0 {
            self.addr[part] = v;
            return;
        }
        self.writes += 1;
        self.busy_until = match self.busy_grid {
            // Genesis Plus GX (sound.c): busy until the YM clock edge
            // (mclk / 42) at or after the write, plus 32 of them.
            Some(origin) if now >= origin => {
                origin
                    + (now - origin).div_ceil(YM_BUSY_GRID_MCLK) * YM_BUSY_GRID_MCLK
                    + YM_BUSY_MCLK
            }
            _ => now + YM_BUSY_MCLK,
        };
        let r = self.addr[part];
        let old = self.regs[part][r as usize];
        self.regs[part][r as usize] = v;
        if part != 0 {
            return;
        }
        match r {
            0x27 => {
                // Load bits: a 0 -> 1 transition starts the counter from the
                // reload value.
                if v & 1 != 0 && (old & 1 == 0 || !self.a.running) {
                    self.a = Timer {
                        running: true,
                        next: now + self.period_a(),
                        period: self.period_a(),
                    };
                } else if v & 1 == 0 {
                    self.a.running = false;
                }
                if v & 2 != 0 && (old & 2 == 0 || !self.b.running) {
                    self.b = Timer {
                        running: true,
                        next: now + self.period_b(),
                        period: self.period_b(),
                    };
                } else if v & 2 == 0 {
                    self.b.running = false;
                }
                if v & 0x10 != 0 {
                    self.flags &= !1;
                }
                if v & 0x20 != 0 {
                    self.flags &= !2;
                }
            }
            // A new reload value applies from the next overflow.
            0x24 | 0x25 => self.a.period = self.period_a(),
            0x26 => self.b.period = self.period_b(),
            _ => return,
        }
        self.rearm();
    }

    /// Register value (tests).
    pub fn reg(&self, part: usize, r: u8) -> u8 {
        self.regs[part][r as usize]
    }
}
