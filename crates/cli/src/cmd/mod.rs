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
