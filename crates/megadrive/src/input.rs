//! Pad buttons and scripted input (`FROM-TO:BUTTONS`).

use std::fmt;

/// Pressed buttons of a pad, one bit each.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Buttons(pub u16);

impl Buttons {
    pub const UP: Buttons = Buttons(1 << 0);
    pub const DOWN: Buttons = Buttons(1 << 1);
    pub const LEFT: Buttons = Buttons(1 << 2);
    pub const RIGHT: Buttons = Buttons(1 << 3);
    pub const A: Buttons = Buttons(1 << 4);
    pub const B: Buttons = Buttons(1 << 5);
    pub const C: Buttons = Buttons(1 << 6);
    pub const START: Buttons = Buttons(1 << 7);
    pub const X: Buttons = Buttons(1 << 8);
    pub const Y: Buttons = Buttons(1 << 9);
    pub const Z: Buttons = Buttons(1 << 10);
    pub const MODE: Buttons = Buttons(1 << 11);
    pub const NONE: Buttons = Buttons(0);

    /// The letters accepted in scripts, in bit order.
    pub const LETTERS: &'static str = "UDLRABCSXYZM";

    #[inline]
    pub fn contains(self, b: Buttons) -> bool {
        self.0 & b.0 == b.0
    }

    /// Parse letters of `UDLRABCSXYZM` (case-insensitive; S = Start, M =
    /// Mode). An empty string or `-` means no button.
    pub fn parse(s: &str) -> Result<Buttons, String> {
        let mut v = 0u16;
        if s == "-" {
            return Ok(Buttons(0));
        }
        for c in s.chars() {
            let up = c.to_ascii_uppercase();
            match Self::LETTERS.find(up) {
                Some(i) if c.is_ascii() => v |= 1 << i,
                _ => {
                    return Err(format!(
                        "unknown button {c:?} (expected letters of {})",
                        Self::LETTERS
                    ))
                }
            }
        }
        Ok(Buttons(v))
    }
}

impl std::ops::BitOr for Buttons {
    type Output = Buttons;
    fn bitor(self, o: Buttons) -> Buttons {
        Buttons(self.0 | o.0)
    }
}

impl std::ops::BitOrAssign for Buttons {
    fn bitor_assign(&mut self, o: Buttons) {
        self.0 |= o.0;
    }
}

impl fmt::Display for Buttons {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, c) in Self::LETTERS.chars().enumerate() {
            if self.0 & (1 << i) != 0 {
                write!(f, "{c}")?;
            }
        }
        Ok(())
    }
}

/// One script entry: `buttons` held from frame `from` to `to` inclusive
/// (`to = None`: to the end of the run).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InputSpan {
    pub from: u64,
    pub to: Option<u64>,
    pub buttons: Buttons,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad input spec {spec:?}: {reason} (expected FROM-TO:BUTTONS, FROM:BUTTONS or FROM-:BUTTONS, frames from 0, buttons of UDLRABCSXYZM)")]
pub struct InputParseError {
    pub spec: String,
    pub reason: String,
}

/// A pad's script: the union of its spans (buttons of overlapping spans are
/// OR-ed).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InputScript {
    pub spans: Vec<InputSpan>,
}

impl InputScript {
    /// Parse one spec; several may be comma-separated
    /// (`60-600:R,200-210:C`).
    pub fn parse_spec(spec: &str) -> Result<Vec<InputSpan>, InputParseError> {
        let err = |reason: String| InputParseError {
            spec: spec.to_string(),
            reason,
        };
        let mut out = Vec::new();
        for part in spec.split(',') {
            let part = part.trim();
            if part.is_empty() {
                return Err(err("empty entry".into()));
            }
            let (range, buttons) = part
                .split_once(':')
                .ok_or_else(|| err(format!("{part:?} has no ':'")))?;
            if buttons.trim().is_empty() {
                return Err(err(format!(
                    "{part:?} names no buttons (give letters of {}, or '-' for none)",
                    Buttons::LETTERS
                )));
            }
            let buttons = Buttons::parse(buttons.trim()).map_err(err)?;
            let num = |s: &str| -> Result<u64, InputParseError> {
                let t = s.trim();
                // Digits only: u64's parser also takes a sign ("+5").
                if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(err(format!("{s:?} is not a frame number (digits 0-9)")));
                }
                t.parse::<u64>().map_err(|_| {
                    err(format!(
                        "{s:?} is not a frame number (at most {})",
                        u64::MAX
                    ))
                })
            };
            let (from, to) = match range.split_once('-') {
                None => {
                    let f = num(range)?;
                    (f, Some(f))
                }
                Some((a, "")) => (num(a)?, None),
                Some((a, b)) => {
                    let (f, t) = (num(a)?, num(b)?);
                    if t < f {
                        return Err(err(format!("range {f}-{t} ends before it starts")));
                    }
                    (f, Some(t))
                }
            };
            out.push(InputSpan { from, to, buttons });
        }
        Ok(out)
    }

    /// Build a script from several specs (each may hold comma lists).
    pub fn parse<S: AsRef<str>>(specs: &[S]) -> Result<InputScript, InputParseError> {
        let mut spans = Vec::new();
        for s in specs {
            spans.extend(Self::parse_spec(s.as_ref())?);
        }
        Ok(InputScript { spans })
    }

    /// Buttons held during `frame`.
    pub fn buttons_at(&self, frame: u64) -> Buttons {
        let mut b = Buttons::NONE;
        for s in &self.spans {
            if frame >= s.from && s.to.is_none_or(|t| frame <= t) {
                b |= s.buttons;
            }
        }
        b
    }
}
