//! Find the symbols of a Mega Drive ROM, build the PC -> function index and
//! answer address queries (a manual check and a speed measurement):
//!
//! ```text
//! cargo run --release -p retroprof-mdprof --example symtool -- ROM [ADDR...]
//! ```

use std::path::PathBuf;
use std::time::Instant;

use retroprof_mdprof::romsyms;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let rom_path = PathBuf::from(args.next().ok_or("usage: symtool ROM [ADDR...]")?);
    let rom = std::fs::read(&rom_path)?;
    let t = Instant::now();
    let syms = romsyms::find_for_rom(&rom_path)?.ok_or("no symbols found next to the ROM")?;
    let t_load = t.elapsed();
    println!(
        "symbols: {} ({:?}), {} entries, {} function symbols, DWARF: {}, also read: {:?}",
        syms.path.display(),
        syms.source,
        syms.table.len(),
        syms.function_symbol_count(),
        syms.debug.is_some(),
        syms.also_read
    );
    for w in &syms.warnings {
        println!("warning: {w}");
    }
    let entry = if rom.len() >= 8 {
        u32::from_be_bytes([rom[4], rom[5], rom[6], rom[7]]) as u64
    } else {
        0
    };
    for w in romsyms::validate_against_rom(&syms, rom.len() as u64, entry) {
        println!("warning: {w}");
    }
    for w in romsyms::validate_against_rom_bytes(&syms, &rom) {
        println!("warning: {w}");
    }
    let t = Instant::now();
    let ix = syms.build_index(&romsyms::index_options(rom.len() as u64))?;
    let t_index = t.elapsed();
    println!(
        "index: {} functions ({} ranges), {} inline contexts; load {t_load:?}, index {t_index:?}",
        ix.functions().len(),
        ix.ranges().len(),
        ix.inline_chain_count()
    );
    // Lookup speed: every ROM word, 20 passes.
    let t = Instant::now();
    let mut acc = 0u64;
    for _ in 0..20 {
        for a in (0..rom.len() as u64).step_by(2) {
            acc = acc.wrapping_add(ix.lookup(a) as u64);
        }
    }
    let n = 20 * rom.len() as u64 / 2;
    println!(
        "lookup: {n} look-ups in {:?} ({:.2} ns each; checksum {acc})",
        t.elapsed(),
        t.elapsed().as_nanos() as f64 / n as f64
    );
    // The same over the raw ROM slice (what a hot loop can do itself).
    let ids = &ix.ranges()[0].ids;
    let t = Instant::now();
    let mut acc2 = 0u64;
    for _ in 0..20 {
        for a in (0..rom.len()).step_by(2) {
            acc2 = acc2.wrapping_add(ids[a >> 1] as u64);
        }
    }
    println!(
        "raw slice: {n} look-ups in {:?} ({:.2} ns each; checksum {acc2})",
        t.elapsed(),
        t.elapsed().as_nanos() as f64 / n as f64
    );
    for a in args {
        let addr = u64::from_str_radix(a.trim_start_matches("0x"), 16)?;
        let f = ix.function_at(addr);
        print!(
            "0x{addr:06x}: {} [0x{:06x}..0x{:06x}) {:?}",
            f.name, f.start, f.end, f.origin
        );
        if let Some(loc) = syms.source_location(addr) {
            print!(" at {}:{}", loc.file, loc.line.unwrap_or(0));
        }
        for i in ix.inline_chain(ix.inline_at(addr)) {
            print!(
                " -> {} (called at {}:{})",
                i.name,
                i.call_file.as_deref().unwrap_or("?"),
                i.call_line.unwrap_or(0)
            );
        }
        println!();
    }
    Ok(())
}
