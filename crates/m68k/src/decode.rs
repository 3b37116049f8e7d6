//! The 64K-entry decode table: every opcode word maps to a small
//! [`Op`] descriptor, built once.  Operand fields (registers, modes, sizes
//! not encoded in the variant) are taken from the opcode word at execution.
//! Invalid combinations (e.g. an address register where only data
//! alterable modes are allowed) decode to [`Op::Illegal`].

use std::sync::OnceLock;

/// Operand size of a decoded instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sz {
    B,
    W,
    L,
}

/// Kind of a bit instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BitK {
    Tst,
    Chg,
    Clr,
    Set,
}

/// Kind of a shift/rotate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ShK {
    As,
    Ls,
    Rox,
    Ro,
}

/// Binary ALU operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Alu {
    Add,
    Sub,
    And,
    Or,
    Eor,
    Cmp,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    Illegal,
    LineA,
    LineF,
    // move.rs
    Move(Sz),
    /// MOVE to Dn (decoded apart so that the dispatch can run the
    /// register and immediate sources inline).
    MoveToD(Sz),
    Movea(Sz),
    Moveq,
    Movem {
        to_mem: bool,
        long: bool,
    },
    Movep {
        to_mem: bool,
        long: bool,
    },
    Lea,
    Pea,
    Exg,
    Swap,
    Ext(Sz),
    Clr(Sz),
    // arith.rs / logic.rs
    /// <ea> op Dn -> Dn
    AluToD(Alu, Sz),
    /// Dn op <ea> -> <ea>
    AluToEa(Alu, Sz),
    /// #imm op <ea> -> <ea>
    AluImm(Alu, Sz),
    /// ADDA/SUBA/CMPA
    AluA(Alu, Sz),
    Addq(Sz),
    Subq(Sz),
    AddqA,
    SubqA,
    Addx {
        mem: bool,
        sz: Sz,
    },
    Subx {
        mem: bool,
        sz: Sz,
    },
    Cmpm(Sz),
    Neg(Sz),
    Negx(Sz),
    Not(Sz),
    Tst(Sz),
    /// ORI/ANDI/EORI to CCR (false) or SR (true).
    LogicImmSr {
        op: Alu,
        sr: bool,
    },
    // shift.rs
    ShiftReg(ShK, Sz),
    ShiftMem(ShK),
    // bit.rs
    BitDyn(BitK),
    BitImm(BitK),
    // bcd.rs
    Abcd {
        mem: bool,
    },
    Sbcd {
        mem: bool,
    },
    Nbcd,
    // muldiv.rs
    Mulu,
    Muls,
    Divu,
    Divs,
    // branch.rs
    Bcc,
    Bsr,
    DBcc,
    Scc,
    Jmp,
    Jsr,
    Rts,
    Rtr,
    Rte,
    // system.rs
    Trap,
    Trapv,
    Chk,
    Link,
    Unlk,
    MoveUsp {
        to_usp: bool,
    },
    MoveFromSr,
    MoveToCcr,
    MoveToSr,
    Reset,
    Nop,
    Stop,
    Tas,
}

/// Addressing-mode classes (68000 PRM, table 2-4).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    All,
    Data,
    DataAlt,
    MemAlt,
    Control,
}

fn ea_ok(ea: u16, class: Class) -> bool {
    let mode = (ea >> 3) & 7;
    let reg = ea & 7;
    let (is_d, is_a) = (mode == 0, mode == 1);
    let is_7 = mode == 7;
    if is_7 && reg > 4 {
        return false;
    }
    let pc_rel = is_7 && (reg == 2 || reg == 3);
    let imm = is_7 && reg == 4;
    match class {
        Class::All => true,
        Class::Data => !is_a,
        Class::DataAlt => !is_a && !pc_rel && !imm,
        Class::MemAlt => !is_d && !is_a && !pc_rel && !imm,
        Class::Control => !is_d && !is_a && !imm && mode != 3 && mode != 4,
    }
}

fn size2(bits: u16) -> Option<Sz> {
    match bits & 3 {
        0 => Some(Sz::B),
        1 => Some(Sz::W),
        2 => Some(Sz::L),
        _ => None,
    }
}

/// Decode one opcode word.
pub(crate) fn decode(op: u16) -> Op {
    let ea = op & 0x3F;
    let mode = (ea >> 3) & 7;
    let sz = size2(op >> 6);
    let ok = |c: Class| ea_ok(ea, c);
    match op >> 12 {
        0x0 => {
            if op & 0x0100 != 0 {
                if mode == 1 {
                    return Op::Movep {
                        to_mem: op & 0x80 != 0,
                        long: op & 0x40 != 0,
                    };
                }
                let k = bitk(op);
                let valid = if k == BitK::Tst {
                    ok(Class::Data)
                } else {
                    ok(Class::DataAlt)
                };
                return if valid { Op::BitDyn(k) } else { Op::Illegal };
            }
            let which = (op >> 9) & 7;
            if which == 4 {
                let k = bitk(op);
                let valid = if k == BitK::Tst {
                    ok(Class::Data) && ea != 0x3C
                } else {
                    ok(Class::DataAlt)
                };
                return if valid { Op::BitImm(k) } else { Op::Illegal };
            }
            let alu = match which {
                0 => Alu::Or,
                1 => Alu::And,
                2 => Alu::Sub,
                3 => Alu::Add,
                5 => Alu::Eor,
                6 => Alu::Cmp,
                _ => return Op::Illegal,
            };
            if ea == 0x3C && matches!(alu, Alu::Or | Alu::And | Alu::Eor) {
                return match (op >> 6) & 3 {
                    0 => Op::LogicImmSr { op: alu, sr: false },
                    1 => Op::LogicImmSr { op: alu, sr: true },
                    _ => Op::Illegal,
                };
            }
            match sz {
                Some(s) if ok(Class::DataAlt) => Op::AluImm(alu, s),
                _ => Op::Illegal,
            }
        }
        0x1..=0x3 => {
            let s = match op >> 12 {
                1 => Sz::B,
                3 => Sz::W,
                _ => Sz::L,
            };
            let dmode = (op >> 6) & 7;
            let dea = ((op >> 9) & 7) | (dmode << 3);
            if !ok(Class::All) || (s == Sz::B && mode == 1) {
                return Op::Illegal;
            }
            if dmode == 1 {
                return if s == Sz::B {
                    Op::Illegal
                } else {
                    Op::Movea(s)
                };
            }
            if dmode == 0 {
                Op::MoveToD(s)
            } else if ea_ok(dea, Class::DataAlt) {
                Op::Move(s)
            } else {
                Op::Illegal
            }
        }
        0x4 => decode4(op),
        0x5 => {
            if (op >> 6) & 3 == 3 {
                if mode == 1 {
                    return Op::DBcc;
                }
                return if ok(Class::DataAlt) {
                    Op::Scc
                } else {
                    Op::Illegal
                };
            }
            let s = sz.unwrap_or(Sz::B);
            let sub = op & 0x0100 != 0;
            if mode == 1 {
                if s == Sz::B {
                    return Op::Illegal;
                }
                return if sub { Op::SubqA } else { Op::AddqA };
            }
            if !ok(Class::DataAlt) {
                return Op::Illegal;
            }
            if sub {
                Op::Subq(s)
            } else {
                Op::Addq(s)
            }
        }
        0x6 => {
            if (op >> 8) & 15 == 1 {
                Op::Bsr
            } else {
                Op::Bcc
            }
        }
        0x7 => {
            if op & 0x0100 == 0 {
                Op::Moveq
            } else {
                Op::Illegal
            }
        }
        0x8 | 0xC => {
            let is_or = op >> 12 == 8;
            let opm = (op >> 6) & 7;
            if opm == 3 {
                if !ok(Class::Data) {
                    return Op::Illegal;
                }
                return if is_or { Op::Divu } else { Op::Mulu };
            }
            if opm == 7 {
                if !ok(Class::Data) {
                    return Op::Illegal;
                }
                return if is_or { Op::Divs } else { Op::Muls };
            }
            if opm == 4 && mode <= 1 {
                return if is_or {
                    Op::Sbcd { mem: mode == 1 }
                } else {
                    Op::Abcd { mem: mode == 1 }
                };
            }
            if !is_or && (opm == 5 || opm == 6) && mode <= 1 {
                return match (opm, mode) {
                    (5, _) | (6, 1) => Op::Exg,
                    _ => Op::Illegal,
                };
            }
            let alu = if is_or { Alu::Or } else { Alu::And };
            let s = match sz {
                Some(s) => s,
                None => return Op::Illegal,
            };
            if opm & 4 == 0 {
                if ok(Class::Data) {
                    Op::AluToD(alu, s)
                } else {
                    Op::Illegal
                }
            } else if ok(Class::MemAlt) {
                Op::AluToEa(alu, s)
            } else {
                Op::Illegal
            }
        }
        0x9 | 0xD => {
            let add = op >> 12 == 0xD;
            let alu = if add { Alu::Add } else { Alu::Sub };
            let opm = (op >> 6) & 7;
            if opm == 3 || opm == 7 {
                if !ok(Class::All) {
                    return Op::Illegal;
                }
                return Op::AluA(alu, if opm == 3 { Sz::W } else { Sz::L });
            }
            let s = sz.unwrap_or(Sz::B);
            if opm & 4 == 0 {
                if !ok(Class::All) || (s == Sz::B && mode == 1) {
                    return Op::Illegal;
                }
                return Op::AluToD(alu, s);
            }
            if mode <= 1 {
                let mem = mode == 1;
                return if add {
                    Op::Addx { mem, sz: s }
                } else {
                    Op::Subx { mem, sz: s }
                };
            }
            if ok(Class::MemAlt) {
                Op::AluToEa(alu, s)
            } else {
                Op::Illegal
            }
        }
        0xA => Op::LineA,
        0xB => {
            let opm = (op >> 6) & 7;
            if opm == 3 || opm == 7 {
                if !ok(Class::All) {
                    return Op::Illegal;
                }
                return Op::AluA(Alu::Cmp, if opm == 3 { Sz::W } else { Sz::L });
            }
            let s = sz.unwrap_or(Sz::B);
            if opm & 4 == 0 {
                if !ok(Class::All) || (s == Sz::B && mode == 1) {
                    return Op::Illegal;
                }
                return Op::AluToD(Alu::Cmp, s);
            }
            if mode == 1 {
                return Op::Cmpm(s);
            }
            if ok(Class::DataAlt) {
                Op::AluToEa(Alu::Eor, s)
            } else {
                Op::Illegal
            }
        }
        0xE => {
            if (op >> 6) & 3 == 3 {
                if op & 0x0800 != 0 || !ok(Class::MemAlt) {
                    return Op::Illegal;
                }
                Op::ShiftMem(shk((op >> 9) & 3))
            } else {
                Op::ShiftReg(shk((op >> 3) & 3), sz.unwrap_or(Sz::B))
            }
        }
        _ => Op::LineF,
    }
}

fn bitk(op: u16) -> BitK {
    match (op >> 6) & 3 {
        0 => BitK::Tst,
        1 => BitK::Chg,
        2 => BitK::Clr,
        _ => BitK::Set,
    }
}

fn shk(k: u16) -> ShK {
    match k & 3 {
        0 => ShK::As,
        1 => ShK::Ls,
        2 => ShK::Rox,
        _ => ShK::Ro,
    }
}

fn decode4(op: u16) -> Op {
    let ea = op & 0x3F;
    let mode = (ea >> 3) & 7;
    let ok = |c: Class| ea_ok(ea, c);
    let sz = size2(op >> 6);
    if op & 0x0100 != 0 {
        // CHK (bit 7-6 = 10) and LEA (11)
        return match (op >> 6) & 3 {
            2 if ok(Class::Data) => Op::Chk,
            3 if ok(Class::Control) => Op::Lea,
            _ => Op::Illegal,
        };
    }
    match (op >> 8) & 0xF {
        0x0 => match sz {
            Some(s) if ok(Class::DataAlt) => Op::Negx(s),
            None if ok(Class::DataAlt) => Op::MoveFromSr,
            _ => Op::Illegal,
        },
        0x2 => match sz {
            Some(s) if ok(Class::DataAlt) => Op::Clr(s),
            _ => Op::Illegal,
        },
        0x4 => match sz {
            Some(s) if ok(Class::DataAlt) => Op::Neg(s),
            None if ok(Class::Data) => Op::MoveToCcr,
            _ => Op::Illegal,
        },
        0x6 => match sz {
            Some(s) if ok(Class::DataAlt) => Op::Not(s),
            None if ok(Class::Data) => Op::MoveToSr,
            _ => Op::Illegal,
        },
        0x8 => match (op >> 6) & 3 {
            0 if ok(Class::DataAlt) => Op::Nbcd,
            1 if mode == 0 => Op::Swap,
            1 if ok(Class::Control) => Op::Pea,
            2 if mode == 0 => Op::Ext(Sz::W),
            3 if mode == 0 => Op::Ext(Sz::L),
            2 | 3 if ok(Class::Control) || mode == 4 => {
                if mode == 4 || ok(Class::Control) && !matches!(ea, 0x3A | 0x3B) {
                    Op::Movem {
                        to_mem: true,
                        long: op & 0x40 != 0,
                    }
                } else {
                    Op::Illegal
                }
            }
            _ => Op::Illegal,
        },
        0xA => {
            if op == 0x4AFC {
                return Op::Illegal;
            }
            match sz {
                Some(s) if ok(Class::DataAlt) => Op::Tst(s),
                None if ok(Class::DataAlt) => Op::Tas,
                _ => Op::Illegal,
            }
        }
        0xC => match (op >> 6) & 3 {
            2 | 3 if ok(Class::Control) || mode == 3 => Op::Movem {
                to_mem: false,
                long: op & 0x40 != 0,
            },
            _ => Op::Illegal,
        },
        0xE => match (op >> 4) & 0xF {
            4 => Op::Trap,
            5 => {
                if op & 8 == 0 {
                    Op::Link
                } else {
                    Op::Unlk
                }
            }
            6 => Op::MoveUsp {
                to_usp: op & 8 == 0,
            },
            7 => match op & 0xF {
                0 => Op::Reset,
                1 => Op::Nop,
                2 => Op::Stop,
                3 => Op::Rte,
                5 => Op::Rts,
                6 => Op::Trapv,
                7 => Op::Rtr,
                _ => Op::Illegal,
            },
            8..=0xB if ok(Class::Control) => Op::Jsr,
            0xC..=0xF if ok(Class::Control) => Op::Jmp,
            _ => Op::Illegal,
        },
        _ => Op::Illegal,
    }
}

/// One decode-table entry: the operation and, for the size- and
/// mode-specialised handlers, `sm` = 16 times the size index (0 byte,
/// 1 word, 2 long) plus [`crate::ea::ea_index`] of the opcode's EA field,
/// so that the dispatcher picks the specialised handler with one jump.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, align(4))]
pub(crate) struct Entry {
    pub op: Op,
    pub sm: u8,
}

fn size_index(s: Sz) -> u8 {
    match s {
        Sz::B => 0,
        Sz::W => 1,
        Sz::L => 2,
    }
}

/// The `sm` byte of [`Entry`] for opcode word `w` decoded as `op`.
fn size_mode(w: u16, op: Op) -> u8 {
    if op == Op::Lea {
        // No size: the EA mode index alone.
        return crate::ea::ea_index(w);
    }
    let s = match op {
        Op::Move(s)
        | Op::MoveToD(s)
        | Op::Movea(s)
        | Op::Clr(s)
        | Op::AluToD(_, s)
        | Op::AluToEa(_, s)
        | Op::AluImm(_, s)
        | Op::AluA(_, s)
        | Op::Addq(s)
        | Op::Subq(s)
        | Op::Tst(s) => s,
        _ => return 0,
    };
    size_index(s) * 16 + crate::ea::ea_index(w)
}

static TABLE: OnceLock<Box<[Entry; 65536]>> = OnceLock::new();

/// The decode table (built on first use, then shared).
pub(crate) fn table() -> &'static [Entry; 65536] {
    TABLE.get_or_init(|| {
        let mut t = Box::new(
            [Entry {
                op: Op::Illegal,
                sm: 0,
            }; 65536],
        );
        for (i, e) in t.iter_mut().enumerate() {
            let op = decode(i as u16);
            *e = Entry {
                op,
                sm: crate::ops::hot_sm(op, size_mode(i as u16, op)),
            };
        }
        t
    })
}

#[cfg(test)]
mod tests {
    /// The hot forms (`ops::hot_forms!`) have their own `sm` values, in
    /// order from 0x80, each decoded for some opcode word; no other `sm`
    /// reaches 0x80.
    #[test]
    fn hot_forms_are_decoded() {
        let hot = crate::ops::HOT_SMS;
        for (i, &h) in hot.iter().enumerate() {
            assert_eq!(h as usize, 0x80 + i);
        }
        let mut used = vec![false; hot.len()];
        for (w, e) in super::table().iter().enumerate() {
            assert!(super::size_mode(w as u16, e.op) < 0x80);
            if e.sm >= 0x80 {
                used[(e.sm - 0x80) as usize] = true;
            }
        }
        let unused: Vec<_> = (0..hot.len())
            .filter(|&i| !used[i])
            .map(|i| hot[i])
            .collect();
        assert!(unused.is_empty(), "hot forms never decoded: {unused:02X?}");
    }
}
