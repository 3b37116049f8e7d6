//! `retroprof samples`: program-counter histograms + a linker map ->
//! per-function profile.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use retroprof_samples::histogram::{self, HistFormat, Histogram, ReadOptions};
use retroprof_samples::retroprof_profile::write as pw;
use retroprof_samples::retroprof_symbols::maps::{self, MapFile, MapFormat};
use retroprof_samples::{report, symbolise, SymboliseOptions};

use super::UsageError;
use crate::out;

#[derive(clap::Args, Debug)]
#[command(
    about = "Turn program-counter histograms and a linker map into a per-function profile",
    long_about = "Turn program-counter histograms taken on real hardware into a per-function \
                  profile using the program's linker map.\n\n\
                  Histograms: the Petit Profiler's dump (131,072 bytes: 65,536 little-endian \
                  u16 counters indexed by IP within one code segment), MS-DOS PROFIL .PRF \
                  files, or text `ADDRESS COUNT` lines (hex or SEG:OFF addresses, `#` \
                  comments). Several files are summed.\n\n\
                  Maps: MS LINK, Borland TLINK, OpenWatcom wlink, GNU ld -Map, nm listings, \
                  cc65 --dbgfile and map files, ELF; detected from the content, Shift-JIS \
                  (cp932) decoded.\n\n\
                  A HISTOGRAM may be `-`, standard input (read whole, at most 64 MiB). Outputs: \
                  any output FILE may be `-`, standard output (one of them at most); the table \
                  then goes to standard error (-q: not at all). --pprof is not written to a \
                  terminal.\n\n\
                  Exit codes: 0 done, 2 bad input or arguments (with --strict: doubts about the \
                  map), 1 other errors.",
    after_long_help = "Examples:\n  \
        retroprof samples PROFILE.BIN -m GAME.MAP\n  \
        retroprof samples run1.bin run2.bin -m game.map --segment _TEXT --top 40\n  \
        retroprof samples GAME.PRF -m GAME.MAP --speedscope game.speedscope.json\n  \
        retroprof samples hist.txt -m a.elf -q --folded - | flamegraph.pl > a.svg\n  \
        retroprof samples dump.bin -m symbol.txt --base 0x000200 --pprof game.pb.gz"
)]
pub struct SamplesArgs {
    /// Histogram files; several are summed (`-`: standard input).
    #[arg(required = true, value_name = "HISTOGRAM")]
    pub histograms: Vec<PathBuf>,

    /// The program's linker map or symbol listing.
    #[arg(short, long, value_name = "MAP")]
    pub map: PathBuf,

    /// Force the map format (default: detected).
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub map_format: Option<super::opts::MapFormatArg>,

    /// Force the histogram format (default: detected from size and content).
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub hist_format: Option<super::opts::HistFormatArg>,

    /// Code segment a Petit histogram was taken in: a segment name from the
    /// map (`_TEXT`) or a paragraph in hex relative to the load image
    /// (`0000`). Default: the segment of the map's entry point (the CS the
    /// Petit Profiler records), else the first code segment.
    #[arg(long, value_name = "SEG")]
    pub segment: Option<String>,

    /// Linear address (hex) of counter 0 of a Petit histogram, for flat
    /// targets (e.g. a Mega Drive ROM window); instead of --segment.
    #[arg(long, value_name = "HEX", conflicts_with = "segment")]
    pub base: Option<String>,

    /// Run-time paragraph (hex) the program image was loaded at, i.e. the
    /// PSP segment + 10h (DOS adds it to every map segment: MS KB Q48241):
    /// subtracted from SEG:OFF segments in text histograms and from PROFIL
    /// physical addresses (default for .PRF: its prog_low_pa).
    #[arg(long, value_name = "HEX")]
    pub load_segment: Option<String>,

    /// Functions to show in the table.
    #[arg(long, default_value_t = 25, value_name = "N")]
    pub top: usize,

    /// Hottest addresses to list.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub hot: usize,

    /// Doubts about the map (lines of its symbol table that could not be
    /// read, a map that looks cut short) are errors (exit code 2) instead
    /// of warnings.
    #[arg(long)]
    pub strict: bool,

    /// Name of the program in reports (default: the map's file stem).
    #[arg(long)]
    pub name: Option<String>,

    /// Write the whole profile as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write one CSV row per function.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Write folded stacks (flamegraph.pl / inferno).
    #[arg(long, value_name = "FILE")]
    pub folded: Option<PathBuf>,
    /// Write a gzipped pprof profile.
    #[arg(long, value_name = "FILE")]
    pub pprof: Option<PathBuf>,
    /// Write a speedscope JSON profile.
    #[arg(long, value_name = "FILE")]
    pub speedscope: Option<PathBuf>,
}

fn usage(msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(UsageError(msg.into()))
}

fn parse_hex_arg(what: &str, s: &str) -> anyhow::Result<u64> {
    let t = s.trim();
    let t = t
        .strip_prefix("0x")
        .or_else(|| t.strip_prefix("0X"))
        .unwrap_or(t);
    let t = t.strip_suffix(['h', 'H']).unwrap_or(t);
    u64::from_str_radix(t, 16).map_err(|_| usage(format!("{what} `{s}` is not a hex number")))
}

/// The code segment window of a Petit histogram: (base, label).
fn petit_base(args: &SamplesArgs, map: &MapFile) -> anyhow::Result<(u64, String)> {
    if let Some(b) = &args.base {
        let base = parse_hex_arg("--base", b)?;
        return Ok((base, format!("base 0x{base:X}")));
    }
    let frame_of = |s: &maps::Segment| s.frame.map(u64::from).unwrap_or(s.start >> 4);
    if let Some(seg) = &args.segment {
        let found = map.segments.iter().find(|s| s.name == *seg).or_else(|| {
            map.segments
                .iter()
                .find(|s| s.name.eq_ignore_ascii_case(seg))
        });
        if let Some(s) = found {
            return Ok((
                frame_of(s) * 16,
                format!("{} (frame {:04X})", s.name, frame_of(s)),
            ));
        }
        let looks_hex = seg
            .trim_end_matches(['h', 'H'])
            .trim_start_matches("0x")
            .bytes()
            .all(|b| b.is_ascii_hexdigit());
        if looks_hex && !seg.is_empty() {
            let frame = parse_hex_arg("--segment", seg)?;
            if frame > 0xFFFF {
                return Err(usage(format!(
                    "--segment {seg}: a real-mode segment is at most FFFF"
                )));
            }
            return Ok((frame * 16, format!("frame {frame:04X}")));
        }
        let names: Vec<&str> = map.segments.iter().map(|s| s.name.as_str()).collect();
        return Err(usage(format!(
            "--segment `{seg}` matches no segment of {} ({}); give a segment name or a hex paragraph",
            args.map.display(),
            if names.is_empty() {
                "the map lists no segments".to_string()
            } else {
                format!("segments: {}", names.join(", "))
            }
        )));
    }
    if let Some(frame) = map.entry.and_then(|e| e.frame) {
        let base = u64::from(frame) * 16;
        let label = map
            .code_segments()
            .find(|s| s.contains(map.entry.map(|e| e.addr).unwrap_or(0)))
            .map(|s| format!("{} (frame {frame:04X}, the entry point's)", s.name))
            .unwrap_or_else(|| format!("frame {frame:04X} (the entry point's)"));
        return Ok((base, label));
    }
    if let Some(s) = map.code_segments().min_by_key(|s| s.start) {
        return Ok(match s.frame {
            Some(f) => (u64::from(f) * 16, format!("{} (frame {f:04X})", s.name)),
            // Flat maps (GNU ld, ELF, cc65): counter 0 is the section start.
            None if map.entry.and_then(|e| e.frame).is_none() && !is_segmented(map) => {
                (s.start, format!("{} (base 0x{:X})", s.name, s.start))
            }
            None => (
                frame_of(s) * 16,
                format!("{} (frame {:04X})", s.name, frame_of(s)),
            ),
        });
    }
    Ok((0, "base 0".into()))
}

/// True for real-mode DOS maps (addresses are SEG:OFF).
fn is_segmented(map: &MapFile) -> bool {
    matches!(
        map.format,
        MapFormat::MsLink | MapFormat::Tlink | MapFormat::Watcom
    )
}

/// The summed histogram, and for Petit histograms the code segment window
/// and its label.
struct Histograms {
    hist: Histogram,
    window: Option<(u64, u64)>,
    segment: Option<String>,
}

fn read_histograms(args: &SamplesArgs, map: &MapFile) -> anyhow::Result<Histograms> {
    let forced = args.hist_format.map(|f| f.format());
    let load_segment =
        match &args.load_segment {
            Some(s) => {
                let v = parse_hex_arg("--load-segment", s)?;
                Some(u16::try_from(v).map_err(|_| {
                    usage(format!("--load-segment {s}: a paragraph is at most FFFF"))
                })?)
            }
            None => None,
        };
    let mut total = Histogram::new(1);
    let mut window = None;
    let mut seg_label = None;
    for path in &args.histograms {
        let name = if path.as_os_str() == "-" {
            "<standard input>".to_string()
        } else {
            path.display().to_string()
        };
        let limit = retroprof_samples::retroprof_symbols::input::MAX_HISTOGRAM_BYTES;
        let bytes = super::read_input(path, limit)
            .map_err(|e| usage(format!("cannot read histogram {name}: {e}")))?;
        let format = match forced {
            Some(f) => f,
            None => histogram::detect(&name, &bytes).map_err(|e| usage(e.to_string()))?,
        };
        let mut opts = ReadOptions {
            petit_base: 0,
            load_segment,
        };
        if format == HistFormat::Petit {
            let (base, label) = petit_base(args, map)?;
            opts.petit_base = base;
            window = Some((base, base + 0x1_0000));
            seg_label = Some(label);
        }
        let h = histogram::read(&name, &bytes, Some(format), &opts)
            .map_err(|e| usage(e.to_string()))?;
        total.merge(h).map_err(|e| usage(format!("{name}: {e}")))?;
    }
    Ok(Histograms {
        hist: total,
        window,
        segment: seg_label,
    })
}

fn write_output(
    path: &Path,
    what: &str,
    f: impl FnOnce(&mut dyn std::io::Write) -> Result<(), retroprof_samples::retroprof_profile::Error>,
) -> anyhow::Result<()> {
    // The user named the file: replacing it is what they asked for.
    pw::atomic(path, true, f).with_context(|| format!("writing the {what} to {}", path.display()))
}

fn io_to(e: std::io::Error) -> retroprof_samples::retroprof_profile::Error {
    retroprof_samples::retroprof_profile::Error::Io {
        path: pw::STREAM_PATH.to_string(),
        source: e,
    }
}

pub fn run(args: SamplesArgs) -> anyhow::Result<ExitCode> {
    let force = args.map_format.map(|f| f.0);
    if args
        .histograms
        .iter()
        .filter(|h| h.as_os_str() == "-")
        .count()
        > 1
    {
        return Err(usage(
            "`-` (standard input) is given as a histogram more than once",
        ));
    }
    let mut plan = pw::OutputPlan::new();
    plan.input("the map", &args.map);
    for h in &args.histograms {
        plan.input("a histogram", h);
    }
    for (what, p) in [
        ("--json", &args.json),
        ("--csv", &args.csv),
        ("--folded", &args.folded),
        ("--pprof", &args.pprof),
        ("--speedscope", &args.speedscope),
    ] {
        if let Some(p) = p {
            plan.output(what, p);
        }
    }
    if let Some(p) = &args.pprof {
        super::refuse_binary_on_terminal("--pprof", p, "a gzip-compressed profile")?;
    }
    super::check_outputs(&plan)?;
    let map = maps::load(&args.map, force).map_err(|e| usage(e.to_string()))?;
    if args.strict && !map.doubts.is_empty() {
        return Err(usage(format!("{} (--strict)", map.doubts.join("; "))));
    }
    for w in &map.warnings {
        eprintln!("warning: {w}");
    }
    let Histograms {
        hist,
        window,
        segment: seg_label,
    } = read_histograms(&args, &map)?;
    if window.is_none() && (args.segment.is_some() || args.base.is_some()) {
        eprintln!(
            "warning: --segment/--base only place Petit histograms; none of the histograms is one"
        );
    }
    let name = args.name.clone().unwrap_or_else(|| {
        args.map
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "program".into())
    });
    let opts = SymboliseOptions {
        name,
        hot_addresses: args.hot,
        window,
        segment_name: seg_label.clone(),
    };
    let mut prof =
        symbolise(&hist, &map, &opts).map_err(|e| usage(format!("{}: {e}", args.map.display())))?;
    if let Some((a, b)) = window {
        if !map.segments.is_empty() && !map.code_segments().any(|s| s.start < b && s.end() > a) {
            prof.warnings.push(format!(
                "the histogram's code segment {} covers 0x{a:X}..0x{b:X}, where the map has no \
                 code segment",
                seg_label.as_deref().unwrap_or("")
            ));
        }
    }

    out!("{}", report::table(&prof, args.top));
    let sp = report::to_stack_profile(&prof);
    if let Some(p) = &args.json {
        write_output(p, "JSON report", |w| {
            report::write_json(&prof, w).map_err(io_to)
        })?;
    }
    if let Some(p) = &args.csv {
        write_output(p, "CSV report", |w| {
            report::write_csv(&prof, w).map_err(io_to)
        })?;
    }
    if let Some(p) = &args.folded {
        write_output(p, "folded stacks", |w| pw::folded(&sp, 0, w))?;
    }
    if let Some(p) = &args.pprof {
        write_output(p, "pprof profile", |w| pw::pprof(&sp, w))?;
    }
    if let Some(p) = &args.speedscope {
        write_output(p, "speedscope profile", |w| pw::speedscope(&sp, w))?;
    }
    Ok(ExitCode::SUCCESS)
}
