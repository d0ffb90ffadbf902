//! `rtbench cyclic`: plan → load → measure → `T:` lines, `-h` dump, JSON (files
//! first, each output whatever happened to the others: [`Written`]).

use crate::cli::cyclic::CyclicArgs;
use crate::error::Result;
use crate::measure::cyclic::{self, CyclicSpec};
use crate::plan::cyclic::VerbosePlan;
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
    // -v: a ring per thread, made here, before any thread starts.
    let mut spec = plan.spec.clone();
    let mut verbose = plan
        .verbose
        .map(|v| verbose_start(out, &mut spec, v, nsecs));
    let shown = super::progress::Shown {
        out,
        lines: &LiveLines,
        nsecs,
        snapshot: true,
        verbose: verbose.as_mut(),
    };
    let (result, load) =
        super::progress::with_load(plan.load.as_ref(), shown, |p| cyclic::run(&spec, &root, p))?;
    for line in verbose
        .iter()
        .flat_map(super::progress::Verbose::lost_lines)
    {
        out.warn(&line);
    }
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
        // cyclictest -v prints no T: lines at the end, but with -q (and no -h).
        let final_lines = if plan.verbose.is_some() {
            hist.is_none() && o.quiet
        } else {
            hist.is_none() || !o.quiet
        };
        if final_lines {
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

/// `-v`'s start, before any thread starts: prints what cyclictest -v prints first
/// (`Max CPUs`, `Online CPUs`), makes a sample ring per thread (sized for its interval,
/// µs) and hands them to `spec`, and returns the printer holding the `Thread N
/// Interval:` lines (each thread's interval plus `-d`'s distance, µs) it prints once
/// the threads run.
fn verbose_start(
    out: Output,
    spec: &mut CyclicSpec,
    v: VerbosePlan,
    nsecs: bool,
) -> super::progress::Verbose {
    // SAFETY: sysconf has no preconditions.
    let (conf, onln) = unsafe {
        (
            libc::sysconf(libc::_SC_NPROCESSORS_CONF),
            libc::sysconf(libc::_SC_NPROCESSORS_ONLN),
        )
    };
    out.line(&format!("Max CPUs = {conf}\nOnline CPUs = {onln}"));
    let header: String = spec
        .threads
        .iter()
        .map(|t| {
            format!(
                "Thread {} Interval: {}\n",
                t.index,
                t.interval_us + v.distance_us
            )
        })
        .collect();
    let rings: crate::measure::verbose::Rings = spec
        .threads
        .iter()
        .map(|t| crate::measure::verbose::SampleRing::for_interval(t.interval_us))
        .collect();
    spec.samples = Some(rings.clone());
    super::progress::Verbose::new(rings, v.reduction, nsecs, header)
}
