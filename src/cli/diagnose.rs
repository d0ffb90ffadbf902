//! `rtbench diagnose`.

use clap::Args;
use std::path::PathBuf;

/// Examples and exit codes for `rtbench diagnose --help`.
pub const EXAMPLES: &str = "\
Examples:
  rtbench diagnose -o /tmp/board7.tar.gz        everything, for the field engineer
  rtbench diagnose -o - | ssh pc 'cat > board7.tar.gz'
  tar -xzOf board7.tar.gz --wildcards '*/SUMMARY.txt'   what looks wrong

The bundle holds SUMMARY.txt (what looks wrong, what could not be collected, the file
list), the last self-test results and report, the monitor's windows and state, tune
check against the configuration, the configuration, the system snapshot (kernel and
its configuration, command line, CPU sets, IRQ affinities, /proc/interrupts, softirqs,
RT throttling and sysctls, cpufreq, cpuidle, real-time tasks, kernel log) and the
journal of rtbench.service and rtbench-monitor.service when journald runs.

Exit codes: 0 bundle written, 2 bad flags or configuration, or an -o path that cannot
take the bundle (no such directory, read-only, not writable: checked before collecting,
as for every output path; nothing written), 3 writing the bundle failed after that
(disk full, I/O error; nothing left behind).";

/// `rtbench diagnose` flags.
#[derive(Debug, Args)]
pub struct DiagnoseArgs {
    /// The bundle to write (.tar.gz), written atomically; - for standard output
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,

    /// Configuration file (default /etc/rtbench/rtbench.toml; when it is missing the
    /// documented defaults are used)
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Results directory (default: [output] results_dir of the configuration)
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,

    /// Monitor windows and journal entries of the last TIME (s, m, h, d)
    #[arg(
        long,
        value_name = "TIME",
        default_value = "7d",
        allow_hyphen_values = true
    )]
    pub since: String,

    /// Root of /proc and /sys (tests run against a temporary tree)
    #[arg(long, value_name = "DIR", hide = true)]
    pub sysroot: Option<PathBuf>,
}
