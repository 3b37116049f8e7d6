//! Finding the symbol files that belong to a ROM (see
//! [`crate::Symbols::candidates_for_rom`] and [`crate::Symbols::find_for_rom`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::symbols::is_function_symbol;
use crate::{Error, Symbols};

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
pub(crate) fn candidates(rom: &Path) -> Vec<Vec<PathBuf>> {
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

pub(crate) fn find_for_rom(rom: &Path) -> Result<Option<Symbols>, Error> {
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
                    Ok(nm) => merge_listing(&mut elf, &nm),
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

/// Take `file:line` from an nm listing into the ELF's symbols, and warn when
/// the two disagree on where code symbols are.
fn merge_listing(elf: &mut Symbols, nm: &Symbols) {
    let mut by_name: BTreeMap<&str, &crate::Symbol> = BTreeMap::new();
    for s in nm.table.symbols() {
        by_name.entry(s.name.as_str()).or_insert(s);
    }
    let mut differ = 0usize;
    let mut first: Option<String> = None;
    let mut syms: Vec<crate::Symbol> = elf.table.symbols().to_vec();
    for s in &mut syms {
        if let Some(n) = by_name.get(s.name.as_str()) {
            if n.addr != s.addr && is_function_symbol(s) {
                differ += 1;
                first.get_or_insert_with(|| {
                    format!(
                        "{} at 0x{:x} in the ELF, 0x{:x} in the listing",
                        s.name, s.addr, n.addr
                    )
                });
            } else if s.file.is_none() && n.file.is_some() {
                s.file = n.file.clone();
                s.line = n.line;
            }
        }
    }
    if differ > 0 {
        elf.warnings.push(format!(
            "{} and {} disagree on {differ} code symbol address(es) (first: {}); using {}",
            elf.path.display(),
            nm.path.display(),
            first.unwrap_or_default(),
            elf.path.display()
        ));
    }
    elf.table = crate::SymbolTable::new(syms);
}
