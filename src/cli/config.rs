//! `rtbench config template|check`: the configuration file's documentation and its
//! check, from the binary (as `systemd-analyze cat-config`/`verify` and `tuned-adm
//! verify` let a unit's owner look before anything runs).

use clap::{Args, Subcommand};
use std::path::PathBuf;

/// Examples and exit codes for `rtbench config --help`.
pub const EXAMPLES: &str = "\
Examples:
  rtbench config template > board.toml    every key with its default and what it does
  rtbench config check                    validate /etc/rtbench/rtbench.toml on this machine
  rtbench config check board.toml         validate another file before installing it

Every key, its default and its allowed values: rtbench.toml(5), the same text as
`rtbench config template`.

Exit codes: 0 valid (or no file: the documented defaults apply), 2 the file cannot be
read or is not valid (one line: file, line, key, value and what is allowed).";

/// `rtbench config` actions.
#[derive(Debug, Subcommand)]
pub enum ConfigAction {
    /// Print the configuration template: every key, its default and what it does
    Template,
    /// Validate a configuration file against this machine's CPUs; run nothing, write nothing
    Check(ConfigCheckArgs),
}

/// `rtbench config check` flags.
#[derive(Debug, Args)]
pub struct ConfigCheckArgs {
    /// Configuration file (default: /etc/rtbench/rtbench.toml; when it does not exist the
    /// documented defaults apply)
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,

    /// Root of /proc and /sys (tests run against a temporary tree)
    #[arg(long, value_name = "DIR", hide = true)]
    pub sysroot: Option<PathBuf>,
}
