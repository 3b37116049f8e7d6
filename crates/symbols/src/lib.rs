//! Symbol tables for retroprof: nm listings (SGDK `symbol.txt`), ELF with
//! DWARF lines and inlining, and linker maps (module [`maps`]).
//!
//! [`SymbolTable`] is sorted by address and answers look-ups by binary
//! search; hot paths build a dense [`FunctionIndex`] from it once.
//! [`Symbols`] loads a table from an nm listing ([`Symbols::load_nm`]), an
//! ELF file ([`Symbols::load_elf`], with DWARF when present) or either by
//! content ([`Symbols::load`]), and merges an nm listing's `file:line` into
//! an ELF's symbols ([`Symbols::merge_listing`]). The crate knows no
//! console: which files belong to a Mega Drive ROM, the console's index
//! ranges and the checks against a ROM live in `retroprof-mdprof`
//! (`romsyms`).

mod elf;
mod index;
pub mod input;
pub mod maps;
pub mod nm;
mod symbols;

pub use elf::{CodeSection, DebugInfo, DwarfFrame, SourceLocation};
pub use index::{
    clone_base_name, Function, FunctionIndex, FunctionOrigin, IndexOptions, IndexRange,
    InlineFrame, RangeSpec, BOUNDARY_MARKERS,
};
pub use symbols::{is_function_symbol, SymbolSource, Symbols};

/// Errors from the symbol loaders and the index builder.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot read {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// A malformed line in a text listing (1-based line number).
    #[error("{path}:{line}: {msg}")]
    Syntax {
        path: String,
        line: usize,
        msg: String,
    },
    #[error("{path}: bad ELF file: {msg}")]
    Elf { path: String, msg: String },
    #[error("{path}: bad DWARF debug information: {msg}")]
    Dwarf { path: String, msg: String },
    #[error("function index: {0}")]
    Index(String),
}

/// What kind of symbol (nm's type letters, folded).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SymbolKind {
    /// Code (`T`, `t`, `W` on text, a public in a CODE segment).
    Text,
    /// Initialised data (`D`, `d`, `R`, `r`).
    Data,
    /// Uninitialised data (`B`, `b`, `C`).
    Bss,
    /// Absolute (`a`, `A`, `Abs` rows in maps).
    Absolute,
    Other,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    pub name: String,
    /// Linear address (for segmented maps: segment * 16 + offset).
    pub addr: u64,
    /// Size in bytes when the source gives it (ELF); otherwise the symbol
    /// ends where the next symbol of the same kind starts.
    pub size: Option<u64>,
    pub kind: SymbolKind,
    /// Global (`T`) or local (`t`) binding.
    pub global: bool,
    /// Module / object file, when the map gives one.
    pub module: Option<String>,
    /// Source file and line, when given (`nm -l`, DWARF).
    pub file: Option<String>,
    pub line: Option<u32>,
}

/// Symbols sorted by address (ties broken by name), binary-searched.
#[derive(Clone, Debug, Default)]
pub struct SymbolTable {
    symbols: Vec<Symbol>,
}

impl SymbolTable {
    /// Build from symbols in any order; sorts by (addr, name).
    pub fn new(mut symbols: Vec<Symbol>) -> Self {
        symbols.sort_by(|a, b| a.addr.cmp(&b.addr).then_with(|| a.name.cmp(&b.name)));
        SymbolTable { symbols }
    }

    pub fn symbols(&self) -> &[Symbol] {
        &self.symbols
    }

    pub fn len(&self) -> usize {
        self.symbols.len()
    }

    pub fn is_empty(&self) -> bool {
        self.symbols.is_empty()
    }

    /// The last symbol of kind `kind` whose address is <= `addr`, by binary
    /// search; `None` when `addr` is before every such symbol or past the end
    /// of a sized symbol.
    pub fn lookup(&self, addr: u64, kind: SymbolKind) -> Option<&Symbol> {
        let idx = self.symbols.partition_point(|s| s.addr <= addr);
        let sym = self.symbols[..idx].iter().rev().find(|s| s.kind == kind)?;
        match sym.size {
            Some(size) if size > 0 && addr >= sym.addr + size => None,
            _ => Some(sym),
        }
    }
}

/// Text with every line ending (CRLF, LF, or a lone CR as classic Mac OS
/// tools write) made LF; borrowed when there is no lone CR.
pub fn normalize_line_ends(text: &str) -> std::borrow::Cow<'_, str> {
    let b = text.as_bytes();
    let lone_cr = b
        .iter()
        .enumerate()
        .any(|(i, &c)| c == b'\r' && b.get(i + 1) != Some(&b'\n'));
    if !lone_cr {
        return std::borrow::Cow::Borrowed(text);
    }
    std::borrow::Cow::Owned(text.replace("\r\n", "\n").replace('\r', "\n"))
}

/// At most `max` characters of `s` for an error message, with `…` when cut.
pub(crate) fn clip(s: &str, max: usize) -> std::borrow::Cow<'_, str> {
    match s.char_indices().nth(max) {
        None => std::borrow::Cow::Borrowed(s),
        Some((i, _)) => std::borrow::Cow::Owned(format!("{}…", &s[..i])),
    }
}
