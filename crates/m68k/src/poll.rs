//! The fast path for polling loops.
//!
//! Games spend most of their idle time in loops such as SGDK's wait for
//! VBlank:
//!
//! ```text
//! loop: move.w  $C00004,d1     ; read a status port
//!       btst    #3,d1          ; test one bit
//!       beq.s   loop           ; until it changes
//! ```
//!
//! Executed normally, each pass decodes three instructions and makes six
//! program fetches and one data read. This module runs such a loop without
//! the decoder: per pass it performs the data read through
//! [`Bus::poll_read`], applies the three instructions' register effects and
//! charges their documented cycle counts, and still calls [`Bus::boundary`]
//! and the observer after every instruction, exactly as the normal path does.
//! So the bus sees the same data reads at the same times, every boundary
//! (refresh, line events, interrupt level) happens at the same time, and the
//! observer gets the same instruction reports; only the program fetches of
//! the loop's fixed code are not repeated, which is why the bus must vouch
//! for them ([`Bus::program_word`]: no wait states, no side effects a later
//! fetch would not overwrite). Any instruction boundary can end the fast
//! path (an interrupt becomes due, the run target is reached, the bus
//! declines a read, or the tested bit says the loop exits) with the CPU in
//! exactly the state the normal path would have left; the normal path then
//! continues.
//!
//! Skipping passes: at each pass start the core may ask the bus to skip
//! whole passes ([`Bus::poll_skip`]) when the observer takes them as one
//! report ([`Observer::accepts_poll_passes`]). The bus answers only for
//! passes whose reads it knows (same tested bit, no side effect) and whose
//! boundaries it can account for itself; the registers are not updated for
//! skipped passes because the pass that follows (always run normally)
//! overwrites everything a pass changes.
//!
//! Cycle counts: 68000 User's Manual, tables 8-4 (MOVE), 8-10 (BTST #,Dn:
//! 10) and 8-9 (Bcc taken: 10). Bus order (the conformance tests'): the
//! source's extension words are fetched first, 4 cycles each, then the
//! operand is read, then the next instruction's opcode is prefetched.

use crate::bus::{Bus, Observer, PollPass};
use crate::core::{Ctx, Z};

/// `poll_head` value meaning "no candidate".
pub(crate) const NO_POLL: u32 = u32::MAX;
/// Smallest 8-bit branch displacement (as u8) that may close a polling
/// loop: -16 bytes (the longest loop handled is 12 bytes).
pub(crate) const MIN_D8: u8 = 0xF0;

/// BTST #n,Dn: 68000 UM table 8-10.
const BTST_IMM_DN_CYCLES: u64 = 10;
/// Bcc.B taken: 68000 UM table 8-9.
const BCC_TAKEN_CYCLES: u64 = 10;

/// A recognised loop `MOVE.<b|w> <ea>,Dn ; BTST #n,Dn ; B<eq|ne>.s head`.
struct PollLoop {
    head: u32,
    /// Code words from `head` up to and including the word after the Bcc.
    words: [u16; 7],
    /// Bytes of the MOVE instruction (2, 4 or 6).
    move_len: u32,
    /// Source extension words (0-2): the operand read starts 4 cycles
    /// after each.
    ext: u32,
    /// Operand address (24-bit).
    addr: u32,
    /// Operand size in bytes (1 or 2).
    size: u32,
    dn: usize,
    bit: u32,
    /// The loop continues while the tested bit is 0 (BEQ) or 1 (BNE).
    while_zero: bool,
}

impl<B: Bus + Observer> Ctx<'_, B> {
    /// Recognise the loop at `head`, reading its code through
    /// [`Bus::program_word`].
    fn poll_analyse(&mut self, head: u32) -> Option<PollLoop> {
        if head & 1 != 0 {
            return None;
        }
        let w0 = self.b.program_word(head & 0xFF_FFFF)?;
        // MOVE.B (01) / MOVE.W (11) with a data-register destination.
        let size = match w0 >> 12 {
            1 => 1,
            3 => 2,
            _ => return None,
        };
        if (w0 >> 6) & 7 != 0 {
            return None;
        }
        let dn = ((w0 >> 9) & 7) as usize;
        let (mode, reg) = ((w0 >> 3) & 7, (w0 & 7) as usize);
        let ext = match (mode, reg) {
            (2, _) => 0,          // (An)
            (5, _) | (7, 0) => 1, // (d16,An), abs.W
            (7, 1) => 2,          // abs.L
            _ => return None,
        };
        let move_len = 2 + 2 * ext;
        let mut words = [0u16; 7];
        let n = (move_len / 2 + 4) as usize;
        for (i, w) in words.iter_mut().enumerate().take(n) {
            *w = self
                .b
                .program_word(head.wrapping_add(2 * i as u32) & 0xFF_FFFF)?;
        }
        let m = (move_len / 2) as usize;
        // BTST #n,Dn on the same register.
        if words[m] != 0x0800 | dn as u16 {
            return None;
        }
        let bit = (words[m + 1] & 31) as u32;
        // BEQ.s / BNE.s back to the head.
        let bcc = words[m + 2];
        let while_zero = match bcc >> 8 {
            0x67 => true,
            0x66 => false,
            _ => return None,
        };
        let bcc_at = head.wrapping_add(move_len + 4);
        if bcc_at
            .wrapping_add(2)
            .wrapping_add(bcc as u8 as i8 as i32 as u32)
            != head
        {
            return None;
        }
        let addr = match (mode, ext) {
            (2, _) => self.c.a[reg],
            (5, _) => self.c.a[reg].wrapping_add(words[1] as i16 as i32 as u32),
            (_, 1) => words[1] as i16 as i32 as u32,
            _ => (words[1] as u32) << 16 | words[2] as u32,
        } & 0xFF_FFFF;
        if size == 2 && addr & 1 != 0 {
            return None;
        }
        Some(PollLoop {
            head,
            words,
            move_len,
            ext,
            addr,
            size,
            dn,
            bit,
            while_zero,
        })
    }

    /// Run the polling loop at `head` (the next instruction) until one of
    /// its instruction boundaries needs the normal path; see the module
    /// documentation. Returns true when it ran at least one instruction.
    #[inline(never)]
    pub(crate) fn poll_loop(&mut self, head: u32, target: u64) -> bool {
        let Some(l) = self.poll_analyse(head) else {
            self.c.poll_reject = head;
            return false;
        };
        let btst_at = l.head.wrapping_add(l.move_len);
        let bcc_at = btst_at.wrapping_add(4);
        let m = (l.move_len / 2) as usize;
        // The last word fetched before the operand read: the word after the
        // MOVE (the BTST opcode), whatever the addressing mode.
        let bus_word = l.words[m];
        let fc = self.fc_data();
        // `attention` was set by the Bcc to get here; from now on it means
        // an interrupt (or another slow-path reason) is due.
        self.c.update_attention();
        if self.c.attention {
            return false;
        }
        let pcs = [l.head, btst_at, bcc_at];
        let pass = PollPass {
            pcs,
            addr: l.addr,
            size: l.size,
            bit: l.bit,
            continue_if: !l.while_zero,
            read_offset: 4 * l.ext as u64,
            // MOVE: 8 + 4 per source extension word (UM table 8-4).
            cycles: [4 * l.ext as u64 + 8, BTST_IMM_DN_CYCLES, BCC_TAKEN_CYCLES],
        };
        // Whole passes may be skipped when the observer takes them in bulk.
        let skip = self.b.accepts_poll_passes(&pcs);
        let mut ran = false;
        loop {
            if skip {
                self.poll_skip(&pass, &pcs, target);
            }
            // MOVE <ea>,Dn
            let t0 = self.c.cycles;
            let Some(v) = self
                .b
                .poll_read(l.addr, l.size, fc, t0 + pass.read_offset, bus_word)
            else {
                if !ran {
                    // The bus does not offer this read (e.g. a RAM flag):
                    // do not analyse the loop again on every pass.
                    self.c.poll_reject = head;
                }
                return ran;
            };
            ran = true;
            self.c.ir.op = l.words[0];
            if l.size == 1 {
                self.set_logic::<1>(v);
                self.set_dreg::<1>(l.dn, v);
            } else {
                self.set_logic::<2>(v);
                self.set_dreg::<2>(l.dn, v);
            }
            self.c.ird = l.words[m];
            self.c.irc = l.words[m + 1];
            self.c.pc = btst_at.wrapping_add(4);
            self.c.cycles = t0 + pass.cycles[0];
            self.boundary(t0, Some(l.head));
            let exits = ((v >> l.bit) & 1 == 0) != l.while_zero;
            if exits || self.c.attention || self.c.cycles >= target {
                return true;
            }
            // BTST #n,Dn
            let t1 = self.c.cycles;
            self.c.ir.op = l.words[m];
            let z = (self.c.d[l.dn] >> l.bit) & 1 == 0;
            self.c.sr = (self.c.sr & !Z) | if z { Z } else { 0 };
            self.c.ird = l.words[m + 2];
            self.c.irc = l.words[m + 3];
            self.c.pc = bcc_at.wrapping_add(4);
            self.c.cycles = t1 + pass.cycles[1];
            self.boundary(t1, Some(btst_at));
            if self.c.attention || self.c.cycles >= target {
                return true;
            }
            // Bcc.s head (taken)
            let t2 = self.c.cycles;
            self.c.ir.op = l.words[m + 2];
            self.c.ird = l.words[0];
            self.c.irc = l.words[1];
            self.c.pc = l.head.wrapping_add(4);
            self.c.cycles = t2 + pass.cycles[2];
            self.boundary(t2, Some(bcc_at));
            if self.c.attention || self.c.cycles >= target {
                return true;
            }
        }
    }

    /// Skip the whole passes the bus vouches for ([`Bus::poll_skip`]),
    /// starting at the loop head. The registers are left as they are: the
    /// next pass, which always runs, overwrites everything a pass changes
    /// (Dn's low byte or word, the flags; PC, the prefetch queue and
    /// IR is the same after every pass).
    #[inline(always)]
    fn poll_skip(&mut self, pass: &PollPass, pcs: &[u32; 3], target: u64) {
        let s = self.b.poll_skip(pass, self.c.cycles, target);
        if s.passes != 0 {
            let mut cycles = [0u64; 3];
            for (i, c) in cycles.iter_mut().enumerate() {
                *c = pass.cycles[i] * s.passes + s.extra[i];
            }
            self.b.poll_passes(pcs, &cycles, &s.extra, s.passes);
        }
        // Passes before the last `s.passes` may have been reported by the
        // bus itself (`Bus::poll_skip`).
        self.c.cycles = s.end;
    }
}
