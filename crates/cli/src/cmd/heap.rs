//! `retroprof heap`: replay an allocation log.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use retroprof_heap::memmap::{self, MapOptions};
use retroprof_heap::output;
use retroprof_heap::report::{self, TerminalOptions};
use retroprof_heap::symbolize::SymbolFile;
use retroprof_heap::{At, DriveOptions, LogReader, Replay, ReplayOptions, Span, Symbolizer};

use super::UsageError;

#[derive(clap::Args, Debug)]
#[command(
    about = "Replay an allocation log: leaks, peak, churn, size histogram, memory map picture",
    long_about = "Replays an allocation log in order and reports what is live at any point: leaks \
                  at the end, the peak and who held it, per call site figures, temporary \
                  allocations, churn per frame or window, a size histogram with allocator \
                  overhead, and anomalies (double frees, unknown pointers, overlaps, bad sizes, \
                  malformed lines).\n\n\
                  Input: the Daedalus tracker's lines ('Allocating 36 bytes - 09c40620 - RA is \
                  08953a94', 'Freeing 09c3fce0 - RA is 08962374', with [] variants) with optional \
                  'Frame N' markers, or retroprof's generic format ('alloc SIZE PTR CALLER \
                  [frame=N] [time=T] [stack=A,B]', 'free PTR CALLER', 'frame N'; see \
                  crates/heap/FORMAT.md). Plain or gzip, a file or '-' for standard input.\n\n\
                  Outputs: any output FILE may be `-`, standard output (one of them at most); the \
                  report then goes to standard error (-q: not at all). --png and --pprof are not \
                  written to a terminal.\n\n\
                  Exit codes: 0 done, 2 bad input or arguments (with --strict: a malformed line, \
                  reported as FILE:LINE), 1 other errors.",
    after_long_help = "Examples:\n  \
        retroprof heap alloc.log\n  \
        retroprof heap alloc.log.gz -s game.elf --group line --png heap.png\n  \
        retroprof heap alloc.log --at peak --dhat dhat.json    open in dh_view.html\n  \
        retroprof heap alloc.log --pprof heap.pb.gz && go tool pprof -top heap.pb.gz\n  \
        retroprof heap alloc.log -q --folded - | flamegraph.pl > heap.svg\n  \
        zcat big.log.gz | retroprof heap - --window 1000 --csv churn.csv"
)]
pub struct HeapArgs {
    /// The allocation log (plain or gzip), or `-` for standard input.
    pub log: PathBuf,

    /// Symbols: an ELF file (symbols, DWARF lines, inlined frames) or an
    /// nm listing / linker map.
    #[arg(short, long, value_name = "FILE")]
    pub symbols: Option<PathBuf>,

    /// The logging machine. Default: from the ELF header, the log's
    /// header, or mips for the Daedalus tracker's lines.
    #[arg(long, value_enum, value_name = "ARCH")]
    pub arch: Option<super::opts::ArchArg>,

    /// Group allocations by function, source line or return address.
    #[arg(long, value_enum, value_name = "HOW", default_value_t = super::opts::GroupArg::Function)]
    pub group: super::opts::GroupArg,

    /// Show the live set at a point: after event N, `frame:N` (at the end
    /// of frame N), or `peak` (the peak of live bytes; reads the log twice).
    /// The picture and the in-use figures of pprof show this point too.
    #[arg(long, value_name = "EVENT|frame:N|peak")]
    pub at: Option<String>,

    /// Temporary = freed within N events, or `frame:N` frames. Default:
    /// within the same frame if the log has frame markers, else 1 event.
    #[arg(long, value_name = "N|frame:N")]
    pub temporary: Option<String>,

    /// Churn per window of N events instead of per frame.
    #[arg(long, value_name = "N")]
    pub window: Option<u64>,

    /// Allocator housekeeping bytes per block (SGDK's MEM_alloc: 2).
    #[arg(long, value_name = "BYTES", default_value_t = 0)]
    pub header: u64,

    /// Allocator alignment of header + payload (SGDK: 2).
    #[arg(long, value_name = "BYTES", default_value_t = 1)]
    pub align: u64,

    /// Sizes above this are anomalies and not tracked.
    #[arg(long, value_name = "BYTES", default_value_t = 256 << 20)]
    pub max_size: u64,

    /// Address width in bits (allocations must end below 2^BITS).
    #[arg(long, value_name = "BITS", default_value_t = 32)]
    pub address_bits: u32,

    /// A malformed line is an error (exit code 2, FILE:LINE) instead of an
    /// anomaly.
    #[arg(long)]
    pub strict: bool,

    /// Rows per table in the report.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top: usize,

    /// Write the memory map picture (PNG): the end state, or --at.
    #[arg(long, value_name = "FILE")]
    pub png: Option<PathBuf>,

    /// Bytes per pixel of the picture (tiles are 64x64 pixels, blocks 4x4
    /// tiles: 64 KB and 1 MB at 16 bytes per pixel). Default: the finest
    /// power of two at which the address range the log uses fits in four
    /// blocks (a 64 KB Mega Drive heap: 1 byte per pixel).
    #[arg(long, value_name = "N")]
    pub bytes_per_pixel: Option<u64>,

    /// Write the whole analysis as JSON (schema in crates/heap/FORMAT.md).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Write DHAT JSON for Valgrind's dh_view.html.
    #[arg(long, value_name = "FILE")]
    pub dhat: Option<PathBuf>,

    /// Write a gzip pprof heap profile (alloc_objects, alloc_space,
    /// inuse_objects, inuse_space; in use = end state or --at).
    #[arg(long, value_name = "FILE")]
    pub pprof: Option<PathBuf>,

    /// Write folded stacks (flame graph input).
    #[arg(long, value_name = "FILE")]
    pub folded: Option<PathBuf>,

    /// Value of the folded stacks.
    #[arg(long, value_enum, value_name = "VALUE", default_value_t = super::opts::FoldedValueArg::AllocSpace)]
    pub folded_value: super::opts::FoldedValueArg,

    /// Write the timeline as CSV (per frame or window: live bytes, live
    /// blocks, allocs, frees, bytes allocated, bytes freed).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
}

fn usage(msg: String) -> anyhow::Error {
    anyhow::Error::new(UsageError(msg))
}

fn write_out<F>(path: &Path, f: F) -> anyhow::Result<()>
where
    F: FnOnce(&mut dyn Write) -> Result<(), retroprof_heap::Error>,
{
    retroprof_heap::write_file(path, f).with_context(|| format!("writing {}", path.display()))
}

pub fn run(args: HeapArgs) -> anyhow::Result<ExitCode> {
    let grouping = args.group.grouping();
    let at_peak = args.at.as_deref() == Some("peak");
    let at = match &args.at {
        Some(_) if at_peak => None,
        Some(s) => Some(At::parse(s).ok_or_else(|| {
            usage(format!(
                "--at {s}: expected an event number, frame:N or peak"
            ))
        })?),
        None => None,
    };
    if at_peak && args.log.as_os_str() == "-" {
        return Err(usage(
            "--at peak reads the log twice: give a file, not standard input".into(),
        ));
    }
    let temporary = match &args.temporary {
        Some(s) => Some(Span::parse(s).ok_or_else(|| {
            usage(format!(
                "--temporary {s}: expected a number of events or frame:N"
            ))
        })?),
        None => None,
    };
    if args.window == Some(0) {
        return Err(usage("--window must be at least 1".into()));
    }
    if args.align == 0 {
        return Err(usage("--align must be at least 1".into()));
    }
    // header + align - 1 must not overflow (issue 21: 2^64-1 wrapped).
    const MAX_HEADER: u64 = 1 << 20;
    const MAX_ALIGN: u64 = 1 << 20;
    if args.header > MAX_HEADER {
        return Err(usage(format!(
            "--header {}: allocator housekeeping is at most {MAX_HEADER} bytes",
            args.header
        )));
    }
    if args.align > MAX_ALIGN {
        return Err(usage(format!(
            "--align {}: expected 1 to {MAX_ALIGN} bytes",
            args.align
        )));
    }
    if args.max_size == 0 {
        return Err(usage("--max-size must be at least 1".into()));
    }
    if args.bytes_per_pixel == Some(0) {
        return Err(usage("--bytes-per-pixel must be at least 1".into()));
    }
    if !(8..=64).contains(&args.address_bits) {
        return Err(usage("--address-bits must be between 8 and 64".into()));
    }
    let folded_index = args.folded_value.index();

    // Symbols and architecture.
    let arch = args.arch.map(|a| a.arch());
    // Nothing the user gave is overwritten, and every output can be written.
    let mut plan = retroprof_profile::write::OutputPlan::new();
    plan.input("the log", &args.log);
    if let Some(p) = &args.symbols {
        plan.input("the --symbols file", p);
    }
    for (what, p) in [
        ("--png", &args.png),
        ("--json", &args.json),
        ("--dhat", &args.dhat),
        ("--pprof", &args.pprof),
        ("--folded", &args.folded),
        ("--csv", &args.csv),
    ] {
        if let Some(p) = p {
            plan.output(what, p);
        }
    }
    for (what, p, kind) in [
        ("--png", &args.png, "a PNG picture"),
        ("--pprof", &args.pprof, "a gzip-compressed profile"),
    ] {
        if let Some(p) = p {
            super::refuse_binary_on_terminal(what, p, kind)?;
        }
    }
    super::check_outputs(&plan)?;
    let color = super::ui::color();
    let replay_once = |at: Option<At>, warn: bool| -> anyhow::Result<retroprof_heap::Analysis> {
        let mut arch = arch;
        let arch_fixed_by_user = arch.is_some();
        let mut resolver: Option<Box<dyn retroprof_heap::Resolve>> = None;
        if let Some(path) = &args.symbols {
            let file = SymbolFile::load(path).map_err(|e| usage(e.to_string()))?;
            if warn {
                for w in &file.warnings {
                    eprintln!("warning: {w}");
                }
            }
            if arch.is_none() {
                arch = file.arch;
            }
            resolver = Some(Box::new(file));
        }
        let symbolizer = Symbolizer::new(
            arch.unwrap_or(retroprof_heap::Arch::Unknown),
            grouping,
            resolver,
        );
        let opts = ReplayOptions {
            temporary,
            window: args.window,
            header: args.header,
            align: args.align,
            max_size: args.max_size,
            at,
            keep_timeline: args.csv.is_some() || args.json.is_some(),
            max_listed: 100,
            address_bits: args.address_bits,
        };
        let mut reader = LogReader::open(&args.log).map_err(|e| usage(e.to_string()))?;
        let mut replay = Replay::new(opts, symbolizer);
        replay.set_name(reader.name());
        retroprof_heap::replay_log(
            &mut reader,
            &mut replay,
            DriveOptions {
                strict: args.strict,
                arch_fixed: arch_fixed_by_user || arch.is_some(),
            },
        )
        .map_err(|e| match e {
            retroprof_heap::Error::Malformed { .. } => usage(e.to_string()),
            retroprof_heap::Error::Read { .. } => usage(e.to_string()),
            other => anyhow::Error::new(other),
        })?;
        Ok(replay.finish())
    };
    let mut analysis = replay_once(at, true)?;
    if at_peak {
        // Second pass: stop at the peak found by the first.
        analysis = replay_once(Some(At::Event(analysis.peak.event)), false)?;
    }

    if !super::ui::quiet() {
        let text = report::terminal(
            &analysis,
            &TerminalOptions {
                color,
                top: args.top,
                anomalies: 20,
            },
        );
        crate::out!("{text}");
    }

    let kept = analysis.timeline.len() as u64;
    if (args.csv.is_some() || args.json.is_some()) && kept < analysis.churn.rows {
        eprintln!(
            "warning: the timeline has {} rows ({}); only the first {kept} are written to \
             --csv/--json (a larger --window gives fewer rows)",
            analysis.churn.rows, analysis.churn.unit
        );
    }
    // Before anything is written: a timeline output of hundreds of MB
    // (issue 21: `--window 1` on a 10-million-event log).
    if let Some(w) = output::timeline_size_warning(
        &analysis,
        args.csv.is_some(),
        args.json.is_some(),
        output::LARGE_TIMELINE_BYTES,
    ) {
        eprintln!("warning: {w}");
    }
    let (blocks, moment) = match &analysis.snapshot {
        Some(s) => (
            &s.blocks[..],
            match s.at {
                Some(a) if at_peak => format!("at the peak ({a})"),
                Some(a) => a.to_string(),
                None => "snapshot".into(),
            },
        ),
        None => (&analysis.end[..], "at the end of the log".to_string()),
    };
    if let Some(path) = &args.png {
        let img = memmap::render(
            &analysis,
            blocks,
            &MapOptions {
                // 0: fitted to the log's address range (memmap).
                bytes_per_pixel: args.bytes_per_pixel.unwrap_or(0),
                title: format!("retroprof heap: {}, {}", analysis.name, moment),
                ..MapOptions::default()
            },
        );
        write_out(path, |w| img.write_png(w))?;
    }
    if let Some(path) = &args.json {
        write_out(path, |w| output::write_json(&analysis, w))?;
    }
    if let Some(path) = &args.dhat {
        write_out(path, |w| output::write_dhat(&analysis, w))?;
    }
    if let Some(path) = &args.csv {
        write_out(path, |w| output::write_csv(&analysis, w))?;
    }
    if args.pprof.is_some() || args.folded.is_some() {
        let profile = output::stack_profile(&analysis, blocks);
        if let Some(path) = &args.pprof {
            write_out(path, |w| {
                retroprof_heap::profile_write::pprof(&profile, w).map_err(Into::into)
            })?;
        }
        if let Some(path) = &args.folded {
            write_out(path, |w| {
                retroprof_heap::profile_write::folded(&profile, folded_index, w).map_err(Into::into)
            })?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
