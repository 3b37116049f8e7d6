//! `retroprof profile`: the frame-budget profiler for Mega Drive games.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use anyhow::Context;
use retroprof_mdprof::{demo, load_symbols, output, ProfileOptions, Report, Session};
use retroprof_megadrive::timing::M68K_DIVIDER;
use retroprof_megadrive::{ReferenceRules, Region, Rom};

use super::run::RegionArg;
use super::UsageError;
use crate::{out, outln};

#[derive(clap::Args, Debug, Default)]
#[command(
    about = "Profile a Mega Drive ROM's frame budget: busy/idle per frame, dropped frames, DMA, top functions",
    long_about = format!("Runs a Mega Drive ROM in retroprof's cycle-exact emulator and charges every 68000 \
                  cycle to the function at its PC (symbols: symbol.txt / rom.out / *.elf found next \
                  to the ROM or in SGDK's out/ folder, or --symbols). Idle = time inside the idle \
                  functions (default VDP_waitVBlank and VDP_waitVSync); a game loop starts when the \
                  game leaves the idle function at interrupt level 0 (calls made from inside the \
                  wait and interrupts do not count); a frame with no new loop is dropped. A frame \
                  starts at the first VBlank line (line 224 in NTSC V28). Cycles are 68000 cycles \
                  (master clocks / {M68K_DIVIDER}). Interrupt entry is charged to the interrupt handler \
                  (--entry interrupted: to the interrupted code, as emulator hooks do).\n\n\
                  Gameplay frames first: frames before the first game loop, frames with the \
                  display off during all active lines, frames with nothing but black on screen, runs of 10+ frames in which \
                  the game never waited for VBlank (a load), and \
                  frames the game marks as loading are \
                  set aside from the load figures, the worst frames and --fail-over-load (the \
                  report says how many and why; --include-loading counts them). Dropped frames \
                  are reported for all frames, gameplay and loading apart.\n\n\
                  Terminal report columns: self = cycles at the function's own addresses; %busy \
                  = share of busy cycles (idle functions say idle); calls = JSR/BSR calls and \
                  exception entries, '-' (and cyc/call '-') for code entered only by jumps or by \
                  falling through (local labels, tail calls); inclusive = cycles with the \
                  function on the call stack; wait = the line at which the game began waiting \
                  for VBlank in that frame ('-': it never waited).\n\n\
                  With no ROM, profiles the built-in demo (the known-costs test ROM).\n\n\
                  Pad scripts (--input, --input2): FROM-TO:BUTTONS (inclusive), FROM:BUTTONS (one \
                  frame) or FROM-:BUTTONS (to the end); frames count from 0; buttons are letters \
                  of UDLRABCSXYZM (S = Start, M = Mode).\n\n\
                  Outputs: any output FILE may be `-`, standard output (one of them at most); the \
                  terminal report then goes to standard error (-q: not at all). Binary outputs \
                  (--pprof, a petit --sample-histogram) are not written to a terminal.\n\n\
                  Exit codes: 0 done, 3 a --fail-* gate tripped, 2 bad input or arguments, 1 other \
                  errors (also: the game stopped the CPU)."),
    after_long_help = "Examples:\n  \
        retroprof profile                              the built-in demo\n  \
        retroprof profile game.bin --html game.html    open it in a browser\n  \
        retroprof profile game.bin -n 3600 -i 60-:R -i 120-130:C\n  \
        retroprof profile game.bin -q --csv - | column -s, -t | less\n  \
        retroprof profile game.bin --pprof game.pb.gz && go tool pprof -top game.pb.gz\n  \
        retroprof profile game.bin --trace game.trace.json --trace-frames 300-305\n  \
        retroprof profile old.bin --json base.json\n  \
        retroprof profile new.bin --baseline base.json --fail-load-regression 2\n  \
        retroprof profile a.bin b.bin -j 2 --fail-dropped-over 0"
)]
pub struct ProfileArgs {
    /// ROM image(s); none = the built-in demo ROM. Several ROMs run in parallel (--jobs).
    pub roms: Vec<PathBuf>,

    /// How the ROM is run (shared with `diff`: cmd/opts.rs).
    #[command(flatten)]
    pub rom: super::opts::RomArgs,

    /// Functions shown (and kept per frame), worst frames shown.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub top: usize,

    /// Symbol file (nm listing or ELF) instead of looking next to the ROM.
    #[arg(short, long, value_name = "FILE")]
    pub symbols: Option<PathBuf>,

    /// RAM value to log per frame: SYMBOL or 0xADDR, optionally :b, :w or :l (repeatable).
    #[arg(long, value_name = "SYMBOL|ADDR[:b|w|l]")]
    pub watch: Vec<String>,

    /// Per-frame CSV.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,

    /// Flat + inclusive profile CSV.
    #[arg(long, value_name = "FILE")]
    pub functions: Option<PathBuf>,

    /// The whole report as JSON (schema retroprof-mdprof-report/1).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Folded stacks (flamegraph.pl input).
    #[arg(long, value_name = "FILE")]
    pub folded: Option<PathBuf>,

    /// Flame graph SVG.
    #[arg(long, value_name = "FILE.svg")]
    pub flamegraph: Option<PathBuf>,

    /// pprof profile (gzip-compressed protobuf).
    #[arg(long, value_name = "FILE.pb.gz")]
    pub pprof: Option<PathBuf>,

    /// speedscope JSON.
    #[arg(long, value_name = "FILE.json")]
    pub speedscope: Option<PathBuf>,

    /// Exit with code 3 when a counted frame's load is over PCT percent.
    #[arg(long, value_name = "PCT")]
    pub fail_over_load: Option<f64>,

    /// Exit with code 3 when more than N frames were dropped (after the first game loop).
    #[arg(long, value_name = "N")]
    pub fail_dropped_over: Option<u64>,

    /// Count the frames set aside as loading (before the first game loop,
    /// display off or a black screen all frame, 10+ frames without a VBlank
    /// wait, marked by the game) in
    /// the load figures, the worst frames and --fail-over-load.
    #[arg(long)]
    pub include_loading: bool,

    /// Track SGDK's MEM_alloc/MEM_free (heap report; FILE: the event log in retroprof heap's format).
    #[arg(long, value_name = "FILE", num_args = 0..=1)]
    pub heap: Option<Option<PathBuf>>,

    /// Write a histogram of the PC sampled at --sample-hz of emulated time.
    #[arg(long, value_name = "FILE")]
    pub sample_histogram: Option<PathBuf>,

    /// Sampling rate for --sample-histogram (emulated time).
    #[arg(long, default_value_t = retroprof_mdprof::sampler::DEFAULT_HZ, value_name = "HZ")]
    pub sample_hz: u64,

    /// --sample-histogram layout.
    #[arg(long, value_enum, default_value_t = super::opts::SampleFormatArg::Petit, value_name = "FORMAT")]
    pub sample_format: super::opts::SampleFormatArg,

    /// Chrome / Perfetto trace (frames, load, DMA, wait line; function slices with --trace-frames).
    #[arg(long, value_name = "FILE.json")]
    pub trace: Option<PathBuf>,

    /// Frames whose function calls go into --trace, A-B.
    #[arg(long, value_name = "A-B")]
    pub trace_frames: Option<String>,

    /// Self-contained HTML report (plots, top functions, worst frames, screenshot).
    #[arg(long, value_name = "FILE.html")]
    pub html: Option<PathBuf>,

    /// Every KDebug marker the game wrote (messages, timer spans, halts, malformed writes), tab-separated.
    #[arg(long, value_name = "FILE")]
    pub kdebug_log: Option<PathBuf>,

    /// End the run with the frame in which the game calls KDebug_Halt() (the report covers the frames up to it).
    #[arg(long)]
    pub stop_on_halt: bool,

    /// ROMs profiled at once (default: the number of CPUs).
    #[arg(short, long, value_name = "N")]
    pub jobs: Option<usize>,

    /// --annotate, --lines, --source-dir (CodeArgs).
    #[command(flatten)]
    pub code: Box<CodeArgs>,

    /// --baseline and its gates and outputs (cmd/diff.rs).
    #[command(flatten)]
    pub baseline: Box<super::diff::BaselineArgs>,
}

/// Per-line and per-instruction costs (crates/mdprof src/code.rs).
#[derive(clap::Args, Debug, Default)]
pub struct CodeArgs {
    /// Print FUNC's instructions with their cycles and %, under their source lines when DWARF has them, like perf annotate (repeatable).
    #[arg(long, value_name = "FUNC")]
    pub annotate: Vec<String>,

    /// Costs per source line (DWARF) and per instruction DWARF gives no line for, as CSV.
    #[arg(long, value_name = "FILE")]
    pub lines: Option<PathBuf>,

    /// Folder searched first for the source files DWARF names (hot lines' text, --annotate).
    #[arg(long, value_name = "DIR")]
    pub source_dir: Option<PathBuf>,
}

fn region_of(arg: Option<RegionArg>, rom: &Rom) -> Option<Region> {
    arg.map(|r| rom.region_with_standard(r == RegionArg::Pal))
}

fn options(args: &ProfileArgs, rom: &Rom) -> ProfileOptions {
    let a = &args.rom;
    ProfileOptions {
        frames: a.frames,
        from: a.from,
        input: a.input.clone(),
        input2: a.input2.clone(),
        region: region_of(a.region, rom),
        idle: a.idle.clone(),
        top: args.top.max(1),
        keep_labels: a.keep_labels,
        watch: args.watch.clone(),
        entry: match a.entry {
            EntryArg::Handler => retroprof_mdprof::EntryCharge::Handler,
            EntryArg::Interrupted => retroprof_mdprof::EntryCharge::Interrupted,
        },
        reference_rules: reference_rules(&a.reference_rule),
        stop_on_halt: args.stop_on_halt,
        include_loading: args.include_loading,
    }
}

/// `--reference-rule`: one of [`ReferenceRules::RULES`] (by index) or,
/// with `None`, all of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RuleArg(Option<usize>);

impl clap::ValueEnum for RuleArg {
    fn value_variants<'a>() -> &'a [Self] {
        const N: usize = ReferenceRules::RULES.len();
        const VARIANTS: [RuleArg; N + 1] = {
            let mut v = [RuleArg(None); N + 1];
            let mut i = 0;
            while i < N {
                v[i] = RuleArg(Some(i));
                i += 1;
            }
            v
        };
        &VARIANTS
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        let (name, help) = match self.0 {
            Some(i) => ReferenceRules::RULES[i],
            None => ("all", "All of the above"),
        };
        Some(clap::builder::PossibleValue::new(name).help(help))
    }
}

/// `--reference-rule` values, combined.
fn reference_rules(args: &[RuleArg]) -> ReferenceRules {
    let mut r = ReferenceRules::default();
    for a in args {
        match a.0 {
            Some(i) => {
                r.enable(ReferenceRules::RULES[i].0);
            }
            None => r = ReferenceRules::ALL,
        }
    }
    r
}

/// `--entry`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum EntryArg {
    /// The interrupt handler (default).
    #[default]
    Handler,
    /// The interrupted code.
    Interrupted,
}

/// Load a ROM (or the demo) and its symbols into a session.
pub(crate) fn session(args: &ProfileArgs, rom_path: Option<&Path>) -> anyhow::Result<Session> {
    let (rom, syms, label) = match rom_path {
        None => {
            let (rom, syms) = demo::load();
            let syms = match &args.symbols {
                Some(p) => {
                    load_symbols(Path::new(""), Some(p)).map_err(|e| UsageError(e.to_string()))?
                }
                None => Some(syms),
            };
            (rom, syms, demo::LABEL.to_string())
        }
        Some(p) => {
            let rom = super::run::load_rom(p)?;
            let syms =
                load_symbols(p, args.symbols.as_deref()).map_err(|e| UsageError(e.to_string()))?;
            (rom, syms, p.display().to_string())
        }
    };
    let opts = options(args, &rom);
    let mut s = Session::new(rom, label, syms, opts).map_err(|e| UsageError(e.to_string()))?;
    if let Some(d) = &args.code.source_dir {
        retroprof_mdprof::code::check_source_dir(d).map_err(|e| UsageError(e.to_string()))?;
        s.source_dir = Some(d.clone());
    }
    Ok(s)
}

/// A progress bar on stderr, drawn only when stderr is a terminal and the
/// run has taken more than half a second.
struct Progress {
    on: bool,
    start: Instant,
    shown: bool,
}

impl Progress {
    fn new(on: bool) -> Self {
        Progress {
            on: on && std::io::stderr().is_terminal(),
            start: Instant::now(),
            shown: false,
        }
    }

    fn update(&mut self, done: u64, total: u64) {
        if !self.on || !done.is_multiple_of(20) || self.start.elapsed().as_millis() < 500 {
            return;
        }
        let width = 40u64;
        let filled = (done * width / total.max(1)) as usize;
        eprint!(
            "\r[{}{}] {done}/{total} frames",
            "#".repeat(filled),
            " ".repeat(width as usize - filled)
        );
        self.shown = true;
    }

    fn finish(&mut self) {
        if self.shown {
            eprint!("\r{}\r", " ".repeat(70));
        }
    }
}

fn write_outputs(args: &ProfileArgs, r: &Report) -> anyhow::Result<()> {
    use retroprof_profile::write as pw;
    let out =
        |path: &Path, f: &dyn Fn(&mut dyn std::io::Write) -> Result<(), output::OutputError>| {
            pw::atomic(path, true, |w| {
                f(w).map_err(|e| match e {
                    output::OutputError::Io(source) => retroprof_profile::Error::Io {
                        path: pw::STREAM_PATH.into(),
                        source,
                    },
                    output::OutputError::Json(j) => {
                        retroprof_profile::Error::Invalid(j.to_string())
                    }
                })
            })
            .with_context(|| format!("writing {}", path.display()))
        };
    if let Some(p) = &args.csv {
        out(p, &|w| output::frames_csv(r, w))?;
    }
    if let Some(p) = &args.functions {
        out(p, &|w| output::functions_csv(r, w))?;
    }
    if let Some(p) = &args.json {
        out(p, &|w| output::json(r, w))?;
    }
    if let Some(p) = &args.kdebug_log {
        out(p, &|w| Ok(retroprof_mdprof::kdebug::log(r, w)?))?;
    }
    if let Some(p) = &args.code.lines {
        out(p, &|w| retroprof_mdprof::code::lines_csv(r, w))?;
    }
    let need_stacks = args.folded.is_some()
        || args.flamegraph.is_some()
        || args.pprof.is_some()
        || args.speedscope.is_some();
    if need_stacks {
        let sp = output::stack_profile(r);
        if let Some(p) = &args.folded {
            pw::atomic(p, true, |w| pw::folded(&sp, 0, w))
                .with_context(|| format!("writing {}", p.display()))?;
        }
        if let Some(p) = &args.flamegraph {
            let title = format!("{} - 68000 cycles", r.rom.path);
            pw::atomic(p, true, |w| pw::flamegraph_svg(&sp, 0, &title, w))
                .with_context(|| format!("writing {}", p.display()))?;
        }
        // pprof and speedscope get one leaf frame per source line (DWARF).
        let sp = retroprof_mdprof::code::stack_profile_with_lines(r);
        if let Some(p) = &args.pprof {
            pw::atomic(p, true, |w| pw::pprof(&sp, w))
                .with_context(|| format!("writing {}", p.display()))?;
        }
        // With --trace-frames the speedscope file also gets the window's
        // call timeline, written once the tracer is done (Extras::finish).
        if let Some(p) = args
            .speedscope
            .as_ref()
            .filter(|_| args.trace_frames.is_none())
        {
            pw::atomic(p, true, |w| pw::speedscope(&sp, w))
                .with_context(|| format!("writing {}", p.display()))?;
        }
    }
    Ok(())
}

/// Refuse, before the run, outputs that are inputs (the ROM, its symbol
/// files), duplicate outputs and outputs that cannot be written.
fn check_outputs(args: &ProfileArgs) -> anyhow::Result<()> {
    use retroprof_profile::write::OutputPlan;
    let mut plan = OutputPlan::new();
    for rom in &args.roms {
        plan.input("the ROM", rom);
        for c in retroprof_mdprof::romsyms::candidates_for_rom(rom) {
            plan.input("a symbol file of the ROM", &c);
        }
    }
    if let Some(p) = &args.symbols {
        plan.input("the --symbols file", p);
    }
    if let Some(p) = &args.baseline.baseline {
        plan.input("the --baseline report", p);
    }
    let outputs: [(&str, Option<&PathBuf>); 15] = [
        ("--lines", args.code.lines.as_ref()),
        ("--csv", args.csv.as_ref()),
        ("--functions", args.functions.as_ref()),
        ("--json", args.json.as_ref()),
        ("--folded", args.folded.as_ref()),
        ("--flamegraph", args.flamegraph.as_ref()),
        ("--pprof", args.pprof.as_ref()),
        ("--speedscope", args.speedscope.as_ref()),
        ("--heap", args.heap.as_ref().and_then(|h| h.as_ref())),
        ("--sample-histogram", args.sample_histogram.as_ref()),
        ("--trace", args.trace.as_ref()),
        ("--html", args.html.as_ref()),
        ("--diff-json", args.baseline.diff_json.as_ref()),
        ("--diff-html", args.baseline.diff_html.as_ref()),
        ("--kdebug-log", args.kdebug_log.as_ref()),
    ];
    for (what, p) in outputs {
        if let Some(p) = p {
            plan.output(what, p);
        }
    }
    if let Some(p) = &args.pprof {
        super::refuse_binary_on_terminal("--pprof", p, "a gzip-compressed profile")?;
    }
    if let Some(p) = &args.sample_histogram {
        if args.sample_format == super::opts::SampleFormatArg::Petit {
            super::refuse_binary_on_terminal("--sample-histogram", p, "a binary histogram")?;
        }
    }
    super::check_outputs(&plan)
}

/// The CI gates: messages naming the offending frames (empty = pass).
fn gates(args: &ProfileArgs, r: &Report) -> Vec<String> {
    let mut v = Vec::new();
    let list = |frames: &[u64]| {
        let s: Vec<String> = frames.iter().take(20).map(|f| f.to_string()).collect();
        format!(
            "{}{}",
            s.join(" "),
            if frames.len() > 20 {
                format!(" ... ({} in all)", frames.len())
            } else {
                String::new()
            }
        )
    };
    if let Some(max) = args.fail_over_load {
        let over = output::frames_over_load(r, max);
        if !over.is_empty() {
            v.push(format!(
                "{}: {} {}frame(s) over {max}% load: {}",
                r.rom.path,
                over.len(),
                if r.options.include_loading {
                    ""
                } else {
                    "gameplay "
                },
                list(&over)
            ));
        }
    }
    if let Some(max) = args.fail_dropped_over {
        if r.summary.dropped_frames > max {
            v.push(format!(
                "{}: {} dropped frame(s), more than {max}: {}",
                r.rom.path,
                r.summary.dropped_frames,
                list(&r.summary.dropped)
            ));
        }
    }
    v
}

pub fn run(args: ProfileArgs) -> anyhow::Result<ExitCode> {
    if args.rom.frames == 0 {
        return Err(UsageError("--frames must be at least 1".into()).into());
    }
    super::diff::check_baseline(&args.baseline, args.roms.len())?;
    let files = [
        &args.csv,
        &args.functions,
        &args.json,
        &args.folded,
        &args.flamegraph,
        &args.pprof,
        &args.speedscope,
        &args.kdebug_log,
        &args.code.lines,
    ];
    let extras = args.heap.is_some()
        || args.sample_histogram.is_some()
        || args.trace.is_some()
        || args.html.is_some()
        || !args.code.annotate.is_empty()
        || args.code.source_dir.is_some();
    if args.roms.len() > 1
        && (files.iter().any(|f| f.is_some()) || args.symbols.is_some() || extras)
    {
        return Err(UsageError(
            "file outputs, --annotate, --source-dir and --symbols need a single ROM: run `retroprof profile` once per ROM"
                .into(),
        )
        .into());
    }
    if let Some(pct) = args.fail_over_load {
        if !(pct.is_finite() && (0.0..=100.0).contains(&pct)) {
            return Err(UsageError(format!(
                "--fail-over-load {pct}: expected a percentage from 0 to 100"
            ))
            .into());
        }
    }
    if args.sample_hz == 0 {
        return Err(UsageError("--sample-hz must be at least 1".into()).into());
    }
    if args.jobs == Some(0) {
        return Err(UsageError("--jobs must be at least 1".into()).into());
    }
    check_outputs(&args)?;
    let color = super::ui::color();
    if args.roms.is_empty() {
        outln!("No ROM given: profiling the built-in demo (the known-costs test ROM, testroms/out/knowncosts).");
        let s = session(&args, None)?;
        return finish_one(&args, s, color);
    }
    if args.roms.len() == 1 {
        let s = session(&args, Some(&args.roms[0]))?;
        return finish_one(&args, s, color);
    }
    // Several ROMs: parallel, reports printed in order.
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .clamp(1, args.roms.len());
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<anyhow::Result<Report>>>> =
        Mutex::new((0..args.roms.len()).map(|_| None).collect());
    std::thread::scope(|sc| {
        for _ in 0..jobs {
            sc.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= args.roms.len() {
                    break;
                }
                let r = session(&args, Some(&args.roms[i])).map(|s| s.run(&mut |_, _| {}));
                results.lock().expect("results lock")[i] = Some(r);
            });
        }
    });
    let mut code = ExitCode::SUCCESS;
    let mut first_err = None;
    let mut failures = Vec::new();
    for r in results
        .into_inner()
        .expect("results lock")
        .into_iter()
        .flatten()
    {
        match r {
            Ok(rep) => {
                out!("{}", output::terminal(&rep, color));
                outln!();
                failures.extend(gates(&args, &rep));
            }
            Err(e) => {
                eprintln!("error: {e:#}");
                first_err.get_or_insert(e);
            }
        }
    }
    if let Some(e) = first_err {
        return Err(e);
    }
    if !failures.is_empty() {
        for f in &failures {
            eprintln!("FAIL: {f}");
        }
        code = ExitCode::from(3);
    }
    Ok(code)
}

fn finish_one(args: &ProfileArgs, s: Session, color: bool) -> anyhow::Result<ExitCode> {
    // An unknown --annotate function is refused before the run.
    for name in &args.code.annotate {
        retroprof_mdprof::code::find_function(&s.index, name)
            .map_err(|e| UsageError(e.to_string()))?;
    }
    let mut bar = Progress::new(!super::ui::quiet());
    let start = Instant::now();
    let ex = Extras::new(args, &s)?;
    let (report, ex) = ex.run(&s, &mut |d, t| bar.update(d, t));
    bar.finish();
    let wall = start.elapsed().as_secs_f64();
    write_outputs(args, &report)?;
    out!("{}", output::terminal(&report, color));
    ex.finish(args, &s, &report, color)?;
    for name in &args.code.annotate {
        let text = retroprof_mdprof::code::annotate(&s, &report, name)
            .map_err(|e| UsageError(e.to_string()))?;
        outln!();
        out!("{text}");
    }
    crate::note!(
        "{} frames in {wall:.2} s ({:.0} frames/s)",
        report.frames.len(),
        report.frames.len() as f64 / wall.max(1e-9)
    );
    let mut failures = gates(args, &report);
    failures.extend(super::diff::baseline(&args.baseline, &report, color)?);
    if !failures.is_empty() {
        for f in &failures {
            eprintln!("FAIL: {f}");
        }
        return Ok(ExitCode::from(3));
    }
    if report.stopped.is_some() {
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// The --heap, --sample-histogram and --trace-frames observers
/// (mdprof's `Extras`, assembled and run there) from the arguments, and
/// what their results become: files and terminal sections, with the
/// --trace / --html outputs (crates/mdprof: heapbridge, sampler, trace,
/// html).
struct Extras(retroprof_mdprof::extras::Extras);

impl Extras {
    fn new(args: &ProfileArgs, s: &Session) -> anyhow::Result<Extras> {
        use retroprof_mdprof::{extras, sampler, trace};
        sampler::parse_format(args.sample_format.name()).map_err(|e| UsageError(e.to_string()))?;
        let trace_frames = match &args.trace_frames {
            Some(spec) => {
                if args.trace.is_none() && args.speedscope.is_none() {
                    return Err(UsageError(
                        "--trace-frames needs --trace FILE or --speedscope FILE".into(),
                    )
                    .into());
                }
                Some(trace::parse_frames(spec).map_err(|e| UsageError(e.to_string()))?)
            }
            None => None,
        };
        let opts = extras::ExtrasOptions {
            heap: args.heap.as_ref().map(|file| file.is_some()),
            sample_hz: args.sample_histogram.as_ref().map(|_| args.sample_hz),
            trace_frames,
        };
        let ex = extras::Extras::new(s, &opts).map_err(|e| UsageError(e.to_string()))?;
        Ok(Extras(ex))
    }

    fn run(mut self, s: &Session, progress: &mut dyn FnMut(u64, u64)) -> (Report, Extras) {
        let report = self.0.run(s, progress);
        (report, self)
    }

    fn finish(
        self,
        args: &ProfileArgs,
        s: &Session,
        report: &Report,
        color: bool,
    ) -> anyhow::Result<()> {
        use retroprof_mdprof::{html, sampler, trace};
        let retroprof_mdprof::extras::Extras {
            heap,
            sampler: smp,
            tracer,
        } = self.0;
        if let Some(h) = heap {
            let out = h.finish();
            if let Some(Some(path)) = &args.heap {
                out.write_log(path)?;
            }
            outln!();
            out!(
                "{}",
                out.report(&retroprof_heap::report::TerminalOptions {
                    color,
                    top: args.top.max(1),
                    anomalies: 20,
                })
            );
        }
        if let (Some(smp), Some(path)) = (smp, &args.sample_histogram) {
            let fmt = sampler::parse_format(args.sample_format.name())
                .map_err(|e| UsageError(e.to_string()))?;
            let info = sampler::write_file(&smp.finish(), fmt, None, path)?;
            crate::note!("{}", info.describe(path));
        }
        let ft = tracer.map(|t| t.finish(&s.index));
        if let Some(path) = &args.trace {
            trace::write_file(report, ft.as_ref(), path, true)
                .with_context(|| format!("writing {}", path.display()))?;
        }
        if let (Some(path), Some(_)) = (&args.speedscope, &ft) {
            // The whole run's sampled profile plus the --trace-frames
            // window as an evented profile (speedscope's Time Order view).
            trace::write_speedscope_file(report, ft.as_ref(), path, true)
                .with_context(|| format!("writing {}", path.display()))?;
        }
        if let Some(path) = &args.html {
            let shot = match report.worst_frames.first() {
                Some(&f) => html::screenshot(s, f)?,
                None => None,
            };
            html::write_file(report, shot.as_ref(), path, true)
                .with_context(|| format!("writing {}", path.display()))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;

    /// Each `--reference-rule` value turns on the rule of the same name.
    #[test]
    fn rule_values_match_rule_names() {
        for a in RuleArg::value_variants() {
            let name = a.to_possible_value().unwrap().get_name().to_string();
            let names = reference_rules(&[*a]).names();
            if *a == RuleArg(None) {
                assert_eq!(names.len(), 6);
                assert_eq!(reference_rules(&[*a]), ReferenceRules::ALL);
            } else {
                assert_eq!(names, vec![name.as_str()]);
            }
        }
    }
}
