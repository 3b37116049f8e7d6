//! The heap bridge on the heap test ROM, checked against the ROM's own
//! accounting in RAM (testroms/heap/main.c, expected.json).

use std::path::{Path, PathBuf};

use retroprof_mdprof::heapbridge::{HeapBridge, HeapBridgeOptions};
use retroprof_mdprof::romsyms::index_options;
use retroprof_megadrive::{Config, Rom, System};
use retroprof_symbols::Symbols;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

struct Loaded {
    rom: Rom,
    symbols: Symbols,
}

fn load(rom: &Path, syms: &Path) -> Loaded {
    let rom = Rom::load(rom).unwrap_or_else(|e| panic!("{}: {e}", rom.display()));
    let symbols = Symbols::load(syms).unwrap_or_else(|e| panic!("{}: {e}", syms.display()));
    Loaded { rom, symbols }
}

fn ram_u32(sys: &System, symbols: &Symbols, name: &str, index: u32) -> u32 {
    let s = symbols
        .table
        .symbols()
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no symbol {name}"));
    let a = ((s.addr as u32 + 4 * index) & 0xFFFF) as usize;
    let w = sys.wram();
    u32::from_be_bytes([w[a], w[a + 1], w[a + 2], w[a + 3]])
}

fn ram_u16(sys: &System, symbols: &Symbols, name: &str) -> u16 {
    let s = symbols
        .table
        .symbols()
        .iter()
        .find(|s| s.name == name)
        .unwrap();
    let a = (s.addr & 0xFFFF) as usize;
    u16::from_be_bytes([sys.wram()[a], sys.wram()[a + 1]])
}

fn site<'a>(a: &'a retroprof_heap::Analysis, name: &str) -> &'a retroprof_heap::Site {
    a.sites
        .iter()
        .find(|s| s.frames.first().map(|f| f.name.as_str()) == Some(name))
        .unwrap_or_else(|| {
            panic!(
                "no call site {name}; sites: {:?}",
                a.sites
                    .iter()
                    .map(|s| &s.frames[0].name)
                    .collect::<Vec<_>>()
            )
        })
}

#[test]
fn heap_rom_matches_its_own_accounting() {
    let dir = repo().join("testroms/out/heap");
    let l = load(&dir.join("rom.bin"), &dir.join("symbol.txt"));
    let index = l
        .symbols
        .build_index(&index_options(l.rom.data.len() as u64))
        .unwrap();
    let mut bridge = HeapBridge::new(
        &l.rom.data,
        &index,
        HeapBridgeOptions {
            name: "heap/rom.bin".into(),
            keep_log: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(bridge.sees_frees());
    let mut sys = System::new(&l.rom, Config::default());
    sys.set_breakpoints(Some(bridge.breakpoints().clone()));
    for _ in 0..700 {
        sys.run_frame(&mut bridge).unwrap();
    }
    assert_eq!(
        ram_u16(&sys, &l.symbols, "heap_done"),
        1,
        "the ROM did not finish its workload"
    );
    let out = bridge.finish();
    let a = &out.analysis;
    let r = |n: &str| ram_u32(&sys, &l.symbols, n, 0) as u64;

    // The ROM's own totals (and the expected.json figures).
    assert_eq!(out.stats.allocs, r("heap_allocs"));
    assert_eq!(out.stats.allocs, 672);
    assert_eq!(out.stats.frees, r("heap_frees"));
    assert_eq!(out.stats.frees, 651);
    assert_eq!(out.stats.failed, r("heap_failed"));
    assert_eq!(out.stats.abandoned, 0);
    assert_eq!(a.allocs, 672);
    assert_eq!(a.frees, 651);
    assert_eq!(a.bytes_allocated, r("heap_alloc_bytes"));
    assert_eq!(a.bytes_freed, r("heap_freed_bytes"));
    assert_eq!(a.live_blocks, r("heap_live_blocks"));
    assert_eq!(a.live_bytes, r("heap_live_bytes"));
    assert_eq!(a.live_bytes, 1200);
    assert_eq!(a.peak.bytes, r("heap_peak_live_bytes"));
    assert_eq!(a.anomalies.total(), 0, "{:?}", a.anomalies.listed);
    // Housekeeping: SGDK's 2-byte headers, as the ROM's heap walk counts.
    assert_eq!(
        a.live_bytes + 2 * a.live_blocks,
        ram_u16(&sys, &l.symbols, "heap_mem_allocated") as u64
    );

    // Per call site (function of the return address).
    let site_allocs = |i| ram_u32(&sys, &l.symbols, "heap_site_allocs", i) as u64;
    let site_live = |i| ram_u32(&sys, &l.symbols, "heap_site_live_bytes", i) as u64;
    let t = site(a, "init_tables");
    assert_eq!(t.stats.allocs, site_allocs(0) + site_allocs(1));
    assert_eq!(t.stats.leaked_bytes, site_live(0) + site_live(1));
    assert_eq!(site(a, "spawn_bullet").stats.allocs, site_allocs(2));
    assert_eq!(site(a, "spawn_bullet").stats.leaked_bytes, site_live(2));
    assert_eq!(site(a, "load_chunk").stats.allocs, site_allocs(3));
    assert_eq!(site(a, "spawn_particle").stats.allocs, site_allocs(4));
    assert_eq!(site(a, "spawn_particle").stats.leaked_bytes, site_live(4));
    assert_eq!(site(a, "spawn_particle").stats.leaked_blocks, 20);
    assert_eq!(a.sites.iter().filter(|s| s.stats.allocs > 0).count(), 4);

    // Frames: events carry them; allocations happen in several frames.
    assert!(a.has_frames);
    assert!(out.notes.is_empty(), "{:?}", out.notes);

    // The report is retroprof heap's.
    let text = out.report(&Default::default());
    assert!(text.contains("Leaks"), "{text}");
    assert!(text.contains("spawn_particle"), "{text}");

    // The log reads back through retroprof heap to the same figures.
    let log = out.log.as_ref().unwrap();
    let tmp = std::env::temp_dir().join(format!("heapbridge-{}.log", std::process::id()));
    out.write_log(&tmp).unwrap();
    assert_eq!(&std::fs::read(&tmp).unwrap(), log);
    let mut reader = retroprof_heap::LogReader::open(&tmp).unwrap();
    let _ = std::fs::remove_file(&tmp);
    let mut replay = retroprof_heap::Replay::new(
        HeapBridgeOptions::default().replay,
        retroprof_heap::Symbolizer::default(),
    );
    retroprof_heap::replay_log(&mut reader, &mut replay, Default::default()).unwrap();
    let b = replay.finish();
    assert_eq!(b.allocs, a.allocs);
    assert_eq!(b.frees, a.frees);
    assert_eq!(b.live_bytes, a.live_bytes);
    assert_eq!(b.peak.bytes, a.peak.bytes);
    assert_eq!(b.anomalies.total(), 0);
}
