//! `retroprof`: one binary, one subcommand per tool.

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

mod cmd;

#[derive(Parser, Debug)]
#[command(
    name = "retroprof",
    version,
    about = "Profiling toolkit for retro consoles and old PCs",
    long_about = "retroprof profiles Mega Drive games in a cycle-exact emulator (frame budget, \
                  dropped frames, DMA), analyses allocation logs, and symbolises program-counter \
                  histograms taken on real hardware.\n\n\
                  Every subcommand takes --color auto|always|never (NO_COLOR turns auto off) and \
                  -q/--quiet; `retroprof help SUBCOMMAND` or `retroprof SUBCOMMAND --help` shows \
                  its input formats, exit codes and examples.",
    after_long_help = "Examples:\n  \
        retroprof profile                      profile the built-in demo\n  \
        retroprof profile game.bin --html game.html\n  \
        retroprof heap alloc.log --png heap.png\n  \
        echo 'source <(retroprof completions bash)' >> ~/.bashrc\n  \
        retroprof man --dir ~/.local/share/man/man1"
)]
struct Cli {
    #[command(flatten)]
    global: cmd::opts::GlobalArgs,

    #[command(subcommand)]
    command: Option<Command>,
}

// No doc comments on the variants: they would replace each subcommand's
// own `about` and `long_about` (the exit codes, formats and examples).
#[derive(Subcommand, Debug)]
enum Command {
    Run(cmd::run::RunArgs),
    Profile(cmd::profile::ProfileArgs),
    Heap(cmd::heap::HeapArgs),
    Samples(cmd::samples::SamplesArgs),
    Diff(cmd::diff::DiffArgs),
    Completions(CompletionsArgs),
    Man(ManArgs),
}

#[derive(clap::Args, Debug)]
#[command(
    about = "Print a shell completion script (bash, zsh, fish, elvish, powershell)",
    long_about = "Prints the completion script for SHELL on standard output.",
    after_long_help = "Examples:\n  \
        echo 'source <(retroprof completions bash)' >> ~/.bashrc\n  \
        retroprof completions zsh > ~/.zfunc/_retroprof    (with fpath+=~/.zfunc)\n  \
        retroprof completions fish > ~/.config/fish/completions/retroprof.fish"
)]
struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

#[derive(clap::Args, Debug)]
#[command(
    about = "Print or write the manual pages (roff)",
    long_about = "Prints the manual page of retroprof (or of SUBCOMMAND) on standard output, or \
                  writes all of them (retroprof.1, retroprof-profile.1, ...) into a folder.",
    after_long_help = "Examples:\n  \
        retroprof man | man -l -\n  \
        retroprof man profile | man -l -\n  \
        retroprof man --dir ~/.local/share/man/man1"
)]
struct ManArgs {
    /// The subcommand whose page to print (default: retroprof's own).
    subcommand: Option<String>,

    /// Write every page into this folder instead (each whole or not at all).
    #[arg(long, value_name = "DIR", conflicts_with = "subcommand")]
    dir: Option<std::path::PathBuf>,
}

/// `--color never|always` seen before parsing, so that clap's own help and
/// error messages follow it too (clap's `auto` already honours NO_COLOR).
fn color_choice(args: &[std::ffi::OsString]) -> clap::ColorChoice {
    let mut choice = clap::ColorChoice::Auto;
    let mut it = args.iter().skip(1).map(|a| a.to_str().unwrap_or(""));
    while let Some(a) = it.next() {
        if a == "--" {
            break;
        }
        let v = match a.strip_prefix("--color") {
            Some("") => it.next().unwrap_or(""),
            Some(rest) => match rest.strip_prefix('=') {
                Some(v) => v,
                None => continue,
            },
            None => continue,
        };
        choice = match v {
            "always" => clap::ColorChoice::Always,
            "never" => clap::ColorChoice::Never,
            _ => clap::ColorChoice::Auto,
        };
    }
    choice
}

fn completions(a: CompletionsArgs) -> anyhow::Result<ExitCode> {
    let mut cmd = Cli::command();
    let mut buf = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "retroprof", &mut buf);
    cmd::stdout::write_bytes(&buf);
    Ok(ExitCode::SUCCESS)
}

fn man(a: ManArgs) -> anyhow::Result<ExitCode> {
    use anyhow::Context;
    let mut root = Cli::command().disable_help_subcommand(true);
    root.build();
    let render = |c: &clap::Command| -> anyhow::Result<Vec<u8>> {
        let mut buf = Vec::new();
        clap_mangen::Man::new(c.clone())
            .render(&mut buf)
            .context("rendering a manual page")?;
        Ok(buf)
    };
    if let Some(dir) = &a.dir {
        if !dir.is_dir() {
            return Err(cmd::UsageError(format!("--dir {}: not a folder", dir.display())).into());
        }
        let mut pages = vec![root.clone()];
        pages.extend(root.get_subcommands().cloned());
        for c in &pages {
            let name = format!("{}.1", c.get_display_name().unwrap_or(c.get_name()));
            let path = dir.join(&name);
            let bytes = render(c)?;
            retroprof_profile::write::atomic(&path, true, |w| {
                w.write_all(&bytes)
                    .map_err(|source| retroprof_profile::Error::Io {
                        path: retroprof_profile::write::STREAM_PATH.into(),
                        source,
                    })
            })
            .with_context(|| format!("writing {}", path.display()))?;
            crate::note!("wrote {}", path.display());
        }
        return Ok(ExitCode::SUCCESS);
    }
    let page = match &a.subcommand {
        None => root,
        Some(name) => root.find_subcommand(name).cloned().ok_or_else(|| {
            let names: Vec<&str> = root.get_subcommands().map(|c| c.get_name()).collect();
            cmd::UsageError(format!(
                "man {name}: no such subcommand (one of: {})",
                names.join(", ")
            ))
        })?,
    };
    cmd::stdout::write_bytes(&render(&page)?);
    Ok(ExitCode::SUCCESS)
}

fn main() -> ExitCode {
    // A closed pipe (`| head`) ends us quietly, as it does other command
    // line tools (Rust ignores SIGPIPE, so every print would fail instead).
    // Outputs to a FIFO are written in place, so no temporary is left.
    // The workspace denies unsafe code; this one libc call is the exception.
    #[cfg(unix)]
    #[allow(unsafe_code)]
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    // SIGINT/SIGTERM/SIGHUP remove output temporaries in flight.
    retroprof_profile::write::install_signal_cleanup();
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let matches = Cli::command()
        .color(color_choice(&args))
        .get_matches_from(&args);
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    cmd::ui::init(cli.global.color, cli.global.quiet);
    let result = match cli.command {
        None => {
            let _ = Cli::command().color(color_choice(&args)).print_help();
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Completions(a)) => completions(a),
        Some(Command::Man(a)) => man(a),
        Some(Command::Heap(args)) => cmd::heap::run(args),
        Some(Command::Run(args)) => cmd::run::run(args),
        Some(Command::Profile(args)) => cmd::profile::run(args),
        Some(Command::Samples(args)) => cmd::samples::run(args),
        Some(Command::Diff(args)) => cmd::diff::run(args),
    };
    let stdout_error = cmd::stdout::finish();
    match result {
        Ok(_) | Err(_) if stdout_error.is_some() => {
            if let Err(err) = result {
                eprintln!("error: {err:#}");
            }
            eprintln!(
                "error: writing standard output: {}",
                stdout_error.expect("checked")
            );
            ExitCode::from(1)
        }
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            cmd::exit_code_for(&err)
        }
    }
}
