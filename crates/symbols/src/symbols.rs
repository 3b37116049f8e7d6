//! [`Symbols`]: a loaded symbol table with where it came from, DWARF when
//! the source has it, and an ELF's code bytes.

use std::collections::BTreeMap;
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
    /// Executable sections' bytes (ELF), to compare with the image they were
    /// linked into.
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

    /// Take `file:line` from an nm listing into these (ELF) symbols, and warn
    /// (in [`Symbols::warnings`]) when the two disagree on where code symbols
    /// are.
    pub fn merge_listing(&mut self, nm: &Symbols) {
        let mut by_name: BTreeMap<&str, &Symbol> = BTreeMap::new();
        for s in nm.table.symbols() {
            by_name.entry(s.name.as_str()).or_insert(s);
        }
        let mut differ = 0usize;
        let mut first: Option<String> = None;
        let mut syms: Vec<Symbol> = self.table.symbols().to_vec();
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
            self.warnings.push(format!(
                "{} and {} disagree on {differ} code symbol address(es) (first: {}); using {}",
                self.path.display(),
                nm.path.display(),
                first.unwrap_or_default(),
                self.path.display()
            ));
        }
        self.table = SymbolTable::new(syms);
    }
}

/// A text symbol that starts a function (not a local label, not a boundary
/// marker).
pub fn is_function_symbol(s: &Symbol) -> bool {
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
