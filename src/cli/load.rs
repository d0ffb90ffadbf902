//! `rtbench load` (the load alone) and the hidden `rtbench load-worker`.

use super::LoadFlags;
use clap::Args;

/// Examples for `rtbench load --help`.
pub const EXAMPLES: &str = "\
Examples:
  rtbench load --load cpu:2,vm:1:128M,io:1 -D 10m
  rtbench load --load-cmd \"stress-ng --cpu 2 --io 1\" --load-cpus 0 -D 1h
  rtbench cyclic -S -p 98 -D 10m --load cpu:1,io:1 --load-cpus 0

Load processes are children of rtbench in their own process group, stopped and reaped
at the end, on SIGINT/SIGTERM/SIGHUP, on errors, and killed by the kernel if rtbench dies.";

/// `rtbench load` flags: run the load alone.
#[derive(Debug, Args)]
pub struct LoadArgs {
    /// How long: N seconds, or with suffix s, m, h, d (default: until SIGINT/SIGTERM/SIGHUP)
    #[arg(
        short = 'D',
        long = "duration",
        value_name = "TIME",
        allow_hyphen_values = true
    )]
    pub duration: Option<String>,

    /// The load.
    #[command(flatten)]
    pub load: LoadFlags,
}

/// `rtbench load-worker` (internal): one built-in load process.
#[derive(Debug, Args)]
pub struct LoadWorkerArgs {
    /// cpu, vm, io or guard
    pub kind: String,
    /// vm: bytes per round; io: the directory for the temporary file; guard: the
    /// program, argv0 and the arguments of the external command
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<String>,
}
