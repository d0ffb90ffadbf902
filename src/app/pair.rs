//! `rtbench pmq` and `rtbench pipe`: plan → channels → load → measure → pmqtest lines,
//! `-h` dump, JSON.

use crate::cli::pipe::PipeArgs;
use crate::cli::pmq::PmqArgs;
use crate::error::{exit, Error, Result};
use crate::measure::pair::{self, LivePair, PairProgress, PairThreads};
use crate::measure::runner::StopCause;
use crate::plan::pair::PairPlan;
use crate::report::histogram::{HistogramDump, Layout};
use crate::report::pmq::{self as out, PairReport};
use crate::report::{RunReport, Sink};
use crate::sys::atomic;
use crate::sys::cpus::CpuTopology;
use crate::sys::info::SysInfo;
use crate::sys::SysRoot;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

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
    run_pair(crate::plan::pair::pmq(args, &topo)?, argv)
}

/// `rtbench pipe`.
pub fn run_pipe(args: &PipeArgs, argv: &[String]) -> Result<i32> {
    let topo = CpuTopology::read(&SysRoot::host());
    run_pair(crate::plan::pair::pipe(args, &topo)?, argv)
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
    let load = super::load::start(plan.load.as_ref())?;
    let info = plan.load.as_ref().map(|s| s.info(load.as_ref()));
    let unit = if plan.output.nsecs { 1 } else { 1000 };
    let result = pair::run(&plan.spec, channels, &root, &mut TextProgress { unit });
    super::load::stop(load);
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
            layout: Layout::Current,
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
