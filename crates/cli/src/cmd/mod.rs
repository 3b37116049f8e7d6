//! One module per subcommand. Each turns its clap arguments into the plain
//! options struct of its library crate and prints or writes the results.

use std::process::ExitCode;

pub mod diff;
pub mod heap;
pub mod opts;
pub mod profile;
pub mod run;
pub mod samples;

/// Exit code 2 for bad input (the user's files or arguments), 1 otherwise.
/// Library errors that are about user input are wrapped in [`UsageError`].
pub fn exit_code_for(err: &anyhow::Error) -> ExitCode {
    if err.chain().any(|e| e.is::<UsageError>()) {
        ExitCode::from(2)
    } else {
        ExitCode::from(1)
    }
}

/// Marks an error as caused by the user's input (exit code 2).
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Check a command's outputs against its inputs and each other before the
/// run (see [`retroprof_profile::write::OutputPlan`]): a refusal is a usage
/// error (exit code 2). When an output is `-` (standard output carries
/// data), the terminal report and messages go to standard error from here
/// on ([`stdout::report_to_stderr`]).
pub fn check_outputs(plan: &retroprof_profile::write::OutputPlan) -> anyhow::Result<()> {
    plan.check().map_err(|e| match e {
        retroprof_profile::Error::Refused(m) => anyhow::Error::new(UsageError(m)),
        e => anyhow::Error::new(e),
    })?;
    stdout::report_to_stderr(plan.writes_stdout());
    Ok(())
}

/// Refuse binary data (`what`: e.g. "gzip-compressed protobuf") on a
/// terminal: `--pprof -` with standard output not redirected would only
/// garble the screen (gzip's rule). A usage error (exit code 2).
pub fn refuse_binary_on_terminal(
    option: &str,
    path: &std::path::Path,
    what: &str,
) -> anyhow::Result<()> {
    use std::io::IsTerminal;
    if retroprof_profile::write::is_stdout(path) && std::io::stdout().is_terminal() {
        return Err(UsageError(format!(
            "{option} {}: refusing to write {what} to a terminal; redirect standard output \
             to a file or a pipe (`> FILE`, `| ...`)",
            path.display()
        ))
        .into());
    }
    Ok(())
}

/// Read an input named on the command line whole, bounded by `limit`
/// bytes: `-` is standard input (read up to `limit` + 1 bytes), anything
/// else as [`retroprof_samples::retroprof_symbols::input::read_limited`].
pub fn read_input(path: &std::path::Path, limit: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    if path.as_os_str() != "-" {
        return retroprof_samples::retroprof_symbols::input::read_limited(path, limit);
    }
    let mut data = Vec::new();
    std::io::stdin()
        .lock()
        .take(limit + 1)
        .read_to_end(&mut data)?;
    if data.len() as u64 > limit {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("more than {limit} bytes on standard input; the limit is {limit} bytes"),
        ));
    }
    Ok(data)
}

/// How the terminal report is shown: `--color` and `-q/--quiet` (global
/// options, see main.rs), set once by `main`.
pub mod ui {
    use std::io::IsTerminal;
    use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

    use super::opts::ColorWhen;

    static QUIET: AtomicBool = AtomicBool::new(false);
    static COLOR: AtomicU8 = AtomicU8::new(0);

    pub fn init(color: ColorWhen, quiet: bool) {
        QUIET.store(quiet, Ordering::Relaxed);
        COLOR.store(
            match color {
                ColorWhen::Auto => 0,
                ColorWhen::Always => 1,
                ColorWhen::Never => 2,
            },
            Ordering::Relaxed,
        );
    }

    /// `-q/--quiet`: no report, no progress, no notes (warnings, errors
    /// and gate failures are still printed).
    pub fn quiet() -> bool {
        QUIET.load(Ordering::Relaxed)
    }

    /// Whether the report is coloured: `--color always|never`, or with
    /// `auto` (the default) when the stream the report goes to is a
    /// terminal and NO_COLOR is unset or empty (<https://no-color.org>).
    pub fn color() -> bool {
        let when = match COLOR.load(Ordering::Relaxed) {
            1 => ColorWhen::Always,
            2 => ColorWhen::Never,
            _ => ColorWhen::Auto,
        };
        let terminal = if super::stdout::reporting_to_stderr() {
            std::io::stderr().is_terminal()
        } else {
            std::io::stdout().is_terminal()
        };
        decide(when, terminal, std::env::var_os("NO_COLOR").as_deref())
    }

    /// The colour rule of [`color`], pure.
    pub fn decide(when: ColorWhen, terminal: bool, no_color: Option<&std::ffi::OsStr>) -> bool {
        match when {
            ColorWhen::Always => true,
            ColorWhen::Never => false,
            ColorWhen::Auto => terminal && no_color.is_none_or(|v| v.is_empty()),
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        use std::ffi::OsStr;

        #[test]
        fn color_rule() {
            let set = Some(OsStr::new("1"));
            let empty = Some(OsStr::new(""));
            assert!(decide(ColorWhen::Auto, true, None));
            assert!(decide(ColorWhen::Auto, true, empty));
            assert!(!decide(ColorWhen::Auto, true, set));
            assert!(!decide(ColorWhen::Auto, false, None));
            // An explicit choice wins over NO_COLOR and the terminal test.
            assert!(decide(ColorWhen::Always, false, set));
            assert!(!decide(ColorWhen::Never, true, None));
        }
    }
}

/// Standard output that records its first write error instead of
/// panicking as `print!` does (a full disk, a closed terminal). `main`
/// reports it at the end as a one-line error with a non-zero exit code.
/// (A closed pipe ends the process quietly by SIGPIPE: see `main`.)
pub mod stdout {
    use std::io::Write;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Mutex;

    static FAILED: Mutex<Option<std::io::Error>> = Mutex::new(None);
    static TO_STDERR: AtomicBool = AtomicBool::new(false);

    /// Send what `out!`/`outln!` print (the terminal report, messages) to
    /// standard error instead: standard output carries an output (`-`).
    pub fn report_to_stderr(yes: bool) {
        TO_STDERR.store(yes, Ordering::Relaxed);
    }

    pub fn reporting_to_stderr() -> bool {
        TO_STDERR.load(Ordering::Relaxed)
    }

    /// Writes `args` to `w`, unless an earlier write failed; records the
    /// first failure in `failed`.
    pub fn write_to<W: Write>(
        w: &mut W,
        failed: &mut Option<std::io::Error>,
        args: std::fmt::Arguments,
    ) {
        if failed.is_some() {
            return;
        }
        if let Err(e) = w.write_fmt(args) {
            *failed = Some(e);
        }
    }

    /// Print a piece of the report: to standard output, or to standard
    /// error when standard output carries an output; nothing with
    /// `--quiet`.
    pub fn print(args: std::fmt::Arguments) {
        if super::ui::quiet() {
            return;
        }
        if reporting_to_stderr() {
            let _ = std::io::stderr().lock().write_fmt(args);
            return;
        }
        let mut failed = FAILED.lock().unwrap_or_else(|p| p.into_inner());
        write_to(&mut std::io::stdout().lock(), &mut failed, args);
    }

    /// Write data (not the report: `--quiet` does not silence it) to
    /// standard output, recording the first error as [`print()`] does.
    pub fn write_bytes(data: &[u8]) {
        let mut failed = FAILED.lock().unwrap_or_else(|p| p.into_inner());
        if failed.is_none() {
            if let Err(e) = std::io::stdout().lock().write_all(data) {
                *failed = Some(e);
            }
        }
    }

    /// Flush and return the first write error, if any.
    pub fn finish() -> Option<std::io::Error> {
        let mut failed = FAILED.lock().unwrap_or_else(|p| p.into_inner());
        if failed.is_none() {
            if let Err(e) = std::io::stdout().lock().flush() {
                *failed = Some(e);
            }
        }
        failed.take()
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        /// Takes `room` bytes, then fails as a full disk does.
        struct Full {
            room: usize,
            got: Vec<u8>,
        }

        impl Write for Full {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                if self.room == 0 {
                    return Err(std::io::Error::from_raw_os_error(28)); // ENOSPC
                }
                let n = b.len().min(self.room);
                self.room -= n;
                self.got.extend_from_slice(&b[..n]);
                Ok(n)
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }

        #[test]
        fn first_error_is_kept_and_later_writes_skipped() {
            let mut w = Full {
                room: 5,
                got: Vec::new(),
            };
            let mut failed = None;
            write_to(&mut w, &mut failed, format_args!("abc"));
            assert!(failed.is_none());
            write_to(&mut w, &mut failed, format_args!("defgh"));
            assert_eq!(failed.as_ref().unwrap().raw_os_error(), Some(28));
            w.room = 100;
            write_to(&mut w, &mut failed, format_args!("more"));
            assert_eq!(w.got, b"abcde");
        }
    }
}

/// `print!` that never panics (see [`stdout`]).
#[macro_export]
macro_rules! out {
    ($($t:tt)*) => { $crate::cmd::stdout::print(format_args!($($t)*)) };
}

/// A note on standard error (timings, what was written) that `--quiet`
/// silences; warnings and errors use `eprintln!`.
#[macro_export]
macro_rules! note {
    ($($t:tt)*) => {
        if !$crate::cmd::ui::quiet() {
            eprintln!($($t)*);
        }
    };
}

/// `println!` that never panics (see [`stdout`]).
#[macro_export]
macro_rules! outln {
    () => { $crate::cmd::stdout::print(format_args!("\n")) };
    ($($t:tt)*) => {{
        $crate::cmd::stdout::print(format_args!($($t)*));
        $crate::cmd::stdout::print(format_args!("\n"));
    }};
}
