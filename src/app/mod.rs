//! The binary's glue, one file per command: parse → plan → run → output. This is the
//! one place that prints an error and maps it to the exit code ([`Error::exit_code`](crate::error::Error::exit_code));
//! nothing else calls `exit`.

mod cyclic;
#[cfg(feature = "diagnose")]
mod diagnose;
mod load;
#[cfg(feature = "monitor")]
mod monitor;
mod pair;
#[cfg(feature = "plot")]
mod plot;
mod report;
mod selftest;
mod sysinfo;
mod tune;

use crate::cli::getopt::{self, Tool};
use crate::cli::{Cli, Command};
use crate::error::{exit, Error, Result};
use crate::load::{LoadInfo, LoadSpec};
use crate::measure::harness::Progress;
use crate::measure::stats::LiveSnapshot;
use crate::measure::ThreadSpec;
use crate::report::output::Output;
use crate::report::{Live, Sink};
use clap::Parser;
use std::ffi::OsString;

/// Runs rtbench with `args` (including argv\[0\]) and returns the process exit code.
/// Called as `cyclictest` or `pmqtest` (argv\[0\]) it is `rtbench cyclic` /
/// `rtbench pmq`; the measuring commands' arguments are read as getopt_long reads
/// them ([`crate::cli::getopt`]).
pub fn main(args: Vec<OsString>) -> i32 {
    let argv: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let invocation = match getopt::prepare(&args) {
        Ok(i) => i,
        Err(e) => return fail(&Error::Usage(e)),
    };
    let cli = match Cli::try_parse_from(&invocation.args) {
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
            Output::new(None).warn(&format!("rtbench: {}", clap_message(&e)));
            return exit::USAGE;
        }
    };
    let result = match cli.command {
        Command::Cyclic(mut a) => {
            a.as_cyclictest = invocation.as_rt_tests == Some(Tool::Cyclic);
            cyclic::run(&a, &argv)
        }
        Command::Sysinfo(a) => sysinfo::run(&a),
        Command::Report(a) => report::run(&a),
        #[cfg(feature = "monitor")]
        Command::Monitor(a) => monitor::run(&a),
        #[cfg(feature = "diagnose")]
        Command::Diagnose(a) => diagnose::run(&a),
        #[cfg(feature = "plot")]
        Command::Plot(a) => plot::run(&a),
        Command::Selftest(a) => Ok(selftest::run(&a)),
        Command::Tune(a) => tune::run(&a),
        Command::Pmq(mut a) => {
            a.as_pmqtest = invocation.as_rt_tests == Some(Tool::Pmq);
            pair::run_pmq(&a, &argv)
        }
        Command::Pipe(a) => pair::run_pipe(&a, &argv),
        Command::Load(a) => load::run(&a),
        Command::LoadWorker(a) => load::run_worker(&a),
    };
    match result {
        Ok(code) => code,
        Err(e) => fail(&e),
    }
}

/// Prints `e` as one line on standard error and returns its exit code.
fn fail(e: &Error) -> i32 {
    Output::new(None).warn(&format!("rtbench: {e}"));
    e.exit_code()
}

/// clap's whole message on one line: what was wrong, then what it adds — the missing
/// arguments, "a similar argument exists: '--interval'", the possible values — joined
/// with "; ". Left out: the `error:` prefix, the usage block and "For more
/// information, try '--help'" (the command's `--help` is where usage lives).
fn clap_message(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let mut out = String::new();
    // After a line ending in ':' come indented items (the missing arguments).
    let mut list = false;
    let mut lines = text.lines().peekable();
    while let Some(raw) = lines.next() {
        let l = raw.trim();
        if l.starts_with("Usage:") {
            // The usage block runs to the next empty line.
            while lines.peek().is_some_and(|n| !n.trim().is_empty()) {
                lines.next();
            }
            continue;
        }
        if l.is_empty() || l.starts_with("For more information, try") {
            list = false;
            continue;
        }
        let item = list && raw.starts_with(' ');
        if !out.is_empty() {
            out.push_str(match (out.ends_with(':'), item) {
                (true, _) => " ",
                (false, true) => ", ",
                (false, false) => "; ",
            });
        }
        out.push_str(l.trim_start_matches("error: "));
        list = l.ends_with(':') || item;
    }
    if out.is_empty() {
        "invalid command line".to_string()
    } else {
        out
    }
}

/// The journal destination `--log-format FORMAT` names (`auto`, `journal`, `logfmt`,
/// `text`; see [`crate::report::journal::LogFormat`]).
fn journal(format: &str) -> crate::report::journal::Journal {
    use crate::report::journal::{Journal, LogFormat};
    Journal::open(match format {
        "journal" => LogFormat::Journal,
        "logfmt" => LogFormat::Logfmt,
        "text" => LogFormat::Text,
        _ => LogFormat::Auto,
    })
}

/// Live progress of a measuring command, through its [`Output`]: every report period
/// the live lines (`T:` lines, pmqtest's block) as text; `SIGUSR1` status, and
/// warnings, on standard error; setup notices (the PM QoS line) as text.
struct TextProgress<'a> {
    out: Output,
    lines: &'a dyn for<'l> Sink<Live<'l>>,
    nsecs: bool,
}

/// `# rtbench current status:` and the live lines (`SIGUSR1`).
struct Status<'a>(&'a dyn for<'l> Sink<Live<'l>>);

impl Sink<Live<'_>> for Status<'_> {
    fn write(&self, l: &Live<'_>, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        writeln!(out, "# rtbench current status:")?;
        self.0.write(l, out)
    }
}

impl Progress for TextProgress<'_> {
    fn report(&mut self, threads: &[ThreadSpec], live: &[LiveSnapshot]) {
        let l = Live {
            threads,
            live,
            nsecs: self.nsecs,
        };
        let _ = self.out.text(self.lines, &l);
    }

    fn status(&mut self, threads: &[ThreadSpec], live: &[LiveSnapshot]) {
        let l = Live {
            threads,
            live,
            nsecs: self.nsecs,
        };
        let _ = self.out.to_stderr(&Status(self.lines), &l);
    }

    fn notice(&mut self, line: &str) {
        self.out.line(line);
    }

    fn warning(&mut self, line: &str) {
        self.out.warn(line);
    }
}

/// What every measuring command does around its measurement: the load started before
/// and stopped after it (also when it fails), live progress on `out` with `lines`.
/// Returns the result and what the load was.
fn with_load<R>(
    load: Option<&LoadSpec>,
    out: Output,
    lines: &dyn for<'l> Sink<Live<'l>>,
    nsecs: bool,
    measure: impl FnOnce(&mut dyn Progress) -> Result<R>,
) -> Result<(R, Option<LoadInfo>)> {
    let running = self::load::start(load)?;
    let info = load.map(|s| s.info(running.as_ref()));
    let mut progress = TextProgress { out, lines, nsecs };
    let result = measure(&mut progress);
    self::load::stop(running);
    Ok((result?, info))
}
