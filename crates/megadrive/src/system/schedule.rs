//! The line scheduler: line starts, VINT, the Z80's catch-up and the
//! 68000's run to the next event.

use retroprof_m68k::Stop;

use super::bus::{Bus68k, Hw};
use super::{RunError, System};
use crate::observer::MdObserver;
use crate::timing::{mclk_to_m68k_ceil, MCLK_PER_LINE};

impl Hw {
    pub(super) fn update_next_event(&mut self) {
        let line = if self.next_line < self.clock.geom.lines {
            self.clock.frame_origin + self.next_line as u64 * MCLK_PER_LINE
        } else {
            u64::MAX
        };
        self.next_event = line.min(self.vint_at);
        self.next_event_at = mclk_to_m68k_ceil(self.next_event.saturating_sub(self.clock.base));
        self.update_check();
    }

    /// The first CPU cycle at which the next line event is due:
    /// mclk(now) >= next_event  <=>  now >= ceil((next_event - base) / 7),
    /// computed when `next_event` is set (`base` never changes).
    #[inline]
    pub(super) fn next_event_cycle(&self) -> u64 {
        self.next_event_at
    }

    /// Recompute [`Hw::check_at`]: [`Hw::check_time`], or 0 while a cost
    /// part charged during an instruction awaits the report of its slow
    /// boundary ([`Hw::charge_access`]).
    #[inline]
    pub(super) fn update_check(&mut self) {
        self.check_at = if self.seam.pending {
            0
        } else {
            self.check_time()
        };
    }

    /// The first CPU cycle at which a boundary has work of its own: the next
    /// event (mclk), the refresh due time, at once with the Z80's stall
    /// pending.
    #[inline]
    pub(super) fn check_time(&self) -> u64 {
        let event = self.next_event_cycle();
        if self.z80.m68k_stall != 0 {
            0
        } else {
            event.min(self.refresh.due)
        }
    }

    /// Process every line event due at or before `now` (mclk), in order.
    pub(super) fn process_events(&mut self, now: u64) {
        while self.next_event <= now {
            let t = self.next_event;
            if self.vint_at == t {
                // md-timing.md: VINT and the Z80 IRQ at 788 (H40) / 770 (H32)
                // mclk into the first VBlank line.
                self.catch_up_z80(t);
                self.vdp.raise_vint();
                self.ipl = self.vdp.ipl();
                self.z80.irq = true;
                self.vint_at = u64::MAX;
            } else {
                let idx = self.next_line;
                self.catch_up_z80(t);
                if idx == 1 {
                    // md-timing.md: the Z80 IRQ "is cleared at the end of the
                    // line".
                    self.z80.irq = false;
                }
                let geom = self.clock.geom;
                // A line event is set only for `next_line < lines`.
                let line = geom.line_of_start(idx);
                self.vdp.line_start(&self.clock, line);
                self.ipl = self.vdp.ipl();
                if idx == 0 {
                    // VINT offset by the dot clock in force now.
                    self.vint_at = t + if self.vdp.h40() {
                        crate::timing::VINT_MCLK_H40
                    } else {
                        crate::timing::VINT_MCLK_H32
                    };
                }
                if line < geom.active {
                    self.draw_line(line);
                }
                self.next_line += 1;
            }
            self.update_next_event();
        }
    }

    pub(super) fn draw_line(&mut self, line: u16) {
        let Some(img) = self.shot.as_mut() else {
            return;
        };
        let snap = self.vdp.snapshot();
        if self.vdp.interlace() == 3 {
            // Interlace mode 2: a picture has both fields' rows (2l and
            // 2l + 1), drawn here from the same VDP state, as a static
            // double-resolution screen shows them.
            let (even, odd) = (2 * line as u32, 2 * line as u32 + 1);
            if odd >= img.height {
                return;
            }
            self.renderer
                .render_line(&snap, even as u16, img.row_mut(even));
            self.renderer_odd
                .render_line(&snap, odd as u16, img.row_mut(odd));
            return;
        }
        if (line as u32) >= img.height {
            return;
        }
        let row = img.row_mut(line as u32);
        self.renderer.render_line(&snap, line, row);
    }

    pub(super) fn catch_up_z80(&mut self, mclk: u64) {
        self.z80.run_until(mclk, &self.cart, &mut self.wram);
        if self.z80.m68k_stall != 0 {
            // Charged at the next instruction boundary.
            self.check_at = 0;
        }
    }
}

impl System {
    pub(super) fn pc_now(&self) -> u32 {
        self.cpu.registers().pc.wrapping_sub(4) & 0xFF_FFFF
    }

    /// Run the 68000 until mclk `target`.
    pub(super) fn run_cpu<O: MdObserver + ?Sized>(
        &mut self,
        target: u64,
        obs: &mut O,
    ) -> Result<(), RunError> {
        let frame = self.hw.clock.frame;
        if self.halted {
            return Err(RunError::Halted {
                frame,
                pc: self.pc_now(),
                recent: self.recent_pcs(),
            });
        }
        if target <= self.hw.clock.base {
            return Ok(());
        }
        let target_cycles = mclk_to_m68k_ceil(target - self.hw.clock.base);
        let mut bus = Bus68k::new(&mut self.hw, obs);
        let stop = match &self.breakpoints {
            None => self.cpu.run_on(&mut bus, target_cycles),
            Some(set) => bus.run_with_breakpoints(&mut self.cpu, set, target_cycles),
        };
        // The open-bus latch back into `hw`.
        drop(bus);
        if stop == Stop::Halted || self.hw.seam.halted {
            self.halted = true;
            return Err(RunError::Halted {
                frame,
                pc: self.pc_now(),
                recent: self.recent_pcs(),
            });
        }
        if let Some((kind, vector)) = self.hw.seam.error.take() {
            return Err(RunError::Exception {
                frame,
                kind,
                vector,
                pc: self.pc_now(),
                recent: self.recent_pcs(),
            });
        }
        if self.hw.fetches_this_frame > self.config.runaway_fetch_limit {
            return Err(RunError::Runaway {
                frame,
                fetches: self.hw.fetches_this_frame,
                pc: self.pc_now(),
                recent: self.recent_pcs(),
            });
        }
        Ok(())
    }
}
