//! Error types and the exit-code contract shared by every subcommand.
//!
//! Exit codes: 0 success/pass, 1 limits exceeded or deviations found, 2 usage or
//! configuration error, 3 the environment refused (no SCHED_FIFO, no mlock, not root),
//! 4 the self-test's measurement was invalid (see [`exit::INVALID`]),
//! 130 interrupted by SIGINT, 143 by SIGTERM and 129 by SIGHUP, after writing partial
//! results (the shell's 128 + signal number), 141 when standard output's reader went
//! away and every other output was written. docs/ARCHITECTURE.md lists which command returns what.
//!
//! Errors carry their input as data — the flag and value ([`UsageError`]), or the
//! file, line, key and value ([`ConfigError`]) — so a consumer (the journal fields of
//! the self-test) reads them from the error, never from its text.

use std::borrow::Cow;
use std::path::PathBuf;

/// Whether `c` must not reach a terminal, a log or the journal as itself — the one
/// rule for every string from outside that rtbench prints (task names, file facts,
/// labels, stored runs' fields, values in messages):
///
/// - a control character other than tab: C0, DEL, C1 (U+0080–U+009F, NEL included);
/// - a line or paragraph separator (U+2028, U+2029);
/// - a bidirectional formatting character (U+061C, U+200E/F marks, U+202A–U+202E
///   embeddings and overrides, U+2066–U+2069 isolates: Unicode TR #9), which would
///   reorder the rest of the line as the reader sees it;
/// - an invisible formatting character that makes two different strings look the same
///   (U+00AD soft hyphen, U+034F, U+115F/U+1160, U+17B4/U+17B5, U+180B–U+180F, U+200B–U+200D zero
///   widths, U+2060–U+2064 and U+206A–U+206F, U+3164, U+FEFF, U+FFA0, U+FFF9–U+FFFB, tags
///   U+E0000–U+E007F);
/// - a noncharacter (U+FDD0–U+FDEF, and U+xFFFE/U+xFFFF of every plane: Unicode §23.7),
///   which has no meaning in interchanged text.
pub fn hidden(c: char) -> bool {
    let n = c as u32;
    (c != '\t' && c.is_control())
        || matches!(
            c,
            '\u{2028}'
                | '\u{2029}'
                | '\u{061c}'
                | '\u{200e}'
                | '\u{200f}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2066}'..='\u{2069}'
                | '\u{00ad}'
                | '\u{034f}'
                | '\u{115f}'
                | '\u{1160}'
                | '\u{17b4}'
                | '\u{17b5}'
                | '\u{180b}'..='\u{180f}'
                | '\u{200b}'..='\u{200d}'
                | '\u{2060}'..='\u{2064}'
                | '\u{206a}'..='\u{206f}'
                | '\u{3164}'
                | '\u{feff}'
                | '\u{ffa0}'
                | '\u{fff9}'..='\u{fffb}'
                | '\u{e0000}'..='\u{e007f}'
                | '\u{fdd0}'..='\u{fdef}'
        )
        || n & 0xFFFE == 0xFFFE
}

/// Whether `s` prints as itself: no character is [`hidden`]. The one definition of
/// "printable" for values rtbench validates (the unit's labels).
pub fn printable(s: &str) -> bool {
    !s.contains(hidden)
}

/// `c` as [`one_line`] writes it.
fn push_visible(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        c if hidden(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        c => out.push(c),
    }
}

/// `s` on one line: line breaks and every other [`hidden`] character escaped the way Rust writes them in strings (`\n`, `\r`,
/// `\u{1b}`, `\u{202e}`, …; a tab stays), so an error that echoes a multi-line TOML
/// value, an argv word with a newline or a file name with an escape sequence or a
/// right-to-left override is still one line, read in order, on a terminal, in a log or
/// in the journal. Nothing else changes (a backslash stays a backslash).
pub fn one_line(s: &str) -> Cow<'_, str> {
    if !s.contains(hidden) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        push_visible(&mut out, c);
    }
    Cow::Owned(out)
}

/// How much of a name (a flag, a file, a key) a message shows.
pub const NAME_CHARS: usize = 160;

/// How much of a configuration line (a key and its value) a parser error shows.
pub const LINE_TEXT_CHARS: usize = 80;

/// How much of a value a message shows, in characters as shown (escapes included).
pub const ECHO_CHARS: usize = 60;

/// A value from input (a flag's value, a configuration value, a word of a file) as
/// a message quotes it: [`one_line`], and when longer than [`ECHO_CHARS`] its first
/// characters and `… (N bytes)` with its whole length, so that a message stays one
/// short line whatever was given (a 200 KB TOML string, a 1 MB dump token). The one
/// place values are shortened: every message quotes values through this (or
/// [`echo_within`]).
pub fn echo(s: &str) -> Cow<'_, str> {
    echo_within(s, ECHO_CHARS)
}

/// How much of a part of a value (a region of a CPU list, an item of a load spec) a
/// message shows after the whole value was shown by [`echo`].
pub const PART_CHARS: usize = 24;

/// A part of a value that a message names after the value itself: [`echo_within`]
/// [`PART_CHARS`].
pub fn echo_part(s: &str) -> Cow<'_, str> {
    echo_within(s, PART_CHARS)
}

/// [`echo`] with room for `max` characters (names of files and keys get more).
pub fn echo_within(s: &str, max: usize) -> Cow<'_, str> {
    if s.len() <= max && !s.contains(hidden) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(max.min(s.len()) + 16);
    let mut shown = 0;
    for c in s.chars() {
        let mut piece = String::new();
        push_visible(&mut piece, c);
        let n = piece.chars().count();
        if shown + n > max {
            out.push_str(&format!("… ({} bytes)", s.len()));
            return Cow::Owned(out);
        }
        shown += n;
        out.push_str(&piece);
    }
    Cow::Owned(out)
}

/// Process exit codes used by every rtbench subcommand.
pub mod exit {
    /// Success, or the self-test passed.
    pub const OK: i32 = 0;
    /// A limit was exceeded (e.g. `-b` fired) or deviations were found.
    pub const FAIL: i32 = 1;
    /// Bad command line or configuration; nothing was started or written.
    pub const USAGE: i32 = 2;
    /// The environment refused something the run needs (SCHED_FIFO, mlockall, a device),
    /// or a kernel write of `tune apply`/`revert` (a write, a value that did not hold, a
    /// guard; `apply` rolls back what it changed).
    pub const ENV: i32 = 3;
    /// The self-test's measurement was invalid: every limit exceeded was exceeded by a
    /// sample that is not the system's latency (stopped, throttled, clock step).
    pub const INVALID: i32 = 4;
    /// A process ended by signal N exits with `SIGNAL_BASE + N`, as shells report it.
    pub const SIGNAL_BASE: i32 = 128;
    /// Stopped by SIGINT after writing what was measured (130).
    pub const INTERRUPTED: i32 = SIGNAL_BASE + libc::SIGINT;
    /// Stopped by SIGTERM after writing what was measured (143).
    pub const TERMINATED: i32 = SIGNAL_BASE + libc::SIGTERM;
    /// Stopped by SIGHUP (a lost terminal or ssh session) after writing what was
    /// measured (129).
    pub const HANGUP: i32 = SIGNAL_BASE + libc::SIGHUP;
    /// Standard output's reader went away (EPIPE) while a measuring command wrote its
    /// results; its other outputs were written (141, 128 + SIGPIPE, what a shell shows
    /// for a process SIGPIPE killed, and what rt-tests 2.4 exits with).
    pub const STDOUT_CLOSED: i32 = SIGNAL_BASE + libc::SIGPIPE;
}

/// A bad command-line input: which flag (or argument), the value given, and what was
/// expected. Renders as `FLAG VALUE: MESSAGE` (`FLAG: MESSAGE` without a value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageError {
    /// The flag or argument, e.g. `-a`, `--load-cmd`, `--dir`, or a file named on the
    /// command line.
    pub flag: String,
    /// The value as given (possibly quoted for display), or empty.
    pub value: String,
    /// What was wrong and what was expected.
    pub message: String,
}

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (flag, message) = (echo_within(&self.flag, NAME_CHARS), one_line(&self.message));
        if self.value.is_empty() {
            write!(f, "{flag}: {message}")
        } else {
            write!(f, "{flag} {}: {message}", echo(&self.value))
        }
    }
}

/// Where in a configuration file a problem sits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigPlace {
    /// The file could not be read at all.
    Unreadable,
    /// The TOML parser refused it (syntax, unknown key, wrong type): the line and its
    /// text when the parser knows them, and the key written on that line, if any.
    Syntax {
        /// 1-based line, if known.
        line: Option<usize>,
        /// That line, trimmed.
        text: String,
        /// The key on that line as written (`isolatd` in `isolatd = "1"`).
        key: Option<String>,
    },
    /// A value that parsed but is not valid: `KEY = VALUE` at `line`.
    Value {
        /// 1-based line of the value.
        line: usize,
        /// Dotted key, e.g. `tuning.isolated`, `limits.cpus[1].cpus`.
        key: String,
        /// The value as written in the file.
        value: String,
    },
    /// A whole table that is not valid here, e.g. `[limits.pmq]`.
    Table {
        /// 1-based line of the table's header.
        line: usize,
        /// Dotted table name, e.g. `limits.pmq`.
        key: String,
    },
}

/// A configuration file problem, one line naming the file, the line, the key and the
/// value. Renders as `FILE:LINE: KEY = VALUE: MESSAGE`, `FILE:LINE: [TABLE]: MESSAGE`,
/// `FILE:LINE: LINE-TEXT: MESSAGE` (parser errors) or `FILE: MESSAGE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The file as named (`--config FILE`, or the default path).
    pub file: String,
    /// Where in it.
    pub place: ConfigPlace,
    /// What was wrong and what was expected.
    pub message: String,
}

impl ConfigError {
    /// The 1-based line of the problem, when known (journal field `RTBENCH_CONFIG_LINE`).
    pub fn line(&self) -> Option<usize> {
        match &self.place {
            ConfigPlace::Unreadable => None,
            ConfigPlace::Syntax { line, .. } => *line,
            ConfigPlace::Value { line, .. } | ConfigPlace::Table { line, .. } => Some(*line),
        }
    }

    /// The key of a bad value, or the key written on a line the parser refused
    /// (journal field `RTBENCH_CONFIG_KEY`); `None` for tables and unreadable files.
    pub fn key(&self) -> Option<&str> {
        match &self.place {
            ConfigPlace::Syntax { key, .. } => key.as_deref(),
            ConfigPlace::Value { key, .. } => Some(key),
            ConfigPlace::Unreadable | ConfigPlace::Table { .. } => None,
        }
    }
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Every part on one line: a multi-line TOML value (`"""…"""`) is echoed with
        // its line breaks escaped.
        let (file, m) = (echo_within(&self.file, NAME_CHARS), one_line(&self.message));
        match &self.place {
            ConfigPlace::Unreadable | ConfigPlace::Syntax { line: None, .. } => {
                write!(f, "{file}: {m}")
            }
            ConfigPlace::Syntax {
                line: Some(l),
                text,
                ..
            } => write!(f, "{file}:{l}: {}: {m}", echo_within(text, LINE_TEXT_CHARS)),
            ConfigPlace::Value { line, key, value } => {
                write!(
                    f,
                    "{file}:{line}: {} = {}: {m}",
                    echo_within(key, NAME_CHARS),
                    echo(value)
                )
            }
            ConfigPlace::Table { line, key } => {
                write!(f, "{file}:{line}: [{}]: {m}", echo_within(key, NAME_CHARS))
            }
        }
    }
}

/// The cause of a refusal: a short name of what refused (`RLIMIT_RTPRIO`,
/// `cpu.rt_runtime_us`, `seccomp`, …, journal field `RTBENCH_CAUSE`) and one line with
/// the numbers and the fix, found by [`crate::sys::refusal`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cause {
    /// What refused: a limit, capability, cgroup file, setting or policy.
    pub name: &'static str,
    /// The explanation with its numbers and what to change.
    pub text: String,
}

impl Cause {
    /// A cause named `name` explained by `text`.
    pub fn new(name: &'static str, text: impl Into<String>) -> Cause {
        Cause {
            name,
            text: text.into(),
        }
    }
}

/// Every error rtbench reports. Each variant renders as one line that names the
/// offending input and what was expected.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A command-line value is invalid (exit 2).
    #[error("{0}")]
    Usage(UsageError),
    /// The configuration file is invalid (exit 2).
    #[error("{0}")]
    Config(ConfigError),
    /// The kernel or the process limits refused something the run needs (exit 3).
    /// Renders as `WHAT: ERRNO-TEXT (os error N)` and, when the cause was found,
    /// `; CAUSE` (see [`crate::sys::refusal`]).
    #[error("{what}: {source}{}", suffix(.cause))]
    Refused {
        /// What was attempted, e.g. `sched_setscheduler(SCHED_FIFO, 98) on thread 0`.
        what: String,
        /// The errno the call returned, taken right after it failed.
        source: std::io::Error,
        /// What refused (the limit, capability, cgroup or setting) and the fix.
        cause: Option<Cause>,
    },
    /// A process rtbench started and needs running (the load) ended at once (exit 3).
    /// Renders as `WHAT: exited at once with STATUS (…)` and what the process said on
    /// standard error, if anything.
    #[error("{what}: exited at once with {status} (a load must keep running for the whole measurement){}", said_suffix(.said))]
    Ended {
        /// The process as the user named it, e.g. `--load 'vm:1:512M'`.
        what: String,
        /// `status 3` or `signal 9`.
        status: String,
        /// Its last line on standard error (without the `rtbench: ` prefix), or empty.
        said: String,
    },
    /// Reading or writing a file failed (exit 3).
    #[error("{path}: {source}")]
    Io {
        /// The file that failed.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// Outputs of a command that could not be written, each with its error, after
    /// every other output was written (exit 3; `crate::report::output::Written`).
    /// Renders as the errors joined by `; `; `app::main` prints one line each.
    #[error("{}", .0.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("; "))]
    Outputs(Vec<Error>),
}

fn suffix(cause: &Option<Cause>) -> String {
    cause
        .as_ref()
        .map_or_else(String::new, |c| format!("; {}", c.text))
}

fn said_suffix(s: &str) -> String {
    if s.is_empty() {
        String::new()
    } else {
        format!(": {s}")
    }
}

impl From<UsageError> for Error {
    fn from(e: UsageError) -> Self {
        Error::Usage(e)
    }
}

impl From<ConfigError> for Error {
    fn from(e: ConfigError) -> Self {
        Error::Config(e)
    }
}

impl Error {
    /// A usage error for `flag` given `value` (e.g. `-p`, `100`); `value` may be empty.
    pub fn usage(
        flag: impl Into<String>,
        value: impl std::fmt::Display,
        message: impl Into<String>,
    ) -> Self {
        Error::Usage(UsageError {
            flag: flag.into(),
            value: value.to_string(),
            message: message.into(),
        })
    }

    /// An environment error: the kernel refused `what` with `source` (the errno taken
    /// right after the call), explained by `cause` when one was found.
    pub fn refused(what: impl Into<String>, source: std::io::Error, cause: Option<Cause>) -> Self {
        Error::Refused {
            what: what.into(),
            source,
            cause,
        }
    }

    /// The errno of a refusal or I/O error.
    pub fn errno(&self) -> Option<i32> {
        match self {
            Error::Refused { source, .. } | Error::Io { source, .. } => source.raw_os_error(),
            _ => None,
        }
    }

    /// The name of what refused (`RLIMIT_RTPRIO`, `cpu.rt_runtime_us`, …), when known.
    pub fn cause_name(&self) -> Option<&'static str> {
        match self {
            Error::Refused { cause: Some(c), .. } => Some(c.name),
            _ => None,
        }
    }

    /// Builds an I/O error for `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    /// The process exit code this error maps to (see [`exit`]). The one mapping from
    /// errors to exit codes; `app::main` applies it.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Usage(_) | Error::Config(_) => exit::USAGE,
            Error::Refused { .. } | Error::Ended { .. } | Error::Io { .. } | Error::Outputs(_) => {
                exit::ENV
            }
        }
    }
}

/// Result alias used throughout the crate.
pub type Result<T> = std::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_and_config_errors_render_their_input() {
        assert_eq!(
            Error::usage("-p", 100, "expected a priority of 0..99").to_string(),
            "-p 100: expected a priority of 0..99"
        );
        assert_eq!(
            Error::usage("--histfile", "", "needs -h or -H").to_string(),
            "--histfile: needs -h or -H"
        );
        let e = ConfigError {
            file: "f.toml".into(),
            place: ConfigPlace::Value {
                line: 3,
                key: "cyclic.priority".into(),
                value: "0".into(),
            },
            message: "expected 1..99".into(),
        };
        assert_eq!(
            e.to_string(),
            "f.toml:3: cyclic.priority = 0: expected 1..99"
        );
        assert_eq!((e.line(), e.key()), (Some(3), Some("cyclic.priority")));
        let t = ConfigError {
            place: ConfigPlace::Table {
                line: 1,
                key: "limits.pmq".into(),
            },
            ..e.clone()
        };
        assert_eq!(t.to_string(), "f.toml:1: [limits.pmq]: expected 1..99");
        assert_eq!((t.line(), t.key()), (Some(1), None));
        assert_eq!(Error::Config(t).exit_code(), exit::USAGE);
    }

    #[test]
    fn echoed_values_are_short_and_visible() {
        assert_eq!(echo("0-3"), "0-3");
        assert_eq!(
            echo("a\u{202e}b\u{2066}\u{200f}"),
            "a\\u{202e}b\\u{2066}\\u{200f}"
        );
        assert_eq!(echo("a\u{9b}b\u{7f}\tc"), "a\\u{9b}b\\u{7f}\tc");
        let long = "x".repeat(200_000);
        let e = echo(&long);
        assert_eq!(e, format!("{}… (200000 bytes)", "x".repeat(ECHO_CHARS)));
        // An escape is never cut in half.
        let escapes = "\u{1b}".repeat(40);
        let e = echo(&escapes);
        assert_eq!(e, format!("{}… (40 bytes)", "\\u{1b}".repeat(10)));
        let u = Error::usage("--since", "\u{202e}1h", "bad").to_string();
        assert_eq!(u, "--since \\u{202e}1h: bad");
    }
}
