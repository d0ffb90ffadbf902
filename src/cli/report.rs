//! `rtbench report`.

use clap::Args;
use std::path::PathBuf;

/// Examples for `rtbench report --help`.
pub const EXAMPLES: &str = "\
Examples:
  rtbench report              the last self-test: verdict and per-CPU table
  rtbench report --all        every kept run, oldest first
  rtbench report --json       the last run's full result (histograms included)";

/// `rtbench report` flags.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Print the stored JSON instead of the table
    #[arg(long)]
    pub json: bool,
    /// Every kept run instead of the last one
    #[arg(long)]
    pub all: bool,
    /// Results directory
    #[arg(long, value_name = "DIR", default_value = crate::report::store::DEFAULT_DIR)]
    pub dir: PathBuf,
}
