//! Minimal JSON output helpers shared by the speedscope and trace writers.

use std::fmt::Write as _;

/// Append `s` as a JSON string literal (with quotes) to `out`.
pub(crate) fn push_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{2028}' || c == '\u{2029}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Append a finite float as a JSON number with at most `decimals` decimals,
/// trailing zeros removed (`1.5`, `2`, `0.001`). Non-finite values (which
/// JSON cannot express) are written as 0.
pub(crate) fn push_f64(out: &mut String, v: f64, decimals: usize) {
    if !v.is_finite() {
        out.push('0');
        return;
    }
    let start = out.len();
    let _ = write!(out, "{v:.decimals$}");
    if out[start..].contains('.') {
        while out.ends_with('0') {
            out.pop();
        }
        if out.ends_with('.') {
            out.pop();
        }
    }
    if &out[start..] == "-0" {
        out.truncate(start);
        out.push('0');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_escaped() {
        let mut s = String::new();
        push_str(&mut s, "a\"b\\c\nd\u{1}e\u{2028}");
        assert_eq!(s, r#""a\"b\\c\nd\u0001e\u2028""#);
        let v: String = serde_json::from_str(&s).unwrap();
        assert_eq!(v, "a\"b\\c\nd\u{1}e\u{2028}");
    }

    #[test]
    fn floats_are_trimmed() {
        let cases = [
            (1.5, "1.5"),
            (2.0, "2"),
            (0.0004, "0"),
            (0.001, "0.001"),
            (-0.0001, "0"),
            (f64::NAN, "0"),
            (123456789.123456, "123456789.123"),
        ];
        for (v, want) in cases {
            let mut s = String::new();
            push_f64(&mut s, v, 3);
            assert_eq!(s, want, "{v}");
        }
    }
}
