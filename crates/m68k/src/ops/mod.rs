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
use crate::decode::{Alu, Entry, Op, ShK, Sz};
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

/// The hot forms: each (decoded [`Op`], `sm`) pair listed gets its own
/// `sm` value of 0x80 and above in the decode table ([`hot_sm`]), and
/// [`Ctx::exec`] runs its handler, specialised for the size, the mode
/// and the ALU operation, from one jump on that byte (instead of a jump
/// on the operation, one on `sm` and one on the ALU operation inside the
/// handler). The handlers are the ones the dispatch below runs for
/// those pairs otherwise (the inline bodies of the out-of-line
/// handlers), so a form listed here runs the same code as before. An
/// `sm` of 0x80 or above that is not listed (none is made) would fall
/// back to the dispatch below, whose `by_sm!` takes it to the run-time
/// mode instance.
macro_rules! hot_forms {
    ($($id:literal: $op:pat, $sm:literal => $f:ident::<$s:literal, $m:literal>($($a:expr),*);)*) => {
        /// The hot forms' `sm` values, in order.
        #[cfg(test)]
        pub(crate) const HOT_SMS: &[u8] = &[$($id),*];

        /// The `sm` byte of a decode-table entry: `sm` itself, or the
        /// hot form's own value (see `hot_forms!`).
        pub(crate) fn hot_sm(op: Op, sm: u8) -> u8 {
            match (op, sm) {
                $(($op, $sm) => $id,)*
                _ => sm,
            }
        }

        impl<B: Bus + Observer> Ctx<'_, B> {
            /// The hot form `sm` (0x80 and above) of opcode `op`, or
            /// `None` if `sm` is not one.
            #[inline(always)]
            fn exec_hot(&mut self, op: u16, sm: u8) -> Option<R<()>> {
                Some(match sm {
                    $($id => self.$f::<$s, $m>(op $(, $a)*),)*
                    _ => return None,
                })
            }
        }
    };
}

hot_forms! {
    0x80: Op::AluToD(Alu::Add, Sz::B), 0x00 => alu_to_d_inline::<1, 0>(Alu::Add);
    0x81: Op::AluToD(Alu::Add, Sz::B), 0x05 => alu_to_d_inline::<1, 5>(Alu::Add);
    0x82: Op::AluToD(Alu::Add, Sz::W), 0x10 => alu_to_d_inline::<2, 0>(Alu::Add);
    0x83: Op::AluToD(Alu::Add, Sz::W), 0x11 => alu_to_d_inline::<2, 1>(Alu::Add);
    0x84: Op::AluToD(Alu::Add, Sz::W), 0x15 => alu_to_d_inline::<2, 5>(Alu::Add);
    0x85: Op::AluToD(Alu::Add, Sz::W), 0x18 => alu_to_d_inline::<2, 8>(Alu::Add);
    0x86: Op::AluToD(Alu::Add, Sz::L), 0x20 => alu_to_d_inline::<4, 0>(Alu::Add);
    0x87: Op::AluToD(Alu::Add, Sz::L), 0x21 => alu_to_d_inline::<4, 1>(Alu::Add);
    0x88: Op::AluToD(Alu::Add, Sz::L), 0x25 => alu_to_d_inline::<4, 5>(Alu::Add);
    0x89: Op::AluToD(Alu::Add, Sz::L), 0x28 => alu_to_d_inline::<4, 8>(Alu::Add);
    0x8A: Op::AluToD(Alu::Sub, Sz::B), 0x00 => alu_to_d_inline::<1, 0>(Alu::Sub);
    0x8B: Op::AluToD(Alu::Sub, Sz::B), 0x05 => alu_to_d_inline::<1, 5>(Alu::Sub);
    0x8C: Op::AluToD(Alu::Sub, Sz::W), 0x10 => alu_to_d_inline::<2, 0>(Alu::Sub);
    0x8D: Op::AluToD(Alu::Sub, Sz::W), 0x11 => alu_to_d_inline::<2, 1>(Alu::Sub);
    0x8E: Op::AluToD(Alu::Sub, Sz::W), 0x15 => alu_to_d_inline::<2, 5>(Alu::Sub);
    0x8F: Op::AluToD(Alu::Sub, Sz::W), 0x18 => alu_to_d_inline::<2, 8>(Alu::Sub);
    0x90: Op::AluToD(Alu::Sub, Sz::L), 0x20 => alu_to_d_inline::<4, 0>(Alu::Sub);
    0x91: Op::AluToD(Alu::Sub, Sz::L), 0x21 => alu_to_d_inline::<4, 1>(Alu::Sub);
    0x92: Op::AluToD(Alu::Sub, Sz::L), 0x25 => alu_to_d_inline::<4, 5>(Alu::Sub);
    0x93: Op::AluToD(Alu::Sub, Sz::L), 0x28 => alu_to_d_inline::<4, 8>(Alu::Sub);
    0x94: Op::AluToD(Alu::Cmp, Sz::B), 0x00 => alu_to_d_inline::<1, 0>(Alu::Cmp);
    0x95: Op::AluToD(Alu::Cmp, Sz::B), 0x05 => alu_to_d_inline::<1, 5>(Alu::Cmp);
    0x96: Op::AluToD(Alu::Cmp, Sz::W), 0x10 => alu_to_d_inline::<2, 0>(Alu::Cmp);
    0x97: Op::AluToD(Alu::Cmp, Sz::W), 0x11 => alu_to_d_inline::<2, 1>(Alu::Cmp);
    0x98: Op::AluToD(Alu::Cmp, Sz::W), 0x15 => alu_to_d_inline::<2, 5>(Alu::Cmp);
    0x99: Op::AluToD(Alu::Cmp, Sz::W), 0x18 => alu_to_d_inline::<2, 8>(Alu::Cmp);
    0x9A: Op::AluToD(Alu::Cmp, Sz::L), 0x20 => alu_to_d_inline::<4, 0>(Alu::Cmp);
    0x9B: Op::AluToD(Alu::Cmp, Sz::L), 0x21 => alu_to_d_inline::<4, 1>(Alu::Cmp);
    0x9C: Op::AluToD(Alu::Cmp, Sz::L), 0x25 => alu_to_d_inline::<4, 5>(Alu::Cmp);
    0x9D: Op::AluToD(Alu::Cmp, Sz::L), 0x28 => alu_to_d_inline::<4, 8>(Alu::Cmp);
    0x9E: Op::AluToD(Alu::And, Sz::B), 0x00 => alu_to_d_inline::<1, 0>(Alu::And);
    0x9F: Op::AluToD(Alu::And, Sz::B), 0x05 => alu_to_d_inline::<1, 5>(Alu::And);
    0xA0: Op::AluToD(Alu::And, Sz::W), 0x10 => alu_to_d_inline::<2, 0>(Alu::And);
    0xA1: Op::AluToD(Alu::And, Sz::W), 0x15 => alu_to_d_inline::<2, 5>(Alu::And);
    0xA2: Op::AluToD(Alu::And, Sz::W), 0x18 => alu_to_d_inline::<2, 8>(Alu::And);
    0xA3: Op::AluToD(Alu::And, Sz::L), 0x20 => alu_to_d_inline::<4, 0>(Alu::And);
    0xA4: Op::AluToD(Alu::And, Sz::L), 0x25 => alu_to_d_inline::<4, 5>(Alu::And);
    0xA5: Op::AluToD(Alu::And, Sz::L), 0x28 => alu_to_d_inline::<4, 8>(Alu::And);
    0xA6: Op::AluToD(Alu::Or, Sz::B), 0x00 => alu_to_d_inline::<1, 0>(Alu::Or);
    0xA7: Op::AluToD(Alu::Or, Sz::B), 0x05 => alu_to_d_inline::<1, 5>(Alu::Or);
    0xA8: Op::AluToD(Alu::Or, Sz::W), 0x10 => alu_to_d_inline::<2, 0>(Alu::Or);
    0xA9: Op::AluToD(Alu::Or, Sz::W), 0x15 => alu_to_d_inline::<2, 5>(Alu::Or);
    0xAA: Op::AluToD(Alu::Or, Sz::W), 0x18 => alu_to_d_inline::<2, 8>(Alu::Or);
    0xAB: Op::AluToD(Alu::Or, Sz::L), 0x20 => alu_to_d_inline::<4, 0>(Alu::Or);
    0xAC: Op::AluToD(Alu::Or, Sz::L), 0x25 => alu_to_d_inline::<4, 5>(Alu::Or);
    0xAD: Op::AluToD(Alu::Or, Sz::L), 0x28 => alu_to_d_inline::<4, 8>(Alu::Or);
    0xAE: Op::AluA(Alu::Add, Sz::W), 0x10 => alu_a_inline::<2, 0>(Alu::Add);
    0xAF: Op::AluA(Alu::Add, Sz::W), 0x11 => alu_a_inline::<2, 1>(Alu::Add);
    0xB0: Op::AluA(Alu::Add, Sz::W), 0x1B => alu_a_inline::<2, 11>(Alu::Add);
    0xB1: Op::AluA(Alu::Add, Sz::L), 0x20 => alu_a_inline::<4, 0>(Alu::Add);
    0xB2: Op::AluA(Alu::Add, Sz::L), 0x21 => alu_a_inline::<4, 1>(Alu::Add);
    0xB3: Op::AluA(Alu::Add, Sz::L), 0x22 => alu_a_inline::<4, 2>(Alu::Add);
    0xB4: Op::AluA(Alu::Add, Sz::L), 0x2B => alu_a_inline::<4, 11>(Alu::Add);
    0xB5: Op::AluA(Alu::Sub, Sz::W), 0x10 => alu_a_inline::<2, 0>(Alu::Sub);
    0xB6: Op::AluA(Alu::Sub, Sz::W), 0x11 => alu_a_inline::<2, 1>(Alu::Sub);
    0xB7: Op::AluA(Alu::Sub, Sz::W), 0x1B => alu_a_inline::<2, 11>(Alu::Sub);
    0xB8: Op::AluA(Alu::Sub, Sz::L), 0x20 => alu_a_inline::<4, 0>(Alu::Sub);
    0xB9: Op::AluA(Alu::Sub, Sz::L), 0x21 => alu_a_inline::<4, 1>(Alu::Sub);
    0xBA: Op::AluA(Alu::Sub, Sz::L), 0x22 => alu_a_inline::<4, 2>(Alu::Sub);
    0xBB: Op::AluA(Alu::Sub, Sz::L), 0x2B => alu_a_inline::<4, 11>(Alu::Sub);
    0xBC: Op::AluA(Alu::Cmp, Sz::W), 0x10 => alu_a_inline::<2, 0>(Alu::Cmp);
    0xBD: Op::AluA(Alu::Cmp, Sz::W), 0x11 => alu_a_inline::<2, 1>(Alu::Cmp);
    0xBE: Op::AluA(Alu::Cmp, Sz::W), 0x1B => alu_a_inline::<2, 11>(Alu::Cmp);
    0xBF: Op::AluA(Alu::Cmp, Sz::L), 0x20 => alu_a_inline::<4, 0>(Alu::Cmp);
    0xC0: Op::AluA(Alu::Cmp, Sz::L), 0x21 => alu_a_inline::<4, 1>(Alu::Cmp);
    0xC1: Op::AluA(Alu::Cmp, Sz::L), 0x22 => alu_a_inline::<4, 2>(Alu::Cmp);
    0xC2: Op::AluA(Alu::Cmp, Sz::L), 0x2B => alu_a_inline::<4, 11>(Alu::Cmp);
    0xC3: Op::AluImm(Alu::Add, Sz::B), 0x00 => alu_imm_inline::<1, 0>(Alu::Add);
    0xC4: Op::AluImm(Alu::Add, Sz::W), 0x10 => alu_imm_inline::<2, 0>(Alu::Add);
    0xC5: Op::AluImm(Alu::Add, Sz::L), 0x20 => alu_imm_inline::<4, 0>(Alu::Add);
    0xC6: Op::AluImm(Alu::Sub, Sz::B), 0x00 => alu_imm_inline::<1, 0>(Alu::Sub);
    0xC7: Op::AluImm(Alu::Sub, Sz::W), 0x10 => alu_imm_inline::<2, 0>(Alu::Sub);
    0xC8: Op::AluImm(Alu::Sub, Sz::L), 0x20 => alu_imm_inline::<4, 0>(Alu::Sub);
    0xC9: Op::AluImm(Alu::Cmp, Sz::B), 0x00 => alu_imm_inline::<1, 0>(Alu::Cmp);
    0xCA: Op::AluImm(Alu::Cmp, Sz::W), 0x10 => alu_imm_inline::<2, 0>(Alu::Cmp);
    0xCB: Op::AluImm(Alu::Cmp, Sz::L), 0x20 => alu_imm_inline::<4, 0>(Alu::Cmp);
    0xCC: Op::AluImm(Alu::And, Sz::B), 0x00 => alu_imm_inline::<1, 0>(Alu::And);
    0xCD: Op::AluImm(Alu::And, Sz::W), 0x10 => alu_imm_inline::<2, 0>(Alu::And);
    0xCE: Op::AluImm(Alu::And, Sz::L), 0x20 => alu_imm_inline::<4, 0>(Alu::And);
    0xCF: Op::AluImm(Alu::Or, Sz::B), 0x00 => alu_imm_inline::<1, 0>(Alu::Or);
    0xD0: Op::AluImm(Alu::Or, Sz::W), 0x10 => alu_imm_inline::<2, 0>(Alu::Or);
    0xD1: Op::AluImm(Alu::Or, Sz::L), 0x20 => alu_imm_inline::<4, 0>(Alu::Or);
    0xD2: Op::AluImm(Alu::Eor, Sz::B), 0x00 => alu_imm_inline::<1, 0>(Alu::Eor);
    0xD3: Op::AluImm(Alu::Eor, Sz::W), 0x10 => alu_imm_inline::<2, 0>(Alu::Eor);
    0xD4: Op::AluImm(Alu::Eor, Sz::L), 0x20 => alu_imm_inline::<4, 0>(Alu::Eor);
    0xD5: Op::AluToEa(Alu::Add, Sz::W), 0x12 => alu_to_ea_inline::<2, 2>(Alu::Add);
    0xD6: Op::AluToEa(Alu::Add, Sz::L), 0x22 => alu_to_ea_inline::<4, 2>(Alu::Add);
    0xD7: Op::AluToEa(Alu::Sub, Sz::W), 0x12 => alu_to_ea_inline::<2, 2>(Alu::Sub);
    0xD8: Op::AluToEa(Alu::Sub, Sz::L), 0x22 => alu_to_ea_inline::<4, 2>(Alu::Sub);
    0xD9: Op::AluToEa(Alu::And, Sz::W), 0x12 => alu_to_ea_inline::<2, 2>(Alu::And);
    0xDA: Op::AluToEa(Alu::And, Sz::L), 0x22 => alu_to_ea_inline::<4, 2>(Alu::And);
    0xDB: Op::AluToEa(Alu::Or, Sz::W), 0x12 => alu_to_ea_inline::<2, 2>(Alu::Or);
    0xDC: Op::AluToEa(Alu::Or, Sz::L), 0x22 => alu_to_ea_inline::<4, 2>(Alu::Or);
    0xDD: Op::AluToEa(Alu::Eor, Sz::W), 0x12 => alu_to_ea_inline::<2, 2>(Alu::Eor);
    0xDE: Op::AluToEa(Alu::Eor, Sz::L), 0x22 => alu_to_ea_inline::<4, 2>(Alu::Eor);
    0xDF: Op::Addq(Sz::B), 0x00 => addq_inline::<1, 0>(false);
    0xE0: Op::Addq(Sz::W), 0x10 => addq_inline::<2, 0>(false);
    0xE1: Op::Addq(Sz::L), 0x20 => addq_inline::<4, 0>(false);
    0xE2: Op::Subq(Sz::B), 0x00 => addq_inline::<1, 0>(true);
    0xE3: Op::Subq(Sz::W), 0x10 => addq_inline::<2, 0>(true);
    0xE4: Op::Subq(Sz::L), 0x20 => addq_inline::<4, 0>(true);
    0xE5: Op::MoveToD(Sz::W), 0x10 => move_to_d_inline::<2, 0>();
    0xE6: Op::MoveToD(Sz::W), 0x12 => move_to_d_inline::<2, 2>();
    0xE7: Op::MoveToD(Sz::W), 0x13 => move_to_d_inline::<2, 3>();
    0xE8: Op::MoveToD(Sz::W), 0x15 => move_to_d_inline::<2, 5>();
    0xE9: Op::MoveToD(Sz::W), 0x16 => move_to_d_inline::<2, 6>();
    0xEA: Op::MoveToD(Sz::W), 0x18 => move_to_d_inline::<2, 8>();
    0xEB: Op::MoveToD(Sz::L), 0x20 => move_to_d_inline::<4, 0>();
    0xEC: Op::MoveToD(Sz::L), 0x21 => move_to_d_inline::<4, 1>();
    0xED: Op::MoveToD(Sz::L), 0x22 => move_to_d_inline::<4, 2>();
    0xEE: Op::MoveToD(Sz::L), 0x23 => move_to_d_inline::<4, 3>();
    0xEF: Op::MoveToD(Sz::L), 0x25 => move_to_d_inline::<4, 5>();
    0xF0: Op::MoveToD(Sz::L), 0x26 => move_to_d_inline::<4, 6>();
    0xF1: Op::MoveToD(Sz::L), 0x28 => move_to_d_inline::<4, 8>();
    0xF2: Op::Move(Sz::B), 0x03 => move_postinc_or::<1, 3>(false);
    0xF3: Op::Move(Sz::W), 0x10 => move_inline::<2, 0>();
    0xF4: Op::Move(Sz::L), 0x20 => move_postinc_or::<4, 0>(true);
    0xF5: Op::Move(Sz::L), 0x21 => move_inline::<4, 1>();
    0xF6: Op::Move(Sz::L), 0x23 => move_postinc_or::<4, 3>(false);
    0xF7: Op::Movea(Sz::L), 0x20 => movea_inline::<4, 0>();
    0xF8: Op::Movea(Sz::L), 0x25 => movea_inline::<4, 5>();
    0xF9: Op::Movea(Sz::L), 0x26 => movea_inline::<4, 6>();
    0xFA: Op::Movea(Sz::L), 0x28 => movea_inline::<4, 8>();
    0xFB: Op::Movea(Sz::L), 0x2B => movea_inline::<4, 11>();
    0xFC: Op::Tst(Sz::B), 0x00 => tst_inline::<1, 0>();
    0xFD: Op::Tst(Sz::W), 0x10 => tst_inline::<2, 0>();
    0xFE: Op::Tst(Sz::L), 0x20 => tst_inline::<4, 0>();
}

impl<B: Bus + Observer> Ctx<'_, B> {
    #[inline(always)]
    pub(crate) fn exec(&mut self, op: u16, e: &'static Entry) -> R<()> {
        let sm = e.sm;
        if sm >= 0x80 {
            if let Some(r) = self.exec_hot(op, sm) {
                return r;
            }
        }
        match e.op {
            Op::Illegal => self.illegal_exc(ExceptionKind::IllegalInstruction, 4),
            Op::LineA => self.illegal_exc(ExceptionKind::LineA, 10),
            Op::LineF => self.illegal_exc(ExceptionKind::LineF, 11),
            // The copy loops' (An)+ destinations and the word and long
            // register sources are hot forms (`hot_forms!`); the rest
            // through `op_move`'s instances.
            Op::Move(s) => by_sm!(self, sm, s, op_move(op)),
            // Register and immediate sources inline (the common sources
            // as hot forms, `hot_forms!`); other sources through
            // `op_move`'s instances (their Dn-destination arm).
            Op::MoveToD(s) => match sm {
                0x00 => self.move_to_d_inline::<1, 0>(op),
                0x03 => self.move_to_d_inline::<1, 3>(op),
                0x05 => self.move_to_d_inline::<1, 5>(op),
                0x0B => self.move_to_d_inline::<1, 11>(op),
                0x11 => self.move_to_d_inline::<2, 1>(op),
                0x1B => self.move_to_d_inline::<2, 11>(op),
                0x2B => self.move_to_d_inline::<4, 11>(op),
                _ => by_sm!(self, sm, s, op_move(op)),
            },
            Op::Movea(s) => match sm {
                0x10 => self.movea_inline::<2, 0>(op),
                0x11 => self.movea_inline::<2, 1>(op),
                0x15 => self.movea_inline::<2, 5>(op),
                0x1B => self.movea_inline::<2, 11>(op),
                0x21 => self.movea_inline::<4, 1>(op),
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
            // Their inline forms are hot forms (`hot_forms!`): the rest
            // through the specialised out-of-line handlers.
            Op::AluToD(a, s) => by_sm!(self, sm, s, op_alu_to_d(op, a)),
            Op::AluToEa(a, s) => by_sm!(self, sm, s, op_alu_to_ea(op, a)),
            Op::AluImm(a, s) => by_sm!(self, sm, s, op_alu_imm(op, a)),
            Op::AluA(a, s) => by_sm!(self, sm, s, op_alu_a(op, a)),
            Op::Addq(s) => by_sm!(self, sm, s, op_addq(op, false)),
            Op::Subq(s) => by_sm!(self, sm, s, op_addq(op, true)),
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
                0x02 => self.tst_inline::<1, 2>(op),
                0x05 => self.tst_inline::<1, 5>(op),
                0x12 => self.tst_inline::<2, 2>(op),
                0x15 => self.tst_inline::<2, 5>(op),
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
