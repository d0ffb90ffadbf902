//! `rtbench monitor`: read the configuration (missing default file: the documented
//! defaults), lay the flags over `[monitor]`, run until SIGTERM (or `-D`).

use crate::cli::monitor::MonitorArgs;
use crate::error::Result;
use crate::sys::cpus::CpuTopology;
use crate::sys::SysRoot;

/// `rtbench monitor`: returns the exit code (see [`crate::monitor::run::execute`]).
pub fn run(args: &MonitorArgs) -> Result<i32> {
    let root = SysRoot::host();
    let cfg = super::load_config(args.config.as_deref(), &root)?;
    let topo = CpuTopology::read(&root);
    let plan = crate::plan::monitor::plan(args, &cfg.monitor, &cfg.output, &topo)?;
    let mut journal = super::journal(&args.log_format);
    Ok(crate::monitor::run::execute(&plan, &root, &mut journal))
}
