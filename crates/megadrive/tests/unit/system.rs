//! System tests with small hand-assembled 68000 programs.

use std::path::Path;

use retroprof_megadrive::render::Renderer;
use retroprof_megadrive::system::test_support;
use retroprof_megadrive::timing::{FrameGeometry, VINT_MCLK_H40};
use retroprof_megadrive::{
    Buttons, Clock, Config, DmaEvent, DmaKind, DmaTarget, ExceptionKind, InputScript, InstrCost,
    MdObserver, PcSet, Rom, RunError, System, SystemView,
};

/// Build a ROM: vectors (SSP 0xFFFF00, PC 0x200, level 4/6 autovectors to
/// 0x380/0x300), header, and `code` at 0x200, `handler6` at 0x300,
/// `handler4` at 0x380.
fn rom(code: &[u16], handler6: &[u16], handler4: &[u16]) -> Rom {
    let mut d = vec![0u8; 0x1000];
    let put32 =
        |d: &mut Vec<u8>, at: usize, v: u32| d[at..at + 4].copy_from_slice(&v.to_be_bytes());
    put32(&mut d, 0, 0x00FF_FF00);
    put32(&mut d, 4, 0x200);
    for v in 2..64 {
        put32(&mut d, v * 4, 0x3F0); // everything else: a trap loop
    }
    put32(&mut d, 0x70, 0x380); // level 4
    put32(&mut d, 0x78, 0x300); // level 6
    d[0x100..0x110].copy_from_slice(b"SEGA MEGA DRIVE ");
    d[0x1F0] = b'U';
    let mut put = |at: usize, words: &[u16]| {
        for (i, w) in words.iter().enumerate() {
            d[at + 2 * i..at + 2 * i + 2].copy_from_slice(&w.to_be_bytes());
        }
    };
    put(0x200, code);
    put(0x300, handler6);
    put(0x380, handler4);
    put(0x3F0, &[0x60FE]); // bra.s *
    Rom::from_bytes(Path::new("test.bin"), d).unwrap()
}

fn config() -> Config {
    Config {
        cpu_start_mclk: 0,
        ..Config::default()
    }
}

/// `move.w #v, $C00004`
fn vdp_reg(v: u16) -> [u16; 4] {
    [0x33FC, v, 0x00C0, 0x0004]
}

const RTE: u16 = 0x4E73;
const LOOP: u16 = 0x60FE;
/// `move.w #$2000, sr`
const ENABLE_INTS: [u16; 2] = [0x46FC, 0x2000];

#[derive(Default)]
struct Rec {
    exceptions: Vec<(ExceptionKind, u64, u16)>,
    cost_total: u64,
    freeze: u64,
    fifo: u64,
    refresh: u64,
    dmas: Vec<DmaEvent>,
    frame_starts: Vec<u64>,
    at_pc: Vec<(u32, u32)>,
    instructions: u64,
}

impl MdObserver for Rec {
    fn frame_start(&mut self, _frame: u64, view: &SystemView) {
        // The event comes at the first instruction boundary at or after
        // the frame's start; the clock knows the exact start.
        let start = view.clock.frame_start_mclk();
        assert!(view.mclk() >= start && view.mclk() - start < 200 * 7);
        self.frame_starts.push(start);
    }
    fn instruction(&mut self, _pc: u32, cost: InstrCost, _clock: &Clock) {
        self.instructions += 1;
        self.cost_total += cost.total as u64;
        self.freeze += cost.dma_freeze as u64;
        self.fifo += cost.fifo_wait as u64;
        self.refresh += cost.refresh as u64;
    }
    fn exception(&mut self, kind: ExceptionKind, _v: u8, _h: u32, mclk: u32, clock: &Clock) {
        self.exceptions.push((kind, clock.mclk(), clock.line()));
        self.cost_total += mclk as u64;
    }
    fn dma(&mut self, e: &DmaEvent) {
        self.dmas.push(*e);
    }
    fn at_pc(&mut self, pc: u32, view: &SystemView) {
        self.at_pc.push((pc, view.regs.d[0]));
    }
}

fn program(parts: &[&[u16]]) -> Vec<u16> {
    parts.iter().flat_map(|p| p.iter().copied()).collect()
}

#[test]
fn vint_at_788_mclk_into_line_224() {
    let code = program(&[&vdp_reg(0x8174), &vdp_reg(0x8C81), &ENABLE_INTS, &[LOOP]]);
    let r = rom(&code, &[RTE], &[RTE]);
    let mut sys = System::new(&r, config());
    let mut rec = Rec::default();
    for _ in 0..3 {
        sys.run_frame(&mut rec).unwrap();
    }
    let vints: Vec<_> = rec
        .exceptions
        .iter()
        .filter(|e| e.0 == ExceptionKind::Interrupt(6))
        .collect();
    assert_eq!(vints.len(), 3, "{:?}", rec.exceptions);
    let frame = FrameGeometry::new(false, false, true).mclk_per_frame();
    // Frame 0: the set-up code (reset exception, three instructions) is
    // still running at VINT time; the interrupt is taken once SR allows it.
    assert!(vints[0].1 >= VINT_MCLK_H40 && vints[0].1 < 1000);
    for (i, v) in vints.iter().enumerate().skip(1) {
        // The exception event's clock is the boundary where the interrupt
        // was taken: the first boundary at or after VINT (the loop is one
        // 10-cycle bra).
        let due = i as u64 * frame + VINT_MCLK_H40;
        assert!(
            v.1 >= due && v.1 < due + 10 * 7,
            "vint {i} at {} due {due}",
            v.1
        );
        assert_eq!(v.2, 224);
    }
    // Every mclk accounted for: instruction and exception costs add up to
    // the elapsed time, less the reset exception (40 cycles, taken in
    // System::new before any observer exists).
    let elapsed = sys.mclk();
    assert_eq!(elapsed - rec.cost_total, 40 * 7);
    assert_eq!(rec.frame_starts, vec![0, frame, 2 * frame]);
}

#[test]
fn hint_every_line() {
    // reg 0 = 0x14 (HINT on), reg 10 = 0: HINT on every active line and the
    // first VBlank line.
    let code = program(&[
        &vdp_reg(0x8014),
        &vdp_reg(0x8A00),
        &vdp_reg(0x8154),
        &vdp_reg(0x8C81),
        &ENABLE_INTS,
        &[LOOP],
    ]);
    let r = rom(&code, &[RTE], &[RTE]);
    let mut sys = System::new(&r, config());
    let mut rec = Rec::default();
    sys.run_frame(&mut rec).unwrap();
    rec.exceptions.clear();
    sys.run_frame(&mut rec).unwrap();
    let lines: Vec<u16> = rec
        .exceptions
        .iter()
        .filter(|e| e.0 == ExceptionKind::Interrupt(4))
        .map(|e| e.2)
        .collect();
    assert_eq!(lines.len(), 225, "{lines:?}");
    assert_eq!(lines[0], 224);
    assert_eq!(lines[1], 0);
    assert_eq!(*lines.last().unwrap(), 223);
}

#[test]
fn cpu_dma_freezes_the_cpu_for_the_transfer() {
    // In VBlank (the frame starts at line 224): DMA 0x100 words from RAM
    // 0xFF0000 to VRAM 0.
    let code = program(&[
        &vdp_reg(0x8174),
        &vdp_reg(0x8C81),
        &vdp_reg(0x8F02),
        &vdp_reg(0x9300), // length low
        &vdp_reg(0x9401), // length high: 0x100 words
        &vdp_reg(0x9500), // source >> 1 = 0x7F8000
        &vdp_reg(0x9680),
        &vdp_reg(0x977F),
        // move.l #$40000080, $C00004
        &[0x23FC, 0x4000, 0x0080, 0x00C0, 0x0004],
        &[LOOP],
    ]);
    let r = rom(&code, &[RTE], &[RTE]);
    let mut sys = System::new(&r, config());
    for (i, b) in sys.wram_mut().iter_mut().enumerate().take(0x200) {
        *b = i as u8;
    }
    let mut rec = Rec::default();
    sys.run_frame(&mut rec).unwrap();
    assert_eq!(rec.dmas.len(), 1);
    let d = rec.dmas[0];
    assert_eq!(d.kind, DmaKind::FromCpu(DmaTarget::Vram));
    assert_eq!(d.bytes, 512);
    assert_eq!(d.source, 0xFF0000);
    assert_eq!(d.span.bytes_vblank, 512);
    // 512 bytes at 204 per H40 VBlank line.
    let expect = (512u64 * 3420).div_ceil(204);
    let len = d.span.end - d.span.start;
    assert!(len.abs_diff(expect) <= 3420 / 204 + 1, "{len} vs {expect}");
    assert_eq!(rec.freeze, len.div_ceil(7) * 7);
    assert_eq!(&sys.vdp().vram[..4], &[0, 1, 2, 3]);
}

#[test]
fn cpu_dma_across_the_frame_boundary_is_one_event_of_the_starting_frame() {
    // Wait for the frame's last active line (223: V counter 0xDF), then
    // DMA 0x400 words (2,048 bytes) from RAM to VRAM: 18 bytes can move in
    // what is left of line 223, the rest at VBlank speed in the next
    // frame's first lines.
    let code = program(&[
        &vdp_reg(0x8174),
        &vdp_reg(0x8C81),
        &vdp_reg(0x8F02),
        &vdp_reg(0x9300), // length low
        &vdp_reg(0x9404), // length high: 0x400 words
        &vdp_reg(0x9500), // source >> 1 = 0x7F8000
        &vdp_reg(0x9680),
        &vdp_reg(0x977F),
        // wait: cmpi.b #$DF,$C00008 ; bne.s wait
        &[0x0C39, 0x00DF, 0x00C0, 0x0008, 0x66F6],
        // move.l #$40000080, $C00004
        &[0x23FC, 0x4000, 0x0080, 0x00C0, 0x0004],
        &[LOOP],
    ]);
    #[derive(Default)]
    struct Dmas {
        dmas: Vec<(u64, DmaEvent)>,
        freeze: u64,
        frame: u64,
    }
    impl MdObserver for Dmas {
        fn frame_start(&mut self, frame: u64, _view: &SystemView) {
            self.frame = frame;
        }
        fn instruction(&mut self, _pc: u32, cost: InstrCost, _clock: &Clock) {
            self.freeze += cost.dma_freeze as u64;
        }
        fn dma(&mut self, e: &DmaEvent) {
            self.dmas.push((self.frame, *e));
        }
    }
    let r = rom(&code, &[RTE], &[RTE]);
    let mut sys = System::new(&r, config());
    for (i, b) in sys.wram_mut().iter_mut().enumerate().take(0x800) {
        *b = i as u8;
    }
    let mut rec = Dmas::default();
    let f0 = sys.run_frame(&mut rec).unwrap();
    assert_eq!(rec.dmas.len(), 1);
    let (seen_in, d) = rec.dmas[0];
    // One event, at the DMA's start, in (and numbered as) the frame in
    // which it started, with the whole span: it ends in the next frame.
    assert_eq!((seen_in, d.frame), (0, 0));
    assert_eq!(d.kind, DmaKind::FromCpu(DmaTarget::Vram));
    assert_eq!(d.bytes, 2048);
    assert_eq!(d.span.start_line, 223);
    assert!(d.span.start < f0.end_mclk && d.span.end > f0.end_mclk + 3420);
    // The bytes split by the line they moved in: the part of line 223 is
    // active display, the rest moves in the next frame's VBlank lines
    // (204 bytes a line in H40).
    assert!(
        d.span.bytes_active > 0 && d.span.bytes_active <= 18,
        "{d:?}"
    );
    assert_eq!(d.span.last_active_line, Some(223));
    assert_eq!(d.span.bytes_vblank, 2048 - d.span.bytes_active);
    let vblank_lines = (d.span.end - f0.end_mclk).div_ceil(3420);
    assert_eq!(vblank_lines, (d.span.bytes_vblank as u64).div_ceil(204));
    // The 68000 stays frozen past the boundary, all of it in the cost of
    // the instruction that started the DMA (reported in frame 0); the
    // words are in VRAM at once.
    assert_eq!(rec.freeze, (d.span.end - d.span.start).div_ceil(7) * 7);
    assert!(sys.mclk() >= d.span.end);
    assert_eq!(&sys.vdp().vram[0x7FC..0x800], &[0xFC, 0xFD, 0xFE, 0xFF]);
    // The next frame starts on time (the CPU is already past its origin)
    // and sees no second event.
    let f1 = sys.run_frame(&mut rec).unwrap();
    assert_eq!(f1.start_mclk, f0.end_mclk);
    assert_eq!(rec.dmas.len(), 1);
}

#[test]
fn fifo_waits_show_in_instruction_costs() {
    // Wait for line 10 (poll the V counter), then write 64 VRAM words back
    // to back.
    let code = program(&[
        &vdp_reg(0x8174),
        &vdp_reg(0x8C81),
        &vdp_reg(0x8F02),
        // wait: cmpi.b #10,$C00008 ; bne.s wait
        &[0x0C39, 0x000A, 0x00C0, 0x0008, 0x66F6],
        // move.l #$40000000,$C00004
        &[0x23FC, 0x4000, 0x0000, 0x00C0, 0x0004],
        // moveq #63,d0 ; lea $C00000,a0
        &[0x703F, 0x41F9, 0x00C0, 0x0000],
        // 1: move.w d0,(a0) ; dbra d0,1b
        &[0x3080, 0x51C8, 0xFFFC],
        &[LOOP],
    ]);
    let r = rom(&code, &[RTE], &[RTE]);
    let mut sys = System::new(&r, config());
    let mut rec = Rec::default();
    sys.run_frame(&mut rec).unwrap();
    // 64 VRAM writes need 128 slots (18 per H40 line, ~7 lines); 4 fit in
    // the FIFO at once, and the CPU's own 64 x 18 cycles (~2.4 lines)
    // overlap the draining: it waits about 4.5 lines.
    assert!(
        rec.fifo > 3 * 3420 && rec.fifo < 6 * 3420,
        "fifo wait {}",
        rec.fifo
    );
    let vram = &sys.vdp().vram;
    assert_eq!(u16::from_be_bytes([vram[0], vram[1]]), 63);
    assert_eq!(u16::from_be_bytes([vram[0x7C], vram[0x7D]]), 1);
}

#[test]
fn refresh_penalty_rate() {
    let code = program(&[&[LOOP]]);
    let r = rom(&code, &[RTE], &[RTE]);
    let mut sys = System::new(&r, config());
    let mut rec = Rec::default();
    sys.run_frame(&mut rec).unwrap();
    // bra.s is 10 cycles; a refresh of 2 cycles every ~130 cycles.
    let rate = rec.refresh as f64 / rec.cost_total as f64;
    assert!((0.013..0.017).contains(&rate), "{rate}");
}

#[test]
fn unmapped_accesses_are_counted() {
    let code = program(&[
        // move.w $400000,d0 ; move.w d0,$900000 ; tst.b $A14000
        &[0x3039, 0x0040, 0x0000, 0x33C0, 0x0090, 0x0000],
        &[LOOP],
    ]);
    let r = rom(&code, &[RTE], &[RTE]);
    let mut sys = System::new(&r, config());
    sys.run_frame_unobserved().unwrap();
    let c = sys.counters();
    assert_eq!(c.unmapped_reads, 1);
    assert_eq!(c.unmapped_writes, 1);
}

#[test]
fn runaway_and_bad_code_stop_with_a_report() {
    // jmp $500000: nothing there.
    let code = program(&[&[0x4EF9, 0x0050, 0x0000]]);
    let r = rom(&code, &[RTE], &[RTE]);
    let mut sys = System::new(&r, config());
    let mut err = None;
    for _ in 0..10 {
        if let Err(e) = sys.run_frame_unobserved() {
            err = Some(e);
            break;
        }
    }
    let e = err.expect("a jump into unmapped space must stop the run");
    let msg = e.to_string();
    assert!(matches!(e, RunError::Runaway { .. }), "{msg}");
    assert!(
        msg.contains("frame 0") && msg.contains("last instructions: 5"),
        "{msg}"
    );
    // Illegal instruction.
    let r = rom(&[0x4AFC], &[RTE], &[RTE]);
    let mut sys = System::new(&r, config());
    match sys.run_frame_unobserved() {
        Err(RunError::Exception { kind, .. }) => {
            assert_eq!(kind, ExceptionKind::IllegalInstruction)
        }
        other => panic!("{other:?}"),
    }
    // movea.l #$FFFF01,a7 ; illegal: the exception frame goes to an odd
    // stack, its address error does too: a double bus fault halts the CPU,
    // and the run stops with a report instead of spinning.
    let r = rom(&[0x2E7C, 0x00FF, 0xFF01, 0x4AFC], &[RTE], &[RTE]);
    let mut sys = System::new(&r, config());
    let e = sys
        .run_frame_unobserved()
        .expect_err("a halted CPU must stop the run");
    let msg = e.to_string();
    assert!(matches!(e, RunError::Halted { frame: 0, .. }), "{msg}");
    assert!(
        msg.contains("double bus fault") && msg.contains("frame 0"),
        "{msg}"
    );
}

#[test]
fn breakpoints_see_registers() {
    // moveq #5,d0 ; 1: addq.l #1,d0 (at 0x202) ; bra.s 1b
    let code = program(&[&[0x7005, 0x5280, 0x60FC]]);
    let r = rom(&code, &[RTE], &[RTE]);
    let mut sys = System::new(&r, config());
    let mut set = PcSet::new();
    set.insert(0x202);
    sys.set_breakpoints(Some(set));
    let mut rec = Rec::default();
    sys.run_frame(&mut rec).unwrap();
    assert!(rec.at_pc.len() > 100);
    assert_eq!(rec.at_pc[0], (0x202, 5));
    assert_eq!(rec.at_pc[1], (0x202, 6));
    // Same number of instructions as without breakpoints.
    let mut sys2 = System::new(&r, config());
    let mut rec2 = Rec::default();
    sys2.run_frame(&mut rec2).unwrap();
    assert_eq!(rec.instructions, rec2.instructions);
    assert_eq!(sys.mclk(), sys2.mclk());
}

#[test]
fn z80_bus_request_and_reset() {
    // move.w #$100,$A11100 ; move.w #$100,$A11200 ; move.b #$42,$A00010 ;
    // move.w $A11100,d0 ; loop
    let code = program(&[
        &[0x33FC, 0x0100, 0x00A1, 0x1100],
        &[0x33FC, 0x0100, 0x00A1, 0x1200],
        &[0x13FC, 0x0042, 0x00A0, 0x0010],
        &[0x3039, 0x00A1, 0x1100],
        &[LOOP],
    ]);
    let r = rom(&code, &[RTE], &[RTE]);
    let mut sys = System::new(&r, config());
    sys.run_frame_unobserved().unwrap();
    assert!(sys.z80().busreq);
    assert!(!sys.z80().reset);
    assert_eq!(sys.z80().ram[0x10], 0x42);
    assert_eq!(sys.registers().d[0] & 0x0100, 0, "bus granted");
}

#[test]
fn pad_read_through_the_bus() {
    // move.b #$40,$A10009 (TH output) ; move.b #$40,$A10003 ;
    // move.b $A10003,d0 ; move.b #0,$A10003 ; move.b $A10003,d1 ; loop
    let code = program(&[
        &[0x13FC, 0x0040, 0x00A1, 0x0009],
        &[0x13FC, 0x0040, 0x00A1, 0x0003],
        &[0x1039, 0x00A1, 0x0003],
        &[0x13FC, 0x0000, 0x00A1, 0x0003],
        &[0x1239, 0x00A1, 0x0003],
        &[LOOP],
    ]);
    let r = rom(&code, &[RTE], &[RTE]);
    let mut sys = System::new(&r, config());
    sys.set_pad(0, Buttons::RIGHT | Buttons::START);
    sys.run_frame_unobserved().unwrap();
    let regs = sys.registers();
    assert_eq!(regs.d[0] & 0xFF, 0x40 | 0b11_0111);
    assert_eq!(regs.d[1] & 0xFF, 0b01_0011);
}

#[test]
fn interlace_mode_2_screenshot_has_both_fields() {
    let r = rom(&[LOOP], &[RTE], &[RTE]);
    let mut sys = System::new(&r, config());
    {
        let v = sys.vdp_mut();
        v.regs[1] = 0x44; // display on
        v.regs[2] = 0x30; // plane A at 0xC000
        v.regs[4] = 0x07; // plane B at 0xE000
        v.regs[5] = 0x78; // sprites at 0xF000
        v.regs[0] = 0x04; // full palette
        v.regs[12] = 0x87; // H40, interlace mode 2
        v.regs[16] = 0x01; // 64x32 planes
        v.regs[15] = 2;
        for (i, c) in v.cram.iter_mut().enumerate() {
            *c = (i as u16 * 0x0123) & 0x0EEE;
        }
        // Tile 1 is 8x16 in interlace mode 2 (64 bytes): each row its own
        // colour, so swapped or missing fields show.
        for row in 0..16 {
            let c = (row as u8 % 15) + 1;
            for b in 0..4 {
                v.vram[64 + row * 4 + b] = c << 4 | c;
            }
        }
        for cell in 0..40 {
            v.vram[0xC000 + cell * 2 + 1] = 1;
        }
    }
    sys.run_frame_unobserved().unwrap();
    sys.request_screenshot();
    sys.run_frame_unobserved().unwrap();
    let (_, shot) = sys.take_screenshot().expect("screenshot");
    assert_eq!((shot.width, shot.height), (320, 448));
    let whole = Renderer::new().render_frame(&sys.vdp().snapshot());
    assert_eq!(
        shot, whole,
        "line by line = whole frame for a static screen"
    );
    // Rows 0..16 are the tile's 16 rows, each in its colour.
    let rgb = |i: usize| retroprof_megadrive::render::cram_to_rgb(sys.vdp().cram[i]);
    for row in 0..16u32 {
        let got = shot.pixels[(row * 320) as usize];
        assert_eq!(got, rgb(row as usize % 15 + 1), "row {row}");
    }
}

/// Bad input: a program that drives the VDP with garbage (random register
/// values, random control and data words, data and status reads, 68000
/// DMA of length 0xFFFF from unmapped space, fills started during fills)
/// runs every frame asked for, without a panic, with bounded time per
/// frame, and the same way twice.
/// What the garbage test records: the 68000's time held inside one
/// instruction (DMA freeze, FIFO and fill waits) and the DMAs (not
/// [`Rec`], whose frame-start check assumes no instruction spans a frame).
#[derive(Default)]
struct FreezeRec {
    freeze: u64,
    dmas: usize,
}

impl MdObserver for FreezeRec {
    fn instruction(&mut self, _pc: u32, cost: InstrCost, _clock: &Clock) {
        self.freeze += cost.dma_freeze as u64 + cost.fifo_wait as u64;
    }
    fn dma(&mut self, _e: &DmaEvent) {
        self.dmas += 1;
    }
}

#[test]
fn garbage_vdp_programming_runs_to_the_end() {
    // xorshift32: a fixed seed, so the program is the same on every run.
    let mut x: u32 = 0x2545_F491;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        x
    };
    let mut code: Vec<u16> = Vec::new();
    // DMA on, display on, length 0xFFFF, source 0x800000 (unmapped),
    // 68000 DMA to VRAM, then a fill started and another started while
    // it runs.
    for w in [
        0x8174, 0x8F01, 0x93FF, 0x94FF, 0x9500, 0x9600, 0x9740, 0x4000, 0x0080,
    ] {
        code.extend_from_slice(&vdp_reg(w));
    }
    for w in [0x93FF, 0x94FF, 0x9780, 0x4000, 0x0080] {
        code.extend_from_slice(&vdp_reg(w));
    }
    code.extend_from_slice(&[0x33FC, 0x1234, 0x00C0, 0x0000]); // fill data
    for w in [0x4000, 0x0080] {
        code.extend_from_slice(&vdp_reg(w));
    }
    code.extend_from_slice(&[0x33FC, 0x5678, 0x00C0, 0x0000]); // during it
    for _ in 0..600 {
        let r = next();
        match r % 6 {
            // Register write with a random register and value (keep DMA
            // on now and then so DMA and fills keep starting).
            0 | 1 => {
                let v = 0x8000 | (r >> 8) as u16 & 0x1FFF;
                code.extend_from_slice(&vdp_reg(v));
            }
            2 => code.extend_from_slice(&vdp_reg((r >> 16) as u16)),
            3 => code.extend_from_slice(&[0x33FC, (r >> 16) as u16, 0x00C0, 0x0000]),
            // move.w $C00000, d0 / move.w $C00004, d0
            4 => code.extend_from_slice(&[0x3039, 0x00C0, 0x0000]),
            _ => code.extend_from_slice(&[0x3039, 0x00C0, 0x0004]),
        }
    }
    // jmp $1000 (loop over the whole program)
    code.extend_from_slice(&[0x4EF9, 0x0000, 0x1000]);
    let mut d = vec![0u8; 0x1000 + code.len() * 2];
    let put32 =
        |d: &mut Vec<u8>, at: usize, v: u32| d[at..at + 4].copy_from_slice(&v.to_be_bytes());
    put32(&mut d, 0, 0x00FF_FF00);
    put32(&mut d, 4, 0x1000);
    for v in 2..64 {
        put32(&mut d, v * 4, 0x3F0);
    }
    d[0x100..0x110].copy_from_slice(b"SEGA MEGA DRIVE ");
    d[0x1F0] = b'U';
    d[0x3F0..0x3F2].copy_from_slice(&RTE.to_be_bytes());
    for (i, w) in code.iter().enumerate() {
        d[0x1000 + 2 * i..0x1002 + 2 * i].copy_from_slice(&w.to_be_bytes());
    }
    let r = Rom::from_bytes(Path::new("garbage.bin"), d).unwrap();
    let run = || {
        let mut sys = System::new(&r, config());
        let mut rec = FreezeRec::default();
        for f in 0..120 {
            let (before, frozen_before) = (sys.mclk(), rec.freeze);
            sys.run_frame(&mut rec)
                .unwrap_or_else(|e| panic!("frame {f}: {e}"));
            // A frame is one frame of time, whatever the VDP was told,
            // except that a frame ends at an instruction boundary and a
            // 68000 -> VDP DMA freezes the 68000 inside the instruction that
            // started it until the last word moved (a 0xFFFF-word DMA to
            // VRAM with the display on takes about 11 frames), and a
            // data-port access waits inside its instruction for the FIFO or
            // a running fill (a 64 KB fill: about 5 frames): the frame that
            // holds such an instruction is longer by that wait, no more.
            let (len, frozen) = (sys.mclk() - before, rec.freeze - frozen_before);
            assert!(
                len < 2 * 896_040 + frozen,
                "frame {f} ran long: {len} mclk, {frozen} of them frozen or waiting"
            );
        }
        assert!(rec.dmas > 0, "the program starts DMAs");
        (sys.mclk(), sys.vdp().vram.to_vec(), rec.dmas)
    };
    assert_eq!(run(), run(), "deterministic");
}

/// FNV-1a over everything an observer hears (instruction reports with
/// their costs and times, exceptions, calls, returns, VDP writes, DMAs,
/// skipped polling passes).
struct Heard(u64);

impl Heard {
    fn mix(&mut self, v: u64) {
        for b in v.to_le_bytes() {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
    }
    fn mix_debug(&mut self, v: &impl std::fmt::Debug) {
        for b in format!("{v:?}").bytes() {
            self.mix(b as u64);
        }
    }
}

impl MdObserver for Heard {
    fn frame_start(&mut self, frame: u64, view: &SystemView) {
        self.mix(frame);
        self.mix(view.mclk());
    }
    fn instruction(&mut self, pc: u32, cost: InstrCost, clock: &Clock) {
        self.mix(pc as u64);
        self.mix_debug(&cost);
        self.mix(clock.mclk());
    }
    fn exception(&mut self, kind: ExceptionKind, v: u8, h: u32, mclk: u32, clock: &Clock) {
        self.mix_debug(&(kind, v, h, mclk, clock.mclk()));
    }
    fn call(&mut self, from_pc: u32, target: u32, return_addr: u32, sp: u32) {
        self.mix_debug(&(from_pc, target, return_addr, sp));
    }
    fn ret(&mut self, from_pc: u32, target: u32, sp: u32) {
        self.mix_debug(&(from_pc, target, sp));
    }
    fn vdp_write(&mut self, port: retroprof_megadrive::VdpPort, value: u16, clock: &Clock) {
        self.mix_debug(&(port, value, clock.mclk()));
    }
    fn dma(&mut self, e: &DmaEvent) {
        self.mix_debug(e);
    }
    fn accepts_poll_passes(&mut self, _pcs: &[u32; 3]) -> bool {
        true
    }
    fn poll_passes(&mut self, p: &[u32; 3], m: &[u64; 3], r: &[u64; 3], n: u64, c: &Clock) {
        self.mix_debug(&(p, m, r, n, c.mclk()));
    }
}

/// Per frame: what the observer heard and the machine state (68000
/// registers and time, bus counters, work RAM, VRAM, CRAM, Z80 clock/PC,
/// open-bus latch), with every fetch through the bus (`window` false) or
/// the 68000's fetch window over the cartridge's fixed ROM.
fn frames_heard(rom: &Rom, input: &InputScript, frames: u64, window: bool) -> Vec<String> {
    let mut sys = System::new(rom, Config::default());
    assert!(
        test_support::has_fetch_window(&sys),
        "the ROM has a fetch window"
    );
    if !window {
        test_support::drop_fetch_window(&mut sys);
    }
    frames_heard_on(&mut sys, input, frames)
}

/// [`frames_heard`] on a system set up by the caller.
fn frames_heard_on(sys: &mut System, input: &InputScript, frames: u64) -> Vec<String> {
    let mut heard = Heard(0xcbf2_9ce4_8422_2325);
    let mut out = Vec::new();
    for f in 0..frames {
        sys.set_pad(0, input.buttons_at(f));
        let r = sys.run_frame(&mut heard);
        let mut st = Heard(heard.0);
        // The 68000's cycle count as the master clock (`base + 7 c`, the same
        // base in both runs).
        st.mix_debug(&(r, sys.registers(), sys.mclk(), sys.counters()));
        st.mix_debug(&(
            test_support::open_bus(sys),
            sys.z80().clock,
            sys.z80().cpu.pc,
        ));
        for &b in sys.wram().iter().chain(sys.vdp().vram.iter()) {
            st.mix(b as u64);
        }
        st.mix_debug(&sys.vdp().cram);
        out.push(format!("frame {f}: {:016x}", st.0));
    }
    out
}

fn same_with_and_without_fetch_window(path: &Path, input: &str, frames: u64) {
    let rom = Rom::load(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let specs: &[&str] = if input.is_empty() { &[] } else { &[input] };
    let input = InputScript::parse(specs).expect("input");
    let exact = frames_heard(&rom, &input, frames, false);
    let windowed = frames_heard(&rom, &input, frames, true);
    if let Some(f) = (0..exact.len()).find(|&f| exact[f] != windowed[f]) {
        panic!(
            "{}: first difference at frame {f}: {} vs {}",
            path.display(),
            exact[f],
            windowed[f]
        );
    }
}

#[test]
fn fetch_window_changes_no_report_or_state() {
    let shared = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared"));
    let testroms = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testroms/out"));
    for p in [
        shared.join("roms/castlecat2/rom.bin"),
        testroms.join("fullload/rom.bin"),
    ] {
        assert!(p.exists(), "{} is missing", p.display());
    }
    // The identity check's pad script (shared/reference/README.md).
    let script =
        "60-600:R,200-210:C,300-305:S,600-605:S,700-1199:R,900-910:C,1000-1010:C,1100-1110:C";
    same_with_and_without_fetch_window(&shared.join("roms/castlecat2/rom.bin"), script, 400);
    same_with_and_without_fetch_window(&testroms.join("fullload/rom.bin"), "", 200);
}

/// The idle-poll skip runs quiet line events in place (`Bus68k::poll_skip`
/// crossing lines) or stops before each (the pass around the event run by
/// the core): both ways, every report the observer hears (instructions
/// with their costs and times, skipped passes, exceptions) and the state
/// after every frame are the same. A synthetic VBlank wait whose start
/// drifts frame by frame, with HINT every 6 lines taken, masked (the level
/// changes: no crossing on those lines) or disabled; castlecat2 (its Z80 driver
/// stalls the 68000 at line events) and the full-load ROM.
#[test]
fn poll_skip_across_lines_matches_stopping_at_each() {
    fn both_ways(name: &str, rom: &Rom, script: &str, frames: u64, crosses: bool) {
        let specs: &[&str] = if script.is_empty() { &[] } else { &[script] };
        let input = InputScript::parse(specs).expect("input");
        let run = |on: bool| {
            let mut sys = System::new(rom, Config::default());
            test_support::set_poll_lines(&mut sys, on);
            let heard = frames_heard_on(&mut sys, &input, frames);
            (heard, test_support::poll_lines_crossed(&sys))
        };
        let (slow, none) = run(false);
        let (fast, crossed) = run(true);
        assert_eq!(none, 0, "{name}: off means off");
        assert_eq!(crossed != 0, crosses, "{name}: {crossed} lines crossed");
        if let Some(f) = (0..slow.len()).find(|&f| slow[f] != fast[f]) {
            panic!(
                "{name}: first difference at frame {f}: {} vs {}",
                slow[f], fast[f]
            );
        }
    }
    for (reg0, sr, crosses) in [
        (0x8014, 0x2000, true),
        (0x8014, 0x2700, true),
        (0x8004, 0x2000, true),
    ] {
        let code = program(&[
            &vdp_reg(0x8174),                  // display on, VINT on, V28
            &vdp_reg(reg0),                    // HINT on or off
            &vdp_reg(0x8A05),                  // HINT every 6 lines
            &[0x46FC, sr],                     // move.w #sr,sr
            &[0x41F9, 0x00C0, 0x0004],         // 21C: lea $C00004,a0
            &[0x7C00],                         // 222: moveq #0,d6
            &[0x3010, 0x0800, 0x0003, 0x67F8], // 224: wait until VBlank
            &[0x3E06],                         // 22C: move.w d6,d7
            &[0x51CF, 0xFFFE],                 // 22E: dbra d7,*
            &[0x0646, 0x000D],                 // 232: addi.w #13,d6
            &[0x0C46, 0x2B00],                 // 236: cmpi.w #11008,d6
            &[0x6502],                         // 23A: bcs.s 23E
            &[0x7C00],                         // 23C: moveq #0,d6
            &[0x3010, 0x0800, 0x0003, 0x66F8], // 23E: wait while VBlank
            &[0x60DC],                         // 246: bra.s 224
        ]);
        // HINT: count in d5.
        let r = rom(&code, &[RTE], &[0x5285, RTE]);
        both_ways(&format!("{reg0:04x}/{sr:04x}"), &r, "", 120, crosses);
    }
    let shared = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared"));
    let testroms = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testroms/out"));
    let script =
        "60-600:R,200-210:C,300-305:S,600-605:S,700-1199:R,900-910:C,1000-1010:C,1100-1110:C";
    let cc2 = Rom::load(&shared.join("roms/castlecat2/rom.bin")).expect("castlecat2");
    both_ways("castlecat2", &cc2, script, 400, true);
    let fl = Rom::load(&testroms.join("fullload/rom.bin")).expect("fullload");
    both_ways("fullload", &fl, "", 200, true);
}

/// A refresh penalty alone at a slow boundary (no line event due, no Z80
/// stall) on `Bus68k::boundary_work`'s short path, against the whole
/// boundary: every report (costs and clock) and the state after every frame
/// the same, on castlecat2 (400 frames, the reference input: its Z80 stalls
/// the 68000 at line events) and fullload (200 frames).
#[test]
fn quick_refresh_boundary_matches_the_whole_boundary() {
    let shared = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared"));
    let testroms = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testroms/out"));
    let script =
        "60-600:R,200-210:C,300-305:S,600-605:S,700-1199:R,900-910:C,1000-1010:C,1100-1110:C";
    for (path, script, frames) in [
        (shared.join("roms/castlecat2/rom.bin"), script, 400),
        (testroms.join("fullload/rom.bin"), "", 200),
    ] {
        let rom = Rom::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let specs: &[&str] = if script.is_empty() { &[] } else { &[script] };
        let input = InputScript::parse(specs).expect("input");
        let run = |on: bool| {
            let mut sys = System::new(&rom, Config::default());
            test_support::set_quick_refresh(&mut sys, on);
            frames_heard_on(&mut sys, &input, frames)
        };
        let (slow, fast) = (run(false), run(true));
        if let Some(f) = (0..slow.len()).find(|&f| slow[f] != fast[f]) {
            panic!(
                "{}: first difference at frame {f}: {} vs {}",
                path.display(),
                slow[f],
                fast[f]
            );
        }
    }
}

/// Long work-RAM accesses are one bus call when both words are in one
/// 64 KB mirror of work RAM (`Bus::read_long_plain`,
/// `Bus::write_long_plain`) and two word accesses otherwise: at a mirror's
/// last word the low word is at the next mirror's first (or, at
/// 0xFFFFFE, in the cartridge's first word, where a write goes nowhere).
/// The values are what two word accesses give.
#[test]
fn long_work_ram_accesses_at_and_across_mirror_ends() {
    let code = program(&[
        &[0x203C, 0x1122, 0x3344], // move.l #$11223344,d0
        &[0x23C0, 0x00E0, 0xFFFE], // move.l d0,($E0FFFE).l   (across)
        &[0x2239, 0x00FF, 0x0000], // move.l ($FF0000).l,d1    (one mirror)
        &[0x2439, 0x00FF, 0xFFFE], // move.l ($FFFFFE).l,d2    (RAM + ROM)
        &[0x23C0, 0x00FF, 0x1000], // move.l d0,($FF1000).l    (one mirror)
        &[0x2639, 0x00E1, 0x1000], // move.l ($E11000).l,d3    (a mirror)
        &[0x283C, 0x5566, 0x7788], // move.l #$55667788,d4
        &[0x207C, 0x00FF, 0x0002], // movea.l #$FF0002,a0
        &[0x2104],                 // move.l d4,-(a0)         (across, low first)
        &[0x2A10],                 // move.l (a0),d5          (across)
        &[0x227C, 0x00FF, 0x1010], // movea.l #$FF1010,a1
        &[0x2304],                 // move.l d4,-(a1)         (one mirror)
        &[0x2C39, 0x00FF, 0x100C], // move.l ($FF100C).l,d6
        &[0x23C4, 0x00FF, 0xFFFE], // move.l d4,($FFFFFE).l    (RAM + ROM)
        &[0x2E39, 0x00FF, 0xFFFE], // move.l ($FFFFFE).l,d7
        &[LOOP],
    ]);
    let r = rom(&code, &[RTE], &[RTE]);
    let mut sys = System::new(&r, config());
    sys.run_frame(&mut Rec::default()).unwrap();
    let regs = sys.registers();
    assert_eq!(regs.d[1], 0x3344_0000, "d1");
    // High word from RAM's last word, low word the ROM's first (the
    // initial SSP's high half).
    assert_eq!(regs.d[2], 0x1122_00FF, "d2");
    assert_eq!(regs.d[3], 0x1122_3344, "d3");
    assert_eq!(regs.d[5], 0x5566_7788, "d5");
    assert_eq!(regs.d[6], 0x5566_7788, "d6");
    assert_eq!(regs.a[0], 0xFE_FFFE, "a0");
    let w = sys.wram();
    assert_eq!(w[0xFFFE..], [0x55, 0x66], "last word");
    assert_eq!(w[..4], [0x77, 0x88, 0, 0], "first words");
    assert_eq!(w[0x1000..0x1004], [0x11, 0x22, 0x33, 0x44]);
    assert_eq!(w[0x100C..0x1010], [0x55, 0x66, 0x77, 0x88]);
    // The write to 0xFFFFFE's second word left the ROM as it was.
    assert_eq!(regs.d[7], 0x5566_00FF, "d7");
}
