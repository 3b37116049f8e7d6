//! `retroprof heap` (being written).

use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct HeapArgs {}

pub fn run(_args: HeapArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`retroprof heap` is not built yet")
}
