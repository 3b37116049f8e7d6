//! `retroprof diff BASE NEW` and `retroprof profile --baseline BASE.json`:
//! compare two frame-budget profiles (crates/diff) and gate CI on them.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use retroprof_diff::{gates, output, stacks, DiffOptions, Gates};
use retroprof_mdprof::Report;

use super::profile::ProfileArgs;
use super::UsageError;

/// The gates and frame matching, shared by `diff` and `profile --baseline`.
#[derive(clap::Args, Debug, Default, Clone)]
pub struct GateArgs {
    /// Compare new frame n with base frame n - (new first loop - base first
    /// loop): use when start-up got longer or shorter.
    #[arg(long)]
    pub align_first_loop: bool,

    /// Exit with code 3 when the mean or the p99 load grew by more than PCT
    /// percentage points.
    #[arg(long, value_name = "PCT")]
    pub fail_load_regression: Option<f64>,

    /// Exit with code 3 when a non-idle function's self cycles grew by more
    /// than PCT % and by more than 0.1 % of all cycles (new functions count).
    #[arg(long, value_name = "PCT")]
    pub fail_function_regression: Option<f64>,

    /// Exit with code 3 when new has more dropped frames than base.
    #[arg(long)]
    pub fail_new_drops: bool,
}

impl GateArgs {
    fn gates(&self) -> anyhow::Result<Gates> {
        for (name, v) in [
            ("--fail-load-regression", self.fail_load_regression),
            ("--fail-function-regression", self.fail_function_regression),
        ] {
            if let Some(v) = v {
                if !v.is_finite() || v < 0.0 {
                    return Err(
                        UsageError(format!("{name} {v}: give a percentage of 0 or more")).into(),
                    );
                }
            }
        }
        Ok(Gates {
            load_regression_pts: self.fail_load_regression,
            function_regression_pct: self.fail_function_regression,
            new_drops: self.fail_new_drops,
        })
    }
}

/// `profile --baseline`: the options `profile` gains (flattened into
/// [`ProfileArgs`]).
#[derive(clap::Args, Debug, Default, Clone)]
pub struct BaselineArgs {
    /// Compare this run with a report of an earlier build (`profile --json`;
    /// `-`: standard input) and print the diff (as `retroprof diff BASE.json
    /// ROM`).
    #[arg(long, value_name = "BASE.json")]
    pub baseline: Option<PathBuf>,

    #[command(flatten)]
    pub gates: GateArgs,

    /// The --baseline diff as JSON (schema retroprof-diff/1).
    #[arg(long, value_name = "FILE", requires = "baseline")]
    pub diff_json: Option<PathBuf>,

    /// The --baseline diff as a self-contained HTML page.
    #[arg(long, value_name = "FILE.html", requires = "baseline")]
    pub diff_html: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
#[command(
    about = "Compare two profiles (JSON reports or ROMs): load, drops, DMA and per-function deltas; CI gates",
    long_about = "Compares two frame-budget profiles: BASE (the reference build) and NEW. Each is a \
                  report written by `retroprof profile --json`, or a ROM, which is then profiled \
                  here with the options below (the same for both; symbols found next to each ROM \
                  or given with --symbols-base / --symbols-new).\n\n\
                  Functions are matched by name (a rebuild moves every address); compiler clones \
                  (.isra.N, .constprop.N, .lto_priv.N, .part.N, .cold) by their base name when \
                  only the suffix changed. Frames are matched by number (--align-first-loop: \
                  counted from the first game loop). Everything that differs between the two \
                  runs (inputs, frames, region, options, ROM title, first loop) is reported as \
                  a warning.\n\n\
                  Outputs: any output FILE may be `-`, standard output (one of them at most); the \
                  terminal report then goes to standard error (-q: not at all).\n\n\
                  Exit codes: 0 done, 3 a --fail-* gate tripped, 2 bad input or arguments, 1 \
                  other errors.",
    after_long_help = "Examples:\n  \
        retroprof diff base.json new.json\n  \
        retroprof diff old.bin new.bin -n 3600 -i 60-:R\n  \
        retroprof diff base.json new.bin --fail-load-regression 2 --fail-new-drops\n  \
        retroprof diff base.json new.json --html diff.html --flamegraph diff.svg\n  \
        retroprof profile new.bin -q --json - | retroprof diff base.json -"
)]
pub struct DiffArgs {
    /// The reference: a `profile --json` report (`-`: read from standard
    /// input) or a ROM.
    pub base: PathBuf,

    /// The build to judge: a `profile --json` report (`-`: standard input)
    /// or a ROM.
    pub new: PathBuf,

    /// Symbol file for a BASE ROM (default: found next to it).
    #[arg(long, value_name = "FILE")]
    pub symbols_base: Option<PathBuf>,

    /// Symbol file for a NEW ROM (default: found next to it).
    #[arg(long, value_name = "FILE")]
    pub symbols_new: Option<PathBuf>,

    /// How a ROM side is run (the same for both; the options of `profile`).
    #[command(flatten)]
    pub rom: super::opts::RomArgs,

    /// Functions shown, frames shown.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub top: usize,

    #[command(flatten)]
    pub gates: GateArgs,

    /// The diff as JSON (schema retroprof-diff/1, crates/diff/README.md).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Per-frame CSV (load, busy cycles, drops, DMA on both sides).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,

    /// Per-function CSV (self, inclusive, calls, cycles/call on both sides).
    #[arg(long, value_name = "FILE")]
    pub functions: Option<PathBuf>,

    /// Self-contained HTML page (per-frame load-delta plot, function table).
    #[arg(long, value_name = "FILE.html")]
    pub html: Option<PathBuf>,

    /// Differential flame graph SVG (width = new, red grew, blue shrank).
    #[arg(long, value_name = "FILE.svg")]
    pub flamegraph: Option<PathBuf>,

    /// One pprof profile: new minus base, as `go tool pprof -diff_base` builds it.
    #[arg(long, value_name = "FILE.pb.gz")]
    pub pprof: Option<PathBuf>,
}

/// Is `path` a JSON report (first non-blank byte `{`) rather than a ROM?
/// (`-`, standard input, is always a report.)
fn is_report(path: &Path) -> anyhow::Result<bool> {
    if path.as_os_str() == "-" {
        return Ok(true);
    }
    let mut f =
        std::fs::File::open(path).map_err(|e| UsageError(format!("{}: {e}", path.display())))?;
    let mut head = [0u8; 256];
    let mut n = 0;
    while n < head.len() {
        match f.read(&mut head[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) => return Err(UsageError(format!("{}: {e}", path.display())).into()),
        }
    }
    Ok(retroprof_diff::load::looks_like_json(&head[..n]))
}

/// Read a `profile --json` report; `-` is standard input (bounded as a
/// file is: [`retroprof_diff::load::MAX_REPORT_BYTES`]).
fn read_report(path: &Path) -> anyhow::Result<Report> {
    if path.as_os_str() == "-" {
        let bytes = super::read_input(path, retroprof_diff::load::MAX_REPORT_BYTES)
            .map_err(|e| UsageError(format!("reading a report from standard input: {e}")))?;
        return retroprof_diff::load::parse_report(Path::new("<standard input>"), &bytes)
            .map_err(|e| UsageError(e.to_string()).into());
    }
    retroprof_diff::read_report(path).map_err(|e| UsageError(e.to_string()).into())
}

/// The `profile` arguments a ROM side is profiled with.
fn profile_args(a: &DiffArgs, symbols: Option<PathBuf>) -> ProfileArgs {
    ProfileArgs {
        rom: a.rom.clone(),
        top: a.top.max(1),
        symbols,
        ..ProfileArgs::default()
    }
}

/// Write one output whole or not at all, through the writer every
/// `profile` output uses.
fn write_out(
    path: &Path,
    f: &dyn Fn(&mut dyn std::io::Write) -> Result<(), retroprof_profile::Error>,
) -> anyhow::Result<()> {
    retroprof_profile::write::atomic(path, true, |w| f(w))
        .with_context(|| format!("writing {}", path.display()))
}

pub fn run(a: DiffArgs) -> anyhow::Result<ExitCode> {
    if a.rom.frames == 0 {
        return Err(UsageError("--frames must be at least 1".into()).into());
    }
    let gates = a.gates.gates()?;
    if a.base.as_os_str() == "-" && a.new.as_os_str() == "-" {
        return Err(UsageError(
            "BASE and NEW are both `-`: standard input holds one report; give the other as a file"
                .into(),
        )
        .into());
    }
    // Nothing the user gave is overwritten, and every output can be written.
    let mut plan = retroprof_profile::write::OutputPlan::new();
    plan.input("the base (BASE)", &a.base);
    plan.input("the new side (NEW)", &a.new);
    for (what, p) in [
        ("--symbols-base", &a.symbols_base),
        ("--symbols-new", &a.symbols_new),
    ] {
        if let Some(p) = p {
            plan.input(what, p);
        }
    }
    for side in [&a.base, &a.new] {
        for c in retroprof_mdprof::romsyms::candidates_for_rom(side) {
            plan.input("a symbol file of a ROM side", &c);
        }
    }
    for (what, p) in [
        ("--json", &a.json),
        ("--csv", &a.csv),
        ("--functions", &a.functions),
        ("--html", &a.html),
        ("--flamegraph", &a.flamegraph),
        ("--pprof", &a.pprof),
    ] {
        if let Some(p) = p {
            plan.output(what, p);
        }
    }
    if let Some(p) = &a.pprof {
        super::refuse_binary_on_terminal("--pprof", p, "a gzip-compressed profile")?;
    }
    super::check_outputs(&plan)?;
    let sides = [
        (&a.base, a.symbols_base.clone(), "--symbols-base"),
        (&a.new, a.symbols_new.clone(), "--symbols-new"),
    ];
    let mut kinds = Vec::new();
    for (p, syms, flag) in &sides {
        let report = is_report(p)?;
        if report && syms.is_some() {
            return Err(UsageError(format!(
                "{flag} is for a ROM, but {} is a JSON report",
                p.display()
            ))
            .into());
        }
        kinds.push(report);
    }
    // Profile the ROM sides (in parallel when both are ROMs).
    let load = |i: usize| -> anyhow::Result<Report> {
        let (p, syms, _) = &sides[i];
        if kinds[i] {
            read_report(p)
        } else {
            let pa = profile_args(&a, syms.clone());
            let s = super::profile::session(&pa, Some(p))?;
            Ok(s.run(&mut |_, _| {}))
        }
    };
    let (base, new) = std::thread::scope(|sc| {
        let hb = sc.spawn(|| load(0));
        let n = load(1);
        (hb.join().expect("profiling thread"), n)
    });
    let (base, new) = (base?, new?);
    let opts = DiffOptions {
        base_label: a.base.display().to_string(),
        new_label: a.new.display().to_string(),
        align_first_loop: a.gates.align_first_loop,
        top_frames: a.top.max(1),
    };
    let d = retroprof_diff::diff(&base, &new, &opts).map_err(|e| UsageError(e.to_string()))?;
    if let Some(p) = &a.json {
        write_out(p, &|w| output::json(&d, w))?;
    }
    if let Some(p) = &a.csv {
        write_out(p, &|w| output::frames_csv(&d, w))?;
    }
    if let Some(p) = &a.functions {
        write_out(p, &|w| output::functions_csv(&d, w))?;
    }
    if let Some(p) = &a.html {
        write_out(p, &|w| output::html(&d, w))?;
    }
    if let Some(p) = &a.flamegraph {
        write_out(p, &|w| stacks::flamegraph(&base, &new, &d, w))?;
    }
    if let Some(p) = &a.pprof {
        write_out(p, &|w| stacks::pprof(&base, &new, &d, w))?;
    }
    crate::out!("{}", output::terminal(&d, a.top.max(1), super::ui::color()));
    let failures = gates::check(&d, &gates);
    if !failures.is_empty() {
        for f in &failures {
            eprintln!("FAIL: {f}");
        }
        return Ok(ExitCode::from(3));
    }
    Ok(ExitCode::SUCCESS)
}

/// `profile --baseline`: checked before the run (a single ROM, readable
/// baseline, valid gates).
pub fn check_baseline(b: &BaselineArgs, roms: usize) -> anyhow::Result<()> {
    if b.baseline.is_none() {
        if b.gates.fail_load_regression.is_some()
            || b.gates.fail_function_regression.is_some()
            || b.gates.fail_new_drops
            || b.gates.align_first_loop
        {
            return Err(UsageError(
                "--fail-load-regression, --fail-function-regression, --fail-new-drops and \
                 --align-first-loop compare with a baseline: give --baseline BASE.json"
                    .into(),
            )
            .into());
        }
        return Ok(());
    }
    if roms > 1 {
        return Err(UsageError("--baseline needs a single ROM".into()).into());
    }
    b.gates.gates()?;
    Ok(())
}

/// `profile --baseline`: diff the finished report against the baseline,
/// print the diff, write --diff-json / --diff-html; returns the gate
/// failures.
pub fn baseline(b: &BaselineArgs, report: &Report, color: bool) -> anyhow::Result<Vec<String>> {
    let Some(path) = &b.baseline else {
        return Ok(Vec::new());
    };
    let base = read_report(path)?;
    let opts = DiffOptions {
        base_label: path.display().to_string(),
        new_label: report.rom.path.clone(),
        align_first_loop: b.gates.align_first_loop,
        top_frames: report.options.top.max(1),
    };
    let d = retroprof_diff::diff(&base, report, &opts).map_err(|e| UsageError(e.to_string()))?;
    if let Some(p) = &b.diff_json {
        write_out(p, &|w| output::json(&d, w))?;
    }
    if let Some(p) = &b.diff_html {
        write_out(p, &|w| output::html(&d, w))?;
    }
    crate::outln!();
    crate::out!("{}", output::terminal(&d, report.options.top.max(1), color));
    Ok(gates::check(&d, &b.gates.gates()?))
}
