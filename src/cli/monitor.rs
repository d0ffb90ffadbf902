//! `rtbench monitor`.

use clap::Args;
use std::path::PathBuf;

/// Examples and exit codes for `rtbench monitor --help`.
pub const EXAMPLES: &str = "\
Examples:
  rtbench monitor                          [monitor] of /etc/rtbench/rtbench.toml, as
                                           rtbench-monitor.service runs it
  rtbench monitor -a 2-3 -i 500 --window 1m   CPUs 2-3, 500 us, one entry per minute
  journalctl -u rtbench-monitor -o json MESSAGE_ID=cc642425788247bfaec2950f5114111e
                                           the windows as structured entries
  rtbench report --since 2h                the windows of the last two hours

The first entry, at once, says what is monitored, the window and where the figures go.
Every window (default 5 min) writes one journal entry per CPU (max, p99.9, p99,
overruns, missed periods, samples; a warning when [monitor.limits] is exceeded),
appends the window to the window store and updates the Prometheus textfile. The
all-time maximum and the rolling histogram (default 24 h) are kept in the state file
and survive restarts. Without journald, every line begins with its time (UTC).
Flags override the configuration file. Before anything starts, a --dir that is not a
directory (or a dangling link), or a state.json, windows.jsonl or Prometheus textfile
that is not a regular file (a link, a FIFO: none is followed or waited on), is exit 2;
a directory that turns out read-only or full, or a Prometheus directory that does not
exist (node_exporter not installed), is one warning and the monitor keeps measuring.
When its log output goes away (EPIPE: the reader of 2>&1 | logger is gone), the
monitor stops as on SIGTERM (the last window stored, the state saved) and exits 141,
so a supervisor restarts it with a fresh log.

Exit codes: 0 -D reached, 2 invalid configuration or flags, 3 the environment refused
(SCHED_FIFO, mlockall) or a window or the state could not be kept, 130/143/129 stopped
by SIGINT/SIGTERM/SIGHUP (state saved), 141 its log output closed (state saved). SIGUSR1
and SIGUSR2 print the live status on stderr and the monitor carries on.";

/// `rtbench monitor` flags (each overrides the `[monitor]` key of the same name).
#[derive(Debug, Args)]
pub struct MonitorArgs {
    /// Configuration file (default /etc/rtbench/rtbench.toml; when it is missing the
    /// documented defaults are used)
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// CPUs to monitor, one thread each (cpu-list; default every online CPU)
    #[arg(
        short = 'a',
        long = "cpus",
        value_name = "CPUSET",
        allow_hyphen_values = true
    )]
    pub cpus: Option<String>,

    /// Wakeup interval in µs (50..1000000; default 1000)
    #[arg(short = 'i', long = "interval", value_name = "US", allow_negative_numbers = true,
          value_parser = super::number::whole_u64)]
    pub interval: Option<u64>,

    /// SCHED_FIFO priority 1..99 (default 98)
    #[arg(
        short = 'p',
        long = "priority",
        value_name = "PRIO",
        allow_negative_numbers = true
    )]
    pub priority: Option<i64>,

    /// Window length: one journal entry per CPU per window (1s..1d; default 5m)
    #[arg(long = "window", value_name = "TIME", allow_hyphen_values = true)]
    pub window: Option<String>,

    /// State file and window store directory (default /var/lib/rtbench/monitor)
    #[arg(long = "dir", value_name = "DIR")]
    pub dir: Option<PathBuf>,

    /// Prometheus textfile (an absolute path), updated every window
    #[arg(long = "prometheus", value_name = "FILE")]
    pub prometheus: Option<PathBuf>,

    /// Where the entries go: auto (journald, else text on stderr), journal, logfmt
    /// (key=value lines on stderr, for syslog), text
    #[arg(long, value_name = "FORMAT", default_value = "auto",
          value_parser = clap::builder::PossibleValuesParser::new(["auto", "journal", "logfmt", "text"]))]
    pub log_format: String,

    /// Stop after TIME (s, m, h, d; default: run until SIGTERM)
    #[arg(
        short = 'D',
        long = "duration",
        value_name = "TIME",
        allow_hyphen_values = true
    )]
    pub duration: Option<String>,
}
