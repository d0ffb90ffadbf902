//! `rtbench report`.

use clap::Args;
use std::path::PathBuf;

/// Examples for `rtbench report --help`.
pub const EXAMPLES: &str = "\
Examples:
  rtbench report              this boot's self-test: verdict, per-CPU table, what failed
  rtbench report --all        every kept run, oldest first, each with its boot
  rtbench report --json       the run shown, in full (histograms included)
  rtbench report --format junit > rtbench.xml   JUnit XML for Jenkins, GitLab, a
                              factory station: a test case per test, CPU and limit,
                              and per tuning item

The results directory is [output] results_dir of the configuration (--config, default
/etc/rtbench/rtbench.toml); --dir overrides it. A run that could not be stored is read
from [output] fallback_dir (/run/rtbench).

--since TIME shows the monitor's windows instead: worst max, p99.9, p99, overruns and
missed periods per CPU, from [monitor] dir (default results_dir/monitor):
  rtbench report --since 2h   the monitor's windows of the last two hours, per CPU
  rtbench report --since 1d --json   the same as JSON, every window included

The run shown is this boot's newest self-test attempt, also one that stopped before a
verdict (its configuration refused, the environment refused, the load failed); a
warning says when RTBENCH_UNIT_LABEL names another unit than the run shown.

Exit codes: 0 this boot's newest attempt passed (or was accepted unjudged) and was
stored, 1 it failed, was unjudged or invalid (not the system's latency), has no verdict,
was not stored or an output was not written, or there is no run of this boot, 2 no
results (--format junit still writes a document with one error case) or invalid
configuration. With --since: 0 no window exceeded [monitor.limits], 1 one did, or no
window in the period, 2 no monitor windows stored, or a store file that is not a regular
file.";

/// `rtbench report` flags.
#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// Print the stored JSON instead of the table
    #[arg(long)]
    pub json: bool,
    /// Output format: table (default), json (as --json) or junit (JUnit XML: one test
    /// case per test, CPU or pair and limit, one per tuning item)
    #[arg(long, value_name = "FORMAT", value_parser = ["table", "json", "junit"])]
    pub format: Option<String>,
    /// Every kept run instead of the last one
    #[arg(long)]
    pub all: bool,
    /// The monitor's windows of the last TIME (s, m, h, d) instead of self-test
    /// results: worst max, p99.9, p99, overruns, missed periods per CPU
    #[cfg(feature = "monitor")]
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    pub since: Option<String>,
    /// Results directory (default: [output] results_dir of the configuration)
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Configuration file to read [output] from (default /etc/rtbench/rtbench.toml;
    /// when it is missing the documented defaults are used)
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}
