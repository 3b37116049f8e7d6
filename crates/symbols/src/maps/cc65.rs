//! cc65: `ld65 --dbgfile` debug files and `ld65 -m` map files.
//!
//! Debug file (one record per line, `kind<TAB>key=value,...`; `<TAB>` is a tab):
//! ```text
//! version<TAB>major=2,minor=0
//! mod<TAB>id=0,name="main.o",file=0
//! seg<TAB>id=0,name="CODE",start=0x00085C,size=0x06F4,addrsize=absolute,type=ro
//! span<TAB>id=3,seg=0,start=0,size=291
//! scope<TAB>id=0,name="",mod=0,size=291,span=3
//! scope<TAB>id=1,name="_main",mod=0,type=scope,size=40,parent=0,sym=5,span=4
//! sym<TAB>id=5,name="_main",addrsize=absolute,size=40,scope=0,def=9,ref=2,val=0x85C,seg=0,type=lab
//! ```
//! Functions are the labels defined in a module's top scope (`.proc`s and C
//! functions); labels inside a `.proc` scope and cheap locals (`parent=`)
//! belong to their function. Module ranges come from each module's top-scope
//! spans.
//!
//! Map file: `Modules list:` (per module `SEG Offs=.. Size=..`),
//! `Segment list:` and `Exports list by value:` (two exports per line,
//! `name value flags`, flags `R` referenced, `L` label / `E` equate).

use std::collections::BTreeMap;

use super::{parse_hex, symbol, syntax, MapError, MapFile, MapFormat, ModuleRange, Segment};
use crate::{SymbolKind, SymbolTable};

fn is_code_seg(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    n.contains("CODE") || n.contains("TEXT") || n == "STARTUP" || n == "ONCE" || n == "INIT"
}

/// Split `key=value,key="quoted, value",...`.
fn fields(s: &str) -> Option<BTreeMap<&str, &str>> {
    let mut out = BTreeMap::new();
    let mut rest = s;
    while !rest.is_empty() {
        let eq = rest.find('=')?;
        let key = &rest[..eq];
        let after = &rest[eq + 1..];
        let (val, next) = if let Some(q) = after.strip_prefix('"') {
            let end = q.find('"')?;
            let tail = &q[end + 1..];
            (&q[..end], tail.strip_prefix(',').unwrap_or(tail))
        } else {
            match after.find(',') {
                Some(c) => (&after[..c], &after[c + 1..]),
                None => (after, ""),
            }
        };
        out.insert(key.trim(), val);
        rest = next;
    }
    Some(out)
}

fn num(v: &str) -> Option<u64> {
    if v.starts_with("0x") || v.starts_with("0X") {
        parse_hex(v)
    } else {
        v.parse().ok()
    }
}

struct DbgSeg {
    name: String,
    start: u64,
    size: u64,
}

struct DbgScope {
    mod_id: Option<u64>,
    parent: Option<u64>,
    spans: Vec<u64>,
}

pub(super) fn parse_dbg(file: &str, text: &str) -> Result<MapFile, MapError> {
    let mut map = MapFile::new(MapFormat::Cc65Dbg);
    let mut segs: BTreeMap<u64, DbgSeg> = BTreeMap::new();
    let mut mods: BTreeMap<u64, String> = BTreeMap::new();
    let mut spans: BTreeMap<u64, (u64, u64, u64)> = BTreeMap::new();
    let mut scopes: BTreeMap<u64, DbgScope> = BTreeMap::new();
    // (line, fields) of sym records, resolved after all scopes are read.
    let mut sym_rows: Vec<(usize, BTreeMap<String, String>)> = Vec::new();
    let mut saw_version = false;
    let mut files: BTreeMap<u64, String> = BTreeMap::new();
    // (file id, line, span ids)
    let mut line_rows: Vec<(u64, u64, Vec<u64>)> = Vec::new();
    let mut unparsed = super::Unparsed::default();
    for (i, raw) in text.lines().enumerate() {
        let lineno = i + 1;
        let line = raw.trim_end_matches('\r');
        if line.trim().is_empty() {
            continue;
        }
        let (kind, rest) = line
            .split_once(['\t', ' '])
            .ok_or_else(|| syntax(file, lineno, "expected `KIND<TAB>key=value,...`"))?;
        let f = fields(rest.trim())
            .ok_or_else(|| syntax(file, lineno, "malformed `key=value` list"))?;
        let need = |k: &str| -> Result<u64, MapError> {
            f.get(k).and_then(|v| num(v)).ok_or_else(|| {
                syntax(
                    file,
                    lineno,
                    format!("{kind} record without numeric `{k}=`"),
                )
            })
        };
        match kind {
            "version" => {
                saw_version = true;
                if f.get("major") != Some(&"2") {
                    return Err(syntax(
                        file,
                        lineno,
                        format!(
                            "debug file version major={} (only major=2 is known)",
                            f.get("major").unwrap_or(&"?")
                        ),
                    ));
                }
            }
            "seg" => {
                let id = need("id")?;
                segs.insert(
                    id,
                    DbgSeg {
                        name: f.get("name").unwrap_or(&"").to_string(),
                        start: need("start")?,
                        size: need("size")?,
                    },
                );
            }
            "mod" => {
                mods.insert(need("id")?, f.get("name").unwrap_or(&"").to_string());
            }
            "span" => {
                spans.insert(need("id")?, (need("seg")?, need("start")?, need("size")?));
            }
            "scope" => {
                let span_list = f
                    .get("span")
                    .map(|v| v.split('+').filter_map(num).collect())
                    .unwrap_or_default();
                scopes.insert(
                    need("id")?,
                    DbgScope {
                        mod_id: f.get("mod").and_then(|v| num(v)),
                        parent: f.get("parent").and_then(|v| num(v)),
                        spans: span_list,
                    },
                );
            }
            "file" => {
                files.insert(need("id")?, f.get("name").unwrap_or(&"").to_string());
            }
            // Only lines that carry code (`span=`); `type=2` are macro
            // expansions, reported at the macro's use instead.
            "line" if f.get("type") != Some(&"2") => {
                if let Some(span_list) = f.get("span") {
                    let spans_of: Vec<u64> = span_list.split('+').filter_map(num).collect();
                    line_rows.push((need("file")?, need("line")?, spans_of));
                }
            }
            "sym" => {
                let owned = f
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect();
                sym_rows.push((lineno, owned));
            }
            // Records of the documented format that give nothing here.
            "info" | "line" | "lib" | "type" | "csym" => {}
            // Not a record kind of the version 2 format (a damaged line).
            _ => unparsed.add_after(lineno, line, None),
        }
    }
    if !saw_version {
        return Err(MapError::Invalid {
            file: file.to_string(),
            msg: "no `version` record: not a cc65 debug file".into(),
        });
    }
    for s in segs.values() {
        map.segments.push(Segment {
            name: s.name.clone(),
            class: None,
            group: None,
            start: s.start,
            len: s.size,
            frame: None,
            code: is_code_seg(&s.name),
        });
    }
    map.segments
        .sort_by(|a, b| (a.start, &a.name).cmp(&(b.start, &b.name)));
    // Module ranges from each module's top-level scope spans.
    for sc in scopes.values().filter(|s| s.parent.is_none()) {
        let Some(name) = sc.mod_id.and_then(|m| mods.get(&m)) else {
            continue;
        };
        for span in &sc.spans {
            if let Some(&(seg, start, size)) = spans.get(span) {
                if let (Some(seg), true) = (segs.get(&seg), size > 0) {
                    map.modules.push(ModuleRange {
                        name: name.clone(),
                        start: seg.start.saturating_add(start),
                        len: size,
                        segment: Some(seg.name.clone()),
                        code: is_code_seg(&seg.name),
                    });
                }
            }
        }
    }
    map.modules
        .sort_by(|a, b| (a.start, &a.name).cmp(&(b.start, &b.name)));
    for (file_id, line, span_ids) in line_rows {
        let Some(name) = files.get(&file_id) else {
            continue;
        };
        for sp in span_ids {
            if let Some(&(seg, start, _)) = spans.get(&sp) {
                if let Some(seg) = segs.get(&seg) {
                    map.lines.push(super::LineEntry {
                        addr: seg.start.saturating_add(start),
                        file: name.clone(),
                        line: u32::try_from(line).unwrap_or(u32::MAX),
                    });
                }
            }
        }
    }
    map.lines.sort();
    map.lines.dedup_by(|b, a| a.addr == b.addr);
    let mut syms = Vec::new();
    for (lineno, f) in sym_rows {
        let name = f.get("name").cloned().unwrap_or_default();
        match f.get("type").map(String::as_str) {
            Some("lab") => {}
            // Equates and imports have no address of their own.
            Some("equ" | "imp") => continue,
            // No type, or one the format does not have: a damaged record.
            _ => {
                unparsed.add_after(lineno, &format!("sym {name}"), None);
                continue;
            }
        }
        if f.get("seg")
            .is_none_or(|v| num(v).and_then(|s| segs.get(&s)).is_none())
        {
            // A label in no segment, or in one the file does not list.
            unparsed.add_after(lineno, &format!("sym {name}"), None);
            continue;
        }
        let Some(val) = f.get("val").and_then(|v| num(v)) else {
            return Err(syntax(
                file,
                lineno,
                format!("label `{name}` without `val=`"),
            ));
        };
        let seg = f.get("seg").and_then(|v| num(v)).and_then(|s| segs.get(&s));
        let scope = f
            .get("scope")
            .and_then(|v| num(v))
            .and_then(|s| scopes.get(&s));
        let top_level = scope.map(|s| s.parent.is_none()).unwrap_or(true);
        let cheap_local = f.contains_key("parent");
        let kind = match seg {
            Some(s) if is_code_seg(&s.name) && top_level && !cheap_local => SymbolKind::Text,
            Some(s) if is_code_seg(&s.name) => SymbolKind::Other,
            Some(s) if s.name.to_ascii_uppercase().contains("BSS") => SymbolKind::Bss,
            Some(_) => SymbolKind::Data,
            None => SymbolKind::Other,
        };
        let mut s = symbol(&name, val, kind);
        s.size = f.get("size").and_then(|v| num(v)).filter(|&n| n > 0);
        s.module = scope
            .and_then(|sc| sc.mod_id)
            .and_then(|m| mods.get(&m).cloned());
        syms.push(s);
    }
    unparsed.report(file, "debug file", &mut map);
    map.symbols = SymbolTable::new(syms);
    Ok(map)
}

#[derive(PartialEq, Eq, Clone, Copy)]
enum MapState {
    None,
    Modules,
    Segments,
    ByValue,
    ByName,
}

pub(super) fn parse_map(file: &str, text: &str) -> Result<MapFile, MapError> {
    let mut map = MapFile::new(MapFormat::Cc65Map);
    let mut state = MapState::None;
    let mut module: Option<String> = None;
    // (module, segment, offs, size)
    let mut contribs: Vec<(String, String, u64, u64)> = Vec::new();
    let mut by_value = Vec::new();
    let mut by_name = Vec::new();
    let mut saw_by_value = false;
    let mut unparsed = super::Unparsed::default();
    for (i, raw) in text.lines().enumerate() {
        let lineno = i + 1;
        let line = raw.trim_end_matches('\r');
        let t = line.trim();
        if t.is_empty() || t.bytes().all(|b| b == b'-') {
            continue;
        }
        match t {
            "Modules list:" => {
                state = MapState::Modules;
                continue;
            }
            "Segment list:" => {
                state = MapState::Segments;
                continue;
            }
            "Exports list by value:" => {
                state = MapState::ByValue;
                saw_by_value = true;
                continue;
            }
            "Exports list by name:" => {
                state = MapState::ByName;
                continue;
            }
            _ if t.ends_with("list:") => {
                state = MapState::None;
                continue;
            }
            _ => {}
        }
        let toks: Vec<&str> = t.split_whitespace().collect();
        match state {
            MapState::Modules => {
                if !line.starts_with(' ') && t.ends_with(':') {
                    let m = &t[..t.len() - 1];
                    module = Some(m.rsplit(['/', '\\']).next().unwrap_or(m).to_string());
                } else if toks.len() >= 3 && toks[1].starts_with("Offs=") {
                    let offs = toks[1].strip_prefix("Offs=").and_then(parse_hex);
                    let size = toks[2].strip_prefix("Size=").and_then(parse_hex);
                    match (module.as_ref(), offs, size) {
                        (Some(m), Some(o), Some(s)) => {
                            contribs.push((m.clone(), toks[0].to_string(), o, s))
                        }
                        _ => {
                            return Err(syntax(
                                file,
                                lineno,
                                "module row is not `SEGMENT Offs=HEX Size=HEX`",
                            ))
                        }
                    }
                } else {
                    // Neither `module.o:` nor a `SEGMENT Offs= Size=` row.
                    unparsed.add(lineno, t);
                }
            }
            MapState::Segments => {
                if toks.len() != 5 && toks[0] != "Name" {
                    // `NAME START END SIZE ALIGN` and nothing else.
                    unparsed.add(lineno, t);
                } else if toks[0] != "Name" {
                    let (Some(start), Some(size)) = (parse_hex(toks[1]), parse_hex(toks[3])) else {
                        return Err(syntax(
                            file,
                            lineno,
                            "segment row is not `NAME START END SIZE ALIGN` (hex)",
                        ));
                    };
                    map.segments.push(Segment {
                        name: toks[0].to_string(),
                        class: None,
                        group: None,
                        start,
                        len: size,
                        frame: None,
                        code: is_code_seg(toks[0]),
                    });
                }
            }
            MapState::ByValue | MapState::ByName => {
                let mut j = 0;
                while j + 1 < toks.len() {
                    let name = toks[j];
                    let Some(val) = parse_hex(toks[j + 1]) else {
                        return Err(syntax(
                            file,
                            lineno,
                            format!("export `{name}` without a hex value"),
                        ));
                    };
                    j += 2;
                    let mut flags = "";
                    if let Some(f) = toks.get(j) {
                        if f.len() <= 3 && f.bytes().all(|b| b"RLEZAI".contains(&b)) {
                            flags = f;
                            j += 1;
                        }
                    }
                    let row = (name.to_string(), val, flags.to_string());
                    if state == MapState::ByValue {
                        by_value.push(row);
                    } else {
                        by_name.push(row);
                    }
                }
                if j < toks.len() {
                    return Err(syntax(file, lineno, "export row with a name but no value"));
                }
            }
            MapState::None => {}
        }
    }
    map.segments
        .sort_by(|a, b| (a.start, &a.name).cmp(&(b.start, &b.name)));
    for (m, seg, offs, size) in contribs {
        if size == 0 {
            continue;
        }
        if let Some(s) = map.segments.iter().find(|s| s.name == seg) {
            map.modules.push(ModuleRange {
                name: m,
                start: s.start.saturating_add(offs),
                len: size,
                code: s.code,
                segment: Some(seg),
            });
        }
    }
    map.modules
        .sort_by(|a, b| (a.start, &a.name).cmp(&(b.start, &b.name)));
    let rows = if saw_by_value { by_value } else { by_name };
    let mut syms = Vec::new();
    for (name, val, flags) in rows {
        let linker_made = name.starts_with("__") && name.ends_with("__");
        let kind = if flags.contains('E') {
            SymbolKind::Absolute
        } else if linker_made {
            SymbolKind::Other
        } else if map.segments.is_empty() {
            SymbolKind::Text
        } else {
            match map.segments.iter().find(|s| s.contains(val)) {
                Some(s) if s.code => SymbolKind::Text,
                Some(s) if s.name.to_ascii_uppercase().contains("BSS") => SymbolKind::Bss,
                Some(_) => SymbolKind::Data,
                None => SymbolKind::Other,
            }
        };
        let mut s = symbol(&name, val, kind);
        if kind == SymbolKind::Text {
            s.module = super::module_at(&map.modules, val);
        }
        syms.push(s);
    }
    unparsed.report(file, "modules and segment lists", &mut map);
    map.symbols = SymbolTable::new(syms);
    Ok(map)
}
