//! `nm` listings: SGDK's `symbol.txt` (`nm -n`, from SGDK 2.10 `nm -n -l`),
//! also with `-S` sizes and multi-file headers.
//!
//! Accepted lines (CRLF or LF endings, blank lines ignored):
//! ```text
//! 0000c758 T VDP_waitVBlank
//! 0000c758 00000194 T VDP_waitVBlank          (nm -S: size)
//! 0000c758 T VDP_waitVBlank\t/sgdk/src/vdp.c:120  (nm -l)
//!          U _hard_reset                      (no address: undefined)
//! out/sega.o:                                 (nm on several files: module)
//! ```
//! Names may contain spaces (`nm -C` demangled C++), so the name is the rest
//! of the line after the type letter. Local assembly labels (names starting
//! with `.`, e.g. `.loop_do_copy`) get [`SymbolKind::Other`] so that
//! [`crate::SymbolTable::lookup`] with [`SymbolKind::Text`] answers the
//! function they sit in; [`crate::FunctionIndex`] merges them the same way.

use crate::{Error, Symbol, SymbolKind};

/// Result of parsing one listing.
#[derive(Debug, Default)]
pub(crate) struct NmListing {
    pub symbols: Vec<Symbol>,
    /// Names of undefined symbols (`U`, `w` without address).
    pub undefined: Vec<String>,
}

/// nm's type letter folded into a [`SymbolKind`].
pub fn kind_of_letter(t: char) -> SymbolKind {
    match t {
        'T' | 't' | 'W' | 'w' | 'i' | 'I' => SymbolKind::Text,
        'D' | 'd' | 'R' | 'r' | 'G' | 'g' | 'S' | 's' | 'V' | 'v' => SymbolKind::Data,
        'B' | 'b' | 'C' | 'c' => SymbolKind::Bss,
        'A' | 'a' => SymbolKind::Absolute,
        _ => SymbolKind::Other,
    }
}

/// True for a local assembly label (`.loop`, `.get_bit`).
pub fn is_local_label(name: &str) -> bool {
    name.starts_with('.') && name.len() > 1
}

fn is_hex(s: &str) -> bool {
    !s.is_empty() && s.len() <= 16 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

fn syntax(path: &str, line: usize, msg: impl Into<String>) -> Error {
    Error::Syntax {
        path: path.to_string(),
        line,
        // A message quotes the bad text: at most a short prefix of it
        // (issue 21 campaign: a 1 MB token was echoed whole).
        msg: crate::clip(&msg.into(), 200).into_owned(),
    }
}

/// Split `rest` = `T name...` into the type letter and the name.
fn type_and_name<'a>(rest: &'a str, path: &str, lineno: usize) -> Result<(char, &'a str), Error> {
    let mut chars = rest.chars();
    let t = chars
        .next()
        .ok_or_else(|| syntax(path, lineno, "expected a type letter after the address"))?;
    if !(t.is_ascii_alphabetic() || t == '?' || t == '-') {
        return Err(syntax(
            path,
            lineno,
            format!("expected an nm type letter (T, t, D, B, U...), found `{t}`"),
        ));
    }
    let after = chars.as_str();
    if !after.starts_with([' ', '\t']) {
        return Err(syntax(
            path,
            lineno,
            format!("expected a space after the type letter `{t}`"),
        ));
    }
    let name = after.trim_start_matches([' ', '\t']);
    if name.is_empty() {
        return Err(syntax(path, lineno, "symbol name missing"));
    }
    Ok((t, name))
}

/// Parse a whole listing; `path` names the file in errors.
pub(crate) fn parse(path: &str, text: &str) -> Result<NmListing, Error> {
    let mut out = NmListing::default();
    let mut module: Option<String> = None;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    // CR-only line ends (issue 21: the whole file became one symbol name).
    let text = crate::normalize_line_ends(text);
    for (i, raw) in text.split('\n').enumerate() {
        let lineno = i + 1;
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        if line.trim().is_empty() {
            continue;
        }
        // `nm -l` appends `\tfile:line` (the name itself has no tab).
        let (main, loc) = match line.split_once('\t') {
            Some((m, l)) if !m.trim().is_empty() => (m.trim_end(), Some(l.trim())),
            _ => (line, None),
        };
        if main.starts_with([' ', '\t']) {
            // `         U _hard_reset`: no address.
            let rest = main.trim_start();
            let (t, name) = type_and_name(rest, path, lineno)?;
            if matches!(t, 'U' | 'w' | 'v') {
                out.undefined.push(name.to_string());
                continue;
            }
            return Err(syntax(
                path,
                lineno,
                format!("symbol `{name}` of type `{t}` has no address"),
            ));
        }
        let (first, rest) = match main.split_once(' ') {
            Some(x) => x,
            None => {
                if let Some(m) = main.strip_suffix(':') {
                    module = Some(m.to_string());
                    continue;
                }
                return Err(syntax(
                    path,
                    lineno,
                    format!("expected `ADDRESS TYPE NAME` (nm output, e.g. `0000c758 T main`), found `{}`", crate::clip(main, 80)),
                ));
            }
        };
        if !is_hex(first) {
            if main.ends_with(':') && !main.contains(' ') {
                module = Some(main.trim_end_matches(':').to_string());
                continue;
            }
            return Err(syntax(
                path,
                lineno,
                format!(
                    "expected a hexadecimal address at the start of the line, found `{}`",
                    crate::clip(first, 40)
                ),
            ));
        }
        let addr = u64::from_str_radix(first, 16).map_err(|_| {
            syntax(
                path,
                lineno,
                format!("address `{first}` is not hexadecimal"),
            )
        })?;
        // Optional size column (`nm -S`): a second hex word followed by a
        // type letter and a name.
        let mut size = None;
        let mut rest = rest.trim_start_matches(' ');
        if let Some((second, after)) = rest.split_once(' ') {
            if second.len() >= 2 && is_hex(second) {
                size = Some(u64::from_str_radix(second, 16).map_err(|_| {
                    syntax(path, lineno, format!("size `{second}` is not hexadecimal"))
                })?);
                rest = after.trim_start_matches(' ');
            }
        }
        let (t, name) = type_and_name(rest, path, lineno)?;
        if t == 'U' {
            // Undefined, even when printed with a (zero) address.
            out.undefined.push(name.to_string());
            continue;
        }
        let mut kind = kind_of_letter(t);
        if kind == SymbolKind::Text && is_local_label(name) {
            kind = SymbolKind::Other;
        }
        let (file, line_no) = match loc {
            Some(loc) if !loc.is_empty() => parse_location(loc),
            _ => (None, None),
        };
        out.symbols.push(Symbol {
            name: name.to_string(),
            addr,
            size: size.filter(|&s| s > 0),
            kind,
            global: t.is_ascii_uppercase(),
            module: module.clone(),
            file,
            line: line_no,
        });
    }
    Ok(out)
}

/// `file:line` (the file may itself contain `:`, e.g. `C:\src\a.c:12`);
/// `file:?` or a bare file give no line.
fn parse_location(loc: &str) -> (Option<String>, Option<u32>) {
    match loc.rsplit_once(':') {
        Some((f, l)) if !f.is_empty() && l.bytes().all(|b| b.is_ascii_digit()) && !l.is_empty() => {
            (Some(f.to_string()), l.parse().ok())
        }
        Some((f, "?")) if !f.is_empty() => (Some(f.to_string()), None),
        _ => (Some(loc.to_string()), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edge_cases() {
        let text = "00000000 a __DYNAMIC\r\n\
                    \r\n\
                    \x20        U _hard_reset\r\n\
                    00000986 t .loop_do_copy\r\n\
                    0000061e T main.isra.0\t/home/me/src/main.c:42\r\n\
                    e0ff0064 T _edata\r\n\
                    00003a44 00000020 T SYS_doVBlankProcessEx.constprop.57\r\n\
                    000062c0 T read6Btn.lto_priv.71\tC:\\sgdk\\src\\joy.c:310\r\n\
                    00001000 T operator new(unsigned long)\n\
                    out/extra.o:\n\
                    00002000 b buf\t??:?\n\
                    00000000 U also_undefined\n";
        let l = parse("symbol.txt", text).unwrap();
        assert_eq!(l.undefined, ["_hard_reset", "also_undefined"]);
        let s = &l.symbols;
        assert_eq!(s.len(), 8);
        assert_eq!(s[0].kind, SymbolKind::Absolute);
        assert!(!s[0].global);
        assert_eq!(s[1].name, ".loop_do_copy");
        assert_eq!(s[1].kind, SymbolKind::Other);
        assert_eq!(s[2].name, "main.isra.0");
        assert_eq!(s[2].file.as_deref(), Some("/home/me/src/main.c"));
        assert_eq!(s[2].line, Some(42));
        assert_eq!(s[3].addr, 0xe0ff0064);
        assert_eq!(s[3].kind, SymbolKind::Text);
        assert_eq!(s[4].size, Some(0x20));
        assert_eq!(s[4].name, "SYS_doVBlankProcessEx.constprop.57");
        assert_eq!(s[5].file.as_deref(), Some("C:\\sgdk\\src\\joy.c"));
        assert_eq!(s[5].line, Some(310));
        assert_eq!(s[6].name, "operator new(unsigned long)");
        assert_eq!(s[7].module.as_deref(), Some("out/extra.o"));
        assert_eq!(s[7].kind, SymbolKind::Bss);
        assert_eq!(s[7].line, None);
        assert_eq!(s[6].module, None);
    }

    #[test]
    fn errors_name_file_and_line() {
        let cases = [
            ("0000 T a\nzzzz T b\n", 2, "hexadecimal address"),
            ("0000 T a\n00001000\n", 2, "ADDRESS TYPE NAME"),
            ("00001000 T\n", 1, "type letter"),
            ("00001000 T \n", 1, "name missing"),
            ("00001000 Tname\n", 1, "space after the type letter"),
            ("00001000 % x\n", 1, "nm type letter"),
            (
                "0000 T a\r\n0000 T b\r\n         T orphan\r\n",
                3,
                "no address",
            ),
            ("000000000000000001 T big\n", 1, "hexadecimal address"),
        ];
        for (text, line, what) in cases {
            let e = parse("sym.txt", text).unwrap_err();
            let msg = e.to_string();
            assert!(
                msg.starts_with(&format!("sym.txt:{line}: ")),
                "{text:?}: {msg}"
            );
            assert!(msg.contains(what), "{text:?}: {msg}");
        }
    }
}
