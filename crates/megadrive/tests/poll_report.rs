//! The skipped polling passes' report (the bus's `poll_skip`, the seam's
//! `poll_passes`) leaves the console as running every pass does, including
//! the last instruction addresses that error reports print: the seam keeps
//! the latest run of skipped passes as a description (its three PCs and
//! its instruction numbers) instead of writing it into the ring, and
//! `System::recent_pcs` must read the same addresses either way.
//!
//! Both ways, per frame: frame info, time, registers, instruction count,
//! the last instruction addresses, bus counters, work RAM, Z80 clock and PC,
//! VRAM. A synthetic program whose VBlank waits start at a phase that
//! drifts frame by frame (so skipped runs of every length, short ones after
//! long ones, end near the frame's end), and castlecat2 with the reference
//! input.

#[path = "golden/support.rs"]
mod support;

use std::path::Path;

use retroprof_megadrive::{Clock, Config, InputScript, MdObserver, Rom, System};

/// The pad script of shared/reference/README.md.
const SCRIPT: &str =
    "60-600:R,200-210:C,300-305:S,600-605:S,700-1199:R,900-910:C,1000-1010:C,1100-1110:C";

/// Takes the polling passes in bulk (`bulk`) or refuses them (every
/// instruction then runs and is reported one by one).
struct Bulk {
    bulk: bool,
    passes: u64,
    reports: u64,
}

impl MdObserver for Bulk {
    fn accepts_poll_passes(&mut self, _pcs: &[u32; 3]) -> bool {
        self.bulk
    }
    fn poll_passes(&mut self, _p: &[u32; 3], _m: &[u64; 3], _r: &[u64; 3], n: u64, _c: &Clock) {
        self.passes += n;
        self.reports += 1;
    }
}

/// The 68000 program (at 0x200): display on, then forever: wait for the
/// VBlank flag (`move.w (a0),d0; btst #3,d0; beq.s`), a busy `dbra` loop
/// of d6 iterations (d6 grows by 13 a frame, wrapping near 11,008, about a
/// whole active display), wait for the flag to clear (the same loop with
/// `bne.s`).
const PROGRAM: [u16; 26] = [
    0x41F9, 0x00C0, 0x0004, // 200: lea $C00004,a0
    0x30BC, 0x8144, // 206: move.w #$8144,(a0)   display on, V28
    0x7C00, // 20A: moveq #0,d6
    0x3010, 0x0800, 0x0003, 0x67F8, // 20C: wait until VBlank
    0x3E06, // 214: move.w d6,d7
    0x51CF, 0xFFFE, // 216: dbra d7,*
    0x0646, 0x000D, // 21A: addi.w #13,d6
    0x0C46, 0x2B00, // 21E: cmpi.w #11008,d6
    0x6502, // 222: bcs.s 226
    0x7C00, // 224: moveq #0,d6
    0x3010, 0x0800, 0x0003, 0x66F8, // 226: wait while VBlank
    0x60DC, // 22E: bra.s 20C
    0x4E71, 0x4E71, // nop nop
];

fn synthetic_rom() -> Rom {
    let mut r = vec![0u8; 0x400];
    r[0..4].copy_from_slice(&0x00FF_FF00u32.to_be_bytes());
    r[4..8].copy_from_slice(&0x0000_0200u32.to_be_bytes());
    r[0x100..0x110].copy_from_slice(b"SEGA MEGA DRIVE ");
    r[0x1F0] = b'U';
    for (i, w) in PROGRAM.iter().enumerate() {
        r[0x200 + 2 * i..0x202 + 2 * i].copy_from_slice(&w.to_be_bytes());
    }
    Rom::from_bytes(Path::new("pollring.bin"), r).expect("synthetic ROM")
}

/// Per frame, the console's state as text; and the observer.
fn frames(rom: &Rom, script: &InputScript, n: u64, bulk: bool) -> (Vec<String>, Bulk) {
    let mut sys = System::new(rom, Config::default());
    let mut obs = Bulk {
        bulk,
        passes: 0,
        reports: 0,
    };
    let mut out = Vec::new();
    for f in 0..n {
        sys.set_pad(0, script.buttons_at(f));
        let info = sys.run_frame(&mut obs).expect("frame");
        let mut s = format!(
            "{info:?} {} {:?} {} [{}] {:?} {} {:04X}",
            sys.mclk(),
            sys.registers(),
            sys.instructions(),
            sys.recent_pcs(),
            sys.counters(),
            sys.z80().clock,
            sys.z80().cpu.pc,
        );
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for &b in sys.wram().iter().chain(sys.vdp().vram.iter()) {
            h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
        s += &format!(" {h:016x}");
        out.push(s);
    }
    (out, obs)
}

fn same_both_ways(name: &str, rom: &Rom, script: &InputScript, n: u64) -> Bulk {
    let (each, no) = frames(rom, script, n, false);
    let (skip, yes) = frames(rom, script, n, true);
    assert_eq!(no.passes, 0);
    if let Some(f) = (0..each.len()).find(|&f| each[f] != skip[f]) {
        panic!(
            "{name}: first difference after frame {f}:\n every pass: {}\n skipped:    {}",
            each[f], skip[f]
        );
    }
    yes
}

/// A ROM of `main` at 0x200, the level 6 (VINT) handler `vint` at 0x300
/// and `illegal` (the illegal-instruction handler) at 0x320; SSP at the top
/// of work RAM.
fn rom_of(main: &[u16], vint: &[u16], illegal: &[u16]) -> Rom {
    let mut r = vec![0u8; 0x400];
    let mut put = |at: usize, words: &[u16]| {
        for (i, w) in words.iter().enumerate() {
            r[at + 2 * i..at + 2 * i + 2].copy_from_slice(&w.to_be_bytes());
        }
    };
    put(0, &[0x00FF, 0xFF00, 0x0000, 0x0200]);
    put(0x10, &[0x0000, 0x0320]); // vector 4: illegal instruction
    put(0x78, &[0x0000, 0x0300]); // vector 30: level 6 autovector
    put(0x200, main);
    put(0x300, vint);
    put(0x320, illegal);
    r[0x100..0x110].copy_from_slice(b"SEGA MEGA DRIVE ");
    r[0x1F0] = b'U';
    Rom::from_bytes(Path::new("pollstop.bin"), r).expect("synthetic ROM")
}

/// A run of skipped passes shorter than the ring right after a long one,
/// read at once: wait for VBlank (long runs up to the VBlank line), `k`
/// NOPs, wait for its end (the first run stops at VINT, 788 mclk into the
/// line: a pass or two), and VINT's handler runs into an illegal
/// instruction whose handler halts the 68000 (a double fault). The error
/// report's last instructions then hold the short run, and the long run's
/// last passes behind it.
#[test]
fn a_short_run_after_a_long_one_keeps_the_last_instruction_addresses() {
    let none = InputScript::parse::<&str>(&[]).expect("empty script");
    // The first VINT (pending since frame 0) counts d5 up and returns; the
    // second runs into ILLEGAL.
    let vint = [0x4A45, 0x6604, 0x5245, 0x4E73, 0x4AFC]; // tst.w d5; bne.s +4; addq.w #1,d5; rte; illegal
                                                         // lea ($0001).w,sp; illegal: the exception's stacking at an odd address
                                                         // faults again, and the 68000 halts there (no more instructions).
    let halt = [0x4FF8, 0x0001, 0x4AFC];
    let mut short_runs = 0;
    for k in 0..24 {
        let mut main = vec![
            0x41F9, 0x00C0, 0x0004, // lea $C00004,a0
            0x30BC, 0x8164, // move.w #$8164,(a0)   display and VINT on
            0x7A00, // moveq #0,d5
            0x46FC, 0x2000, // move #$2000,sr
            0x3010, 0x0800, 0x0003, 0x67F8, // wait until VBlank
        ];
        main.extend(std::iter::repeat_n(0x4E71, k)); // nop
        main.extend([0x3010, 0x0800, 0x0003, 0x66F8, 0x60FE]); // wait while VBlank; bra.s *
        let rom = rom_of(&main, &vint, &halt);
        let run = |bulk: bool| {
            let mut sys = System::new(&rom, Config::default());
            let mut obs = Bulk {
                bulk,
                passes: 0,
                reports: 0,
            };
            for f in 0..4 {
                sys.set_pad(0, none.buttons_at(f));
                if let Err(e) = sys.run_frame(&mut obs) {
                    let state = format!(
                        "{e} | {} | {} | {:?} | {}",
                        sys.recent_pcs(),
                        sys.instructions(),
                        sys.registers(),
                        sys.mclk()
                    );
                    return (state, obs);
                }
            }
            panic!("k = {k}: no illegal instruction in 4 frames");
        };
        let (each, _) = run(false);
        let (skipped, obs) = run(true);
        assert_eq!(each, skipped, "k = {k}");
        assert!(each.contains("halted"), "k = {k}: {each}");
        if obs.reports >= 2 {
            short_runs += 1;
        }
    }
    assert!(short_runs > 10, "only {short_runs} programs skipped passes");
}

#[test]
fn skipped_passes_keep_the_last_instruction_addresses() {
    let rom = synthetic_rom();
    let none = InputScript::parse::<&str>(&[]).expect("empty script");
    let yes = same_both_ways("synthetic", &rom, &none, 900);
    // Both waits are taken in bulk: at least one report per line waited.
    assert!(
        yes.reports > 900 * 100 && yes.passes > 900 * 1000,
        "only {} reports of {} passes",
        yes.reports,
        yes.passes
    );

    let path = support::must_exist(support::shared().join("roms/castlecat2/rom.bin"));
    let rom = Rom::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let script = InputScript::parse(&[SCRIPT]).expect("reference pad script");
    let yes = same_both_ways("castlecat2", &rom, &script, 400);
    assert!(yes.passes > 400 * 100, "castlecat2: {} passes", yes.passes);
}
