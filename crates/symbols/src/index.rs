//! [`FunctionIndex`]: a dense, precomputed PC -> function-id table for the
//! emulator's per-instruction hot path (one load per instruction; no search,
//! no hashing).
//!
//! How functions are formed from a [`crate::SymbolTable`]:
//! - Functions are the [`SymbolKind::Text`] symbols. Local assembly labels
//!   (names starting with `.`) are merged into the function they sit in,
//!   unless [`IndexOptions::keep_labels`] is set (then each label is its own
//!   function, named `parent:.label`).
//! - Several symbols at one address make one function; its name is chosen
//!   global first, then names not starting with `_`, then shortest, then
//!   alphabetical; the others are kept as `aliases`.
//! - A function ends where the next function starts, or at start + its ELF
//!   size when that is sooner, and never past the end of the index range
//!   it starts in (ROM end). Linker boundary markers (`_etext`, `_edata`,
//!   `_end`, `_bend`, `__bss_start`, ...) end the function before them and
//!   start none.
//! - Addresses no function covers (no symbols at all, gaps, data after
//!   `_etext`) get bucket pseudo-functions when
//!   [`IndexOptions::bucket_size`] is non-zero: one per aligned bucket,
//!   named `<range>_0x<start>` (e.g. `rom_0x001200`, `ram_0xff0000`);
//!   otherwise id 0. Id 0 is always the "no symbol" function `[unknown]`.
//! - Symbol addresses are masked with [`IndexOptions::addr_mask`] (the
//!   68000 has a 24-bit bus: SGDK links RAM at 0xE0FF0000, which is
//!   0xFF0000).
//!
//! With DWARF ([`crate::DebugInfo`]), each indexed address also gets an
//! inline-context id (0 = not inside an inlined function), resolved at build
//! time; [`FunctionIndex::inline_chain`] gives the chain of inlined
//! functions, root first, each with the call site in its caller.

use std::collections::BTreeMap;

use crate::elf::DebugInfo;
use crate::nm::is_local_label;
use crate::{Error, SymbolKind, SymbolTable};

/// Linker-generated boundary symbols: they end the preceding function and
/// are not functions themselves (when they have no size).
pub const BOUNDARY_MARKERS: &[&str] = &[
    "_etext",
    "etext",
    "__etext",
    "_edata",
    "edata",
    "__edata",
    "_end",
    "end",
    "__end",
    "_bend",
    "__bss_start",
    "__bss_end",
    "_bss_end",
    "_stack",
    "__stack",
];

/// A linker boundary marker: a [`BOUNDARY_MARKERS`] name without a size
/// (an ELF function that happens to be called `end` has one).
pub(crate) fn is_boundary_marker(s: &crate::Symbol) -> bool {
    s.size.is_none() && BOUNDARY_MARKERS.contains(&s.name.as_str())
}

/// Where a function comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FunctionOrigin {
    /// Id 0: no symbol, no bucket.
    Unknown,
    /// A text symbol.
    Symbol,
    /// A local label kept as its own function (`keep_labels`).
    Label,
    /// An address bucket pseudo-function.
    Bucket,
}

/// One function of the index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    pub name: String,
    /// First address (masked).
    pub start: u64,
    /// One past the last address.
    pub end: u64,
    pub origin: FunctionOrigin,
    /// Other symbols at the same start address.
    pub aliases: Vec<String>,
    pub global: bool,
    pub module: Option<String>,
    /// Source file/line of the function's start, when known (`nm -l`, or
    /// DWARF's line of the first instruction at `start`).
    pub file: Option<String>,
    pub line: Option<u32>,
}

impl Function {
    /// Does `addr` fall in this function?
    pub fn contains(&self, addr: u64) -> bool {
        addr >= self.start && addr < self.end
    }
}

/// One inlined function of an inline chain.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct InlineFrame {
    /// Name of the inlined function (`?` when DWARF has none).
    pub name: String,
    /// Where its caller calls it (DW_AT_call_file / call_line).
    pub call_file: Option<String>,
    pub call_line: Option<u32>,
}

/// An address range to index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RangeSpec {
    /// Used for bucket names (`rom`, `ram`).
    pub name: String,
    pub start: u64,
    pub end: u64,
}

/// Options for [`FunctionIndex::build`].
#[derive(Clone, Debug)]
pub struct IndexOptions {
    /// Address ranges to index densely.
    pub ranges: Vec<RangeSpec>,
    /// log2 of the address step per entry: 1 = one entry per 2 bytes (68000
    /// instructions are word aligned), 0 = per byte (x86).
    pub shift: u32,
    /// Keep local labels as functions of their own.
    pub keep_labels: bool,
    /// Size of bucket pseudo-functions for uncovered addresses (power of
    /// two); 0 = uncovered addresses get id 0.
    pub bucket_size: u64,
    /// Mask applied to symbol addresses.
    pub addr_mask: u64,
}

/// One densely indexed range.
#[derive(Clone, Debug)]
pub struct IndexRange {
    pub name: String,
    /// First address.
    pub base: u64,
    /// Length in bytes.
    pub len: u64,
    /// Function id per entry (`(addr - base) >> shift`).
    pub ids: Vec<u32>,
    /// Inline-context id per entry; empty when there is no DWARF.
    pub inline: Vec<u32>,
}

/// Dense PC -> function table (see the module documentation).
#[derive(Clone, Debug)]
pub struct FunctionIndex {
    functions: Vec<Function>,
    ranges: Vec<IndexRange>,
    shift: u32,
    chains: Vec<Vec<InlineFrame>>,
}

/// Choose the primary name among symbols at one address.
fn name_rank(global: bool, name: &str) -> (bool, bool, usize, String) {
    (!global, name.starts_with('_'), name.len(), name.to_string())
}

struct Start {
    addr: u64,
    name: String,
    aliases: Vec<String>,
    global: bool,
    module: Option<String>,
    file: Option<String>,
    line: Option<u32>,
    size: Option<u64>,
    origin: FunctionOrigin,
}

impl FunctionIndex {
    /// Build the index from `table` (and DWARF when given).
    pub fn build(
        table: &SymbolTable,
        debug: Option<&DebugInfo>,
        opts: &IndexOptions,
    ) -> Result<FunctionIndex, Error> {
        if opts.shift > 4 {
            return Err(Error::Index(format!(
                "shift {} too large (max 4)",
                opts.shift
            )));
        }
        if opts.bucket_size != 0
            && (!opts.bucket_size.is_power_of_two() || opts.bucket_size < (1 << opts.shift))
        {
            return Err(Error::Index(format!(
                "bucket size {} must be 0 or a power of two >= {}",
                opts.bucket_size,
                1u64 << opts.shift
            )));
        }
        let mut total_entries: u64 = 0;
        for r in &opts.ranges {
            if r.end < r.start {
                return Err(Error::Index(format!(
                    "range {} ends (0x{:x}) before it starts (0x{:x})",
                    r.name, r.end, r.start
                )));
            }
            total_entries += (r.end - r.start) >> opts.shift;
        }
        if total_entries > 64 << 20 {
            return Err(Error::Index(format!(
                "{total_entries} index entries requested; at most {} allowed",
                64u64 << 20
            )));
        }

        // 1. Function starts (merged by address) and boundary markers.
        let mask = opts.addr_mask;
        let mut by_addr: BTreeMap<u64, Vec<&crate::Symbol>> = BTreeMap::new();
        let mut boundaries: Vec<u64> = Vec::new();
        let mut labels: Vec<(u64, &crate::Symbol)> = Vec::new();
        for s in table.symbols() {
            let addr = s.addr & mask;
            let is_label =
                is_local_label(&s.name) && matches!(s.kind, SymbolKind::Text | SymbolKind::Other);
            if is_label {
                if opts.keep_labels {
                    labels.push((addr, s));
                }
                continue;
            }
            if is_boundary_marker(s) {
                if s.kind != SymbolKind::Absolute {
                    boundaries.push(addr);
                }
                continue;
            }
            if s.kind == SymbolKind::Text {
                by_addr.entry(addr).or_default().push(s);
            }
        }
        let mut starts: Vec<Start> = by_addr
            .into_iter()
            .map(|(addr, mut syms)| {
                syms.sort_by_key(|s| name_rank(s.global, &s.name));
                let first = syms[0];
                let mut aliases: Vec<String> = syms[1..].iter().map(|s| s.name.clone()).collect();
                aliases.dedup();
                aliases.retain(|a| *a != first.name);
                Start {
                    addr,
                    name: first.name.clone(),
                    aliases,
                    global: first.global,
                    module: syms.iter().find_map(|s| s.module.clone()),
                    file: syms.iter().find_map(|s| s.file.clone()),
                    line: syms.iter().find_map(|s| s.line),
                    // Largest size among aliases (ELF gives FUNC a size and
                    // NOTYPE aliases none).
                    size: syms.iter().filter_map(|s| s.size).max(),
                    origin: FunctionOrigin::Symbol,
                }
            })
            .collect();
        if opts.keep_labels {
            // Name labels after the function they sit in.
            let plain: Vec<(u64, String)> =
                starts.iter().map(|s| (s.addr, s.name.clone())).collect();
            let mut seen = std::collections::BTreeSet::new();
            for (addr, s) in labels {
                if plain.binary_search_by(|p| p.0.cmp(&addr)).is_ok() || !seen.insert(addr) {
                    continue; // a label at a function start adds nothing
                }
                let idx = plain.partition_point(|p| p.0 <= addr);
                let name = if idx > 0 {
                    format!("{}:{}", plain[idx - 1].1, s.name)
                } else {
                    s.name.clone()
                };
                starts.push(Start {
                    addr,
                    name,
                    aliases: Vec::new(),
                    global: false,
                    module: s.module.clone(),
                    file: s.file.clone(),
                    line: s.line,
                    size: None,
                    origin: FunctionOrigin::Label,
                });
            }
            starts.sort_by(|a, b| a.addr.cmp(&b.addr).then(a.origin.cmp(&b.origin)));
        }
        boundaries.sort_unstable();
        boundaries.dedup();

        // 2. Ends: next start, boundary marker, or ELF size, whichever first.
        let mut functions = vec![Function {
            name: "[unknown]".into(),
            start: 0,
            end: 0,
            origin: FunctionOrigin::Unknown,
            aliases: Vec::new(),
            global: false,
            module: None,
            file: None,
            line: None,
        }];
        let range_end_for = |addr: u64| -> u64 {
            opts.ranges
                .iter()
                .find(|r| addr >= r.start && addr < r.end)
                .map(|r| r.end)
                .unwrap_or(u64::MAX)
        };
        for i in 0..starts.len() {
            let s = &starts[i];
            let mut end = starts.get(i + 1).map(|n| n.addr).unwrap_or(u64::MAX);
            let b = boundaries.partition_point(|&b| b <= s.addr);
            if let Some(&bnd) = boundaries.get(b) {
                end = end.min(bnd);
            }
            if let Some(size) = s.size {
                end = end.min(s.addr.saturating_add(size));
            }
            // No function runs past the end of the range it starts in (the
            // last ROM symbol must not swallow RAM).
            end = end.min(range_end_for(s.addr));
            if end == u64::MAX {
                end = s.addr.saturating_add(1 << opts.shift);
            }
            functions.push(Function {
                name: s.name.clone(),
                start: s.addr,
                end,
                origin: s.origin,
                aliases: s.aliases.clone(),
                global: s.global,
                module: s.module.clone(),
                file: s.file.clone(),
                line: s.line,
            });
        }

        // 3. Dense tables.
        let mut ranges = Vec::with_capacity(opts.ranges.len());
        let mut buckets: BTreeMap<u64, u32> = BTreeMap::new();
        let mut bucket_functions: Vec<Function> = Vec::new();
        let first_bucket_id = functions.len() as u32;
        for r in &opts.ranges {
            let n = ((r.end - r.start) >> opts.shift) as usize;
            let mut ids = vec![0u32; n];
            // Functions sorted by start; walk them alongside the addresses.
            let mut fi = functions[1..].partition_point(|f| f.end <= r.start) + 1;
            for (e, slot) in ids.iter_mut().enumerate() {
                let addr = r.start + ((e as u64) << opts.shift);
                while fi < functions.len() && functions[fi].end <= addr {
                    fi += 1;
                }
                if fi < functions.len() && functions[fi].contains(addr) {
                    *slot = fi as u32;
                } else if opts.bucket_size > 0 {
                    let b = addr & !(opts.bucket_size - 1);
                    let next = first_bucket_id + bucket_functions.len() as u32;
                    let id = *buckets.entry(b).or_insert_with(|| {
                        bucket_functions.push(Function {
                            name: format!("{}_0x{:06x}", r.name, b),
                            start: b,
                            end: b + opts.bucket_size,
                            origin: FunctionOrigin::Bucket,
                            aliases: Vec::new(),
                            global: false,
                            module: None,
                            file: None,
                            line: None,
                        });
                        next
                    });
                    *slot = id;
                }
            }
            ranges.push(IndexRange {
                name: r.name.clone(),
                base: r.start,
                len: r.end - r.start,
                ids,
                inline: Vec::new(),
            });
        }
        functions.extend(bucket_functions);
        if functions.len() > u32::MAX as usize {
            return Err(Error::Index("too many functions".into()));
        }

        let mut index = FunctionIndex {
            functions,
            ranges,
            shift: opts.shift,
            chains: vec![Vec::new()],
        };
        if let Some(debug) = debug {
            // Source location of each function's first instruction, where
            // the symbol source gave none.
            for f in index.functions.iter_mut() {
                if matches!(f.origin, FunctionOrigin::Symbol | FunctionOrigin::Label)
                    && f.file.is_none()
                {
                    if let Some(loc) = debug.location(f.start) {
                        f.file = Some(loc.file);
                        f.line = loc.line;
                    }
                }
            }
            index.resolve_inlines(debug, mask);
        }
        Ok(index)
    }

    /// Fill the per-address inline-context tables from DWARF. Only addresses
    /// inside symbol functions are queried.
    fn resolve_inlines(&mut self, debug: &DebugInfo, mask: u64) {
        let mut chain_ids: BTreeMap<Vec<InlineFrame>, u32> = BTreeMap::new();
        let shift = self.shift;
        // Addresses no inlined subroutine covers have at most one frame
        // (the `frames.len() < 2` skip below): not asked. The ranges are
        // sorted and disjoint; `cursor` follows the (ascending) masked
        // address and restarts when it falls back (a new index range, or
        // the mask wrapping).
        let inline_ranges = debug.inline_ranges();
        let mut cursor = 0usize;
        let mut last = 0u64;
        for r in 0..self.ranges.len() {
            let n = self.ranges[r].ids.len();
            let mut inline = vec![0u32; n];
            let mut any = false;
            for (e, slot) in inline.iter_mut().enumerate() {
                let id = self.ranges[r].ids[e] as usize;
                if !matches!(
                    self.functions[id].origin,
                    FunctionOrigin::Symbol | FunctionOrigin::Label
                ) {
                    continue;
                }
                let addr = self.ranges[r].base + ((e as u64) << shift);
                // DWARF addresses are the ELF's (unmasked) ones; for the
                // 68000, code in ROM is at the same address either way.
                let probe = addr & mask;
                if let Some(ir) = inline_ranges {
                    if probe < last {
                        cursor = 0;
                    }
                    last = probe;
                    while cursor < ir.len() && ir[cursor].1 <= probe {
                        cursor += 1;
                    }
                    if cursor == ir.len() || ir[cursor].0 > probe {
                        continue;
                    }
                }
                let frames = debug.frames(probe);
                if frames.len() < 2 {
                    continue;
                }
                // frames: innermost first; frame k (k < last) is inlined,
                // called from the location recorded in frame k + 1.
                let mut chain: Vec<InlineFrame> = Vec::with_capacity(frames.len() - 1);
                for k in (0..frames.len() - 1).rev() {
                    let call = frames[k + 1].location.as_ref();
                    chain.push(InlineFrame {
                        name: frames[k].function.clone().unwrap_or_else(|| "?".into()),
                        call_file: call.map(|l| l.file.clone()),
                        call_line: call.and_then(|l| l.line),
                    });
                }
                let next = self.chains.len() as u32;
                let cid = *chain_ids.entry(chain.clone()).or_insert_with(|| {
                    self.chains.push(chain);
                    next
                });
                *slot = cid;
                any = true;
            }
            if any {
                self.ranges[r].inline = inline;
            }
        }
    }

    /// Function id at `addr` (0 = none). One range check and one load per
    /// range (ranges are few: ROM, RAM).
    #[inline]
    pub fn lookup(&self, addr: u64) -> u32 {
        for r in &self.ranges {
            let off = addr.wrapping_sub(r.base);
            if off < r.len {
                return r.ids[(off >> self.shift) as usize];
            }
        }
        0
    }

    /// Inline-context id at `addr` (0 = not in an inlined function or no
    /// DWARF).
    #[inline]
    pub fn inline_at(&self, addr: u64) -> u32 {
        for r in &self.ranges {
            let off = addr.wrapping_sub(r.base);
            if off < r.len {
                return match r.inline.get((off >> self.shift) as usize) {
                    Some(&c) => c,
                    None => 0,
                };
            }
        }
        0
    }

    /// The inlined functions of context `id`, root first (empty for 0).
    pub fn inline_chain(&self, id: u32) -> &[InlineFrame] {
        self.chains
            .get(id as usize)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// Number of distinct inline contexts (including 0).
    pub fn inline_chain_count(&self) -> usize {
        self.chains.len()
    }

    /// Function by id.
    pub fn function(&self, id: u32) -> &Function {
        &self.functions[id as usize]
    }

    /// All functions; index = id.
    pub fn functions(&self) -> &[Function] {
        &self.functions
    }

    /// The function at `addr`.
    pub fn function_at(&self, addr: u64) -> &Function {
        self.function(self.lookup(addr))
    }

    /// Id of the first function named `name` (symbol functions, also by
    /// alias).
    pub fn find(&self, name: &str) -> Option<u32> {
        self.functions
            .iter()
            .position(|f| f.name == name || f.aliases.iter().any(|a| a == name))
            .map(|i| i as u32)
    }

    /// The dense ranges (for callers that want the raw slices).
    pub fn ranges(&self) -> &[IndexRange] {
        &self.ranges
    }

    /// log2 of the address step per entry.
    pub fn shift(&self) -> u32 {
        self.shift
    }
}

/// The name without GCC clone suffixes: `main.isra.0` -> `main`,
/// `SYS_doVBlankProcessEx.constprop.57` -> `SYS_doVBlankProcessEx`,
/// `releaseSprite.part.1.lto_priv.72` -> `releaseSprite`, `f.cold` -> `f`.
pub fn clone_base_name(name: &str) -> &str {
    const SUFFIXES: &[&str] = &[
        ".isra",
        ".constprop",
        ".part",
        ".lto_priv",
        ".cold",
        ".clone",
        ".localalias",
        ".specialized",
    ];
    // Every suffix starts with a dot: a name without one has none (most
    // names; this runs for every function at start-up).
    if name.starts_with('.') || !name.contains('.') {
        return name;
    }
    let mut cut = name.len();
    for suf in SUFFIXES {
        if let Some(i) = name.find(suf) {
            let after = &name[i + suf.len()..];
            if after.is_empty() || after.starts_with('.') {
                cut = cut.min(i);
            }
        }
    }
    &name[..cut]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Symbol;

    fn sym(name: &str, addr: u64, size: Option<u64>, kind: SymbolKind, global: bool) -> Symbol {
        Symbol {
            name: name.into(),
            addr,
            size,
            kind,
            global,
            module: None,
            file: None,
            line: None,
        }
    }

    fn opts() -> IndexOptions {
        IndexOptions {
            ranges: vec![RangeSpec {
                name: "rom".into(),
                start: 0,
                end: 0x400,
            }],
            shift: 1,
            keep_labels: false,
            bucket_size: 0x100,
            addr_mask: u64::MAX,
        }
    }

    #[test]
    fn hand_made_table() {
        use SymbolKind::*;
        let table = SymbolTable::new(vec![
            sym("_local_alias", 0x100, None, Text, false),
            sym("_Global", 0x100, None, Text, true),
            sym("func", 0x100, None, Text, true),
            sym(".inner", 0x120, None, Other, false),
            sym("sized", 0x200, Some(0x10), Text, true),
            sym("end", 0x280, Some(0x20), Text, true), // a real function
            sym("table", 0x2a0, Some(0x40), Data, true),
            sym("last", 0x300, None, Text, true),
            sym("_etext", 0x380, None, Text, true),
            sym("far", 0x1000, None, Text, true),
        ]);
        let ix = FunctionIndex::build(&table, None, &opts()).unwrap();
        let f = ix.function_at(0x120);
        // Global first, then no leading underscore: `func`.
        assert_eq!(f.name, "func");
        assert_eq!(f.aliases, ["_Global", "_local_alias"]);
        assert_eq!((f.start, f.end), (0x100, 0x200));
        // A size ends the function early: the gap is a bucket.
        assert_eq!(ix.function_at(0x20e).name, "sized");
        assert_eq!(ix.function_at(0x210).name, "rom_0x000200");
        assert_eq!(ix.function_at(0x210).origin, FunctionOrigin::Bucket);
        assert_eq!(ix.function_at(0x290).name, "end");
        // `table` is data: not a function.
        assert_eq!(ix.function_at(0x2a0).origin, FunctionOrigin::Bucket);
        // `_etext` ends `last`; past it, buckets.
        assert_eq!(ix.function_at(0x37e).name, "last");
        assert_eq!(ix.function_at(0x380).name, "rom_0x000300");
        // Outside the ranges: id 0; `far` is listed with a minimal extent.
        assert_eq!(ix.lookup(0x1000), 0);
        let far = &ix.functions()[ix.find("far").unwrap() as usize];
        assert_eq!((far.start, far.end), (0x1000, 0x1002));
        // Before the first symbol: a bucket.
        assert_eq!(ix.function_at(0).name, "rom_0x000000");

        let mut o = opts();
        o.keep_labels = true;
        let ix = FunctionIndex::build(&table, None, &o).unwrap();
        assert_eq!(ix.function_at(0x11e).name, "func");
        assert_eq!(ix.function_at(0x120).name, "func:.inner");
        assert_eq!(ix.function_at(0x1fe).name, "func:.inner");
    }

    #[test]
    fn masking_and_options() {
        let table = SymbolTable::new(vec![sym(
            "ram_code",
            0xE0FF_0100,
            Some(0x20),
            SymbolKind::Text,
            true,
        )]);
        // A 24-bit address space with RAM at 0xFF0000 (a 68000 console).
        let md = IndexOptions {
            ranges: vec![
                RangeSpec {
                    name: "rom".into(),
                    start: 0,
                    end: 0x200,
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
        };
        let ix = FunctionIndex::build(&table, None, &md).unwrap();
        assert_eq!(ix.function_at(0xFF0110).name, "ram_code");
        assert_eq!(ix.function_at(0xFF0120).name, "ram_0xff0100");
        let mut o = opts();
        o.ranges[0].end = 1 << 40;
        assert!(FunctionIndex::build(&table, None, &o).is_err());
        let mut o = opts();
        o.shift = 9;
        assert!(FunctionIndex::build(&table, None, &o).is_err());
    }
}
