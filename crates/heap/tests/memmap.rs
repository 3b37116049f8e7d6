//! Golden pictures of memory maps, compared pixel by pixel (PNG encoder
//! settings may change without failing). `RETROPROF_BLESS=1` rewrites them.

use std::path::PathBuf;

use retroprof_heap::memmap::{assign_colours, render, Image, MapOptions};
use retroprof_heap::synth::Rng;
use retroprof_heap::{Arch, Grouping, HeapEvent, Replay, ReplayOptions, Symbolizer};
use retroprof_symbols::{Symbol, SymbolKind, SymbolTable};

fn table(names: &[(&str, u64)]) -> SymbolTable {
    SymbolTable::new(
        names
            .iter()
            .map(|&(n, a)| Symbol {
                name: n.into(),
                addr: a,
                size: None,
                kind: SymbolKind::Text,
                global: true,
                module: None,
                file: None,
                line: None,
            })
            .collect(),
    )
}

fn check_golden(name: &str, img: &Image) {
    let path = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden")).join(name);
    if retroprof_testkit::bless() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let mut out = Vec::new();
        img.write_png(&mut out).unwrap();
        std::fs::write(&path, out).unwrap();
        return;
    }
    let data = std::fs::read(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read golden {}: {e} (run with RETROPROF_BLESS=1 to create it)",
            path.display()
        )
    });
    let golden = Image::read_png(&data).unwrap();
    assert_eq!(
        (img.width, img.height),
        (golden.width, golden.height),
        "{name}: size differs from the golden (RETROPROF_BLESS=1 to accept)"
    );
    assert_eq!(
        img.pixel_hash(),
        golden.pixel_hash(),
        "{name}: pixels differ from the golden (RETROPROF_BLESS=1 to accept)"
    );
}

/// A PSP emulator's heap, like the article's picture: emulated RAM,
/// a dynarec buffer, a ROM cache, textures, small hot-trace counters.
fn psp_replay() -> Replay {
    let t = table(&[
        ("Memory_Init", 0x0890_0000),
        ("CodeBuffer_Init", 0x0890_1000),
        ("RomCache_Init", 0x0890_2000),
        ("Texture_Create", 0x0890_3000),
        ("Dynamo_RecordHit", 0x0890_4000),
        ("Audio_Open", 0x0890_5000),
        ("Display_Init", 0x0890_6000),
    ]);
    let s = Symbolizer::new(Arch::Mips, Grouping::Function, Some(Box::new(t)));
    let mut r = Replay::new(ReplayOptions::default(), s);
    r.set_name("mario64.log");
    let mut rng = Rng::new(64);
    r.push(&HeapEvent::alloc(0x18_0000, 0x08A0_0000, 0x0890_0010).array(true));
    r.push(&HeapEvent::alloc(0x0C_0000, 0x08B8_0000, 0x0890_1010).array(true));
    r.push(&HeapEvent::alloc(0x08_0000, 0x08C4_0000, 0x0890_2010).array(true));
    r.push(&HeapEvent::alloc(0x02_0000, 0x08CC_0000, 0x0890_5010));
    r.push(&HeapEvent::alloc(0x04_0000, 0x08CE_0000, 0x0890_6010));
    // Textures, some freed again.
    let mut p = 0x08D2_0000u64;
    for i in 0..90 {
        let size = 2048 + rng.below(4) * 2048;
        r.push(&HeapEvent::alloc(size, p, 0x0890_3010 + (i % 3) * 8));
        if rng.below(3) == 0 {
            r.push(&HeapEvent::free(p, 0x0890_3100));
        }
        p += size + 32;
    }
    // Hot-trace counters: small, scattered between textures.
    let mut q = 0x08DD_0000u64;
    for _ in 0..600 {
        let size = 12 + rng.below(4) * 12;
        r.push(&HeapEvent::alloc(size, q, 0x0890_4010));
        q += size + 4 + rng.below(3) * 16;
    }
    r
}

#[test]
fn psp_memory_map_golden() {
    let a = psp_replay().finish();
    assert_eq!(a.anomalies.total(), 0, "{:?}", a.anomalies.listed);
    let img = render(
        &a,
        &a.end,
        &MapOptions {
            title: "retroprof heap: mario64.log, at the end of the log".into(),
            ..MapOptions::default()
        },
    );
    // Four 1 MB blocks (0x08A00000-0x08DFFFFF) side by side.
    assert_eq!(img.width, 8 + 4 * 259 + 3 * 14 + 8);
    check_golden("psp_memmap.png", &img);
}

/// SGDK: a 64 KB heap at 0xFF0000, one byte per pixel fills one block.
#[test]
fn sgdk_memory_map_golden() {
    let t = table(&[
        ("main", 0x61e),
        ("MAP_create", 0x5a00),
        ("VDP_resetScreen", 0x6e00),
        ("DMA_setBufferSize", 0x8900),
        ("SPR_init", 0x9000),
    ]);
    let s = Symbolizer::new(Arch::M68k, Grouping::Function, Some(Box::new(t)));
    let mut r = Replay::new(ReplayOptions::default(), s);
    r.push(&HeapEvent::frame(1));
    r.push(&HeapEvent::alloc(0x2000, 0xFF_2000, 0x8946));
    r.push(&HeapEvent::alloc(0x1800, 0xFF_4002, 0x5adc));
    r.push(&HeapEvent::alloc(0x0C00, 0xFF_5804, 0x6f50));
    let mut p = 0xFF_6406u64;
    for i in 0..40 {
        r.push(&HeapEvent::alloc(48, p, 0x9010 + (i % 2) * 4));
        p += 50;
    }
    r.push(&HeapEvent::alloc(0x3000, 0xFF_8000, 0x796));
    let a = r.finish();
    // The default scale fits the log's range (0xFF2000-0xFFAFFF): one byte
    // per pixel, one 64 KB block, the same picture as asking for it; not
    // the 1 MB at 16 bytes per pixel whose corner the heap used to fill.
    let fitted = render(
        &a,
        &a.end,
        &MapOptions {
            title: "retroprof heap: platformer, frame 1".into(),
            ..MapOptions::default()
        },
    );
    let old_scale = render(
        &a,
        &a.end,
        &MapOptions {
            bytes_per_pixel: 16,
            title: "retroprof heap: platformer, frame 1".into(),
            ..MapOptions::default()
        },
    );
    // Pixels in a site's colour: 31,616 bytes live, so at 1 byte per pixel
    // ~ 31,600 of the block's 65,536 (less what labels cover), at 16 bytes
    // ~ 2,000.
    let colours = assign_colours(&a);
    let coloured = |img: &Image| {
        img.rgb
            .chunks(3)
            .filter(|p| colours.iter().any(|c| c[..] == p[..]))
            .count()
    };
    assert!(coloured(&fitted) > 25_000, "{}", coloured(&fitted));
    assert!(coloured(&old_scale) < 4_000, "{}", coloured(&old_scale));
    let img = render(
        &a,
        &a.end,
        &MapOptions {
            bytes_per_pixel: 1,
            title: "retroprof heap: platformer, frame 1".into(),
            ..MapOptions::default()
        },
    );
    check_golden("sgdk_memmap.png", &img);
    assert_eq!(fitted, img, "the fitted default is one byte per pixel here");
}

#[test]
fn same_site_same_colour_across_pictures() {
    // The end state and an earlier state colour a site alike.
    let a = psp_replay().finish();
    let img1 = render(&a, &a.end, &MapOptions::default());
    let img2 = render(&a, &a.end[..3], &MapOptions::default());
    // First pixel of the emulated RAM block (0x08A00000) in both.
    let px = |img: &Image, x: usize, y: usize| {
        let i = (y * img.width + x) * 3;
        [img.rgb[i], img.rgb[i + 1], img.rgb[i + 2]]
    };
    let (x, y) = (8 + 100, 8 + 2 * 9 + 4 + 9 + 2 + 100);
    assert_ne!(px(&img1, x, y), [0, 0, 0]);
    assert_eq!(px(&img1, x, y), px(&img2, x, y));
}
