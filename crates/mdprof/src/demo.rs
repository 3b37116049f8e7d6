//! The built-in demo: the known-costs test ROM (testroms/out/knowncosts,
//! built from source in this repository) embedded in the library with its
//! ELF (symbols and DWARF), so `retroprof profile` with no ROM shows named
//! functions on a fresh machine.

use std::path::Path;

use retroprof_megadrive::Rom;
use retroprof_symbols::Symbols;

/// The ROM image.
pub const ROM: &[u8] = include_bytes!("../../../testroms/out/knowncosts/rom.bin");
/// Its ELF (symbols + DWARF).
pub const ELF: &[u8] = include_bytes!("../../../testroms/out/knowncosts/rom.elf");
/// Its nm listing.
pub const SYMBOL_TXT: &[u8] = include_bytes!("../../../testroms/out/knowncosts/symbol.txt");

/// How the demo ROM is named in reports.
pub const LABEL: &str = "<built-in demo: known-costs test ROM>";

/// The demo ROM and its symbols (from the embedded ELF).
pub fn load() -> (Rom, Symbols) {
    let rom = Rom::from_bytes(Path::new(LABEL), ROM.to_vec())
        .expect("the embedded known-costs ROM is a valid ROM");
    // A heap copy: the ELF reader wants aligned data, which an embedded
    // byte array does not guarantee.
    let elf = ELF.to_vec();
    let syms = Symbols::parse_elf(Path::new("<built-in demo>/rom.elf"), &elf)
        .expect("the embedded known-costs ELF parses");
    (rom, syms)
}
