//! OpenWatcom wlink maps (16-bit DOS segmented addresses).
//!
//! ```text
//!                         +--------------+
//!                         |   Segments   |
//!                         +--------------+
//! Segment                Class          Group          Address         Size
//! =======                =====          =====          =======         ====
//! _TEXT                  CODE           AUTO           0000:0010       0000175e
//!                         +----------------+
//!                         |   Memory Map   |
//!                         +----------------+
//! Address        Symbol
//! =======        ======
//! Module: hello.obj(C:\src\hello.c)
//! 0000:0010      main_
//! 0000:0041*     _cstart_
//! ...
//! Entry point address: 0000:0041
//! ```
//! `*` marks an unreferenced symbol, `+` one referenced only locally; both
//! are still symbols. With the `verbose` option a `Module Segments` box gives
//! each module's ranges.

use super::{
    is_code_class, kind_from_segments, linear, parse_hex, parse_seg_off, symbol, syntax,
    EntryPoint, MapError, MapFile, MapFormat, ModuleRange, Segment,
};
use crate::SymbolTable;

/// Boxes of a wlink map that hold nothing this parser reads.
const KNOWN_BOXES: [&str; 6] = [
    "Map file",
    "Imported Symbols",
    "Exported Symbols",
    "Libraries Used",
    "Linker Statistics",
    "Overlay Sections",
];

#[derive(PartialEq, Eq, Clone, Copy)]
enum State {
    None,
    Groups,
    Segments,
    MemoryMap,
    ModuleSegments,
    Other,
}

pub(super) fn parse(file: &str, text: &str) -> Result<MapFile, MapError> {
    let mut map = MapFile::new(MapFormat::Watcom);
    let mut state = State::None;
    let mut module: Option<String> = None;
    let mut rows: Vec<(String, u64, Option<String>)> = Vec::new();
    let mut modseg_module: Option<String> = None;
    let mut groups: Vec<(String, u16)> = Vec::new();
    let mut module_names: Vec<String> = Vec::new();
    let mut unparsed = super::Unparsed::default();
    let mut title_unknown = false;
    for (i, raw) in text.lines().enumerate() {
        let lineno = i + 1;
        let t = raw.trim_end_matches('\r').trim();
        if t.is_empty() || t.starts_with("+-") || t.starts_with("===") {
            continue;
        }
        if t.starts_with('|') && t.ends_with('|') {
            let title = t.trim_matches('|').trim();
            state = match title {
                "Groups" => State::Groups,
                "Segments" => State::Segments,
                "Memory Map" => State::MemoryMap,
                "Module Segments" => State::ModuleSegments,
                _ => State::Other,
            };
            title_unknown = state == State::Other && !KNOWN_BOXES.contains(&title);
            continue;
        }
        if let Some(rest) = t.strip_prefix("Entry point address:") {
            let rest = rest.trim();
            let (seg, off) = parse_seg_off(rest).ok_or_else(|| {
                syntax(
                    file,
                    lineno,
                    format!("entry point `{rest}` is not SEG:OFF hex"),
                )
            })?;
            map.entry = Some(EntryPoint {
                addr: linear(seg, off),
                frame: Some(seg),
            });
            continue;
        }
        let toks: Vec<&str> = t.split_whitespace().collect();
        match state {
            State::Groups => {
                if toks.len() >= 2 {
                    if let Some((seg, _)) = parse_seg_off(toks[1]) {
                        groups.push((toks[0].to_string(), seg));
                    }
                }
            }
            State::Segments => {
                // Segment Class Group Address Size
                if toks.len() >= 5 {
                    if let (Some((seg, off)), Some(len)) =
                        (parse_seg_off(toks[3]), parse_hex(toks[4]))
                    {
                        let class = toks[1].to_string();
                        map.segments.push(Segment {
                            name: toks[0].to_string(),
                            code: is_code_class(&class),
                            class: Some(class),
                            group: (toks[2] != "AUTO").then(|| toks[2].to_string()),
                            start: linear(seg, off),
                            len,
                            frame: Some(seg),
                        });
                        continue;
                    }
                }
                if !t.starts_with("Segment") {
                    return Err(syntax(
                        file,
                        lineno,
                        "segment row is not `NAME CLASS GROUP SEG:OFF SIZE`",
                    ));
                }
            }
            State::MemoryMap => {
                if let Some(m) = t.strip_prefix("Module:") {
                    let name = module_name(m.trim());
                    if !module_names.contains(&name) {
                        module_names.push(name.clone());
                    }
                    module = Some(name);
                    continue;
                }
                let Some(first) = toks.first() else { continue };
                let addr_tok = first.trim_end_matches(['*', '+', 's', '$']);
                if let Some((seg, off)) = parse_seg_off(addr_tok) {
                    // The name is whatever follows the address token.
                    let name = t[first.len()..].trim();
                    if name.is_empty() {
                        return Err(syntax(file, lineno, "symbol row without a name"));
                    }
                    if has_seg_off(name) {
                        // Two rows run together (`main_"0000:00a0+ next_`).
                        unparsed.add_after(lineno, t, rows.last().map(|r| r.1));
                        continue;
                    }
                    rows.push((name.to_string(), linear(seg, off), module.clone()));
                } else if !(toks.first() == Some(&"Address")
                    || toks.get(1) == Some(&"=")
                    || (toks.len() == 2 && toks[0] == "Address" && toks[1] == "Symbol"))
                {
                    // Not the column header, not a legend line (`* =
                    // unreferenced symbol`): a symbol row that cannot be read.
                    unparsed.add_after(lineno, t, rows.last().map(|r| r.1));
                }
            }
            State::ModuleSegments => {
                // Module Segment Class Address Size; the module column is
                // blank on continuation rows (and may wrap onto its own line).
                let n = toks.len();
                if n >= 3 {
                    if let (Some((seg, off)), Some(len)) =
                        (parse_seg_off(toks[n - 2]), parse_hex(toks[n - 1]))
                    {
                        let (module_tok, seg_name, class) = match n {
                            5.. => (Some(toks[0]), toks[n - 4], toks[n - 3]),
                            4 => (None, toks[0], toks[1]),
                            _ => (None, toks[0], ""),
                        };
                        if let Some(m) = module_tok {
                            modseg_module = Some(module_name(m));
                        }
                        if let Some(m) = &modseg_module {
                            if len > 0 {
                                map.modules.push(ModuleRange {
                                    name: m.clone(),
                                    start: linear(seg, off),
                                    len,
                                    segment: Some(seg_name.to_string()),
                                    code: is_code_class(class),
                                });
                            }
                        }
                        continue;
                    }
                }
                if n == 1 {
                    modseg_module = Some(module_name(toks[0]));
                }
            }
            State::Other => {
                // A symbol row in a box whose title could not be read
                // (issue 21: a damaged `Memory Map` title dropped the table).
                let addr = toks
                    .first()
                    .map(|f| f.trim_end_matches(['*', '+', 's', '$']));
                if toks.len() >= 2 && addr.and_then(parse_seg_off).is_some() && title_unknown {
                    unparsed.add_after(lineno, t, None);
                }
            }
            State::None => {}
        }
    }
    let _ = groups;
    unparsed.report(file, "memory map", &mut map);
    // `Module Segments` names library members by the member alone
    // (`printf`); use the `Module:` line's name (`clibs.lib(printf)`) so
    // both tables agree.
    for r in &mut map.modules {
        if let Some(full) = module_names.iter().find(|full| same_module(full, &r.name)) {
            r.name = full.clone();
        }
    }
    map.modules
        .sort_by(|a, b| (a.start, &a.name).cmp(&(b.start, &b.name)));
    let mut syms = Vec::with_capacity(rows.len());
    for (name, addr, module) in rows {
        let kind = kind_from_segments(&map.segments, addr);
        let mut s = symbol(&name, addr, kind);
        s.module = module.or_else(|| super::module_at(&map.modules, addr));
        syms.push(s);
    }
    map.symbols = SymbolTable::new(syms);
    Ok(map)
}

/// True when `s` holds `HHHH:HHHH` (hex digits around a colon): a symbol
/// name never does; a name that does is two rows run together.
fn has_seg_off(s: &str) -> bool {
    let b = s.as_bytes();
    (0..b.len()).any(|i| {
        b[i] == b':'
            && i >= 4
            && b[i - 4..i].iter().all(u8::is_ascii_hexdigit)
            && b.get(i + 1..i + 5)
                .is_some_and(|w| w.iter().all(u8::is_ascii_hexdigit))
    })
}

/// `hello.obj(C:\src\hello.c)` -> `hello.obj`; `C:\WATCOM\lib\clibs.lib(cstart)`
/// -> `clibs.lib(cstart)`.
fn module_name(m: &str) -> String {
    let (obj, member) = match m.find('(') {
        Some(p) if m.ends_with(')') => (&m[..p], Some(&m[p + 1..m.len() - 1])),
        _ => (m, None),
    };
    let base = obj.rsplit(['/', '\\']).next().unwrap_or(obj);
    let lower = base.to_ascii_lowercase();
    match member {
        Some(mem) if lower.ends_with(".lib") || lower.ends_with(".a") => {
            format!("{base}({mem})")
        }
        _ => base.to_string(),
    }
}

fn stem(s: &str) -> String {
    let base = s.rsplit(['/', '\\']).next().unwrap_or(s);
    let base = base.split('(').next().unwrap_or(base);
    base.rsplit_once('.')
        .map(|(a, _)| a)
        .unwrap_or(base)
        .to_ascii_lowercase()
}

/// Does the `Module:` display name `full` denote the module `short`?
fn same_module(full: &str, short: &str) -> bool {
    if full.eq_ignore_ascii_case(short) {
        return true;
    }
    if let (Some(open), true) = (full.find('('), full.ends_with(')')) {
        let member = &full[open + 1..full.len() - 1];
        return stem(member) == stem(short);
    }
    stem(full) == stem(short)
}
