//! What the single-step collection does not cover: interrupts, STOP,
//! trace, bus errors, double bus faults, RESET, TAS write-back, the
//! observer's call/ret/exception reports and `reset`. (Moved from the
//! library's unit tests, `src/tests.rs`, to share the test binary's one
//! instantiation of the core.)

use retroprof_m68k::bus::*;
use retroprof_m68k::Stop;

use crate::host::Cpu;

/// 64 KiB of RAM mirrored over the address space, with scriptable
/// interrupt level and bus errors.
pub(crate) struct Ram {
    pub(crate) mem: Vec<u8>,
    ipl: u8,
    /// Raise `ipl` to this level once the time reaches `irq_at`.
    irq_at: u64,
    irq_level: u8,
    berr_addr: Option<u32>,
    acks: Vec<(u8, u64)>,
    resets: u32,
    halts: u32,
    writes: Vec<(u32, u16)>,
    tas_wb: bool,
    next_event: u64,
    /// Offered as the fetch window (words from `mem` at `window.0`, count
    /// `window.1`), when set.
    window: Option<(u32, usize)>,
    /// Every read (address, data, function code, time), and every fetch
    /// served from the window in the same form.
    reads: Vec<(u32, u16, FunctionCode, u64)>,
    window_fetches: u64,
}

impl Ram {
    pub(crate) fn new() -> Self {
        Ram {
            mem: vec![0; 0x10000],
            ipl: 0,
            irq_at: u64::MAX,
            irq_level: 0,
            berr_addr: None,
            acks: Vec::new(),
            resets: 0,
            halts: 0,
            writes: Vec::new(),
            tas_wb: true,
            next_event: u64::MAX,
            window: None,
            reads: Vec::new(),
            window_fetches: 0,
        }
    }
    pub(crate) fn w16(&mut self, a: u32, v: u16) {
        let a = (a & 0xFFFF) as usize;
        self.mem[a] = (v >> 8) as u8;
        self.mem[a + 1] = v as u8;
    }
    pub(crate) fn w32(&mut self, a: u32, v: u32) {
        self.w16(a, (v >> 16) as u16);
        self.w16(a + 2, v as u16);
    }
    pub(crate) fn r16(&self, a: u32) -> u16 {
        let a = (a & 0xFFFF) as usize;
        (self.mem[a] as u16) << 8 | self.mem[a + 1] as u16
    }
    fn r32(&self, a: u32) -> u32 {
        (self.r16(a) as u32) << 16 | self.r16(a + 2) as u32
    }
    /// Vectors: SSP 0x8000, PC 0x1000; every other vector -> 0x2000 + 4n.
    fn with_program(words: &[u16]) -> Self {
        let mut r = Ram::new();
        r.w32(0, 0x8000);
        r.w32(4, 0x1000);
        for v in 2..256u32 {
            r.w32(v * 4, 0x2000 + v * 4);
            // Each handler is "bra.s *" (a tight loop).
            r.w16(0x2000 + v * 4, 0x60FE);
        }
        for (i, w) in words.iter().enumerate() {
            r.w16(0x1000 + 2 * i as u32, *w);
        }
        r
    }
}

impl Bus for Ram {
    fn read_byte(&mut self, addr: u32, fc: FunctionCode, now: u64) -> Read<u8> {
        let data = self.mem[(addr & 0xFFFF) as usize];
        self.reads.push((addr, data as u16, fc, now));
        Read {
            data,
            wait: 0,
            bus_error: self.berr_addr == Some(addr),
        }
    }
    fn read_word(&mut self, addr: u32, fc: FunctionCode, now: u64) -> Read<u16> {
        let data = self.r16(addr);
        self.reads.push((addr, data, fc, now));
        Read {
            data,
            wait: 0,
            bus_error: self.berr_addr == Some(addr),
        }
    }
    fn fetch_window(&mut self) -> Option<FetchWindow> {
        let (base, n) = self.window?;
        let words = (0..n as u32).map(|i| self.r16(base + 2 * i)).collect();
        Some(FetchWindow { base, words })
    }
    fn window_fetch(&mut self, addr: u32, word: u16, fc: FunctionCode, now: u64) {
        self.window_fetches += 1;
        self.reads.push((addr, word, fc, now));
    }
    fn write_byte(&mut self, addr: u32, data: u8, _fc: FunctionCode, _now: u64) -> Write {
        self.mem[(addr & 0xFFFF) as usize] = data;
        self.writes.push((addr, data as u16));
        Write::OK
    }
    fn write_word(&mut self, addr: u32, data: u16, _fc: FunctionCode, _now: u64) -> Write {
        self.w16(addr, data);
        self.writes.push((addr, data));
        Write::OK
    }
    fn boundary(&mut self, now: u64) -> Boundary {
        if now >= self.irq_at {
            self.ipl = self.irq_level;
        }
        Boundary {
            extra: 0,
            ipl: self.ipl,
        }
    }
    fn interrupt_ack(&mut self, level: u8, now: u64) -> IntAck {
        self.acks.push((level, now));
        self.ipl = 0;
        self.irq_at = u64::MAX;
        IntAck::Autovector
    }
    fn reset_instruction(&mut self, _now: u64) {
        self.resets += 1;
    }
    fn tas_writeback(&self) -> bool {
        self.tas_wb
    }
    fn halted(&mut self, _now: u64) {
        self.halts += 1;
    }
    fn next_event(&mut self, _now: u64) -> u64 {
        self.next_event
    }
}

#[derive(Default, Debug, PartialEq)]
struct Log {
    instructions: Vec<(u32, u32)>,
    exceptions: Vec<(ExceptionKind, u8, u32, u32)>,
    calls: Vec<(u32, u32, u32, u32)>,
    rets: Vec<(u32, u32, u32)>,
}

impl Observer for Log {
    fn instruction(&mut self, pc: u32, cycles: u32) {
        self.instructions.push((pc, cycles));
    }
    fn exception(&mut self, kind: ExceptionKind, vector: u8, handler: u32, cycles: u32) {
        self.exceptions.push((kind, vector, handler, cycles));
    }
    fn call(&mut self, from: u32, target: u32, ret: u32, sp: u32) {
        self.calls.push((from, target, ret, sp));
    }
    fn ret(&mut self, from: u32, target: u32, sp: u32) {
        self.rets.push((from, target, sp));
    }
}

fn boot(bus: &mut Ram) -> Cpu {
    let mut cpu = Cpu::new();
    cpu.reset(bus);
    cpu
}

/// What [`run_chunks`] leaves: registers and time after each chunk, the
/// observer reports, the reads and fetches, the writes and the number of
/// fetches served from the window.
type ChunkRun = (
    Vec<(retroprof_m68k::Registers, u64)>,
    Log,
    Vec<(u32, u16, FunctionCode, u64)>,
    Vec<(u32, u16)>,
    u64,
);

/// Boots `bus` and runs it in runs of the given lengths (the fetch window
/// is asked for per run), each ending at its target.
fn run_chunks(mut bus: Ram, chunks: &[u64]) -> ChunkRun {
    let mut cpu = boot(&mut bus);
    let mut log = Log::default();
    let mut t = cpu.cycles();
    let mut states = Vec::new();
    for &chunk in chunks {
        t += chunk;
        assert_eq!(cpu.run_until(&mut bus, &mut log, t), Stop::Target);
        states.push((cpu.registers(), cpu.cycles()));
    }
    (states, log, bus.reads, bus.writes, bus.window_fetches)
}

/// A run with a fetch window did what the run without did, access by
/// access.
fn assert_same_run(exact: &ChunkRun, windowed: &ChunkRun, window: Option<(u32, usize)>) {
    assert_eq!(
        exact.0, windowed.0,
        "registers and time, window {window:x?}"
    );
    assert_eq!(exact.1, windowed.1, "observer reports, window {window:x?}");
    assert_eq!(exact.2, windowed.2, "reads and fetches, window {window:x?}");
    assert_eq!(exact.3, windowed.3, "writes, window {window:x?}");
}

const NOP: u16 = 0x4E71;

#[test]
fn reset_loads_vectors_and_fills_queue() {
    let mut bus = Ram::with_program(&[NOP, 0x7005]);
    let cpu = boot(&mut bus);
    let r = cpu.registers();
    assert_eq!(r.ssp, 0x8000);
    assert_eq!(r.pc, 0x1004);
    assert_eq!(r.prefetch, [NOP, 0x7005]);
    assert_eq!(r.sr, 0x2700);
}

#[test]
fn autovectored_interrupt_entry() {
    let mut bus = Ram::with_program(&[0x46FC, 0x2300, NOP, NOP, NOP, NOP, 0x60FE]);
    let mut cpu = boot(&mut bus);
    let mut log = Log::default();
    cpu.step(&mut bus, &mut log); // move #$2300,sr
    bus.irq_level = 4;
    bus.irq_at = 0;
    cpu.step(&mut bus, &mut log); // nop; boundary raises IPL 4
    let c = cpu.step(&mut bus, &mut log); // interrupt entry
    assert_eq!(c, 44, "interrupt entry takes 44 cycles (UM table 8-14)");
    assert_eq!(bus.acks.len(), 1);
    assert_eq!(bus.acks[0].0, 4);
    let r = cpu.registers();
    assert_eq!(r.sr & 0x0700, 0x0400, "mask raised to the level");
    assert_eq!(r.pc, 0x2000 + 28 * 4 + 4, "autovector 28");
    // Stacked: SR 0x2300, PC of the next instruction (0x1006).
    assert_eq!(bus.r16(r.ssp), 0x2300);
    assert_eq!(bus.r32(r.ssp + 2), 0x1006);
    assert_eq!(
        log.exceptions.last().unwrap().0,
        ExceptionKind::Interrupt(4)
    );
    assert_eq!(log.exceptions.last().unwrap().3, 44);
}

#[test]
fn masked_interrupt_is_not_taken_but_nmi_is() {
    let mut bus = Ram::with_program(&[NOP, NOP, NOP, NOP, NOP, NOP]);
    let mut cpu = boot(&mut bus); // SR 0x2700
    bus.irq_level = 6;
    bus.irq_at = 0;
    for _ in 0..3 {
        cpu.step(&mut bus, &mut ());
    }
    assert!(bus.acks.is_empty(), "level 6 under mask 7 is ignored");
    bus.irq_level = 7;
    cpu.step(&mut bus, &mut ());
    cpu.step(&mut bus, &mut ());
    assert_eq!(bus.acks.len(), 1, "level 7 is not maskable");
    assert_eq!(cpu.registers().pc, 0x2000 + 31 * 4 + 4);
}

#[test]
fn stop_waits_without_spinning_and_resumes_after_stop() {
    // stop #$2000 ; nop
    let mut bus = Ram::with_program(&[0x4E72, 0x2000, NOP, NOP]);
    let mut cpu = boot(&mut bus);
    let booted = cpu.cycles();
    let mut log = Log::default();
    cpu.step(&mut bus, &mut log);
    assert!(cpu.is_stopped());
    let before = log.instructions.len();
    assert_eq!(cpu.run_until(&mut bus, &mut log, 1_000_000), Stop::Target);
    assert!(cpu.cycles() >= 1_000_000);
    assert!(
        log.instructions.len() - before < 4,
        "the wait must jump to the target, not step per cycle"
    );
    // Now an interrupt at a known time, announced through next_event.
    bus.next_event = 2_000_000;
    bus.irq_at = 2_000_000;
    bus.irq_level = 3;
    cpu.run_until(&mut bus, &mut log, 2_000_100);
    assert!(!cpu.is_stopped());
    assert_eq!(bus.acks.len(), 1);
    assert!(bus.acks[0].1 >= 2_000_000 && bus.acks[0].1 < 2_000_020);
    let ssp = cpu.registers().ssp;
    // The stacked PC is that of the instruction after STOP.
    assert_eq!(bus.r32(ssp + 2), 0x1004);
    // Every cycle was reported.
    let told: u64 = log.instructions.iter().map(|x| x.1 as u64).sum::<u64>()
        + log.exceptions.iter().map(|x| x.3 as u64).sum::<u64>();
    assert_eq!(
        told + booted,
        cpu.cycles(),
        "every cycle after the reset reported"
    );
}

#[test]
fn trace_exception_after_one_instruction() {
    // move #$8700,sr ; moveq #1,d0 ; moveq #2,d1
    let mut bus = Ram::with_program(&[0x46FC, 0x8700, 0x7001, 0x7202]);
    let mut cpu = boot(&mut bus);
    let mut log = Log::default();
    cpu.step(&mut bus, &mut log); // T set by this instruction: no trace yet
    assert!(
        log.exceptions.is_empty(),
        "no trace for the instruction setting T"
    );
    cpu.step(&mut bus, &mut log); // moveq #1 runs traced
    assert_eq!(cpu.registers().d[0], 1);
    let c = cpu.step(&mut bus, &mut log); // trace exception
    assert_eq!(c, 34);
    let (kind, vector, _, _) = *log.exceptions.last().unwrap();
    assert_eq!((kind, vector), (ExceptionKind::Trace, 9));
    let r = cpu.registers();
    assert_eq!(r.sr & 0x8000, 0, "T cleared in the handler");
    assert_eq!(bus.r32(r.ssp + 2), 0x1006, "PC of the next instruction");
    assert_eq!(r.d[1], 0, "moveq #2 not executed");
}

#[test]
fn bus_error_builds_group0_frame() {
    // move.w $4000,d0 with a bus error at $4000
    let mut bus = Ram::with_program(&[0x3038, 0x4000, NOP]);
    bus.berr_addr = Some(0x4000);
    let mut cpu = boot(&mut bus);
    let mut log = Log::default();
    cpu.step(&mut bus, &mut log);
    let (kind, vector, _, _) = *log.exceptions.last().unwrap();
    assert_eq!((kind, vector), (ExceptionKind::BusError, 2));
    let r = cpu.registers();
    assert_eq!(r.ssp, 0x8000 - 14);
    assert_eq!(bus.r32(r.ssp + 2), 0x4000, "access address");
    assert_eq!(bus.r16(r.ssp + 6), 0x3038, "IR");
    assert_eq!(bus.r16(r.ssp) & 0x1F, 0x15, "read, supervisor data");
    assert_eq!(r.pc, 0x2008 + 4);
}

#[test]
fn double_bus_fault_halts() {
    // An odd SSP makes the illegal-instruction frame fault: halt.
    let mut bus = Ram::with_program(&[0x4AFC, NOP]);
    bus.w32(0, 0x8001);
    let mut cpu = boot(&mut bus);
    let r = cpu.run_until(&mut bus, &mut (), 10_000);
    assert_eq!(r, Stop::Halted);
    assert!(cpu.is_halted());
    assert_eq!(bus.halts, 1);
    assert_eq!(cpu.step(&mut bus, &mut ()), 0);
}

#[test]
fn reset_instruction_and_tas_writeback() {
    // reset ; tas (a0) ; tas (a0)
    let mut bus = Ram::with_program(&[0x4E70, 0x4AD0, 0x4AD0, NOP, NOP]);
    let mut cpu = boot(&mut bus);
    assert_eq!(cpu.step(&mut bus, &mut ()), 132);
    assert_eq!(bus.resets, 1);
    bus.tas_wb = false;
    let mut regs = cpu.registers();
    regs.a[0] = 0x3000;
    cpu.set_registers(&regs);
    bus.w16(0x3000, 0x0000);
    cpu.step(&mut bus, &mut ());
    assert_eq!(bus.r16(0x3000), 0x0000, "write-back suppressed");
    assert_eq!(cpu.registers().sr & 0x04, 0x04, "Z from the operand");
    bus.tas_wb = true;
    cpu.step(&mut bus, &mut ());
    assert_eq!(bus.r16(0x3000), 0x8000, "bit 7 set");
}

#[test]
fn observer_sees_calls_returns_and_cycles() {
    // bsr.s +4 ; nop ; nop ; (sub:) rts
    let mut bus = Ram::with_program(&[0x6104, NOP, NOP, 0x4E75, NOP, NOP]);
    let mut cpu = boot(&mut bus);
    let mut log = Log::default();
    assert_eq!(cpu.step(&mut bus, &mut log), 18);
    assert_eq!(log.calls, vec![(0x1000, 0x1006, 0x1002, 0x8000 - 4)]);
    assert_eq!(cpu.step(&mut bus, &mut log), 16);
    assert_eq!(log.rets, vec![(0x1006, 0x1002, 0x8000)]);
    assert_eq!(log.instructions, vec![(0x1000, 18), (0x1006, 16)]);
}

#[test]
fn unit_observer_and_all_opcodes_do_not_panic() {
    // Every opcode word once, from a fixed state, with the no-op observer.
    let mut bus = Ram::with_program(&[]);
    let mut cpu = boot(&mut bus);
    let base = cpu.registers();
    for op in 0..=0xFFFFu16 {
        let mut r = base;
        r.prefetch = [op, 0x0010];
        r.pc = 0x1004;
        r.a = [0x3000, 0x3001, 0x4000, 0x5000, 0x6000, 0x7000, 0x7800];
        cpu.set_registers(&r);
        let c = cpu.step(&mut bus, &mut ());
        assert!(c > 0 || cpu.is_halted(), "opcode {op:04x} took no time");
    }
}

#[test]
fn no_trace_after_illegal_but_after_trap() {
    // move #$8700,sr ; illegal
    let mut bus = Ram::with_program(&[0x46FC, 0x8700, 0x4AFC]);
    let mut cpu = boot(&mut bus);
    let mut log = Log::default();
    cpu.step(&mut bus, &mut log);
    cpu.step(&mut bus, &mut log); // illegal: exception entry, T cleared
    cpu.step(&mut bus, &mut log); // handler's bra.s: no trace before it
    let kinds: Vec<_> = log.exceptions.iter().map(|e| e.0).collect();
    assert_eq!(kinds, vec![ExceptionKind::IllegalInstruction]);

    // move #$8700,sr ; trap #0
    let mut bus = Ram::with_program(&[0x46FC, 0x8700, 0x4E40]);
    let mut cpu = boot(&mut bus);
    let mut log = Log::default();
    for _ in 0..3 {
        cpu.step(&mut bus, &mut log);
    }
    let kinds: Vec<_> = log.exceptions.iter().map(|e| e.0).collect();
    assert_eq!(kinds, vec![ExceptionKind::Trap(0), ExceptionKind::Trace]);
    // The trace frame holds the TRAP handler's address.
    assert_eq!(bus.r32(cpu.registers().ssp + 2), 0x2000 + 32 * 4);
}

#[test]
fn fetch_window_changes_no_access_time_or_report() {
    // At 0x1000 (inside the window 0x1000-0x17FF):
    //   moveq #20,d1 ; lea table(pc),a0
    // loop: move.w (a0)+,d0 ; add.w d0,d2 ; bsr.w sub ; dbra d1,loop
    //   move.w table(pc),d3 ; jmp ($1101).w (odd: address error, whose
    //   handler at 0x200C, outside the window, is `bra.s *`)
    // At 0x1800 (the first word past the window): sub: add.w d1,d4 ; rts
    // Data at 0x1100 (inside the window, read as data through the bus).
    let program = [
        0x7214, 0x41FA, 0x00FC, 0x3018, 0xD440, 0x6100, 0x07F4, 0x51C9, 0xFFF6, 0x363A, 0x00EC,
        0x4EF8, 0x1101,
    ];
    let run = |window: Option<(u32, usize)>| {
        let mut bus = Ram::with_program(&program);
        for i in 0..32u32 {
            bus.w16(0x1100 + 2 * i, 0x1111 * i as u16);
        }
        bus.w16(0x1800, 0xD841);
        bus.w16(0x1802, 0x4E75);
        bus.window = window;
        // Several runs (the window is asked for per run), uneven lengths.
        run_chunks(bus, &[7, 50, 123, 400, 1000, 3000])
    };
    let exact = run(None);
    let windowed = run(Some((0x1000, 0x400)));
    assert_eq!(exact.4, 0);
    assert!(windowed.4 > 100, "{} fetches from the window", windowed.4);
    let (r, _) = exact.0.last().unwrap();
    assert_eq!(r.pc, 0x200C + 4, "in the address-error handler");
    assert_eq!(r.d[4], (0..=20).sum::<u32>(), "sub ran 21 times");
    assert_same_run(&exact, &windowed, Some((0x1000, 0x400)));
    // A window reaching past 16 MB or at an odd base is not used.
    for w in [(0xFF_F000, 0x1000), (0x1001, 4)] {
        assert_eq!(run(Some(w)).4, 0, "window {w:x?}");
    }
}

#[test]
fn paired_window_fetches_change_no_access_time_or_report() {
    // The paths that take two window words at once (a jump's queue refill,
    // two extension words) and their fallbacks at the window's end:
    // 0x1000: move.l #$12345678,d5 ; move.l ($1104).l,d6 ;
    //         move.l d5,($1180).l ; addq.l #1,d0 ; jmp ($17FA).l
    // 0x17FA: move.l #$AAAABBBB,d7 (its second extension word at 0x17FE)
    // 0x1800: jmp ($1000).l
    // With the window 0x1000-0x17FF the extension words of the move at
    // 0x17FA straddle its end (0x17FE in, 0x1800 out); with 0x1000-0x17FB
    // the jump to 0x17FA does (0x17FA in, 0x17FC out).
    let program = [
        0x2A3C, 0x1234, 0x5678, 0x2C39, 0x0000, 0x1104, 0x23C5, 0x0000, 0x1180, 0x5280, 0x4EF9,
        0x0000, 0x17FA,
    ];
    let run = |window: Option<(u32, usize)>| {
        let mut bus = Ram::with_program(&program);
        bus.w16(0x1104, 0x0BAD);
        bus.w16(0x1106, 0xCAFE);
        for (i, w) in [0x2E3C, 0xAAAA, 0xBBBB, 0x4EF9, 0x0000, 0x1000]
            .into_iter()
            .enumerate()
        {
            bus.w16(0x17FA + 2 * i as u32, w);
        }
        bus.window = window;
        run_chunks(bus, &[5, 37, 130, 411, 1000, 2500])
    };
    let exact = run(None);
    let (r, _) = exact.0.last().unwrap();
    assert_eq!(r.d[5], 0x1234_5678);
    assert_eq!(r.d[6], 0x0BAD_CAFE);
    assert_eq!(r.d[7], 0xAAAA_BBBB);
    assert!(r.d[0] > 20, "{} loops", r.d[0]);
    for w in [(0x1000, 0x400), (0x1000, 0x3FE)] {
        let windowed = run(Some(w));
        assert!(
            windowed.4 > 100,
            "{} fetches from window {w:x?}",
            windowed.4
        );
        assert_same_run(&exact, &windowed, Some(w));
    }
}

#[test]
fn immediate_and_skip_fetch_pairs_change_no_access_time_or_report() {
    // The paths that take an extension word (or two) and the final
    // prefetch from the window at once (`#imm` to Dn through MOVE, ADDI
    // and friends, ADD/CMP <ea>,Dn; `#imm` to An through MOVEA, ADDA,
    // SUBA, CMPA; LEA d16(An), (xxx).L, d16(PC); Bcc.W not taken; DBcc's
    // two exits; `#imm` then a d16(An) or (xxx).W destination's word
    // through MOVE, ADDI and CMPI; BTST/BSET/BCLR `#n`,Dn),
    // run with no window, the whole program in the window, and windows
    // ending after each of its words (every pair and triple straddling
    // the end falls back to the single fetches).
    let program: [u16; 73] = [
        0x323C, 0x1234, // move.w #$1234,d1
        0x243C, 0x89AB, 0xCDEF, // move.l #$89ABCDEF,d2
        0x163C, 0x0056, // move.b #$56,d3
        0x0640, 0x0003, // addi.w #3,d0
        0x0C80, 0x0001, 0x0000, // cmpi.l #$10000,d0
        0x0484, 0x0000, 0x0001, // subi.l #1,d4
        0xDA7C, 0x0005, // add.w #5,d5
        0xBABC, 0x7FFF, 0xFFFF, // cmp.l #$7FFFFFFF,d5
        0x7E01, // moveq #1,d7
        0x6700, 0x0010, // beq.w (not taken)
        0x7C00, // moveq #0,d6
        0x51CE, 0x0010, // dbf d6 (count exhausted: falls through)
        0x50CE, 0x0010, // dbt d6 (condition true: falls through)
        0x0203, 0x000F, // andi.b #$0F,d3
        0x0082, 0x0040, 0x0000, // ori.l #$400000,d2
        0x307C, 0x8000, // movea.w #$8000,a0
        0x287C, 0x0001, 0x2345, // movea.l #$12345,a4
        0xD0FC, 0x0002, // adda.w #2,a0
        0x99FC, 0x0000, 0x0001, // suba.l #1,a4
        0x43E8, 0x0004, // lea 4(a0),a1
        0x45F9, 0x1234, 0x5678, // lea ($12345678).l,a2
        0xB5FC, 0x1234, 0x5678, // cmpa.l #$12345678,a2
        0x47FA, 0x0006, // lea 6(pc),a3
        0x317C, 0x1234, 0x0004, // move.w #$1234,4(a0)
        0x11FC, 0x0012, 0x2000, // move.b #$12,($2000).w
        0x0668, 0x0001, 0x0006, // addi.w #1,6(a0)
        0x0C38, 0x0003, 0x2000, // cmpi.b #3,($2000).w
        0x0803, 0x0002, // btst #2,d3
        0x08C3, 0x0011, // bset #17,d3
        0x0883, 0x0011, // bclr #17,d3
        0x4EF8, 0x1000, // jmp ($1000).w
    ];
    let run = |window: Option<(u32, usize)>| {
        let mut bus = Ram::with_program(&program);
        bus.window = window;
        run_chunks(bus, &[5, 37, 130, 411, 1000, 2500])
    };
    let exact = run(None);
    assert_eq!(exact.4, 0);
    assert!(exact.3.len() > 30, "{} writes", exact.3.len());
    let (r, _) = exact.0.last().unwrap();
    assert_eq!(r.d[1], 0x1234);
    // (The last run may end between a move and the ORI/ANDI after it.)
    assert_eq!(r.d[2] & !0x40_0000, 0x89AB_CDEF);
    assert!(matches!(r.d[3] & 0xFF, 0x56 | 0x06), "d3 {:x}", r.d[3]);
    assert_eq!(r.a[1], 0xFFFF_8006);
    assert_eq!(r.a[2], 0x1234_5678);
    assert_eq!(r.a[3], 0x1000 + 2 * 52 + 6, "lea 6(pc) at 0x1000 + 2 * 51");
    let loops = r.d[0] / 3;
    assert!(loops > 10, "{loops} loops");
    assert!(matches!(r.d[6], 0 | 0xFFFF), "dbf counts d6 down once");
    let mut windows = vec![(0x1000, 0x400)];
    windows.extend((1..=program.len()).map(|n| (0x1000, n)));
    for w in windows {
        let windowed = run(Some(w));
        assert!(windowed.4 > 0, "no fetches from window {w:x?}");
        assert_same_run(&exact, &windowed, Some(w));
    }
}
