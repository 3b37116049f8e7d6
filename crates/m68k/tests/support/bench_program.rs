//! The benchmark program of `benches/cpu_bench.rs`, shared with
//! `tests/core/program.rs` (which runs it briefly as a correctness test): a
//! hand-assembled 68000 program, a flat RAM bus, a per-PC cycle table
//! observer, and a model of what the program computes.

#![allow(dead_code)]

use retroprof_m68k::{Bus, ExceptionKind, FunctionCode, Observer, Read, Write};

// The including crate's `Cpu`: the real one in the benchmark, the one
// `&mut dyn Bus` instantiation of the core in the test binary
// (`tests/core/host.rs`).
use super::Cpu;

/// Where the program is loaded (vector 1 points here).
pub const ORG: u32 = 0x400;
/// Initial supervisor stack (vector 0).
pub const STACK: u32 = 0x8000;
/// The outer loop's first instruction.
pub const LOOP: u32 = 0x40e;
/// Memory results of the program (abs.l operands).
pub const TOTAL: u32 = 0x1_0000;
pub const LAST: u32 = 0x1_0004;
pub const RAM_SIZE: usize = 1 << 20;

/// The program, one instruction per entry: its words (big-endian, as
/// assembled by `m68k-linux-gnu-as -m68000`, checked with objdump) and the
/// source. Addresses start at `ORG` and are listed in the comments.
///
/// What one iteration i (d7) computes:
/// - arr[k] = (i + 3k) mod 2^16 for k in 0..64 (words at 0x2000);
/// - copies arr to 0x2100 with move.l (An)+,(An)+;
/// - d0 = sum of the copy's 64 words, read backwards with -(An);
/// - d4 = XOR over j in 0..16 of (arr[3 + 4j] - arr[1]) (16-bit);
/// - d1 = divu(mulu(d0 & 0xffff, 50), 77) (remainder:quotient);
/// - d6 = number of words of the copy > 100 (subroutine `count`);
/// - d3 = d0 + d1, then its low word += d4, then d3 += d6;
/// - LAST = d3, TOTAL += d3, d7 += 1.
#[rustfmt::skip]
pub const PROGRAM: &[(&[u16], &str)] = &[
    (&[0x7e00],                 "400 start: moveq   #0,d7"),
    (&[0x42b9, 0x0001, 0x0000], "402        clr.l   (0x10000).l       | TOTAL"),
    (&[0x42b9, 0x0001, 0x0004], "408        clr.l   (0x10004).l       | LAST"),
    (&[0x41f8, 0x2000],         "40e loop:  lea     (0x2000).w,a0"),
    (&[0x3207],                 "412        move.w  d7,d1"),
    (&[0x743f],                 "414        moveq   #63,d2"),
    (&[0x30c1],                 "416 fill:  move.w  d1,(a0)+"),
    (&[0x5641],                 "418        addq.w  #3,d1"),
    (&[0x51ca, 0xfffa],         "41a        dbra    d2,fill"),
    (&[0x45f8, 0x2000],         "41e        lea     (0x2000).w,a2"),
    (&[0x47f8, 0x2100],         "422        lea     (0x2100).w,a3"),
    (&[0x741f],                 "426        moveq   #31,d2"),
    (&[0x26da],                 "428 copy:  move.l  (a2)+,(a3)+"),
    (&[0x51ca, 0xfffc],         "42a        dbra    d2,copy"),
    (&[0x224b],                 "42e        movea.l a3,a1"),
    (&[0x7000],                 "430        moveq   #0,d0"),
    (&[0x7600],                 "432        moveq   #0,d3"),
    (&[0x743f],                 "434        moveq   #63,d2"),
    (&[0x3621],                 "436 sum:   move.w  -(a1),d3"),
    (&[0xd083],                 "438        add.l   d3,d0"),
    (&[0x51ca, 0xfffa],         "43a        dbra    d2,sum"),
    (&[0x45f8, 0x2000],         "43e        lea     (0x2000).w,a2"),
    (&[0x7800],                 "442        moveq   #0,d4"),
    (&[0x7a00],                 "444        moveq   #0,d5"),
    (&[0x740f],                 "446        moveq   #15,d2"),
    (&[0x3632, 0x5006],         "448 idx:   move.w  6(a2,d5.w),d3"),
    (&[0x966a, 0x0002],         "44c        sub.w   2(a2),d3"),
    (&[0xb744],                 "450        eor.w   d3,d4"),
    (&[0x5045],                 "452        addq.w  #8,d5"),
    (&[0x51ca, 0xfff2],         "454        dbra    d2,idx"),
    (&[0x3200],                 "458        move.w  d0,d1"),
    (&[0xc2fc, 0x0032],         "45a        mulu.w  #50,d1"),
    (&[0x82fc, 0x004d],         "45e        divu.w  #77,d1"),
    (&[0x41f8, 0x2100],         "462        lea     (0x2100).w,a0"),
    (&[0x4eba, 0x001c],         "466        jsr     count(pc)"),
    (&[0x2600],                 "46a        move.l  d0,d3"),
    (&[0xd681],                 "46c        add.l   d1,d3"),
    (&[0xd644],                 "46e        add.w   d4,d3"),
    (&[0xd686],                 "470        add.l   d6,d3"),
    (&[0x23c3, 0x0001, 0x0004], "472        move.l  d3,(0x10004).l    | LAST"),
    (&[0xd7b9, 0x0001, 0x0000], "478        add.l   d3,(0x10000).l    | TOTAL"),
    (&[0x5287],                 "47e        addq.l  #1,d7"),
    (&[0x6000, 0xff8c],         "480        bra.w   loop"),
    (&[0x7c00],                 "484 count: moveq   #0,d6"),
    (&[0x743f],                 "486        moveq   #63,d2"),
    (&[0x3a3c, 0x0064],         "488        move.w  #100,d5"),
    (&[0xba58],                 "48c c1:    cmp.w   (a0)+,d5"),
    (&[0x6402],                 "48e        bcc.s   c2"),
    (&[0x5246],                 "490        addq.w  #1,d6"),
    (&[0x51ca, 0xfff8],         "492 c2:    dbra    d2,c1"),
    (&[0x6102],                 "496        bsr.s   tiny"),
    (&[0x4e75],                 "498        rts"),
    (&[0x48c6],                 "49a tiny:  ext.l   d6"),
    (&[0x4e75],                 "49c        rts"),
];

/// Flat RAM, no wait states, no interrupts.
pub struct Ram {
    pub mem: Vec<u8>,
}

impl Ram {
    pub fn new() -> Self {
        let mut mem = vec![0u8; RAM_SIZE];
        mem[0..4].copy_from_slice(&STACK.to_be_bytes());
        mem[4..8].copy_from_slice(&ORG.to_be_bytes());
        let mut a = ORG as usize;
        for (words, _) in PROGRAM {
            for w in *words {
                mem[a..a + 2].copy_from_slice(&w.to_be_bytes());
                a += 2;
            }
        }
        Ram { mem }
    }

    pub fn long(&self, addr: u32) -> u32 {
        let a = addr as usize;
        u32::from_be_bytes(self.mem[a..a + 4].try_into().unwrap())
    }
}

impl Bus for Ram {
    #[inline(always)]
    fn read_byte(&mut self, addr: u32, _fc: FunctionCode, _now: u64) -> Read<u8> {
        Read::ok(self.mem[addr as usize & (RAM_SIZE - 1)])
    }
    #[inline(always)]
    fn read_word(&mut self, addr: u32, _fc: FunctionCode, _now: u64) -> Read<u16> {
        let a = addr as usize & (RAM_SIZE - 2);
        Read::ok(u16::from_be_bytes([self.mem[a], self.mem[a + 1]]))
    }
    #[inline(always)]
    fn write_byte(&mut self, addr: u32, data: u8, _fc: FunctionCode, _now: u64) -> Write {
        self.mem[addr as usize & (RAM_SIZE - 1)] = data;
        Write::OK
    }
    #[inline(always)]
    fn write_word(&mut self, addr: u32, data: u16, _fc: FunctionCode, _now: u64) -> Write {
        let a = addr as usize & (RAM_SIZE - 2);
        self.mem[a..a + 2].copy_from_slice(&data.to_be_bytes());
        Write::OK
    }
}

/// The profiler-style observer: cycles per instruction address.
pub struct PerPc {
    pub table: Vec<u64>,
    pub instructions: u64,
    pub exceptions: u64,
}

/// Table size: one entry per word of a 4 MiB ROM.
pub const TABLE_LEN: usize = 1 << 21;

impl Observer for PerPc {
    #[inline(always)]
    fn instruction(&mut self, pc: u32, cycles: u32) {
        self.table[(pc >> 1) as usize & (TABLE_LEN - 1)] += cycles as u64;
        self.instructions += 1;
    }
    #[inline(always)]
    fn exception(&mut self, _kind: ExceptionKind, _vector: u8, _handler: u32, _cycles: u32) {
        self.exceptions += 1;
    }
}

/// The program's computation for iteration `i`, written independently of
/// the instruction sequence.
pub fn checksum(i: u32) -> u32 {
    let arr: Vec<u16> = (0..64u32)
        .map(|k| (i as u16).wrapping_add((3 * k) as u16))
        .collect();
    let d0: u32 = arr.iter().map(|&w| w as u32).sum();
    let d4 = (0..16).fold(0u16, |acc, j| acc ^ arr[3 + 4 * j].wrapping_sub(arr[1]));
    let product = (d0 & 0xffff) * 50;
    let d1 = ((product % 77) << 16) | (product / 77);
    let d6 = arr.iter().filter(|&&w| w > 100).count() as u32;
    let mut d3 = d0.wrapping_add(d1);
    d3 = (d3 & 0xffff_0000) | (d3 as u16).wrapping_add(d4) as u32;
    d3.wrapping_add(d6)
}

/// Steps to the top of the outer loop (bounded) and checks the program's
/// results against the model, for a run of `cycles` cycles. Returns the
/// number of completed iterations.
pub fn check_program(cpu: &mut Cpu, ram: &mut Ram, cycles: u64) -> Result<u32, String> {
    // The test convention: pc is 4 past the instruction about to execute.
    let mut steps = 0;
    while cpu.registers().pc != LOOP + 4 {
        if steps > 10_000 || cpu.step(ram, &mut ()) == 0 {
            return Err(format!(
                "never got back to the loop top at {LOOP:#x} (pc {:#x})",
                cpu.registers().pc
            ));
        }
        steps += 1;
    }
    let regs = cpu.registers();
    let n = regs.d[7];
    let expected_total = (0..n).fold(0u32, |acc, i| acc.wrapping_add(checksum(i)));
    let expected_last = if n == 0 { 0 } else { checksum(n - 1) };
    let total = ram.long(TOTAL);
    let last = ram.long(LAST);
    if total != expected_total || last != expected_last {
        return Err(format!(
            "after {n} iterations TOTAL = {total:#010x} (expected {expected_total:#010x}), \
             LAST = {last:#010x} (expected {expected_last:#010x})"
        ));
    }
    if regs.ssp != STACK || regs.sr & 0x2700 != 0x2700 {
        return Err(format!(
            "stack or status changed: ssp {:#x}, sr {:#06x}",
            regs.ssp, regs.sr
        ));
    }
    // Well under 20,000 cycles per iteration on any correct 68000 timing.
    if (n as u64) < cycles / 20_000 {
        return Err(format!(
            "only {n} iterations in {} cycles: timing is far off",
            cycles
        ));
    }
    Ok(n)
}

/// Checks that the listing's addresses match the words' layout.
pub fn check_listing() {
    let mut addr = ORG;
    for (words, src) in PROGRAM {
        let listed = u32::from_str_radix(&src[..3], 16).unwrap();
        assert_eq!(listed, addr, "program listing address of {src:?}");
        addr += 2 * words.len() as u32;
    }
}

/// Checks that a per-PC table only has cycles at instruction addresses.
pub fn check_table(table: &[u64]) -> Result<(), String> {
    let mut starts = Vec::new();
    let mut addr = ORG;
    for (words, _) in PROGRAM {
        starts.push(addr);
        addr += 2 * words.len() as u32;
    }
    for (i, &c) in table.iter().enumerate() {
        if c != 0 && starts.binary_search(&((i as u32) << 1)).is_err() {
            return Err(format!(
                "per-PC table has {c} cycles at {:#x}, not an instruction",
                i << 1
            ));
        }
    }
    Ok(())
}
