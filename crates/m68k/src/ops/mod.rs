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
use crate::decode::{Op, Sz};

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

impl<B: Bus, O: Observer> Ctx<'_, B, O> {
    #[inline(always)]
    pub(crate) fn exec(&mut self, op: u16, d: Op) -> R<()> {
        match d {
            Op::Illegal => self.illegal_exc(ExceptionKind::IllegalInstruction, 4),
            Op::LineA => self.illegal_exc(ExceptionKind::LineA, 10),
            Op::LineF => self.illegal_exc(ExceptionKind::LineF, 11),
            Op::Move(s) => sized!(self, s, op_move(op)),
            Op::Movea(s) => sized!(self, s, op_movea(op)),
            Op::Moveq => self.op_moveq(op),
            Op::Movem { to_mem, long } => match (to_mem, long) {
                (true, false) => self.op_movem_to_mem::<2>(op),
                (true, true) => self.op_movem_to_mem::<4>(op),
                (false, false) => self.op_movem_to_reg::<2>(op),
                (false, true) => self.op_movem_to_reg::<4>(op),
            },
            Op::Movep { to_mem, long } => self.op_movep(op, to_mem, long),
            Op::Lea => self.op_lea(op),
            Op::Pea => self.op_pea(op),
            Op::Exg => self.op_exg(op),
            Op::Swap => self.op_swap(op),
            Op::Ext(s) => self.op_ext(op, s == Sz::L),
            Op::Clr(s) => sized!(self, s, op_clr(op)),
            Op::AluToD(a, s) => sized!(self, s, op_alu_to_d(op, a)),
            Op::AluToEa(a, s) => sized!(self, s, op_alu_to_ea(op, a)),
            Op::AluImm(a, s) => sized!(self, s, op_alu_imm(op, a)),
            Op::AluA(a, s) => sized!(self, s, op_alu_a(op, a)),
            Op::Addq(s) => sized!(self, s, op_addq(op, false)),
            Op::Subq(s) => sized!(self, s, op_addq(op, true)),
            Op::AddqA => self.op_addq_a(op, false),
            Op::SubqA => self.op_addq_a(op, true),
            Op::Addx { mem, sz } => sized!(self, sz, op_addx(op, mem, false)),
            Op::Subx { mem, sz } => sized!(self, sz, op_addx(op, mem, true)),
            Op::Cmpm(s) => sized!(self, s, op_cmpm(op)),
            Op::Neg(s) => sized!(self, s, op_neg(op, false)),
            Op::Negx(s) => sized!(self, s, op_neg(op, true)),
            Op::Not(s) => sized!(self, s, op_not(op)),
            Op::Tst(s) => sized!(self, s, op_tst(op)),
            Op::LogicImmSr { op: a, sr } => self.op_logic_sr(a, sr),
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
