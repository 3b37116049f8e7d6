//! Documented behaviour checked directly (not against rustzx): the places
//! where we deliberately differ from rustzx-z80 0.16, reset, R and the
//! interrupt sequence timing.

use crate::host::{TestBus, Z80};

struct Flat {
    mem: Vec<u8>,
    writes: Vec<(u16, u8, u64)>,
    int: bool,
    vector: u8,
}

impl Flat {
    fn with(prog: &[u8]) -> Flat {
        let mut mem = vec![0u8; 0x10000];
        mem[..prog.len()].copy_from_slice(prog);
        Flat {
            mem,
            writes: Vec::new(),
            int: false,
            vector: 0xFF,
        }
    }
}

impl TestBus for Flat {
    fn read(&mut self, addr: u16, _t: &mut u64) -> u8 {
        self.mem[addr as usize]
    }
    fn write(&mut self, addr: u16, value: u8, t: &mut u64) {
        self.mem[addr as usize] = value;
        self.writes.push((addr, value, *t));
    }
    fn int_line(&self) -> bool {
        self.int
    }
    fn int_vector(&mut self) -> u8 {
        self.vector
    }
}

#[test]
fn reset_state() {
    let mut z = Z80::new();
    z.set_bc(0x1234);
    z.pc = 0x4000;
    z.iff1 = true;
    z.im = 2;
    z.set_r(0x85);
    z.reset();
    assert_eq!(z.pc, 0);
    assert_eq!(z.af(), 0xFFFF);
    assert_eq!(z.sp, 0xFFFF);
    assert_eq!((z.i, z.r(), z.im, z.iff1, z.iff2), (0, 0, 0, false, false));
    // Other registers keep their contents.
    assert_eq!(z.bc(), 0x1234);
}

#[test]
fn memptr_after_ld_nn_a_and_out_n_a() {
    // ld a,0x5A ; ld (0x12FF),a ; out (0xFF),a
    let mut bus = Flat::with(&[0x3E, 0x5A, 0x32, 0xFF, 0x12, 0xD3, 0xFF]);
    let mut z = Z80::new();
    z.step(&mut bus);
    z.step(&mut bus);
    // low = (0x12FF + 1) & 0xFF, high = A (rustzx: 0x1300 | 0x5A00).
    assert_eq!(z.memptr, 0x5A00);
    assert_eq!(z.tstates, 7 + 13);
    z.step(&mut bus);
    // low = (0xFF + 1) & 0xFF, high = A (rustzx: 0x100 | 0x5A00).
    assert_eq!(z.memptr, 0x5A00);
    // OUT (n),A is 11 T (Zilog UM0080).
    assert_eq!(z.tstates, 7 + 13 + 11);
}

#[test]
fn r_counts_m1_cycles_and_keeps_bit_7() {
    // ld a,0xFF ; ld r,a ; nop x 200 ; ld a,r
    let mut prog = vec![0x3E, 0xFF, 0xED, 0x4F];
    prog.extend([0x00; 200]);
    prog.extend([0xED, 0x5F]);
    let mut bus = Flat::with(&prog);
    let mut z = Z80::new();
    for _ in 0..203 {
        z.step(&mut bus);
    }
    // R was 0xFF after LD R,A; 200 NOPs and the 2 M1 cycles of LD A,R.
    assert_eq!(z.a(), 0x80 | ((0x7F + 202) & 0x7F) as u8);
}

#[test]
fn im1_acknowledge_then_push() {
    // ei ; halt
    let mut bus = Flat::with(&[0xFB, 0x76]);
    let mut z = Z80::new();
    z.sp = 0x8000;
    z.im = 1;
    z.step(&mut bus); // ei (4)
    z.step(&mut bus); // halt (4)
    z.step(&mut bus); // halt again (4): still halted
    assert!(z.halted);
    assert_eq!(z.tstates, 12);
    bus.int = true;
    z.step(&mut bus);
    // 7 T acknowledge, then PC (0x0002, past the HALT) pushed high byte
    // first, then the first handler instruction (NOP at 0x38: 4 T).
    assert_eq!(
        bus.writes,
        vec![(0x7FFF, 0x00, 12 + 10), (0x7FFE, 0x02, 12 + 13)]
    );
    assert_eq!(z.tstates, 12 + 13 + 4);
    assert_eq!(z.pc, 0x39);
    assert!(!z.iff1 && !z.halted);
}

#[test]
fn im2_vector_and_ei_delay() {
    // ei ; nop ; (interrupt) ... vector table at 0x3F10 -> 0x0200
    let mut bus = Flat::with(&[0xFB, 0x00, 0x00]);
    bus.mem[0x3F10] = 0x00;
    bus.mem[0x3F11] = 0x02;
    let mut z = Z80::new();
    z.sp = 0x8000;
    z.im = 2;
    z.i = 0x3F;
    bus.int = true;
    bus.vector = 0x10;
    z.step(&mut bus); // ei: no interrupt before the next instruction
    assert_eq!(z.pc, 1);
    z.step(&mut bus); // interrupt blocked for one instruction: nop runs
    assert_eq!(z.pc, 2);
    assert_eq!(z.tstates, 8);
    z.step(&mut bus); // now accepted: 19 T, then the NOP at 0x0200
    assert_eq!(z.tstates, 8 + 19 + 4);
    assert_eq!(z.pc, 0x0201);
    assert_eq!(
        bus.writes,
        vec![(0x7FFF, 0x00, 8 + 10), (0x7FFE, 0x02, 8 + 13)]
    );
}

#[test]
fn io_cycles_cost_4_t() {
    // in a,(0x10) ; in b,(c) ; otir with b=1
    let mut bus = Flat::with(&[0xDB, 0x10, 0xED, 0x40, 0xED, 0xB3]);
    let mut z = Z80::new();
    z.step(&mut bus);
    assert_eq!(z.a(), 0xFF);
    assert_eq!(z.tstates, 11);
    z.step(&mut bus);
    assert_eq!(z.tstates, 11 + 12);
    z.set_bc(0x0100);
    z.step(&mut bus);
    // B reached 0: no repeat, 16 T.
    assert_eq!(z.tstates, 11 + 12 + 16);
}
