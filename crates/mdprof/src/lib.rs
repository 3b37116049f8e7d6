//! retroprof-mdprof: the frame-budget profiler for Mega Drive games.
//!
//! - [`Session`]: a ROM, its symbols (found next to the ROM, given, or none)
//!   and the options, turned into the dense attribution table.
//! - [`engine::Profiler`]: the [`MdObserver`] that charges every
//!   instruction to a function, tracks the idle wait, game loops, DMA and a
//!   shadow call stack (see [`engine`] for the exact rules).
//! - [`Session::run`] / [`Session::run_with`]: run the emulator and build
//!   the [`report::Report`].
//! - [`output`]: terminal report, CSV files, JSON, stack profile (folded,
//!   flame graph, pprof, speedscope through `retroprof-profile`).
//! - [`demo`]: the known-costs test ROM embedded in the library.

pub mod code;
pub mod columns;
pub mod demo;
pub mod engine;
pub mod extras;
pub mod gameplay;
pub mod heapbridge;
pub mod html;
pub mod kdebug;
pub mod output;
pub mod pccost;
pub mod report;
pub mod romsyms;
pub mod sampler;
pub mod trace;

mod build;
mod stack;

use std::path::Path;

use retroprof_megadrive::{
    Config, FrameInfo, InputScript, MdObserver, ReferenceRules, Region, Rom, RunError, System,
};
use retroprof_symbols::{FunctionIndex, SymbolKind, SymbolTable, Symbols};

pub use engine::{Attribution, Profiler};
pub use report::Report;

/// Default idle functions (SGDK 1.90+ and older SGDK; sgdk.md).
pub const DEFAULT_IDLE: &[&str] = &["VDP_waitVBlank", "VDP_waitVSync"];

/// Errors the profiler reports (all about the user's input or files).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Symbols(#[from] retroprof_symbols::Error),
    #[error("bad input script: {0}")]
    Input(#[from] retroprof_megadrive::InputParseError),
    #[error("bad --watch {spec:?}: {reason}")]
    Watch { spec: String, reason: String },
    #[error("--from {from} is not before --frames {frames}")]
    From { from: u64, frames: u64 },
}

/// What to profile and how (the command line's options).
#[derive(Clone, Debug)]
pub struct ProfileOptions {
    pub frames: u64,
    pub from: u64,
    pub input: Vec<String>,
    pub input2: Vec<String>,
    pub region: Option<Region>,
    /// Idle function names; empty = [`DEFAULT_IDLE`].
    pub idle: Vec<String>,
    pub top: usize,
    pub keep_labels: bool,
    /// `SYMBOL|ADDR[:b|w|l]`.
    pub watch: Vec<String>,
    /// Where exception (interrupt) entry processing is charged: to the
    /// handler (default) or to the interrupted code, as a hook called
    /// before each instruction (Genesis Plus GX's) charges it.
    pub entry: EntryCharge,
    /// Reference-emulator timing rules to emulate instead of the hardware's
    /// bus-cycle timing (default: none). A comparison aid only.
    pub reference_rules: ReferenceRules,
    /// End the run with the frame in which the game calls `KDebug_Halt()`
    /// ([`kdebug`]); the report covers the frames up to it.
    pub stop_on_halt: bool,
    /// Count the frames the gameplay rule sets aside (boot, display off,
    /// marked as loading: [`gameplay`]) in the load statistics, the worst
    /// frames and `--fail-over-load` (`--include-loading`).
    pub include_loading: bool,
}

/// Where the 68000's exception entry processing (the interrupt
/// acknowledge, the stack frame writes, the vector fetch: 44 cycles for an
/// autovectored interrupt, M68000 User's Manual 8.1) is charged.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EntryCharge {
    /// To the handler the vector points at (e.g. SGDK's `_VINT`): an
    /// interrupt taken while the game waits is busy time of the handler.
    #[default]
    Handler,
    /// To the function whose instruction was interrupted (idle time when
    /// the game was waiting): what a per-instruction hook that charges the
    /// clock difference between two hooks to the previous PC reports,
    /// e.g. the reference figures in shared/reference.
    Interrupted,
}

impl Default for ProfileOptions {
    fn default() -> Self {
        ProfileOptions {
            frames: 1800,
            from: 0,
            input: Vec::new(),
            input2: Vec::new(),
            region: None,
            idle: Vec::new(),
            top: 10,
            keep_labels: false,
            watch: Vec::new(),
            entry: EntryCharge::Handler,
            reference_rules: ReferenceRules::default(),
            stop_on_halt: false,
            include_loading: false,
        }
    }
}

/// A ROM ready to profile.
pub struct Session {
    /// Shared with the report's [`code::CodeProfile`] (the disassembly of
    /// its instructions).
    pub rom: std::sync::Arc<Rom>,
    /// How the ROM is named in reports.
    pub rom_label: String,
    pub symbols: Option<Symbols>,
    /// Shared with the report's [`code::CodeProfile`] (its instructions'
    /// disassembly names branch targets after functions).
    pub index: std::sync::Arc<FunctionIndex>,
    pub attribution: Attribution,
    pub options: ProfileOptions,
    pub idle_found: Vec<String>,
    pub watches: Vec<report::WatchSpec>,
    pub warnings: Vec<String>,
    /// `--source-dir`: where [`code`] looks for source files first (check
    /// it with [`code::check_source_dir`]); set it before running.
    pub source_dir: Option<std::path::PathBuf>,
    pad1: InputScript,
    pad2: InputScript,
}

/// Find the symbols for `rom_path` (ELF preferred, with an nm listing
/// merged; see [`romsyms::find_for_rom`]), or load `explicit`.
pub fn load_symbols(rom_path: &Path, explicit: Option<&Path>) -> Result<Option<Symbols>, Error> {
    match explicit {
        Some(p) => Ok(Some(Symbols::load(p)?)),
        None => Ok(romsyms::find_for_rom(rom_path)?),
    }
}

/// Parse a `--watch` spec against the symbol table.
pub fn parse_watch(spec: &str, table: Option<&SymbolTable>) -> Result<report::WatchSpec, Error> {
    let err = |reason: String| Error::Watch {
        spec: spec.to_string(),
        reason,
    };
    let (what, size) = match spec.rsplit_once(':') {
        Some((w, s)) => {
            let size = match s {
                "b" | "B" => 1,
                "w" | "W" => 2,
                "l" | "L" => 4,
                _ => return Err(err(format!("size {s:?} is not b, w or l"))),
            };
            (w, Some(size))
        }
        None => (spec, None),
    };
    if what.is_empty() {
        return Err(err("no symbol or address".into()));
    }
    let hex = what
        .strip_prefix("0x")
        .or_else(|| what.strip_prefix("0X"))
        .or_else(|| what.strip_prefix('$'));
    let (addr, symbol, sym_size) = if let Some(h) = hex {
        // Hex digits only (the radix parser also takes a sign: "0x+FF0000").
        if h.is_empty() || !h.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(err(format!("{what:?} is not a hex address")));
        }
        let a = u32::from_str_radix(h, 16)
            .ok()
            .filter(|&a| a <= 0xFF_FFFF)
            .ok_or_else(|| {
                err(format!(
                    "{what:?} is beyond the 68000's 24-bit address space (0x000000-0xFFFFFF)"
                ))
            })?;
        (a, None, None)
    } else {
        let table = table
            .ok_or_else(|| err("no symbols loaded: give an address such as 0xFF0010".into()))?;
        let s = table
            .symbols()
            .iter()
            .find(|s| s.name == what && s.kind != SymbolKind::Absolute)
            .ok_or_else(|| err(format!("no symbol named {what:?}")))?;
        let sz = s
            .size
            .filter(|&z| z == 1 || z == 2 || z == 4)
            .map(|z| z as u8);
        (s.addr as u32, Some(what.to_string()), sz)
    };
    let size = size.or(sym_size).unwrap_or(4);
    let addr = addr & 0xFF_FFFF;
    if size > 1 && addr & 1 != 0 {
        return Err(err(format!(
            "odd address 0x{addr:06x} for a {size}-byte value"
        )));
    }
    Ok(report::WatchSpec {
        spec: spec.to_string(),
        symbol,
        addr,
        size,
    })
}

impl Session {
    /// Prepare a run: mask and check the symbols, build the dense index and
    /// attribution table, resolve watches and idle functions.
    pub fn new(
        rom: Rom,
        rom_label: String,
        mut symbols: Option<Symbols>,
        options: ProfileOptions,
    ) -> Result<Session, Error> {
        if options.from >= options.frames && options.frames > 0 {
            return Err(Error::From {
                from: options.from,
                frames: options.frames,
            });
        }
        let pad1 = InputScript::parse(&options.input)?;
        let pad2 = InputScript::parse(&options.input2)?;
        let mut warnings = Vec::new();
        let rom_len = rom.data.len() as u64;
        if let Some(s) = symbols.as_mut() {
            s.mask_addresses(0xFF_FFFF);
            warnings.append(&mut s.warnings);
            let entry = rom.entry_point() as u64;
            warnings.extend(romsyms::validate_against_rom(s, rom_len, entry));
            warnings.extend(romsyms::validate_against_rom_bytes(s, &rom.data));
            warnings.extend(romsyms::validate_call_targets(s, &rom.data));
        } else {
            warnings.push(
                "no symbols found (symbol.txt / rom.out / *.elf next to the ROM or in out/): \
                 functions are 256-byte address ranges (rom_0x001200); give --symbols FILE"
                    .into(),
            );
        }
        let mut iopts = romsyms::index_options(rom_len);
        iopts.keep_labels = options.keep_labels;
        let index = match &symbols {
            Some(s) => s.build_index(&iopts)?,
            None => FunctionIndex::build(&SymbolTable::default(), None, &iopts)?,
        };
        let idle: Vec<String> = if options.idle.is_empty() {
            DEFAULT_IDLE.iter().map(|s| s.to_string()).collect()
        } else {
            options.idle.clone()
        };
        let (attribution, idle_found) = Attribution::build(&index, &rom.data, &idle);
        // With no symbols the run looks for the game's wait loop instead
        // (build.rs says what it found).
        if idle_found.is_empty() && symbols.is_some() {
            warnings.push(no_idle_warning(&idle));
        }
        let rules = options.reference_rules.names();
        if !rules.is_empty() {
            warnings.push(format!(
                "reference timing rules in force ({}): the Z80's timing follows Genesis Plus GX's \
                 rules, not the hardware's; use only to compare with that emulator",
                rules.join(", ")
            ));
        }
        let watches = options
            .watch
            .iter()
            .map(|w| parse_watch(w, symbols.as_ref().map(|s| &s.table)))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Session {
            rom: std::sync::Arc::new(rom),
            rom_label,
            symbols,
            index: std::sync::Arc::new(index),
            attribution,
            options,
            idle_found,
            watches,
            warnings,
            source_dir: None,
            pad1,
            pad2,
        })
    }

    /// The console configuration of this session's runs (region,
    /// reference timing rules).
    pub fn config(&self) -> Config {
        Config {
            region: self.options.region,
            reference_rules: self.options.reference_rules,
            ..Config::default()
        }
    }

    /// Run the profile (see [`Session::run_with`]): the production path,
    /// the one place the 68000 core is compiled for the [`Profiler`]
    /// (monomorphised, no dynamic dispatch per instruction).
    pub fn run(&self, progress: &mut dyn FnMut(u64, u64)) -> Report {
        self.drive(None, None, progress)
    }

    /// Run the profile with another observer beside the profiler (it sees
    /// every event after the profiler). `progress(done, total)` is called
    /// after each frame. Emulation errors stop the run; the report then
    /// covers the frames that finished and says why in `stopped`.
    ///
    /// The pair is driven through `megadrive`'s non-generic
    /// [`System::run_frame`] (one dynamic call per event): tools such as the
    /// tracer, the sampler and the heap bridge cost no extra compiled core.
    pub fn run_with(
        &self,
        extra: &mut dyn MdObserver,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Report {
        self.drive(Some(extra), None, progress)
    }

    /// [`Session::run_with`] with breakpoints for `extra`'s
    /// [`MdObserver::at_pc`] (e.g. the heap bridge's `MEM_alloc` hooks).
    pub fn run_with_breakpoints(
        &self,
        extra: &mut dyn MdObserver,
        breakpoints: Option<retroprof_megadrive::PcSet>,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Report {
        self.drive(Some(extra), breakpoints, progress)
    }

    fn drive(
        &self,
        mut extra: Option<&mut dyn MdObserver>,
        breakpoints: Option<retroprof_megadrive::PcSet>,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Report {
        let mut sys = System::new(&self.rom, self.config());
        sys.set_breakpoints(breakpoints);
        let watches = self.watches.iter().map(|w| (w.addr, w.size)).collect();
        let mut prof = Profiler::new(
            self.attribution.clone(),
            self.options.from,
            self.options.top,
            watches,
        );
        prof.set_entry_charge(self.options.entry);
        prof.set_detect_wait_loop(self.detects_wait_loop());
        let mut stopped = None;
        let mut last_info: Option<FrameInfo> = None;
        for frame in 0..self.options.frames {
            sys.set_pad(0, self.pad1.buttons_at(frame));
            sys.set_pad(1, self.pad2.buttons_at(frame));
            let ran = match extra.as_deref_mut() {
                None => sys.run_frame_mono(&mut prof),
                Some(x) => sys.run_frame(&mut (&mut prof, x)),
            };
            match ran {
                Ok(info) => {
                    let n = sys.instructions();
                    prof.frame_done(&info, &sys.view(), sys.mclk(), n, sys.last_pc());
                    last_info = Some(info);
                    if self.options.stop_on_halt && prof.kdebug.first_halt().is_some() {
                        progress(frame + 1, self.options.frames);
                        break;
                    }
                }
                Err(e) => {
                    stopped = Some(stop_message(&e));
                    break;
                }
            }
            progress(frame + 1, self.options.frames);
        }
        let kdebug = prof.kdebug.finish(
            sys.mclk(),
            last_info.map_or(0, |i| i.frame),
            last_info.map_or(0, |i| i.active_lines),
        );
        let mut report = build::report(self, &mut prof, sys.region(), last_info, stopped, kdebug);
        if let Some(h) = report
            .kdebug
            .as_ref()
            .and_then(|k| k.halts.first())
            .filter(|_| self.options.stop_on_halt)
        {
            report.warnings.push(format!(
                "run ended at the game's KDebug halt (--stop-on-halt): frame {} line {}, \
                 {} of {} frames run",
                h.frame,
                h.line,
                report.frames.len(),
                self.options.frames
            ));
        }
        report
    }
}

/// The warning when no idle function was found.
pub(crate) fn no_idle_warning(idle: &[String]) -> String {
    format!(
        "no idle function found ({}): every cycle counts as busy and no game loop is detected; \
         name the game's wait with --idle NAME",
        idle.join(", ")
    )
}

impl Session {
    /// No symbols and no idle function: the run takes the game's
    /// wait-for-VBlank polling loop as the idle function
    /// ([`Profiler::set_detect_wait_loop`]).
    pub fn detects_wait_loop(&self) -> bool {
        self.symbols.is_none() && self.idle_found.is_empty()
    }
}

fn stop_message(e: &RunError) -> String {
    format!("emulation stopped: {e}")
}

/// A display label for a ROM path.
pub fn rom_label(path: &Path) -> String {
    path.display().to_string()
}

/// Convenience for tests and tools: load a ROM file with its symbols found
/// next to it and profile it.
pub fn profile_file(
    rom: &Path,
    options: ProfileOptions,
) -> Result<Report, Box<dyn std::error::Error + Send + Sync>> {
    let r = Rom::load(rom)?;
    let syms = load_symbols(rom, None)?;
    let s = Session::new(r, rom_label(rom), syms, options)?;
    Ok(s.run(&mut |_, _| {}))
}

#[cfg(test)]
mod watch_spec_tests {
    use super::*;

    /// Issue 21: `0x1FF0000` was masked to 0xFF0000 and `0x+FF0000` accepted.
    #[test]
    fn hex_watches_are_range_checked() {
        for bad in [
            "0x1FF0000",
            "0x+FF0000",
            "0x-10",
            "0x",
            "$100000000",
            "0xFF00 10",
        ] {
            let e = parse_watch(bad, None).unwrap_err().to_string();
            assert!(e.contains(bad), "{bad}: {e}");
        }
        let e = parse_watch("0x1FF0000", None).unwrap_err().to_string();
        assert!(e.contains("24-bit"), "{e}");
        let w = parse_watch("0xFFFFFE:w", None).unwrap();
        assert_eq!((w.addr, w.size), (0xFF_FFFE, 2));
    }
    /// Issue 21 campaign (fixed seed): random and mutated `--watch` specs.
    /// Each is either refused with an error quoting the spec and saying what
    /// was expected, or gives a 24-bit address, a size of 1, 2 or 4 that
    /// fits its alignment, and round-trips (rendered back as
    /// `0xADDR:SIZE` or `SYMBOL:SIZE`, it parses to the same address and
    /// size).
    #[test]
    fn random_watch_specs_parse_or_say_what_is_expected() {
        use retroprof_symbols::Symbol;
        let sym = |name: &str, addr: u64, size: Option<u64>, kind: SymbolKind| Symbol {
            name: name.into(),
            addr,
            size,
            kind,
            global: true,
            module: None,
            file: None,
            line: None,
        };
        let table = SymbolTable::new(vec![
            sym("player_x", 0xFF_0010, Some(2), SymbolKind::Bss),
            sym("score", 0xFF_0020, Some(4), SymbolKind::Data),
            sym("flag", 0xFF_0031, Some(1), SymbolKind::Bss),
            sym("odd_word", 0xFF_0041, Some(2), SymbolKind::Bss),
            sym("main", 0x200, None, SymbolKind::Text),
            sym("ABS", 0x10, None, SymbolKind::Absolute),
        ]);
        let seeds = [
            "0xFF0000",
            "$FF0010:w",
            "0XFFFFFE:l",
            "0x000000:b",
            "player_x",
            "score:l",
            "flag:b",
            "odd_word",
            "main:w",
            "ABS",
            "0xFFFFFF:b",
            "0x1000000",
        ];
        let alphabet: Vec<char> = "0123456789abcdefABCDEFxX$:+- bwlBWLz_\t\u{e9}"
            .chars()
            .collect();
        let mut rng = retroprof_testkit::SplitMix64::new(0x00C0_FFEEu64);
        let letter = |size: u8| match size {
            1 => "b",
            2 => "w",
            _ => "l",
        };
        let (mut ok, mut refused) = (0, 0);
        for case in 0..6000 {
            let spec = rng.mutated_spec(&seeds, &alphabet, 14);
            let with_table = rng.below(4) != 0;
            let t = with_table.then_some(&table);
            match parse_watch(&spec, t) {
                Ok(w) => {
                    ok += 1;
                    assert_eq!(w.spec, spec);
                    assert!(w.addr <= 0xFF_FFFF, "case {case} {spec:?}: {w:?}");
                    assert!(matches!(w.size, 1 | 2 | 4), "case {case} {spec:?}: {w:?}");
                    assert!(
                        w.size == 1 || w.addr % 2 == 0,
                        "case {case} {spec:?}: {w:?}"
                    );
                    assert!(!spec.contains('+'), "case {case}: {spec:?} accepted a sign");
                    let again = match &w.symbol {
                        Some(s) => format!("{s}:{}", letter(w.size)),
                        None => format!("0x{:06X}:{}", w.addr, letter(w.size)),
                    };
                    let w2 = parse_watch(&again, t).unwrap();
                    assert_eq!(
                        (w2.addr, w2.size, &w2.symbol),
                        (w.addr, w.size, &w.symbol),
                        "case {case}: {spec:?} -> {again:?}"
                    );
                }
                Err(e) => {
                    refused += 1;
                    let m = e.to_string();
                    assert!(
                        m.starts_with(&format!("bad --watch {spec:?}: ")),
                        "case {case}: {m}"
                    );
                    assert!(
                        [
                            "is not b, w or l",
                            "no symbol or address",
                            "is not a hex address",
                            "24-bit address space",
                            "give an address such as",
                            "no symbol named",
                            "odd address",
                        ]
                        .iter()
                        .any(|k| m.contains(k)),
                        "case {case}: the error says nothing of what was expected: {m}"
                    );
                }
            }
        }
        assert!(ok > 1000 && refused > 1000, "ok {ok} refused {refused}");
    }
}
