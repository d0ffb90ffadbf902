//! `rtbench oslat` (and rtbench called as `oslat`): plan → header → poll → summary,
//! JSON (files first, each output whatever happened to the others: [`Written`]).

use crate::cli::oslat::OslatArgs;
use crate::error::Result;
use crate::measure::harness::Progress;
use crate::measure::poll;
use crate::measure::stats::LiveSnapshot;
use crate::measure::ThreadSpec;
use crate::report::explain::ExplainLines;
use crate::report::oslat::{oslat_us, Json, Nines, Start, Summary, OSLAT_VERSION};
use crate::report::output::{Output, Target, Written};
use crate::sys::counter::Counter;
use crate::sys::cpus::CpuTopology;
use crate::sys::info::SysInfo;
use crate::sys::SysRoot;

/// Progress of a busy-poll run: oslat prints nothing while it runs; notices,
/// warnings and the SIGUSR1 status go to standard error.
struct Quiet(Output);

impl Progress for Quiet {
    fn report(&mut self, _: &[ThreadSpec], _: &[LiveSnapshot]) {}

    fn status(&mut self, threads: &[ThreadSpec], live: &[LiveSnapshot]) {
        self.0.warn("# rtbench current status:");
        for (t, l) in threads.iter().zip(live) {
            self.0.warn(&format!(
                "# CPU {} gaps {} max {} (us)",
                t.cpu.unwrap_or(0),
                l.count,
                oslat_us(l.max_ns)
            ));
        }
    }

    fn notice(&mut self, line: &str) {
        self.0.warn(line);
    }

    fn warning(&mut self, line: &str) {
        self.0.warn(line);
    }
}

/// `rtbench oslat`.
pub fn run(args: &OslatArgs, argv: &[String]) -> Result<i32> {
    let root = SysRoot::host();
    let topo = CpuTopology::read(&root);
    let plan = crate::plan::oslat::oslat(args, &topo)?;
    let out = Output::for_path(plan.json.as_deref());
    if plan.version_only {
        out.line(&format!("oslat V {OSLAT_VERSION}"));
        return Ok(0);
    }
    for w in &plan.warnings {
        out.warn(w);
    }
    let counter = Counter::detect(&root);
    // What oslat prints before it measures, before the run starts.
    let mut written = Written::new();
    written.stdout(|| out.text(&Start { quiet: plan.quiet }, &plan.header));
    let result = poll::run(&plan.spec, counter, &root, &mut Quiet(out))?;
    let exit_code = match (plan.as_oslat, result.end.stop) {
        // oslat exits 0 after SIGINT/SIGTERM and 1 after -T (err_quit).
        (true, s) if s.interrupted() => 0,
        _ => result.end.exit_code(),
    };
    if let (Some(b), Some(t)) = (result.end.break_info, plan.trace_threshold_us) {
        let name = if plan.as_oslat {
            argv.first().map_or("oslat", String::as_str)
        } else {
            "rtbench oslat"
        };
        let cpu = plan
            .spec
            .threads
            .get(b.thread)
            .and_then(|x| x.cpu)
            .unwrap_or(0);
        out.warn(&format!(
            "{name}: Trace threshold ({t} us) triggered on cpu {cpu} with {} us!",
            oslat_us(b.latency_ns)
        ));
        out.warn("Stopping the test.");
    }
    let sysinfo = SysInfo::read(&root);
    let json = Json {
        sysinfo: &sysinfo,
        argv,
        exit_code,
    };
    let target = plan.json.as_deref().map(Target::from_path);
    if let Some(t @ Target::File(_)) = &target {
        written.keep(out.document(t, &json, &result));
    }
    let summary = Summary {
        quiet: plan.quiet,
        bias: plan.spec.bias,
        zero_omit: plan.zero_omit,
    };
    written.stdout(|| out.text(&summary, &result));
    let _ = out.to_stderr(&Nines, &result);
    if let Some(x) = &result.end.explained {
        let _ = out.to_stderr(&ExplainLines, x);
        // What would move each explained gap's noise off its CPU.
        for e in &x.explained {
            for line in &e.advice {
                out.warn(&format!("# To move (CPU {}): {line}", e.spike.cpu));
            }
        }
    }
    if let Some(t @ Target::Stdout) = &target {
        written.stdout(|| out.document(t, &json, &result));
    }
    written.finish(exit_code)
}
