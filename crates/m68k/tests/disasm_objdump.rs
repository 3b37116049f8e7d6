//! The disassembler against binutils on real code.
//!
//! ```text
//! cargo test --release -p retroprof-m68k --test disasm_objdump -- --nocapture
//! ```
//!
//! Needs `m68k-linux-gnu-objdump` (Debian's binutils-m68k-linux-gnu, which
//! .ci/run installs), the test ROMs' ELFs (testroms/out/*/rom.elf) and the
//! shared ROMs' ELFs (../shared/roms/*/rom.out); fails loudly when any is
//! missing.
//!
//! `disassembler_matches_objdump`: every instruction `objdump -d -m
//! m68k:68000` prints in an executable section of these ELFs, counted in two
//! scopes: inside functions (a FUNC symbol, for its `st_size` bytes; the
//! assembly functions with size 0 up to the next FUNC or OBJECT symbol or
//! the section end) and elsewhere (vectors, ROM header, resources: data
//! that objdump decodes as code, a free robustness test on odd word
//! sequences). objdump restarts decoding at every symbol; we disassemble at
//! each address where objdump starts an instruction, so both decode the
//! same word sequences, and compare
//! - the length (objdump's raw bytes, one line each with `--insn-width=10`);
//! - the mnemonic with the size suffix (ours `move.l`, objdump's `movel`;
//!   ours `dbra`/`link`/`dc.w`, objdump's `dbf`/`linkw`/`.short`);
//! - the operands after parsing both syntaxes into the same operand values.
//!   binutils prints MIT syntax on m68k and has no option for Motorola
//!   syntax (`-M motorola` is silently ignored): `%a0@(4)`, `%a0@(10,%d0:w)`
//!   with a hex index displacement (negative ones as 64-bit hex), `%fp` for
//!   a6, `%sp` for a7, bare hex addresses followed by `<symbol+off>`, signed
//!   decimal immediates. Immediates are compared modulo the operation size
//!   (objdump prints `orib #-112`, we print `ori.b #$90`; bit numbers are
//!   bytes, STOP's operand a word), absolute addresses modulo 2^32 (objdump
//!   does not print `.w`/`.l`: the length check covers it), register lists
//!   as sets (objdump merges across d7/a0: `d0-sp`).
//!
//! `every_opcode_matches_objdump`: all 65,536 opcode words, each with three
//! sets of extension words, assembled (`m68k-linux-gnu-as`) into an object
//! file with one symbol per 10-byte slot, compared the same way (so the
//! two disassemblers agree on which words are instructions, not only on
//! what compilers emit).
//!
//! Known differences (the allow-list; each is counted and printed per
//! class, anything else fails the test):
//! - `coprocessor`: objdump decodes line-F words as 68881/68851 FPU/MMU
//!   instructions (`fmovex`, `fsave`, `pflush`, `fbf`, ...) even with
//!   `-m m68k:68000`; the 68000 has no coprocessor interface and takes the
//!   line 1111 emulator exception (M68000 User's Manual, exception
//!   processing: unimplemented instructions), so we show `dc.w $fnnn`
//!   (2 bytes).
//! - `68020 scale` / `68020 full-format index`: objdump decodes an index
//!   extension word's scale (bits 10-9, `%d0:l:4`) and full format (bit 8:
//!   memory indirect `@(..)@(..)`, base and outer displacements, suppressed
//!   registers); the 68000 has only the brief format and ignores bits 10-8
//!   (PRM chapter 2, brief extension word format; the core does the same),
//!   and so do we. With a scale only, the rest of the instruction is
//!   still compared and must match.
//! - `byte on An`: objdump accepts `subqb #n,%aN` (0101 nnn1 00 001 rrr);
//!   the PRM allows only word and long for SUBQ to an address register, and
//!   the core's decode table treats it as illegal (so do we: `dc.w`).
//! - `swbeg`: objdump prints 0x4AFD as the System V `swbegl` switch-table
//!   pseudo-op; to the 68000 it is an illegal instruction (TST with size
//!   field 11).
//! - `symbol boundary`: objdump reads no further than the next symbol and
//!   prints `Address X is out of bounds` where its decoder wants a word
//!   past it (it reads ahead even for a line-A/F word it then shows as
//!   `.short`); we decode the words that are there.
//!
//! Inside functions only embedded data (the jump table in SGDK's
//! lz4w_unpack, switch tables) differs: 11 of 59,104 instructions, all in
//! the 68020-index classes; elsewhere 9,264 of 242,236; over every opcode
//! 7,914 of 196,608 (68020 scale 6,822, whose other operands compared
//! equal; coprocessor 897; byte on An 192; swbeg 3). The test prints
//! `disasm: N instructions compared, M differ` and the per-class counts.

use retroprof_m68k::disasm::{disassemble, Instruction, Kind};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const OBJDUMP: &str = "m68k-linux-gnu-objdump";

// ---------------------------------------------------------------- ELF ---

struct Section {
    name: String,
    addr: u32,
    data: Vec<u8>,
    exec: bool,
}

struct Elf {
    sections: Vec<Section>,
    /// (section index, value, size, type) of FUNC and OBJECT symbols.
    symbols: Vec<(usize, u32, u32, u8)>,
}

fn be16(b: &[u8], o: usize) -> u16 {
    u16::from_be_bytes([b[o], b[o + 1]])
}

fn be32(b: &[u8], o: usize) -> u32 {
    u32::from_be_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
}

/// A minimal ELF32 big-endian reader: section headers and the symbol table.
fn read_elf(path: &Path) -> Elf {
    let b = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(
        b.len() > 52 && &b[..4] == b"\x7fELF" && b[4] == 1 && b[5] == 2,
        "{}: not a 32-bit big-endian ELF file",
        path.display()
    );
    let shoff = be32(&b, 0x20) as usize;
    let shentsize = be16(&b, 0x2E) as usize;
    let shnum = be16(&b, 0x30) as usize;
    let shstrndx = be16(&b, 0x32) as usize;
    let sh = |i: usize, f: usize| be32(&b, shoff + i * shentsize + f);
    let strtab_name = |tab: usize, off: u32| -> String {
        let start = sh(tab, 16) as usize + off as usize;
        let end = b[start..].iter().position(|&c| c == 0).unwrap() + start;
        String::from_utf8_lossy(&b[start..end]).into_owned()
    };
    let mut sections = Vec::new();
    let mut symbols = Vec::new();
    for i in 0..shnum {
        let (ty, flags, addr, off, size) = (sh(i, 4), sh(i, 8), sh(i, 12), sh(i, 16), sh(i, 20));
        let data = if ty == 8 {
            Vec::new() // NOBITS
        } else {
            b[off as usize..(off + size) as usize].to_vec()
        };
        sections.push(Section {
            name: strtab_name(shstrndx, sh(i, 0)),
            addr,
            data,
            exec: ty == 1 && flags & 4 != 0,
        });
        if ty == 2 {
            for k in 0..size as usize / 16 {
                let e = off as usize + k * 16;
                let (value, sz, info, shndx) = (
                    be32(&b, e + 4),
                    be32(&b, e + 8),
                    b[e + 12],
                    be16(&b, e + 14),
                );
                let ty = info & 15;
                if ty == 1 || ty == 2 {
                    symbols.push((shndx as usize, value, sz, ty));
                }
            }
        }
    }
    Elf { sections, symbols }
}

/// Function address ranges of executable section `si`.
fn function_ranges(elf: &Elf, si: usize) -> Vec<(u32, u32)> {
    let sec = &elf.sections[si];
    let end = sec.addr + sec.data.len() as u32;
    let mut starts: Vec<u32> = elf
        .symbols
        .iter()
        .filter(|s| s.0 == si)
        .map(|s| s.1)
        .collect();
    starts.sort_unstable();
    let mut r: Vec<(u32, u32)> = elf
        .symbols
        .iter()
        .filter(|s| s.0 == si && s.3 == 2)
        .map(|&(_, v, size, _)| {
            let hi = if size > 0 {
                v + size
            } else {
                starts.iter().copied().find(|&a| a > v).unwrap_or(end)
            };
            (v, hi.min(end))
        })
        .collect();
    r.sort_unstable();
    r
}

// ----------------------------------------------------------- objdump ---

struct Line {
    len: u32,
    text: String,
}

fn objdump(path: &Path) -> BTreeMap<u32, Line> {
    let out = Command::new(OBJDUMP)
        .args(["-d", "-m", "m68k:68000", "--insn-width=10"])
        .arg(path)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run {OBJDUMP} ({e}): install binutils-m68k-linux-gnu \
                 (.ci/run does); this test compares against it and does not skip"
            )
        });
    assert!(
        out.status.success(),
        "{OBJDUMP} failed on {}",
        path.display()
    );
    let mut lines = BTreeMap::new();
    for l in String::from_utf8_lossy(&out.stdout).lines() {
        let parts: Vec<&str> = l.split('\t').collect();
        if parts.len() < 3 || !parts[0].trim_end().ends_with(':') {
            continue;
        }
        let Ok(addr) = u32::from_str_radix(parts[0].trim().trim_end_matches(':'), 16) else {
            continue;
        };
        let hexdigits = parts[1].chars().filter(|c| c.is_ascii_hexdigit()).count();
        lines.insert(
            addr,
            Line {
                len: hexdigits as u32 / 2,
                text: parts[2..].join("\t").trim().to_string(),
            },
        );
    }
    lines
}

// -------------------------------------------------------- normaliser ---

/// An operand in a syntax-free form.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Opd {
    Imm(i64),
    Reg(String),
    Ind(String),
    Post(String),
    Pre(String),
    Disp(i64, String),
    Index(i64, String, String),
    PcRel(u32),
    PcIndex(u32, String),
    Abs(u32),
    List(u16),
    /// Something only objdump prints (68020 forms): kept as text.
    Other(String),
}

fn reg_name(r: &str) -> String {
    match r {
        "fp" | "a6" => "a6".into(),
        "a7" | "sp" => "sp".into(),
        r => r.into(),
    }
}

fn parse_num(s: &str, hex_default: bool) -> Option<i64> {
    let s = s.trim();
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let v = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix('$')) {
        u64::from_str_radix(h, 16).ok()? as i64
    } else if hex_default {
        u64::from_str_radix(s, 16).ok()? as i64
    } else {
        s.parse::<i64>().ok()?
    };
    Some(if neg { -v } else { v })
}

/// Split at commas outside parentheses.
fn split_ops(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut depth, mut cur) = (0, String::new());
    for c in s.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn reg_bit(r: &str) -> Option<u16> {
    let r = reg_name(r.trim_start_matches('%'));
    if r == "sp" {
        return Some(15);
    }
    let n: u16 = r.get(1..)?.parse().ok()?;
    match r.as_bytes().first()? {
        b'd' if n < 8 => Some(n),
        b'a' if n < 8 => Some(8 + n),
        _ => None,
    }
}

/// `d0-d3/a2` (either syntax) as a register mask, bit 0 = d0.
fn parse_list(s: &str) -> Option<u16> {
    let mut m = 0u16;
    for part in s.split('/') {
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (reg_bit(a)?, reg_bit(b)?),
            None => (reg_bit(part)?, reg_bit(part)?),
        };
        if a > b {
            return None;
        }
        for i in a..=b {
            m |= 1 << i;
        }
    }
    Some(m)
}

/// Index register `%d0:w` / `d0.w` (scale `:4` is not a 68000 form).
fn parse_xn(s: &str) -> Option<String> {
    let s = s.trim_start_matches('%').replace(':', ".");
    let (r, sz) = s.split_once('.')?;
    if sz.contains('.') || !(sz == "w" || sz == "l") {
        return None;
    }
    Some(format!("{}.{sz}", reg_name(r)))
}

fn parse_objdump_operand(o: &str) -> Opd {
    let o = o.trim();
    let other = || Opd::Other(o.to_string());
    if let Some(i) = o.strip_prefix('#') {
        return parse_num(i, false).map_or_else(other, Opd::Imm);
    }
    if o.contains('/') || (o.starts_with('%') && o.contains('-') && !o.contains('@')) {
        return parse_list(o).map_or_else(other, Opd::List);
    }
    if let Some(r) = o.strip_prefix('%') {
        if let Some(base) = r.strip_suffix("@+") {
            return Opd::Post(reg_name(base));
        }
        if let Some(base) = r.strip_suffix("@-") {
            return Opd::Pre(reg_name(base));
        }
        if let Some(base) = r.strip_suffix('@') {
            return Opd::Ind(reg_name(base));
        }
        if let Some((base, rest)) = r.split_once("@(") {
            let Some(inner) = rest.strip_suffix(')') else {
                return other();
            };
            if inner.contains(")@(") || inner.contains('@') {
                return other(); // memory indirect (68020)
            }
            let parts: Vec<&str> = inner.split(',').collect();
            let base = reg_name(base);
            return match (base.as_str(), parts.as_slice()) {
                ("pc", [a]) => parse_num(a, true).map_or_else(other, |a| Opd::PcRel(a as u32)),
                ("pc", [a, x]) => match (parse_num(a, true), parse_xn(x)) {
                    (Some(a), Some(x)) => Opd::PcIndex(a as u32, x),
                    _ => other(),
                },
                (_, [d]) => parse_num(d, false).map_or_else(other, |d| Opd::Disp(d, base)),
                (_, [d, x]) => match (parse_num(d, true), parse_xn(x)) {
                    (Some(d), Some(x)) => Opd::Index(d as u64 as i64 as i8 as i64, base, x),
                    _ => other(),
                },
                _ => other(),
            };
        }
        return Opd::Reg(reg_name(r));
    }
    parse_num(o, true).map_or_else(other, |a| Opd::Abs(a as u32))
}

fn parse_our_operand(o: &str) -> Opd {
    let o = o.trim();
    let other = || Opd::Other(o.to_string());
    if let Some(i) = o.strip_prefix('#') {
        return parse_num(i, false).map_or_else(other, Opd::Imm);
    }
    if let Some(r) = o.strip_prefix("-(").and_then(|r| r.strip_suffix(')')) {
        return Opd::Pre(reg_name(r));
    }
    if let Some(r) = o.strip_prefix('(').and_then(|r| r.strip_suffix(")+")) {
        return Opd::Post(reg_name(r));
    }
    if let Some(a) = o.strip_prefix('(') {
        if let Some(a) = a.strip_suffix(").w").or_else(|| a.strip_suffix(").l")) {
            return parse_num(a, false).map_or_else(other, |a| Opd::Abs(a as u32));
        }
        if let Some(r) = a.strip_suffix(')') {
            return Opd::Ind(reg_name(r));
        }
    }
    if let Some((d, rest)) = o.split_once('(') {
        let Some(inner) = rest.strip_suffix(')') else {
            return other();
        };
        let Some(d) = parse_num(d, false) else {
            return other();
        };
        let parts: Vec<&str> = inner.split(',').collect();
        return match parts.as_slice() {
            ["pc"] => Opd::PcRel(d as u32),
            ["pc", x] => parse_xn(x).map_or_else(other, |x| Opd::PcIndex(d as u32, x)),
            [r] => Opd::Disp(d, reg_name(r)),
            [r, x] => parse_xn(x).map_or_else(other, |x| Opd::Index(d, reg_name(r), x)),
            _ => other(),
        };
    }
    if o.contains('/') || o.contains('-') {
        return parse_list(o).map_or_else(other, Opd::List);
    }
    if o.starts_with('$') || o.starts_with(|c: char| c.is_ascii_digit()) {
        return parse_num(o, false).map_or_else(other, |a| Opd::Abs(a as u32));
    }
    // A single register as a MOVEM list is printed like a register.
    Opd::Reg(reg_name(o))
}

/// objdump's mnemonic for ours (dots dropped, a few spellings).
fn objdump_mnemonic(ours: &str) -> String {
    match ours {
        "dbra" => "dbf".into(),
        "link" => "linkw".into(),
        "dc.w" => ".short".into(),
        m => m.replace('.', ""),
    }
}

/// Whether two operands are the same value; `mask` is the operation size.
fn same_operand(a: &Opd, b: &Opd, mask: i64, movem: bool) -> bool {
    match (a, b) {
        (Opd::Imm(x), Opd::Imm(y)) => (x ^ y) & mask == 0,
        (Opd::Abs(x), Opd::Abs(y)) | (Opd::PcRel(x), Opd::PcRel(y)) => x == y,
        (Opd::Disp(x, r), Opd::Disp(y, s)) => (x ^ y) & 0xFFFF == 0 && r == s,
        // A one-register MOVEM list reads as a register.
        (Opd::Reg(r), Opd::List(m)) | (Opd::List(m), Opd::Reg(r)) if movem => {
            reg_bit(r).is_some_and(|b| *m == 1 << b)
        }
        (Opd::Imm(0), Opd::List(0)) | (Opd::List(0), Opd::Imm(0)) => movem,
        _ => a == b,
    }
}

fn split_text(t: &str) -> (String, String) {
    // Drop objdump's `<symbol+off>` annotations.
    let mut s = String::new();
    let mut depth = 0;
    for c in t.chars() {
        match c {
            '<' => depth += 1,
            '>' if depth > 0 => depth -= 1,
            _ if depth == 0 => s.push(c),
            _ => {}
        }
    }
    let s = s.replace(" ,", ",");
    match s.trim().split_once(' ') {
        Some((m, o)) => (m.to_string(), o.replace(' ', "")),
        None => (s.trim().to_string(), String::new()),
    }
}

/// Word offsets (1 = the word after the opcode) of the index extension
/// words of our decoding: extension words come in operand order, except a
/// MOVEM register mask, which always directly follows the opcode.
fn index_words(ours: &Instruction) -> Vec<u32> {
    let quick = ["moveq", "addq", "subq", "trap", "as", "ls", "ro"];
    let m = ours.mnemonic.as_str();
    let long = m.ends_with(".l") && !m.starts_with("movem");
    let mut k = if m.starts_with("movem") { 2 } else { 1 };
    let mut out = Vec::new();
    for o in split_ops(&ours.operands) {
        k += match parse_our_operand(&o) {
            Opd::Imm(_) if quick.iter().any(|q| m.starts_with(q)) => 0,
            Opd::Imm(_) if long => 2,
            Opd::Imm(_) | Opd::Disp(..) | Opd::PcRel(_) => 1,
            Opd::Index(..) | Opd::PcIndex(..) => {
                out.push(k);
                1
            }
            Opd::Abs(_) if o.ends_with(".l") => 2,
            Opd::Abs(_) if o.ends_with(".w") => 1,
            _ => 0,
        };
    }
    out
}

/// `None` if the same, else the difference class ("" if not allowed).
fn compare(
    ours: &Instruction,
    theirs: &Line,
    word_at: impl Fn(u32) -> u16,
) -> Option<&'static str> {
    let (tm, to) = split_text(&theirs.text);
    if ours.kind == Kind::LineF && tm != ".short" {
        return Some("coprocessor");
    }
    if ours.kind == Kind::Invalid && tm.starts_with("swbeg") {
        return Some("swbeg");
    }
    if let Some(x) = to
        .strip_suffix("isoutofbounds.")
        .and_then(|x| parse_num(x, true))
    {
        // objdump wanted a word at x, past the next symbol.
        if x > i64::from(ours.pc) && x <= i64::from(ours.pc) + 10 && tm == "Address" {
            return Some("symbol boundary");
        }
    }
    let ext: Vec<u16> = index_words(ours).iter().map(|&k| word_at(k)).collect();
    if ext.iter().any(|&w| w & 0x0100 != 0) {
        return Some("68020 full-format index");
    }
    // A scale (bits 10-9) objdump shows as `:2`/`:4`/`:8`: compare the rest.
    let scaled = ext.iter().any(|&w| w & 0x0600 != 0);
    let to = if scaled {
        to.replace(":2)", ")")
            .replace(":4)", ")")
            .replace(":8)", ")")
    } else {
        to
    };
    let their_ops: Vec<Opd> = split_ops(&to)
        .iter()
        .map(|o| parse_objdump_operand(o))
        .collect();
    let an = |o: &Opd| matches!(o, Opd::Reg(r) if r.starts_with('a') || r == "sp");
    if ours.kind == Kind::Invalid && tm.ends_with('b') && their_ops.iter().any(an) {
        return Some("byte on An");
    }
    if ours.len != theirs.len || objdump_mnemonic(&ours.mnemonic) != tm {
        return Some("");
    }
    let our_ops: Vec<Opd> = split_ops(&ours.operands)
        .iter()
        .map(|o| parse_our_operand(o))
        .collect();
    let bit_op = ["btst", "bchg", "bclr", "bset"].contains(&ours.mnemonic.as_str());
    let mask = match ours.mnemonic.rsplit_once('.') {
        _ if bit_op => 0xFF, // the bit number is a byte
        _ if ours.mnemonic == "stop" => 0xFFFF,
        Some((_, "b")) => 0xFF,
        Some((_, "w")) => 0xFFFF,
        _ => 0xFFFF_FFFF,
    };
    let movem = ours.mnemonic.starts_with("movem");
    let same = our_ops.len() == their_ops.len()
        && our_ops
            .iter()
            .zip(&their_ops)
            .all(|(a, b)| same_operand(a, b, mask, movem) && !matches!(a, Opd::Other(_)));
    match (same, scaled) {
        (true, false) => None,
        (true, true) => Some("68020 scale"),
        (false, _) => Some(""),
    }
}

fn roms() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let shared = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/roms"));
    let mut v = Vec::new();
    for (dir, file) in [
        (root.join("testroms/out"), "rom.elf"),
        (shared.to_path_buf(), "rom.out"),
    ] {
        let mut found: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e} (the test ROMs' ELFs are needed)", dir.display()))
            .filter_map(|e| {
                let p = e.ok()?.path().join(file);
                p.is_file().then_some(p)
            })
            .collect();
        found.sort();
        assert!(!found.is_empty(), "no */{file} under {}", dir.display());
        v.extend(found);
    }
    v
}

/// Counts of one scope (inside functions / the rest of the code sections).
#[derive(Default)]
struct Tally {
    compared: usize,
    classes: BTreeMap<&'static str, usize>,
    unexplained: Vec<String>,
}

impl Tally {
    fn differ(&self) -> usize {
        self.classes.values().sum::<usize>() + self.unexplained.len()
    }
}

#[test]
fn disassembler_matches_objdump() {
    // [0]: inside functions, [1]: the rest of the executable sections
    // (vectors, headers, data: objdump decodes it all as code).
    let mut t: [Tally; 2] = Default::default();
    for rom in roms() {
        let elf = read_elf(&rom);
        let lines = objdump(&rom);
        let mut rom_counts = [0usize; 2];
        for (si, sec) in elf.sections.iter().enumerate().filter(|(_, s)| s.exec) {
            let word = |a: u32| {
                let off = a.checked_sub(sec.addr)? as usize;
                Some(u16::from_be_bytes([
                    *sec.data.get(off)?,
                    *sec.data.get(off + 1)?,
                ]))
            };
            let ranges = function_ranges(&elf, si);
            let end = sec.addr + sec.data.len() as u32;
            for (&addr, line) in lines.range(sec.addr..end) {
                let scope = usize::from(!ranges.iter().any(|&(lo, hi)| (lo..hi).contains(&addr)));
                let t = &mut t[scope];
                t.compared += 1;
                rom_counts[scope] += 1;
                let r#where = format!("{} {}:{addr:x}", rom.display(), sec.name);
                let ours = match disassemble(addr, word) {
                    Ok(i) => i,
                    Err(e) => {
                        t.unexplained
                            .push(format!("{where}: ours: {e}; objdump: {}", line.text));
                        continue;
                    }
                };
                let at = |k: u32| word(addr + 2 * k).unwrap_or(0);
                match compare(&ours, line, at) {
                    None => {}
                    Some("") => t.unexplained.push(format!(
                        "{where}: ours `{ours}` ({} bytes), objdump `{}` ({} bytes)",
                        ours.len, line.text, line.len
                    )),
                    Some(c) => {
                        if std::env::var_os("DISASM_SHOW").is_some() {
                            println!("{c}: {where}: ours `{ours}`, objdump `{}`", line.text);
                        }
                        *t.classes.entry(c).or_default() += 1;
                    }
                }
            }
        }
        assert!(
            rom_counts[0] > 1000,
            "{}: only {} instructions in functions",
            rom.display(),
            rom_counts[0]
        );
        println!(
            "{}: {} instructions in functions, {} elsewhere in code sections",
            rom.display(),
            rom_counts[0],
            rom_counts[1]
        );
    }
    for (name, t) in ["in functions", "elsewhere (data objdump decodes as code)"]
        .iter()
        .zip(&t)
    {
        println!(
            "  {name}: {} compared, {} differ: allow-listed {:?}, unexplained {}",
            t.compared,
            t.differ(),
            t.classes,
            t.unexplained.len()
        );
    }
    println!(
        "disasm: {} instructions compared, {} differ",
        t[0].compared + t[1].compared,
        t[0].differ() + t[1].differ()
    );
    let unexplained: Vec<&String> = t.iter().flat_map(|t| &t.unexplained).collect();
    assert!(
        unexplained.is_empty(),
        "{} differences outside the allow-list:\n{}",
        unexplained.len(),
        unexplained[..unexplained.len().min(60)]
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn normaliser_reads_both_syntaxes() {
    let o = parse_objdump_operand;
    let m = parse_our_operand;
    assert_eq!(o("%a1@(fffffffffffffffe,%d0:w)"), m("-2(a1,d0.w)"));
    assert_eq!(o("%a0@(10,%d0:l)"), m("$10(a0,d0.l)"));
    assert_eq!(o("%fp@(-8)"), m("-8(a6)"));
    assert_eq!(o("%sp@+"), m("(sp)+"));
    assert_eq!(o("%a7@-"), m("-(sp)"));
    assert_eq!(o("%pc@(2458,%d0:w)"), m("$2458(pc,d0.w)"));
    assert_eq!(o("%pc@(0x28)"), m("$28(pc)"));
    assert_eq!(o("0xffff8000"), m("($ffff8000).w"));
    assert_eq!(o("e0ff00b4"), m("($e0ff00b4).l"));
    assert_eq!(o("%d0-%sp"), m("d0-d7/a0-a6/sp"));
    assert_eq!(o("%d2-%d3/%a2"), m("d2-d3/a2"));
    assert_eq!(o("#-1"), m("#-1"));
    assert!(matches!(o("%a0@(2,%d0:l:8)"), Opd::Other(_)));
    assert!(same_operand(&o("#-112"), &m("#$90"), 0xFF, false));
    assert!(!same_operand(&o("#-112"), &m("#$91"), 0xFF, false));
    assert!(!same_operand(&o("#-112"), &m("#$90"), 0xFFFF, false));
    assert_eq!(
        split_text("bccs 23d0 <.short_match>"),
        ("bccs".into(), "23d0".into())
    );
    assert_eq!(objdump_mnemonic("move.l"), "movel");
}

/// Every opcode word, three times (with three sets of extension words),
/// through both disassemblers: an assembled object file with one symbol per
/// 10-byte slot (objdump restarts at each symbol), comparing the first
/// instruction of each slot. Bit 8 of every extension word is clear, so
/// that objdump takes index words as brief-format ones (with a scale in the
/// third set: compared apart from the scale) and never wants more than the
/// 10 bytes of a slot (the longest 68000 instruction).
#[test]
fn every_opcode_matches_objdump() {
    const EXT: [[u16; 4]; 3] = [
        [0x0012, 0x8834, 0x0056, 0xF878],
        [0xC0FE, 0x00C0, 0x8000, 0x0001],
        [0x0612, 0x8E34, 0x0456, 0xFA78],
    ];
    let dir = std::env::temp_dir().join(format!("retroprof-disasm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (src, obj) = (dir.join("all.s"), dir.join("all.o"));
    let mut s = String::from("\t.text\n");
    let mut code = Vec::new();
    for (p, ext) in EXT.iter().enumerate() {
        for op in 0..=0xFFFFu16 {
            s.push_str(&format!(
                "s{p}_{op:04x}:\t.short 0x{op:04x},0x{:04x},0x{:04x},0x{:04x},0x{:04x}\n",
                ext[0], ext[1], ext[2], ext[3]
            ));
            for w in std::iter::once(op).chain(ext.iter().copied()) {
                code.extend_from_slice(&w.to_be_bytes());
            }
        }
    }
    std::fs::write(&src, s).unwrap();
    let asm = "m68k-linux-gnu-as";
    let st = Command::new(asm)
        .args(["-m68000", "-o"])
        .arg(&obj)
        .arg(&src)
        .status()
        .unwrap_or_else(|e| panic!("cannot run {asm} ({e}): install binutils-m68k-linux-gnu"));
    assert!(st.success(), "{asm} failed on {}", src.display());
    let lines = objdump(&obj);
    std::fs::remove_dir_all(&dir).ok();
    let word = |a: u32| {
        let off = a as usize;
        Some(u16::from_be_bytes([*code.get(off)?, *code.get(off + 1)?]))
    };
    let mut t = Tally::default();
    for slot in 0..EXT.len() as u32 * 65536 {
        let addr = slot * 10;
        let line = lines
            .get(&addr)
            .unwrap_or_else(|| panic!("objdump printed nothing at slot {slot:#x}"));
        let ours = disassemble(addr, word).unwrap();
        t.compared += 1;
        match compare(&ours, line, |k| word(addr + 2 * k).unwrap_or(0)) {
            None => {}
            Some("") => t.unexplained.push(format!(
                "{:04x} {:04x?}: ours `{ours}` ({} bytes), objdump `{}` ({} bytes)",
                slot & 0xFFFF,
                EXT[slot as usize >> 16],
                ours.len,
                line.text,
                line.len
            )),
            Some(c) => *t.classes.entry(c).or_default() += 1,
        }
    }
    println!(
        "every opcode: {} compared, {} differ: allow-listed {:?}, unexplained {}",
        t.compared,
        t.differ(),
        t.classes,
        t.unexplained.len()
    );
    assert!(
        t.unexplained.is_empty(),
        "{} differences outside the allow-list:\n{}",
        t.unexplained.len(),
        t.unexplained[..t.unexplained.len().min(80)].join("\n")
    );
}
