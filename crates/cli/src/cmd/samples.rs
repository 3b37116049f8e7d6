//! `retroprof samples` (being written).

use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct SamplesArgs {}

pub fn run(_args: SamplesArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`retroprof samples` is not built yet")
}
