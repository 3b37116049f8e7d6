//! Program-counter histograms: reading (Petit Profiler, MS-DOS PROFIL
//! `.PRF`, plain text), summing, and writing (Petit layout, text).
//!
//! A [`Histogram`] holds sample counts by LINEAR address (for real-mode DOS,
//! `segment * 16 + offset` relative to the program's load image, the same
//! addresses the linker map gives), so several files and several segments
//! add up in one place.

use std::collections::BTreeMap;
use std::io::Write;

/// Counter value at which a 16-bit histogram bucket has saturated.
pub const SATURATED: u64 = 0xFFFF;

/// Size of a Petit Profiler histogram: 65,536 little-endian u16 counters
/// indexed by IP (formats.md: `uint16_t log[65536]`).
pub const PETIT_SIZE: usize = 65_536 * 2;

/// Size of the MS-DOS PROFIL `.PRF` header: nine 16-bit shorts.
pub const PRF_HEADER: usize = 18;

/// The histogram file layouts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HistFormat {
    /// 131,072 bytes: 65,536 little-endian u16 counters indexed by IP.
    Petit,
    /// MS-DOS PROFIL `.PRF`: nine-short header, then `bucket_num` shorts.
    Prf,
    /// Text: `ADDRESS COUNT` per line (hex address or `SEG:OFF`), `#`/`;`
    /// comments.
    Text,
}

impl HistFormat {
    pub fn from_name(s: &str) -> Option<HistFormat> {
        match s.to_ascii_lowercase().as_str() {
            "petit" | "petit-profiler" | "raw" => Some(HistFormat::Petit),
            "prf" | "profil" => Some(HistFormat::Prf),
            "text" | "txt" => Some(HistFormat::Text),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            HistFormat::Petit => "petit",
            HistFormat::Prf => "prf",
            HistFormat::Text => "text",
        }
    }
}

/// Samples the profiler counted but could not place at an address (e.g.
/// PROFIL's `hit_dos`), or placed outside the program image.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct External {
    /// Short label, e.g. `DOS`, `I/O`, `above program`.
    pub what: String,
    /// Why these samples are not attributed to the program.
    pub explanation: String,
    pub samples: u64,
}

/// Sample counts by linear address.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Histogram {
    /// Count per bucket start address (sorted; zero counts are not stored).
    pub counts: BTreeMap<u64, u64>,
    /// Bytes each bucket covers (1 for Petit and text; PROFIL buckets are
    /// `bucket_siz` paragraphs).
    pub bucket_bytes: u64,
    /// Samples outside the program that the profiler still counted.
    pub external: Vec<External>,
    /// Bucket addresses whose counter was at its maximum (65,535).
    pub saturated: Vec<u64>,
    /// Files this histogram was read from (for the report).
    pub sources: Vec<String>,
}

/// Errors reading a histogram.
#[derive(Debug, thiserror::Error)]
pub enum HistError {
    #[error("{file}:{line}: {msg}")]
    Syntax {
        file: String,
        line: usize,
        msg: String,
    },
    #[error("{file}: {msg}")]
    Invalid { file: String, msg: String },
    #[error("cannot read {file}: {source}")]
    Io {
        file: String,
        #[source]
        source: std::io::Error,
    },
}

/// How to place the samples of files that do not carry full addresses.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReadOptions {
    /// Linear address of IP 0 for Petit histograms (code segment frame * 16).
    pub petit_base: u64,
    /// Run-time paragraph where the image was loaded (its map address 0).
    /// Subtracted from `SEG:OFF` segments in text files and from PROFIL
    /// physical addresses. For `.PRF` files, `None` means `prog_low_pa`.
    pub load_segment: Option<u16>,
}

impl Histogram {
    /// An empty histogram with buckets of `bucket_bytes` bytes.
    pub fn new(bucket_bytes: u64) -> Self {
        Histogram {
            bucket_bytes: bucket_bytes.max(1),
            ..Default::default()
        }
    }

    /// Add `n` samples at `addr`.
    pub fn add(&mut self, addr: u64, n: u64) {
        if n > 0 {
            let c = self.counts.entry(addr).or_insert(0);
            *c = c.saturating_add(n);
        }
    }

    /// All samples, including external ones.
    pub fn total(&self) -> u64 {
        self.external
            .iter()
            .fold(self.placed(), |t, e| t.saturating_add(e.samples))
    }

    /// Samples that have an address.
    pub fn placed(&self) -> u64 {
        self.counts.values().fold(0u64, |t, &n| t.saturating_add(n))
    }

    /// Sum `other` into `self`. Fails if the bucket sizes differ.
    pub fn merge(&mut self, other: Histogram) -> Result<(), String> {
        if self.counts.is_empty() && self.external.is_empty() && self.sources.is_empty() {
            self.bucket_bytes = other.bucket_bytes;
        } else if self.bucket_bytes != other.bucket_bytes {
            return Err(format!(
                "cannot sum histograms with {}-byte and {}-byte buckets",
                self.bucket_bytes, other.bucket_bytes
            ));
        }
        for (a, n) in other.counts {
            self.add(a, n);
        }
        for e in other.external {
            match self
                .external
                .iter_mut()
                .find(|x| x.what == e.what && x.explanation == e.explanation)
            {
                Some(x) => x.samples = x.samples.saturating_add(e.samples),
                None => self.external.push(e),
            }
        }
        self.saturated.extend(other.saturated);
        self.saturated.sort_unstable();
        self.saturated.dedup();
        self.sources.extend(other.sources);
        Ok(())
    }
}

/// Read a histogram, detecting its format unless `format` is given.
pub fn read(
    file: &str,
    bytes: &[u8],
    format: Option<HistFormat>,
    opts: &ReadOptions,
) -> Result<Histogram, HistError> {
    let format = match format {
        Some(f) => f,
        None => detect(file, bytes)?,
    };
    let mut h = match format {
        HistFormat::Petit => read_petit(file, bytes, opts.petit_base)?,
        HistFormat::Prf => read_prf(file, bytes, opts.load_segment)?,
        HistFormat::Text => {
            let text = std::str::from_utf8(bytes).map_err(|e| HistError::Invalid {
                file: file.to_string(),
                msg: format!(
                    "text histogram is not UTF-8/ASCII (bad byte at offset {})",
                    e.valid_up_to()
                ),
            })?;
            read_text(file, text, opts.load_segment)?
        }
    };
    h.sources = vec![file.to_string()];
    Ok(h)
}

/// Guess the layout from the size and content.
pub fn detect(file: &str, bytes: &[u8]) -> Result<HistFormat, HistError> {
    if bytes.len() == PETIT_SIZE {
        return Ok(HistFormat::Petit);
    }
    if bytes.len() >= PRF_HEADER {
        let n = u16::from_le_bytes([bytes[2], bytes[3]]) as usize;
        if bytes.len() == PRF_HEADER + 2 * n && n > 0 {
            return Ok(HistFormat::Prf);
        }
    }
    if let Ok(text) = std::str::from_utf8(bytes) {
        if text.lines().all(|l| !l.contains('\0')) {
            return Ok(HistFormat::Text);
        }
    }
    let prf_hint = if bytes.len() >= PRF_HEADER {
        let n = u16::from_le_bytes([bytes[2], bytes[3]]) as usize;
        format!(
            "an MS-DOS PROFIL .PRF whose header says bucket_num={n} would be {} bytes",
            PRF_HEADER + 2 * n
        )
    } else {
        format!("an MS-DOS PROFIL .PRF has an {PRF_HEADER}-byte header")
    };
    Err(HistError::Invalid {
        file: file.to_string(),
        msg: format!(
            "{} bytes is not a histogram this tool reads: a Petit Profiler histogram is \
             {PETIT_SIZE} bytes (65,536 little-endian u16 counters); {prf_hint}; a text \
             histogram is UTF-8 `ADDRESS COUNT` lines",
            bytes.len()
        ),
    })
}

/// Petit Profiler layout: 65,536 u16 LE counters, counter `i` is IP `i`;
/// bucket `i` is at linear address `base + i`.
pub fn read_petit(file: &str, bytes: &[u8], base: u64) -> Result<Histogram, HistError> {
    if bytes.len() != PETIT_SIZE {
        return Err(HistError::Invalid {
            file: file.to_string(),
            msg: format!(
                "{} bytes, but a Petit Profiler histogram is exactly {PETIT_SIZE} bytes \
                 (65,536 little-endian u16 counters indexed by IP)",
                bytes.len()
            ),
        });
    }
    let mut h = Histogram::new(1);
    for (ip, c) in bytes.chunks_exact(2).enumerate() {
        let n = u64::from(u16::from_le_bytes([c[0], c[1]]));
        if n > 0 {
            let addr = base + ip as u64;
            h.add(addr, n);
            if n == SATURATED {
                h.saturated.push(addr);
            }
        }
    }
    h.sources = vec![file.to_string()];
    Ok(h)
}

/// The MS-DOS 2.0 PROFIL `.PRF` header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrfHeader {
    /// Clock grain in microseconds.
    pub clock_grain: u16,
    pub bucket_num: u16,
    /// Bucket size in paragraphs.
    pub bucket_siz: u16,
    /// Physical paragraph of the low end of the profiled range.
    pub prog_low_pa: u16,
    pub prog_high_pa: u16,
    pub dos_pa: u16,
    pub hit_io: u16,
    pub hit_dos: u16,
    pub hit_high: u16,
}

impl PrfHeader {
    pub fn parse(b: &[u8]) -> Option<PrfHeader> {
        if b.len() < PRF_HEADER {
            return None;
        }
        let w = |i: usize| u16::from_le_bytes([b[2 * i], b[2 * i + 1]]);
        Some(PrfHeader {
            clock_grain: w(0),
            bucket_num: w(1),
            bucket_siz: w(2),
            prog_low_pa: w(3),
            prog_high_pa: w(4),
            dos_pa: w(5),
            hit_io: w(6),
            hit_dos: w(7),
            hit_high: w(8),
        })
    }

    pub fn to_bytes(&self) -> [u8; PRF_HEADER] {
        let mut out = [0u8; PRF_HEADER];
        let ws = [
            self.clock_grain,
            self.bucket_num,
            self.bucket_siz,
            self.prog_low_pa,
            self.prog_high_pa,
            self.dos_pa,
            self.hit_io,
            self.hit_dos,
            self.hit_high,
        ];
        for (i, w) in ws.iter().enumerate() {
            out[2 * i..2 * i + 2].copy_from_slice(&w.to_le_bytes());
        }
        out
    }
}

/// MS-DOS PROFIL `.PRF`: bucket `i` covers physical paragraphs
/// `prog_low_pa + i * bucket_siz ..`; linear (map) address =
/// physical - `load_segment` * 16 (`load_segment` defaults to `prog_low_pa`).
///
/// Not verified against PROFIL itself (formats.md): whether `prog_low_pa`
/// is the image start or the PSP is unknown; if it is the PSP, pass
/// `load_segment = prog_low_pa + 0x10` (DOS loads the image 10h paragraphs
/// after the PSP, MS KB Q48241). `hit_io`, `hit_dos` and `hit_high` become
/// [`External`] samples.
pub fn read_prf(
    file: &str,
    bytes: &[u8],
    load_segment: Option<u16>,
) -> Result<Histogram, HistError> {
    let bad = |msg: String| HistError::Invalid {
        file: file.to_string(),
        msg,
    };
    let hdr = PrfHeader::parse(bytes).ok_or_else(|| {
        bad(format!(
            "{} bytes: too short for the {PRF_HEADER}-byte PROFIL header (nine shorts)",
            bytes.len()
        ))
    })?;
    let want = PRF_HEADER + 2 * hdr.bucket_num as usize;
    if bytes.len() != want {
        return Err(bad(format!(
            "{} bytes, but the PROFIL header says bucket_num={} so the file should be {want} \
             bytes ({PRF_HEADER}-byte header + 2 x bucket_num)",
            bytes.len(),
            hdr.bucket_num
        )));
    }
    if hdr.bucket_siz == 0 {
        return Err(bad(
            "PROFIL header at byte 4: bucket_siz is 0 paragraphs".into()
        ));
    }
    let bucket_bytes = u64::from(hdr.bucket_siz) * 16;
    let load = u64::from(load_segment.unwrap_or(hdr.prog_low_pa)) * 16;
    let mut h = Histogram::new(bucket_bytes);
    let mut below = 0u64;
    for (i, c) in bytes[PRF_HEADER..].chunks_exact(2).enumerate() {
        let n = u64::from(u16::from_le_bytes([c[0], c[1]]));
        if n == 0 {
            continue;
        }
        let phys = u64::from(hdr.prog_low_pa) * 16 + i as u64 * bucket_bytes;
        if phys < load {
            below += n;
            continue;
        }
        let addr = phys - load;
        h.add(addr, n);
        if n == SATURATED {
            h.saturated.push(addr);
        }
    }
    let mut ext = |what: &str, explanation: &str, n: u64| {
        if n > 0 {
            h.external.push(External {
                what: what.to_string(),
                explanation: explanation.to_string(),
                samples: n,
            });
        }
    };
    ext(
        "DOS",
        "PROFIL hit_dos: the timer interrupted DOS, not the program",
        u64::from(hdr.hit_dos),
    );
    ext(
        "I/O",
        "PROFIL hit_io: the timer interrupted BIOS / I/O code below DOS",
        u64::from(hdr.hit_io),
    );
    ext(
        "above program",
        "PROFIL hit_high: the timer interrupted code above the profiled range",
        u64::from(hdr.hit_high),
    );
    ext(
        "below load segment",
        "PROFIL buckets below the --load-segment paragraph (not the program image)",
        below,
    );
    for w in [hdr.hit_io, hdr.hit_dos, hdr.hit_high] {
        if u64::from(w) == SATURATED {
            h.saturated.push(u64::MAX);
        }
    }
    h.saturated.sort_unstable();
    h.saturated.dedup();
    h.sources = vec![file.to_string()];
    Ok(h)
}

/// Text histogram: one `ADDRESS COUNT` per line. ADDRESS is hex (`1234`,
/// `0x1234`, `1234h`) or `SEG:OFF` hex (linear = (SEG - load) * 16 + OFF);
/// COUNT is decimal. `#` and `;` start comments; blank lines are skipped.
/// The same address may appear several times (counts add).
pub fn read_text(
    file: &str,
    text: &str,
    load_segment: Option<u16>,
) -> Result<Histogram, HistError> {
    let mut h = Histogram::new(1);
    for (i, raw) in text.lines().enumerate() {
        let lineno = i + 1;
        if let Some(v) = raw.trim().strip_prefix("# bucket_bytes ") {
            if let Ok(b) = v.trim().parse::<u64>() {
                h.bucket_bytes = b.max(1);
            }
        }
        let line = raw
            .split(['#', ';'])
            .next()
            .unwrap_or("")
            .trim_end_matches('\r')
            .trim();
        if line.is_empty() {
            continue;
        }
        let err = |msg: String| HistError::Syntax {
            file: file.to_string(),
            line: lineno,
            // At most a short prefix of the bad text is quoted.
            msg: match msg.char_indices().nth(200) {
                Some((i, _)) => format!("{}…", &msg[..i]),
                None => msg,
            },
        };
        let toks: Vec<&str> = line.split_whitespace().collect();
        if toks.len() != 2 {
            return Err(err(format!(
                "expected `ADDRESS COUNT` (e.g. `0000:01A4 12` or `0x1A4 12`), found `{line}`"
            )));
        }
        let addr = parse_address(toks[0], load_segment).map_err(err)?;
        let n: u64 = toks[1]
            .parse()
            .map_err(|_| err(format!("count `{}` is not a decimal number", toks[1])))?;
        h.add(addr, n);
    }
    h.sources = vec![file.to_string()];
    Ok(h)
}

/// Parse a text-histogram address (see [`read_text`]).
pub fn parse_address(s: &str, load_segment: Option<u16>) -> Result<u64, String> {
    let hex = |t: &str| -> Option<u64> {
        let t = t
            .strip_prefix("0x")
            .or_else(|| t.strip_prefix("0X"))
            .unwrap_or(t);
        let t = t.strip_suffix(['h', 'H']).unwrap_or(t);
        if t.is_empty() || t.len() > 16 {
            return None;
        }
        u64::from_str_radix(t, 16).ok()
    };
    if let Some((seg, off)) = s.split_once(':') {
        let seg = hex(seg)
            .filter(|&v| v <= 0xFFFF)
            .ok_or_else(|| format!("segment in `{s}` is not a 16-bit hex number"))?;
        let off = hex(off)
            .filter(|&v| v <= 0xFFFF)
            .ok_or_else(|| format!("offset in `{s}` is not a 16-bit hex number"))?;
        let load = u64::from(load_segment.unwrap_or(0));
        if seg < load {
            return Err(format!(
                "segment {seg:04X} in `{s}` is below the load segment {load:04X}"
            ));
        }
        Ok((seg - load) * 16 + off)
    } else {
        hex(s).ok_or_else(|| format!("address `{s}` is not hex or SEG:OFF"))
    }
}

/// What [`write_petit`] had to change to fit the layout.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PetitWriteStats {
    /// Buckets clamped to 65,535.
    pub saturated: usize,
    /// Samples at addresses outside `base .. base + 65,536` (not written).
    pub outside: u64,
}

/// Write the Petit layout: counter `i` = samples at `base + i`, clamped to
/// 65,535 (as the real profiler's u16 counters would). Buckets must be 1
/// byte. Samples outside the 64 KiB window are counted in the result.
pub fn write_petit<W: Write>(
    h: &Histogram,
    base: u64,
    mut w: W,
) -> std::io::Result<PetitWriteStats> {
    if h.bucket_bytes != 1 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "the Petit layout has 1-byte buckets; this histogram has {}-byte buckets",
                h.bucket_bytes
            ),
        ));
    }
    let mut out = vec![0u8; PETIT_SIZE];
    let mut stats = PetitWriteStats::default();
    for (&a, &n) in &h.counts {
        if a < base || a - base >= 65_536 {
            stats.outside = stats.outside.saturating_add(n);
            continue;
        }
        let i = (a - base) as usize;
        let v = if n >= SATURATED {
            stats.saturated += 1;
            0xFFFF
        } else {
            n as u16
        };
        out[2 * i..2 * i + 2].copy_from_slice(&v.to_le_bytes());
    }
    w.write_all(&out)?;
    Ok(stats)
}

/// Write the text layout read by [`read_text`]: a comment header, then
/// `ADDRESS COUNT` lines (8-digit hex address, decimal count) in address
/// order. External samples are written as comments (they have no address).
pub fn write_text<W: Write>(h: &Histogram, mut w: W) -> std::io::Result<()> {
    writeln!(
        w,
        "# retroprof PC histogram: ADDRESS COUNT (hex linear address, decimal count)"
    )?;
    writeln!(w, "# samples {}", h.placed())?;
    if h.bucket_bytes != 1 {
        writeln!(w, "# bucket_bytes {}", h.bucket_bytes)?;
    }
    for e in &h.external {
        writeln!(
            w,
            "# not placed: {} {} ({})",
            e.samples, e.what, e.explanation
        )?;
    }
    for (a, n) in &h.counts {
        writeln!(w, "{a:08x} {n}")?;
    }
    Ok(())
}
