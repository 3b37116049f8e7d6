//! ELF executables (SGDK `rom.out`, big-endian m68k; any ELF `object`
//! reads): the symbol table with sizes and, when present, DWARF line tables
//! and inlined-subroutine records through `addr2line`.
//!
//! Symbol kinds follow nm: a symbol in an executable section is
//! [`SymbolKind::Text`] unless the ELF types it `STT_OBJECT` (then it is
//! [`SymbolKind::Data`], e.g. a constant table placed in `.text`); writable
//! `NOBITS` sections give [`SymbolKind::Bss`], other sections
//! [`SymbolKind::Data`], `SHN_ABS` [`SymbolKind::Absolute`]. Local labels
//! (names starting with `.`) are [`SymbolKind::Other`] as in [`crate::nm`].
//! `STT_FILE` symbols give the `module` of the local symbols after them.

use std::sync::Arc;

use object::{Object, ObjectSection, ObjectSymbol, SectionKind, SymbolSection};

use crate::nm::is_local_label;
use crate::{Error, Symbol, SymbolKind};

type Reader = gimli::EndianArcSlice<gimli::RunTimeEndian>;

/// DWARF debug information of one ELF file, queried by address.
pub struct DebugInfo {
    ctx: addr2line::Context<Reader>,
    path: String,
    /// Every `DW_TAG_inlined_subroutine`'s address ranges, sorted and
    /// merged: a superset of the ranges addr2line's inline look-up uses, so
    /// an address outside all of them has no inlined frame (None: not read,
    /// every address may have one).
    inline_ranges: Option<Vec<(u64, u64)>>,
}

impl std::fmt::Debug for DebugInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DebugInfo")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// A source location.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SourceLocation {
    pub file: String,
    pub line: Option<u32>,
}

/// One frame of the DWARF view of an address: a function (physical or
/// inlined) and the location inside it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DwarfFrame {
    /// Function name, when DWARF names it.
    pub function: Option<String>,
    /// Where in this function the address is: for the innermost frame the
    /// address's own line, for outer frames the call site of the inlined
    /// function inside them.
    pub location: Option<SourceLocation>,
}

impl DebugInfo {
    /// File and line of the instruction at `addr` (line table).
    pub fn location(&self, addr: u64) -> Option<SourceLocation> {
        let loc = self.ctx.find_location(addr).ok()??;
        Some(SourceLocation {
            file: loc.file?.to_string(),
            line: loc.line,
        })
    }

    /// [`DebugInfo::location`] that tells a line table that cannot be read
    /// (corrupt DWARF: the error) from an address it does not cover
    /// (`Ok(None)`). A line number 0 (DWARF: no source line) is `None`.
    pub fn try_location(&self, addr: u64) -> Result<Option<SourceLocation>, String> {
        let loc = self.ctx.find_location(addr).map_err(|e| e.to_string())?;
        Ok(loc.and_then(|l| {
            Some(SourceLocation {
                file: l.file?.to_string(),
                line: l.line.filter(|&n| n > 0),
            })
        }))
    }

    /// Can `addr` lie in an inlined function? `false` means
    /// [`DebugInfo::frames`] gives at most one frame there (no
    /// `DW_TAG_inlined_subroutine` covers it); `true` means ask.
    pub fn may_be_inlined(&self, addr: u64) -> bool {
        match &self.inline_ranges {
            None => true,
            Some(r) => {
                let i = r.partition_point(|&(_, end)| end <= addr);
                i < r.len() && r[i].0 <= addr
            }
        }
    }

    /// The merged inlined-subroutine ranges (see [`DebugInfo::may_be_inlined`]).
    pub(crate) fn inline_ranges(&self) -> Option<&[(u64, u64)]> {
        self.inline_ranges.as_deref()
    }

    /// Forget the inlined-subroutine ranges: every address is asked (the
    /// slow way, for tests that compare both).
    #[doc(hidden)]
    pub fn forget_inline_ranges(&mut self) {
        self.inline_ranges = None;
    }

    /// The ELF file this debug information was read from.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The frames at `addr`, INNERMOST FIRST: inlined functions, then the
    /// physical function. Empty when DWARF does not cover `addr`. Corrupt
    /// DWARF yields the frames read before the fault.
    pub fn frames(&self, addr: u64) -> Vec<DwarfFrame> {
        let mut out = Vec::new();
        let Ok(mut iter) = self.ctx.find_frames(addr).skip_all_loads() else {
            return out;
        };
        while let Ok(Some(f)) = iter.next() {
            let function = f
                .function
                .as_ref()
                .and_then(|n| n.raw_name().ok().map(|s| s.into_owned()));
            let location = f.location.as_ref().and_then(|l| {
                l.file.map(|file| SourceLocation {
                    file: file.to_string(),
                    line: l.line,
                })
            });
            out.push(DwarfFrame { function, location });
            if out.len() > 256 {
                break; // cycle guard against corrupt inlining records
            }
        }
        out
    }
}

/// A loaded, executable section (for checking symbols against a ROM).
#[derive(Clone, Debug)]
pub struct CodeSection {
    pub name: String,
    pub addr: u64,
    pub data: Vec<u8>,
}

/// What one ELF file gives.
pub(crate) struct ElfData {
    pub symbols: Vec<Symbol>,
    pub undefined: Vec<String>,
    pub debug: Option<DebugInfo>,
    pub code_sections: Vec<CodeSection>,
    pub entry: u64,
    pub warnings: Vec<String>,
}

fn elf_err(path: &str, msg: impl Into<String>) -> Error {
    Error::Elf {
        path: path.to_string(),
        msg: msg.into(),
    }
}

pub(crate) fn parse(path: &str, data: &[u8]) -> Result<ElfData, Error> {
    if !data.starts_with(b"\x7fELF") {
        return Err(elf_err(
            path,
            "not an ELF file (no \\x7fELF magic at byte 0)",
        ));
    }
    let file = object::File::parse(data).map_err(|e| elf_err(path, e.to_string()))?;
    let mut warnings = Vec::new();

    // Section kinds by index, and the executable sections' bytes.
    let mut code_sections = Vec::new();
    for s in file.sections() {
        if s.kind() == SectionKind::Text && s.size() > 0 {
            match s.data() {
                Ok(d) => code_sections.push(CodeSection {
                    name: s.name().unwrap_or("?").to_string(),
                    addr: s.address(),
                    data: d.to_vec(),
                }),
                Err(e) => warnings.push(format!(
                    "{path}: cannot read section {}: {e}",
                    s.name().unwrap_or("?")
                )),
            }
        }
    }

    let mut symbols = Vec::new();
    let mut undefined = Vec::new();
    let mut module: Option<String> = None;
    for sym in file.symbols() {
        let name = match sym.name_bytes() {
            Ok(b) => String::from_utf8_lossy(b).into_owned(),
            Err(e) => return Err(elf_err(path, format!("bad symbol name: {e}"))),
        };
        let global = sym.is_global() || sym.is_weak();
        if global {
            module = None;
        }
        match sym.kind() {
            object::SymbolKind::File => {
                module = if name.is_empty() { None } else { Some(name) };
                continue;
            }
            object::SymbolKind::Section => continue,
            _ => {}
        }
        if name.is_empty() {
            continue;
        }
        let kind = match sym.section() {
            SymbolSection::Undefined => {
                undefined.push(name);
                continue;
            }
            SymbolSection::Absolute => SymbolKind::Absolute,
            SymbolSection::Common => SymbolKind::Bss,
            SymbolSection::Section(idx) => match file.section_by_index(idx) {
                Ok(s) => match s.kind() {
                    SectionKind::Text => {
                        if sym.kind() == object::SymbolKind::Data {
                            SymbolKind::Data
                        } else {
                            SymbolKind::Text
                        }
                    }
                    SectionKind::UninitializedData | SectionKind::UninitializedTls => {
                        SymbolKind::Bss
                    }
                    SectionKind::Data
                    | SectionKind::ReadOnlyData
                    | SectionKind::ReadOnlyString
                    | SectionKind::ReadOnlyDataWithRel
                    | SectionKind::Tls => SymbolKind::Data,
                    _ => SymbolKind::Other,
                },
                Err(_) => SymbolKind::Other,
            },
            _ => SymbolKind::Other,
        };
        let kind = if kind == SymbolKind::Text && is_local_label(&name) {
            SymbolKind::Other
        } else {
            kind
        };
        symbols.push(Symbol {
            name,
            addr: sym.address(),
            size: Some(sym.size()).filter(|&s| s > 0),
            kind,
            global,
            module: if global { None } else { module.clone() },
            file: None,
            line: None,
        });
    }

    let debug = load_dwarf(path, &file, &mut warnings)?;
    Ok(ElfData {
        symbols,
        undefined,
        debug,
        code_sections,
        entry: file.entry(),
        warnings,
    })
}

fn load_dwarf(
    path: &str,
    file: &object::File<'_>,
    warnings: &mut Vec<String>,
) -> Result<Option<DebugInfo>, Error> {
    let has_info = file
        .section_by_name(".debug_info")
        .is_some_and(|s| s.size() > 0);
    if !has_info {
        return Ok(None);
    }
    let endian = if file.is_little_endian() {
        gimli::RunTimeEndian::Little
    } else {
        gimli::RunTimeEndian::Big
    };
    let load = |id: gimli::SectionId| -> Result<Reader, gimli::Error> {
        let data: Arc<[u8]> = match file.section_by_name(id.name()) {
            Some(s) => match s.compressed_file_range() {
                Ok(r) if r.format != object::CompressionFormat::None => Arc::from(&[][..]),
                _ => Arc::from(s.data().unwrap_or(&[])),
            },
            None => Arc::from(&[][..]),
        };
        Ok(gimli::EndianArcSlice::new(data, endian))
    };
    if file
        .section_by_name(".debug_info")
        .and_then(|s| s.compressed_file_range().ok())
        .is_some_and(|r| r.format != object::CompressionFormat::None)
    {
        warnings.push(format!(
            "{path}: DWARF sections are compressed, which this build does not read; \
             no source lines or inlining"
        ));
        return Ok(None);
    }
    let dwarf = gimli::Dwarf::load(load).map_err(|e| Error::Dwarf {
        path: path.to_string(),
        msg: e.to_string(),
    })?;
    let inline_ranges = inlined_subroutine_ranges(&dwarf).ok();
    let ctx = addr2line::Context::from_dwarf(dwarf).map_err(|e| Error::Dwarf {
        path: path.to_string(),
        msg: e.to_string(),
    })?;
    Ok(Some(DebugInfo {
        ctx,
        path: path.to_string(),
        inline_ranges,
    }))
}

/// The address ranges of every `DW_TAG_inlined_subroutine` of every unit
/// (wherever it is nested), sorted and merged (empty ranges left out: an
/// empty range covers no address). addr2line's inlined functions are
/// these DIEs, their ranges read from the same attributes (low_pc with
/// high_pc or a size, or DW_AT_ranges), so the result covers every address
/// where it can find an inlined frame. Any read error: `Err` (then no
/// address is filtered out).
fn inlined_subroutine_ranges(
    dwarf: &gimli::Dwarf<Reader>,
) -> Result<Vec<(u64, u64)>, gimli::Error> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    let mut units = dwarf.units();
    while let Some(header) = units.next()? {
        let unit = dwarf.unit(header)?;
        let mut entries = unit.entries();
        while let Some((_, entry)) = entries.next_dfs()? {
            if entry.tag() != gimli::DW_TAG_inlined_subroutine {
                continue;
            }
            let mut ranges = dwarf.die_ranges(&unit, entry)?;
            while let Some(r) = ranges.next()? {
                if r.begin < r.end {
                    out.push((r.begin, r.end));
                }
            }
        }
    }
    out.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::with_capacity(out.len());
    for (b, e) in out {
        match merged.last_mut() {
            Some(last) if b <= last.1 => last.1 = last.1.max(e),
            _ => merged.push((b, e)),
        }
    }
    Ok(merged)
}
