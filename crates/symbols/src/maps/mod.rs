//! Linker map parsers (MS LINK, Borland TLINK, OpenWatcom wlink, GNU ld,
//! cc65 map and debug files, nm listings, ELF) and format detection.
//!
//! Every parser turns one file into a [`MapFile`]: the symbols as a
//! [`SymbolTable`] (linear addresses: for segmented DOS maps
//! `segment * 16 + offset`, relative to the load image), the segments, the
//! module (object file) address ranges when the map has them, and the entry
//! point. [`load`] decodes the text (UTF-8, or Shift-JIS/cp932 when the bytes
//! are not valid UTF-8), detects the format unless one is forced, and parses.
//!
//! Errors name the file and, for syntax errors, the 1-based line.

use std::fmt;
use std::path::Path;

use crate::{Symbol, SymbolKind, SymbolTable};

mod cc65;
mod gnuld;
mod mslink;
mod nm;
mod text;
mod watcom;

pub use text::{decode_text, TextEncoding};

/// The map formats this module reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MapFormat {
    /// Microsoft LINK (16-bit DOS): segment table, `Publics by Value`.
    MsLink,
    /// Borland TLINK: like MS LINK plus `Detailed map of segments`.
    Tlink,
    /// OpenWatcom wlink: boxed `Segments` / `Memory Map` sections.
    Watcom,
    /// GNU ld `-Map` output.
    GnuLd,
    /// `nm` listing (`nm -n`, optionally `-l` / `-S`), e.g. SGDK `symbol.txt`.
    Nm,
    /// cc65 `ld65 --dbgfile` output (`version major=2,minor=0`).
    Cc65Dbg,
    /// cc65 `ld65 -m` map (`Exports list by value:`).
    Cc65Map,
    /// ELF executable (symbol table).
    Elf,
}

impl MapFormat {
    /// Every format, in the order detection tries them.
    pub const ALL: [MapFormat; 8] = [
        MapFormat::Elf,
        MapFormat::Cc65Dbg,
        MapFormat::Watcom,
        MapFormat::GnuLd,
        MapFormat::Cc65Map,
        MapFormat::Tlink,
        MapFormat::MsLink,
        MapFormat::Nm,
    ];

    /// The name used on the command line (`--map-format`).
    pub fn name(self) -> &'static str {
        match self {
            MapFormat::MsLink => "mslink",
            MapFormat::Tlink => "tlink",
            MapFormat::Watcom => "watcom",
            MapFormat::GnuLd => "gnu-ld",
            MapFormat::Nm => "nm",
            MapFormat::Cc65Dbg => "cc65-dbg",
            MapFormat::Cc65Map => "cc65-map",
            MapFormat::Elf => "elf",
        }
    }

    /// What detection looks for, for error messages.
    pub fn signature(self) -> &'static str {
        match self {
            MapFormat::MsLink => "MS LINK (`Publics by Value` / `Publics by Name`)",
            MapFormat::Tlink => "Borland TLINK (`Detailed map of segments`)",
            MapFormat::Watcom => "OpenWatcom wlink (`|   Memory Map   |`)",
            MapFormat::GnuLd => "GNU ld -Map (`Linker script and memory map`)",
            MapFormat::Nm => "nm listing (`0000c758 T name` lines)",
            MapFormat::Cc65Dbg => "cc65 debug file (first line `version\\tmajor=2,minor=0`)",
            MapFormat::Cc65Map => "cc65 map (`Exports list by value:`)",
            MapFormat::Elf => "ELF (`\\x7fELF` magic)",
        }
    }

    /// Parse a `--map-format` value.
    pub fn from_name(s: &str) -> Option<MapFormat> {
        let s = s.to_ascii_lowercase();
        Some(match s.as_str() {
            "mslink" | "ms-link" | "link" | "msvc" => MapFormat::MsLink,
            "tlink" | "borland" => MapFormat::Tlink,
            "watcom" | "wlink" | "openwatcom" => MapFormat::Watcom,
            "gnu-ld" | "gnuld" | "ld" | "gnu" => MapFormat::GnuLd,
            "nm" => MapFormat::Nm,
            "cc65-dbg" | "cc65dbg" | "dbg" | "cc65" => MapFormat::Cc65Dbg,
            "cc65-map" | "ld65" | "ld65-map" => MapFormat::Cc65Map,
            "elf" => MapFormat::Elf,
            _ => return None,
        })
    }
}

impl fmt::Display for MapFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One segment (or output section) of the linked program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    pub name: String,
    /// Class (`CODE`, `DATA`, `BSS`...) or, for GNU ld, the section name.
    pub class: Option<String>,
    /// Group (`DGROUP`), when the map gives one.
    pub group: Option<String>,
    /// Linear start address.
    pub start: u64,
    /// Length in bytes.
    pub len: u64,
    /// For segmented maps, the frame (paragraph) the map gives the segment
    /// (`0170` in `0170:0000`); `None` for flat maps.
    pub frame: Option<u16>,
    /// True when this segment holds code.
    pub code: bool,
}

impl Segment {
    pub fn end(&self) -> u64 {
        self.start.saturating_add(self.len)
    }

    pub fn contains(&self, addr: u64) -> bool {
        addr >= self.start && addr < self.end()
    }
}

/// The address range one module (object file) contributes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModuleRange {
    pub name: String,
    /// Linear start address.
    pub start: u64,
    pub len: u64,
    /// Segment the range belongs to, when known.
    pub segment: Option<String>,
    /// True when the range holds code.
    pub code: bool,
}

impl ModuleRange {
    pub fn end(&self) -> u64 {
        self.start.saturating_add(self.len)
    }
}

/// The program entry point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntryPoint {
    /// Linear address.
    pub addr: u64,
    /// For segmented maps, the frame of the entry point's code segment
    /// (what CS holds at the first instruction, relative to the load image).
    pub frame: Option<u16>,
}

/// One parsed map.
#[derive(Clone, Debug)]
pub struct MapFile {
    pub symbols: SymbolTable,
    pub segments: Vec<Segment>,
    pub modules: Vec<ModuleRange>,
    pub entry: Option<EntryPoint>,
    pub format: MapFormat,
    /// How the text was decoded (`None` for binary formats).
    pub encoding: Option<TextEncoding>,
    /// Things the parser skipped or doubted, for the user (never fatal).
    pub warnings: Vec<String>,
    /// What makes the symbols themselves doubtful: lines inside a symbol
    /// table that could not be read (the first few, with line numbers), a
    /// map that looks cut short. Each is also in `warnings`; a caller's
    /// `--strict` turns any of them into an error.
    pub doubts: Vec<String>,
    /// Source lines by address (MS LINK / TLINK `Line numbers for`
    /// sections, cc65 `line` records), sorted by address then file/line.
    pub lines: Vec<LineEntry>,
    /// Unreadable lines of address-ordered symbol tables that sit after a
    /// readable symbol (each is also counted in a doubt). Empty for a map
    /// read whole.
    pub unreadable: Vec<UnreadableLine>,
}

/// An unreadable line inside an address-ordered symbol table (issue 21):
/// what it held may be a symbol between `after` and the next readable one,
/// so the symbol at `after` must not be extended across it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnreadableLine {
    /// 1-based line number in the map.
    pub line: usize,
    /// Address of the last symbol read before the line.
    pub after: Option<u64>,
}

/// The first address of a source line.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct LineEntry {
    /// Linear address.
    pub addr: u64,
    pub file: String,
    pub line: u32,
}

impl MapFile {
    fn new(format: MapFormat) -> Self {
        MapFile {
            symbols: SymbolTable::default(),
            segments: Vec::new(),
            modules: Vec::new(),
            entry: None,
            format,
            encoding: None,
            warnings: Vec::new(),
            doubts: Vec::new(),
            lines: Vec::new(),
            unreadable: Vec::new(),
        }
    }

    /// Record a doubt (also a warning).
    pub(crate) fn doubt(&mut self, msg: String) {
        self.warnings.push(msg.clone());
        self.doubts.push(msg);
    }

    /// A map made of a symbol table alone (nm listing or ELF loaded
    /// elsewhere): no segments, so code extent comes from the symbols.
    pub fn from_symbols(symbols: SymbolTable, format: MapFormat) -> Self {
        MapFile {
            symbols,
            ..MapFile::new(format)
        }
    }

    /// The source line containing `addr`: the last line entry at or before
    /// it, if no code symbol starts between the two.
    pub fn line_at(&self, addr: u64) -> Option<&LineEntry> {
        let i = self.lines.partition_point(|l| l.addr <= addr);
        let l = self.lines.get(i.checked_sub(1)?)?;
        let func = self.symbols.lookup(addr, SymbolKind::Text);
        match func {
            Some(f) if f.addr > l.addr => None,
            _ => Some(l),
        }
    }

    /// Number of code (`Text`) symbols.
    pub fn code_symbol_count(&self) -> usize {
        self.symbols
            .symbols()
            .iter()
            .filter(|s| s.kind == SymbolKind::Text)
            .count()
    }

    /// The segments that hold code, by start address.
    pub fn code_segments(&self) -> impl Iterator<Item = &Segment> {
        self.segments.iter().filter(|s| s.code)
    }

    /// The segment containing `addr`, preferring a code segment.
    pub fn segment_at(&self, addr: u64) -> Option<&Segment> {
        self.segments
            .iter()
            .filter(|s| s.contains(addr))
            .min_by_key(|s| (!s.code, s.start, s.name.clone()))
    }
}

/// Errors from the map parsers.
#[derive(Debug, thiserror::Error)]
pub enum MapError {
    #[error("{file}:{line}: {msg}")]
    Syntax {
        file: String,
        line: usize,
        msg: String,
    },
    #[error("{file}: {msg}")]
    Invalid { file: String, msg: String },
    #[error("{file}: not a map format this tool reads; tried {tried}")]
    Unknown { file: String, tried: String },
    /// From the crate's nm / ELF loaders (their messages name the file).
    #[error(transparent)]
    Symbols(crate::Error),
    #[error("cannot read {file}: {source}")]
    Io {
        file: String,
        #[source]
        source: std::io::Error,
    },
}

pub(crate) fn syntax(file: &str, line: usize, msg: impl Into<String>) -> MapError {
    MapError::Syntax {
        file: file.to_string(),
        line,
        // A message quotes the bad text: at most a short prefix of it
        // (issue 21 campaign: a 1 MB token was echoed whole).
        msg: crate::clip(&msg.into(), 200).into_owned(),
    }
}

/// Read and parse the map at `path`; `force` skips detection.
pub fn load(path: &Path, force: Option<MapFormat>) -> Result<MapFile, MapError> {
    let limit = crate::input::MAX_SYMBOL_FILE_BYTES;
    let bytes = crate::input::read_limited(path, limit).map_err(|source| MapError::Io {
        file: path.display().to_string(),
        source,
    })?;
    parse(&path.display().to_string(), &bytes, force)
}

/// Parse map `bytes`; `file` names it in errors; `force` skips detection.
pub fn parse(file: &str, bytes: &[u8], force: Option<MapFormat>) -> Result<MapFile, MapError> {
    if force == Some(MapFormat::Elf) || (force.is_none() && bytes.starts_with(b"\x7fELF")) {
        return parse_elf(file, bytes);
    }
    let (text, encoding) = decode_text(bytes);
    let text = crate::normalize_line_ends(&text).into_owned();
    let format = match force {
        Some(f) => f,
        None => detect(&text).ok_or_else(|| MapError::Unknown {
            file: file.to_string(),
            tried: MapFormat::ALL
                .iter()
                .map(|f| f.signature())
                .collect::<Vec<_>>()
                .join(", "),
        })?,
    };
    let mut map = parse_text(file, &text, format)?;
    map.encoding = Some(encoding);
    if !text.is_empty() && !text.ends_with('\n') {
        let last = text.lines().count();
        map.doubt(format!(
            "{file}:{last}: the file ends in the middle of a line: it looks cut short \
             (symbols after the cut are missing; their samples go to the last one listed)"
        ));
    }
    if encoding == TextEncoding::ShiftJisLossy {
        map.warnings.push(format!(
            "{file}: neither valid UTF-8 nor valid Shift-JIS; undecodable bytes were replaced by U+FFFD"
        ));
    }
    Ok(map)
}

/// Parse already-decoded map text in a known format.
pub fn parse_text(file: &str, text: &str, format: MapFormat) -> Result<MapFile, MapError> {
    // CR-only line ends are line ends (issue 21).
    let text = &*crate::normalize_line_ends(text);
    let map = match format {
        MapFormat::MsLink | MapFormat::Tlink => mslink::parse(file, text, format)?,
        MapFormat::Watcom => watcom::parse(file, text)?,
        MapFormat::GnuLd => gnuld::parse(file, text)?,
        MapFormat::Nm => nm::parse(file, text)?,
        MapFormat::Cc65Dbg => cc65::parse_dbg(file, text)?,
        MapFormat::Cc65Map => cc65::parse_map(file, text)?,
        MapFormat::Elf => {
            return Err(MapError::Invalid {
                file: file.to_string(),
                msg: "ELF is a binary format; it cannot be read from text".into(),
            })
        }
    };
    Ok(map)
}

/// Guess the format of decoded map text. Each signature must stand on a
/// line of its own (as the linker writes it), so a document that merely
/// mentions one (a README) is not taken for a map.
pub fn detect(text: &str) -> Option<MapFormat> {
    let text = text.trim_start_matches('\u{feff}');
    let first = text.lines().next().unwrap_or("");
    if first.starts_with("version\tmajor=") {
        return Some(MapFormat::Cc65Dbg);
    }
    let mut found = [false; 6];
    for line in text.lines() {
        let t = line.trim();
        if t == "|   Memory Map   |" || t.starts_with("Open Watcom Linker Version") {
            found[0] = true;
        } else if t == "Linker script and memory map" {
            found[1] = true;
        } else if t == "Exports list by value:" || t == "Exports list by name:" {
            found[2] = true;
        } else if t == "Detailed map of segments" {
            found[3] = true;
        } else if let Some(rest) = t.strip_prefix("Address") {
            let rest = rest.trim_start();
            if rest.len() < t.len() - "Address".len()
                && (rest.starts_with("Publics by Value") || rest.starts_with("Publics by Name"))
            {
                found[4] = true;
            }
        } else if t.starts_with("Program entry point at") {
            found[5] = true;
        }
    }
    if found[0] {
        Some(MapFormat::Watcom)
    } else if found[1] {
        Some(MapFormat::GnuLd)
    } else if found[2] {
        Some(MapFormat::Cc65Map)
    } else if found[3] && (found[4] || found[5]) {
        Some(MapFormat::Tlink)
    } else if found[4] {
        Some(MapFormat::MsLink)
    } else if nm::looks_like_nm(text) {
        Some(MapFormat::Nm)
    } else {
        None
    }
}

fn parse_elf(file: &str, bytes: &[u8]) -> Result<MapFile, MapError> {
    let syms = crate::Symbols::parse_elf(Path::new(file), bytes).map_err(MapError::Symbols)?;
    let mut map = MapFile::new(MapFormat::Elf);
    map.warnings = syms.warnings;
    map.entry = syms.entry.map(|addr| EntryPoint { addr, frame: None });
    for sec in &syms.code_sections {
        map.segments.push(Segment {
            name: sec.name.clone(),
            class: Some("CODE".into()),
            group: None,
            start: sec.addr,
            len: sec.data.len() as u64,
            frame: None,
            code: true,
        });
    }
    map.symbols = syms.table;
    Ok(map)
}

/// Parse a hex number with optional `0x` prefix or `h`/`H` suffix.
pub(crate) fn parse_hex(s: &str) -> Option<u64> {
    let s = s.trim();
    let s = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .or_else(|| s.strip_prefix('$'))
        .unwrap_or(s);
    let s = s
        .strip_suffix('h')
        .or_else(|| s.strip_suffix('H'))
        .unwrap_or(s);
    if s.is_empty() || s.len() > 16 {
        return None;
    }
    u64::from_str_radix(s, 16).ok()
}

/// Parse `SSSS:OOOO` (hex) into (segment, offset).
pub(crate) fn parse_seg_off(s: &str) -> Option<(u16, u32)> {
    let (seg, off) = s.split_once(':')?;
    if seg.is_empty() || seg.len() > 4 || off.is_empty() || off.len() > 8 {
        return None;
    }
    let seg = u16::from_str_radix(seg, 16).ok()?;
    let off = u32::from_str_radix(off, 16).ok()?;
    Some((seg, off))
}

/// Linear address of a real-mode `seg:off`.
pub(crate) fn linear(seg: u16, off: u32) -> u64 {
    u64::from(seg) * 16 + u64::from(off)
}

/// Kind of a symbol at `addr` judged from the segment table: code segments
/// give `Text`, BSS/STACK classes `Bss`, others `Data`; with no segment
/// table every symbol is taken as code.
pub(crate) fn kind_from_segments(segments: &[Segment], addr: u64) -> SymbolKind {
    if segments.is_empty() {
        return SymbolKind::Text;
    }
    let seg = segments
        .iter()
        .filter(|s| s.contains(addr) || (s.len == 0 && s.start == addr))
        .min_by_key(|s| (!s.code, s.start));
    match seg {
        Some(s) if s.code => SymbolKind::Text,
        Some(s) => class_kind(s.class.as_deref().unwrap_or(&s.name)),
        None => SymbolKind::Other,
    }
}

pub(crate) fn class_kind(class: &str) -> SymbolKind {
    let c = class.to_ascii_uppercase();
    if c.contains("CODE") || c.contains("TEXT") {
        SymbolKind::Text
    } else if c.contains("BSS") || c.contains("STACK") {
        SymbolKind::Bss
    } else {
        SymbolKind::Data
    }
}

pub(crate) fn is_code_class(class: &str) -> bool {
    class_kind(class) == SymbolKind::Text
}

/// Name of the code module range containing `addr` (ranges sorted by start).
pub(crate) fn module_at(modules: &[ModuleRange], addr: u64) -> Option<String> {
    modules
        .iter()
        .filter(|m| addr >= m.start && addr < m.end())
        .min_by_key(|m| (!m.code, m.len, m.start))
        .map(|m| m.name.clone())
}

pub(crate) fn symbol(name: &str, addr: u64, kind: SymbolKind) -> Symbol {
    Symbol {
        name: name.to_string(),
        addr,
        size: None,
        kind,
        global: true,
        module: None,
        file: None,
        line: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_forms() {
        assert_eq!(parse_hex("016F8H"), Some(0x16f8));
        assert_eq!(parse_hex("0x00401128"), Some(0x401128));
        assert_eq!(parse_hex("$C000"), Some(0xc000));
        assert_eq!(parse_hex("xyz"), None);
        assert_eq!(parse_seg_off("0170:0010"), Some((0x170, 0x10)));
        assert_eq!(linear(0x170, 0x10), 0x1710);
    }

    #[test]
    fn unknown_format_says_what_was_tried() {
        let err = parse("junk.map", b"hello world\nnothing here\n", None).unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("junk.map: not a map format"), "{msg}");
        for f in MapFormat::ALL {
            assert!(msg.contains(f.signature()), "{msg} lacks {f}");
        }
    }

    #[test]
    fn format_names_round_trip() {
        for f in MapFormat::ALL {
            assert_eq!(MapFormat::from_name(f.name()), Some(f));
        }
    }
}

/// Lines of a symbol table that could not be read: counted, the first few
/// kept with their numbers, reported as one doubt.
#[derive(Default)]
pub(crate) struct Unparsed {
    count: usize,
    first: Vec<String>,
    /// Where the readable symbols are interrupted (one entry per symbol an
    /// unreadable line follows).
    gaps: Vec<UnreadableLine>,
}

impl Unparsed {
    const SHOWN: usize = 3;

    /// An unreadable line outside an address-ordered symbol table.
    pub(crate) fn add(&mut self, lineno: usize, text: &str) {
        self.add_after(lineno, text, None);
    }

    /// An unreadable line of an address-ordered symbol table; `after` is the
    /// address of the last symbol read before it (`None`: none yet). The
    /// symboliser ends that symbol's extent at its known size (or its own
    /// address) instead of the next readable symbol: the unreadable line may
    /// be a symbol in between.
    pub(crate) fn add_after(&mut self, lineno: usize, text: &str, after: Option<u64>) {
        if let Some(a) = after {
            if self.gaps.last().map(|g| g.after) != Some(Some(a)) {
                self.gaps.push(UnreadableLine {
                    line: lineno,
                    after: Some(a),
                });
            }
        }
        self.count += 1;
        if self.first.len() < Self::SHOWN {
            self.first
                .push(format!("line {lineno} `{}`", crate::clip(text.trim(), 60)));
        }
    }

    pub(crate) fn report(self, file: &str, what: &str, map: &mut MapFile) {
        if self.count == 0 {
            return;
        }
        map.unreadable.extend(self.gaps);
        map.doubt(format!(
            "{file}: {} line(s) of the {what} could not be read and were skipped ({}{}); \
             the symbols around them may be wrong",
            self.count,
            self.first.join(", "),
            if self.count > Self::SHOWN {
                ", ..."
            } else {
                ""
            }
        ));
    }
}
