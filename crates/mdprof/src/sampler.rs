//! A PC-sampling profiler inside the emulator:
//! `retroprof profile ROM --sample-histogram FILE [--sample-hz HZ]
//! [--sample-format petit|text]`.
//!
//! [`Sampler`] is an [`MdObserver`] that reads the program counter at a
//! fixed rate of EMULATED time, like a timer interrupt of a real sampling
//! profiler (the PC-98 Petit Profiler of issue 7), and counts the samples in
//! a [`retroprof_samples::Histogram`]. The histogram can then be written in
//! the Petit layout or the text format and read back by `retroprof samples`,
//! which turns it into a per-function profile; comparing that with the
//! emulator's exact cycle profile shows how far a sampling profiler can be
//! trusted (see `tests/sampler.rs`).
//!
//! # Sample instants
//! Sample `k` is taken at master clock `t_k = floor(k * mclk_hz / hz)`
//! (integer arithmetic: deterministic, no drift), `mclk_hz` being the
//! region's master clock (53,693,175 Hz NTSC, 53,203,424 Hz PAL:
//! md-timing.md). The sample is the address of the instruction executing
//! at `t_k`: instruction `i` occupies `[end_i - cost_i, end_i)`, where
//! `end_i` is the clock at its boundary plus what the boundary charged
//! after it, its refresh delay and any Z80 bus stall
//! ([`retroprof_megadrive::Clock::instruction_end`]: `clock.mclk()` is
//! taken before those, which `cost.total` includes). Time between two instructions that no
//! instruction covers is exception processing (interrupt entry): its
//! samples go to the handler the exception jumped to, as the profiler
//! charges interrupt entry to the handler. Time spent in `STOP` is reported
//! by the CPU as the STOP instruction's own time, so it is sampled there.
//!
//! # Files
//! - Petit layout ([`retroprof_samples::write_petit`]): 65,536 little-endian
//!   u16 counters, counter `i` = samples at address `base + i`. A Mega
//!   Drive ROM is larger than 64 KiB, so the file covers a 64 KiB window
//!   starting at `base`: given by the user, or derived by
//!   [`derive_base`] as the 256-byte-aligned window holding the most
//!   samples (ties: the lowest address), which is the code region of
//!   small ROMs. Samples outside the window are counted and reported (not
//!   written). The file has no header: read it back with
//!   `retroprof samples FILE --map symbol.txt --base 0xBASE`.
//! - Text ([`retroprof_samples::write_text`]): `ADDRESS COUNT` lines, every
//!   address, no window.
//!
//! # API for the CLI
//! ```ignore
//! let mut sampler = Sampler::new(args.sample_hz.unwrap_or(DEFAULT_HZ), system.mclk_hz())?;
//! // run it alongside the profiler: system.run_frame(&mut (&mut profiler, &mut sampler))
//! let hist = sampler.finish();
//! let info = write_file(&hist, format /* HistFormat::Petit or ::Text */, None, &path)?;
//! eprintln!("{}", info.describe(&path)); // samples, base, outside the window
//! ```

use std::path::Path;

use retroprof_megadrive::ExceptionKind;
use retroprof_megadrive::{Clock, InstrCost, MdObserver};
use retroprof_samples::histogram::External;
use retroprof_samples::{HistFormat, Histogram};

/// Default sampling rate (`--sample-hz`): 1 kHz, a common timer rate for
/// sampling profilers.
pub const DEFAULT_HZ: u64 = 1000;

/// Errors of the sampler.
#[derive(Debug, thiserror::Error)]
pub enum SamplerError {
    #[error("--sample-hz {hz}: expected a rate between 1 Hz and the master clock ({mclk_hz} Hz)")]
    BadRate { hz: u64, mclk_hz: u64 },
    #[error("--sample-format {0}: expected petit or text")]
    BadFormat(String),
    #[error("cannot write {path}: {source}")]
    Write {
        path: String,
        #[source]
        source: retroprof_profile::Error,
    },
}

/// The sampling observer (see the module documentation).
pub struct Sampler {
    hz: u64,
    mclk_hz: u64,
    /// Index of the next sample and its instant.
    k: u64,
    next: u64,
    started: bool,
    /// End of the last instruction seen.
    last_end: u64,
    /// Handler of an exception reported since the last instruction.
    handler: Option<u32>,
    hist: Histogram,
    /// Samples that fell in uncovered time with no exception reported.
    unplaced: u64,
}

impl Sampler {
    /// Sample `hz` times per second of emulated time, the system's master
    /// clock running at `mclk_hz` ([`retroprof_megadrive::System::mclk_hz`]).
    pub fn new(hz: u64, mclk_hz: u64) -> Result<Sampler, SamplerError> {
        if hz == 0 || hz > mclk_hz {
            return Err(SamplerError::BadRate { hz, mclk_hz });
        }
        Ok(Sampler {
            hz,
            mclk_hz,
            k: 0,
            next: 0,
            started: false,
            last_end: 0,
            handler: None,
            hist: Histogram::new(1),
            unplaced: 0,
        })
    }

    /// Sampling rate in Hz.
    pub fn hz(&self) -> u64 {
        self.hz
    }

    fn instant(&self, k: u64) -> u64 {
        ((k as u128 * self.mclk_hz as u128) / self.hz as u128) as u64
    }

    /// Samples taken so far.
    pub fn samples(&self) -> u64 {
        self.hist.total()
    }

    /// The histogram so far.
    pub fn histogram(&self) -> &Histogram {
        &self.hist
    }

    /// Stop sampling; the histogram (1-byte buckets, 24-bit addresses).
    pub fn finish(mut self) -> Histogram {
        if self.unplaced > 0 {
            self.hist.external.push(External {
                what: "unreported time".into(),
                explanation: "time no instruction or exception of the 68000 covered".into(),
                samples: self.unplaced,
            });
        }
        self.hist
            .sources
            .push(format!("retroprof emulator, {} Hz", self.hz));
        self.hist
    }

    #[cold]
    fn take(&mut self, pc: u32, start: u64, end: u64) {
        if !self.started {
            // First event: the first sample is the first instant after it
            // started.
            self.started = true;
            self.k = ((start as u128 * self.hz as u128) / self.mclk_hz as u128) as u64;
            self.next = self.instant(self.k);
            while self.next < start {
                self.k += 1;
                self.next = self.instant(self.k);
            }
            self.last_end = start;
        }
        while self.next < end {
            if self.next < start {
                // Before this instruction started: exception processing.
                match self.handler {
                    Some(h) => self.hist.add((h & 0xFF_FFFF) as u64, 1),
                    None => self.unplaced += 1,
                }
            } else {
                self.hist.add((pc & 0xFF_FFFF) as u64, 1);
            }
            self.k += 1;
            self.next = self.instant(self.k);
        }
    }
}

impl MdObserver for Sampler {
    #[inline(always)]
    fn instruction(&mut self, pc: u32, cost: InstrCost, clock: &Clock) {
        let end = clock.instruction_end(&cost);
        if end > self.next || !self.started {
            let start = end.saturating_sub(cost.total as u64);
            self.take(pc, start, end);
        }
        self.last_end = end;
        self.handler = None;
    }

    #[inline(always)]
    fn exception(
        &mut self,
        _kind: ExceptionKind,
        _vector: u8,
        handler: u32,
        _mclk: u32,
        _clock: &Clock,
    ) {
        self.handler = Some(handler);
    }
}

/// The 64 KiB Petit window for `h`: the 256-byte-aligned base whose window
/// holds the most samples (ties: the lowest base); 0 for an empty histogram.
pub fn derive_base(h: &Histogram) -> u64 {
    // Samples per 256-byte block, then a sliding sum over 256 blocks.
    let mut blocks: std::collections::BTreeMap<u64, u64> = std::collections::BTreeMap::new();
    for (&a, &n) in &h.counts {
        *blocks.entry(a >> 8).or_insert(0) += n;
    }
    let keys: Vec<(u64, u64)> = blocks.into_iter().collect();
    let mut best = (0u64, 0u64); // (samples, base block)
    let mut j = 0;
    let mut sum = 0u64;
    // Windows starting at each occupied block cover every optimum.
    for i in 0..keys.len() {
        if i > 0 {
            sum -= keys[i - 1].1;
        }
        if j < i {
            j = i;
            sum = 0;
        }
        while j < keys.len() && keys[j].0 < keys[i].0 + 256 {
            sum += keys[j].1;
            j += 1;
        }
        if sum > best.0 {
            best = (sum, keys[i].0);
        }
    }
    best.1 << 8
}

/// What [`write_file`] wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteInfo {
    pub format: HistFormat,
    pub samples: u64,
    /// Petit: the address of counter 0.
    pub base: Option<u64>,
    /// Petit: samples outside the 64 KiB window (not written).
    pub outside: u64,
    /// Petit: counters clamped at 65,535.
    pub saturated: usize,
}

impl WriteInfo {
    /// One line for the user.
    pub fn describe(&self, path: &Path) -> String {
        match self.base {
            Some(base) => {
                let mut s = format!(
                    "sample histogram: {} samples written to {} (Petit layout, counter 0 = address 0x{base:06X}; \
                     read it with: retroprof samples {} --map SYMBOLS --base 0x{base:X})",
                    self.samples,
                    path.display(),
                    path.display()
                );
                if self.outside > 0 {
                    s.push_str(&format!(
                        "; {} samples outside the 64 KiB window were not written (use --sample-format text)",
                        self.outside
                    ));
                }
                if self.saturated > 0 {
                    s.push_str(&format!(
                        "; {} counters saturated at 65,535",
                        self.saturated
                    ));
                }
                s
            }
            None => format!(
                "sample histogram: {} samples written to {} (text format)",
                self.samples,
                path.display()
            ),
        }
    }
}

/// Parse `--sample-format`.
pub fn parse_format(s: &str) -> Result<HistFormat, SamplerError> {
    match HistFormat::from_name(s) {
        Some(f @ (HistFormat::Petit | HistFormat::Text)) => Ok(f),
        _ => Err(SamplerError::BadFormat(s.to_string())),
    }
}

/// Write `h` to any writer in `format` (Petit: window at `base`, or
/// [`derive_base`]).
pub fn write<W: std::io::Write>(
    h: &Histogram,
    format: HistFormat,
    base: Option<u64>,
    w: W,
) -> std::io::Result<WriteInfo> {
    match format {
        HistFormat::Text => {
            retroprof_samples::write_text(h, w)?;
            Ok(WriteInfo {
                format,
                samples: h.total(),
                base: None,
                outside: 0,
                saturated: 0,
            })
        }
        _ => {
            let base = base.unwrap_or_else(|| derive_base(h));
            let st = retroprof_samples::write_petit(h, base, w)?;
            Ok(WriteInfo {
                format: HistFormat::Petit,
                samples: h.placed() - st.outside,
                base: Some(base),
                outside: st.outside,
                saturated: st.saturated,
            })
        }
    }
}

/// [`write()`] to `path`, whole or not at all, replacing an existing file
/// (the user named it).
pub fn write_file(
    h: &Histogram,
    format: HistFormat,
    base: Option<u64>,
    path: &Path,
) -> Result<WriteInfo, SamplerError> {
    let mut info = None;
    retroprof_profile::write::atomic(path, true, |w| {
        info = Some(
            write(h, format, base, w).map_err(|source| retroprof_profile::Error::Io {
                path: path.display().to_string(),
                source,
            })?,
        );
        Ok(())
    })
    .map_err(|source| SamplerError::Write {
        path: path.display().to_string(),
        source,
    })?;
    Ok(info.expect("written"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_is_the_busiest_window() {
        let mut h = Histogram::new(1);
        h.add(0x100, 5);
        h.add(0x20000, 3);
        h.add(0x2F000, 3);
        assert_eq!(derive_base(&h), 0x20000);
        h.add(0x150, 2);
        assert_eq!(derive_base(&h), 0x100);
        assert_eq!(derive_base(&Histogram::new(1)), 0);
    }

    #[test]
    fn instants_are_exact_multiples() {
        let hz = retroprof_megadrive::timing::MCLK_HZ_NTSC;
        let s = Sampler::new(1000, hz).unwrap();
        assert_eq!(s.instant(1), hz / 1000);
        assert_eq!(s.instant(1000), hz);
        assert!(Sampler::new(0, 10).is_err());
    }
}
