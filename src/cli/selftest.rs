//! `rtbench selftest`.

use clap::Args;
use std::path::PathBuf;

/// Examples and exit codes for `rtbench selftest --help`.
pub const EXAMPLES: &str = "\
Examples:
  rtbench selftest                          /etc/rtbench/rtbench.toml, as rtbench.service runs it
  rtbench selftest --config factory.toml    another configuration
  rtbench selftest --log-format logfmt      key=value entries on stderr (syslog without journald)

Exit codes: 0 pass with every requested output written, 1 a limit failed (or tuning
deviated), nothing was judged (no [limits]: verdict \"unjudged\"; 0 with [selftest]
allow_unjudged = true), or the results store or the Prometheus textfile could not be
written, 2 invalid configuration (nothing tuned; the attempt's record says why), 3 the
environment refused, 130/143/129 interrupted by SIGINT/SIGTERM/SIGHUP (results written).
Every attempt is recorded in the results store when it starts and again when it ends,
so `rtbench report` shows an attempt that never reached a verdict.";

/// `rtbench selftest` flags.
#[derive(Debug, Args)]
pub struct SelftestArgs {
    /// Configuration file (default /etc/rtbench/rtbench.toml; when it is missing the
    /// documented defaults are used)
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Where the entries go: auto (journald, else text on stderr), logfmt (key=value
    /// lines on stderr, for syslog)
    #[arg(long, value_name = "FORMAT", default_value = "auto",
          value_parser = clap::builder::PossibleValuesParser::new(["auto", "journal", "logfmt", "text"]))]
    pub log_format: String,
}
