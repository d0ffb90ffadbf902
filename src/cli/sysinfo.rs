//! `rtbench sysinfo`.

use clap::Args;

/// `rtbench sysinfo` flags.
#[derive(Debug, Args)]
pub struct SysinfoArgs {
    /// Print JSON instead of text
    #[arg(long)]
    pub json: bool,
}
