//! The binary's glue, one file per command: parse → plan → run → output. This is the
//! one place that prints an error and maps it to the exit code ([`Error::exit_code`](crate::error::Error::exit_code));
//! nothing else calls `exit`.

mod cyclic;
mod load;
mod pair;
#[cfg(feature = "plot")]
mod plot;
mod report;
mod selftest;
mod sysinfo;
mod tune;

use crate::cli::{Cli, Command};
use crate::error::{exit, Result};
use crate::load::{LoadInfo, LoadSpec};
use crate::measure::harness::Progress;
use crate::measure::stats::LiveSnapshot;
use crate::measure::ThreadSpec;
use crate::report::output::Output;
use crate::report::{Live, Sink};
use clap::Parser;
use std::ffi::OsString;

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
            Output::new(None).warn(&format!("rtbench: {}", first.trim_start_matches("error: ")));
            return exit::USAGE;
        }
    };
    let result = match cli.command {
        Command::Cyclic(a) => cyclic::run(&a, &argv),
        Command::Sysinfo(a) => sysinfo::run(&a),
        Command::Report(a) => report::run(&a),
        #[cfg(feature = "plot")]
        Command::Plot(a) => plot::run(&a),
        Command::Selftest(a) => Ok(selftest::run(&a)),
        Command::Tune(a) => tune::run(&a),
        Command::Pmq(a) => pair::run_pmq(&a, &argv),
        Command::Pipe(a) => pair::run_pipe(&a, &argv),
        Command::Load(a) => load::run(&a),
        Command::LoadWorker(a) => load::run_worker(&a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            Output::new(None).warn(&format!("rtbench: {e}"));
            e.exit_code()
        }
    }
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
