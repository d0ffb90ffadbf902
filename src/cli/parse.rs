//! Parsing the command line with clap, and what a parse that gives no command prints:
//! `--help` and `--version` on standard output (exit 0), an error as one line on
//! standard error (exit 2).

use super::Cli;
use crate::error::exit;
use crate::report::output::Output;
use clap::Parser;

/// Parses `args` (argv\[0\] first, already prepared by [`super::getopt::prepare`]).
/// `Err` carries the exit code after the help, the version or the error was printed:
/// 0 for `--help`/`--version`, 2 for an error (a missing subcommand prints the help
/// as clap does, exit 2).
pub fn parse(args: &[std::ffi::OsString]) -> Result<Cli, i32> {
    Cli::try_parse_from(args).map_err(|e| {
        use clap::error::ErrorKind;
        if !e.use_stderr() || e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
            let _ = e.print();
            return if e.use_stderr() {
                exit::USAGE
            } else {
                exit::OK
            };
        }
        Output::new(None).warn(&format!("rtbench: {}", one_line(&e)));
        exit::USAGE
    })
}

/// clap's whole message on one line: what was wrong, then what it adds — the missing
/// arguments, "a similar argument exists: '--interval'", the possible values — joined
/// with "; ". Left out: the `error:` prefix, the usage block and "For more
/// information, try '--help'" (the command's `--help` is where usage lives).
pub fn one_line(e: &clap::Error) -> String {
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
