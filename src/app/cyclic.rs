//! `rtbench cyclic`: plan → load → measure → `T:` lines, `-h` dump, JSON.

use crate::cli::cyclic::CyclicArgs;
use crate::error::{exit, Error, Result};
use crate::measure::cyclic::{self, Progress, ThreadSpec};
use crate::measure::runner::StopCause;
use crate::measure::stats::LiveSnapshot;
use crate::report::histogram::HistogramDump;
use crate::report::json::Json;
use crate::report::text::{BreakTrailer, TLine, TLines};
use crate::report::{RunReport, Sink};
use crate::sys::atomic;
use crate::sys::cpus::CpuTopology;
use crate::sys::info::SysInfo;
use crate::sys::SysRoot;
use std::io::Write;

/// Live output on standard output; SIGUSR1 status and warnings on standard error.
struct TextProgress {
    unit_ns: u64,
    nsecs: bool,
    /// `--json -`: standard output is reserved for the JSON document.
    text_to_stderr: bool,
}

impl TextProgress {
    fn lines(&self, threads: &[ThreadSpec], live: &[LiveSnapshot]) -> String {
        let mut s = String::new();
        for (t, l) in threads.iter().zip(live) {
            s.push_str(&TLine::from_live(t, l, self.unit_ns).format(self.nsecs));
            s.push('\n');
        }
        s
    }
}

impl Progress for TextProgress {
    fn report(&mut self, threads: &[ThreadSpec], live: &[LiveSnapshot]) {
        let text = self.lines(threads, live);
        if self.text_to_stderr {
            eprint!("{text}");
        } else {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(text.as_bytes());
            let _ = out.flush();
        }
    }

    fn status(&mut self, threads: &[ThreadSpec], live: &[LiveSnapshot]) {
        eprint!("# rtbench current status:\n{}", self.lines(threads, live));
    }

    fn notice(&mut self, line: &str) {
        if self.text_to_stderr {
            eprintln!("{line}");
        } else {
            println!("{line}");
        }
    }

    fn warning(&mut self, line: &str) {
        eprintln!("{line}");
    }
}

fn write_to(path: &std::path::Path, sink: &dyn Sink, report: &RunReport<'_>) -> Result<()> {
    let mut buf = Vec::new();
    sink.write(report, &mut buf)
        .map_err(|e| Error::io(path, e))?;
    if path == std::path::Path::new("-") {
        std::io::stdout()
            .write_all(&buf)
            .map_err(|e| Error::io("<stdout>", e))
    } else {
        atomic::write(path, &buf).map_err(|e| Error::io(path, e))
    }
}

/// `rtbench cyclic`.
pub fn run(args: &CyclicArgs, argv: &[String]) -> Result<i32> {
    let root = SysRoot::host();
    let topo = CpuTopology::read(&root);
    let plan = crate::plan::cyclic::cyclic(args, &topo)?;
    for w in &plan.warnings {
        eprintln!("{w}");
    }
    let sysinfo = SysInfo::read(&root);
    let unit_ns = if plan.output.nsecs { 1 } else { 1000 };
    let json_to_stdout = plan.output.json.as_deref() == Some(std::path::Path::new("-"));
    let mut progress = TextProgress {
        unit_ns,
        nsecs: plan.output.nsecs,
        text_to_stderr: json_to_stdout,
    };
    let load_spec = crate::plan::load::load(&args.load, &topo)?;
    let load = super::load::start(load_spec.as_ref())?;
    let load_info = load_spec.as_ref().map(|s| s.info(load.as_ref()));
    let result = cyclic::run(&plan.spec, &root, &mut progress);
    super::load::stop(load);
    let result = result?;
    let exit_code = match result.stop {
        StopCause::Completed => exit::OK,
        StopCause::Break => exit::FAIL,
        StopCause::Sigint => exit::INTERRUPTED,
        StopCause::Sigterm => 128 + libc::SIGTERM,
    };
    let report = RunReport {
        result: &result,
        sysinfo: &sysinfo,
        argv,
        nsecs: plan.output.nsecs,
        exit_code,
        load: load_info.as_ref(),
    };
    // With `--json -` standard output carries only the JSON document; the text goes
    // to standard error.
    let mut out: Box<dyn Write> = if json_to_stdout {
        Box::new(std::io::stderr())
    } else {
        Box::new(std::io::stdout().lock())
    };
    let io = |e| Error::io("<stdout>", e);
    let hist = plan.output.histogram.as_ref();
    if hist.is_none() || !plan.output.quiet {
        TLines.write(&report, &mut out).map_err(io)?;
    }
    if let Some(h) = hist {
        let dump = HistogramDump {
            summary_column: h.summary_column,
            layout: h.layout,
        };
        match &h.file {
            Some(p) => write_to(p, &dump, &report)?,
            None => dump.write(&report, &mut out).map_err(io)?,
        }
        if plan.output.quiet {
            // Keep standard output byte-compatible with `cyclictest -q -h`.
            let _ = crate::report::text::Summary.write(&report, &mut std::io::stderr());
        }
    }
    if plan.spec.break_ns.is_some() {
        BreakTrailer.write(&report, &mut out).map_err(io)?;
    }
    out.flush().map_err(io)?;
    drop(out);
    if let Some(p) = &plan.output.json {
        write_to(p, &Json, &report)?;
    }
    Ok(exit_code)
}
