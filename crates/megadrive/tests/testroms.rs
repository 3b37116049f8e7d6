//! Acceptance: run our own test ROMs (testroms/out/{knowncosts,heap,fullload}) and
//! check the emulator against the figures the ROMs count themselves
//! (RAM counters found by name in symbol.txt) and those of
//! testroms/README.md / expected.json.
//!
//! Each ROM runs once per test binary (a lazily computed run shared by the
//! tests). Screenshots: `RETROPROF_DUMP=DIR` writes them as PNGs,
//! `RETROPROF_BLESS=1` rewrites tests/golden/testroms.txt.

#[path = "golden/support.rs"]
mod support;

use std::path::PathBuf;
use std::sync::OnceLock;

use retroprof_m68k::ExceptionKind;
use retroprof_megadrive::{
    Clock, Config, DmaEvent, DmaKind, InstrCost, MdObserver, Rom, System, SystemView,
};
use serde_json::Value;
use support::{ram_u16, ram_u32, RamSymbols, Shot};

/// Frames the known-costs ROM runs: END starts about frame 1,401.
const KNOWNCOSTS_FRAMES: u64 = 1460;
/// Golden screenshot frames, one per phase (testroms/README.md "On screen").
const PHASE_SHOTS: [(&str, u64, u16); 7] = [
    ("A", 100, 0),
    ("B", 400, 1),
    ("B2", 600, 2),
    ("C", 700, 3),
    ("C2", 860, 4),
    ("D", 1100, 5),
    ("END", 1450, 6),
];
/// Frames the heap ROM runs (README: done about frame 616).
const HEAP_FRAMES: u64 = 700;
const HEAP_SHOT_FRAME: u64 = 690;

fn testroms() -> PathBuf {
    support::repo_root().join("testroms")
}

fn expected(rom: &str) -> Value {
    let p = support::must_exist(testroms().join(rom).join("expected.json"));
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn load(rom: &str) -> (Rom, RamSymbols) {
    let dir = testroms().join("out").join(rom);
    let rom_path = support::must_exist(dir.join("rom.bin"));
    let syms = RamSymbols::load(&support::must_exist(dir.join("symbol.txt")));
    let rom = Rom::load(&rom_path).unwrap_or_else(|e| panic!("{}: {e}", rom_path.display()));
    (rom, syms)
}

fn json_u64(v: &Value, what: &str) -> u64 {
    v.as_u64()
        .unwrap_or_else(|| panic!("expected.json: {what} is not a number: {v}"))
}

/// 68000 -> VDP DMA seen in one frame.
#[derive(Clone, Copy, Debug, Default)]
struct FrameDma {
    bytes: u32,
    vblank: u32,
    active: u32,
    count: u32,
}

/// RAM counters read at a frame's start (the first VBlank line).
#[derive(Clone, Copy, Debug, Default)]
struct FrameRam {
    vblank_count: u32,
    loop_count: u32,
    dma_queued: u32,
    dma_flushed: u32,
    dma_total: u32,
    burn_calls: u32,
}

struct Offsets {
    vblank_count: usize,
    loop_count: usize,
    dma_queued: usize,
    dma_flushed: usize,
    dma_total: usize,
    burn_calls: usize,
}

struct KcObserver {
    off: Offsets,
    burn_lo: u32,
    burn_hi: u32,
    burn_mclk: u64,
    burn_calls: u64,
    vints: u64,
    other_exceptions: Vec<(u64, ExceptionKind, u8)>,
    other_dma: Vec<DmaEvent>,
    dma: Vec<FrameDma>,
    ram: Vec<FrameRam>,
    /// Burn calls seen by the observer at each frame start.
    burn_calls_at_start: Vec<u64>,
}

impl MdObserver for KcObserver {
    fn frame_start(&mut self, _frame: u64, view: &SystemView) {
        let w = view.wram;
        self.ram.push(FrameRam {
            vblank_count: ram_u32(w, self.off.vblank_count),
            loop_count: ram_u32(w, self.off.loop_count),
            dma_queued: ram_u32(w, self.off.dma_queued),
            dma_flushed: ram_u32(w, self.off.dma_flushed),
            dma_total: ram_u32(w, self.off.dma_total),
            burn_calls: ram_u32(w, self.off.burn_calls),
        });
        self.burn_calls_at_start.push(self.burn_calls);
        self.dma.push(FrameDma::default());
    }

    #[inline(always)]
    fn instruction(&mut self, pc: u32, cost: InstrCost, _clock: &Clock) {
        if pc >= self.burn_lo && pc < self.burn_hi {
            self.burn_mclk += cost.total as u64;
        }
    }

    fn call(&mut self, _from: u32, target: u32, _ret: u32, _sp: u32) {
        if target == self.burn_lo {
            self.burn_calls += 1;
        }
    }

    fn exception(&mut self, kind: ExceptionKind, vector: u8, _h: u32, _m: u32, clock: &Clock) {
        if kind == ExceptionKind::Interrupt(6) && vector == 30 {
            self.vints += 1;
        } else {
            self.other_exceptions.push((clock.frame(), kind, vector));
        }
    }

    fn dma(&mut self, e: &DmaEvent) {
        match e.kind {
            DmaKind::FromCpu(_) => {
                let d = self.dma.last_mut().expect("DMA before the first frame");
                d.bytes += e.bytes;
                d.vblank += e.span.bytes_vblank;
                d.active += e.span.bytes_active;
                d.count += 1;
                assert_eq!(
                    e.span.bytes_vblank + e.span.bytes_active,
                    e.bytes,
                    "DMA span split does not add up: {e:?}"
                );
            }
            _ => self.other_dma.push(*e),
        }
    }
}

struct KcRun {
    obs: KcObserver,
    /// Final RAM image (after the last frame).
    wram: Box<[u8; 0x10000]>,
    syms: RamSymbols,
    shots: Vec<Shot>,
    /// Phase (RAM) at the end of each screenshot frame.
    shot_phases: Vec<u16>,
}

fn knowncosts() -> &'static KcRun {
    static RUN: OnceLock<KcRun> = OnceLock::new();
    RUN.get_or_init(|| {
        let (rom, syms) = load("knowncosts");
        let (burn_lo, burn_hi) = syms.code_range("burn");
        let off = Offsets {
            vblank_count: syms.ram_offset("vblank_count"),
            loop_count: syms.ram_offset("loop_count"),
            dma_queued: syms.ram_offset("dma_queued_bytes"),
            dma_flushed: syms.ram_offset("dma_flushed_bytes"),
            dma_total: syms.ram_offset("dma_total_bytes"),
            burn_calls: syms.ram_offset("burn_calls"),
        };
        let mut obs = KcObserver {
            off,
            burn_lo,
            burn_hi,
            burn_mclk: 0,
            burn_calls: 0,
            vints: 0,
            other_exceptions: Vec::new(),
            other_dma: Vec::new(),
            dma: Vec::new(),
            ram: Vec::new(),
            burn_calls_at_start: Vec::new(),
        };
        let mut sys = System::new(&rom, Config::default());
        let phase_off = syms.ram_offset("phase");
        let mut shots = Vec::new();
        let mut shot_phases = Vec::new();
        for f in 0..KNOWNCOSTS_FRAMES {
            let shot = PHASE_SHOTS.iter().find(|s| s.1 == f);
            if shot.is_some() {
                sys.request_screenshot();
            }
            sys.run_frame(&mut obs)
                .unwrap_or_else(|e| panic!("knowncosts frame {f}: {e}"));
            if let Some(&(name, _, _)) = shot {
                let (sf, image) = sys.take_screenshot().expect("screenshot");
                assert_eq!(sf, f);
                shots.push(Shot {
                    name: format!("knowncosts.{name}"),
                    frame: f,
                    image,
                });
                shot_phases.push(ram_u16(sys.wram(), phase_off));
            }
        }
        KcRun {
            obs,
            wram: Box::new(*sys.wram()),
            syms,
            shots,
            shot_phases,
        }
    })
}

impl KcRun {
    fn u16(&self, name: &str) -> u16 {
        ram_u16(&self.wram, self.syms.ram_offset(name))
    }
    fn u32(&self, name: &str) -> u32 {
        ram_u32(&self.wram, self.syms.ram_offset(name))
    }
    fn u32_array(&self, name: &str, n: usize) -> Vec<u32> {
        let o = self.syms.ram_offset(name);
        (0..n).map(|i| ram_u32(&self.wram, o + 4 * i)).collect()
    }
}

#[test]
fn knowncosts_runs_every_phase_without_exception() {
    let run = knowncosts();
    let exp = expected("knowncosts");
    let end_phase = json_u64(&exp["end_phase"], "end_phase") as u16;
    assert_eq!(run.u16("phase"), end_phase, "phase counter at the end");
    assert_eq!(run.u16("phases_done"), end_phase, "phases_done");
    assert_eq!(
        run.u16("exception_vector"),
        0,
        "the ROM recorded an unexpected exception (pc {:06X}, address {:06X})",
        run.u32("exception_pc"),
        run.u32("exception_address")
    );
    assert!(
        run.obs.other_exceptions.is_empty(),
        "exceptions other than VINT: {:?}",
        run.obs.other_exceptions
    );
    // Every VINT the emulator raised was counted by the ROM's handler.
    assert_eq!(
        run.obs.vints,
        run.u32("vblank_count") as u64,
        "VINTs taken vs vblank_count"
    );
    let fin = &exp["final"];
    for name in ["div_calls", "mul_steps", "settile_calls"] {
        assert_eq!(run.u32(name) as u64, json_u64(&fin[name], name), "{name}");
    }
    assert_eq!(
        run.u16("redraw_count") as u64,
        json_u64(&fin["redraw_count"], "redraw_count"),
        "redraw_count"
    );
    // The phase each screenshot shows.
    for (i, &(name, frame, phase)) in PHASE_SHOTS.iter().enumerate() {
        assert_eq!(
            run.shot_phases[i], phase,
            "frame {frame} should be inside phase {name}"
        );
    }
}

#[test]
fn knowncosts_dropped_frames_per_phase() {
    let run = knowncosts();
    let exp = expected("knowncosts");
    let starts_v = run.u32_array("phase_start_vblank", 7);
    let starts_l = run.u32_array("phase_start_loop", 7);
    let dropped = run.u32_array("phase_dropped", 7);
    println!("phase_start_vblank {starts_v:?}");
    println!("phase_start_loop   {starts_l:?}");
    println!("phase_dropped      {dropped:?}");
    let want_loops: Vec<u64> = exp["final"]["phase_start_loop"]
        .as_array()
        .expect("final.phase_start_loop")
        .iter()
        .map(|v| json_u64(v, "phase_start_loop"))
        .collect();
    assert_eq!(
        starts_l.iter().map(|&v| v as u64).collect::<Vec<_>>(),
        want_loops,
        "phase_start_loop"
    );
    for ph in exp["phases"].as_array().expect("phases") {
        let p = json_u64(&ph["index"], "index") as usize;
        let name = ph["name"].as_str().unwrap_or("?");
        let vblanks = starts_v[p + 1] - starts_v[p];
        let loops = starts_l[p + 1] - starts_l[p];
        assert_eq!(
            vblanks as u64,
            json_u64(&ph["vblanks"], "vblanks"),
            "phase {name} VBlanks"
        );
        assert_eq!(
            loops as u64,
            json_u64(&ph["loops"], "loops"),
            "phase {name} loops"
        );
        let want = json_u64(&ph["dropped"], "dropped");
        assert_eq!(
            (vblanks - loops) as u64,
            want,
            "phase {name} drops from the start arrays"
        );
        assert_eq!(dropped[p] as u64, want, "phase {name} phase_dropped");
    }
    assert_eq!(
        (starts_v[6] - starts_v[0]) as u64,
        json_u64(
            &exp["vblanks_from_phase_a_to_end"],
            "vblanks_from_phase_a_to_end"
        )
    );
}

#[test]
fn knowncosts_burn_cycles_per_call() {
    let run = knowncosts();
    let exp = expected("knowncosts");
    let o = &run.obs;
    assert!(o.burn_calls > 1000, "only {} calls into burn", o.burn_calls);
    // The ROM's own count, read at the last frame start, equals the calls
    // the observer saw by then.
    let last = o.ram.len() - 1;
    assert_eq!(
        o.ram[last].burn_calls as u64, o.burn_calls_at_start[last],
        "burn_calls"
    );
    assert_eq!(
        o.ram[last].burn_calls, o.ram[last].loop_count,
        "burn_calls = loop_count"
    );
    let per_call = o.burn_mclk as f64 / 7.0 / o.burn_calls as f64;
    let gpgx = exp["burn"]["gpgx_cycles_per_call"]
        .as_f64()
        .expect("burn.gpgx_cycles_per_call");
    let tables = json_u64(&exp["burn"]["cycles_by_tables"], "cycles_by_tables") as f64;
    println!(
        "burn: {} calls, {} mclk, {per_call:.1} cycles per call (tables {tables}, GPGX {gpgx}, {:+.3} %)",
        o.burn_calls,
        o.burn_mclk,
        (per_call / gpgx - 1.0) * 100.0
    );
    assert!(
        per_call >= tables,
        "burn {per_call:.1} below the table figure {tables}"
    );
    assert!(
        (per_call / gpgx - 1.0).abs() <= 0.001,
        "burn {per_call:.1} cycles per call is not within 0.1 % of GPGX's {gpgx}"
    );
}

#[test]
fn knowncosts_dma_bytes_per_frame_equal_the_queue() {
    let run = knowncosts();
    let exp = expected("knowncosts");
    let o = &run.obs;
    println!("fill/copy DMAs (not checked): {}", o.other_dma.len());
    let sprite_bytes = json_u64(&exp["dma_sprite_table_bytes"], "dma_sprite_table_bytes") as u32;
    let steps: Vec<u32> = exp["dma_queued_bytes_by_step"]
        .as_array()
        .expect("dma_queued_bytes_by_step")
        .iter()
        .map(|v| json_u64(v, "step") as u32)
        .collect();
    let step_frames = json_u64(&exp["dma_step_vblanks"], "dma_step_vblanks") as usize;
    let mut cumulative = 0u64;
    let mut sizes: Vec<u32> = Vec::new();
    // Start-up flushes its queue directly (no `SYS_doVBlankProcess`, so no
    // `dma_queued_bytes`); game loops start with phase A.
    let phase_a = run.u32_array("phase_start_vblank", 1)[0];
    let mut loop_flushes = 0;
    for (f, d) in o.dma.iter().enumerate() {
        let next = o.ram.get(f + 1);
        if d.bytes > 0 {
            // One flush per frame: the ROM's figure for its last flush.
            if let Some(next) = next {
                assert_eq!(
                    d.bytes, next.dma_flushed,
                    "frame {f}: DMA bytes sent vs dma_flushed_bytes after it"
                );
            }
            // DMA queued by the loop that finished before this VBlank is
            // sent in this frame: the bytes equal what the ROM queued.
            if o.ram[f].vblank_count >= phase_a {
                loop_flushes += 1;
                assert_eq!(
                    d.bytes, o.ram[f].dma_queued,
                    "frame {f}: DMA bytes sent vs dma_queued_bytes at the VBlank"
                );
                sizes.push(d.bytes);
            }
        }
        // The ROM's running total of flushed bytes equals ours.
        if let Some(next) = next {
            cumulative += d.bytes as u64;
            assert_eq!(
                next.dma_total as u64, cumulative,
                "frame {f}: dma_total_bytes vs DMA bytes seen so far"
            );
        }
    }
    // One flush per loop (loops that overran send nothing at the VBlanks
    // they missed).
    let loops = o.ram.last().expect("frames").loop_count;
    assert!(
        (loop_flushes as i64 - loops as i64).abs() <= 1,
        "{loop_flushes} frames with DMA for {loops} loops"
    );
    // Phase D's growing blob: each step's size for exactly its 40 frames,
    // in order, between sprite-table-only frames.
    let phase_d: Vec<u32> = sizes
        .iter()
        .copied()
        .filter(|&b| b != sprite_bytes)
        .collect();
    let mut want_d = Vec::new();
    for &s in &steps {
        want_d.extend(std::iter::repeat_n(s, step_frames));
    }
    assert_eq!(phase_d, want_d, "phase D per-frame DMA bytes");
    // VBlank / active display split, per queued size: frames, least and
    // most bytes in VBlank, frames that spilled into active display.
    let vblank_capacity = 38 * 204; // md-timing.md: 38 NTSC VBlank lines x 204 bytes (H40)
    let mut split: std::collections::BTreeMap<u32, (u32, u32, u32, u32)> = Default::default();
    for d in o.dma.iter().filter(|d| d.bytes > sprite_bytes) {
        let e = split.entry(d.bytes).or_insert((0, u32::MAX, 0, 0));
        e.0 += 1;
        e.1 = e.1.min(d.vblank);
        e.2 = e.2.max(d.vblank);
        e.3 += (d.active > 0) as u32;
    }
    println!("phase D DMA: queued bytes, frames, min/max bytes in VBlank, frames spilling");
    for (bytes, (n, lo, hi, spill)) in &split {
        println!("  {bytes:5} {n:3} {lo:5}..{hi:5} {spill:3}");
    }
    let mut bad = Vec::new();
    for (f, d) in o.dma.iter().enumerate() {
        if d.bytes == 0 {
            continue;
        }
        // About 7.1-7.6 KB fit in VBlank (testroms/README.md; at most the
        // 38 x 204 bytes of a whole VBlank): up to step 5 (6,848 bytes)
        // everything fits, from step 7 (7,872) on some bytes spill. Step 6
        // (7,360) is at the limit and may go either way.
        let ok = if d.active > 0 {
            d.bytes > 7100 && (7100..=vblank_capacity).contains(&d.vblank)
        } else {
            d.bytes <= vblank_capacity
        };
        if !ok {
            bad.push(format!("frame {f}: {d:?}"));
        }
    }
    assert!(
        bad.is_empty(),
        "DMA should fit in VBlank up to 7.1-7.6 KB and spill past that:\n{}",
        bad.join("\n")
    );
    for &big in steps.iter().filter(|&&b| b > vblank_capacity) {
        let (n, _, _, spill) = split.get(&big).copied().unwrap_or_default();
        assert_eq!(
            spill, n,
            "every {big}-byte DMA should spill into active display"
        );
    }
}

#[test]
fn knowncosts_and_heap_golden_screenshots() {
    let kc = knowncosts();
    let heap = heap();
    let mut shots: Vec<Shot> = kc
        .shots
        .iter()
        .map(|s| Shot {
            name: s.name.clone(),
            frame: s.frame,
            image: s.image.clone(),
        })
        .collect();
    shots.push(Shot {
        name: "heap.end".into(),
        frame: HEAP_SHOT_FRAME,
        image: heap.shot.clone(),
    });
    support::check_golden("testroms.txt", &shots);
}

struct HeapObserver {
    alloc: u32,
    free: u32,
    allocs: u64,
    frees: u64,
    other_exceptions: Vec<(u64, ExceptionKind, u8)>,
}

impl MdObserver for HeapObserver {
    fn call(&mut self, _from: u32, target: u32, _ret: u32, _sp: u32) {
        if target == self.alloc {
            self.allocs += 1;
        } else if target == self.free {
            self.frees += 1;
        }
    }

    fn exception(&mut self, kind: ExceptionKind, vector: u8, _h: u32, _m: u32, clock: &Clock) {
        if kind != ExceptionKind::Interrupt(6) {
            self.other_exceptions.push((clock.frame(), kind, vector));
        }
    }
}

struct HeapRun {
    obs: HeapObserver,
    wram: Box<[u8; 0x10000]>,
    syms: RamSymbols,
    done_frame: Option<u64>,
    shot: retroprof_megadrive::render::Image,
}

fn heap() -> &'static HeapRun {
    static RUN: OnceLock<HeapRun> = OnceLock::new();
    RUN.get_or_init(|| {
        let (rom, syms) = load("heap");
        let mut obs = HeapObserver {
            alloc: syms.addr("MEM_alloc"),
            free: syms.addr("MEM_free"),
            allocs: 0,
            frees: 0,
            other_exceptions: Vec::new(),
        };
        let done_off = syms.ram_offset("heap_done");
        let mut sys = System::new(&rom, Config::default());
        let mut done_frame = None;
        let mut shot = None;
        for f in 0..HEAP_FRAMES {
            if f == HEAP_SHOT_FRAME {
                sys.request_screenshot();
            }
            sys.run_frame(&mut obs)
                .unwrap_or_else(|e| panic!("heap frame {f}: {e}"));
            if f == HEAP_SHOT_FRAME {
                shot = sys.take_screenshot().map(|(_, i)| i);
            }
            if done_frame.is_none() && ram_u16(sys.wram(), done_off) != 0 {
                done_frame = Some(f);
            }
        }
        HeapRun {
            obs,
            wram: Box::new(*sys.wram()),
            syms,
            done_frame,
            shot: shot.expect("heap screenshot"),
        }
    })
}

#[test]
fn heap_rom_counters() {
    let run = heap();
    let exp = expected("heap");
    println!(
        "heap: done at frame {:?}; MEM_alloc calls {}, MEM_free calls {}",
        run.done_frame, run.obs.allocs, run.obs.frees
    );
    assert!(
        run.done_frame.is_some(),
        "heap_done not set after {HEAP_FRAMES} frames"
    );
    assert!(
        run.obs.other_exceptions.is_empty(),
        "unexpected exceptions: {:?}",
        run.obs.other_exceptions
    );
    assert_eq!(
        ram_u16(&run.wram, run.syms.ram_offset("exception_vector")),
        0
    );
    let fin = exp["final"].as_object().expect("final");
    for (name, want) in fin {
        let off = run.syms.ram_offset(name);
        let span = run.syms.span(name) as usize;
        let got: Vec<u64> = match want {
            Value::Array(items) => {
                let width = span / items.len();
                (0..items.len())
                    .map(|i| read_width(&run.wram, off + i * width, width))
                    .collect()
            }
            _ => vec![read_width(&run.wram, off, span.min(4))],
        };
        let want: Vec<u64> = match want {
            Value::Array(items) => items.iter().map(|v| json_u64(v, name)).collect(),
            v => vec![json_u64(v, name)],
        };
        assert_eq!(got, want, "{name}");
    }
    // The observer's call events agree with the ROM's counts.
    assert_eq!(run.obs.allocs, json_u64(&fin["heap_allocs"], "heap_allocs"));
    assert_eq!(run.obs.frees, json_u64(&fin["heap_frees"], "heap_frees"));
}

fn read_width(wram: &[u8; 0x10000], off: usize, width: usize) -> u64 {
    match width {
        2 => ram_u16(wram, off) as u64,
        4 => ram_u32(wram, off) as u64,
        w => panic!("unexpected counter width {w} at {off:04X}"),
    }
}

/// Frames the full-load ROM runs in its test.
const FULLLOAD_FRAMES: u64 = 300;

/// Per frame: mclk of instructions inside `VDP_waitVBlank` and in all.
struct FullLoadObserver {
    wait_lo: u32,
    wait_hi: u32,
    idle: Vec<u64>,
    total: Vec<u64>,
    loop_count: Vec<u32>,
    loop_off: usize,
    other_exceptions: Vec<(u64, ExceptionKind, u8)>,
}

impl MdObserver for FullLoadObserver {
    fn frame_start(&mut self, _frame: u64, view: &SystemView) {
        self.idle.push(0);
        self.total.push(0);
        self.loop_count.push(ram_u32(view.wram, self.loop_off));
    }

    fn instruction(&mut self, pc: u32, cost: InstrCost, _clock: &Clock) {
        if pc >= self.wait_lo && pc < self.wait_hi {
            *self.idle.last_mut().expect("frame") += cost.total as u64;
        }
        *self.total.last_mut().expect("frame") += cost.total as u64;
    }

    fn exception(&mut self, kind: ExceptionKind, vector: u8, _h: u32, m: u32, clock: &Clock) {
        *self.total.last_mut().expect("frame") += m as u64;
        if kind != ExceptionKind::Interrupt(6) {
            self.other_exceptions.push((clock.frame(), kind, vector));
        }
    }
}

/// testroms/README.md "The full-load ROM": the 68000 is busy the whole of
/// every frame (the idle wait takes well under 1 % of it), one game loop
/// per VBlank, and the Z80 program runs and reads ROM through the bank
/// window.
#[test]
fn fullload_keeps_the_68000_busy_every_frame() {
    let (rom, syms) = load("fullload");
    let (wait_lo, wait_hi) = syms.code_range("VDP_waitVBlank");
    let mut obs = FullLoadObserver {
        wait_lo,
        wait_hi,
        idle: Vec::new(),
        total: Vec::new(),
        loop_count: Vec::new(),
        loop_off: syms.ram_offset("loop_count"),
        other_exceptions: Vec::new(),
    };
    let mut sys = System::new(&rom, Config::default());
    for f in 0..FULLLOAD_FRAMES {
        sys.run_frame(&mut obs)
            .unwrap_or_else(|e| panic!("fullload frame {f}: {e}"));
    }
    assert!(
        obs.other_exceptions.is_empty(),
        "unexpected exceptions: {:?}",
        obs.other_exceptions
    );
    let w = sys.wram();
    assert_eq!(ram_u16(w, syms.ram_offset("exception_vector")), 0);
    assert_eq!(ram_u16(w, syms.ram_offset("z80_started")), 1);
    // From frame 30 (start-up done): at most 1 % idle, one loop a frame.
    let mut worst = 0.0f64;
    for f in 30..FULLLOAD_FRAMES as usize {
        let idle = obs.idle[f] as f64 / obs.total[f] as f64;
        worst = worst.max(idle);
        assert!(
            idle < 0.01,
            "frame {f}: {:.2} % idle ({} of {} mclk)",
            idle * 100.0,
            obs.idle[f],
            obs.total[f]
        );
        if f + 1 < obs.loop_count.len() {
            assert_eq!(
                obs.loop_count[f + 1],
                obs.loop_count[f] + 1,
                "frame {f}: not one game loop"
            );
        }
    }
    println!("fullload: worst idle {:.3} % of a frame", worst * 100.0);
    // The Z80 program read ROM through the bank window, about one byte a
    // scanline (262 lines a frame).
    let z = sys.z80();
    assert!(
        z.bank_accesses > 200 * (FULLLOAD_FRAMES - 30),
        "Z80 bank reads: {}",
        z.bank_accesses
    );
    assert_eq!(z.bad_bank_accesses, 0);
}
