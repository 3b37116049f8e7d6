use std::path::Path;

use retroprof_megadrive::cart::Cart;
use retroprof_megadrive::rom::Rom;
use retroprof_megadrive::timing::Z80_DIVIDER;
use retroprof_megadrive::z80::Z80Sys;
use retroprof_z80::Bus;

fn cart() -> Cart {
    let mut d = vec![0u8; 0x10000];
    d[0x100..0x104].copy_from_slice(b"SEGA");
    d[0x8123] = 0x5A;
    Cart::new(&Rom::from_bytes(Path::new("t.bin"), d).unwrap())
}

#[test]
fn runs_program_and_reads_bank() {
    let c = cart();
    let mut wram = [0u8; 0x10000];
    let mut z = Z80Sys::new();
    // ld a,(0x8123) ; ld (0x1000),a ; ld a,0x77 ; ld (0x9000),a ; halt
    // bank = 1 (68000 0x008000-0x00FFFF)
    let prog = [
        0x3A, 0x23, 0x81, 0x32, 0x00, 0x10, 0x3E, 0x77, 0x32, 0x00, 0x90, 0x76,
    ];
    z.ram[..prog.len()].copy_from_slice(&prog);
    z.m68k_write(0x6000, 1, 0);
    for _ in 0..8 {
        z.m68k_write(0x6000, 0, 0);
    }
    assert_eq!(z.bank, 1);
    // Held in reset: nothing runs.
    z.run_until(10_000, &c, &mut wram);
    assert_eq!(z.ram[0x1000], 0);
    z.set_reset(false, 10_000);
    z.run_until(20_000, &c, &mut wram);
    assert_eq!(z.ram[0x1000], 0x5A);
    assert!(
        z.clock >= 20_000 && z.clock < 20_000 + 15 * 24,
        "{}",
        z.clock
    );
    assert_eq!(
        (z.clock - 10_000) % 15,
        0,
        "clock advances in whole Z80 cycles"
    );
    // The write to the bank window hit ROM: counted, ignored.
    assert_eq!(z.bad_bank_accesses, 1);
    // Two accesses to the 68000 bus, each costing it 70 or 77 mclk.
    assert_eq!(z.bank_accesses, 2);
    assert!(z.m68k_stall == 140 || z.m68k_stall == 147 || z.m68k_stall == 154);
    // Bus requested: the Z80 stops.
    let now = z.clock;
    z.set_busreq(true, now);
    assert_eq!(z.busack_bit(), 0);
    let pc = z.cpu.pc;
    z.run_until(40_000, &c, &mut wram);
    assert_eq!(z.cpu.pc, pc);
}

#[test]
fn bank_access_waits_for_a_68000_dma() {
    // 0000: ld a,(0x8123) ; ld (0x1000),a ; halt   (bank 1)
    let prog = [0x3A, 0x23, 0x81, 0x32, 0x00, 0x10, 0x76];
    let run = |busy: Option<(u64, u64)>| {
        let c = cart();
        let mut wram = [0u8; 0x10000];
        let mut z = Z80Sys::new();
        z.ram[..prog.len()].copy_from_slice(&prog);
        z.m68k_write(0x6000, 1, 0);
        for _ in 0..8 {
            z.m68k_write(0x6000, 0, 0);
        }
        z.set_reset(false, 1_000);
        if let Some((s, e)) = busy {
            z.set_m68k_bus_busy(s, e);
        }
        // Stop right after the load's data read (13 T + 3 T wait),
        // before the store.
        z.run_until(1_000 + 15 * 13, &c, &mut wram);
        z
    };
    let free = run(None);
    assert_eq!(free.dma_waits, 0);
    // The data read comes after the 10 T of the opcode and address
    // fetches, so at 1,150-1,195 mclk. A DMA window over it holds the
    // read until the window's end, in whole Z80 cycles.
    let held = run(Some((1_100, 5_000)));
    assert_eq!(held.dma_waits, 1);
    assert_eq!(held.ram[0x1000], 0);
    assert!(held.clock >= 5_000 + 3 * 15, "{}", held.clock);
    let lost = held.clock - free.clock;
    assert_eq!(lost % 15, 0);
    assert!(
        (5_000 - 1_195..5_000 - 1_150 + 15).contains(&lost),
        "{lost}"
    );
    // A window that ended before the read changes nothing.
    let after = run(Some((100, 1_150)));
    assert_eq!((after.dma_waits, after.clock), (0, free.clock));
}

/// Z80 RAM only, no peeking: the core steps every idle pass.
struct Stepped([u8; 0x2000], bool);
impl Bus for Stepped {
    fn read(&mut self, addr: u16, _t: &mut u64) -> u8 {
        self.0[(addr & 0x1FFF) as usize]
    }
    fn write(&mut self, addr: u16, v: u8, _t: &mut u64) {
        self.0[(addr & 0x1FFF) as usize] = v;
    }
    fn int_line(&self) -> bool {
        self.1
    }
}

#[test]
fn halted_driver_passes_over_idle_time_exactly() {
    // 0000: ld sp,1F00 ; im 1 ; ei ; 0006: halt ; jr 0006
    // 0038: ld a,r ; ld (1800),a ; ld hl,(1802) ; inc hl ;
    //       ld (1802),hl ; ei ; reti
    let c = cart();
    let mut wram = [0u8; 0x10000];
    let mut z = Z80Sys::new();
    z.ram[..9].copy_from_slice(&[0x31, 0x00, 0x1F, 0xED, 0x56, 0xFB, 0x76, 0x18, 0xFD]);
    z.ram[0x38..0x48].copy_from_slice(&[
        0xED, 0x5F, 0x32, 0x00, 0x18, 0x2A, 0x02, 0x18, 0x23, 0x22, 0x02, 0x18, 0xFB, 0xED, 0x4D,
        0x00,
    ]);
    let mut reference = z.cpu.clone();
    let mut ram = Stepped(*z.ram, false);
    z.set_reset(false, 0);
    // Line by line (md-timing.md: 3,420 mclk per line), the IRQ held
    // for one line in 262, as the console does; an odd start phase.
    let mut now = 7;
    z.clock = now;
    for line in 0..262 * 3 {
        let irq = line % 262 == 224;
        z.irq = irq;
        ram.1 = irq;
        let target = now + 3420;
        let t = (target - z.clock).div_ceil(Z80_DIVIDER);
        reference.tstates = 0;
        reference.run_until(&mut ram, t);
        z.run_until(target, &c, &mut wram);
        assert_eq!(z.cpu, reference, "line {line}");
        now = target;
    }
    assert!(z.ram[..] == ram.0[..]);
    // The line stays asserted for its whole line and the handler
    // re-enables interrupts: it runs 3 times in each of the 3 IRQ lines.
    assert_eq!(u16::from_le_bytes([z.ram[0x1802], z.ram[0x1803]]), 9);
    assert!(z.cpu.halted);
}

#[test]
fn interrupt_mode_1() {
    let c = cart();
    let mut wram = [0u8; 0x10000];
    let mut z = Z80Sys::new();
    // 0000: im 1; ei; 0003: jr 0003   0038: ld a,0x11; ld (0x1800),a; halt
    z.ram[..5].copy_from_slice(&[0xED, 0x56, 0xFB, 0x18, 0xFE]);
    z.ram[0x38..0x3E].copy_from_slice(&[0x3E, 0x11, 0x32, 0x00, 0x18, 0x76]);
    z.set_reset(false, 0);
    z.run_until(15 * 100, &c, &mut wram);
    assert_eq!(z.ram[0x1800], 0);
    z.irq = true;
    z.run_until(15 * 200, &c, &mut wram);
    assert_eq!(z.ram[0x1800], 0x11);
}

#[test]
fn restart_on_the_reference_grid() {
    let c = cart();
    let mut wram = [0u8; 0x10000];
    // A Z80 spinning on `jr $` (12 T = 180 mclk a pass).
    let mut z = Z80Sys::new();
    z.ram[..2].copy_from_slice(&[0x18, 0xFE]);
    z.set_reset(false, 0);
    z.set_busreq(true, 1_000);
    z.run_until(2_000, &c, &mut wram);
    // Ours: it restarts at the release.
    z.set_busreq(false, 2_003);
    assert_eq!(z.clock, 2_003);
    // The reference's: on the next 15-mclk edge.
    let mut z = Z80Sys::new();
    z.rules.z80_restart_grid = true;
    z.ram[..2].copy_from_slice(&[0x18, 0xFE]);
    z.set_reset(false, 7);
    assert_eq!(z.clock, 15);
    z.set_busreq(true, 1_000);
    z.run_until(2_000, &c, &mut wram);
    z.set_busreq(false, 2_003);
    assert_eq!(z.clock, 2_010);
    // A request is not a restart: no rounding.
    z.set_busreq(true, 2_501);
    assert_eq!(z.clock, 2_501);
}

#[test]
fn window_7f_waits_under_the_reference_rule() {
    let c = cart();
    let mut wram = [0u8; 0x10000];
    // ld (0x7F11),a ; halt  (a PSG write)
    let prog = [0x32, 0x11, 0x7F, 0x76];
    let mut plain = Z80Sys::new();
    plain.ram[..4].copy_from_slice(&prog);
    let mut rule = Z80Sys::new();
    rule.rules.z80_7f_waits = true;
    rule.ram[..4].copy_from_slice(&prog);
    for z in [&mut plain, &mut rule] {
        z.set_reset(false, 0);
        z.run_until(15 * 13, &c, &mut wram);
    }
    assert_eq!(plain.psg_writes, 1);
    assert_eq!(rule.psg_writes, 1);
    assert_eq!((plain.bank_accesses, plain.m68k_stall), (0, 0));
    // +3 T for the Z80, 70 or 77 mclk for the 68000.
    assert_eq!(rule.bank_accesses, 1);
    assert!(rule.m68k_stall == 70 || rule.m68k_stall == 77);
    assert_eq!(rule.clock, plain.clock + 3 * 15);
}

/// The bus's word reads (`Bus::read_pair`: immediate words, `LD rr,(nn)`,
/// `POP`) at the edges of Z80 RAM: inside the mirror (one load), across the
/// end of the RAM into its mirror, across the end of the mirror into the
/// YM2612, and from the bank window (two 68000-bus accesses).
#[test]
fn word_reads_at_the_edges_of_z80_ram() {
    let c = cart();
    let mut wram = [0u8; 0x10000];
    let mut z = Z80Sys::new();
    let prog = [
        0x2A, 0xFF, 0x1F, // ld hl,(1FFF): ram[1FFF], then ram[0] (2000 is its mirror)
        0xFD, 0x2A, 0xFE, 0x2F, // ld iy,(2FFE): the mirror of 0FFE-0FFF
        0xDD, 0x2A, 0xFF, 0x3F, // ld ix,(3FFF): ram[1FFF], then the YM2612 at 4000
        0x31, 0x00, 0x81, // ld sp,8100: the bank window (bank 0: cartridge 0100)
        0xD1, // pop de: "SE" of the header
        0xC3, 0xFE, 0x1F, // jp 1FFE
    ];
    z.ram[..prog.len()].copy_from_slice(&prog);
    z.ram[0x0FFE] = 0x34;
    z.ram[0x0FFF] = 0x12;
    // 1FFE: jp nn with its immediate word across the end of the RAM: 1FFF
    // and 2000 (= 0000, 0x2A): jp 2A20, the mirror of 0A20: halt.
    z.ram[0x1FFE] = 0xC3;
    z.ram[0x1FFF] = 0x20;
    z.ram[0x0A20] = 0x76;
    z.set_reset(false, 0);
    z.run_until(15 * 200, &c, &mut wram);
    let cpu = &z.cpu;
    assert_eq!(cpu.hl(), 0x2A20);
    assert_eq!(cpu.iy(), 0x1234);
    assert_eq!(cpu.ix() & 0xFF, 0x20);
    assert_eq!(cpu.de(), u16::from_le_bytes(*b"SE"));
    assert_eq!(cpu.sp, 0x8102);
    assert!(cpu.halted);
    assert_eq!(cpu.pc, 0x2A20);
    assert_eq!(z.bank_accesses, 2);
    assert_eq!(z.bad_bank_accesses, 0);
}

/// One instruction (`code` at 1000) from mclk `start` with SP at `sp`, the
/// bank register at `bank` and a 68000 -> VDP DMA owning the 68000 bus in
/// `busy`: (A, DE, the instruction's T-states, 68000 stall, bank accesses,
/// DMA waits, bad accesses).
fn one_instruction(
    c: &Cart,
    code: &[u8],
    sp: u16,
    bank: u32,
    busy: (u64, u64),
    rules: retroprof_megadrive::ReferenceRules,
    start: u64,
) -> (u8, u16, u64, u64, u64, u64, u64) {
    let mut wram = [0u8; 0x10000];
    for (i, b) in wram.iter_mut().enumerate() {
        *b = (i * 13 + 5) as u8;
    }
    let mut z = Z80Sys::new();
    z.rules = rules;
    z.ram[0] = 0x99;
    z.ram[0x1000..0x1000 + code.len()].copy_from_slice(code);
    for i in 0..9 {
        z.m68k_write(0x6000, (bank >> i) as u8 & 1, 0);
    }
    assert_eq!(z.bank, bank);
    z.set_reset(false, start);
    z.cpu.pc = 0x1000;
    z.cpu.sp = sp;
    z.set_m68k_bus_busy(busy.0, busy.1);
    // One mclk: exactly one instruction runs.
    z.run_until(start + 1, c, &mut wram);
    assert_eq!(z.cpu.pc, 0x1000 + code.len() as u16);
    (
        z.cpu.a(),
        z.cpu.de(),
        (z.clock - start) / Z80_DIVIDER,
        z.m68k_stall,
        z.bank_accesses,
        z.dma_waits,
        z.bad_bank_accesses,
    )
}

/// `POP DE` from the bank window (one `read_pair`, the two accesses made
/// together) against the same two bytes read one by one with `LD A,(nn)`
/// (the single-read path) at the same mclk: same bytes, waits, 68000
/// loss, DMA waits and bad accesses, at every mclk phase modulo 7, with
/// and without a DMA window over either access, under both orders of the
/// loss and the wait, for the cartridge, past its end, work RAM and an
/// unmapped 68000 area, and at the window's edges (7FFF-8000, FFFF-0000).
#[test]
fn bank_window_pairs_match_two_single_reads() {
    let mut d = vec![0u8; 0x10000];
    for (i, b) in d.iter_mut().enumerate() {
        *b = (i * 7 + 3) as u8;
    }
    d[0x100..0x104].copy_from_slice(b"SEGA");
    let c = Cart::new(&Rom::from_bytes(Path::new("t.bin"), d).unwrap());
    let mut pairs = 0;
    for before_wait in [false, true] {
        let rules = retroprof_megadrive::ReferenceRules {
            bank_stall_before_wait: before_wait,
            ..Default::default()
        };
        for bank in [0u32, 1, 2, 0x100, 0x1FF] {
            for sp in [0x7FFFu16, 0x8000, 0x8001, 0x80FF, 0xC123, 0xFFFE, 0xFFFF] {
                for s in 0..7u64 {
                    let start = 10_000 + s;
                    // First read at T 7, the second at T 10 + its wait.
                    let first = start + 7 * Z80_DIVIDER;
                    for busy in [
                        (0, 0),
                        (first - 20, first + 50),
                        (first + 2 * Z80_DIVIDER, first + 9 * Z80_DIVIDER),
                        (start, start + 400),
                    ] {
                        let p = one_instruction(&c, &[0xD1], sp, bank, busy, rules, start);
                        // LD A,(nn) reads at T 13.
                        let rd = |addr: u16, at: u64| {
                            let [lo, hi] = addr.to_le_bytes();
                            one_instruction(&c, &[0x3A, lo, hi], 0, bank, busy, rules, at)
                        };
                        let a = rd(sp, start - 6 * Z80_DIVIDER);
                        let w1 = a.2 - 13;
                        let b = rd(sp.wrapping_add(1), start + (w1 - 3) * Z80_DIVIDER);
                        let w2 = b.2 - 13;
                        let what = format!("bank {bank:x} sp {sp:x} start {start} busy {busy:?}");
                        assert_eq!(p.1, u16::from_le_bytes([a.0, b.0]), "{what}");
                        assert_eq!(p.2, 10 + w1 + w2, "{what}");
                        for k in [3, 4, 5, 6] {
                            let (pk, ak, bk) = match k {
                                3 => (p.3, a.3, b.3),
                                4 => (p.4, a.4, b.4),
                                5 => (p.5, a.5, b.5),
                                _ => (p.6, a.6, b.6),
                            };
                            assert_eq!(pk, ak + bk, "{what} field {k}");
                        }
                        pairs += (p.4 == 2) as u32;
                    }
                }
            }
        }
    }
    // Most cases are pairs inside the window (not 7FFF or FFFF).
    assert_eq!(pairs, 2 * 5 * 5 * 7 * 4);
}

/// A 68000 -> VDP DMA window that ended by the time a run starts (the
/// run then skips the window test) holds no access, like one that ends
/// after the run's start but before the access; one that still owns the
/// bus at the access holds it to the window's end (rounded up to a Z80
/// clock), whichever side of the run's start the window began.
#[test]
fn dma_window_ended_before_the_run_is_not_waited_for() {
    let c = cart();
    let start = 50_000u64;
    // LD A,(8000) reads at T 13.
    let at = start + 13 * Z80_DIVIDER;
    for from in [start - 500, start - 1, start] {
        for end in [
            start - 600,
            start - 1,
            start,
            start + 1,
            at - 1,
            at,
            at + 1,
            at + 14,
            at + 15,
            at + 16,
            at + 400,
        ] {
            let rules = retroprof_megadrive::ReferenceRules::default();
            let r = one_instruction(&c, &[0x3A, 0x00, 0x80], 0, 0, (from, end), rules, start);
            let held = from <= at && at < end;
            let dma = if held {
                (end - at).div_ceil(Z80_DIVIDER)
            } else {
                0
            };
            assert_eq!(r.2, 13 + 3 + dma, "window {from}..{end}");
            assert_eq!(r.5, held as u64, "window {from}..{end}");
            assert_eq!(r.4, 1);
        }
    }
}

/// The bank window's cached ROM slice (`Z80Sys::bank_cache`, on by
/// default) against every access taking the full path: a driver loop that
/// reads the window with single reads (`LD A,(HL)`, `ADD A,(HL)`, `LDI`,
/// `LD A,(nn)`), words (`POP` inside it, across FFFF-0000 and 7FFF-8000),
/// writes the window (work RAM banks) and sets the bank register itself
/// (banks 0-3 in turn: ROM, ROM, across the ROM's end, past it), reading it
/// right after, with the 68000 setting other banks (ROM, a bank across
/// the ROM's end, past it, work RAM, unmapped) and 68000 -> VDP DMA windows
/// between the runs, under both orders of the loss and the wait, from every
/// mclk phase modulo 7. Every register, the clocks, the 68000 loss, the
/// counters and both RAMs are the same after every run.
#[test]
fn bank_rom_cache_matches_the_full_path() {
    // 80 KB: banks 0 and 1 plain ROM, bank 2 half ROM, half past the end.
    let mut d = vec![0u8; 0x14000];
    for (i, b) in d.iter_mut().enumerate() {
        *b = (i * 7 + 3 + (i >> 9)) as u8;
    }
    d[0x100..0x104].copy_from_slice(b"SEGA");
    let c = Cart::new(&Rom::from_bytes(Path::new("t.bin"), d).unwrap());
    #[rustfmt::skip]
    let prog = [
        0x21, 0x23, 0x81, // ld hl,8123
        0x7E,             // ld a,(hl)
        0x86,             // add a,(hl)
        0x31, 0x00, 0x8F, // ld sp,8f00
        0xD1,             // pop de
        0x11, 0x00, 0x11, // ld de,1100
        0xED, 0xA0,       // ldi
        0x3A, 0xFF, 0xFF, // ld a,(ffff)
        0x31, 0xFF, 0xFF, // ld sp,ffff
        0xC1,             // pop bc (ffff, 0000)
        0x31, 0xFF, 0x7F, // ld sp,7fff
        0xE1,             // pop hl (7fff, 8000)
        0x3A, 0x00, 0x90, // ld a,(9000)
        0x32, 0x00, 0xA0, // ld (a000),a
        0x3A, 0x00, 0x12, // ld a,(1200)
        0x3C,             // inc a
        0x32, 0x00, 0x12, // ld (1200),a
        0x21, 0x00, 0x60, // ld hl,6000
        0x77,             // ld (hl),a: bank bit 0
        0x0F,             // rrca
        0x77,             // ld (hl),a: bank bit 1
        0x36, 0x00, 0x36, 0x00, 0x36, 0x00, 0x36, 0x00,
        0x36, 0x00, 0x36, 0x00, 0x36, 0x00, // bits 2-8 clear: bank = count & 3
        0x3A, 0x01, 0xC0, // ld a,(c001): the bank just written
        0xC3, 0x00, 0x00, // jp 0000
    ];
    let banks = [1u32, 0, 2, 3, 0x1C0, 0x1FF, 0x100, 0x7F];
    let mut runs = 0;
    for before_wait in [false, true] {
        let rules = retroprof_megadrive::ReferenceRules {
            bank_stall_before_wait: before_wait,
            ..Default::default()
        };
        for s in 0..7u64 {
            let mut w = [Box::new([0u8; 0x10000]), Box::new([0u8; 0x10000])];
            let mut z = [Z80Sys::new(), Z80Sys::new()];
            z[1].bank_cache = false;
            for (zi, wi) in z.iter_mut().zip(w.iter_mut()) {
                zi.rules = rules;
                zi.ram[..prog.len()].copy_from_slice(&prog);
                for (i, b) in wi.iter_mut().enumerate() {
                    *b = (i * 13 + 5) as u8;
                }
                zi.set_reset(false, 1_000 + s);
            }
            let mut now = 1_000 + s;
            let mut seed = 0x1234_5678u32 + s as u32;
            for k in 0..400u32 {
                seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                now += 1 + (seed >> 16) as u64 % 2_500;
                for (zi, wi) in z.iter_mut().zip(w.iter_mut()) {
                    if k % 9 == 4 {
                        let bank = banks[(k / 9) as usize % banks.len()];
                        for i in 0..9 {
                            zi.m68k_write(0x6000, (bank >> i) as u8 & 1, now);
                        }
                    }
                    if k % 7 == 3 {
                        // A DMA window over part of the next run, or one
                        // that ended before it.
                        let from = now + (seed >> 20) as u64 % 900;
                        let (from, to) = if k % 14 == 3 {
                            (from, from + 1_500)
                        } else {
                            (now - 2_000, now - 10)
                        };
                        zi.set_m68k_bus_busy(from, to);
                    }
                    zi.run_until(now, &c, wi);
                }
                let state = |zi: &Z80Sys, wi: &[u8; 0x10000]| {
                    (
                        format!("{:?}", zi.cpu),
                        zi.clock,
                        zi.bank,
                        zi.m68k_stall,
                        zi.bank_accesses,
                        zi.dma_waits,
                        zi.bad_bank_accesses,
                        zi.ram.to_vec(),
                        wi.to_vec(),
                    )
                };
                assert_eq!(
                    state(&z[0], &w[0]),
                    state(&z[1], &w[1]),
                    "before_wait {before_wait} phase {s} run {k}"
                );
                runs += 1;
            }
            // The loop ran through the window many times, waited for DMA,
            // and met work RAM and unmapped banks.
            assert!(z[0].bank_accesses > 500, "{}", z[0].bank_accesses);
            assert!(z[0].dma_waits > 10, "{}", z[0].dma_waits);
            assert!(z[0].bad_bank_accesses > 10, "{}", z[0].bad_bank_accesses);
        }
    }
    assert_eq!(runs, 2 * 7 * 400);
}

/// The idle-loop pass tried only when a run starts where the last one
/// started (or halted; `Z80Sys::last_run_pc`) against trying it at every
/// run (`idle_pass_always`) and against stepping every pass (a bus that
/// cannot be peeked): a driver whose interrupt handler picks the next idle
/// loop in turn (`JR $`, `HALT`, `JP $`, a `DJNZ` countdown then `JR $`),
/// the IRQ raised now and then for a whole run, runs of 1 to 4,000 mclk
/// from every mclk phase modulo 15. Every register, the clock and the RAM
/// are the same after every run.
#[test]
fn idle_pass_hint_matches_trying_every_run() {
    let c = cart();
    let mut image = [0u8; 0x2000];
    // 0000: ld sp,1F00 ; im 1 ; jp 0200
    image[..8].copy_from_slice(&[0x31, 0x00, 0x1F, 0xED, 0x56, 0xC3, 0x00, 0x02]);
    // 0038: pop hl ; ld a,(1800) ; inc a ; ld (1800),a ; and 3 ; add a,a ;
    //       ld l,a ; ld h,01 ; ld e,(hl) ; inc hl ; ld d,(hl) ; ex de,hl ;
    //       jp (hl): the next idle loop from the table at 0100.
    image[0x38..0x4B].copy_from_slice(&[
        0xE1, 0x3A, 0x00, 0x18, 0x3C, 0x32, 0x00, 0x18, 0xE6, 0x03, 0x87, 0x6F, 0x26, 0x01, 0x5E,
        0x23, 0x56, 0xEB, 0xE9,
    ]);
    image[0x100..0x108].copy_from_slice(&[0x00, 0x02, 0x10, 0x02, 0x20, 0x02, 0x30, 0x02]);
    // 0200: ei ; jr $
    image[0x200..0x203].copy_from_slice(&[0xFB, 0x18, 0xFE]);
    // 0210: ei ; halt ; jr 0211
    image[0x210..0x214].copy_from_slice(&[0xFB, 0x76, 0x18, 0xFD]);
    // 0220: ei ; jp 0221
    image[0x220..0x224].copy_from_slice(&[0xFB, 0xC3, 0x21, 0x02]);
    // 0230: ei ; ld b,20 ; djnz $ ; jr $
    image[0x230..0x237].copy_from_slice(&[0xFB, 0x06, 0x20, 0x10, 0xFE, 0x18, 0xFE]);
    let mut wram = [0u8; 0x10000];
    for s in 0..15u64 {
        let mut z = [Z80Sys::new(), Z80Sys::new()];
        z[1].idle_pass_always = true;
        for zi in z.iter_mut() {
            zi.ram.copy_from_slice(&image);
            zi.set_reset(false, 500 + s);
        }
        let mut reference = z[0].cpu.clone();
        let mut ram = Stepped(image, false);
        let mut ref_clock = z[0].clock;
        let mut seed = 0x9E37_79B9u32 ^ s as u32;
        let mut ends = Vec::new();
        for k in 0..600u32 {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            let irq = (seed >> 8).is_multiple_of(8);
            let target = z[0].clock.max(z[1].clock) + 1 + (seed >> 16) as u64 % 4_000;
            for zi in z.iter_mut() {
                zi.irq = irq;
                zi.run_until(target, &c, &mut wram);
            }
            ram.1 = irq;
            let t = (target - ref_clock).div_ceil(Z80_DIVIDER);
            reference.tstates = 0;
            reference.run_until(&mut ram, t);
            ref_clock += reference.tstates * Z80_DIVIDER;
            assert_eq!(z[0].cpu, z[1].cpu, "phase {s} run {k}");
            assert_eq!(z[0].cpu, reference, "phase {s} run {k}");
            assert_eq!(
                (z[0].clock, z[1].clock),
                (ref_clock, ref_clock),
                "phase {s} run {k}"
            );
            assert!(z[0].ram[..] == z[1].ram[..] && z[0].ram[..] == ram.0[..]);
            ends.push(z[0].cpu.pc);
        }
        // Runs ended in every idle loop, several times.
        for pc in [0x201, 0x211, 0x221, 0x235] {
            assert!(
                ends.iter().filter(|&&e| e == pc).count() > 5,
                "phase {s} {pc:04X}"
            );
        }
    }
}
