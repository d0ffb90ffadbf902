//! The binary's glue, one file per command: parse → plan → run → output. This is the
//! one place that prints an error and maps it to the exit code
//! ([`Error::exit_code`](crate::error::Error::exit_code)), except clap's own help and
//! errors, which [`crate::cli::parse`] prints; nothing else calls `exit`.

mod compare;
mod config;
mod cyclic;
#[cfg(feature = "diagnose")]
mod diagnose;
mod load;
#[cfg(feature = "monitor")]
mod monitor;
mod pair;
#[cfg(feature = "plot")]
mod plot;
mod progress;
mod report;
mod selftest;
mod sysinfo;
mod tune;

use crate::cli::getopt::{self, Tool};
use crate::cli::Command;
use crate::error::Error;
use crate::report::output::Output;
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
    let (invocation, alone) = match getopt::prepare_with_command(&args) {
        Ok(i) => i,
        Err(e) => return fail(&Error::Usage(e)),
    };
    let cli = match crate::cli::parse::parse(&invocation.args, alone) {
        Ok(c) => c,
        Err(code) => return code,
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
        Command::Compare(a) => compare::run(&a),
        Command::Selftest(a) => Ok(selftest::run(&a)),
        Command::Config(a) => config::run(&a),
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

/// Prints `e` as one line on standard error (outputs that failed: one line each) and
/// returns its exit code.
fn fail(e: &Error) -> i32 {
    match e {
        Error::Outputs(each) => {
            for e in each {
                Output::new(None).warn(&format!("rtbench: {e}"));
            }
        }
        e => Output::new(None).warn(&format!("rtbench: {e}")),
    }
    e.exit_code()
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
