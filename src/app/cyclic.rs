//! `rtbench cyclic`: plan → load → measure → `T:` lines, `-h` dump, JSON (files
//! first, each output whatever happened to the others: [`Written`]).

use crate::cli::cyclic::CyclicArgs;
use crate::error::Result;
use crate::measure::cyclic;
use crate::report::histogram::HistogramDump;
use crate::report::json::Json;
use crate::report::output::{self, Output, Written};
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
    let nsecs = plan.output.nsecs;
    let shown = super::progress::Shown {
        out,
        lines: &LiveLines,
        nsecs,
        snapshot: true,
    };
    let (result, load) = super::progress::with_load(plan.load.as_ref(), shown, |p| {
        cyclic::run(&plan.spec, &root, p)
    })?;
    let exit_code = super::progress::exit_code(&result.end, plan.output.rt_tests_stdout);
    // Read after the run: the kernel's facts do not change during it, and reading
    // them (uname, the decompressed kernel configuration) is not start-up work.
    let sysinfo = SysInfo::read(&root);
    let report = RunReport {
        result: &result,
        sysinfo: &sysinfo,
        argv,
        nsecs,
        exit_code,
        load: load.as_ref(),
    };
    // Every output is written whatever happened to the others, files first: a
    // standard output that fails (a full disk, a reader gone) costs no file.
    let hist = plan.output.histogram.as_ref();
    let dump = hist.map(|h| HistogramDump {
        summary_column: h.summary_column,
        layout: h.layout,
    });
    let o = &plan.output;
    // Beside the percentile lines: standard error when standard output must stay
    // byte-compatible with cyclictest's.
    let explain_to_stderr = o.rt_tests_stdout || (hist.is_some() && o.quiet);
    let own = |written: &mut Written| {
        if let (Some(h), Some(dump)) = (hist, &dump) {
            if let Some(p) = &h.file {
                written.keep(output::file(p, dump, &report));
            }
        }
        if hist.is_none() || !o.quiet {
            if o.rt_tests_stdout {
                written.stdout(|| out.text(&FinalTLines, &report));
                let _ = out.to_stderr(&Summary, &report);
            } else {
                written.stdout(|| out.text(&TLines, &report));
            }
        }
        if let (Some(h), Some(dump)) = (hist, &dump) {
            if h.file.is_none() {
                written.stdout(|| out.text(dump, &report));
            }
            if o.quiet {
                // Keep standard output byte-compatible with `cyclictest -q -h`.
                let _ = out.to_stderr(&Summary, &report);
            }
        }
        if plan.spec.control.break_ns.is_some() {
            written.stdout(|| out.text(&BreakTrailer, &report));
        }
    };
    let explained = result.end.explained.as_ref();
    let json = o.json.as_deref();
    super::progress::write_outputs(
        &out,
        json,
        &Json,
        &report,
        explained,
        explain_to_stderr,
        exit_code,
        own,
    )
}
