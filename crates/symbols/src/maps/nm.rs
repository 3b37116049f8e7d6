//! `nm` listings as a map format: `nm -n` (SGDK `symbol.txt`), with or
//! without `-S` sizes and `-l` `\tfile:line` suffixes.
//!
//! ```text
//! 0000c758 T VDP_waitVBlank
//! 0000c7a0 00000040 t helper<TAB>/src/vdp.c:120
//!          U _hard_reset
//! ```
//! Lines are parsed by the crate's nm loader ([`crate::nm`]): local assembly
//! labels (`.loop`) get kind `Other` (they belong to the function they sit
//! in). On top of it, linker boundary markers typed `T` are not functions,
//! and `_etext` gives the end of the code.

use super::{MapError, MapFile, MapFormat, Segment};

/// Names of the end-of-code marker.
const ETEXT: [&str; 3] = ["_etext", "etext", "__etext"];
/// Linker boundary markers that nm may type `T`.
const MARKERS: [&str; 12] = [
    "_etext",
    "etext",
    "__etext",
    "_edata",
    "edata",
    "__edata",
    "_end",
    "end",
    "__end",
    "_stext",
    "_bend",
    "__bss_end",
];
use crate::{SymbolKind, SymbolTable};

fn is_hex_word(s: &str) -> bool {
    (4..=16).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

fn is_type(s: &str) -> bool {
    s.len() == 1 && s.as_bytes()[0].is_ascii_alphabetic() || s == "?" || s == "-"
}

/// True when most of the first non-empty lines look like nm output.
pub(super) fn looks_like_nm(text: &str) -> bool {
    let mut good = 0;
    let mut seen = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()).take(20) {
        seen += 1;
        let toks: Vec<&str> = line.split_whitespace().collect();
        let ok = match toks.as_slice() {
            [a, t, _, ..] if is_hex_word(a) && is_type(t) => true,
            [a, s, t, _, ..] if is_hex_word(a) && is_hex_word(s) && is_type(t) => true,
            [t, _] if *t == "U" || *t == "w" || *t == "v" => true,
            _ => false,
        };
        if ok {
            good += 1;
        }
    }
    seen > 0 && good * 10 >= seen * 8
}

pub(super) fn parse(file: &str, text: &str) -> Result<MapFile, MapError> {
    // The line parser is the crate's own nm loader (crate::nm).
    let listing = crate::nm::parse(file, text).map_err(MapError::Symbols)?;
    let mut map = MapFile::new(MapFormat::Nm);
    let mut syms = listing.symbols;
    let mut etext: Option<u64> = None;
    for s in &mut syms {
        if s.kind != SymbolKind::Text {
            continue;
        }
        if ETEXT.contains(&s.name.as_str()) {
            etext = Some(etext.map_or(s.addr, |e: u64| e.min(s.addr)));
        }
        if MARKERS.contains(&s.name.as_str()) {
            // Linker boundary markers typed `T` (SGDK's `_edata` sits at a
            // RAM address): not functions.
            s.kind = SymbolKind::Other;
        }
    }
    // `_etext` bounds the code: one synthetic code segment from the first
    // code symbol to it, so the last function does not run on forever.
    if let Some(end) = etext {
        let start = syms
            .iter()
            .filter(|s| s.kind == SymbolKind::Text && s.addr < end)
            .map(|s| s.addr)
            .min();
        if let Some(start) = start {
            map.segments.push(Segment {
                name: ".text".into(),
                class: Some("CODE".into()),
                group: None,
                start,
                len: end - start,
                frame: None,
                code: true,
            });
        }
    }
    map.symbols = SymbolTable::new(syms);
    Ok(map)
}
