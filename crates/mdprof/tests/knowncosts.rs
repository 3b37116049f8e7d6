//! Accuracy against the known-costs test ROM (testroms/README.md,
//! testroms/knowncosts/expected.json): dropped frames per phase, burn()
//! per call, the division helper and VDP_setTileMapXY, DMA per frame.

use std::path::PathBuf;

use retroprof_mdprof::{report::Report, ProfileOptions, Session};
use retroprof_megadrive::Rom;
use retroprof_symbols::Symbols;

fn testroms() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testroms/out/knowncosts"
    ))
}

fn addr_of(syms: &Symbols, name: &str) -> u32 {
    syms.table
        .symbols()
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("symbol {name} missing from the known-costs ROM"))
        .addr as u32
        & 0xFF_FFFF
}

struct Run {
    report: Report,
    /// Watch column indices.
    vblank: usize,
    loops: usize,
    queued: usize,
    /// phase_start_vblank[0..7], phase_dropped[0..6] (final values).
    start_vblank: Vec<u32>,
    dropped: Vec<u32>,
}

fn run() -> Run {
    let dir = testroms();
    let rom = Rom::load(&dir.join("rom.bin"))
        .expect("testroms/out/knowncosts/rom.bin (build with testroms/build.sh)");
    let syms = Symbols::load_nm(&dir.join("symbol.txt")).expect("symbol.txt");
    let mut watch = vec![
        "vblank_count".to_string(),
        "loop_count".to_string(),
        "dma_queued_bytes".to_string(),
    ];
    let psv = addr_of(&syms, "phase_start_vblank");
    let pd = addr_of(&syms, "phase_dropped");
    for p in 0..7 {
        watch.push(format!("0x{:06x}:l", psv + 4 * p));
    }
    for p in 0..6 {
        watch.push(format!("0x{:06x}:l", pd + 4 * p));
    }
    let opts = ProfileOptions {
        frames: 1420,
        watch,
        top: 10,
        ..ProfileOptions::default()
    };
    let s = Session::new(rom, "knowncosts".into(), Some(syms), opts).expect("session");
    let report = s.run(&mut |_, _| {});
    assert!(
        report.stopped.is_none(),
        "emulation stopped: {:?}",
        report.stopped
    );
    let last = report.frames.last().unwrap();
    let start_vblank = last.watch[3..10].to_vec();
    let dropped = last.watch[10..16].to_vec();
    Run {
        report,
        vblank: 0,
        loops: 1,
        queued: 2,
        start_vblank,
        dropped,
    }
}

#[test]
fn known_costs_rom() {
    let r = run();
    let rep = &r.report;
    println!(
        "phase_start_vblank {:?}, phase_dropped {:?}",
        r.start_vblank, r.dropped
    );
    assert_eq!(
        r.dropped,
        vec![0, 60, 0, 12, 0, 0],
        "the ROM's own counters (expected.json)"
    );
    assert!(r.start_vblank[6] > 0, "END phase reached");

    // Dropped frames per phase: frame f holds VBlank number V(f) (the VINT
    // at its start); phase p covers VBlanks start_vblank[p]..start_vblank[p+1].
    for p in 0..6 {
        let (a, b) = (r.start_vblank[p], r.start_vblank[p + 1]);
        let frames: Vec<_> = rep
            .frames
            .iter()
            .filter(|f| f.watch[r.vblank] >= a && f.watch[r.vblank] < b)
            .collect();
        assert_eq!(
            frames.len() as u32,
            b - a,
            "phase {p}: one frame per VBlank"
        );
        let ours = frames.iter().filter(|f| f.dropped).count() as u32;
        let loops: u32 = frames.iter().map(|f| f.loop_starts).sum();
        println!(
            "phase {p}: {} VBlanks, {loops} loops, dropped {ours} (ROM {})",
            b - a,
            r.dropped[p]
        );
        assert_eq!(ours, r.dropped[p], "phase {p} dropped frames");
    }
    // The loop counter agrees with our loop starts (after boot).
    let ours_loops: u32 = rep.frames.iter().map(|f| f.loop_starts).sum();
    let rom_loops = rep.frames.last().unwrap().watch[r.loops];
    assert!(
        ours_loops == rom_loops || ours_loops == rom_loops + 1,
        "loop starts {ours_loops} vs ROM loop_count {rom_loops} (the last loop may not have finished)"
    );

    // burn(500): 5,115.8 cycles per call in GPGX, within 0.1 %.
    let burn = rep.function("burn").expect("burn in the profile");
    let per_call = burn.self_cycles / burn.calls as f64;
    println!("burn: {} calls, {per_call:.1} cycles per call", burn.calls);
    assert!(burn.calls >= 1300);
    assert!(
        (per_call - 5115.8).abs() / 5115.8 < 0.001,
        "burn per call {per_call}"
    );

    // Division: __divsi3 -> __udivsi3 -> udiv32, 588 cycles by the tables
    // before refresh (testroms/README.md), 596 measured with refresh.
    let div = rep.function("__divsi3").expect("__divsi3");
    let udiv = rep.function("__udivsi3").expect("__udivsi3");
    println!(
        "__divsi3: {} calls, self {:.1}/call, inclusive {:.1}/call; __udivsi3 self {:.1}/call",
        div.calls, div.cycles_per_call, div.inclusive_per_call, udiv.cycles_per_call
    );
    assert_eq!(div.calls, 27_360, "div_calls (expected.json)");
    assert!(
        div.inclusive_per_call > 588.0 && div.inclusive_per_call < 588.0 * 1.03,
        "division inclusive per call {}",
        div.inclusive_per_call
    );
    let tile = rep.function("VDP_setTileMapXY").expect("VDP_setTileMapXY");
    println!(
        "VDP_setTileMapXY: {} calls, {:.1} cycles per call",
        tile.calls, tile.cycles_per_call
    );
    assert_eq!(tile.calls, 6_720, "settile_calls (expected.json)");
    assert!(tile.cycles_per_call > 190.0 && tile.cycles_per_call < 190.0 * 1.03);

    // DMA: what loop N queued (dma_queued_bytes at the end of frame f) is
    // sent at the next VBlank (frame f+1), split VBlank / active display.
    let (d0, d1) = (r.start_vblank[5], r.start_vblank[6]);
    let mut checked = 0;
    let mut max_vblank = 0;
    for w in rep.frames.windows(2) {
        let (f, g) = (&w[0], &w[1]);
        let v = g.watch[r.vblank];
        if v <= d0 || v >= d1 || f.dropped || g.dropped {
            continue;
        }
        let queued = f.watch[r.queued] as u64;
        assert_eq!(
            g.dma_vblank_bytes + g.dma_active_bytes,
            queued,
            "frame {}: DMA sent vs queued by the previous loop",
            g.frame
        );
        max_vblank = max_vblank.max(g.dma_vblank_bytes);
        if queued >= 7872 {
            assert!(
                g.dma_active_bytes > 0 && g.dma_last_line.is_some(),
                "frame {}: spill expected",
                g.frame
            );
            assert!(
                (7_100..=7_700).contains(&g.dma_vblank_bytes),
                "frame {}: {} bytes in VBlank",
                g.frame,
                g.dma_vblank_bytes
            );
        } else if queued <= 7_168 {
            assert_eq!(g.dma_active_bytes, 0, "frame {}", g.frame);
        } else {
            // The 7,360-byte step (testroms/README.md, phase D s = 6) ends
            // within a line of VBlank's end: the flush starts about 2,600
            // mclk into line 224 (after the wait's exit, the VINT handler
            // and the register set-up), 37.2 lines of 204 bytes remain
            // (md-timing.md), so the last sprite-table words may land in
            // line 0 at the active-display rate.
            assert!(
                g.dma_active_bytes <= 18,
                "frame {}: {}",
                g.frame,
                g.dma_active_bytes
            );
        }
        checked += 1;
    }
    println!("DMA checked on {checked} frames of phase D; most in one VBlank: {max_vblank} bytes");
    assert!(checked > 400);
    assert!((7_100..=7_700).contains(&max_vblank));
}
