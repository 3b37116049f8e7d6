//! `retroprof`: one binary, one subcommand per tool.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cmd;

#[derive(Parser, Debug)]
#[command(
    name = "retroprof",
    version,
    about = "Profiling toolkit for retro consoles and old PCs",
    long_about = "retroprof profiles Mega Drive games in a cycle-exact emulator (frame budget, \
                  dropped frames, DMA), analyses allocation logs, and symbolises program-counter \
                  histograms taken on real hardware."
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a Mega Drive ROM headless (scripted pads, screenshots) and report its speed.
    Run(cmd::run::RunArgs),
    /// Profile a Mega Drive ROM's frame budget: load, dropped frames, DMA, top functions.
    Profile(cmd::profile::ProfileArgs),
    /// Replay an allocation log: leaks, peak, churn, size histogram, memory map picture.
    Heap(cmd::heap::HeapArgs),
    /// Turn program-counter histograms and a linker map into a per-function profile.
    Samples(cmd::samples::SamplesArgs),
    /// Compare two profiles (reports or ROMs): deltas per function and frame, CI gates.
    Diff(cmd::diff::DiffArgs),
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
    let cli = Cli::parse();
    let result = match cli.command {
        None => {
            use clap::CommandFactory;
            let _ = Cli::command().print_help();
            Ok(ExitCode::SUCCESS)
        }
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
