//! The run loop's interrupt gate (`Bus::INT_LINE_STEADY`): on a bus that
//! promises its /INT line only changes between calls, `run_until` looks at
//! the line only after IFF1 or an EI/DI/prefix delay changes, not before
//! every instruction. The same programs run three ways in the same series of
//! calls with the line raised and dropped between calls: on a steady bus
//! (the fast path), on the same bus without the promise (the line read
//! before every instruction while IFF1 is set), and one `step` at a time.
//! After every call the whole CPU state (registers, R, MEMPTR, Q, IFFs,
//! T-states) and memory must be equal, and so must every bus access with its
//! T-state.

use crate::bus::LogBus;
use crate::host::Z80;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Memory full of code rich in what moves the gate: EI, DI, RETN/RETI,
/// prefix chains, LD A,R / LD R,A, IM changes, EI; HALT, next to plain
/// register, memory and jump instructions (random bytes between them).
fn program(seed: u64) -> Vec<u8> {
    const PIECES: &[&[u8]] = &[
        &[0xFB],                   // ei
        &[0xF3],                   // di
        &[0xED, 0x45],             // retn
        &[0xED, 0x4D],             // reti
        &[0xDD, 0xDD, 0x23],       // dd dd inc ix
        &[0xFD, 0xDD, 0x7E, 0x01], // fd dd ld a,(ix+1)
        &[0xDD, 0xED, 0x5F],       // dd ed ld a,r
        &[0xED, 0x5F],             // ld a,r
        &[0xED, 0x4F],             // ld r,a
        &[0xED, 0x56],             // im 1
        &[0xED, 0x5E],             // im 2
        &[0xFB, 0x76],             // ei ; halt
        &[0xFB, 0x00],             // ei ; nop
        &[0xFB, 0xFB],             // ei ; ei
        &[0x3C],                   // inc a
        &[0x37],                   // scf
        &[0x3F],                   // ccf
        &[0xB7],                   // or a
        &[0x18, 0x02],             // jr +2
        &[0x10, 0xFE],             // djnz $
        &[0xD9],                   // exx
        &[0xED, 0xA0],             // ldi
        &[0xCB, 0x46],             // bit 0,(hl)
    ];
    let mut r = Rng(seed | 1);
    let mut mem = Vec::with_capacity(0x10000);
    while mem.len() < 0x10000 {
        if r.next().is_multiple_of(4) {
            mem.push(r.next() as u8);
        } else {
            mem.extend_from_slice(PIECES[(r.next() % PIECES.len() as u64) as usize]);
        }
    }
    mem.truncate(0x10000);
    mem
}

#[test]
fn steady_line_gate_matches_reading_the_line_every_instruction() {
    for seed in [1u64, 5, 23, 77, 1234, 99_999] {
        let mem = program(seed);
        let mut steady = (Z80::new(), LogBus::<true>::new(mem.clone(), false));
        let mut plain = (Z80::new(), LogBus::<false>::new(mem.clone(), false));
        let mut stepped = (Z80::new(), LogBus::<true>::new(mem, false));
        for z in [&mut steady.0, &mut plain.0, &mut stepped.0] {
            z.sp = 0x8000;
            z.im = 1;
            z.i = 0x7F;
        }
        let mut r = Rng(seed.wrapping_mul(0x9E37_79B9) | 1);
        let mut until = 0;
        let mut open = 0;
        for call in 0..4000 {
            until += 1 + r.next() % 300;
            let int = r.next().is_multiple_of(3);
            steady.1.int = int;
            plain.1.int = int;
            stepped.1.int = int;
            if int && steady.0.iff1 {
                open += 1;
            }
            steady.0.run_until(&mut steady.1, until);
            plain.0.run_until(&mut plain.1, until);
            while stepped.0.tstates < until {
                stepped.0.step(&mut stepped.1);
            }
            assert_eq!(steady.0, plain.0, "seed {seed}, call {call}");
            assert_eq!(steady.0, stepped.0, "seed {seed}, call {call} (stepped)");
            assert_eq!(steady.0.r(), plain.0.r());
            assert_eq!(steady.0.q(), plain.0.q());
            assert!(steady.1.mem == plain.1.mem, "memory, seed {seed}");
            assert!(steady.1.mem == stepped.1.mem, "memory, seed {seed}");
            assert_eq!(steady.1.log, plain.1.log, "accesses, seed {seed}");
            assert_eq!(steady.1.log, stepped.1.log, "accesses, seed {seed}");
            steady.1.log.clear();
            plain.1.log.clear();
            stepped.1.log.clear();
        }
        // The calls do start with the line up and IFF1 set, and the CPU does
        // take interrupts (the gate is exercised open).
        assert!(open > 20, "seed {seed}: {open} calls with an interrupt due");
        assert!(steady.1.acks > 0, "seed {seed}: no interrupt taken");
        assert_eq!(steady.1.acks, plain.1.acks);
    }
}
