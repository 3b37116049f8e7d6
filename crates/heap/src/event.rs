//! Allocation events, their text forms (the Daedalus tracker's lines and our
//! generic line format, see `FORMAT.md`), the line parser and the writer.

use std::fmt::Write as _;
use std::io::{self, Write};

/// What happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// `size` bytes were allocated at `ptr`, called from return address
    /// `caller`.
    Alloc { size: u64, ptr: u64, caller: u64 },
    /// The block at `ptr` was freed from return address `caller`.
    Free { ptr: u64, caller: u64 },
    /// A frame marker: frame `n` starts here.
    Frame(u64),
}

/// One event of an allocation log.
///
/// Build one with [`HeapEvent::alloc`], [`HeapEvent::free`] or
/// [`HeapEvent::frame`] and feed it to [`crate::Replay::push`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeapEvent {
    pub kind: EventKind,
    /// `new[]` / `delete[]` (the tracker's `Allocating[]` / `Freeing[]`).
    pub array: bool,
    /// The frame this event happened in, when the line says so
    /// (`frame=N`); a larger number than the current frame acts as a frame
    /// marker.
    pub frame: Option<u64>,
    /// A timestamp in any monotonic unit (`time=T`, e.g. master clocks).
    pub time: Option<u64>,
    /// Further return addresses beyond `caller`, from the caller's caller
    /// towards the root (`stack=A,B,...`). Empty for the tracker's logs.
    pub stack: Vec<u64>,
}

impl HeapEvent {
    pub fn alloc(size: u64, ptr: u64, caller: u64) -> Self {
        Self::with_kind(EventKind::Alloc { size, ptr, caller })
    }

    pub fn free(ptr: u64, caller: u64) -> Self {
        Self::with_kind(EventKind::Free { ptr, caller })
    }

    pub fn frame(n: u64) -> Self {
        Self::with_kind(EventKind::Frame(n))
    }

    pub fn with_kind(kind: EventKind) -> Self {
        HeapEvent {
            kind,
            array: false,
            frame: None,
            time: None,
            stack: Vec::new(),
        }
    }

    /// Marks the event as `new[]` / `delete[]`.
    pub fn array(mut self, array: bool) -> Self {
        self.array = array;
        self
    }

    pub fn at_frame(mut self, frame: u64) -> Self {
        self.frame = Some(frame);
        self
    }

    pub fn at_time(mut self, time: u64) -> Self {
        self.time = Some(time);
        self
    }

    pub fn with_stack(mut self, stack: Vec<u64>) -> Self {
        self.stack = stack;
        self
    }

    /// This event as one line of the generic format (no newline).
    pub fn to_line(&self) -> String {
        let mut s = String::with_capacity(48);
        let arr = if self.array { "[]" } else { "" };
        match self.kind {
            EventKind::Alloc { size, ptr, caller } => {
                let _ = write!(s, "alloc{arr} {size} 0x{ptr:08x} 0x{caller:08x}");
            }
            EventKind::Free { ptr, caller } => {
                let _ = write!(s, "free{arr} 0x{ptr:08x} 0x{caller:08x}");
            }
            EventKind::Frame(n) => {
                let _ = write!(s, "frame {n}");
            }
        }
        if !matches!(self.kind, EventKind::Frame(_)) {
            if let Some(f) = self.frame {
                let _ = write!(s, " frame={f}");
            }
        }
        if let Some(t) = self.time {
            let _ = write!(s, " time={t}");
        }
        if !self.stack.is_empty() {
            s.push_str(" stack=");
            for (i, a) in self.stack.iter().enumerate() {
                if i > 0 {
                    s.push(',');
                }
                let _ = write!(s, "0x{a:08x}");
            }
        }
        s
    }
}

/// Which dialect a line was written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// `Allocating 36 bytes - 09c40620 - RA is 08953a94` (Daedalus).
    Daedalus,
    /// `alloc 36 0x09c40620 0x08953a94` (ours, see `FORMAT.md`).
    Generic,
}

/// The result of parsing one line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Parsed {
    /// Blank line or comment.
    Nothing,
    /// The generic format's optional header line
    /// (`retroprof-heap 1 [arch=m68k]`).
    Header {
        arch: Option<String>,
    },
    Event(HeapEvent, Dialect),
}

/// Splits on ASCII whitespace, skipping empty pieces.
struct Tokens<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for Tokens<'a> {
    type Item = &'a [u8];
    #[inline]
    fn next(&mut self) -> Option<&'a [u8]> {
        let start = self.rest.iter().position(|b| !b.is_ascii_whitespace())?;
        let rest = &self.rest[start..];
        let end = rest
            .iter()
            .position(|b| b.is_ascii_whitespace())
            .unwrap_or(rest.len());
        self.rest = &rest[end..];
        Some(&rest[..end])
    }
}

fn show(tok: Option<&[u8]>) -> String {
    match tok {
        None => "the end of the line".to_string(),
        Some(t) if t.len() > 40 => crate::reader::quote_prefix(t),
        Some(t) => format!("'{}'", String::from_utf8_lossy(t)),
    }
}

#[inline]
fn hex_digits(t: &[u8]) -> Option<u64> {
    if t.is_empty() || t.len() > 16 {
        return None;
    }
    let mut v: u64 = 0;
    for &b in t {
        let d = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            b'A'..=b'F' => b - b'A' + 10,
            _ => return None,
        };
        v = (v << 4) | d as u64;
    }
    Some(v)
}

/// A hexadecimal address, with or without `0x`.
#[inline]
fn parse_addr(t: &[u8]) -> Option<u64> {
    let t = t
        .strip_prefix(b"0x")
        .or_else(|| t.strip_prefix(b"0X"))
        .unwrap_or(t);
    hex_digits(t)
}

/// A decimal number, or hexadecimal with `0x`.
#[inline]
fn parse_num(t: &[u8]) -> Option<u64> {
    if let Some(h) = t.strip_prefix(b"0x").or_else(|| t.strip_prefix(b"0X")) {
        return hex_digits(h);
    }
    if t.is_empty() || t.len() > 20 {
        return None;
    }
    let mut v: u64 = 0;
    for &b in t {
        if !b.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add((b - b'0') as u64)?;
    }
    Some(v)
}

fn expect_word(tok: Option<&[u8]>, word: &str, ctx: &str) -> Result<(), String> {
    match tok {
        Some(t) if t.eq_ignore_ascii_case(word.as_bytes()) => Ok(()),
        other => Err(format!("expected '{word}' {ctx}, found {}", show(other))),
    }
}

fn expect_addr(tok: Option<&[u8]>, what: &str) -> Result<u64, String> {
    match tok {
        Some(t) => parse_addr(t).ok_or_else(|| {
            format!(
                "expected {what} (hexadecimal address), found {}",
                show(Some(t))
            )
        }),
        None => Err(format!(
            "expected {what} (hexadecimal address), found the end of the line"
        )),
    }
}

fn expect_num(tok: Option<&[u8]>, what: &str) -> Result<u64, String> {
    match tok {
        Some(t) => parse_num(t)
            .ok_or_else(|| format!("expected {what} (decimal number), found {}", show(Some(t)))),
        None => Err(format!(
            "expected {what} (decimal number), found the end of the line"
        )),
    }
}

/// Parses one line of either dialect. `Err` carries a message saying what
/// was expected (the caller adds file and line).
pub fn parse_line(line: &[u8]) -> Result<Parsed, String> {
    let mut toks = Tokens { rest: line };
    let Some(first) = toks.next() else {
        return Ok(Parsed::Nothing);
    };
    if first.starts_with(b"#") {
        return Ok(Parsed::Nothing);
    }
    match first {
        b"Allocating" | b"Allocating[]" => {
            let array = first.len() > 10;
            let size = expect_num(toks.next(), "the size after 'Allocating'")?;
            expect_word(toks.next(), "bytes", "after the size")?;
            expect_word(toks.next(), "-", "after 'bytes'")?;
            let ptr = expect_addr(toks.next(), "the pointer after 'bytes -'")?;
            expect_word(toks.next(), "-", "after the pointer")?;
            expect_word(toks.next(), "RA", "after the pointer")?;
            expect_word(toks.next(), "is", "after 'RA'")?;
            let caller = expect_addr(toks.next(), "the return address after 'RA is'")?;
            trailing(toks.next())?;
            Ok(Parsed::Event(
                HeapEvent::alloc(size, ptr, caller).array(array),
                Dialect::Daedalus,
            ))
        }
        b"Freeing" | b"Freeing[]" => {
            let array = first.len() > 7;
            let ptr = expect_addr(toks.next(), "the pointer after 'Freeing'")?;
            expect_word(toks.next(), "-", "after the pointer")?;
            expect_word(toks.next(), "RA", "after the pointer")?;
            expect_word(toks.next(), "is", "after 'RA'")?;
            let caller = expect_addr(toks.next(), "the return address after 'RA is'")?;
            trailing(toks.next())?;
            Ok(Parsed::Event(
                HeapEvent::free(ptr, caller).array(array),
                Dialect::Daedalus,
            ))
        }
        b"alloc" | b"alloc[]" => {
            let array = first.len() > 5;
            let size = expect_num(toks.next(), "the size after 'alloc'")?;
            let ptr = expect_addr(toks.next(), "the pointer after the size")?;
            let caller = expect_addr(toks.next(), "the caller after the pointer")?;
            let mut ev = HeapEvent::alloc(size, ptr, caller).array(array);
            options(&mut toks, &mut ev)?;
            Ok(Parsed::Event(ev, Dialect::Generic))
        }
        b"free" | b"free[]" => {
            let array = first.len() > 4;
            let ptr = expect_addr(toks.next(), "the pointer after 'free'")?;
            let caller = expect_addr(toks.next(), "the caller after the pointer")?;
            let mut ev = HeapEvent::free(ptr, caller).array(array);
            options(&mut toks, &mut ev)?;
            Ok(Parsed::Event(ev, Dialect::Generic))
        }
        _ if first.eq_ignore_ascii_case(b"frame") => {
            let n = expect_num(toks.next(), "the frame number after 'frame'")?;
            let mut ev = HeapEvent::frame(n);
            options(&mut toks, &mut ev)?;
            if ev.frame.is_some() || !ev.stack.is_empty() {
                return Err("a frame marker takes only 'time=T'".to_string());
            }
            Ok(Parsed::Event(ev, Dialect::Generic))
        }
        b"retroprof-heap" => {
            let v = toks.next();
            if v != Some(b"1") {
                return Err(format!(
                    "unsupported retroprof-heap format version {} (this build reads version 1)",
                    show(v)
                ));
            }
            let mut arch = None;
            for t in toks {
                if let Some(a) = t.strip_prefix(b"arch=") {
                    arch = Some(String::from_utf8_lossy(a).into_owned());
                } else {
                    return Err(format!(
                        "unknown header field {} (expected 'arch=NAME')",
                        show(Some(t))
                    ));
                }
            }
            Ok(Parsed::Header { arch })
        }
        _ => Err(format!(
            "expected an event ('Allocating', 'Allocating[]', 'Freeing', 'Freeing[]', \
             'alloc', 'free', 'frame') or a '#' comment, found {}",
            show(Some(first))
        )),
    }
}

fn trailing(tok: Option<&[u8]>) -> Result<(), String> {
    match tok {
        None => Ok(()),
        Some(t) => Err(format!(
            "unexpected {} after the return address",
            show(Some(t))
        )),
    }
}

fn options(toks: &mut Tokens<'_>, ev: &mut HeapEvent) -> Result<(), String> {
    for t in toks {
        if let Some(v) = t.strip_prefix(b"frame=") {
            ev.frame = Some(expect_num(Some(v), "the frame number in 'frame='")?);
        } else if let Some(v) = t.strip_prefix(b"time=") {
            ev.time = Some(expect_num(Some(v), "the time in 'time='")?);
        } else if let Some(v) = t.strip_prefix(b"stack=") {
            ev.stack.clear();
            for a in v.split(|&b| b == b',') {
                ev.stack
                    .push(expect_addr(Some(a), "a return address in 'stack='")?);
            }
        } else {
            return Err(format!(
                "unknown field {} (expected 'frame=N', 'time=T' or 'stack=A,B,...')",
                show(Some(t))
            ));
        }
    }
    Ok(())
}

/// Writes events in the generic line format, e.g. from an emulator bridge.
pub struct LogWriter<W: Write> {
    out: W,
}

impl<W: Write> LogWriter<W> {
    /// Starts a log, writing the header line (with the architecture, which
    /// tells the analyser how to turn return addresses into call sites).
    pub fn new(mut out: W, arch: Option<&str>) -> io::Result<Self> {
        match arch {
            Some(a) => writeln!(out, "retroprof-heap 1 arch={a}")?,
            None => writeln!(out, "retroprof-heap 1")?,
        }
        Ok(LogWriter { out })
    }

    pub fn write(&mut self, ev: &HeapEvent) -> io::Result<()> {
        self.out.write_all(ev.to_line().as_bytes())?;
        self.out.write_all(b"\n")
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(line: &str) -> HeapEvent {
        match parse_line(line.as_bytes()).unwrap() {
            Parsed::Event(e, _) => e,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn daedalus_lines() {
        assert_eq!(
            ev("Allocating       36 bytes - 09c40620 - RA is 08953a94"),
            HeapEvent::alloc(36, 0x09c40620, 0x08953a94)
        );
        assert_eq!(
            ev("Allocating[] 8192 bytes - 09c40a00 - RA is 0895e8bc\r"),
            HeapEvent::alloc(8192, 0x09c40a00, 0x0895e8bc).array(true)
        );
        assert_eq!(
            ev("Freeing   09c3fce0 - RA is 08962374"),
            HeapEvent::free(0x09c3fce0, 0x08962374)
        );
        assert_eq!(
            ev("Freeing[]\t09c40a00 -  RA   is 0895e8c4"),
            HeapEvent::free(0x09c40a00, 0x0895e8c4).array(true)
        );
        assert_eq!(ev("Frame 123"), HeapEvent::frame(123));
    }

    #[test]
    fn generic_round_trip() {
        let events = [
            HeapEvent::alloc(36, 0xff1234, 0x2a4)
                .at_frame(7)
                .at_time(99),
            HeapEvent::free(0xff1234, 0x300)
                .array(true)
                .with_stack(vec![0x400, 0x500]),
            HeapEvent::frame(8).at_time(1000),
        ];
        for e in events {
            assert_eq!(ev(&e.to_line()), e);
        }
    }

    #[test]
    fn errors_say_what_was_expected() {
        let e = parse_line(b"Allocating 3x6 bytes - 09c40620 - RA is 08953a94").unwrap_err();
        assert!(e.contains("expected the size after 'Allocating'"), "{e}");
        assert!(e.contains("'3x6'"), "{e}");
        let e = parse_line(b"Freeing 09c40620 - RA is").unwrap_err();
        assert!(e.contains("end of the line"), "{e}");
        let e = parse_line(b"hello").unwrap_err();
        assert!(e.contains("'hello'"), "{e}");
        let e = parse_line(b"alloc 4 0x10 0x20 color=red").unwrap_err();
        assert!(e.contains("unknown field 'color=red'"), "{e}");
        assert!(parse_line(b"Allocating 99999999999999999999999 bytes - 0 - RA is 0").is_err());
        assert!(parse_line(b"free 0x11112222333344445 0x0").is_err());
        assert_eq!(parse_line(b"   ").unwrap(), Parsed::Nothing);
        assert_eq!(parse_line(b"# hi").unwrap(), Parsed::Nothing);
        assert_eq!(
            parse_line(b"retroprof-heap 1 arch=m68k").unwrap(),
            Parsed::Header {
                arch: Some("m68k".into())
            }
        );
        assert!(parse_line(b"retroprof-heap 2").is_err());
    }
}
