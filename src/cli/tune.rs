//! `rtbench tune check|apply|revert|status`.

use clap::{Args, Subcommand};
use std::path::PathBuf;

/// Examples and exit codes for `rtbench tune --help`.
pub const EXAMPLES: &str = "\
Examples:
  rtbench tune check                      compare the system with /etc/rtbench/rtbench.toml
                                          (none: the generic real-time audit, below)
  rtbench tune apply --config board.toml  change what differs; undo all on the first failure
  rtbench tune revert                     restore every value the last apply changed
  rtbench tune status --json              show the journal in /run/rtbench

Without a configuration file, check audits what is right for every real-time system:
PREEMPT_RT, console log level 4, RT throttling on (950000 µs), timer migration off,
vmstat every 10 s, no transparent huge pages (as tuned's realtime profile). apply
needs a file: it changes the system only as [tuning] says (rtbench config template).

Exit codes: 0 ok, 1 deviations (check, or a check-only item after apply), 2 configuration
error, 3 the system refused (apply/revert: a write, a value that did not hold or a guard;
apply rolls back what it changed), not root, or the journal/lock is unusable.";

/// `rtbench tune` actions.
#[derive(Debug, Subcommand)]
pub enum TuneAction {
    /// Compare the kernel's effective state with [tuning] (no file: the generic real-time audit); write nothing
    Check(TuneArgs),
    /// Change what differs as a transaction (journal in /run/rtbench, rollback on failure)
    Apply(TuneArgs),
    /// Restore every value recorded by the last committed apply
    Revert(TuneArgs),
    /// Show the journal: state and recorded changes
    Status(TuneArgs),
}

/// Flags shared by the `rtbench tune` actions.
#[derive(Debug, Args)]
pub struct TuneArgs {
    /// Print the report as JSON
    #[arg(long)]
    pub json: bool,

    /// Configuration file
    #[arg(long, value_name = "FILE", default_value = crate::config::DEFAULT_PATH)]
    pub config: PathBuf,

    /// Root of /proc and /sys (tests run against a temporary tree)
    #[arg(long, value_name = "DIR", hide = true)]
    pub sysroot: Option<PathBuf>,

    /// Test hook: sleep after this many kernel writes until killed
    #[arg(long, value_name = "N", hide = true)]
    pub pause_after_writes: Option<usize>,
}
