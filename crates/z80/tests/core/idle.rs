//! The idle-loop pass-over of `Z80::run_until` (HALT, `JR $`, `JP $` on
//! peekable memory) against plain stepping: the same programs run twice, once
//! on a bus that lets the core peek (the fast path) and once on one that does
//! not (every pass fetched), in the same series of `run_until` calls with the
//! interrupt line raised and dropped between calls. After every call the
//! whole CPU state (registers, R, MEMPTR, Q, IFFs, T-states) and memory must
//! be equal, and so must every bus access outside the idle instruction's own
//! bytes, with its T-state.

use crate::bus::{Access, LogBus};
use crate::host::Z80;

/// The bus (steady line or not) with `prog`'s pieces placed in zeroed
/// memory.
fn bus<const S: bool>(prog: &[(u16, &[u8])], peekable: bool) -> LogBus<S> {
    let mut mem = vec![0u8; 0x10000];
    for (at, bytes) in prog {
        mem[*at as usize..*at as usize + bytes.len()].copy_from_slice(bytes);
    }
    LogBus::new(mem, peekable)
}

/// Call lengths (T-states) from a small xorshift, 1..=max.
fn chunks(n: usize, max: u64, seed: u64) -> Vec<u64> {
    let mut x = seed;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            1 + x % max
        })
        .collect()
}

/// Run `prog` both ways in the same calls; `int_calls` says in which calls
/// /INT is asserted. `idle` is the address range of the idle instruction
/// (its accesses are the ones the fast path leaves out). Returns how many
/// accesses to the idle bytes each run made (fast, stepped).
fn both_ways(
    prog: &[(u16, &[u8])],
    calls: &[u64],
    int_calls: impl Fn(usize) -> bool,
    idle: std::ops::Range<u16>,
) -> (usize, usize) {
    both_ways_on::<false>(prog, calls, int_calls, idle)
}

/// [`both_ways`] on a bus with or without the steady-line promise.
fn both_ways_on<const S: bool>(
    prog: &[(u16, &[u8])],
    calls: &[u64],
    int_calls: impl Fn(usize) -> bool,
    idle: std::ops::Range<u16>,
) -> (usize, usize) {
    let mut fast = (Z80::new(), bus::<S>(prog, true));
    let mut slow = (Z80::new(), bus::<S>(prog, false));
    let mut until = 0;
    for (i, len) in calls.iter().enumerate() {
        until += len;
        for (z, bus) in [&mut fast, &mut slow] {
            bus.int = int_calls(i);
            z.run_until(bus, until);
        }
        assert_eq!(fast.0, slow.0, "CPU state after call {i} (until {until})");
        assert_eq!(fast.0.r(), slow.0.r());
        assert!(fast.1.mem == slow.1.mem, "memory after call {i}");
    }
    let addr = |a: &Access| match *a {
        Access::Fetch(x, _) | Access::Read(x, _) | Access::Write(x, _, _) => x,
        Access::IoRead(p, _) | Access::IoWrite(p, _, _) => p,
    };
    let outside = |log: &[Access]| -> Vec<Access> {
        log.iter()
            .filter(|a| !idle.contains(&addr(a)))
            .cloned()
            .collect()
    };
    assert_eq!(outside(&fast.1.log), outside(&slow.1.log), "bus accesses");
    let inside = |log: &[Access]| log.iter().filter(|a| idle.contains(&addr(a))).count();
    (inside(&fast.1.log), inside(&slow.1.log))
}

/// IM 1 handler at 0x38: store R and the count of interrupts, return to the
/// idle loop with interrupts enabled again.
const HANDLER: &[u8] = &[
    0xF5, // push af
    0xED, 0x5F, // ld a,r
    0x32, 0x00, 0x20, // ld (2000),a
    0x3A, 0x01, 0x20, // ld a,(2001)
    0x3C, // inc a
    0x32, 0x01, 0x20, // ld (2001),a
    0xF1, // pop af
    0xFB, // ei
    0xC9, // ret
];

#[test]
fn halt_with_interrupts_matches_stepping() {
    // 0000: ld sp,8000 ; im 1 ; ei ; 0006: halt ; ld hl,(2002) ; inc hl ;
    //       ld (2002),hl ; jr 0006
    let main: &[u8] = &[
        0x31, 0x00, 0x80, 0xED, 0x56, 0xFB, 0x76, 0x2A, 0x02, 0x20, 0x23, 0x22, 0x02, 0x20, 0x18,
        0xF6,
    ];
    for seed in [1, 7, 99] {
        let calls = chunks(3000, 700, seed);
        // /INT for one call in 17 (like the Mega Drive's one line per frame).
        let (fast, slow) = both_ways(&[(0, main), (0x38, HANDLER)], &calls, |i| i % 17 == 5, 6..7);
        assert!(fast * 10 < slow, "fast path not taken: {fast} vs {slow}");
    }
}

#[test]
fn jr_self_with_interrupts_matches_stepping() {
    // 0000: ld sp,8000 ; im 1 ; ei ; 0006: jr 0006
    let main: &[u8] = &[0x31, 0x00, 0x80, 0xED, 0x56, 0xFB, 0x18, 0xFE];
    for seed in [3, 11] {
        let calls = chunks(3000, 500, seed);
        let (fast, slow) = both_ways(&[(0, main), (0x38, HANDLER)], &calls, |i| i % 13 == 2, 6..8);
        assert!(fast * 10 < slow, "fast path not taken: {fast} vs {slow}");
    }
}

#[test]
fn jp_self_and_halt_with_interrupts_disabled() {
    // di ; 0001: jp 0001 (never left; R wraps many times).
    let jp: &[u8] = &[0xF3, 0xC3, 0x01, 0x00];
    let calls = chunks(500, 20_000, 5);
    let (fast, slow) = both_ways(&[(0, jp)], &calls, |i| i % 3 == 0, 1..4);
    assert!(fast * 10 < slow);
    // di ; halt: /INT asserted is ignored with IFF1 clear.
    let halt: &[u8] = &[0xF3, 0x76];
    let (fast, slow) = both_ways(&[(0, halt)], &calls, |i| i % 2 == 0, 1..2);
    assert!(fast * 10 < slow);
}

#[test]
fn short_calls_and_not_idle_code() {
    // Calls of 1..6 T (the pass-over often covers a single pass, Q's
    // "previous" handling) and a loop that only looks idle: jr to the
    // instruction before (not `JR $`) must be stepped.
    let main: &[u8] = &[
        0x31, 0x00, 0x80, 0xED, 0x56, 0xFB, 0x37, // scf (Q = flags)
        0x76, // 0007: halt
        0x00, 0x18, 0xFD, // nop ; jr 0008
    ];
    let calls = chunks(4000, 6, 21);
    both_ways(
        &[(0, main), (0x38, HANDLER)],
        &calls,
        |i| i % 50 == 10,
        7..8,
    );
}

#[test]
fn jr_self_right_after_a_flag_write() {
    // The idle `JR $` entered straight after `OR A` (Q = flags), with calls
    // so short that the pass-over often covers one pass: Q moves to
    // "previous" exactly once. The handler drops its return address and
    // re-enters through the `OR A`.
    let main: &[u8] = &[0x31, 0x00, 0x80, 0xED, 0x56, 0xFB, 0xB7, 0x18, 0xFE];
    let handler: &[u8] = &[
        0xE1, // pop hl
        0xED, 0x5F, // ld a,r
        0x32, 0x00, 0x20, // ld (2000),a
        0xFB, // ei
        0xC3, 0x06, 0x00, // jp 0006
    ];
    for seed in [2, 9, 40] {
        let calls = chunks(4000, 16, seed);
        let (fast, slow) = both_ways(&[(0, main), (0x38, handler)], &calls, |i| i % 4 == 1, 7..9);
        assert!(fast < slow, "fast path not taken: {fast} vs {slow}");
    }
}

#[test]
fn no_peek_means_every_access() {
    // The default `peek` (None) keeps the old behaviour: every HALT pass
    // is fetched.
    let mut bus = bus::<false>(&[(0, &[0xF3, 0x76][..])], false);
    let mut z = Z80::new();
    z.run_until(&mut bus, 4 * 101);
    // di, then 100 HALT fetches.
    assert_eq!(bus.log.len(), 101);
    assert_eq!(z.tstates, 404);
    assert_eq!(z.r(), 101);
    assert!(z.halted);
}

/// The countdown loop `DEC A; JR NZ,-3` (SGDK's drivers wait with it)
/// passed over in whole iterations, against stepping every instruction: A
/// counting 1-255 and 0 (256 passes), R, MEMPTR, the flags (C kept) and Q
/// after every call, calls from 1 T (cut between the `JR` and the `DEC`)
/// to several loops long; with interrupts disabled, and enabled with the
/// line raised now and then on a bus with and without the steady-line
/// promise (the pass then only runs while the line is low on the steady
/// one).
#[test]
fn countdown_loop_matches_stepping() {
    // 0000: ld sp,8000 ; im 1 ; di/ei ; 0006: ld a,(2001) ; inc a ;
    // ld (2001),a ; 000C: dec a ; jr nz,000C ; ccf (C flipped: the loop
    // keeps it) ; push af ; ld a,r ; ld (2000),a ; jr 0006
    let prog = |ei: bool| -> Vec<u8> {
        vec![
            0x31,
            0x00,
            0x80,
            0xED,
            0x56,
            if ei { 0xFB } else { 0xF3 },
            0x3A,
            0x01,
            0x20,
            0x3C,
            0x32,
            0x01,
            0x20,
            0x3D,
            0x20,
            0xFD,
            0x3F,
            0xF5,
            0xED,
            0x5F,
            0x32,
            0x00,
            0x20,
            0x18,
            0xED,
        ]
    };
    // The loop's bytes: the pass leaves out their fetches and reads.
    let idle = 0x0D..0x10;
    let di = prog(false);
    for (seed, max) in [(1, 3), (4, 40), (8, 700), (13, 20_000)] {
        let calls = chunks(3000, max, seed);
        // Calls shorter than a JR and a DEC leave nothing to pass over.
        let short = max < 16;
        let (fast, slow) = both_ways(&[(0, &di)], &calls, |i| i % 7 == 1, idle.clone());
        assert!(
            short || fast < slow,
            "fast path not taken: {fast} vs {slow}"
        );
        let (fast, slow) = both_ways_on::<true>(&[(0, &di)], &calls, |i| i % 7 == 1, idle.clone());
        assert!(
            short || fast < slow,
            "fast path not taken: {fast} vs {slow}"
        );
    }
    let ei = prog(true);
    for (seed, max) in [(2, 20), (5, 300), (9, 5_000)] {
        let calls = chunks(3000, max, seed);
        both_ways(
            &[(0, &ei), (0x38, HANDLER)],
            &calls,
            |i| i % 11 == 3,
            idle.clone(),
        );
        let (fast, slow) = both_ways_on::<true>(
            &[(0, &ei), (0x38, HANDLER)],
            &calls,
            |i| i % 11 == 3,
            idle.clone(),
        );
        assert!(fast < slow, "fast path not taken: {fast} vs {slow}");
    }
}

/// Loops that only look like the countdown loop are stepped: `JR NZ` to
/// elsewhere, `DEC A` of a DD prefix (`DEC A` with the prefix ignored),
/// `DEC B; JR NZ,-3`.
#[test]
fn countdown_lookalikes_are_stepped() {
    // 0000: di ; ld a,(2001) ; inc a ; ld (2001),a ; 0008: dec a ; nop ;
    // jr nz,0008 ; 000C: dd dec a ; jr nz,000C ; ld b,a ; 0012: dec b ;
    // jr nz,0012 ; jr 0001
    let main: &[u8] = &[
        0xF3, 0x3A, 0x01, 0x20, 0x3C, 0x32, 0x01, 0x20, 0x3D, 0x00, 0x20, 0xFC, 0xDD, 0x3D, 0x20,
        0xFC, 0x47, 0x05, 0x20, 0xFD, 0x18, 0xEB,
    ];
    let calls = chunks(3000, 300, 17);
    let (fast, slow) = both_ways(&[(0, main)], &calls, |_| false, 0..0);
    assert_eq!(fast, slow);
}
