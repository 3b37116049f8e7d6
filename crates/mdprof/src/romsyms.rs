//! The Mega Drive side of symbols (`retroprof-symbols` knows no console):
//! which files belong to a ROM (SGDK's `out/` layout: [`find_for_rom`],
//! [`candidates_for_rom`]), the index ranges of the console's memory map
//! ([`index_options`]), and the checks that symbols belong to a ROM (reset
//! vector, sizes, code bytes but for the header checksum, and the targets
//! of the 68000's `jsr abs.l` calls).

use std::path::{Path, PathBuf};

use retroprof_symbols::{
    is_function_symbol, Error, FunctionIndex, IndexOptions, RangeSpec, Symbol, SymbolKind,
    SymbolSource, Symbols,
};

/// Mega Drive: ROM `0..rom_len` and work RAM `0xFF0000..0x1000000`,
/// one entry per 2 bytes, 24-bit addresses, 256-byte buckets.
pub fn index_options(rom_len: u64) -> IndexOptions {
    IndexOptions {
        ranges: vec![
            RangeSpec {
                name: "rom".into(),
                start: 0,
                end: rom_len.min(0x40_0000),
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

/// The files [`find_for_rom`] would look at, in order of
/// preference: for each folder (the ROM's folder, then `out/`,
/// `out/release/`, `out/debug/` and other `out/*/` folders under it,
/// sorted), ELF files first (`<stem>.elf`, `<stem>.out`, `rom.out`,
/// `rom.elf`, then any other `*.elf`, sorted), then nm listings
/// (`symbol.txt`, `<stem>.sym`). The first folder holding any
/// candidate is used.
pub fn candidates_for_rom(rom: &Path) -> Vec<PathBuf> {
    candidates(rom).into_iter().flatten().collect()
}

/// Folders to search, in order.
fn folders(rom: &Path) -> Vec<PathBuf> {
    let dir = match rom.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut out = vec![dir.clone()];
    let out_dir = dir.join("out");
    if out_dir.is_dir() {
        out.push(out_dir.clone());
        let mut subs: Vec<PathBuf> = std::fs::read_dir(&out_dir)
            .map(|rd| {
                rd.filter_map(|e| e.ok())
                    .map(|e| e.path())
                    .filter(|p| p.is_dir())
                    .collect()
            })
            .unwrap_or_default();
        // release first (what a player runs), then debug, then the rest.
        subs.sort_by_key(|p| {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let rank = match name.as_str() {
                "release" => 0,
                "debug" => 1,
                _ => 2,
            };
            (rank, name)
        });
        out.extend(subs);
    }
    out
}

/// Per folder: ELF candidates then nm candidates that exist.
fn candidates(rom: &Path) -> Vec<Vec<PathBuf>> {
    let stem = rom
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut all = Vec::new();
    for dir in folders(rom) {
        let mut c: Vec<PathBuf> = Vec::new();
        let mut push = |p: PathBuf| {
            if p.is_file() && !c.contains(&p) && p != rom {
                c.push(p);
            }
        };
        if !stem.is_empty() {
            push(dir.join(format!("{stem}.elf")));
            push(dir.join(format!("{stem}.out")));
        }
        push(dir.join("rom.out"));
        push(dir.join("rom.elf"));
        let mut elves: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map(|rd| {
                rd.filter_map(|e| e.ok())
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("elf")))
                    .collect()
            })
            .unwrap_or_default();
        elves.sort();
        for e in elves {
            push(e);
        }
        push(dir.join("symbol.txt"));
        if !stem.is_empty() {
            push(dir.join(format!("{stem}.sym")));
        }
        all.push(c);
    }
    all
}

fn is_elf(p: &Path) -> bool {
    use std::io::Read;
    let mut magic = [0u8; 4];
    std::fs::File::open(p)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok()
        && &magic == b"\x7fELF"
}

/// Find and load the symbols that belong to the ROM at `rom`; `None`
/// when there are none. Which files are looked at is described in
/// [`candidates_for_rom`]. In the chosen folder an ELF file is
/// preferred (sizes, DWARF); an nm listing next to it is merged in only
/// for the `file:line` it gives (`nm -l`) and to warn when it disagrees
/// with the ELF. If the ELF cannot be read, the nm listing is used with a
/// warning. Symbol addresses are NOT masked here: call
/// [`Symbols::mask_addresses`] or use `IndexOptions::addr_mask`.
pub fn find_for_rom(rom: &Path) -> Result<Option<Symbols>, Error> {
    for group in candidates(rom) {
        if group.is_empty() {
            continue;
        }
        let (elves, listings): (Vec<PathBuf>, Vec<PathBuf>) =
            group.into_iter().partition(|p| is_elf(p));
        let mut warnings = Vec::new();
        let mut chosen: Option<Symbols> = None;
        let mut first_err: Option<Error> = None;
        for e in &elves {
            match Symbols::load_elf(e) {
                Ok(s) if s.function_symbol_count() > 0 => {
                    chosen = Some(s);
                    break;
                }
                Ok(_) => warnings.push(format!(
                    "{}: ELF has no code symbols (stripped?); looking further",
                    e.display()
                )),
                Err(err) => {
                    warnings.push(format!("{err}; looking further"));
                    first_err.get_or_insert(err);
                }
            }
        }
        let listing = listings.first();
        let mut syms = match (chosen, listing) {
            (Some(mut elf), Some(nm_path)) => {
                match Symbols::load_nm(nm_path) {
                    Ok(nm) => elf.merge_listing(&nm),
                    Err(err) => elf
                        .warnings
                        .push(format!("{err} (ignored: using {})", elf.path.display())),
                }
                elf.also_read.push(nm_path.clone());
                elf
            }
            (Some(elf), None) => elf,
            (None, Some(nm_path)) => Symbols::load_nm(nm_path)?,
            (None, None) => match first_err {
                Some(e) => return Err(e),
                None => {
                    // ELF files without code symbols only.
                    let e = &elves[0];
                    Symbols::load_elf(e)?
                }
            },
        };
        warnings.append(&mut syms.warnings);
        syms.warnings = warnings;
        return Ok(Some(syms));
    }
    Ok(None)
}

/// Check that `syms` plausibly belong to a ROM of `rom_len` bytes
/// whose reset vector is `entry_point` (addresses masked to 24 bits).
/// Returns warnings; empty when all is well.
pub fn validate_against_rom(syms: &Symbols, rom_len: u64, entry_point: u64) -> Vec<String> {
    let mut w = Vec::new();
    let mask = 0xFF_FFFF;
    let funcs: Vec<&Symbol> = syms
        .table
        .symbols()
        .iter()
        .filter(|s| is_function_symbol(s))
        .collect();
    let in_rom = funcs.iter().filter(|s| (s.addr & mask) < rom_len).count();
    if in_rom == 0 {
        w.push(format!(
            "{}: no code symbol lies inside the ROM (0x000000..0x{rom_len:06x}); \
             these symbols are probably not for this ROM",
            syms.path.display()
        ));
    }
    let past: Vec<&&Symbol> = funcs
        .iter()
        .filter(|s| {
            let a = s.addr & mask;
            a >= rom_len && a < 0xFF_0000
        })
        .collect();
    if let Some(first) = past.first() {
        w.push(format!(
            "{}: {} code symbol(s) lie past the end of the {rom_len}-byte ROM (first: {} at 0x{:06x})",
            syms.path.display(),
            past.len(),
            first.name,
            first.addr & mask
        ));
    }
    let entry = entry_point & mask;
    let idx = IndexOptions {
        ranges: vec![RangeSpec {
            name: "entry".into(),
            start: entry,
            end: entry + 2,
        }],
        shift: 1,
        keep_labels: false,
        bucket_size: 0,
        addr_mask: mask,
    };
    match FunctionIndex::build(&syms.table, None, &idx) {
        Ok(ix) if ix.lookup(entry) == 0 => w.push(format!(
            "{}: the entry point 0x{entry:06x} is outside every function",
            syms.path.display()
        )),
        Ok(_) => {}
        Err(e) => w.push(format!("{}: {e}", syms.path.display())),
    }
    if let Some(e) = syms.entry {
        if syms.source == SymbolSource::Elf && e != 0 && (e & mask) != entry {
            w.push(format!(
                "{}: the ELF entry point 0x{:06x} differs from the ROM's reset vector 0x{entry:06x}",
                syms.path.display(),
                e & mask
            ));
        }
    }
    w
}

/// Check `syms` against the ROM's code: every `jsr abs.l`
/// (0x4EB9 followed by an even address inside the ROM) found at an even
/// offset past the 0x200-byte header should call the start of a
/// function. With the right symbols all such targets are function
/// starts (the four ROMs in tests: 22 to 59 targets, all of them); with
/// another build's symbols many are not. Warns when at least 4 targets
/// are found and fewer than 95 % of them start a code symbol. Works for
/// nm listings and maps, which carry no bytes to compare.
pub fn validate_call_targets(syms: &Symbols, rom: &[u8]) -> Vec<String> {
    let mask = 0xFF_FFFF;
    let mut starts: Vec<u64> = syms
        .table
        .symbols()
        .iter()
        .filter(|s| s.kind == SymbolKind::Text)
        .map(|s| s.addr & mask)
        .collect();
    starts.sort_unstable();
    let mut targets: Vec<u64> = Vec::new();
    let mut i = 0x200usize;
    while i + 6 <= rom.len() {
        if rom[i] == 0x4E && rom[i + 1] == 0xB9 {
            let t = u32::from_be_bytes([rom[i + 2], rom[i + 3], rom[i + 4], rom[i + 5]]) as u64;
            if t >= 0x200 && t.is_multiple_of(2) && (t as usize) < rom.len() {
                targets.push(t);
            }
        }
        i += 2;
    }
    targets.sort_unstable();
    targets.dedup();
    let hits = targets
        .iter()
        .filter(|t| starts.binary_search(t).is_ok())
        .count();
    let n = targets.len();
    if n >= 4 && hits * 100 < n * 95 {
        let first = targets
            .iter()
            .find(|t| starts.binary_search(t).is_err())
            .copied()
            .unwrap_or(0);
        vec![format!(
            "{}: {} of the ROM's {n} `jsr` targets are not the start of any function \
             (first: 0x{first:06x}); these symbols are probably from another build",
            syms.path.display(),
            n - hits
        )]
    } else {
        Vec::new()
    }
}

/// Compare the ELF's code sections with the ROM bytes (the Mega Drive
/// header checksum at 0x18E..0x190 is ignored, since SGDK patches it
/// after linking). Returns warnings; empty when they match or when
/// there are no section bytes (nm listings).
pub fn validate_against_rom_bytes(syms: &Symbols, rom: &[u8]) -> Vec<String> {
    let mut w = Vec::new();
    for s in &syms.code_sections {
        let start = (s.addr & 0xFF_FFFF) as usize;
        if start >= rom.len() {
            continue;
        }
        let n = s.data.len().min(rom.len() - start);
        let mut diff = 0usize;
        let mut first = None;
        // The section's bytes before and after the checksum, compared as
        // slices (counted byte by byte only where they differ).
        let end = start + n;
        for (lo, hi) in [(start, end.min(0x18E)), (start.max(0x190), end)] {
            if lo >= hi {
                continue;
            }
            let (a, b) = (&s.data[lo - start..hi - start], &rom[lo..hi]);
            if a != b {
                diff += a.iter().zip(b).filter(|(x, y)| x != y).count();
                let at = a.iter().zip(b).position(|(x, y)| x != y);
                first.get_or_insert(lo + at.unwrap_or(0));
            }
        }
        if diff > 0 {
            w.push(format!(
                "{}: section {} differs from the ROM in {diff} of {n} bytes (first at 0x{:06x}); \
                 the symbols may be from another build",
                syms.path.display(),
                s.name,
                first.unwrap_or(0)
            ));
        }
        if s.data.len() > n {
            w.push(format!(
                "{}: section {} (0x{:x} bytes at 0x{:06x}) runs past the {}-byte ROM",
                syms.path.display(),
                s.name,
                s.data.len(),
                start,
                rom.len()
            ));
        }
    }
    w
}
