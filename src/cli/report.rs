//! `rtbench report`.

use clap::Args;
use std::path::PathBuf;

/// Examples for `rtbench report --help`.
pub const EXAMPLES: &str = "\
Examples:
  rtbench report              this boot's self-test: verdict, per-CPU table, what failed
  rtbench report --all        every kept run, oldest first, each with its boot
  rtbench report --json       the run shown, in full (histograms included)

The results directory is [output] results_dir of the configuration (--config, default
/etc/rtbench/rtbench.toml); --dir overrides it. A run that could not be stored is read
from [output] fallback_dir (/run/rtbench).

Exit codes: 0 this boot's run passed (or was accepted unjudged), 1 it failed, was
unjudged, was not stored, or there is no run of this boot, 2 no results or invalid
configuration.";

/// `rtbench report` flags.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Print the stored JSON instead of the table
    #[arg(long)]
    pub json: bool,
    /// Every kept run instead of the last one
    #[arg(long)]
    pub all: bool,
    /// Results directory (default: [output] results_dir of the configuration)
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Configuration file to read [output] from (default /etc/rtbench/rtbench.toml;
    /// when it is missing the documented defaults are used)
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}
