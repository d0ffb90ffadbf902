//! Glue for `rtbench pmq`, `rtbench pipe`, `rtbench load` and the load around any
//! measurement: plan → open channels → start load → run → stop load → sinks.

use crate::cli::HistogramLayout;
use crate::cli_pair::{LoadArgs, LoadWorkerArgs, PipeArgs, PmqArgs};
use crate::error::{exit, Error, Result};
use crate::load::{self, LoadSpec, RunningLoad};
use crate::measure::pair::{self, LivePair, PairProgress, PairThreads};
use crate::measure::runner::{Signals, StopCause};
use crate::plan_pair::{self, PairPlan};
use crate::report::histogram::HistogramDump;
use crate::report::pmq::{self as out, LoadInfo, PairReport};
use crate::report::{atomic, RunReport, Sink};
use crate::sys::cpus::CpuTopology;
use crate::sys::info::SysInfo;
use crate::sys::SysRoot;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Starts `spec` (if any) after blocking SIGINT/SIGTERM/SIGUSR1 in this thread, so a
/// signal during start-up is taken by the measurement's supervisor, not the default
/// action. Prints what runs to standard error.
pub fn start_load(spec: Option<&LoadSpec>) -> Result<Option<RunningLoad>> {
    let Some(spec) = spec else {
        return Ok(None);
    };
    let _ = Signals::block();
    let exe = std::env::current_exe().map_err(|e| Error::io("/proc/self/exe", e))?;
    let load = RunningLoad::start(spec, &exe, &std::env::temp_dir())?;
    eprintln!(
        "# load on CPUs {}: {}",
        spec.cpus.to_list(),
        load.describe()
    );
    Ok(Some(load))
}

/// Stops the load (if any) and reports loads that died during the run.
pub fn stop_load(load: Option<RunningLoad>) {
    if let Some(mut l) = load {
        for line in l.stop() {
            eprintln!("{line}");
        }
    }
}

/// What the JSON records about the load that ran.
pub fn load_info(spec: Option<&LoadSpec>, load: Option<&RunningLoad>) -> Option<LoadInfo> {
    spec.map(|s| LoadInfo {
        spec: s.text.clone(),
        cmd: s.cmd.as_ref().map(|a| a.join(" ")),
        cpus: s.cpus.to_list(),
        pids: load.map(|l| l.pids()).unwrap_or_default(),
    })
}

struct TextProgress {
    unit: u64,
}

impl PairProgress for TextProgress {
    fn report(&mut self, pairs: &[PairThreads], live: &[Arc<LivePair>]) {
        let mut o = std::io::stdout().lock();
        let _ = o.write_all(out::live_block(pairs, live, self.unit).as_bytes());
        let _ = o.flush();
    }
    fn status(&mut self, pairs: &[PairThreads], live: &[Arc<LivePair>]) {
        eprint!(
            "# rtbench current status:\n{}",
            out::live_block(pairs, live, self.unit)
        );
    }
    fn notice(&mut self, line: &str) {
        println!("{line}");
    }
    fn warning(&mut self, line: &str) {
        eprintln!("{line}");
    }
}

/// `rtbench pmq`.
pub fn run_pmq(args: &PmqArgs, argv: &[String]) -> Result<i32> {
    let topo = CpuTopology::read(&SysRoot::host());
    run_pair(plan_pair::pmq(args, &topo)?, argv)
}

/// `rtbench pipe`.
pub fn run_pipe(args: &PipeArgs, argv: &[String]) -> Result<i32> {
    let topo = CpuTopology::read(&SysRoot::host());
    run_pair(plan_pair::pipe(args, &topo)?, argv)
}

fn write_to(path: &Path, bytes: &[u8]) -> Result<()> {
    if path == Path::new("-") {
        std::io::stdout()
            .write_all(bytes)
            .map_err(|e| Error::io("<stdout>", e))
    } else {
        atomic::write(path, bytes).map_err(|e| Error::io(path, e))
    }
}

fn run_pair(plan: PairPlan, argv: &[String]) -> Result<i32> {
    let root = SysRoot::host();
    for w in &plan.warnings {
        eprintln!("{w}");
    }
    // Queues and pipes first: a queue the kernel refuses stops us before any load runs.
    let channels = pair::open_channels(&plan.spec)?;
    let sysinfo = SysInfo::read(&root);
    let load = start_load(plan.load.as_ref())?;
    let info = load_info(plan.load.as_ref(), load.as_ref());
    let unit = if plan.output.nsecs { 1 } else { 1000 };
    let result = pair::run(&plan.spec, channels, &root, &mut TextProgress { unit });
    stop_load(load);
    let run = result?;
    let exit_code = match run.stop {
        StopCause::Completed => exit::OK,
        StopCause::Break => exit::FAIL,
        StopCause::Sigint => exit::INTERRUPTED,
        StopCause::Sigterm => 128 + libc::SIGTERM,
    };
    let report = PairReport {
        run: &run,
        sysinfo: &sysinfo,
        argv,
        nsecs: plan.output.nsecs,
        exit_code,
        load: info.as_ref(),
    };
    let mut buf = Vec::new();
    let io = |e| Error::io("<stdout>", e);
    out::write_lines(&report, &mut buf).map_err(io)?;
    if plan.output.histogram {
        let cyc = out::as_cyclic(&run);
        let rr = RunReport {
            result: &cyc,
            sysinfo: &sysinfo,
            argv,
            nsecs: plan.output.nsecs,
            exit_code,
            load: info.as_ref(),
        };
        HistogramDump {
            summary_column: false,
            layout: HistogramLayout::Current,
        }
        .write(&rr, &mut buf)
        .map_err(io)?;
    }
    out::write_summary(&report, &mut buf).map_err(io)?;
    std::io::stdout().write_all(&buf).map_err(io)?;
    std::io::stdout().flush().map_err(io)?;
    if let Some(p) = &plan.output.json {
        let mut j = Vec::new();
        crate::report::pmq_json::write_json(&report, &mut j).map_err(|e| Error::io(p, e))?;
        write_to(p, &j)?;
    }
    Ok(exit_code)
}

/// `rtbench load`: the load alone, until `-D` ends or SIGINT/SIGTERM.
pub fn run_load(args: &LoadArgs) -> Result<i32> {
    let topo = CpuTopology::read(&SysRoot::host());
    let duration = match &args.duration {
        None => None,
        Some(d) => Some(crate::duration::parse(d).map_err(|e| Error::usage(format!("-D {d}"), e))?),
    };
    let Some(spec) = plan_pair::load(&args.load, &topo)? else {
        return Err(Error::usage("rtbench load", "needs --load or --load-cmd"));
    };
    let signals = Signals::block();
    let load = start_load(Some(&spec))?;
    let end = duration.map(|d| Instant::now() + d);
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
                code = 128 + libc::SIGTERM;
                break;
            }
            _ => {}
        }
    }
    stop_load(load);
    eprintln!("# load stopped");
    Ok(code)
}

/// `rtbench load-worker` (internal).
pub fn run_load_worker(args: &LoadWorkerArgs) -> Result<i32> {
    let arg = |what: &str| {
        args.args.first().cloned().ok_or_else(|| {
            Error::usage(
                format!("load-worker {}", args.kind),
                format!("needs {what}"),
            )
        })
    };
    let r = match args.kind.as_str() {
        "cpu" => load::worker::cpu(),
        "vm" => {
            let a = arg("BYTES")?;
            let bytes = a
                .parse::<u64>()
                .map_err(|_| Error::usage(format!("load-worker vm {a}"), "expected bytes"))?;
            load::worker::vm(bytes)
                .map_err(|e| Error::refused(format!("vm load worker: mmap of {bytes} bytes"), e))
        }
        "io" => {
            let d = arg("DIR")?;
            load::worker::io(Path::new(&d)).map_err(|e| Error::io(d.clone(), e))
        }
        "guard" if args.args.len() >= 2 => {
            let code = load::guard::run(Path::new(&args.args[0]), &args.args[1], &args.args[2..])
                .map_err(|e| {
                Error::usage(
                    format!("--load-cmd '{}'", args.args[1..].join(" ")),
                    format!("cannot be started: {e}"),
                )
            })?;
            return Ok(code);
        }
        k => Err(Error::usage(
            format!("load-worker {k}"),
            "expected cpu, vm or io",
        )),
    };
    r.map(|_| exit::OK)
}
