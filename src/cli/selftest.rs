//! `rtbench selftest`.

use clap::Args;
use std::path::PathBuf;

/// Examples and exit codes for `rtbench selftest --help`.
pub const EXAMPLES: &str = "\
Examples:
  rtbench selftest                          /etc/rtbench/rtbench.toml, as rtbench.service runs it
  rtbench selftest --config factory.toml    another configuration

Exit codes: 0 pass, 1 a limit failed (or tuning deviated), 2 invalid configuration
(nothing tuned, nothing written), 3 the environment refused, 130/143 interrupted.";

/// `rtbench selftest` flags.
#[derive(Debug, Args)]
pub struct SelftestArgs {
    /// Configuration file (default /etc/rtbench/rtbench.toml; when it is missing the
    /// documented defaults are used)
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}
