//! From return addresses to call sites: the architecture's call-site
//! adjustment, symbol look-up and grouping (by function, line or address).

use retroprof_profile::Frame;
use retroprof_symbols::{SymbolKind, SymbolTable};

/// The processor that wrote the log; decides where the call instruction
/// is relative to the logged return address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Arch {
    /// `jal` + delay slot: the call is at RA - 8 (formats.md).
    Mips,
    /// JSR/BSR are 2..6 bytes before RA: RA - 2 lies inside the call
    /// (formats.md).
    M68k,
    /// Not known: RA - 1 still lies inside the call on any machine.
    Unknown,
}

impl Arch {
    pub fn parse(s: &str) -> Option<Arch> {
        match s.to_ascii_lowercase().as_str() {
            "mips" | "psp" | "allegrex" => Some(Arch::Mips),
            "m68k" | "68000" | "68k" | "megadrive" | "genesis" => Some(Arch::M68k),
            _ => None,
        }
    }

    /// From the ELF header's `e_machine` (4 = EM_68K, 8 = EM_MIPS,
    /// 10 = EM_MIPS_RS3_LE).
    pub fn from_elf_machine(machine: u16) -> Option<Arch> {
        match machine {
            4 => Some(Arch::M68k),
            8 | 10 => Some(Arch::Mips),
            _ => None,
        }
    }

    /// Reads `e_machine` from the first bytes of an ELF file.
    pub fn from_elf_header(head: &[u8]) -> Option<Arch> {
        if head.len() < 20 || &head[..4] != b"\x7fELF" {
            return None;
        }
        let m = match head[5] {
            1 => u16::from_le_bytes([head[18], head[19]]),
            2 => u16::from_be_bytes([head[18], head[19]]),
            _ => return None,
        };
        Arch::from_elf_machine(m)
    }

    /// The address to look up for a call that returns to `ra`.
    pub fn lookup_addr(self, ra: u64) -> u64 {
        match self {
            Arch::Mips => ra.wrapping_sub(8),
            Arch::M68k => ra.wrapping_sub(2),
            Arch::Unknown => ra.wrapping_sub(1),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Arch::Mips => "mips",
            Arch::M68k => "m68k",
            Arch::Unknown => "unknown",
        }
    }
}

/// How allocations are grouped into call sites.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Grouping {
    Function,
    Line,
    Address,
}

impl Grouping {
    pub fn parse(s: &str) -> Option<Grouping> {
        match s {
            "function" => Some(Grouping::Function),
            "line" => Some(Grouping::Line),
            "address" => Some(Grouping::Address),
            _ => None,
        }
    }
}

/// Anything that can turn a code address into source frames.
pub trait Resolve {
    /// The frames at code address `addr` (already adjusted to lie inside
    /// the call instruction), INNERMOST first: inlined functions first,
    /// then the function that contains them. Empty when unknown.
    fn resolve(&self, addr: u64) -> Vec<Frame>;
}

impl Resolve for SymbolTable {
    fn resolve(&self, addr: u64) -> Vec<Frame> {
        match self.lookup(addr, SymbolKind::Text) {
            Some(sym) => vec![Frame {
                name: sym.name.clone(),
                addr: Some(sym.addr),
                file: sym.file.clone(),
                line: sym.line,
                module: sym.module.clone(),
                inlined: false,
            }],
            None => Vec::new(),
        }
    }
}

impl<F: Fn(u64) -> Vec<Frame>> Resolve for F {
    fn resolve(&self, addr: u64) -> Vec<Frame> {
        self(addr)
    }
}

/// Turns call stacks (return addresses, caller first) into the frames that
/// key a call site.
pub struct Symbolizer {
    pub arch: Arch,
    pub grouping: Grouping,
    resolver: Option<Box<dyn Resolve>>,
}

impl Default for Symbolizer {
    fn default() -> Self {
        Symbolizer::new(Arch::Unknown, Grouping::Function, None)
    }
}

impl Symbolizer {
    pub fn new(arch: Arch, grouping: Grouping, resolver: Option<Box<dyn Resolve>>) -> Self {
        Symbolizer {
            arch,
            grouping,
            resolver,
        }
    }

    pub fn has_symbols(&self) -> bool {
        self.resolver.is_some()
    }

    /// Full frames (with lines) for one return address, innermost first;
    /// an address-only frame when nothing is known.
    pub fn frames_for(&self, ra: u64) -> Vec<Frame> {
        let frames = match &self.resolver {
            Some(r) => r.resolve(self.arch.lookup_addr(ra)),
            None => Vec::new(),
        };
        if frames.is_empty() {
            vec![Frame {
                name: format!("0x{ra:08x}"),
                addr: Some(ra),
                ..Frame::default()
            }]
        } else {
            frames
        }
    }

    /// The key frames of a call site, leaf first, for the grouping:
    /// `function` keeps names only, `line` keeps file and line, `address`
    /// puts the return address in each frame's `addr`.
    pub fn site_frames(&self, stack: &[u64]) -> Vec<Frame> {
        let mut out = Vec::with_capacity(stack.len());
        for &ra in stack {
            let frames = self.frames_for(ra);
            let n = frames.len();
            for (i, mut f) in frames.into_iter().enumerate() {
                let unresolved = f.file.is_none() && f.name.starts_with("0x");
                match self.grouping {
                    Grouping::Function => {
                        if !unresolved {
                            f.line = None;
                            f.file = None;
                        }
                    }
                    Grouping::Line => {}
                    Grouping::Address => {
                        // One site per return address: name it with it.
                        if i == 0 && !unresolved {
                            f.name = format!("{} @0x{ra:x}", f.name);
                        }
                        if i + 1 == n {
                            f.addr = Some(ra);
                        }
                    }
                }
                out.push(f);
            }
        }
        out
    }
}

/// One-line description of a frame: `name (file:line)`.
pub fn describe_frame(f: &Frame) -> String {
    let mut s = f.name.clone();
    match (&f.file, f.line) {
        (Some(file), Some(line)) => s.push_str(&format!(" ({file}:{line})")),
        (Some(file), None) => s.push_str(&format!(" ({file})")),
        _ => {}
    }
    if f.inlined {
        s.push_str(" [inlined]");
    }
    s
}

/// A symbol table with DWARF (from an ELF file) when available.
pub struct SymbolFile {
    pub table: SymbolTable,
    pub debug: Option<retroprof_symbols::DebugInfo>,
    /// From the ELF header, when the file is an ELF.
    pub arch: Option<Arch>,
    pub warnings: Vec<String>,
}

impl SymbolFile {
    /// Loads an ELF file (symbols, DWARF lines and inlining) or a symbol
    /// listing / linker map (nm, GNU ld, MS LINK, ...), by content.
    pub fn load(path: &std::path::Path) -> Result<SymbolFile, crate::Error> {
        let limit = retroprof_symbols::input::MAX_SYMBOL_FILE_BYTES;
        let bytes = retroprof_symbols::input::read_limited(path, limit).map_err(|source| {
            crate::Error::Io {
                path: path.display().to_string(),
                source,
            }
        })?;
        if bytes.starts_with(b"\x7fELF") {
            let arch = Arch::from_elf_header(&bytes);
            let s = retroprof_symbols::Symbols::parse_elf(path, &bytes)
                .map_err(|e| crate::Error::Invalid(e.to_string()))?;
            return Ok(SymbolFile {
                table: s.table,
                debug: s.debug,
                arch,
                warnings: s.warnings,
            });
        }
        let map = retroprof_symbols::maps::parse(&path.display().to_string(), &bytes, None)
            .map_err(|e| crate::Error::Invalid(e.to_string()))?;
        Ok(SymbolFile {
            table: map.symbols,
            debug: None,
            arch: None,
            warnings: map.warnings,
        })
    }
}

impl Resolve for SymbolFile {
    fn resolve(&self, addr: u64) -> Vec<Frame> {
        let sym = self.table.lookup(addr, SymbolKind::Text);
        if let Some(debug) = &self.debug {
            let dwarf = debug.frames(addr);
            if !dwarf.is_empty() {
                let n = dwarf.len();
                return dwarf
                    .into_iter()
                    .enumerate()
                    .map(|(i, d)| {
                        let physical = i + 1 == n;
                        let name = d
                            .function
                            .or_else(|| physical.then(|| sym.map(|s| s.name.clone())).flatten())
                            .unwrap_or_else(|| format!("0x{addr:08x}"));
                        Frame {
                            name,
                            addr: if physical { sym.map(|s| s.addr) } else { None },
                            file: d.location.as_ref().map(|l| l.file.clone()),
                            line: d.location.as_ref().and_then(|l| l.line),
                            module: None,
                            inlined: !physical,
                        }
                    })
                    .collect();
            }
        }
        self.table.resolve(addr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use retroprof_symbols::Symbol;

    fn sym(name: &str, addr: u64) -> Symbol {
        Symbol {
            name: name.into(),
            addr,
            size: None,
            kind: SymbolKind::Text,
            global: true,
            module: None,
            file: None,
            line: None,
        }
    }

    #[test]
    fn mips_call_site_is_ra_minus_8() {
        // RA lands exactly at the start of the next function: only RA-8
        // finds the caller.
        let t = SymbolTable::new(vec![sym("caller", 0x1000), sym("next", 0x1010)]);
        let s = Symbolizer::new(Arch::Mips, Grouping::Function, Some(Box::new(t.clone())));
        assert_eq!(s.site_frames(&[0x1010])[0].name, "caller");
        let s = Symbolizer::new(Arch::M68k, Grouping::Function, Some(Box::new(t)));
        assert_eq!(s.site_frames(&[0x1010])[0].name, "caller");
        assert_eq!(s.site_frames(&[0x1012])[0].name, "next");
    }

    #[test]
    fn elf_machine() {
        let mut h = vec![0u8; 20];
        h[..4].copy_from_slice(b"\x7fELF");
        h[5] = 2;
        h[19] = 4;
        assert_eq!(Arch::from_elf_header(&h), Some(Arch::M68k));
        h[5] = 1;
        h[18] = 8;
        h[19] = 0;
        assert_eq!(Arch::from_elf_header(&h), Some(Arch::Mips));
    }
}
