//! `rtbench cyclic`: plan → load → measure → `T:` lines, `-h` dump, JSON.

use crate::cli::cyclic::CyclicArgs;
use crate::error::Result;
use crate::measure::cyclic;
use crate::report::explain::ExplainLines;
use crate::report::histogram::HistogramDump;
use crate::report::json::Json;
use crate::report::output::{self, Output, Target};
use crate::report::text::{BreakTrailer, FinalTLines, LiveLines, Summary, TLines};
use crate::report::RunReport;
use crate::sys::cpus::CpuTopology;
use crate::sys::info::SysInfo;
use crate::sys::SysRoot;

/// `rtbench cyclic`.
pub fn run(args: &CyclicArgs, argv: &[String]) -> Result<i32> {
    let root = SysRoot::host();
    let topo = CpuTopology::read(&root);
    let plan = crate::plan::cyclic::cyclic(args, &topo)?;
    // With `--json -` standard output carries only the JSON document; the text goes
    // to standard error.
    let out = Output::for_path(plan.output.json.as_deref());
    for w in &plan.warnings {
        out.warn(w);
    }
    let sysinfo = SysInfo::read(&root);
    let nsecs = plan.output.nsecs;
    let (result, load) =
        super::progress::with_load(plan.load.as_ref(), out, &LiveLines, nsecs, |p| {
            cyclic::run(&plan.spec, &root, p)
        })?;
    let exit_code = if plan.output.rt_tests_stdout {
        result.end.stop.exit_code_as_rt_tests()
    } else {
        result.end.exit_code()
    };
    let report = RunReport {
        result: &result,
        sysinfo: &sysinfo,
        argv,
        nsecs,
        exit_code,
        load: load.as_ref(),
    };
    let hist = plan.output.histogram.as_ref();
    if hist.is_none() || !plan.output.quiet {
        if plan.output.rt_tests_stdout {
            out.text(&FinalTLines, &report)?;
            let _ = out.to_stderr(&Summary, &report);
        } else {
            out.text(&TLines, &report)?;
        }
    }
    if let Some(h) = hist {
        let dump = HistogramDump {
            summary_column: h.summary_column,
            layout: h.layout,
        };
        match &h.file {
            Some(p) => output::file(p, &dump, &report)?,
            None => out.text(&dump, &report)?,
        }
        if plan.output.quiet {
            // Keep standard output byte-compatible with `cyclictest -q -h`.
            let _ = out.to_stderr(&Summary, &report);
        }
    }
    if plan.spec.control.break_ns.is_some() {
        out.text(&BreakTrailer, &report)?;
    }
    if let Some(x) = &result.end.explained {
        // Beside the percentile lines: standard error when standard output must stay
        // byte-compatible with cyclictest's.
        if plan.output.rt_tests_stdout || (hist.is_some() && plan.output.quiet) {
            let _ = out.to_stderr(&ExplainLines, x);
        } else {
            out.text(&ExplainLines, x)?;
        }
    }
    if let Some(p) = &plan.output.json {
        out.document(&Target::from_path(p), &Json, &report)?;
    }
    Ok(exit_code)
}
