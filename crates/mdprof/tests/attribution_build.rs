//! `Attribution::build` (whole-range slices of the function index) equals
//! `Attribution::build_reference` (`lookup` / `inline_at` per address),
//! whole: every ROM and RAM address's id, every id's `AttrInfo` and idle
//! flag, the idle functions found; on the shared SGDK ROMs' ELFs and nm
//! listings, the known-costs test ROM, and symbols' inline.elf (inline
//! contexts), with labels merged and kept.

use std::path::{Path, PathBuf};

use retroprof_mdprof::engine::Attribution;
use retroprof_mdprof::romsyms::index_options;
use retroprof_symbols::Symbols;

const IDLE: &[&str] = &["SYS_doVBlankProcess", "VDP_waitVSync", "main", "burn"];

fn compare(what: &str, syms: &Symbols, rom: &[u8]) {
    let idle: Vec<String> = IDLE.iter().map(|s| s.to_string()).collect();
    for keep_labels in [false, true] {
        let mut o = index_options(rom.len() as u64);
        o.keep_labels = keep_labels;
        let index = syms.build_index(&o).unwrap();
        let (a, fa) = Attribution::build(&index, rom, &idle);
        let (b, fb) = Attribution::build_reference(&index, rom, &idle);
        assert_eq!(fa, fb, "{what}");
        assert_eq!(a.rom_len(), b.rom_len(), "{what}");
        assert_eq!(a.attrs, b.attrs, "{what} keep_labels {keep_labels}");
        for id in 0..a.len() as u32 {
            assert_eq!(a.is_idle(id), b.is_idle(id), "{what} id {id}");
        }
        for pc in (0..0x40_0000u32).chain(0xFF_0000..0x100_0000) {
            assert_eq!(
                a.id(pc),
                b.id(pc),
                "{what} keep_labels {keep_labels} pc {pc:#x}"
            );
        }
        eprintln!(
            "{what} (labels kept: {keep_labels}): {} ids, the same",
            a.len()
        );
    }
}

#[test]
fn fast_attribution_table_is_the_reference_one() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let shared = root.join("../../../shared/roms");
    let mut n = 0;
    for r in ["castlecat2", "vnmd", "platformer"] {
        let rom_path = shared.join(r).join("rom.bin");
        // Missing shared material fails the test (read from ../shared,
        // never skipped).
        let rom =
            std::fs::read(&rom_path).unwrap_or_else(|e| panic!("{}: {e}", rom_path.display()));
        for f in ["rom.out", "symbol.txt"] {
            let p = shared.join(r).join(f);
            let mut s = Symbols::load(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            s.mask_addresses(0xFF_FFFF);
            compare(&format!("{r}/{f}"), &s, &rom);
            n += 1;
        }
    }
    let kc = root.join("../../testroms/out/knowncosts");
    let rom = std::fs::read(kc.join("rom.bin"))
        .unwrap_or_else(|e| panic!("{}: {e}", kc.join("rom.bin").display()));
    compare(
        "knowncosts",
        &Symbols::load(&kc.join("rom.elf")).unwrap(),
        &rom,
    );
    n += 1;
    // inline.elf's code with a ROM of its size (the bytes only matter for
    // RTE recognition, not the table).
    let elf: &Path = &root.join("../symbols/tests/data/inline.elf");
    let s = Symbols::load(elf).unwrap();
    let end = s
        .table
        .symbols()
        .iter()
        .map(|x| x.addr + x.size.unwrap_or(0))
        .max()
        .unwrap();
    for len in [end as usize + 1, end as usize + 2, 0x1_0000] {
        compare(&format!("inline.elf, {len}-byte ROM"), &s, &vec![0u8; len]);
    }
    eprintln!("{n} ROMs compared");
}
