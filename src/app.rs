//! The binary's glue: parse → plan → run → sinks, and the one place that maps errors
//! to exit codes (see [`crate::error::exit`]).

use crate::cli::{Cli, Command, CyclicArgs, ReportArgs, SysinfoArgs};
use crate::error::{exit, Error, Result};
use crate::measure::cyclic::{self, Progress, ThreadSpec};
use crate::measure::runner::StopCause;
use crate::measure::stats::LiveSnapshot;
use crate::plan;
use crate::report::histogram::HistogramDump;
use crate::report::json::Json;
use crate::report::text::{BreakTrailer, TLine, TLines};
use crate::report::{atomic, RunReport, Sink};
use crate::sys::cpus::CpuTopology;
use crate::sys::info::SysInfo;
use crate::sys::SysRoot;
use clap::Parser;
use std::ffi::OsString;
use std::io::Write;

/// Runs rtbench with `args` (including argv\[0\]) and returns the process exit code.
pub fn main(args: Vec<OsString>) -> i32 {
    let argv: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let cli = match Cli::try_parse_from(&args) {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            if !e.use_stderr() || e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                let _ = e.print();
                return if e.use_stderr() {
                    exit::USAGE
                } else {
                    exit::OK
                };
            }
            // One line naming the input, like every other rtbench error.
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or("invalid command line");
            eprintln!("rtbench: {}", first.trim_start_matches("error: "));
            return exit::USAGE;
        }
    };
    let result = match cli.command {
        Command::Cyclic(a) => run_cyclic(&a, &argv),
        Command::Sysinfo(a) => sysinfo(&a),
        Command::Report(a) => report(&a),
        #[cfg(feature = "plot")]
        Command::Plot(a) => crate::plot::command(&a),
        Command::Selftest(a) => Ok(crate::selftest::main(a.config.as_deref())),
        Command::Tune(a) => crate::tune::cmd::run(&a),
        Command::Pmq(a) => crate::app_pair::run_pmq(&a, &argv),
        Command::Pipe(a) => crate::app_pair::run_pipe(&a, &argv),
        Command::Load(a) => crate::app_pair::run_load(&a),
        Command::LoadWorker(a) => crate::app_pair::run_load_worker(&a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("rtbench: {e}");
            e.exit_code()
        }
    }
}

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

fn run_cyclic(args: &CyclicArgs, argv: &[String]) -> Result<i32> {
    let root = SysRoot::host();
    let topo = CpuTopology::read(&root);
    let plan = plan::cyclic(args, &topo)?;
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
    let load_spec = crate::plan_pair::load(&args.load, &topo)?;
    let load = crate::app_pair::start_load(load_spec.as_ref())?;
    let load_info = crate::app_pair::load_info(load_spec.as_ref(), load.as_ref());
    let result = cyclic::run(&plan.spec, &root, &mut progress);
    crate::app_pair::stop_load(load);
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

fn sysinfo(args: &SysinfoArgs) -> Result<i32> {
    let info = SysInfo::read(&SysRoot::host());
    if args.json {
        let s = serde_json::to_string_pretty(&info).map_err(|e| Error::io("<stdout>", e.into()))?;
        println!("{s}");
    } else {
        println!(
            "kernel:        {} {} ({})",
            info.sysname, info.release, info.machine
        );
        println!("version:       {}", info.version);
        println!(
            "preemption:    {}{}",
            info.preempt_model,
            if info.realtime {
                format!(" (PREEMPT_RT: {})", info.realtime_evidence.join(", "))
            } else {
                String::new()
            }
        );
        println!("cpus online:   {}", info.cpus_online);
        println!("isolated:      {}", or_none(&info.cpus_isolated));
        println!("nohz_full:     {}", or_none(&info.cpus_nohz_full));
        println!("housekeeping:  {}", info.cpus_housekeeping);
        println!("cmdline:       {}", info.cmdline);
    }
    Ok(exit::OK)
}

fn or_none(s: &str) -> &str {
    if s.is_empty() {
        "none"
    } else {
        s
    }
}

fn report(args: &ReportArgs) -> Result<i32> {
    use crate::report::store::Store;
    let store = Store::new(&args.dir, 1);
    let files = store.list().map_err(|e| Error::io(&args.dir, e))?;
    if files.is_empty() {
        return Err(Error::usage(
            format!("--dir {}", args.dir.display()),
            "no stored self-test results (run `rtbench selftest` first)",
        ));
    }
    // A damaged file (a foreign file, a disk error) is reported and skipped: the other
    // runs stay readable.
    let mut runs = Vec::new();
    let mut chosen = Vec::new();
    for f in files.iter().rev() {
        match Store::load(f) {
            Ok(r) => {
                chosen.push(f.clone());
                runs.push(r);
                if !args.all {
                    break;
                }
            }
            Err(e) => eprintln!(
                "rtbench: {}: skipped, not a stored result: {e}",
                f.display()
            ),
        }
    }
    if runs.is_empty() {
        return Err(Error::usage(
            format!("--dir {}", args.dir.display()),
            "no readable self-test result",
        ));
    }
    chosen.reverse();
    runs.reverse();
    if args.json {
        let v = if args.all {
            serde_json::to_string_pretty(&runs)
        } else {
            serde_json::to_string_pretty(&runs[0])
        }
        .map_err(|e| Error::io("<stdout>", e.into()))?;
        println!("{v}");
    } else {
        for (f, r) in chosen.iter().zip(&runs) {
            println!("# {}", f.display());
            print!("{}", crate::report::table::render(r));
        }
    }
    let last_pass = runs.last().is_some_and(|r| r.verdict.pass);
    Ok(if last_pass { exit::OK } else { exit::FAIL })
}
