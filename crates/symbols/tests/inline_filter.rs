//! The inline-context table built with the inlined-subroutine filter
//! (addresses no `DW_TAG_inlined_subroutine` covers are not asked) equals
//! the one built by asking addr2line at every address, whole, on the ELFs
//! of the shared example ROMs, the known-costs test ROM and the test ELF
//! here.

use std::path::{Path, PathBuf};

use retroprof_symbols::{IndexOptions, RangeSpec, Symbols};

fn opts() -> IndexOptions {
    IndexOptions {
        ranges: vec![
            RangeSpec {
                name: "rom".into(),
                start: 0,
                end: 0x40_0000,
            },
            RangeSpec {
                name: "ram".into(),
                start: 0xFF_0000,
                end: 0x100_0000,
            },
        ],
        shift: 1,
        keep_labels: false,
        bucket_size: 0x100,
        addr_mask: 0xFF_FFFF,
    }
}

/// Compares the two tables of the ELF at `path`; a missing file fails
/// the test (the shared ROMs are read from `../shared`, never skipped).
fn check(path: &Path) {
    assert!(
        path.exists(),
        "{}: missing (this test reads the shared ROMs and the test ROMs from there)",
        path.display()
    );
    let fast = Symbols::load(path).unwrap();
    let mut slow = Symbols::load(path).unwrap();
    slow.debug.as_mut().expect("DWARF").forget_inline_ranges();
    let a = fast.build_index(&opts()).unwrap();
    let b = slow.build_index(&opts()).unwrap();
    assert_eq!(
        a.inline_chain_count(),
        b.inline_chain_count(),
        "{}",
        path.display()
    );
    for id in 0..a.inline_chain_count() as u32 {
        assert_eq!(
            a.inline_chain(id),
            b.inline_chain(id),
            "{} chain {id}",
            path.display()
        );
    }
    assert_eq!(a.ranges().len(), b.ranges().len());
    for (x, y) in a.ranges().iter().zip(b.ranges()) {
        assert_eq!(x.ids, y.ids);
        assert_eq!(x.inline, y.inline, "{} range {}", path.display(), x.name);
    }
    eprintln!(
        "{}: {} inline chains, the same",
        path.display(),
        a.inline_chain_count()
    );
}

#[test]
fn filtered_inline_table_is_the_full_one() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    check(&root.join("tests/data/inline.elf"));
    check(&root.join("../../testroms/out/knowncosts/rom.elf"));
    let shared = std::env::var_os("RETROPROF_SHARED_ROMS")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("../../../shared/roms"));
    for rom in ["castlecat2", "vnmd", "platformer"] {
        check(&shared.join(rom).join("rom.out"));
    }
}
