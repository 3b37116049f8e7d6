//! Per-frame busy/idle figures in the layout of
//! `shared/reference/*.frames.csv` (first columns), for comparing the
//! emulator with the reference:
//! `mdtool frames ROM SYMBOLS FRAMES [INPUT]`
//! Idle = cycles of instructions inside `VDP_waitVBlank` (to the next text
//! symbol). Output: frame,busy,idle,idle_enter_line,dma_vblank,dma_active,
//! dma_last_line,fill_bytes, then the busy
//! time's Z80 bus stalls, FIFO waits and DMA freeze (68000 cycles).
//! `EXC_TO_PREV=1` charges exception entry to the interrupted function (as
//! the reference harness does); `FRAME_FUNCS=A-B` prints per-frame function
//! cycles of frames A..=B on stderr; `END_FILL_AFTER=F` ends a fill still
//! busy at the end of frame F (what-if, see `Vdp::end_fill_copy_busy`).

use std::path::PathBuf;

use retroprof_megadrive::timing::mclk_to_m68k_f64;
use retroprof_megadrive::{
    Clock, Config, DmaEvent, DmaKind, InputScript, InstrCost, MdObserver, Rom, System,
};

struct Frames {
    syms: Vec<(u32, String)>,
    per_fn: Vec<u64>,
    entries: Vec<u64>,
    idle_lo: u32,
    idle_hi: u32,
    busy: u64,
    idle: u64,
    enter_line: i32,
    was_idle: bool,
    dma_vblank: u64,
    dma_active: u64,
    dma_last: i32,
    fill: u64,
    /// Function of the last instruction (index into `syms`), for
    /// `EXC_TO_PREV`.
    last_fn: usize,
    last_idle: bool,
    /// Charge exception entry to the interrupted function, as the reference
    /// harness does (clock difference between two instruction hooks).
    exc_to_prev: bool,
    /// Per-function cycles of the current frame (for `FRAME_FUNCS`).
    frame_fn: Vec<u64>,
    /// Busy-time stalls of the frame: Z80 bus use, FIFO waits, DMA freeze.
    z80: u64,
    fifo: u64,
    freeze: u64,
}

impl MdObserver for Frames {
    fn call(&mut self, _from: u32, target: u32, _ret: u32, _sp: u32) {
        let k = self.syms.partition_point(|s| s.0 <= target);
        if k > 0 && self.syms[k - 1].0 == target {
            self.entries[k - 1] += 1;
        }
    }
    fn instruction(&mut self, pc: u32, cost: InstrCost, clock: &Clock) {
        let k = self.syms.partition_point(|s| s.0 <= pc);
        if k > 0 {
            self.per_fn[k - 1] += cost.total as u64;
            self.frame_fn[k - 1] += cost.total as u64;
            self.last_fn = k - 1;
        }
        let idle = pc >= self.idle_lo && pc < self.idle_hi;
        if idle {
            self.idle += cost.total as u64;
            if !self.was_idle && self.enter_line < 0 {
                self.enter_line = clock.line() as i32;
            }
        } else {
            self.busy += cost.total as u64;
            self.z80 += cost.z80_stall as u64;
            self.fifo += cost.fifo_wait as u64;
            self.freeze += cost.dma_freeze as u64;
        }
        self.was_idle = idle;
        self.last_idle = idle;
    }
    fn exception(
        &mut self,
        _k: retroprof_m68k::ExceptionKind,
        _v: u8,
        _h: u32,
        mclk: u32,
        _c: &Clock,
    ) {
        if self.exc_to_prev {
            self.per_fn[self.last_fn] += mclk as u64;
            self.frame_fn[self.last_fn] += mclk as u64;
            if self.last_idle {
                self.idle += mclk as u64;
            } else {
                self.busy += mclk as u64;
            }
        } else {
            self.busy += mclk as u64;
        }
    }
    fn dma(&mut self, e: &DmaEvent) {
        match e.kind {
            DmaKind::FromCpu(_) => {
                self.dma_vblank += e.span.bytes_vblank as u64;
                self.dma_active += e.span.bytes_active as u64;
                if let Some(l) = e.span.last_active_line {
                    self.dma_last = self.dma_last.max(l as i32);
                }
            }
            _ => self.fill += e.bytes as u64,
        }
    }
}

pub fn main(a: Vec<String>) {
    if a.len() < 3 {
        eprintln!("usage: frames ROM SYMBOLS FRAMES [INPUT]");
        std::process::exit(2);
    }
    let rom = Rom::load(&PathBuf::from(&a[0])).expect("rom");
    let syms = std::fs::read_to_string(&a[1]).expect("symbols");
    let mut text: Vec<(u32, String)> = syms
        .lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            let addr = u32::from_str_radix(it.next()?, 16).ok()?;
            let ty = it.next()?;
            let name = it.next()?.to_string();
            (ty == "T" || ty == "t").then_some((addr, name))
        })
        .collect();
    text.sort();
    let i = text
        .iter()
        .position(|(_, n)| n == "VDP_waitVBlank")
        .expect("VDP_waitVBlank");
    let lo = text[i].0;
    let hi = text[i + 1..]
        .iter()
        .find(|(a, _)| *a > lo)
        .map(|t| t.0)
        .unwrap_or(lo + 0x100);
    let frames: u64 = a[2].parse().unwrap();
    let script = InputScript::parse(&a[3..]).expect("input");
    let mut sys = System::new(&rom, Config::default());
    let mut obs = Frames {
        per_fn: vec![0; text.len()],
        entries: vec![0; text.len()],
        syms: text.clone(),
        idle_lo: lo,
        idle_hi: hi,
        busy: 0,
        idle: 0,
        enter_line: -1,
        was_idle: false,
        dma_vblank: 0,
        dma_active: 0,
        dma_last: -1,
        fill: 0,
        last_fn: 0,
        last_idle: false,
        exc_to_prev: std::env::var("EXC_TO_PREV").is_ok(),
        frame_fn: vec![0; text.len()],
        z80: 0,
        fifo: 0,
        freeze: 0,
    };
    // FRAME_FUNCS=A-B: per-frame function cycles for frames A..=B on stderr.
    let frame_funcs: Option<(u64, u64)> = std::env::var("FRAME_FUNCS").ok().and_then(|v| {
        let (a, b) = v.split_once('-')?;
        Some((a.parse().ok()?, b.parse().ok()?))
    });
    // END_FILL_AFTER=F: end a fill still busy at the end of frame F (what-if:
    // the reference emulator's quick 64 KB fill, see Vdp::end_fill_copy_busy).
    let end_fill_after: Option<u64> = std::env::var("END_FILL_AFTER")
        .ok()
        .and_then(|v| v.parse().ok());
    println!("frame,busy,idle,idle_enter_line,dma_vblank,dma_active,dma_last_line,fill,busy_z80_stall,busy_fifo_wait,busy_dma_freeze");
    for f in 0..frames {
        sys.set_pad(0, script.buttons_at(f));
        obs.busy = 0;
        obs.idle = 0;
        obs.enter_line = -1;
        obs.dma_vblank = 0;
        obs.dma_active = 0;
        obs.dma_last = -1;
        obs.fill = 0;
        obs.frame_fn.iter_mut().for_each(|c| *c = 0);
        obs.z80 = 0;
        obs.fifo = 0;
        obs.freeze = 0;
        if let Err(e) = sys.run_frame(&mut obs) {
            eprintln!("stopped: {e}");
            break;
        }
        if end_fill_after == Some(f) {
            let now = sys.mclk();
            sys.vdp_mut().end_fill_copy_busy(now);
        }
        println!(
            "{f},{:.1},{:.1},{},{},{},{},{},{:.1},{:.1},{:.1}",
            mclk_to_m68k_f64(obs.busy as f64),
            mclk_to_m68k_f64(obs.idle as f64),
            obs.enter_line,
            obs.dma_vblank,
            obs.dma_active,
            obs.dma_last,
            obs.fill,
            mclk_to_m68k_f64(obs.z80 as f64),
            mclk_to_m68k_f64(obs.fifo as f64),
            mclk_to_m68k_f64(obs.freeze as f64)
        );
        if let Some((fa, fb)) = frame_funcs {
            if (fa..=fb).contains(&f) {
                for (i, c) in obs.frame_fn.iter().enumerate() {
                    if *c > 0 {
                        eprintln!("F{f} {} {:.1}", obs.syms[i].1, mclk_to_m68k_f64(*c as f64));
                    }
                }
            }
        }
    }
    if let Ok(path) = std::env::var("FUNCS_OUT") {
        let mut v: Vec<_> = obs
            .syms
            .iter()
            .zip(obs.per_fn.iter().zip(&obs.entries))
            .filter(|(_, (c, _))| **c > 0)
            .collect();
        v.sort_by(|a, b| b.1 .0.cmp(a.1 .0).then(a.0.cmp(b.0)));
        let out: String = v
            .iter()
            .map(|((a, n), (c, e))| {
                format!("{n},0x{a:06x},{:.1},{e}\n", mclk_to_m68k_f64(**c as f64))
            })
            .collect();
        std::fs::write(path, out).unwrap();
    }
}
