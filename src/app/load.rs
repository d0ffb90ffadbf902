//! `rtbench load` (the load alone), the hidden `rtbench load-worker`, and starting and
//! stopping the load around a measurement.

use crate::cli::load::{LoadArgs, LoadWorkerArgs};
use crate::error::{exit, Result};
use crate::load::{self, LoadSpec, RunningLoad};
use crate::report::output::Output;
use crate::sys::cpus::CpuTopology;
use crate::sys::signals::Signals;
use crate::sys::SysRoot;
use std::time::{Duration, Instant};

/// Starts `spec` (if any, see [`load::start`]) and says on standard error what runs.
pub fn start(spec: Option<&LoadSpec>) -> Result<Option<RunningLoad>> {
    let Some(spec) = spec else {
        return Ok(None);
    };
    let load = load::start(spec)?;
    Output::new(None).warn(&format!(
        "# load on CPUs {}: {}",
        spec.cpus.to_list(),
        load.describe()
    ));
    Ok(Some(load))
}

/// Stops the load (if any) and reports loads that died during the run.
pub fn stop(load: Option<RunningLoad>) {
    if let Some(mut l) = load {
        for line in l.stop() {
            Output::new(None).warn(&line);
        }
    }
}

/// `rtbench load`: the load alone, until `-D` ends or SIGINT/SIGTERM/SIGHUP (exit
/// 130/143/129); SIGUSR1, SIGUSR2 and SIGCONT change nothing (docs/COMPAT.md).
pub fn run(args: &LoadArgs) -> Result<i32> {
    let topo = CpuTopology::read(&SysRoot::host());
    let plan = crate::plan::load::load_only(args, &topo)?;
    let duration = plan.duration;
    let signals = Signals::block();
    let load = start(Some(&plan.spec))?;
    // -D is at most duration::MAX_SECS, so the end fits; one that did not would mean
    // no end rather than a panic.
    let end = duration.and_then(|d| Instant::now().checked_add(d));
    let mut code = exit::OK;
    loop {
        let left = end.map_or(Duration::from_secs(1), |e| {
            e.saturating_duration_since(Instant::now())
        });
        if end.is_some() && left.is_zero() {
            break;
        }
        match signals.wait(left.min(Duration::from_secs(1))) {
            Some(libc::SIGINT) => {
                code = exit::INTERRUPTED;
                break;
            }
            Some(libc::SIGTERM) => {
                code = exit::TERMINATED;
                break;
            }
            Some(libc::SIGHUP) => {
                code = exit::HANGUP;
                break;
            }
            _ => {}
        }
    }
    stop(load);
    Output::new(None).warn("# load stopped");
    Ok(code)
}

/// `rtbench load-worker` (internal).
pub fn run_worker(args: &LoadWorkerArgs) -> Result<i32> {
    load::worker::run(&crate::plan::load::worker(args)?)
}
