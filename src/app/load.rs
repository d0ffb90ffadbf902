//! `rtbench load` (the load alone), the hidden `rtbench load-worker`, and starting and
//! stopping the load around a measurement.

use crate::cli::load::{LoadArgs, LoadWorkerArgs};
use crate::error::{exit, Error, Result};
use crate::load::{self, LoadSpec, RunningLoad};
use crate::report::output::Output;
use crate::sys::cpus::CpuTopology;
use crate::sys::signals::Signals;
use crate::sys::{refusal, SysRoot};
use std::path::Path;
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

/// `rtbench load`: the load alone, until `-D` ends or SIGINT/SIGTERM.
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
            _ => {}
        }
    }
    stop(load);
    Output::new(None).warn("# load stopped");
    Ok(code)
}

/// `rtbench load-worker` (internal).
pub fn run_worker(args: &LoadWorkerArgs) -> Result<i32> {
    let arg = |what: &str| {
        args.args
            .first()
            .cloned()
            .ok_or_else(|| Error::usage("load-worker", &args.kind, format!("needs {what}")))
    };
    let r = match args.kind.as_str() {
        "cpu" => load::worker::cpu(),
        "vm" => {
            let a = arg("BYTES")?;
            let bytes = a
                .parse::<u64>()
                .map_err(|_| Error::usage("load-worker", format!("vm {a}"), "expected bytes"))?;
            load::worker::vm(bytes).map_err(|e| {
                let cause = e
                    .raw_os_error()
                    .and_then(|n| refusal::memory::mapping(&SysRoot::host(), n, bytes));
                let size = refusal::bytes(bytes);
                Error::refused(format!("vm load worker: mmap of {size}"), e, cause)
            })
        }
        "io" => {
            let d = arg("DIR")?;
            load::worker::io(Path::new(&d)).map_err(|e| Error::io(d.clone(), e))
        }
        "guard" if args.args.len() >= 2 => {
            let code = load::guard::run(Path::new(&args.args[0]), &args.args[1], &args.args[2..])
                .map_err(|e| {
                let cause = e
                    .raw_os_error()
                    .and_then(|n| refusal::memory::new_task(&SysRoot::host(), n, 0));
                Error::refused(
                    format!("starting --load-cmd '{}'", args.args[1..].join(" ")),
                    e,
                    cause,
                )
            })?;
            return Ok(code);
        }
        k => Err(Error::usage("load-worker", k, "expected cpu, vm or io")),
    };
    r.map(|_| exit::OK)
}
