//! `rtbench monitor`: read the configuration (missing default file: the documented
//! defaults), lay the flags over `[monitor]`, run until SIGTERM (or `-D`).

use crate::cli::monitor::MonitorArgs;
use crate::config::Reader;
use crate::error::Result;
use crate::sys::cpus::CpuTopology;
use crate::sys::SysRoot;

/// `rtbench monitor`: returns the exit code (see [`crate::monitor::run::execute`]).
///
/// SIGPIPE is ignored here (main.rs resets it to the default, which suits `cyclic |
/// head`): the monitor is a daemon whose log may go through a pipe (`| logger` under
/// BusyBox init), and a reader that goes away must not kill it before it has stored
/// the last window and saved the state. The write then fails with EPIPE, and the
/// monitor stops as on SIGTERM (exit [`crate::monitor::run::LOG_CLOSED`]).
pub fn run(args: &MonitorArgs) -> Result<i32> {
    crate::sys::signals::ignore_sigpipe();
    let root = SysRoot::host();
    let located = crate::config::locate(args.config.as_deref(), Reader::Monitor, &root)?;
    let cfg = &located.config;
    let topo = CpuTopology::read(&root);
    let plan = crate::plan::monitor::plan(args, &cfg.monitor, &cfg.output, &cfg.explain, &topo)?;
    let mut journal = super::journal(&args.log_format).with_times();
    // Said in every log format, as the self-test says it.
    if located.text.is_none() {
        journal.send(&crate::report::journal::defaults_used(
            &located.shown(),
            "no [monitor.limits]: no window is judged",
        ));
    }
    Ok(crate::monitor::run::execute(&plan, &root, &mut journal))
}
