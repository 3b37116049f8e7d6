//! Microsoft LINK and Borland TLINK maps (16-bit DOS).
//!
//! ```text
//!  Start  Stop   Length Name                   Class
//!  00000H 016F7H 016F8H _TEXT                  CODE
//!
//! Detailed map of segments                      (TLINK only)
//!  0000:0000 0294 C=CODE   S=_TEXT  G=(none)  M=C0.ASM  ACBP=28
//!
//!   Address         Publics by Value
//!  0000:0010       _main
//!  0000:9876  Abs  __acrtused
//! Program entry point at 0000:0294
//! ```
//! Linear address = segment * 16 + offset. `Abs` rows are absolute values,
//! not addresses; TLINK marks unused publics `idle` (kept as symbols).

use super::{
    class_kind, is_code_class, kind_from_segments, linear, parse_hex, parse_seg_off, symbol,
    syntax, EntryPoint, MapError, MapFile, MapFormat, ModuleRange, Segment,
};
use crate::{SymbolKind, SymbolTable};

#[derive(PartialEq, Eq, Clone, Copy)]
enum State {
    None,
    Segments,
    Detailed,
    ByName,
    ByValue,
    Lines,
    /// `Origin Group` rows (`01A4:0   DGROUP`): nothing to read.
    Groups,
}

pub(super) fn parse(file: &str, text: &str, format: MapFormat) -> Result<MapFile, MapError> {
    let mut map = MapFile::new(format);
    let mut by_name = Vec::new();
    let mut by_value = Vec::new();
    let mut saw_by_value = false;
    let mut state = State::None;
    // 32/64-bit MSVC (PE) map: `SECTION:OFFSET name Rva+Base [f] [i] lib:obj`.
    let mut pe = false;
    let mut statics = false;
    let mut line_file: Option<String> = None;
    // (index in map.segments, section, offset) of `SSSS:OOOO` segment rows.
    let mut raw_segments: Vec<(usize, u16, u32)> = Vec::new();
    // Section number -> its virtual address (Rva+Base - offset of a public).
    let mut section_base: std::collections::BTreeMap<u16, u64> = Default::default();
    let mut unparsed = super::Unparsed::default();
    // A table ends at a blank line followed by something else; a line that
    // is not a row directly after rows is a damaged row (issue 21: one
    // unreadable row ended the table and dropped every row after it).
    let mut prev_blank = true;
    for (i, raw) in text.lines().enumerate() {
        let lineno = i + 1;
        let line = raw.trim_end_matches('\r');
        let t = line.trim();
        let after_blank = std::mem::replace(&mut prev_blank, t.is_empty());
        if t.is_empty() {
            continue;
        }
        if t.starts_with("Start") && t.contains("Length") && t.contains("Name") {
            state = State::Segments;
            continue;
        }
        if t.starts_with("Origin") && t.ends_with("Group") {
            state = State::Groups;
            continue;
        }
        if t.starts_with("Detailed map of segments") {
            state = State::Detailed;
            continue;
        }
        if t.contains("Publics by Value") {
            state = State::ByValue;
            saw_by_value = true;
            pe |= t.contains("Rva+Base");
            continue;
        }
        if t.contains("Publics by Name") {
            state = State::ByName;
            pe |= t.contains("Rva+Base");
            continue;
        }
        if pe && t == "Static symbols" {
            // 32/64-bit MSVC maps list static functions after the publics.
            state = State::ByValue;
            statics = true;
            continue;
        }
        if pe && t.starts_with("entry point at") {
            state = State::None;
            continue;
        }
        if let Some(rest) = t.strip_prefix("Line numbers for ") {
            // `Line numbers for n2kc.obj(n2kc.c) segment _TEXT`
            let src = rest.split(" segment ").next().unwrap_or(rest).trim();
            let file = match (src.find('('), src.ends_with(')')) {
                (Some(p), true) => &src[p + 1..src.len() - 1],
                _ => src,
            };
            line_file = Some(file.to_string());
            state = State::Lines;
            continue;
        }
        if let Some(rest) = t.strip_prefix("Program entry point at") {
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
            state = State::None;
            continue;
        }
        let toks: Vec<&str> = t.split_whitespace().collect();
        match state {
            State::Segments => {
                // The table ends at the first other line (`Origin Group`).
                if let Some(seg) = segment_row(&toks) {
                    if let Some((sec, off)) = toks.first().and_then(|t| parse_seg_off(t)) {
                        raw_segments.push((map.segments.len(), sec, off));
                    }
                    map.segments.push(seg);
                } else if after_blank {
                    state = State::None;
                } else {
                    unparsed.add_after(lineno, t, None);
                }
            }
            State::Detailed => {
                if let Some((seg, off)) = toks.first().and_then(|s| parse_seg_off(s)) {
                    let len = toks.get(1).and_then(|s| parse_hex(s)).ok_or_else(|| {
                        syntax(file, lineno, "detailed segment row without a hex length")
                    })?;
                    let class = field(t, "C=");
                    let sname = field(t, "S=");
                    let module = module_field(t).ok_or_else(|| {
                        syntax(file, lineno, "detailed segment row without `M=module`")
                    })?;
                    map.modules.push(ModuleRange {
                        name: module,
                        start: linear(seg, off),
                        len,
                        segment: sname,
                        code: class.as_deref().map(is_code_class).unwrap_or(false),
                    });
                } else if after_blank {
                    state = State::None;
                } else {
                    unparsed.add_after(lineno, t, None);
                }
            }
            State::ByName | State::ByValue => {
                let Some((seg, off)) = toks.first().and_then(|s| parse_seg_off(s)) else {
                    if !after_blank || toks.first().is_some_and(|t| looks_like_seg_off(t)) {
                        // A row of the table whose address cannot be read
                        // (issue 21: one huge number ended the table, and
                        // every later function's samples went to the one
                        // before it).
                        let after = match state {
                            State::ByValue => by_value.last().map(|r: &Row| r.addr),
                            _ => None,
                        };
                        unparsed.add_after(lineno, t, after);
                        continue;
                    }
                    // The table ended (line numbers, another section).
                    state = State::None;
                    continue;
                };
                if pe {
                    if !pe_flags_ok(&toks) {
                        // `f` and `i` flags, then one LIB:OBJECT: a row
                        // with a damaged flag (`fq main.obj`) would be read
                        // as data and its samples charged elsewhere (issue
                        // 21).
                        let after = match state {
                            State::ByValue => by_value.last().map(|r: &Row| r.addr),
                            _ => None,
                        };
                        unparsed.add_after(lineno, t, after);
                        continue;
                    }
                    let row = pe_row(&toks).ok_or_else(|| {
                        syntax(
                            file,
                            lineno,
                            "expected `SECTION:OFFSET NAME RVA+BASE [f] [i] LIB:OBJECT`",
                        )
                    })?;
                    let row = Row {
                        global: !statics,
                        ..row
                    };
                    if seg > 0 && row.kind != Some(SymbolKind::Absolute) {
                        if let Some(base) = row.addr.checked_sub(u64::from(off)) {
                            section_base.entry(seg).or_insert(base);
                        }
                    }
                    if state == State::ByValue {
                        by_value.push(row);
                    } else {
                        by_name.push(row);
                    }
                    continue;
                }
                let (marker, name) = match toks.len() {
                    2 => (None, toks[1]),
                    n if n >= 3 => {
                        let m = toks[1];
                        if matches!(m, "Abs" | "Imp" | "idle" | "Res" | "Unr") {
                            (Some(m), toks[2])
                        } else {
                            (None, toks[1])
                        }
                    }
                    _ => return Err(syntax(file, lineno, "public without a name")),
                };
                let addr = linear(seg, off);
                let entry = Row {
                    marker: marker.map(str::to_string),
                    name: name.to_string(),
                    addr,
                    kind: None,
                    module: None,
                    global: true,
                };
                if state == State::ByValue {
                    by_value.push(entry);
                } else {
                    by_name.push(entry);
                }
            }
            State::Lines => {
                // `    12 0000:0010    13 0000:0015 ...`
                if !toks.len().is_multiple_of(2) || parse_seg_off(toks[1]).is_none() {
                    state = State::None;
                    continue;
                }
                for pair in toks.chunks(2) {
                    let line: u32 = pair[0].parse().map_err(|_| {
                        syntax(
                            file,
                            lineno,
                            format!("line number `{}` is not decimal", pair[0]),
                        )
                    })?;
                    let (seg, off) = parse_seg_off(pair[1]).ok_or_else(|| {
                        syntax(file, lineno, format!("`{}` is not SEG:OFF hex", pair[1]))
                    })?;
                    map.lines.push(super::LineEntry {
                        addr: linear(seg, off),
                        file: line_file.clone().unwrap_or_default(),
                        line,
                    });
                }
            }
            State::Groups => {}
            State::None => {
                // A publics row outside any table: the table's heading could
                // not be read (issue 21: its rows were dropped silently).
                if toks.len() >= 2 && looks_like_seg_off(toks[0]) {
                    unparsed.add_after(lineno, t, None);
                }
            }
        }
    }
    // TLINK ranges are per module and segment; keep them sorted by address.
    map.modules
        .sort_by(|a, b| (a.start, &a.name).cmp(&(b.start, &b.name)));
    map.lines.sort();
    if pe {
        map.lines.clear();
        // Section-numbered addresses are not linear: the symbols carry
        // their own Rva+Base address and kind; the segment table is dropped.
        // Sections are placed from the publics in them.
        let mut placed = Vec::new();
        for &(i, sec, off) in &raw_segments {
            if let Some(base) = section_base.get(&sec) {
                let mut seg = map.segments[i].clone();
                seg.start = base.saturating_add(u64::from(off));
                seg.frame = None;
                placed.push(seg);
            }
        }
        map.segments = placed;
        map.entry = None;
    }
    let rows = if saw_by_value { by_value } else { by_name };
    let mut syms = Vec::with_capacity(rows.len());
    for row in rows {
        let kind = match (row.kind, row.marker.as_deref()) {
            (Some(k), _) => k,
            (None, Some("Abs")) => SymbolKind::Absolute,
            (None, Some("Imp")) => SymbolKind::Other,
            _ => kind_from_segments(&map.segments, row.addr),
        };
        let mut s = symbol(&row.name, row.addr, kind);
        s.global = row.global;
        s.module = row.module;
        if kind == SymbolKind::Text && s.module.is_none() {
            s.module = super::module_at(&map.modules, row.addr);
        }
        syms.push(s);
    }
    if format == MapFormat::Tlink && map.modules.is_empty() {
        map.warnings.push(format!(
            "{file}: no `Detailed map of segments` rows: no module ranges"
        ));
    }
    map.symbols = SymbolTable::new(syms);
    unparsed.report(file, "segment and publics tables", &mut map);
    Ok(map)
}

/// `SSSS:OOOO`-shaped (hex digits around a colon), whether or not the
/// numbers fit.
fn looks_like_seg_off(t: &str) -> bool {
    match t.split_once(':') {
        Some((a, b)) => {
            let hex = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_hexdigit());
            hex(a) && hex(b.trim_end_matches(['h', 'H']))
        }
        None => false,
    }
}

/// One public.
struct Row {
    marker: Option<String>,
    name: String,
    addr: u64,
    /// Known from the row itself (PE maps: `f` = function).
    kind: Option<SymbolKind>,
    module: Option<String>,
    global: bool,
}

/// `0001:00000860       main     0000000140001860 f   main.obj`.
/// After `SECTION:OFFSET NAME RVA+BASE`: flags `f` / `i` (each at most
/// once), then at most one LIB:OBJECT, nothing else.
fn pe_flags_ok(toks: &[&str]) -> bool {
    let rest = toks.get(3..).unwrap_or(&[]);
    let flags = match rest.split_last() {
        Some((last, init)) if *last != "f" && *last != "i" => init,
        _ => rest,
    };
    flags.iter().all(|t| *t == "f" || *t == "i")
        && flags.iter().filter(|t| **t == "f").count() <= 1
        && flags.iter().filter(|t| **t == "i").count() <= 1
}

fn pe_row(toks: &[&str]) -> Option<Row> {
    let name = toks.get(1)?;
    let rva = toks.get(2)?;
    if rva.len() < 8 {
        return None;
    }
    let addr = u64::from_str_radix(rva, 16).ok()?;
    let rest = &toks[3..];
    let function = rest.contains(&"f");
    let object = rest.iter().rev().find(|t| **t != "f" && **t != "i");
    let kind = if object == Some(&"<absolute>") {
        SymbolKind::Absolute
    } else if function {
        SymbolKind::Text
    } else {
        SymbolKind::Data
    };
    Some(Row {
        marker: None,
        name: name.to_string(),
        addr,
        kind: Some(kind),
        module: object
            .filter(|o| !o.starts_with('<'))
            .map(|o| o.to_string()),
        global: true,
    })
}

/// ` 00000H 016F7H 016F8H _TEXT  CODE` (also `0001:0000 00012H _TEXT CODE`).
fn segment_row(toks: &[&str]) -> Option<Segment> {
    let h = |s: &str| -> Option<u64> {
        let s = s.strip_suffix('H').or_else(|| s.strip_suffix('h'))?;
        u64::from_str_radix(s, 16).ok()
    };
    let (start, len, rest) = if toks.len() >= 4 && h(toks[0]).is_some() {
        let start = h(toks[0])?;
        // Start, Stop, Length: trust the length (Stop is Start + Length - 1,
        // or Start - 1 for an empty segment).
        h(toks[1])?;
        let len = h(toks[2])?;
        (start, len, &toks[3..])
    } else if toks.len() >= 3 && parse_seg_off(toks[0]).is_some() {
        let (seg, off) = parse_seg_off(toks[0])?;
        (linear(seg, off), h(toks[1])?, &toks[2..])
    } else {
        return None;
    };
    if rest.len() > 2 {
        // `NAME CLASS` and nothing else: a damaged row.
        return None;
    }
    let name = rest.first()?.to_string();
    let class = rest.get(1).map(|s| s.to_string());
    let code = match &class {
        Some(c) => is_code_class(c),
        None => class_kind(&name) == SymbolKind::Text,
    };
    Some(Segment {
        name,
        class,
        group: None,
        start,
        len,
        frame: u16::try_from(start >> 4).ok(),
        code,
    })
}

/// Value of `C=`/`S=`/`G=` in a detailed row (up to the next space).
fn field(t: &str, key: &str) -> Option<String> {
    let at = t.find(key)?;
    let v = t[at + key.len()..].split_whitespace().next()?;
    Some(v.to_string())
}

/// `M=` value: up to ` ACBP=` (module names are single words in practice).
fn module_field(t: &str) -> Option<String> {
    let at = t.find(" M=")? + 3;
    let rest = &t[at..];
    let end = rest.find(" ACBP=").unwrap_or(rest.len());
    let m = rest[..end].trim();
    (!m.is_empty()).then(|| m.to_string())
}
