//! Turning the engine's raw counters into a [`Report`].

use retroprof_megadrive::timing::{FrameGeometry, M68K_DIVIDER};
use retroprof_megadrive::{FrameInfo, Region};
use retroprof_symbols::{FunctionOrigin, SymbolSource};

use crate::engine::Profiler;
use crate::gameplay::Loading;
use crate::report::*;
use crate::Session;

/// mclk -> 68000 cycles (md-timing.md: "68000 = mclk / 7",
/// `timing::M68K_DIVIDER`).
pub(crate) fn cyc(mclk: u64) -> f64 {
    mclk as f64 / M68K_DIVIDER as f64
}

fn pct(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a * 100.0 / b
    } else {
        0.0
    }
}

pub(crate) fn report(
    s: &Session,
    p: &mut Profiler,
    region: Region,
    last: Option<FrameInfo>,
    stopped: Option<String>,
    kdebug: Option<crate::kdebug::KDebugReport>,
) -> Report {
    let (nodes, calls) = p.counted_tree();
    let nattr = p.attr.len();
    // Inclusive time per attr: every distinct stack adds its time once to
    // each function on it.
    let mut inclusive = vec![0u64; nattr];
    let mut seen = vec![u32::MAX; nattr];
    let mut paths: Vec<(Vec<u32>, u64)> = Vec::new();
    for (n, &m) in nodes.iter().enumerate() {
        if m == 0 || n == 0 {
            continue;
        }
        let path = p.node_path(n as u32);
        for &a in &path {
            if seen[a as usize] != n as u32 {
                seen[a as usize] = n as u32;
                inclusive[a as usize] += m;
            }
        }
        paths.push((path, m));
    }
    // Functions: anything that ran or was called.
    let mut ids: Vec<u32> = (0..nattr as u32)
        .filter(|&i| p.mclk[i as usize] > 0 || calls[i as usize] > 0 || inclusive[i as usize] > 0)
        .collect();
    let info = &p.attr.attrs;
    ids.sort_by(|&a, &b| {
        p.counted[b as usize]
            .cmp(&p.counted[a as usize])
            .then(info[a as usize].addr.cmp(&info[b as usize].addr))
            .then(info[a as usize].name.cmp(&info[b as usize].name))
            .then(a.cmp(&b))
    });
    let mut fidx = vec![usize::MAX; nattr];
    for (i, &a) in ids.iter().enumerate() {
        fidx[a as usize] = i;
    }
    // Frames.
    let no_wait: Vec<bool> = p
        .frames
        .iter()
        .map(|r| r.acc.idle_enter_line.is_none())
        .collect();
    let stall = crate::gameplay::stalls(&no_wait);
    let mut frames = Vec::with_capacity(p.frames.len());
    for (k, r) in p.frames.iter().enumerate() {
        let fc = cyc(r.frame_mclk);
        let busy = cyc(r.busy_mclk);
        frames.push(FrameRecord {
            frame: r.frame,
            counted: r.frame >= p.from,
            busy_cycles: busy,
            idle_cycles: cyc(r.idle_mclk),
            frame_cycles: fc,
            load_pct: pct(busy, fc),
            dropped: r.acc.loop_starts == 0,
            loading: crate::gameplay::classify(
                r.frame,
                p.first_loop_frame,
                r.acc.display_shown,
                r.acc.black,
                stall[k],
                r.acc.loading_marked,
            ),
            loop_starts: r.acc.loop_starts,
            idle_enter_line: r.acc.idle_enter_line,
            loop_start_line: r.acc.loop_start_line,
            dma_vblank_bytes: r.acc.dma_vblank,
            dma_active_bytes: r.acc.dma_active,
            dma_fill_copy_bytes: r.acc.dma_fill_copy,
            dma_last_line: r.acc.dma_last_line,
            dma_freeze_cycles: cyc(r.acc.freeze_mclk),
            fifo_wait_cycles: cyc(r.acc.fifo_mclk),
            refresh_cycles: cyc(r.acc.refresh_mclk),
            z80_stall_cycles: cyc(r.acc.z80_stall_mclk),
            interrupts: r.acc.interrupts,
            instructions: r.instructions,
            top: r
                .top
                .iter()
                .map(|&(a, m)| FrameFunction {
                    function: fidx[a as usize],
                    cycles: cyc(m),
                })
                .collect(),
            watch: r.watch.clone(),
            kdebug_timer_spans: p.kdebug.frame_timers(r.frame).0,
            kdebug_timer_cycles: p.kdebug.frame_timers(r.frame).1,
        });
    }
    // Summary over counted frames.
    let mut sm = Summary {
        frames_run: frames.len() as u64,
        first_loop_frame: p.first_loop_frame,
        ..Summary::default()
    };
    let mut busy_m = 0u64;
    let mut idle_m = 0u64;
    let mut load_sum = 0.0;
    let mut load_frames = 0u64;
    let mut loads = Vec::new();
    let include_loading = s.options.include_loading;
    for (f, r) in frames.iter().zip(p.frames.iter()) {
        if !f.counted {
            continue;
        }
        sm.frames_counted += 1;
        busy_m += r.busy_mclk;
        idle_m += r.idle_mclk;
        // Mean, max, percentiles and dropped frames describe the same
        // frames: the counted gameplay frames (crate::gameplay).
        let in_stats = include_loading || f.loading.is_none();
        if !in_stats {
            sm.loading_frames += 1;
            match f.loading {
                Some(Loading::Boot) => sm.loading_boot_frames += 1,
                Some(Loading::DisplayOff) => sm.loading_display_off_frames += 1,
                Some(Loading::Black) => sm.loading_black_frames += 1,
                Some(Loading::Stall) => sm.loading_stall_frames += 1,
                Some(Loading::Marked) => sm.loading_marked_frames += 1,
                None => {}
            }
            if f.dropped && p.first_loop_frame.is_some() {
                sm.dropped_loading_frames += 1;
            }
        }
        if in_stats {
            load_sum += f.load_pct;
            load_frames += 1;
            loads.push(f.load_pct);
        }
        if in_stats && (sm.max_load_frame.is_none() || f.load_pct > sm.max_load_pct) {
            sm.max_load_pct = f.load_pct;
            sm.max_load_frame = Some(f.frame);
        }
        if f.dropped && p.first_loop_frame.is_some() && in_stats {
            sm.dropped_frames += 1;
            sm.dropped.push(f.frame);
        }
        sm.loops += f.loop_starts as u64;
        sm.dma_vblank_bytes += f.dma_vblank_bytes;
        sm.dma_active_bytes += f.dma_active_bytes;
        sm.dma_fill_copy_bytes += f.dma_fill_copy_bytes;
        if f.dma_active_bytes > 0 {
            sm.frames_with_active_dma += 1;
        }
        if let Some(l) = f.dma_last_line {
            sm.max_dma_last_line = Some(sm.max_dma_last_line.map_or(l, |m| m.max(l)));
        }
        sm.dma_freeze_cycles += f.dma_freeze_cycles;
        sm.fifo_wait_cycles += f.fifo_wait_cycles;
        sm.refresh_cycles += f.refresh_cycles;
        sm.z80_stall_cycles += f.z80_stall_cycles;
        sm.interrupts += f.interrupts as u64;
        sm.instructions += f.instructions;
    }
    sm.busy_cycles = cyc(busy_m);
    sm.idle_cycles = cyc(idle_m);
    sm.total_cycles = cyc(busy_m + idle_m);
    loads.sort_by(f64::total_cmp);
    sm.p50_load_pct = percentile(&loads, 50.0);
    sm.p95_load_pct = percentile(&loads, 95.0);
    sm.p99_load_pct = percentile(&loads, 99.0);
    sm.mean_load_pct = if load_frames > 0 {
        load_sum / load_frames as f64
    } else {
        0.0
    };
    // Flat profile.
    let total = sm.total_cycles;
    let busy = sm.busy_cycles;
    let functions: Vec<FunctionStats> = ids
        .iter()
        .map(|&a| {
            let ai = &info[a as usize];
            let self_c = cyc(p.counted[a as usize]);
            let inc = cyc(inclusive[a as usize]);
            let n = calls[a as usize];
            FunctionStats {
                name: ai.name.clone(),
                addr: ai.addr,
                file: ai.file.clone(),
                line: ai.line,
                inlined_into: ai.inlined_into.clone(),
                inline_chain: ai.inline_chain.clone(),
                origin: match ai.origin {
                    FunctionOrigin::Unknown => "unknown",
                    FunctionOrigin::Symbol => "symbol",
                    FunctionOrigin::Label => "label",
                    FunctionOrigin::Bucket => "bucket",
                }
                .to_string(),
                idle: ai.idle,
                self_cycles: self_c,
                inclusive_cycles: inc,
                calls: n,
                pct_all: pct(self_c, total),
                pct_busy: if ai.idle { 0.0 } else { pct(self_c, busy) },
                cycles_per_call: if n > 0 { self_c / n as f64 } else { 0.0 },
                inclusive_per_call: if n > 0 { inc / n as f64 } else { 0.0 },
            }
        })
        .collect();
    // Worst frames.
    let mut worst: Vec<&FrameRecord> = frames
        .iter()
        .filter(|f| f.counted && (include_loading || f.loading.is_none()))
        .collect();
    worst.sort_by(|a, b| {
        b.busy_cycles
            .partial_cmp(&a.busy_cycles)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.frame.cmp(&b.frame))
    });
    let worst_frames = worst.iter().take(s.options.top).map(|f| f.frame).collect();
    // Stacks.
    let mut stacks: Vec<StackSample> = paths
        .into_iter()
        .map(|(path, m)| StackSample {
            stack: path.iter().map(|&a| fidx[a as usize]).collect(),
            mclk: m,
        })
        .collect();
    stacks.sort_by(|a, b| a.stack.cmp(&b.stack));
    // Timing.
    let pal = last.map_or(region.is_pal(), |l| l.pal);
    // With no frame run: the region's nominal V28 frame (timing.rs).
    let nominal = FrameGeometry::new(pal, false, true);
    let mclk_per_frame = last.map_or(nominal.mclk_per_frame(), |l| l.end_mclk - l.start_mclk);
    let timing = Timing {
        pal,
        mclk_per_frame,
        cycles_per_frame: cyc(mclk_per_frame),
        lines: last.map_or(nominal.lines, |l| l.lines),
        active_lines: last.map_or(nominal.active, |l| l.active_lines),
    };
    let rom = &s.rom;
    let title = rom.title().to_string();
    let symbols = match &s.symbols {
        Some(sy) => SymbolsInfo {
            source: match sy.source {
                SymbolSource::Elf => "elf",
                SymbolSource::Nm => "nm",
            }
            .to_string(),
            path: sy.path.display().to_string(),
            also_read: sy
                .also_read
                .iter()
                .map(|p| p.display().to_string())
                .collect(),
            function_symbols: sy.function_symbol_count() as u64,
            dwarf: sy.debug.is_some(),
            keep_labels: s.options.keep_labels,
        },
        None => SymbolsInfo {
            source: "none".into(),
            keep_labels: s.options.keep_labels,
            ..SymbolsInfo::default()
        },
    };
    let idle: Vec<String> = if s.options.idle.is_empty() {
        crate::DEFAULT_IDLE.iter().map(|s| s.to_string()).collect()
    } else {
        s.options.idle.clone()
    };
    let (code, code_warnings) = crate::code::build(s, p, &fidx);
    let mut warnings = s.warnings.clone();
    let mut idle_found = s.idle_found.clone();
    if s.detects_wait_loop() {
        let loops: Vec<u32> = p.wait_loops.clone();
        if loops.is_empty() {
            let mut w = crate::no_idle_warning(&idle);
            w.push_str(
                " (no symbols, and no wait-for-VBlank polling loop of the VDP status port was seen)",
            );
            warnings.push(w);
        } else {
            let names: Vec<String> = loops
                .iter()
                .map(|h| format!("vblank_wait_0x{h:06x}"))
                .collect();
            warnings.push(format!(
                "no symbols: the game's wait-for-VBlank polling loop ({}: reads the VDP status \
                 port until the VBlank flag is set) is the idle function, from the first time it \
                 ran",
                names.join(", ")
            ));
            idle_found = names;
        }
    }
    warnings.extend(code_warnings);
    if let Some(st) = &stopped {
        warnings.push(st.clone());
    }
    Report {
        schema: SCHEMA.to_string(),
        rom: RomInfo {
            path: s.rom_label.clone(),
            bytes: rom.data.len() as u64,
            title,
            region: format!("{} {:?}", if pal { "PAL" } else { "NTSC" }, region),
            checksum_ok: rom.checksum_ok(),
        },
        symbols,
        options: RunOptions {
            frames: s.options.frames,
            from: s.options.from,
            input: s.options.input.clone(),
            input2: s.options.input2.clone(),
            idle,
            idle_found,
            top: s.options.top,
            entry: match s.options.entry {
                crate::EntryCharge::Handler => "handler",
                crate::EntryCharge::Interrupted => "interrupted",
            }
            .to_string(),
            reference_rules: s
                .options
                .reference_rules
                .names()
                .into_iter()
                .map(String::from)
                .collect(),
            stop_on_halt: s.options.stop_on_halt,
            include_loading,
        },
        timing,
        summary: sm,
        functions,
        frames,
        watches: s.watches.clone(),
        worst_frames,
        stacks,
        warnings,
        stopped,
        kdebug,
        code,
    }
}
