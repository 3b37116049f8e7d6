//! [`Symbols`]: a loaded symbol table with where it came from, DWARF when
//! the source has it, and checks against the ROM.

use std::path::{Path, PathBuf};

use crate::elf::{self, CodeSection, DebugInfo, SourceLocation};
use crate::index::{is_boundary_marker, FunctionIndex, IndexOptions};
use crate::nm::{self, is_local_label};
use crate::{Error, Symbol, SymbolKind, SymbolTable};

/// Which kind of file the symbols were read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SymbolSource {
    /// An nm listing (SGDK `symbol.txt`).
    Nm,
    /// An ELF file (SGDK `rom.out`).
    Elf,
}

/// A symbol table plus what came with it.
#[derive(Debug)]
pub struct Symbols {
    pub table: SymbolTable,
    pub source: SymbolSource,
    /// The file the symbols came from.
    pub path: PathBuf,
    /// Other files consulted (e.g. a `symbol.txt` next to the chosen ELF,
    /// whose `nm -l` lines were merged in).
    pub also_read: Vec<PathBuf>,
    /// Undefined symbols the listing names (`U`), which have no address.
    pub undefined: Vec<String>,
    /// Things to tell the user (never fatal).
    pub warnings: Vec<String>,
    /// DWARF line tables and inlining records (ELF with `-g`).
    pub debug: Option<DebugInfo>,
    /// Executable sections' bytes (ELF), for [`Symbols::validate_against_rom_bytes`].
    pub code_sections: Vec<CodeSection>,
    /// Entry point recorded in the file (ELF).
    pub entry: Option<u64>,
}

fn read(path: &Path) -> Result<Vec<u8>, Error> {
    crate::input::read_limited(path, crate::input::MAX_SYMBOL_FILE_BYTES).map_err(|source| {
        Error::Io {
            path: path.display().to_string(),
            source,
        }
    })
}

impl Symbols {
    /// Read an nm listing (SGDK `symbol.txt`).
    pub fn load_nm(path: &Path) -> Result<Symbols, Error> {
        let bytes = read(path)?;
        let text = String::from_utf8_lossy(&bytes);
        Self::parse_nm(path, &text)
    }

    /// Parse nm listing text; `path` names it in errors.
    pub fn parse_nm(path: &Path, text: &str) -> Result<Symbols, Error> {
        let listing = nm::parse(&path.display().to_string(), text)?;
        Ok(Symbols {
            table: SymbolTable::new(listing.symbols),
            source: SymbolSource::Nm,
            path: path.to_path_buf(),
            also_read: Vec::new(),
            undefined: listing.undefined,
            warnings: Vec::new(),
            debug: None,
            code_sections: Vec::new(),
            entry: None,
        })
    }

    /// Read an ELF file: symbols with sizes, and DWARF when present.
    pub fn load_elf(path: &Path) -> Result<Symbols, Error> {
        let bytes = read(path)?;
        Self::parse_elf(path, &bytes)
    }

    /// Parse ELF bytes; `path` names the file in errors.
    pub fn parse_elf(path: &Path, bytes: &[u8]) -> Result<Symbols, Error> {
        let data = elf::parse(&path.display().to_string(), bytes)?;
        Ok(Symbols {
            table: SymbolTable::new(data.symbols),
            source: SymbolSource::Elf,
            path: path.to_path_buf(),
            also_read: Vec::new(),
            undefined: data.undefined,
            warnings: data.warnings,
            debug: data.debug,
            code_sections: data.code_sections,
            entry: Some(data.entry),
        })
    }

    /// Load an nm listing or an ELF file, by content (`\x7fELF` magic).
    pub fn load(path: &Path) -> Result<Symbols, Error> {
        let bytes = read(path)?;
        if bytes.starts_with(b"\x7fELF") {
            Self::parse_elf(path, &bytes)
        } else {
            Self::parse_nm(path, &String::from_utf8_lossy(&bytes))
        }
    }

    /// Find and load the symbols that belong to the ROM at `rom`; `None`
    /// when there are none. Which files are looked at is described in
    /// [`Symbols::candidates_for_rom`]. In the chosen folder an ELF file is
    /// preferred (sizes, DWARF); an nm listing next to it is merged in only
    /// for the `file:line` it gives (`nm -l`) and to warn when it disagrees
    /// with the ELF. If the ELF cannot be read, the nm listing is used with a
    /// warning. Symbol addresses are NOT masked here: call
    /// [`Symbols::mask_addresses`] or use [`IndexOptions::addr_mask`].
    pub fn find_for_rom(rom: &Path) -> Result<Option<Symbols>, Error> {
        crate::discover::find_for_rom(rom)
    }

    /// The files [`Symbols::find_for_rom`] would look at, in order of
    /// preference: for each folder (the ROM's folder, then `out/`,
    /// `out/release/`, `out/debug/` and other `out/*/` folders under it,
    /// sorted), ELF files first (`<stem>.elf`, `<stem>.out`, `rom.out`,
    /// `rom.elf`, then any other `*.elf`, sorted), then nm listings
    /// (`symbol.txt`, `<stem>.sym`). The first folder holding any
    /// candidate is used.
    pub fn candidates_for_rom(rom: &Path) -> Vec<PathBuf> {
        crate::discover::candidates(rom)
            .into_iter()
            .flatten()
            .collect()
    }

    /// Mask every non-absolute symbol address (e.g. `0xFF_FFFF` for the
    /// 68000's 24-bit bus: SGDK links RAM at 0xE0FF0000).
    pub fn mask_addresses(&mut self, mask: u64) {
        let syms: Vec<Symbol> = self
            .table
            .symbols()
            .iter()
            .cloned()
            .map(|mut s| {
                if s.kind != SymbolKind::Absolute {
                    s.addr &= mask;
                }
                s
            })
            .collect();
        self.table = SymbolTable::new(syms);
    }

    /// Build the dense PC -> function index (with DWARF inline contexts
    /// when this table has DWARF).
    pub fn build_index(&self, opts: &IndexOptions) -> Result<FunctionIndex, Error> {
        FunctionIndex::build(&self.table, self.debug.as_ref(), opts)
    }

    /// Source file and line of `addr`: from DWARF's line table when present,
    /// else the `nm -l` location of the symbol at exactly `addr`.
    pub fn source_location(&self, addr: u64) -> Option<SourceLocation> {
        if let Some(d) = &self.debug {
            if let Some(loc) = d.location(addr) {
                return Some(loc);
            }
        }
        let syms = self.table.symbols();
        let i = syms.partition_point(|s| s.addr < addr);
        syms[i..]
            .iter()
            .take_while(|s| s.addr == addr)
            .find_map(|s| {
                s.file.as_ref().map(|f| SourceLocation {
                    file: f.clone(),
                    line: s.line,
                })
            })
    }

    /// Number of code symbols (text symbols that start functions: no local
    /// labels, no boundary markers).
    pub fn function_symbol_count(&self) -> usize {
        self.table
            .symbols()
            .iter()
            .filter(|s| is_function_symbol(s))
            .count()
    }

    /// Check that these symbols plausibly belong to a ROM of `rom_len` bytes
    /// whose reset vector is `entry_point` (addresses masked to 24 bits).
    /// Returns warnings; empty when all is well.
    pub fn validate_against_rom(&self, rom_len: u64, entry_point: u64) -> Vec<String> {
        let mut w = Vec::new();
        let mask = 0xFF_FFFF;
        let funcs: Vec<&Symbol> = self
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
                self.path.display()
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
                self.path.display(),
                past.len(),
                first.name,
                first.addr & mask
            ));
        }
        let entry = entry_point & mask;
        let idx = IndexOptions {
            ranges: vec![crate::index::RangeSpec {
                name: "entry".into(),
                start: entry,
                end: entry + 2,
            }],
            shift: 1,
            keep_labels: false,
            bucket_size: 0,
            addr_mask: mask,
        };
        match FunctionIndex::build(&self.table, None, &idx) {
            Ok(ix) if ix.lookup(entry) == 0 => w.push(format!(
                "{}: the entry point 0x{entry:06x} is outside every function",
                self.path.display()
            )),
            Ok(_) => {}
            Err(e) => w.push(format!("{}: {e}", self.path.display())),
        }
        if let Some(e) = self.entry {
            if self.source == SymbolSource::Elf && e != 0 && (e & mask) != entry {
                w.push(format!(
                    "{}: the ELF entry point 0x{:06x} differs from the ROM's reset vector 0x{entry:06x}",
                    self.path.display(),
                    e & mask
                ));
            }
        }
        w
    }

    /// Check the symbols against the ROM's code: every `jsr abs.l`
    /// (0x4EB9 followed by an even address inside the ROM) found at an even
    /// offset past the 0x200-byte header should call the start of a
    /// function. With the right symbols all such targets are function
    /// starts (the four ROMs in tests: 22 to 59 targets, all of them); with
    /// another build's symbols many are not. Warns when at least 4 targets
    /// are found and fewer than 95 % of them start a code symbol. Works for
    /// nm listings and maps, which carry no bytes to compare.
    pub fn validate_call_targets(&self, rom: &[u8]) -> Vec<String> {
        let mask = 0xFF_FFFF;
        let mut starts: Vec<u64> = self
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
                if t >= 0x200 && t % 2 == 0 && (t as usize) < rom.len() {
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
                self.path.display(),
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
    pub fn validate_against_rom_bytes(&self, rom: &[u8]) -> Vec<String> {
        let mut w = Vec::new();
        for s in &self.code_sections {
            let start = (s.addr & 0xFF_FFFF) as usize;
            if start >= rom.len() {
                continue;
            }
            let n = s.data.len().min(rom.len() - start);
            let mut diff = 0usize;
            let mut first = None;
            for i in 0..n {
                let a = start + i;
                if (0x18E..0x190).contains(&a) {
                    continue;
                }
                if s.data[i] != rom[a] {
                    diff += 1;
                    first.get_or_insert(a);
                }
            }
            if diff > 0 {
                w.push(format!(
                    "{}: section {} differs from the ROM in {diff} of {n} bytes (first at 0x{:06x}); \
                     the symbols may be from another build",
                    self.path.display(),
                    s.name,
                    first.unwrap_or(0)
                ));
            }
            if s.data.len() > n {
                w.push(format!(
                    "{}: section {} (0x{:x} bytes at 0x{:06x}) runs past the {}-byte ROM",
                    self.path.display(),
                    s.name,
                    s.data.len(),
                    start,
                    rom.len()
                ));
            }
        }
        w
    }
}

/// A text symbol that starts a function (not a local label, not a boundary
/// marker).
pub(crate) fn is_function_symbol(s: &Symbol) -> bool {
    s.kind == SymbolKind::Text && !is_local_label(&s.name) && !is_boundary_marker(s)
}

#[cfg(test)]
mod tests {
    #[test]
    fn symbols_and_index_can_move_between_threads() {
        fn send<T: Send>() {}
        fn sync<T: Sync>() {}
        send::<super::Symbols>();
        send::<crate::FunctionIndex>();
        sync::<crate::FunctionIndex>();
    }
}
