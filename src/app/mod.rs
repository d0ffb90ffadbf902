//! The binary's glue, one file per command: parse → plan → run → output. This is the
//! one place that prints an error and maps it to the exit code ([`Error::exit_code`]);
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
use crate::error::exit;
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
            eprintln!("rtbench: {}", first.trim_start_matches("error: "));
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
            eprintln!("rtbench: {e}");
            e.exit_code()
        }
    }
}
