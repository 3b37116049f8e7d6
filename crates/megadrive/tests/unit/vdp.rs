use retroprof_megadrive::system::test_support;
use retroprof_megadrive::timing::{DmaBandwidth, FrameGeometry, MCLK_PER_LINE};
use retroprof_megadrive::vdp::{ControlAction, DmaTarget, Vdp};
use retroprof_megadrive::Clock;

/// The System's clock in frame `frame`, begun at `origin` with lines
/// `geom`.
fn clock(origin: u64, geom: FrameGeometry, frame: u64) -> Clock {
    test_support::clock(origin, geom, frame)
}

/// An NTSC H40 VDP and the clock of its frame 0, begun at 0.
fn vdp_h40() -> (Vdp, Clock) {
    let mut v = Vdp::new(false);
    v.regs[1] = 0x74; // display on, VINT on, DMA on, mode 5
    v.regs[12] = 0x81; // H40
    v.regs[15] = 2;
    let c = clock(0, v.current_geometry(), 0);
    v.begin_frame(&c, 0);
    (v, c)
}

/// mclk at which `line` starts in the frame begun at 0 (frame starts at
/// line 224).
fn line_at(line: u64) -> u64 {
    ((line + 262 - 224) % 262) * MCLK_PER_LINE
}

#[test]
fn register_and_address_commands() {
    let (mut v, c) = vdp_h40();
    v.write_control(&c, 0x8F04, 0);
    assert_eq!(v.regs[15], 4);
    // VRAM write to 0xC000: first word 0x4000, second 0x0003.
    v.write_control(&c, 0x4000, 0);
    v.write_control(&c, 0x0003, 0);
    assert_eq!((v.code(), v.address()), (0x01, 0xC000));
    v.write_data(&c, 0x1234, 0);
    assert_eq!(&v.vram[0xC000..0xC002], &[0x12, 0x34]);
    assert_eq!(v.address(), 0xC004);
    // CRAM write to entry 1.
    v.write_control(&c, 0xC002, 0);
    v.write_control(&c, 0x0000, 0);
    v.write_data(&c, 0x0FFF, 0);
    assert_eq!(v.cram[1], 0x0EEE);
    // VSRAM
    v.write_control(&c, 0x4000, 0);
    v.write_control(&c, 0x0010, 0);
    v.write_data(&c, 0xFFFF, 0);
    assert_eq!(v.vsram[0], 0x07FF);
    // VRAM read back
    v.write_control(&c, 0x0000, 0);
    v.write_control(&c, 0x0003, 0);
    assert_eq!(v.read_data(&c, 0).0, 0x1234);
    // Odd address: bytes swap.
    v.write_control(&c, 0x4001, 0);
    v.write_control(&c, 0x0000, 0);
    v.write_data(&c, 0xABCD, 0);
    assert_eq!(&v.vram[0..2], &[0xCD, 0xAB]);
}

#[test]
fn sprite_flags_in_the_status_once_the_beam_passed() {
    let (mut v, _) = vdp_h40();
    v.regs[5] = 0x6C; // sprite table at 0xD800
    let g = v.current_geometry();
    let c = clock(0, g, 1);
    v.begin_frame(&c, 0);
    // Tile 1: every pixel colour 1.
    v.vram[0x20..0x40].fill(0x11);
    let mut put = |i: usize, line: u16, x: u16, link: u8| {
        let e = 0xD800 + i * 8;
        v.vram[e..e + 2].copy_from_slice(&(line + 128).to_be_bytes());
        v.vram[e + 2] = 0; // 1 x 1 cell
        v.vram[e + 3] = link;
        v.vram[e + 4..e + 6].copy_from_slice(&1u16.to_be_bytes());
        v.vram[e + 6..e + 8].copy_from_slice(&(x + 128).to_be_bytes());
    };
    // Two sprites overlapping by 4 pixels on line 10 (a collision) and
    // 21 side by side on line 100 (one more than H40's 20: overflow).
    put(0, 10, 50, 1);
    put(1, 10, 54, 2);
    for i in 2..23 {
        put(i, 100, 8 * i as u16, if i == 22 { 0 } else { i as u8 + 1 });
    }
    // Before the beam reaches line 10: neither flag.
    assert_eq!(v.read_status(&c, line_at(5), 0) & 0x0060, 0);
    // After line 10: collision (bit 5), reported once.
    assert_eq!(v.read_status(&c, line_at(20), 0) & 0x0060, 0x0020);
    assert_eq!(v.read_status(&c, line_at(21), 0) & 0x0060, 0);
    // After line 100: overflow (bit 6), reported once.
    assert_eq!(v.read_status(&c, line_at(101), 0) & 0x0060, 0x0040);
    assert_eq!(v.read_status(&c, line_at(102), 0) & 0x0060, 0);
    // The next frame finds them again (and the sprites moved: only the
    // overlap is left, on line 30).
    for i in 0..2 {
        let e = 0xD800 + i * 8;
        v.vram[e..e + 2].copy_from_slice(&(30u16 + 128).to_be_bytes());
    }
    v.vram[0xD800 + 8 + 3] = 0; // the list ends after sprite 1
    v.begin_frame(&c, MCLK_PER_LINE * 262);
    let c = clock(MCLK_PER_LINE * 262, g, 2);
    let next = |line: u64| MCLK_PER_LINE * 262 + line_at(line);
    assert_eq!(v.read_status(&c, next(29), 0) & 0x0060, 0);
    assert_eq!(v.read_status(&c, next(31), 0) & 0x0060, 0x0020);
    assert_eq!(v.read_status(&c, next(200), 0) & 0x0060, 0);
}

#[test]
fn status_flags_over_a_frame() {
    let (mut v, c) = vdp_h40();
    // Line 224, offset 100: VBlank set, not HBlank.
    let s = v.read_status(&c, line_at(224) + 100, 0);
    assert_ne!(s & 0x0008, 0);
    assert_eq!(s & 0x0004, 0);
    assert_ne!(s & 0x0200, 0, "FIFO empty");
    // Line 10: no VBlank; HBlank inside 228..872.
    assert_eq!(v.read_status(&c, line_at(10) + 100, 0) & 0x0008, 0);
    assert_ne!(v.read_status(&c, line_at(10) + 500, 0) & 0x0004, 0);
    assert_eq!(v.read_status(&c, line_at(10) + 872, 0) & 0x0004, 0);
    // Last line: VBlank already cleared.
    assert_eq!(v.read_status(&c, line_at(261) + 10, 0) & 0x0008, 0);
    // Display off: VBlank reads set.
    v.regs[1] &= !0x40;
    assert_ne!(v.read_status(&c, line_at(10), 0) & 0x0008, 0);
}

#[test]
fn hv_counter_and_latch() {
    let (mut v, c) = vdp_h40();
    let hv = v.read_hv(&c, line_at(0xEB) + 228);
    assert_eq!(hv, 0xE5B3);
    let hv = v.read_hv(&c, line_at(5) + 228);
    assert_eq!(hv, 0x05B3);
    v.write_control(&c, 0x8002, line_at(7) + 228);
    assert_eq!(v.read_hv(&c, line_at(100)), 0x07B3);
    v.write_control(&c, 0x8000, line_at(100));
    assert_eq!(v.read_hv(&c, line_at(100)) >> 8, 100);
}

#[test]
fn hint_counter() {
    let (mut v, c) = vdp_h40();
    v.regs[10] = 2;
    v.regs[0] = 0x14;
    // Frame order: 224..261, 0..223.
    let mut hits = Vec::new();
    for i in 0..262u16 {
        let line = (224 + i) % 262;
        v.line_start(&c, line);
        if v.hint_pending {
            hits.push(line);
            assert_eq!(v.ipl(), 4);
            v.acknowledge(4);
        }
    }
    // The counter starts at 0, so line 224 underflows; it is reloaded
    // (2) on the other VBlank lines; lines 0 and 1 decrement, line 2
    // underflows, then every third line.
    assert_eq!(&hits[..5], &[224, 2, 5, 8, 11]);
    assert_eq!(*hits.last().unwrap(), 221);
}

#[test]
fn vint_priority() {
    let (mut v, _) = vdp_h40();
    v.regs[0] = 0x14;
    v.hint_pending = true;
    v.raise_vint();
    assert_eq!(v.ipl(), 6);
    v.acknowledge(6);
    assert_eq!(v.ipl(), 4);
    v.regs[0] = 0x04;
    assert_eq!(v.ipl(), 0);
}

#[test]
fn dma_bandwidth_per_line() {
    let (v, c) = vdp_h40();
    // Whole VBlank line in H40: 204 bytes to VRAM.
    let s = v.schedule_dma(&c, line_at(230), 204, DmaBandwidth::ToVram);
    assert_eq!(s.end - s.start, MCLK_PER_LINE);
    assert_eq!(s.bytes_vblank, 204);
    // Active line in H40: 18 bytes.
    let s = v.schedule_dma(&c, line_at(10), 18, DmaBandwidth::ToVram);
    assert_eq!(s.end - s.start, MCLK_PER_LINE);
    assert_eq!((s.bytes_active, s.last_active_line), (18, Some(10)));
    // 36 bytes from the start of line 10 end at the end of line 11.
    let s = v.schedule_dma(&c, line_at(10), 36, DmaBandwidth::ToVram);
    assert_eq!(s.end, line_at(12));
    assert_eq!(s.last_active_line, Some(11));
    // Copy: 102 bytes per blank H40 line.
    let s = v.schedule_dma(&c, line_at(230), 102 * 3, DmaBandwidth::Copy);
    assert_eq!(s.end - s.start, 3 * MCLK_PER_LINE);
    // CRAM in blank: 198 words (396 bytes).
    let s = v.schedule_dma(&c, line_at(230), 396, DmaBandwidth::ToCramVsram);
    assert_eq!(s.end - s.start, MCLK_PER_LINE);
    // Crossing from the end of VBlank into active display: lines 259
    // and 260 are blank (2 * 204 bytes); the last line (261) and the
    // active lines move 18. Line 261 still counts as VBlank in the
    // byte split (it is >= 224).
    let s = v.schedule_dma(&c, line_at(259), 2 * 204 + 18 + 36, DmaBandwidth::ToVram);
    assert_eq!(s.bytes_vblank, 2 * 204 + 18);
    assert_eq!(s.bytes_active, 36);
    assert_eq!(s.last_active_line, Some(1));
    assert_eq!(s.end, line_at(259) + 5 * MCLK_PER_LINE);
    // A whole NTSC H40 frame of fill moves 37 * 204 + 225 * 18 = 11,598
    // bytes (the reference's per-frame fill figure).
    let s = v.schedule_dma(&c, line_at(224), 11_598, DmaBandwidth::Fill);
    assert_eq!(s.end - s.start, 262 * MCLK_PER_LINE);
    // H32
    let (mut v32, _) = vdp_h40();
    v32.regs[12] = 0;
    let s = v32.schedule_dma(&c, line_at(230), 166, DmaBandwidth::ToVram);
    assert_eq!(s.end - s.start, MCLK_PER_LINE);
    let s = v32.schedule_dma(&c, line_at(10), 16, DmaBandwidth::Fill);
    assert_eq!(s.end - s.start, MCLK_PER_LINE);
    // Display disabled: active lines run at blank speed.
    let (mut off, _) = vdp_h40();
    off.regs[1] &= !0x40;
    let s = off.schedule_dma(&c, line_at(10), 204, DmaBandwidth::ToVram);
    assert_eq!(s.end - s.start, MCLK_PER_LINE);
    assert_eq!(s.bytes_active, 204);
}

#[test]
fn fifo_waits_in_active_display() {
    let (mut v, c) = vdp_h40();
    v.write_control(&c, 0x4000, 0);
    v.write_control(&c, 0x0000, 0);
    let t0 = line_at(10); // offset 0 of an active line
                          // Four VRAM writes fill the FIFO without waiting.
    for _ in 0..4 {
        assert_eq!(v.write_data(&c, 0, t0).wait, 0);
    }
    assert_ne!(v.read_status(&c, t0, 0) & 0x0100, 0, "FIFO full");
    // The first entry needs 2 slots: 352 and 820. The fifth write waits
    // until then (820 mclk, rounded up to a whole CPU cycle: 826).
    let w = v.write_data(&c, 0, t0);
    assert_eq!(w.wait, 826);
    assert_eq!(w.fifo_wait, 826);
    // In VBlank there is no wait.
    let (mut v, c) = vdp_h40();
    v.write_control(&c, 0x4000, 0);
    v.write_control(&c, 0x0000, 0);
    for _ in 0..10 {
        assert_eq!(v.write_data(&c, 0, line_at(230)).wait, 0);
    }
    // CRAM writes use one slot each: the fifth waits for slot 352.
    let (mut v, c) = vdp_h40();
    v.write_control(&c, 0xC000, 0);
    v.write_control(&c, 0x0000, 0);
    for _ in 0..4 {
        assert_eq!(v.write_data(&c, 0, t0).wait, 0);
    }
    assert_eq!(v.write_data(&c, 0, t0).wait, 357); // 352 rounded up to 7
}

#[test]
fn fill_and_copy() {
    let (mut v, c) = vdp_h40();
    v.regs[15] = 1;
    v.regs[19] = 0x10;
    v.regs[20] = 0;
    v.regs[23] = 0x80;
    v.write_control(&c, 0x4000, 0);
    let a = v.write_control(&c, 0x0080, line_at(230));
    assert_eq!(a, ControlAction::None);
    let w = v.write_data(&c, 0xAB00, line_at(230));
    let (span, bytes, target) = w.fill.unwrap();
    assert_eq!((bytes, target), (16, DmaTarget::Vram));
    assert!(span.end > span.start);
    // DMA busy until the end, with the fill under way; the length
    // registers count down.
    assert_ne!(v.read_status(&c, line_at(230) + 100, 0) & 2, 0);
    // (A status read leaves the steps for later: `settle_fill` runs them.)
    v.settle_fill(&c);
    assert!(v.regs[19] < 16 && v.regs[19] > 0);
    assert_eq!(v.read_status(&c, span.end, 0) & 2, 0);
    assert_eq!((v.regs[19], v.regs[20], v.regs[21]), (0, 0, 16));
    // The data word at 0, then each step advances the address first
    // and writes the high byte with A0 inverted: steps 1..=16 write
    // 0, 3, 2, 5, 4, ..., 15, 14, 17 (Exodus, PerformDMAFillOperation).
    assert_eq!(&v.vram[0..2], &[0xAB, 0x00]);
    assert!(v.vram[2..16].iter().all(|&b| b == 0xAB));
    assert_eq!(&v.vram[16..19], &[0x00, 0xAB, 0x00]);
    // A data write during a fill does not wait for its end: it lands
    // at the address the fill reached and the fill goes on with its
    // data (Nemesis' FIFO test ROM, tests 31-33).
    v.regs[19] = 0x10;
    v.write_control(&c, 0x4000, line_at(231));
    v.write_control(&c, 0x0080, line_at(231));
    let w = v.write_data(&c, 0x1100, line_at(231));
    let (span, _, _) = w.fill.unwrap();
    let mid = (span.start + span.end) / 2;
    assert_eq!(v.write_data(&c, 0x2200, mid).wait, 0);
    v.read_status(&c, span.end + MCLK_PER_LINE, 0);
    assert_eq!(v.vram[0], 0x11);
    // Without the extra write the last step would be address 16.
    assert_eq!(v.vram[17 ^ 1], 0x22, "the fill ends one step further");
    // A copy holds a data write until its end.
    v.regs[19] = 16;
    v.regs[21] = 0;
    v.regs[22] = 0;
    v.regs[23] = 0xC0;
    v.write_control(&c, 0x4100, line_at(232));
    let a = v.write_control(&c, 0x00C0, line_at(232));
    let ControlAction::CopyStarted(span, _) = a else {
        panic!("copy expected")
    };
    v.write_control(&c, 0x4000, line_at(232));
    v.write_control(&c, 0x0000, line_at(232));
    let w = v.write_data(&c, 0, line_at(232));
    assert!(w.wait > 0 && w.wait >= span.end - line_at(232));
    // Copy 16 bytes from 0 to 0x100.
    v.regs[19] = 16;
    v.regs[21] = 0;
    v.regs[22] = 0;
    v.regs[23] = 0xC0;
    v.write_control(&c, 0x4100, line_at(240));
    let a = v.write_control(&c, 0x00C0, line_at(240));
    assert!(matches!(a, ControlAction::CopyStarted(_, 16)));
    assert_eq!(&v.vram[0x100..0x110], &v.vram[0..16].to_vec()[..]);
}

/// Length 0 means 0x10000 steps (see `dma_length`): a VRAM fill with
/// length 0 writes 64 KB and stays busy for several frames' worth of
/// active-display lines.
#[test]
fn fill_length_zero_is_64k() {
    let (mut v, c) = vdp_h40();
    v.regs[15] = 1;
    v.regs[19] = 0;
    v.regs[20] = 0;
    v.regs[23] = 0x80;
    v.write_control(&c, 0x4000, 0);
    v.write_control(&c, 0x0080, 0);
    let (span, bytes, _) = v.write_data(&c, 0x5500, 0).fill.unwrap();
    assert_eq!(bytes, 0x10000);
    assert!(span.end - span.start > 4 * 262 * MCLK_PER_LINE);
}

/// What a test of the fill sees of the VDP: memories, registers, working
/// address, code and DMA busy time.
#[derive(Debug, PartialEq)]
struct FillState {
    vram: Vec<u8>,
    cram: Vec<u16>,
    vsram: Vec<u16>,
    regs: Vec<u8>,
    addr: u16,
    code: u8,
    busy_until: u64,
}

fn fill_state(v: &Vdp) -> FillState {
    FillState {
        vram: v.vram.to_vec(),
        cram: v.cram.to_vec(),
        vsram: v.vsram.to_vec(),
        regs: v.regs.to_vec(),
        addr: v.address(),
        code: v.code(),
        busy_until: v.dma_busy_until(),
    }
}

/// Status reads during a fill leave its steps for later, and the common
/// read takes a shortcut (the fast way); run both ways, with the full read
/// (`read_status_full`) and `settle_fill` after every read (each read runs
/// the steps due by it: the slow way, as before), over fills of VRAM, CRAM and
/// VSRAM (one of 64 KB, running over several frames) with data writes into
/// them and random reads: every status word is the same, and so is the
/// whole fill state after every line start, write and frame.
#[test]
fn status_reads_during_a_fill_match_both_ways() {
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut rnd = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let mut deferred = 0;
    for case in 0..12u64 {
        let (mut fast, c0) = vdp_h40();
        fast.regs[15] = 1 + (case % 3) as u8;
        let g = fast.current_geometry();
        let mut slow = fast.clone();
        let frame_mclk = MCLK_PER_LINE * g.lines as u64;
        let mut fills = 0;
        for f in 0..4u64 {
            let origin = f * frame_mclk;
            let c = if f == 0 { c0 } else { clock(origin, g, f) };
            if f > 0 {
                let ended = clock(origin - frame_mclk, g, f - 1);
                fast.begin_frame(&ended, origin);
                slow.begin_frame(&ended, origin);
            }
            assert_eq!(
                fill_state(&fast),
                fill_state(&slow),
                "case {case} frame {f}"
            );
            for idx in 0..g.lines as u64 {
                let line = ((g.active as u64 + idx) % g.lines as u64) as u16;
                let t0 = origin + idx * MCLK_PER_LINE;
                fast.line_start(&c, line);
                slow.line_start(&c, line);
                assert_eq!(
                    fill_state(&fast),
                    fill_state(&slow),
                    "case {case} line {line}"
                );
                let mut t = t0;
                while t < t0 + MCLK_PER_LINE {
                    t += 7 * (1 + rnd(200));
                    if t >= t0 + MCLK_PER_LINE {
                        break;
                    }
                    match rnd(40) {
                        0 if fast.dma_busy_until() <= t || rnd(4) == 0 => {
                            // A new fill (VRAM, CRAM or VSRAM; length 0 is
                            // 64 KB), or a data write into the one running.
                            let len = [0u16, 0x0400, 0x0031, 0x0100][rnd(4) as usize];
                            let cmd = [(0x4000u16, 0x0080u16), (0xC000, 0x0080), (0x4000, 0x0090)]
                                [rnd(3) as usize];
                            let addr = rnd(0x4000) as u16;
                            let word = rnd(0x10000) as u16;
                            for v in [&mut fast, &mut slow] {
                                // Registers 19, 20 and 23 through the
                                // control port, as the 68000 writes them.
                                v.write_control(&c, 0x9300 | (len & 0xFF), t);
                                v.write_control(&c, 0x9400 | (len >> 8), t);
                                v.write_control(&c, 0x9780, t);
                                v.write_control(&c, cmd.0 | addr, t);
                                v.write_control(&c, cmd.1, t);
                                v.write_data(&c, word, t);
                            }
                            fills += 1;
                            assert_eq!(fill_state(&fast), fill_state(&slow), "case {case} fill");
                        }
                        1 => {
                            fast.write_data(&c, 0x1234, t);
                            slow.write_data(&c, 0x1234, t);
                            assert_eq!(fill_state(&fast), fill_state(&slow), "case {case} write");
                        }
                        _ => {
                            let a = fast.read_status(&c, t, 0xA400);
                            let b = slow.read_status_full(&c, t, 0xA400);
                            slow.settle_fill(&c);
                            assert_eq!(a, b, "case {case} status at {t}");
                            // The fast way taken: steps left for later.
                            if (fast.regs[19], fast.address()) != (slow.regs[19], slow.address()) {
                                deferred += 1;
                            }
                        }
                    }
                }
            }
            fast.settle_fill(&c);
            assert_eq!(
                fill_state(&fast),
                fill_state(&slow),
                "case {case} end of frame {f}"
            );
        }
        assert!(fills > 0);
    }
    assert!(deferred > 1000, "{deferred} reads left steps for later");
}

#[test]
fn cpu_dma_request() {
    let (mut v, c) = vdp_h40();
    v.regs[19] = 0x20;
    v.regs[20] = 0;
    v.regs[21] = 0x00;
    v.regs[22] = 0x80;
    v.regs[23] = 0x7F;
    v.write_control(&c, 0xC000, 0);
    let a = v.write_control(&c, 0x0080, 0);
    assert_eq!(
        a,
        ControlAction::DmaFromCpu {
            source: 0xFF0000,
            words: 0x20,
            target: DmaTarget::Cram
        }
    );
    // DMA disabled in register 1: no DMA.
    v.regs[1] &= !0x10;
    v.write_control(&c, 0xC000, 0);
    assert_eq!(v.write_control(&c, 0x0080, 0), ControlAction::None);
}

/// A 68000 DMA's words stored from a slice (`store_words`, the bus's path
/// for sources in work RAM or plain ROM) against one `store` a word (the
/// word-by-word path): VRAM at even and odd addresses, CRAM, VSRAM (past
/// its 40 entries too) and a code with no target, increments 0 to 0xFF,
/// runs of 0 to 300 words: the memories, the address, the last write's
/// address and the FIFO ring are the same.
#[test]
fn store_words_matches_one_store_a_word() {
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut rnd = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    for case in 0..400u64 {
        let (mut a, c) = vdp_h40();
        for b in a.vram.iter_mut() {
            *b = rnd(256) as u8;
        }
        let addr = rnd(0x10000) as u16;
        // VRAM, CRAM and VSRAM writes, and a VRAM read (no write target).
        let (cmd0, cmd1) = [
            (0x4000u16, 0u16),
            (0xC000, 0),
            (0x4000, 0x0010),
            (0x0000, 0),
        ][(case % 4) as usize];
        a.write_control(&c, cmd0 | (addr & 0x3FFF), 0);
        a.write_control(&c, cmd1 | (addr >> 14), 0);
        a.regs[15] = [0u8, 1, 2, 3, 0x80, 0xFF][rnd(6) as usize];
        // Some words already through the FIFO.
        for _ in 0..rnd(3) {
            a.store(rnd(0x10000) as u16);
        }
        let n = rnd(301) as usize;
        let bytes: Vec<u8> = (0..2 * n).map(|_| rnd(256) as u8).collect();
        let mut b = a.clone();
        a.store_words(&bytes);
        for p in bytes.chunks_exact(2) {
            b.store(u16::from_be_bytes([p[0], p[1]]));
        }
        assert_eq!(a.vram[..], b.vram[..], "case {case}");
        assert_eq!(a.cram, b.cram, "case {case}");
        assert_eq!(a.vsram, b.vsram, "case {case}");
        assert_eq!(a.store_state(), b.store_state(), "case {case}");
    }
}
