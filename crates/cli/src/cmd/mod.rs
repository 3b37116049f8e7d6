//! One module per subcommand. Each turns its clap arguments into the plain
//! options struct of its library crate and prints or writes the results.

use std::process::ExitCode;

pub mod diff;
pub mod heap;
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
/// error (exit code 2).
pub fn check_outputs(plan: &retroprof_profile::write::OutputPlan) -> anyhow::Result<()> {
    plan.check().map_err(|e| match e {
        retroprof_profile::Error::Refused(m) => UsageError(m).into(),
        e => anyhow::Error::new(e),
    })
}

/// Standard output that records its first write error instead of
/// panicking as `print!` does (a full disk, a closed terminal). `main`
/// reports it at the end as a one-line error with a non-zero exit code.
/// (A closed pipe ends the process quietly by SIGPIPE: see `main`.)
pub mod stdout {
    use std::io::Write;
    use std::sync::Mutex;

    static FAILED: Mutex<Option<std::io::Error>> = Mutex::new(None);

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

    pub fn print(args: std::fmt::Arguments) {
        let mut failed = FAILED.lock().unwrap_or_else(|p| p.into_inner());
        write_to(&mut std::io::stdout().lock(), &mut failed, args);
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

/// `println!` that never panics (see [`stdout`]).
#[macro_export]
macro_rules! outln {
    () => { $crate::cmd::stdout::print(format_args!("\n")) };
    ($($t:tt)*) => {{
        $crate::cmd::stdout::print(format_args!($($t)*));
        $crate::cmd::stdout::print(format_args!("\n"));
    }};
}
