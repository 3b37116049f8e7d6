//! Text decoding for map files: UTF-8 when the bytes are valid UTF-8,
//! otherwise Shift-JIS (cp932, what Japanese PC-98 toolchains write).

use std::borrow::Cow;

/// How a map's bytes were decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextEncoding {
    Utf8,
    /// Shift-JIS / cp932 (WHATWG `Shift_JIS`, which is Microsoft's cp932).
    ShiftJis,
    /// Not valid in either; decoded as Shift-JIS with U+FFFD replacements.
    ShiftJisLossy,
}

impl TextEncoding {
    pub fn name(self) -> &'static str {
        match self {
            TextEncoding::Utf8 => "UTF-8",
            TextEncoding::ShiftJis => "Shift-JIS (cp932)",
            TextEncoding::ShiftJisLossy => "Shift-JIS (cp932, with undecodable bytes)",
        }
    }
}

/// Decode map bytes: valid UTF-8 (a leading BOM is dropped) stays UTF-8;
/// anything else is decoded as Shift-JIS/cp932. Never fails.
pub fn decode_text(bytes: &[u8]) -> (Cow<'_, str>, TextEncoding) {
    if let Ok(s) = std::str::from_utf8(bytes) {
        return (
            Cow::Borrowed(s.strip_prefix('\u{feff}').unwrap_or(s)),
            TextEncoding::Utf8,
        );
    }
    let (text, had_errors) = encoding_rs::SHIFT_JIS.decode_without_bom_handling(bytes);
    let enc = if had_errors {
        TextEncoding::ShiftJisLossy
    } else {
        TextEncoding::ShiftJis
    };
    (text, enc)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_stays_utf8() {
        let (t, e) = decode_text("0000:0010  _main\n".as_bytes());
        assert_eq!(e, TextEncoding::Utf8);
        assert_eq!(t, "0000:0010  _main\n");
    }

    #[test]
    fn shift_jis_is_decoded() {
        // "表示" in Shift-JIS: 0x95 0x5C 0x8E 0xA6 (note the 0x5C trail byte).
        let bytes = b"0000:0010  _\x95\x5c\x8e\xa6\n";
        let (t, e) = decode_text(bytes);
        assert_eq!(e, TextEncoding::ShiftJis);
        assert_eq!(t, "0000:0010  _表示\n");
    }

    #[test]
    fn garbage_is_lossy_not_a_panic() {
        let (t, e) = decode_text(b"ab\x81\x20\xff\xfe");
        assert_eq!(e, TextEncoding::ShiftJisLossy);
        assert!(t.contains('\u{fffd}'));
    }
}
