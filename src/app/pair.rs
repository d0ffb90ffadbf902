//! `rtbench pmq` and `rtbench pipe`: plan → channels → load → measure → pmqtest lines,
//! `-h` dump, JSON (the file first, each output whatever happened to the others).

use crate::cli::pipe::PipeArgs;
use crate::cli::pmq::PmqArgs;
use crate::error::Result;
use crate::measure::pair;
use crate::plan::pair::PairPlan;
use crate::report::histogram::HistogramDump;
use crate::report::output::{Output, Written};
use crate::report::pair_json::PairJson;
use crate::report::pair_text::{as_cyclic, PairLines, PairLive, PairSummary};
use crate::report::PairReport;
use crate::sys::cpus::CpuTopology;
use crate::sys::info::SysInfo;
use crate::sys::SysRoot;

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

fn run_pair(plan: PairPlan, argv: &[String]) -> Result<i32> {
    let root = SysRoot::host();
    // With `--json -` standard output carries only the JSON document.
    let out = Output::for_path(plan.output.json.as_deref());
    for w in &plan.warnings {
        out.warn(w);
    }
    // Queues and pipes first: a queue the kernel refuses stops us before any load runs.
    let channels = pair::open_channels(&plan.spec)?;
    let nsecs = plan.output.nsecs;
    let shown = super::progress::Shown {
        out,
        lines: &PairLive,
        nsecs,
        snapshot: false,
        verbose: None,
    };
    let (run, load) = super::progress::with_load(plan.load.as_ref(), shown, |p| {
        pair::run(&plan.spec, channels, &root, p)
    })?;
    let exit_code = super::progress::exit_code(&run.end, plan.output.rt_tests_stdout);
    // Read after the run: the kernel's facts do not change during it, and reading
    // them (uname, the decompressed kernel configuration) is not start-up work.
    let sysinfo = SysInfo::read(&root);
    let report = PairReport {
        result: &run,
        sysinfo: &sysinfo,
        argv,
        nsecs,
        exit_code,
        load: load.as_ref(),
    };
    // Every output whatever happened to the others, the file first ([`Written`]);
    // standard output stays pmqtest's when called as pmqtest.
    let rt_tests = plan.output.rt_tests_stdout;
    let own = |written: &mut Written| {
        written.stdout(|| out.text(&PairLines, &report));
        if let Some(h) = &plan.output.histogram {
            let columns = as_cyclic(&run);
            let dump = HistogramDump {
                summary_column: h.summary_column,
                layout: h.layout,
            };
            written.stdout(|| out.text(&dump, &report.with(&columns)));
        }
        if rt_tests {
            let _ = out.to_stderr(&PairSummary, &report);
        } else {
            written.stdout(|| out.text(&PairSummary, &report));
        }
    };
    let json = plan.output.json.as_deref();
    let explained = run.end.explained.as_ref();
    super::progress::write_outputs(
        &out, json, &PairJson, &report, explained, rt_tests, exit_code, own,
    )
}
