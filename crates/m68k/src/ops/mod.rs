//! Instruction implementations, one file per group, and the dispatcher.

mod arith;
mod bcd;
mod bit;
mod branch;
mod logic;
mod moves;
mod muldiv;
mod shift;
mod system;

use crate::bus::{Bus, ExceptionKind, Observer};
use crate::core::{Ctx, R};
use crate::decode::{Entry, Op, ShK, Sz};
use crate::ea::DYN;

/// Call a size-generic handler with the size of a decoded variant.
macro_rules! sized {
    ($s:expr, $sz:expr, $f:ident ( $($a:expr),* )) => {
        match $sz {
            Sz::B => $s.$f::<1>($($a),*),
            Sz::W => $s.$f::<2>($($a),*),
            Sz::L => $s.$f::<4>($($a),*),
        }
    };
}

/// Call a size- and mode-generic handler: `sm` (from the decode table:
/// size index * 16 + EA mode index) selects the instance specialised for
/// that size and addressing mode with a single jump, so the handler does
/// no run-time EA-mode dispatch. Any other `sm` (not produced by the
/// table) falls back to the run-time-mode instance of size `$sz`.
macro_rules! by_sm {
    ($s:expr, $sm:expr, $sz:expr, $f:ident ( $($a:expr),* )) => {
        match $sm {
            0x00 => $s.$f::<1, 0>($($a),*),
            0x01 => $s.$f::<1, 1>($($a),*),
            0x02 => $s.$f::<1, 2>($($a),*),
            0x03 => $s.$f::<1, 3>($($a),*),
            0x04 => $s.$f::<1, 4>($($a),*),
            0x05 => $s.$f::<1, 5>($($a),*),
            0x06 => $s.$f::<1, 6>($($a),*),
            0x07 => $s.$f::<1, 7>($($a),*),
            0x08 => $s.$f::<1, 8>($($a),*),
            0x09 => $s.$f::<1, 9>($($a),*),
            0x0A => $s.$f::<1, 10>($($a),*),
            0x0B => $s.$f::<1, 11>($($a),*),
            0x10 => $s.$f::<2, 0>($($a),*),
            0x11 => $s.$f::<2, 1>($($a),*),
            0x12 => $s.$f::<2, 2>($($a),*),
            0x13 => $s.$f::<2, 3>($($a),*),
            0x14 => $s.$f::<2, 4>($($a),*),
            0x15 => $s.$f::<2, 5>($($a),*),
            0x16 => $s.$f::<2, 6>($($a),*),
            0x17 => $s.$f::<2, 7>($($a),*),
            0x18 => $s.$f::<2, 8>($($a),*),
            0x19 => $s.$f::<2, 9>($($a),*),
            0x1A => $s.$f::<2, 10>($($a),*),
            0x1B => $s.$f::<2, 11>($($a),*),
            0x20 => $s.$f::<4, 0>($($a),*),
            0x21 => $s.$f::<4, 1>($($a),*),
            0x22 => $s.$f::<4, 2>($($a),*),
            0x23 => $s.$f::<4, 3>($($a),*),
            0x24 => $s.$f::<4, 4>($($a),*),
            0x25 => $s.$f::<4, 5>($($a),*),
            0x26 => $s.$f::<4, 6>($($a),*),
            0x27 => $s.$f::<4, 7>($($a),*),
            0x28 => $s.$f::<4, 8>($($a),*),
            0x29 => $s.$f::<4, 9>($($a),*),
            0x2A => $s.$f::<4, 10>($($a),*),
            0x2B => $s.$f::<4, 11>($($a),*),
            _ => match $sz {
                Sz::B => $s.$f::<1, DYN>($($a),*),
                Sz::W => $s.$f::<2, DYN>($($a),*),
                Sz::L => $s.$f::<4, DYN>($($a),*),
            },
        }
    };
}

impl<B: Bus + Observer> Ctx<'_, B> {
    #[inline(always)]
    pub(crate) fn exec(&mut self, op: u16, e: &'static Entry) -> R<()> {
        let sm = e.sm;
        match e.op {
            Op::Illegal => self.illegal_exc(ExceptionKind::IllegalInstruction, 4),
            Op::LineA => self.illegal_exc(ExceptionKind::LineA, 10),
            Op::LineF => self.illegal_exc(ExceptionKind::LineF, 11),
            // (An)+ destinations of the copy loops' MOVEs inline (the
            // arm of `op_move` for that destination); the word and long
            // register sources inline with `op_move`'s whole body (its
            // run-time switch on the destination); the rest through
            // `op_move`'s instances.
            Op::Move(s) => match sm {
                0x03 if op & 0x01C0 == 0x00C0 => self.move_to_postinc_inline::<1, 3>(op),
                0x20 if op & 0x01C0 == 0x00C0 => self.move_to_postinc_inline::<4, 0>(op),
                0x23 if op & 0x01C0 == 0x00C0 => self.move_to_postinc_inline::<4, 3>(op),
                0x10 => self.move_inline::<2, 0>(op),
                0x20 => self.move_inline::<4, 0>(op),
                0x21 => self.move_inline::<4, 1>(op),
                _ => by_sm!(self, sm, s, op_move(op)),
            },
            // Register and immediate sources inline; other sources through
            // `op_move`'s instances (their Dn-destination arm).
            Op::MoveToD(s) => match sm {
                0x00 => self.move_to_d_inline::<1, 0>(op),
                0x03 => self.move_to_d_inline::<1, 3>(op),
                0x05 => self.move_to_d_inline::<1, 5>(op),
                0x0B => self.move_to_d_inline::<1, 11>(op),
                0x10 => self.move_to_d_inline::<2, 0>(op),
                0x11 => self.move_to_d_inline::<2, 1>(op),
                0x12 => self.move_to_d_inline::<2, 2>(op),
                0x13 => self.move_to_d_inline::<2, 3>(op),
                0x15 => self.move_to_d_inline::<2, 5>(op),
                0x16 => self.move_to_d_inline::<2, 6>(op),
                0x18 => self.move_to_d_inline::<2, 8>(op),
                0x1B => self.move_to_d_inline::<2, 11>(op),
                0x20 => self.move_to_d_inline::<4, 0>(op),
                0x21 => self.move_to_d_inline::<4, 1>(op),
                0x22 => self.move_to_d_inline::<4, 2>(op),
                0x23 => self.move_to_d_inline::<4, 3>(op),
                0x25 => self.move_to_d_inline::<4, 5>(op),
                0x26 => self.move_to_d_inline::<4, 6>(op),
                0x28 => self.move_to_d_inline::<4, 8>(op),
                0x2B => self.move_to_d_inline::<4, 11>(op),
                _ => by_sm!(self, sm, s, op_move(op)),
            },
            Op::Movea(s) => match sm {
                0x10 => self.movea_inline::<2, 0>(op),
                0x11 => self.movea_inline::<2, 1>(op),
                0x15 => self.movea_inline::<2, 5>(op),
                0x1B => self.movea_inline::<2, 11>(op),
                0x20 => self.movea_inline::<4, 0>(op),
                0x21 => self.movea_inline::<4, 1>(op),
                0x25 => self.movea_inline::<4, 5>(op),
                0x26 => self.movea_inline::<4, 6>(op),
                0x28 => self.movea_inline::<4, 8>(op),
                0x2B => self.movea_inline::<4, 11>(op),
                _ => by_sm!(self, sm, s, op_movea(op)),
            },
            Op::Moveq => self.op_moveq(op),
            Op::Movem { to_mem, long } => match (to_mem, long) {
                (true, false) => self.op_movem_to_mem::<2>(op),
                (true, true) => self.op_movem_to_mem::<4>(op),
                (false, false) => self.op_movem_to_reg::<2>(op),
                (false, true) => self.op_movem_to_reg::<4>(op),
            },
            Op::Movep { to_mem, long } => self.op_movep(op, to_mem, long),
            // d16(An), d8(An,Xn), (xxx).L and d16(PC) inline; the other
            // modes through the run-time-mode instance.
            Op::Lea => match sm {
                5 => self.lea_inline::<5>(op),
                6 => self.lea_inline::<6>(op),
                8 => self.lea_inline::<8>(op),
                9 => self.lea_inline::<9>(op),
                _ => self.op_lea(op),
            },
            Op::Pea => self.op_pea(op),
            Op::Exg => self.op_exg(op),
            Op::Swap => self.op_swap(op),
            Op::Ext(s) => self.op_ext(op, s == Sz::L),
            Op::Clr(s) => match sm {
                0x00 => self.clr_inline::<1, 0>(op),
                0x10 => self.clr_inline::<2, 0>(op),
                0x20 => self.clr_inline::<4, 0>(op),
                _ => by_sm!(self, sm, s, op_clr(op)),
            },
            // Register, d16(An) and (xxx).L sources run inline (no call);
            // the rest through the specialised out-of-line handlers.
            Op::AluToD(a, s) => match sm {
                0x00 => self.alu_to_d_inline::<1, 0>(op, a),
                0x05 => self.alu_to_d_inline::<1, 5>(op, a),
                0x10 => self.alu_to_d_inline::<2, 0>(op, a),
                0x11 => self.alu_to_d_inline::<2, 1>(op, a),
                0x15 => self.alu_to_d_inline::<2, 5>(op, a),
                0x18 => self.alu_to_d_inline::<2, 8>(op, a),
                0x20 => self.alu_to_d_inline::<4, 0>(op, a),
                0x21 => self.alu_to_d_inline::<4, 1>(op, a),
                0x25 => self.alu_to_d_inline::<4, 5>(op, a),
                0x28 => self.alu_to_d_inline::<4, 8>(op, a),
                _ => by_sm!(self, sm, s, op_alu_to_d(op, a)),
            },
            // Dn op (An) -> (An) inline (word and long).
            Op::AluToEa(a, s) => match sm {
                0x12 => self.alu_to_ea_inline::<2, 2>(op, a),
                0x22 => self.alu_to_ea_inline::<4, 2>(op, a),
                _ => by_sm!(self, sm, s, op_alu_to_ea(op, a)),
            },
            // To Dn inline (ADDI/SUBI/CMPI/ANDI/ORI/EORI #imm,Dn).
            Op::AluImm(a, s) => match sm {
                0x00 => self.alu_imm_inline::<1, 0>(op, a),
                0x10 => self.alu_imm_inline::<2, 0>(op, a),
                0x20 => self.alu_imm_inline::<4, 0>(op, a),
                _ => by_sm!(self, sm, s, op_alu_imm(op, a)),
            },
            Op::AluA(a, s) => match sm {
                0x10 => self.alu_a_inline::<2, 0>(op, a),
                0x11 => self.alu_a_inline::<2, 1>(op, a),
                0x1B => self.alu_a_inline::<2, 11>(op, a),
                0x20 => self.alu_a_inline::<4, 0>(op, a),
                0x21 => self.alu_a_inline::<4, 1>(op, a),
                0x22 => self.alu_a_inline::<4, 2>(op, a),
                0x2B => self.alu_a_inline::<4, 11>(op, a),
                _ => by_sm!(self, sm, s, op_alu_a(op, a)),
            },
            Op::Addq(s) => match sm {
                0x00 => self.addq_inline::<1, 0>(op, false),
                0x10 => self.addq_inline::<2, 0>(op, false),
                0x20 => self.addq_inline::<4, 0>(op, false),
                _ => by_sm!(self, sm, s, op_addq(op, false)),
            },
            Op::Subq(s) => match sm {
                0x00 => self.addq_inline::<1, 0>(op, true),
                0x10 => self.addq_inline::<2, 0>(op, true),
                0x20 => self.addq_inline::<4, 0>(op, true),
                _ => by_sm!(self, sm, s, op_addq(op, true)),
            },
            Op::AddqA => self.op_addq_a(op, false),
            Op::SubqA => self.op_addq_a(op, true),
            // The register forms of the word and long sizes inline.
            Op::Addx {
                mem: false,
                sz: Sz::W,
            } => self.addx_reg_inline::<2>(op, false),
            Op::Addx {
                mem: false,
                sz: Sz::L,
            } => self.addx_reg_inline::<4>(op, false),
            Op::Subx {
                mem: false,
                sz: Sz::W,
            } => self.addx_reg_inline::<2>(op, true),
            Op::Subx {
                mem: false,
                sz: Sz::L,
            } => self.addx_reg_inline::<4>(op, true),
            Op::Addx { mem, sz } => sized!(self, sz, op_addx(op, mem, false)),
            Op::Subx { mem, sz } => sized!(self, sz, op_addx(op, mem, true)),
            Op::Cmpm(s) => sized!(self, s, op_cmpm(op)),
            Op::Neg(s) => sized!(self, s, op_neg(op, false)),
            Op::Negx(s) => sized!(self, s, op_neg(op, true)),
            Op::Not(s) => sized!(self, s, op_not(op)),
            Op::Tst(s) => match sm {
                0x00 => self.tst_inline::<1, 0>(op),
                0x02 => self.tst_inline::<1, 2>(op),
                0x05 => self.tst_inline::<1, 5>(op),
                0x10 => self.tst_inline::<2, 0>(op),
                0x12 => self.tst_inline::<2, 2>(op),
                0x15 => self.tst_inline::<2, 5>(op),
                0x20 => self.tst_inline::<4, 0>(op),
                _ => by_sm!(self, sm, s, op_tst(op)),
            },
            Op::LogicImmSr { op: a, sr } => self.op_logic_sr(a, sr),
            // The word and long arithmetic and logical shifts inline.
            Op::ShiftReg(ShK::As, Sz::W) => self.shift_reg_inline::<2>(op, ShK::As),
            Op::ShiftReg(ShK::As, Sz::L) => self.shift_reg_inline::<4>(op, ShK::As),
            Op::ShiftReg(ShK::Ls, Sz::W) => self.shift_reg_inline::<2>(op, ShK::Ls),
            Op::ShiftReg(ShK::Ls, Sz::L) => self.shift_reg_inline::<4>(op, ShK::Ls),
            Op::ShiftReg(k, s) => sized!(self, s, op_shift_reg(op, k)),
            Op::ShiftMem(k) => self.op_shift_mem(op, k),
            Op::BitDyn(k) => self.op_bit(op, k, true),
            Op::BitImm(k) => self.op_bit(op, k, false),
            Op::Abcd { mem } => self.op_bcd(op, mem, false),
            Op::Sbcd { mem } => self.op_bcd(op, mem, true),
            Op::Nbcd => self.op_nbcd(op),
            Op::Mulu => self.op_mulu(op),
            Op::Muls => self.op_muls(op),
            Op::Divu => self.op_divu(op),
            Op::Divs => self.op_divs(op),
            Op::Bcc => self.op_bcc(op),
            Op::Bsr => self.op_bsr(op),
            Op::DBcc => self.op_dbcc(op),
            Op::Scc => self.op_scc(op),
            Op::Jmp => self.op_jmp(op),
            Op::Jsr => self.op_jsr(op),
            Op::Rts => self.op_rts(),
            Op::Rtr => self.op_rtr(),
            Op::Rte => self.op_rte(),
            Op::Trap => self.op_trap(op),
            Op::Trapv => self.op_trapv(),
            Op::Chk => self.op_chk(op),
            Op::Link => self.op_link(op),
            Op::Unlk => self.op_unlk(op),
            Op::MoveUsp { to_usp } => self.op_move_usp(op, to_usp),
            Op::MoveFromSr => self.op_move_from_sr(op),
            Op::MoveToCcr => self.op_move_to_sr(op, false),
            Op::MoveToSr => self.op_move_to_sr(op, true),
            Op::Reset => self.op_reset(),
            Op::Nop => self.prefetch(),
            Op::Stop => self.op_stop(),
            Op::Tas => self.op_tas(op),
        }
    }
}
