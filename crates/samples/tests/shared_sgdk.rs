//! The real SGDK build in ../shared/roms/platformer: its nm listing
//! (`symbol.txt`) and its ELF (`rom.out`) give the same per-function counts
//! for samples placed inside known functions. Fails loudly without ../shared.

use std::path::PathBuf;

use retroprof_samples::{symbolise, Histogram, SymboliseOptions};
use retroprof_symbols::maps::{self, MapFormat};

fn shared(rel: &str) -> PathBuf {
    let p = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared")).join(rel);
    assert!(
        p.exists(),
        "{} is missing: the tests read the shared material from ../shared",
        p.display()
    );
    p
}

#[test]
fn sgdk_symbol_txt_and_elf_agree() {
    let nm = maps::load(&shared("roms/platformer/symbol.txt"), None).unwrap();
    assert_eq!(nm.format, MapFormat::Nm);
    let elf = maps::load(&shared("roms/platformer/rom.out"), None).unwrap();
    assert_eq!(elf.format, MapFormat::Elf);
    assert!(nm.code_symbol_count() > 500, "{}", nm.code_symbol_count());

    // Addresses from `m68k-linux-gnu-nm -n -S rom.out`:
    //   0000061e 00001a76 T main
    //   00003a44 0000196e T SYS_doVBlankProcessEx.constprop.57
    //   0000c758 00000194 T VDP_waitVBlank
    let mut h = Histogram::new(1);
    h.add(0x061e + 0x10, 400);
    h.add(0x3a44 + 0x100, 250);
    h.add(0xc758 + 0x40, 900);
    h.add(0xc758 + 0x42, 100);
    h.add(0x1_0000_0000, 7); // far outside anything
    for map in [&nm, &elf] {
        let p = symbolise(&h, map, &SymboliseOptions::default()).unwrap();
        let got = |n: &str| p.function(n).map(|f| f.samples);
        assert_eq!(got("main"), Some(400), "{:?}", map.format);
        assert_eq!(
            got("SYS_doVBlankProcessEx.constprop.57"),
            Some(250),
            "{:?}",
            map.format
        );
        assert_eq!(got("VDP_waitVBlank"), Some(1000), "{:?}", map.format);
        assert_eq!(p.attributed, 1650, "{:?}", map.format);
        assert_eq!(p.total, 1657);
        assert_eq!(p.hot[0].location, "VDP_waitVBlank+0x40");
    }
}
