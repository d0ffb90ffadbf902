//! Parsing the command line with clap, and what a parse that gives no command prints:
//! `--help` and `--version` on standard output (exit 0), an error as one line on
//! standard error (exit 2).

use super::Cli;
use crate::error::exit;
use crate::report::output::Output;
use clap::{FromArgMatches, Parser};

/// Parses `args` (argv\[0\] first, already prepared by
/// [`super::getopt::prepare_with_command`]); `alone` is the measuring command's own
/// tree ([`super::getopt::measuring_command`]) that preparation built, if any: the arguments are
/// parsed by it first, and anything it does not accept (an error, `--help`,
/// `--version`) is parsed again by the whole tree, so that every message is the one
/// the whole tree gives.
/// `Err` carries the exit code after the help, the version or the error was printed:
/// 0 for `--help`/`--version`, 2 for an error (a missing subcommand prints the help
/// as clap does, exit 2).
pub fn parse(args: &[std::ffi::OsString], alone: Option<clap::Command>) -> Result<Cli, i32> {
    if let Some(cmd) = alone {
        let fast = cmd
            .try_get_matches_from(args)
            .ok()
            .and_then(|m| Cli::from_arg_matches(&m).ok());
        if let Some(cli) = fast {
            return Ok(cli);
        }
    }
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
        let line = match e.kind() {
            ErrorKind::InvalidUtf8 => not_utf8(args),
            _ => one_line(&e),
        };
        Output::new(None).warn(&format!("rtbench: {line}"));
        exit::USAGE
    })
}

/// clap's "invalid UTF-8 was detected in one or more arguments" said of the argument
/// it is about: the option whose value is not UTF-8 (`--since`, also as getopt wrote
/// it, `--interval=VALUE`), or the argument's position, with the value's bytes
/// escaped (`\xff`) and shortened as every echoed value is ([`crate::error::echo`]).
fn not_utf8(args: &[std::ffi::OsString]) -> String {
    use std::os::unix::ffi::OsStrExt;
    let Some(i) = args
        .iter()
        .skip(1)
        .position(|a| a.to_str().is_none())
        .map(|i| i + 1)
    else {
        return "invalid UTF-8 in the command line".into();
    };
    let bytes = args[i].as_bytes();
    let shown = |b: &[u8]| crate::error::echo(&b.escape_ascii().to_string()).into_owned();
    let what = |name: &str, value: &[u8]| {
        format!("{name} {}: not valid UTF-8; expected text", shown(value))
    };
    if let Some(body) = bytes.strip_prefix(b"--") {
        if let Some(eq) = body.iter().position(|&b| b == b'=') {
            let name = String::from_utf8_lossy(&body[..eq]);
            return what(&format!("--{name}"), &body[eq + 1..]);
        }
    }
    if bytes.starts_with(b"-") {
        return format!("{}: an option that is not valid UTF-8", shown(bytes));
    }
    match args.get(i - 1).and_then(|p| p.to_str()) {
        Some(prev) if i > 1 && prev.starts_with('-') && !prev.contains('=') && prev != "--" => {
            what(prev, bytes)
        }
        _ => what(&format!("argument {i}"), bytes),
    }
}

/// clap's whole message on one line: what was wrong, then what it adds — the missing
/// arguments, "a similar argument exists: '--interval'", the possible values — joined
/// with "; ". Left out: the `error:` prefix, the usage block and "For more
/// information, try '--help'" (the command's `--help` is where usage lives).
pub fn one_line(e: &clap::Error) -> String {
    let mut text = e.render().to_string();
    // The values clap quotes, shortened and made visible as every echoed value is,
    // before the text is split at its line breaks (a value may hold one).
    for (_, v) in e.context() {
        if let clap::error::ContextValue::String(v) = v {
            let shown = crate::error::echo(v);
            if shown != v.as_str() && !v.is_empty() {
                text = text.replace(v.as_str(), &shown);
            }
        }
    }
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
        return "invalid command line".to_string();
    }
    crate::error::one_line(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::super::getopt::{measuring_command, Tool};
    use super::*;
    use clap::CommandFactory;

    const TOOLS: [Tool; 4] = [Tool::Cyclic, Tool::Pmq, Tool::Pipe, Tool::Oslat];

    /// The measuring command alone has the whole tree's arguments and settings.
    #[test]
    fn measuring_command_alone_is_the_whole_trees_subcommand() {
        let mut whole = Cli::command();
        whole.build();
        for tool in TOOLS {
            let mut alone = measuring_command(tool);
            alone.build();
            let a = alone.find_subcommand(tool.subcommand()).unwrap();
            let w = whole.find_subcommand(tool.subcommand()).unwrap();
            let args = |c: &clap::Command| {
                c.get_arguments()
                    .map(|a| format!("{a:?}"))
                    .collect::<Vec<_>>()
            };
            assert_eq!(args(a), args(w), "{tool:?}");
            assert_eq!(
                (
                    a.is_disable_help_flag_set(),
                    a.is_allow_negative_numbers_set(),
                    a.is_args_override_self(),
                    a.get_version(),
                ),
                (
                    w.is_disable_help_flag_set(),
                    w.is_allow_negative_numbers_set(),
                    w.is_args_override_self(),
                    w.get_version(),
                ),
                "{tool:?}"
            );
        }
    }

    /// Both parses give the same result for what the measuring commands accept.
    #[test]
    fn both_parses_agree() {
        let cases: &[&[&str]] = &[
            &[
                "rtbench",
                "cyclic",
                "--mlockall",
                "--priority=98",
                "--interval=100",
            ],
            &[
                "rtbench",
                "cyclic",
                "--threads=4",
                "--histogram=400",
                "--quiet",
                "--duration=1m",
            ],
            &[
                "rtbench",
                "cyclic",
                "--smp",
                "--json=-",
                "--nsecs",
                "--duration=10",
            ],
            &["rtbench", "cyclic", "--priority=80", "--priority=90"],
            &[
                "rtbench",
                "pmq",
                "--smp",
                "--priority=80",
                "--interval=500",
                "--loops=3000",
            ],
            &["rtbench", "pipe", "--loops=10"],
        ];
        for case in cases {
            let args: Vec<std::ffi::OsString> = case.iter().map(Into::into).collect();
            let tool = match case[1] {
                "cyclic" => Tool::Cyclic,
                "pmq" => Tool::Pmq,
                _ => Tool::Pipe,
            };
            let fast = measuring_command(tool)
                .try_get_matches_from(&args)
                .map(|m| Cli::from_arg_matches(&m).unwrap());
            let whole = Cli::try_parse_from(&args);
            assert_eq!(
                format!("{:?}", fast.as_ref().map_err(|e| e.kind())),
                format!("{:?}", whole.as_ref().map_err(|e| e.kind())),
                "{case:?}"
            );
            assert!(whole.is_ok(), "{case:?}");
        }
    }
}
