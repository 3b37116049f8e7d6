//! A 68000 disassembler (Motorola syntax), for showing code: not on the hot
//! path, never panics on any word sequence.
//!
//! Knowledge source: the M68000 Programmer's Reference Manual (instruction
//! encodings in sections 4, 6 and 8, addressing-mode categories in table 2-4),
//! restricted to what the 68000 itself implements: every 68010/68020+ form
//! (MOVEC, MOVES, RTD, BKPT, EXTB, MULL/DIVL, CHK.L, bit fields, PACK/UNPK,
//! CAS, TST/CMPI on address registers or PC-relative/immediate operands,
//! MOVE from CCR, 32-bit branch displacements, ...) is invalid, as it is to
//! the core's decode table (a test checks both agree on every opcode word).
//! A 68000 ignores bits 10-8 of an index extension word (scale and the
//! 68020 full-format bit), so does this disassembler: it shows what the
//! 68000 executes.
//!
//! Syntax: lower-case mnemonics with a size suffix (`move.l`, `addq.w`,
//! `beq.s`, `bra.w`), registers `d0`-`d7`, `a0`-`a6`, `sp` (a7), `sr`, `ccr`,
//! `usp`; operands `(a0)`, `(a0)+`, `-(a0)`, `4(a0)`, `-$10(a0,d1.w)`,
//! `($ffff8000).w`, `($ff0000).l`, `$1234(pc)` and `$1234(pc,d0.l)` (the
//! PC-relative address, resolved), `#$ff` immediates (unsigned, masked to
//! the size; MOVEQ's is signed), branch targets resolved to `$addr`, MOVEM
//! lists `d0-d3/a2/a5-a6`. Numbers below 10 are printed in decimal, others
//! in `$` hexadecimal. An opcode word the 68000 does not implement is shown
//! as `dc.w $nnnn` (4 hex digits, 2 bytes), as are line-A and line-F words
//! (which trap to their own exception vectors): [`Kind`] tells them apart.
//! How this compares with binutils' objdump, instruction by instruction, and
//! every known difference: `tests/disasm_objdump.rs`.

use std::fmt;

/// What a decoded word sequence is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A 68000 instruction (ILLEGAL, 0x4AFC, included: it is the defined
    /// illegal instruction).
    Instruction,
    /// An opcode word the 68000 does not implement (illegal-instruction
    /// exception).
    Invalid,
    /// A line-A word (0xAxxx): line 1010 emulator exception.
    LineA,
    /// A line-F word (0xFxxx): line 1111 emulator exception.
    LineF,
}

/// One disassembled instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instruction {
    /// Address of the opcode word.
    pub pc: u32,
    /// Length in bytes (2 to 10).
    pub len: u32,
    pub kind: Kind,
    /// Mnemonic with size suffix, e.g. `move.l`, `dbra`, `dc.w`.
    pub mnemonic: String,
    /// Operands, comma-separated, e.g. `(a0)+,d1`; empty for none.
    pub operands: String,
    /// Branch / jump / call target where the instruction has a static one
    /// (Bcc, BSR, DBcc, and JMP/JSR with an absolute or PC-relative
    /// operand), otherwise the address of a PC-relative operand (LEA, MOVE,
    /// ...), for symbolising by the caller.
    pub target: Option<u32>,
}

impl fmt::Display for Instruction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.operands.is_empty() {
            f.write_str(&self.mnemonic)
        } else {
            write!(f, "{} {}", self.mnemonic, self.operands)
        }
    }
}

/// Why a word sequence could not be disassembled.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DisasmError {
    #[error("instruction address {0:#x} is odd (68000 instructions are word-aligned)")]
    OddAddress(u32),
    #[error("no code at {addr:#x} (needed for the instruction at {pc:#x})")]
    OutOfBounds { pc: u32, addr: u32 },
}

/// Disassemble the instruction at `pc`; `word(addr)` gives the big-endian
/// word at an even address, or `None` outside the code.
pub fn disassemble(pc: u32, word: impl Fn(u32) -> Option<u16>) -> Result<Instruction, DisasmError> {
    if pc & 1 != 0 {
        return Err(DisasmError::OddAddress(pc));
    }
    let op = word(pc).ok_or(DisasmError::OutOfBounds { pc, addr: pc })?;
    let mut d = Dis {
        pc,
        next: pc.wrapping_add(2),
        word: &word,
        target: None,
    };
    let (kind, mnemonic, operands) = match d.decode(op)? {
        Some((m, o)) => (Kind::Instruction, m, o),
        None => {
            d.next = pc.wrapping_add(2);
            d.target = None;
            let kind = match op >> 12 {
                0xA => Kind::LineA,
                0xF => Kind::LineF,
                _ => Kind::Invalid,
            };
            (kind, "dc.w".to_string(), format!("${op:04x}"))
        }
    };
    Ok(Instruction {
        pc,
        len: d.next.wrapping_sub(pc),
        kind,
        mnemonic,
        operands,
        target: d.target,
    })
}

/// [`disassemble`] over a byte slice holding the code from address `base`.
pub fn disassemble_bytes(code: &[u8], base: u32, pc: u32) -> Result<Instruction, DisasmError> {
    disassemble(pc, |a| {
        let off = a.wrapping_sub(base) as usize;
        if a < base || off.checked_add(2)? > code.len() {
            return None;
        }
        Some(u16::from_be_bytes([code[off], code[off + 1]]))
    })
}

/// The instructions from `start` up to `end` (exclusive), e.g. a function's
/// `[address, address + size)`: each item is one instruction, or the error
/// that ends the walk (code ending inside an instruction, an odd start).
/// An instruction that starts before `end` is yielded whole even if it
/// runs past it.
pub fn disassemble_range<F: Fn(u32) -> Option<u16>>(
    start: u32,
    end: u32,
    word: F,
) -> impl Iterator<Item = Result<Instruction, DisasmError>> {
    let mut pc = Some(start);
    std::iter::from_fn(move || {
        let at = pc.filter(|&p| p < end)?;
        let r = disassemble(at, &word);
        // Stop after an error, and at the top of the address space.
        pc = match &r {
            Ok(i) => at.checked_add(i.len),
            Err(_) => None,
        };
        Some(r)
    })
}

/// `n` below 10 in decimal, otherwise `$` hexadecimal.
fn hex(n: u32) -> String {
    if n < 10 {
        n.to_string()
    } else {
        format!("${n:x}")
    }
}

fn shex(n: i32) -> String {
    if n < 0 {
        format!("-{}", hex(n.unsigned_abs()))
    } else {
        hex(n as u32)
    }
}

fn addr(a: u32) -> String {
    format!("${a:x}")
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Size {
    B,
    W,
    L,
}

impl Size {
    fn suffix(self) -> &'static str {
        match self {
            Size::B => ".b",
            Size::W => ".w",
            Size::L => ".l",
        }
    }
}

/// Size field 00/01/10 of most instructions; 11 is not a size.
fn size2(bits: u16) -> Option<Size> {
    match bits & 3 {
        0 => Some(Size::B),
        1 => Some(Size::W),
        2 => Some(Size::L),
        _ => None,
    }
}

/// Addressing-mode categories (PRM table 2-4).
const DN: u8 = 1;
const AN: u8 = 2;
const IND: u8 = 4; // (An)
const POST: u8 = 8; // (An)+
const PRE: u8 = 16; // -(An)
const CTL_AN: u8 = 32; // d16(An), d8(An,Xn), abs.w, abs.l
const PCREL: u8 = 64; // d16(PC), d8(PC,Xn)
const IMM: u8 = 128;
const ALL: u8 = 0xFF;
const DATA: u8 = ALL & !AN;
const DATA_ALT: u8 = DN | IND | POST | PRE | CTL_AN;
const MEM_ALT: u8 = IND | POST | PRE | CTL_AN;
const CONTROL: u8 = IND | CTL_AN | PCREL;
const ALTERABLE: u8 = DN | AN | IND | POST | PRE | CTL_AN;

/// The category bit of a 6-bit EA field, 0 for the unused mode-7 codes.
fn category(ea: u16) -> u8 {
    match (ea >> 3) & 7 {
        0 => DN,
        1 => AN,
        2 => IND,
        3 => POST,
        4 => PRE,
        5 | 6 => CTL_AN,
        _ => match ea & 7 {
            0 | 1 => CTL_AN,
            2 | 3 => PCREL,
            4 => IMM,
            _ => 0,
        },
    }
}

fn ok(ea: u16, allowed: u8) -> bool {
    category(ea) & allowed != 0
}

fn dreg(r: u16) -> String {
    format!("d{}", r & 7)
}

fn areg(r: u16) -> String {
    if r & 7 == 7 {
        "sp".to_string()
    } else {
        format!("a{}", r & 7)
    }
}

const CONDS: [&str; 16] = [
    "t", "f", "hi", "ls", "cc", "cs", "ne", "eq", "vc", "vs", "pl", "mi", "ge", "lt", "gt", "le",
];

type Out = Option<(String, String)>;

struct Dis<'a, F: Fn(u32) -> Option<u16>> {
    pc: u32,
    next: u32,
    word: &'a F,
    target: Option<u32>,
}

fn ins(m: impl Into<String>, o: impl Into<String>) -> Out {
    Some((m.into(), o.into()))
}

impl<F: Fn(u32) -> Option<u16>> Dis<'_, F> {
    fn ext(&mut self) -> Result<u16, DisasmError> {
        let a = self.next;
        let w = (self.word)(a).ok_or(DisasmError::OutOfBounds {
            pc: self.pc,
            addr: a,
        })?;
        self.next = a.wrapping_add(2);
        Ok(w)
    }

    fn ext_long(&mut self) -> Result<u32, DisasmError> {
        let hi = self.ext()?;
        let lo = self.ext()?;
        Ok(u32::from(hi) << 16 | u32::from(lo))
    }

    fn imm(&mut self, s: Size) -> Result<String, DisasmError> {
        Ok(match s {
            Size::B => format!("#{}", hex(u32::from(self.ext()? & 0xFF))),
            Size::W => format!("#{}", hex(u32::from(self.ext()?))),
            Size::L => format!("#{}", hex(self.ext_long()?)),
        })
    }

    /// d8(base,Xn.s) from a brief extension word (bits 10-8 ignored, as the
    /// 68000 does).
    fn index(ext: u16) -> (i32, String) {
        let r = (ext >> 12) & 7;
        let x = if ext & 0x8000 != 0 { areg(r) } else { dreg(r) };
        let s = if ext & 0x0800 != 0 { "l" } else { "w" };
        (i32::from(ext as u8 as i8), format!("{x}.{s}"))
    }

    /// The operand text of EA field `ea` (mode<<3|reg) of size `s`, reading
    /// its extension words; `None` for the unused mode-7 codes.
    fn ea(&mut self, ea: u16, s: Size) -> Result<Option<String>, DisasmError> {
        let r = ea & 7;
        Ok(Some(match (ea >> 3) & 7 {
            0 => dreg(r),
            1 => areg(r),
            2 => format!("({})", areg(r)),
            3 => format!("({})+", areg(r)),
            4 => format!("-({})", areg(r)),
            5 => {
                let d = self.ext()? as i16;
                format!("{}({})", shex(i32::from(d)), areg(r))
            }
            6 => {
                let (d, x) = Self::index(self.ext()?);
                format!("{}({},{x})", shex(d), areg(r))
            }
            _ => match r {
                0 => {
                    let a = self.ext()? as i16 as i32 as u32;
                    format!("({}).w", addr(a))
                }
                1 => {
                    let a = self.ext_long()?;
                    format!("({}).l", addr(a))
                }
                2 => {
                    let base = self.next;
                    let d = self.ext()? as i16;
                    let t = base.wrapping_add(d as i32 as u32);
                    self.target = Some(t);
                    format!("{}(pc)", addr(t))
                }
                3 => {
                    let base = self.next;
                    let (d, x) = Self::index(self.ext()?);
                    let t = base.wrapping_add(d as u32);
                    self.target = Some(t);
                    format!("{}(pc,{x})", addr(t))
                }
                4 => self.imm(s)?,
                _ => return Ok(None),
            },
        }))
    }

    /// `ea` if it is in `allowed`, else `None` (invalid instruction).
    fn ea_in(&mut self, ea: u16, s: Size, allowed: u8) -> Result<Option<String>, DisasmError> {
        if !ok(ea, allowed) {
            return Ok(None);
        }
        self.ea(ea, s)
    }

    fn decode(&mut self, op: u16) -> Result<Out, DisasmError> {
        match op >> 12 {
            0x0 => self.group0(op),
            0x1..=0x3 => self.group_move(op),
            0x4 => self.group4(op),
            0x5 => self.group5(op),
            0x6 => {
                let cond = (op >> 8) & 15;
                let m = match cond {
                    0 => "bra",
                    1 => "bsr",
                    c => [
                        "", "", "bhi", "bls", "bcc", "bcs", "bne", "beq", "bvc", "bvs", "bpl",
                        "bmi", "bge", "blt", "bgt", "ble",
                    ][c as usize],
                };
                let base = self.pc.wrapping_add(2);
                let (d, suffix) = if op & 0xFF == 0 {
                    (i32::from(self.ext()? as i16), ".w")
                } else {
                    (i32::from(op as u8 as i8), ".s")
                };
                let t = base.wrapping_add(d as u32);
                self.target = Some(t);
                Ok(ins(format!("{m}{suffix}"), addr(t)))
            }
            0x7 => {
                if op & 0x0100 != 0 {
                    return Ok(None);
                }
                Ok(ins(
                    "moveq",
                    format!("#{},{}", shex(i32::from(op as u8 as i8)), dreg(op >> 9)),
                ))
            }
            0x8 | 0xC => self.group_8c(op),
            0x9 | 0xD => self.group_9d(op),
            0xB => self.group_b(op),
            0xE => self.group_e(op),
            _ => Ok(None), // line A, line F
        }
    }

    fn group0(&mut self, op: u16) -> Result<Out, DisasmError> {
        let ea = op & 0x3F;
        let bit_names = ["btst", "bchg", "bclr", "bset"];
        if op & 0x0100 != 0 {
            if (ea >> 3) & 7 == 1 {
                // MOVEP: 0000 ddd 1 oo 001 aaa
                let long = op & 0x40 != 0;
                let m = if long { "movep.l" } else { "movep.w" };
                let d = self.ext()? as i16;
                let mem = format!("{}({})", shex(i32::from(d)), areg(op));
                let dr = dreg(op >> 9);
                return Ok(if op & 0x80 != 0 {
                    ins(m, format!("{dr},{mem}"))
                } else {
                    ins(m, format!("{mem},{dr}"))
                });
            }
            // Dynamic bit ops: BTST Dn,<data>; others data alterable.
            let k = ((op >> 6) & 3) as usize;
            let allowed = if k == 0 { DATA } else { DATA_ALT };
            // A bit operation on memory is a byte, on Dn a long.
            let Some(e) = self.ea_in(ea, Size::B, allowed)? else {
                return Ok(None);
            };
            return Ok(ins(bit_names[k], format!("{},{e}", dreg(op >> 9))));
        }
        let which = (op >> 9) & 7;
        if which == 4 {
            // Static bit ops: BTST #n,<data except #imm>; others data alterable.
            let k = ((op >> 6) & 3) as usize;
            let allowed = if k == 0 { DATA & !IMM } else { DATA_ALT };
            if !ok(ea, allowed) {
                return Ok(None);
            }
            let n = self.ext()? & 0xFF;
            let Some(e) = self.ea(ea, Size::B)? else {
                return Ok(None);
            };
            return Ok(ins(bit_names[k], format!("#{},{e}", hex(u32::from(n)))));
        }
        let name = match which {
            0 => "ori",
            1 => "andi",
            2 => "subi",
            3 => "addi",
            5 => "eori",
            6 => "cmpi",
            _ => return Ok(None), // 7: MOVES (68010)
        };
        if ea == 0x3C && matches!(which, 0 | 1 | 5) {
            // to CCR (byte) / to SR (word)
            return Ok(match (op >> 6) & 3 {
                0 => {
                    let i = self.imm(Size::B)?;
                    ins(format!("{name}.b"), format!("{i},ccr"))
                }
                1 => {
                    let i = self.imm(Size::W)?;
                    ins(format!("{name}.w"), format!("{i},sr"))
                }
                _ => None,
            });
        }
        let Some(s) = size2(op >> 6) else {
            return Ok(None);
        };
        if !ok(ea, DATA_ALT) {
            return Ok(None);
        }
        let i = self.imm(s)?;
        let Some(e) = self.ea(ea, s)? else {
            return Ok(None);
        };
        Ok(ins(format!("{name}{}", s.suffix()), format!("{i},{e}")))
    }

    fn group_move(&mut self, op: u16) -> Result<Out, DisasmError> {
        let s = match op >> 12 {
            1 => Size::B,
            3 => Size::W,
            _ => Size::L,
        };
        let src = op & 0x3F;
        let dmode = (op >> 6) & 7;
        let dst = ((op >> 9) & 7) | (dmode << 3);
        let src_ok = if s == Size::B { ALL & !AN } else { ALL };
        if !ok(src, src_ok) {
            return Ok(None);
        }
        if dmode == 1 {
            if s == Size::B {
                return Ok(None);
            }
            let Some(e) = self.ea(src, s)? else {
                return Ok(None);
            };
            return Ok(ins(
                format!("movea{}", s.suffix()),
                format!("{e},{}", areg(op >> 9)),
            ));
        }
        if !ok(dst, DATA_ALT) {
            return Ok(None);
        }
        let Some(e) = self.ea(src, s)? else {
            return Ok(None);
        };
        let Some(d) = self.ea(dst, s)? else {
            return Ok(None);
        };
        Ok(ins(format!("move{}", s.suffix()), format!("{e},{d}")))
    }

    fn group4(&mut self, op: u16) -> Result<Out, DisasmError> {
        let ea = op & 0x3F;
        let mode = (ea >> 3) & 7;
        let sz = size2(op >> 6);
        if op & 0x0100 != 0 {
            return Ok(match (op >> 6) & 3 {
                2 => match self.ea_in(ea, Size::W, DATA)? {
                    Some(e) => ins("chk.w", format!("{e},{}", dreg(op >> 9))),
                    None => None,
                },
                3 => match self.ea_in(ea, Size::L, CONTROL)? {
                    Some(e) => ins("lea", format!("{e},{}", areg(op >> 9))),
                    None => None,
                },
                _ => None,
            });
        }
        let unary = |d: &mut Self, name: &str, s: Size| -> Result<Out, DisasmError> {
            Ok(d.ea_in(ea, s, DATA_ALT)?
                .map(|e| (format!("{name}{}", s.suffix()), e)))
        };
        match (op >> 8) & 0xF {
            0x0 => match sz {
                Some(s) => unary(self, "negx", s),
                None => Ok(self
                    .ea_in(ea, Size::W, DATA_ALT)?
                    .map(|e| ("move.w".into(), format!("sr,{e}")))),
            },
            0x2 => match sz {
                Some(s) => unary(self, "clr", s),
                None => Ok(None), // MOVE from CCR (68010)
            },
            0x4 => match sz {
                Some(s) => unary(self, "neg", s),
                None => Ok(self
                    .ea_in(ea, Size::W, DATA)?
                    .map(|e| ("move.w".into(), format!("{e},ccr")))),
            },
            0x6 => match sz {
                Some(s) => unary(self, "not", s),
                None => Ok(self
                    .ea_in(ea, Size::W, DATA)?
                    .map(|e| ("move.w".into(), format!("{e},sr")))),
            },
            0x8 => match (op >> 6) & 3 {
                0 => Ok(self
                    .ea_in(ea, Size::B, DATA_ALT)?
                    .map(|e| ("nbcd".into(), e))),
                1 if mode == 0 => Ok(ins("swap", dreg(op))),
                1 => Ok(self.ea_in(ea, Size::L, CONTROL)?.map(|e| ("pea".into(), e))),
                2 if mode == 0 => Ok(ins("ext.w", dreg(op))),
                3 if mode == 0 => Ok(ins("ext.l", dreg(op))),
                _ => self.movem(op, true),
            },
            0xA => {
                if op == 0x4AFC {
                    return Ok(ins("illegal", ""));
                }
                match sz {
                    Some(s) => unary(self, "tst", s),
                    None => Ok(self
                        .ea_in(ea, Size::B, DATA_ALT)?
                        .map(|e| ("tas".into(), e))),
                }
            }
            0xC => match (op >> 6) & 3 {
                2 | 3 => self.movem(op, false),
                _ => Ok(None), // MULL/DIVL (68020)
            },
            0xE => self.group4e(op),
            _ => Ok(None),
        }
    }

    fn group4e(&mut self, op: u16) -> Result<Out, DisasmError> {
        let ea = op & 0x3F;
        Ok(match (op >> 4) & 0xF {
            4 => ins("trap", format!("#{}", op & 15)),
            5 => {
                if op & 8 == 0 {
                    let d = self.ext()? as i16;
                    ins("link", format!("{},#{}", areg(op), shex(i32::from(d))))
                } else {
                    ins("unlk", areg(op))
                }
            }
            6 => {
                if op & 8 == 0 {
                    ins("move.l", format!("{},usp", areg(op)))
                } else {
                    ins("move.l", format!("usp,{}", areg(op)))
                }
            }
            7 => match op & 0xF {
                0 => ins("reset", ""),
                1 => ins("nop", ""),
                2 => {
                    let i = self.imm(Size::W)?;
                    ins("stop", i)
                }
                3 => ins("rte", ""),
                5 => ins("rts", ""),
                6 => ins("trapv", ""),
                7 => ins("rtr", ""),
                _ => None, // RTD, MOVEC (68010)
            },
            k @ 8..=0xF => {
                let name = if k < 0xC { "jsr" } else { "jmp" };
                if !ok(ea, CONTROL) {
                    return Ok(None);
                }
                let e = self.ea(ea, Size::L)?;
                // Static targets: absolute and PC-relative (not indexed).
                self.target = match ea {
                    0x38 | 0x39 => self.abs_value(ea),
                    0x3A => self.target,
                    _ => None,
                };
                e.map(|e| (name.into(), e))
            }
            _ => None,
        })
    }

    /// The address of an absolute EA just decoded (re-reading its words).
    fn abs_value(&self, ea: u16) -> Option<u32> {
        if ea == 0x38 {
            (self.word)(self.pc.wrapping_add(2)).map(|w| w as i16 as i32 as u32)
        } else {
            let hi = (self.word)(self.pc.wrapping_add(2))?;
            let lo = (self.word)(self.pc.wrapping_add(4))?;
            Some(u32::from(hi) << 16 | u32::from(lo))
        }
    }

    /// MOVEM (0100 1d00 1s mmm rrr + register mask word).
    fn movem(&mut self, op: u16, to_mem: bool) -> Result<Out, DisasmError> {
        let ea = op & 0x3F;
        let allowed = if to_mem {
            (CONTROL & !PCREL) | PRE
        } else {
            CONTROL | POST
        };
        if !ok(ea, allowed) {
            return Ok(None);
        }
        let s = if op & 0x40 != 0 { Size::L } else { Size::W };
        let mask = self.ext()?;
        // In -(An) mode bit 0 is a7 .. bit 15 is d0; otherwise bit 0 is d0.
        let mask = if (ea >> 3) & 7 == 4 {
            mask.reverse_bits()
        } else {
            mask
        };
        let list = reg_list(mask);
        let Some(e) = self.ea(ea, s)? else {
            return Ok(None);
        };
        let m = format!("movem{}", s.suffix());
        Ok(if to_mem {
            ins(m, format!("{list},{e}"))
        } else {
            ins(m, format!("{e},{list}"))
        })
    }

    fn group5(&mut self, op: u16) -> Result<Out, DisasmError> {
        let ea = op & 0x3F;
        let Some(s) = size2(op >> 6) else {
            let cond = CONDS[((op >> 8) & 15) as usize];
            if (ea >> 3) & 7 == 1 {
                let base = self.pc.wrapping_add(2);
                let d = self.ext()? as i16;
                let t = base.wrapping_add(d as i32 as u32);
                self.target = Some(t);
                let m = if cond == "f" {
                    "dbra".to_string()
                } else {
                    format!("db{cond}")
                };
                return Ok(ins(m, format!("{},{}", dreg(op), addr(t))));
            }
            return Ok(self
                .ea_in(ea, Size::B, DATA_ALT)?
                .map(|e| (format!("s{cond}"), e)));
        };
        let name = if op & 0x0100 != 0 { "subq" } else { "addq" };
        let n = match (op >> 9) & 7 {
            0 => 8,
            n => n,
        };
        let allowed = if s == Size::B { DATA_ALT } else { ALTERABLE };
        Ok(self
            .ea_in(ea, s, allowed)?
            .map(|e| (format!("{name}{}", s.suffix()), format!("#{n},{e}"))))
    }

    fn group_8c(&mut self, op: u16) -> Result<Out, DisasmError> {
        let ea = op & 0x3F;
        let mode = (ea >> 3) & 7;
        let is_or = op >> 12 == 8;
        let rx = op >> 9;
        let opm = (op >> 6) & 7;
        match opm {
            3 | 7 => {
                let name = match (is_or, opm) {
                    (true, 3) => "divu.w",
                    (true, _) => "divs.w",
                    (false, 3) => "mulu.w",
                    (false, _) => "muls.w",
                };
                return Ok(self
                    .ea_in(ea, Size::W, DATA)?
                    .map(|e| (name.into(), format!("{e},{}", dreg(rx)))));
            }
            4 if mode <= 1 => {
                let name = if is_or { "sbcd" } else { "abcd" };
                return Ok(ins(name, two_regs(op, mode == 1)));
            }
            5 | 6 if !is_or && mode <= 1 => {
                // EXG: opmode 01000 Dx,Dy / 01001 Ax,Ay / 10001 Dx,Ay.
                return Ok(match (opm, mode) {
                    (5, 0) => ins("exg", format!("{},{}", dreg(rx), dreg(op))),
                    (5, _) => ins("exg", format!("{},{}", areg(rx), areg(op))),
                    (6, 1) => ins("exg", format!("{},{}", dreg(rx), areg(op))),
                    _ => None,
                });
            }
            _ => {}
        }
        let name = if is_or { "or" } else { "and" };
        let Some(s) = size2(opm) else {
            return Ok(None);
        };
        let m = format!("{name}{}", s.suffix());
        Ok(if opm & 4 == 0 {
            self.ea_in(ea, s, DATA)?
                .map(|e| (m, format!("{e},{}", dreg(rx))))
        } else {
            self.ea_in(ea, s, MEM_ALT)?
                .map(|e| (m, format!("{},{e}", dreg(rx))))
        })
    }

    fn group_9d(&mut self, op: u16) -> Result<Out, DisasmError> {
        let ea = op & 0x3F;
        let mode = (ea >> 3) & 7;
        let name = if op >> 12 == 0xD { "add" } else { "sub" };
        let rx = op >> 9;
        let opm = (op >> 6) & 7;
        if opm == 3 || opm == 7 {
            let s = if opm == 3 { Size::W } else { Size::L };
            return Ok(self.ea_in(ea, s, ALL)?.map(|e| {
                (
                    format!("{name}a{}", s.suffix()),
                    format!("{e},{}", areg(rx)),
                )
            }));
        }
        let Some(s) = size2(opm) else {
            return Ok(None);
        };
        if opm & 4 == 0 {
            let allowed = if s == Size::B { ALL & !AN } else { ALL };
            return Ok(self
                .ea_in(ea, s, allowed)?
                .map(|e| (format!("{name}{}", s.suffix()), format!("{e},{}", dreg(rx)))));
        }
        if mode <= 1 {
            return Ok(ins(
                format!("{name}x{}", s.suffix()),
                two_regs(op, mode == 1),
            ));
        }
        Ok(self
            .ea_in(ea, s, MEM_ALT)?
            .map(|e| (format!("{name}{}", s.suffix()), format!("{},{e}", dreg(rx)))))
    }

    fn group_b(&mut self, op: u16) -> Result<Out, DisasmError> {
        let ea = op & 0x3F;
        let mode = (ea >> 3) & 7;
        let rx = op >> 9;
        let opm = (op >> 6) & 7;
        if opm == 3 || opm == 7 {
            let s = if opm == 3 { Size::W } else { Size::L };
            return Ok(self
                .ea_in(ea, s, ALL)?
                .map(|e| (format!("cmpa{}", s.suffix()), format!("{e},{}", areg(rx)))));
        }
        let Some(s) = size2(opm) else {
            return Ok(None);
        };
        if opm & 4 == 0 {
            let allowed = if s == Size::B { ALL & !AN } else { ALL };
            return Ok(self
                .ea_in(ea, s, allowed)?
                .map(|e| (format!("cmp{}", s.suffix()), format!("{e},{}", dreg(rx)))));
        }
        if mode == 1 {
            return Ok(ins(
                format!("cmpm{}", s.suffix()),
                format!("({})+,({})+", areg(op), areg(rx)),
            ));
        }
        Ok(self
            .ea_in(ea, s, DATA_ALT)?
            .map(|e| (format!("eor{}", s.suffix()), format!("{},{e}", dreg(rx)))))
    }

    fn group_e(&mut self, op: u16) -> Result<Out, DisasmError> {
        let names = ["as", "ls", "rox", "ro"];
        let dir = if op & 0x0100 != 0 { "l" } else { "r" };
        let Some(s) = size2(op >> 6) else {
            if op & 0x0800 != 0 {
                return Ok(None); // bit fields (68020)
            }
            let k = names[((op >> 9) & 3) as usize];
            return Ok(self
                .ea_in(op & 0x3F, Size::W, MEM_ALT)?
                .map(|e| (format!("{k}{dir}.w"), e)));
        };
        let k = names[((op >> 3) & 3) as usize];
        let cnt = (op >> 9) & 7;
        let src = if op & 0x20 != 0 {
            dreg(cnt)
        } else {
            format!("#{}", if cnt == 0 { 8 } else { cnt })
        };
        Ok(ins(
            format!("{k}{dir}{}", s.suffix()),
            format!("{src},{}", dreg(op)),
        ))
    }
}

/// `Dy,Dx` or `-(Ay),-(Ax)` of ABCD/SBCD/ADDX/SUBX.
fn two_regs(op: u16, mem: bool) -> String {
    if mem {
        format!("-({}),-({})", areg(op), areg(op >> 9))
    } else {
        format!("{},{}", dreg(op), dreg(op >> 9))
    }
}

/// A MOVEM register list (bit 0 = d0 .. bit 15 = a7): runs of two or more
/// consecutive registers as `d0-d3`, groups joined by `/`; `#0` for none.
fn reg_list(mask: u16) -> String {
    if mask == 0 {
        return "#0".to_string();
    }
    let mut parts = Vec::new();
    for (base, name) in [(0u16, 'd'), (8, 'a')] {
        let mut i = 0;
        while i < 8 {
            if mask & (1 << (base + i)) == 0 {
                i += 1;
                continue;
            }
            let start = i;
            while i + 1 < 8 && mask & (1 << (base + i + 1)) != 0 {
                i += 1;
            }
            let reg = |n: u16| {
                if name == 'a' {
                    areg(n)
                } else {
                    dreg(n)
                }
            };
            if i == start {
                parts.push(reg(start));
            } else {
                parts.push(format!("{}-{}", reg(start), reg(i)));
            }
            i += 1;
        }
    }
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::{decode, Op};

    fn dis(words: &[u16]) -> Instruction {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_be_bytes()).collect();
        disassemble_bytes(&bytes, 0x1000, 0x1000).unwrap()
    }

    fn text(words: &[u16]) -> String {
        let i = dis(words);
        assert_eq!(i.len as usize, words.len() * 2, "length of {i}");
        i.to_string()
    }

    /// Hand-checked encodings from the PRM, one or more per instruction group.
    #[test]
    fn known_encodings() {
        let cases: &[(&[u16], &str)] = &[
            (&[0x4E71], "nop"),
            (&[0x4E75], "rts"),
            (&[0x4AFC], "illegal"),
            (&[0x7001], "moveq #1,d0"),
            (&[0x70FF], "moveq #-1,d0"),
            (&[0x2018], "move.l (a0)+,d0"),
            (&[0x3F00], "move.w d0,-(sp)"),
            (&[0x13FC, 0x0012, 0x00A1, 0x0003], "move.b #$12,($a10003).l"),
            (&[0x31C0, 0x8000], "move.w d0,($ffff8000).w"),
            (&[0x2070, 0x10FC], "movea.l -4(a0,d1.w),a0"),
            (&[0x203B, 0x0806], "move.l $1008(pc,d0.l),d0"),
            (&[0x41FA, 0x0010], "lea $1012(pc),a0"),
            (&[0x48E7, 0xC0C0], "movem.l d0-d1/a0-a1,-(sp)"),
            (&[0x4CDF, 0x0303], "movem.l (sp)+,d0-d1/a0-a1"),
            (&[0x48E7, 0x3F3E], "movem.l d2-d7/a2-a6,-(sp)"),
            (&[0x4C9F, 0x4081], "movem.w (sp)+,d0/d7/a6"),
            (&[0x6700, 0x0010], "beq.w $1012"),
            (&[0x66FE], "bne.s $1000"),
            (&[0x6100, 0xFFFE], "bsr.w $1000"),
            (&[0x51C8, 0xFFFE], "dbra d0,$1000"),
            (&[0x57C9, 0x0004], "dbeq d1,$1006"),
            (&[0x56C0], "sne d0"),
            (&[0x50D0], "st (a0)"),
            (&[0x0240, 0xFF00], "andi.w #$ff00,d0"),
            (&[0x007C, 0x0700], "ori.w #$700,sr"),
            (&[0x023C, 0x00FE], "andi.b #$fe,ccr"),
            (&[0x0C80, 0x0001, 0x0000], "cmpi.l #$10000,d0"),
            (&[0x0839, 0x0007, 0x00C0, 0x0004], "btst #7,($c00004).l"),
            (&[0x0300], "btst d1,d0"),
            (&[0x013A, 0x0002], "btst d0,$1004(pc)"),
            (&[0x0188, 0x0004], "movep.w d0,4(a0)"),
            (&[0x0349, 0xFFFE], "movep.l -2(a1),d1"),
            (&[0xE548], "lsl.w #2,d0"),
            (&[0xE2A9], "lsr.l d1,d1"),
            (&[0xE0F8, 0x1234], "asr.w ($1234).w"),
            (&[0xE7D0], "rol.w (a0)"),
            (&[0xE318], "rol.b #1,d0"),
            (&[0xE050], "roxr.w #8,d0"),
            (&[0xC141], "exg d0,d1"),
            (&[0xC149], "exg a0,a1"),
            (&[0xC18F], "exg d0,sp"),
            (&[0xC300], "abcd d0,d1"),
            (&[0x8109], "sbcd -(a1),-(a0)"),
            (&[0xD382], "addx.l d2,d1"),
            (&[0x9F0F], "subx.b -(sp),-(sp)"),
            (&[0xB308], "cmpm.b (a0)+,(a1)+"),
            (&[0xC0FC, 0x000A], "mulu.w #$a,d0"),
            (&[0x81C1], "divs.w d1,d0"),
            (&[0x4181], "chk.w d1,d0"),
            (&[0xD1FC, 0x0000, 0x0100], "adda.l #$100,a0"),
            (&[0x5C8F], "addq.l #6,sp"),
            (&[0x5148], "subq.w #8,a0"),
            (&[0xB151], "eor.w d0,(a1)"),
            (&[0x4E56, 0xFFF8], "link a6,#-8"),
            (&[0x4E5E], "unlk a6"),
            (&[0x4E68], "move.l usp,a0"),
            (&[0x4E60], "move.l a0,usp"),
            (&[0x40C0], "move.w sr,d0"),
            (&[0x44FC, 0x001F], "move.w #$1f,ccr"),
            (&[0x46DF], "move.w (sp)+,sr"),
            (&[0x4E72, 0x2700], "stop #$2700"),
            (&[0x4E4F], "trap #15"),
            (&[0x4840], "swap d0"),
            (&[0x4880], "ext.w d0"),
            (&[0x48C0], "ext.l d0"),
            (&[0x4AD0], "tas (a0)"),
            (&[0x4800], "nbcd d0"),
            (&[0x4EB9, 0x0000, 0x0200], "jsr ($200).l"),
            (&[0x4ED0], "jmp (a0)"),
            (&[0x4EFB, 0x0002], "jmp $1004(pc,d0.w)"),
            (&[0x4878, 0x0010], "pea ($10).w"),
            (&[0x4A6E, 0x0004], "tst.w 4(a6)"),
            (&[0x4298], "clr.l (a0)+"),
            (&[0x4460], "neg.w -(a0)"),
            (&[0x4006], "negx.b d6"),
            (&[0x4641], "not.w d1"),
            (&[0x4E73], "rte"),
            (&[0x4E77], "rtr"),
            (&[0x4E76], "trapv"),
            (&[0x4E70], "reset"),
            // The 68000 ignores the scale bits (10-9) and bit 8.
            (&[0x2030, 0x0E02], "move.l 2(a0,d0.l),d0"),
            // Invalid on a 68000: 68010/68020 forms.
            (&[0x4E7A], "dc.w $4e7a"),
            (&[0x49C0], "dc.w $49c0"),
            (&[0x4A48], "dc.w $4a48"),
            (&[0x42C0], "dc.w $42c0"),
            (&[0x60FF], "bra.s $1001"),
            (&[0xA123], "dc.w $a123"),
            (&[0xF200], "dc.w $f200"),
        ];
        for (words, want) in cases {
            assert_eq!(text(words), *want, "{words:04x?}");
        }
        assert_eq!(dis(&[0xA123]).kind, Kind::LineA);
        assert_eq!(dis(&[0xF123]).kind, Kind::LineF);
        assert_eq!(dis(&[0x4E7A]).kind, Kind::Invalid);
        assert_eq!(dis(&[0x4AFC]).kind, Kind::Instruction);
        assert_eq!(dis(&[0x6100, 0x0010]).target, Some(0x1012));
        assert_eq!(dis(&[0x4EB9, 0x0001, 0x2340]).target, Some(0x12340));
        assert_eq!(dis(&[0x4EF8, 0x8000]).target, Some(0xFFFF_8000));
        assert_eq!(dis(&[0x4E90]).target, None);
    }

    #[test]
    fn range_walk() {
        // nop; moveq #1,d0; jsr ($200).l; rts
        let code = [0x4E71u16, 0x7001, 0x4EB9, 0x0000, 0x0200, 0x4E75];
        let word = |a: u32| code.get((a.checked_sub(0x100)? / 2) as usize).copied();
        let all: Vec<String> = disassemble_range(0x100, 0x10C, word)
            .map(|r| r.unwrap().to_string())
            .collect();
        assert_eq!(all, ["nop", "moveq #1,d0", "jsr ($200).l", "rts"]);
        // An end inside an instruction still yields it whole.
        assert_eq!(disassemble_range(0x100, 0x105, word).count(), 3);
        // Code ending inside an instruction: the error ends the walk.
        let r: Vec<_> =
            disassemble_range(0x100, 0x200, |a| word(a).filter(|_| a < 0x106)).collect();
        assert_eq!(r.len(), 3);
        assert_eq!(
            r[2],
            Err(DisasmError::OutOfBounds {
                pc: 0x104,
                addr: 0x106
            })
        );
        assert_eq!(disassemble_range(0x101, 0x200, word).count(), 1);
        // The top of the address space ends the walk, no wrap to 0.
        assert_eq!(
            disassemble_range(0xFFFF_FFFC, u32::MAX, |_| Some(0x4E71)).count(),
            2
        );
        assert_eq!(disassemble_range(0x100, 0x100, word).count(), 0);
    }

    #[test]
    fn errors_not_panics() {
        // An extension word past the end of the code.
        assert_eq!(
            disassemble_bytes(&[0x4E, 0xB9, 0, 0], 0, 0),
            Err(DisasmError::OutOfBounds { pc: 0, addr: 4 })
        );
        assert_eq!(
            disassemble_bytes(&[], 0, 0),
            Err(DisasmError::OutOfBounds { pc: 0, addr: 0 })
        );
        assert_eq!(
            disassemble_bytes(&[0x4E, 0x71], 0, 1),
            Err(DisasmError::OddAddress(1))
        );
        // Below the base, and at the top of the address space (wrapping).
        assert!(disassemble_bytes(&[0x4E, 0x71], 0x100, 0x0FE).is_err());
        let i = disassemble(0xFFFF_FFFE, |a| {
            Some(if a == 0xFFFF_FFFE { 0x6000 } else { 2 })
        })
        .unwrap();
        assert_eq!(i.to_string(), "bra.w $2");
        assert_eq!(i.len, 4);
    }

    /// Every opcode word, with random extension words: no panic, a length
    /// of 2..=10 bytes that matches the words read, text always non-empty.
    #[test]
    fn fuzz_all_first_words() {
        let mut seed = 0x1234_5678_9ABC_DEF0u64;
        let mut rnd = || {
            seed = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = seed;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        for op in 0..=0xFFFFu16 {
            for _ in 0..8 {
                let ext: [u16; 4] = [rnd() as u16, rnd() as u16, rnd() as u16, rnd() as u16];
                let pc = (rnd() as u32) & !1;
                let read = std::cell::Cell::new(0u32);
                let i = disassemble(pc, |a| {
                    let k = a.wrapping_sub(pc) / 2;
                    read.set(read.get().max(k + 1));
                    match k {
                        0 => Some(op),
                        1..=4 => Some(ext[k as usize - 1]),
                        _ => None,
                    }
                })
                .unwrap_or_else(|e| panic!("{op:04x} {ext:04x?}: {e}"));
                assert!((2..=10).contains(&i.len), "{op:04x}: {i}");
                assert!(!i.mnemonic.is_empty());
                if i.kind == Kind::Instruction {
                    // Every word read is part of the instruction (JMP/JSR
                    // re-read their absolute operand within it).
                    assert_eq!(read.get() * 2, i.len, "{op:04x}: {i}");
                }
                // Truncated code is an error, never a panic.
                for have in 0..i.len / 2 {
                    let r = disassemble(pc, |a| {
                        let k = a.wrapping_sub(pc) / 2;
                        if k >= have {
                            None
                        } else if k == 0 {
                            Some(op)
                        } else {
                            Some(ext[k as usize - 1])
                        }
                    });
                    if i.kind == Kind::Instruction {
                        assert!(r.is_err(), "{op:04x} with {have} words: {r:?}");
                    }
                }
            }
        }
    }

    /// The disassembler and the core's decode table agree on which opcode
    /// words are 68000 instructions, over all 65,536 (two independent
    /// readings of the PRM checking each other).
    #[test]
    fn agrees_with_decode_table_on_validity() {
        let mut differ = Vec::new();
        for op in 0..=0xFFFFu16 {
            let words = [op, 0, 0, 0, 0];
            let i = disassemble(0, |a| words.get(a as usize / 2).copied()).unwrap();
            let core = decode(op);
            let core_kind = match core {
                Op::LineA => Kind::LineA,
                Op::LineF => Kind::LineF,
                // 0x4AFC is the defined ILLEGAL instruction: an instruction
                // to the disassembler, an illegal-instruction trap to the core.
                Op::Illegal if op == 0x4AFC => Kind::Instruction,
                Op::Illegal => Kind::Invalid,
                _ => Kind::Instruction,
            };
            if core_kind != i.kind {
                differ.push(format!(
                    "{op:04x}: core {core:?}, disassembler {i} ({:?})",
                    i.kind
                ));
            }
        }
        assert!(
            differ.is_empty(),
            "{} opcodes differ:\n{}",
            differ.len(),
            differ[..differ.len().min(50)].join("\n")
        );
    }
}
