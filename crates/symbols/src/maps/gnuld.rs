//! GNU ld `-Map` output.
//!
//! ```text
//! Discarded input sections          (skipped: nothing here is linked)
//!  .text          0x00000000        0x0 crt0.o
//! Memory Configuration
//! ...
//! Linker script and memory map
//!
//! .text           0x00401000      0x2a4
//!  *(.text)
//!  .text          0x00401128       0x91 main.o
//!                 0x00401128                main
//!  .text.startup
//!                 0x004011c0       0x40 lib.a(util.o)
//!                 0x00401000                PROVIDE (__text_start = .)
//! ```
//! Output sections (column 0) become segments; input-section rows give each
//! object file's range (modules); the symbol rows under them are symbols,
//! typed by the output section they sit in. Assignments (`. = ...`,
//! `PROVIDE (...)`, `sym = ...`) are not symbols.

use super::{parse_hex, symbol, MapError, MapFile, MapFormat, ModuleRange, Segment};
use crate::{SymbolKind, SymbolTable};

fn section_kind(name: &str) -> SymbolKind {
    let n = name.trim_start_matches('.');
    if n.starts_with("text")
        || n.starts_with("init")
        || n.starts_with("fini")
        || n.starts_with("plt")
        || n == "code"
        || n.starts_with("CODE")
    {
        SymbolKind::Text
    } else if n.starts_with("bss")
        || n.starts_with("sbss")
        || n == "COMMON"
        || n.starts_with("noinit")
    {
        SymbolKind::Bss
    } else {
        SymbolKind::Data
    }
}

pub(super) fn parse(file: &str, text: &str) -> Result<MapFile, MapError> {
    let mut map = MapFile::new(MapFormat::GnuLd);
    let mut started = false;
    // Output section we are in, its kind.
    let mut out_kind = SymbolKind::Other;
    let mut out_name = String::new();
    // Input section name waiting for its address (wrapped long names).
    // (name, line number): a wrapped name whose address row has not come.
    let mut pending_input: Option<(String, usize)> = None;
    let mut pending_output: Option<(String, usize)> = None;
    let mut current_module: Option<String> = None;
    let mut syms = Vec::new();
    let mut ended = false;
    let mut unparsed = super::Unparsed::default();
    for (i, raw) in text.lines().enumerate() {
        let lineno = i + 1;
        let line = raw.trim_end_matches('\r');
        if !started {
            if line.starts_with("Linker script and memory map") {
                started = true;
            }
            continue;
        }
        if line.trim().is_empty() {
            continue;
        }
        if line.starts_with("OUTPUT(") || line.starts_with("Cross Reference Table") {
            ended = true;
            break;
        }
        let toks: Vec<&str> = line.split_whitespace().collect();
        let col0 = !line.starts_with(' ');
        // A wrapped name must be followed by its address row; one that is
        // not could not be read (issue 21: a damaged row left the name
        // alone on a line).
        let wrapped_out = pending_output.take();
        let mut wrapped_in = pending_input.take();
        let takes_input =
            !col0 && toks[0].starts_with("0x") && toks.len() >= 3 && hex(toks[1]).is_some();
        if !takes_input {
            if let Some((name, at)) = wrapped_in.take() {
                unparsed.add_after(at, &name, last_addr(&syms));
            }
        }
        // An output section with nothing in it is its name alone followed by
        // its input patterns (`.interp` then ` *(.interp)`).
        let empty_section = !col0 && toks[0].starts_with('*') && toks[0].contains('(');
        let completes_out = toks.len() >= 2 && hex(toks[0]).is_some() && hex(toks[1]).is_some();
        if !empty_section && (col0 || !completes_out) {
            if let Some((name, at)) = &wrapped_out {
                unparsed.add_after(*at, name, last_addr(&syms));
            }
        }
        if col0 {
            // Output section: `.text  0xADDR  0xSIZE` or a wrapped name.
            if toks[0].starts_with('.')
                || toks[0]
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_')
            {
                if toks.len() >= 3 {
                    if let (Some(a), Some(l)) = (hex(toks[1]), hex(toks[2])) {
                        out_section(&mut map, toks[0], a, l);
                        out_name = toks[0].to_string();
                        out_kind = section_kind(&out_name);
                        continue;
                    }
                }
                if toks.len() == 1 {
                    pending_output = Some((toks[0].to_string(), lineno));
                    continue;
                }
            }
            // LOAD, START GROUP, `Address of section .text set to 0x1000`
            // (from -Ttext), script commands (`TARGET(...)`), the
            // `/DISCARD/` section: documented, nothing to read. Anything
            // else at column 0 is an output-section row that cannot be read.
            let known = line.starts_with("LOAD ")
                || line.starts_with("Address of section ")
                || line.starts_with("START GROUP")
                || line.starts_with("END GROUP")
                || toks[0] == "/DISCARD/"
                || (toks[0].contains('(') && !toks[0].starts_with(|c: char| c.is_ascii_digit()));
            if !known {
                unparsed.add_after(lineno, line, last_addr(&syms));
            }
            continue;
        }
        if let Some((name, _)) = wrapped_out {
            if toks.len() >= 2 {
                if let (Some(a), Some(l)) = (hex(toks[0]), hex(toks[1])) {
                    out_section(&mut map, &name, a, l);
                    out_name = name;
                    out_kind = section_kind(&out_name);
                    continue;
                }
            }
        }
        // ` .text  0xADDR  0xSIZE  file.o` (input section) or wrapped name
        // on its own line followed by `   0xADDR 0xSIZE file.o`.
        let second = line.as_bytes().get(1).copied();
        if second != Some(b' ') && !toks[0].starts_with("0x") {
            let name = toks[0];
            if name.starts_with('*') {
                // `*(.text)` patterns and `*fill*` rows.
                continue;
            }
            if toks.len() == 1 {
                if !name.contains('(') {
                    // `KEEP(*(.init))` and the like are script statements.
                    pending_input = Some((name.to_string(), lineno));
                }
                continue;
            }
            if toks.len() >= 3 && toks[1].starts_with("0x") {
                let (Some(a), Some(l)) = (hex(toks[1]), hex(toks[2])) else {
                    // An address or size too long for 64 bits (issue 21).
                    unparsed.add_after(lineno, line, last_addr(&syms));
                    continue;
                };
                if toks[3..].iter().any(|t| t.contains("0x")) {
                    // Two rows run together (`file.o(  0xADDR  name`).
                    unparsed.add_after(lineno, line, last_addr(&syms));
                } else if toks.len() >= 4 {
                    input_section(&mut map, name, a, l, &toks[3..], &mut current_module);
                }
            } else if toks.len() >= 2
                && toks[1].starts_with(|c: char| c.is_ascii_digit())
                && hex(toks[1]).is_none()
            {
                // ` .text  18446744073709551616 ...`: a number where the
                // address goes that is not one. Script statements
                // (`LONG 0x0`, `FILL mask 0x00`) have readable numbers.
                unparsed.add_after(lineno, line, last_addr(&syms));
            }
            continue;
        }
        if !toks[0].starts_with("0x") {
            // A deeply indented row is an address row (`0xADDRESS ...`) or
            // `[!provide]  PROVIDE (...)`; anything else is one whose
            // address cannot be read.
            if !toks[0].starts_with('[') {
                unparsed.add_after(lineno, line, last_addr(&syms));
            }
            continue;
        }
        if toks[0].starts_with("0x") && hex(toks[0]).is_none() {
            // `0x` followed by more than 64 bits or by non-hex (issue 21:
            // a huge number here was accepted without a word).
            unparsed.add_after(lineno, line, last_addr(&syms));
            continue;
        }
        if toks[0].starts_with("0x") {
            if let Some((name, _)) = wrapped_in.take() {
                if toks.len() >= 3 {
                    if let (Some(a), Some(l)) = (hex(toks[0]), hex(toks[1])) {
                        input_section(&mut map, &name, a, l, &toks[2..], &mut current_module);
                        continue;
                    }
                }
            }
            // `0xADDR 0xSIZE file` continuation, `0xSIZE (size before
            // relaxing)`, assignments (`0xADDR name = expr`, `PROVIDE (...)`,
            // `ASSERT (...)`) have more tokens; other 3+ token rows are
            // symbol rows that cannot be read.
            if toks.len() >= 3 {
                let keyword = toks[1].bytes().all(|b| b.is_ascii_uppercase() || b == b'_')
                    && toks[2].starts_with('(');
                if !(line.contains('=')
                    || hex(toks[1]).is_some()
                    || (toks[1] == "(size" && toks.get(2) == Some(&"before"))
                    || keyword)
                {
                    unparsed.add_after(lineno, line, last_addr(&syms));
                }
                continue;
            }
            if toks.len() == 1 || (toks.len() == 2 && toks[1].contains('=')) {
                // An address alone, or `0xADDR a=b` (ld writes assignments
                // as `name = expr`, with spaces): a damaged symbol row.
                unparsed.add_after(lineno, line, last_addr(&syms));
                continue;
            }
            // Symbol row: `0xADDR  name` (exactly two tokens).
            if toks.len() == 2 && !toks[1].starts_with('.') {
                let Some(a) = hex(toks[0]) else {
                    unparsed.add_after(lineno, line, last_addr(&syms));
                    continue;
                };
                {
                    let kind = if out_kind == SymbolKind::Other {
                        SymbolKind::Text
                    } else {
                        out_kind
                    };
                    let mut s = symbol(toks[1], a, kind);
                    s.module = current_module.clone();
                    syms.push(s);
                }
            }
        }
    }
    if !started {
        return Err(MapError::Invalid {
            file: file.to_string(),
            msg: "no `Linker script and memory map` header".into(),
        });
    }
    let _ = out_name;
    for (name, at) in pending_input.into_iter().chain(pending_output) {
        unparsed.add_after(at, &name, last_addr(&syms));
    }
    unparsed.report(file, "memory map", &mut map);
    if !ended {
        map.doubt(format!(
            "{file}: no `OUTPUT(...)` line after the memory map: the map looks cut short \
             (symbols after the cut are missing; their samples go to the last one listed)"
        ));
    }
    map.modules
        .sort_by(|a, b| (a.start, &a.name).cmp(&(b.start, &b.name)));
    map.symbols = SymbolTable::new(syms);
    Ok(map)
}

/// A GNU ld number: ld always writes `0x` and hex digits (a bare `F` is
/// not a number here: issue 21 campaign, a stray letter became a section).
fn hex(s: &str) -> Option<u64> {
    let digits = s.strip_prefix("0x")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    parse_hex(s)
}

fn last_addr(syms: &[crate::Symbol]) -> Option<u64> {
    syms.last().map(|s| s.addr)
}

fn out_section(map: &mut MapFile, name: &str, addr: u64, len: u64) {
    map.segments.push(Segment {
        name: name.to_string(),
        class: Some(name.to_string()),
        group: None,
        start: addr,
        len,
        frame: None,
        code: section_kind(name) == SymbolKind::Text,
    });
}

fn input_section(
    map: &mut MapFile,
    section: &str,
    addr: u64,
    len: u64,
    rest: &[&str],
    current_module: &mut Option<String>,
) {
    let path = rest.join(" ");
    let module = path.rsplit(['/', '\\']).next().unwrap_or(&path).to_string();
    *current_module = Some(module.clone());
    if len == 0 {
        return;
    }
    map.modules.push(ModuleRange {
        name: module,
        start: addr,
        len,
        segment: Some(section.to_string()),
        code: section_kind(section) == SymbolKind::Text,
    });
}
