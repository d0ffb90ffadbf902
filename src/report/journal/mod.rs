//! rtbench's structured journal entries, the self-test's and the monitor's — one
//! function per entry kind, every field named `RTBENCH_*` — and their destination
//! ([`Journal`]): journald (its native
//! protocol on a socket that never blocks, `native.rs`), human lines on standard error where there
//! is no journald (a hand run, a container), or `key=value` lines on standard error
//! when asked for (`--log-format logfmt`: the SysV init script sends them to syslog).
//!
//! Each entry kind has one constant MESSAGE_ID with one meaning, explained in
//! `systemd/rtbench.catalog`; every `@FIELD@` the catalog uses for an ID is a field of
//! every entry with that ID: [`Journal::try_send`] checks each entry against the
//! catalog in debug builds (every test run of every command), so a bare `@FIELD@` in
//! `journalctl -x` fails a test instead of reaching a board. Figures are fields in
//! **ns** (`*_NS`); the human MESSAGE speaks **µs**.
//!
//! Source: systemd.journal-fields(7), sd_journal_send(3), journalctl(1) `--catalog`.

mod entries;
#[cfg(feature = "monitor")]
mod monitor;
mod native;
pub use entries::*;
#[cfg(feature = "monitor")]
pub use monitor::*;

use std::io::Write;

/// One test's result on one CPU (fields `RTBENCH_TEST`, `RTBENCH_CPU`, `RTBENCH_*_NS`, …).
pub const MSG_RESULT: &str = "b338a16c561342608e6e5ef41b0a0813";
/// The self-test summary and verdict.
pub const MSG_SUMMARY: &str = "7b1dd0eea94d4cc4bd8f9e6c91b6465d";
/// One tuning item's outcome.
pub const MSG_TUNING: &str = "872270459a844055a01dbd7e3ccfd9a5";
/// The configuration file is invalid.
pub const MSG_CONFIG: &str = "007f10bc07da46b6b3fc256220fca838";
/// Tuning is in place; READY=1 sent.
pub const MSG_READY: &str = "6a9954f26ad8443b8423171c8abd3682";
/// There is no configuration file: the documented defaults are used.
pub const MSG_DEFAULTS: &str = "ccf6df43a9334ab7b3aa20e9f71826dd";
/// An output of the self-test (results store, fallback copy, Prometheus textfile) was
/// not written.
pub const MSG_OUTPUT: &str = "4ac37d680e7a4865822e0b39e581b9e0";
/// The self-test stopped before a verdict (tuning, load or measurement refused).
pub const MSG_ABORTED: &str = "11388322edd8448fb26766740685d2fb";

/// One sample over its limit, explained from the kernel's trace (the self-test's or
/// the monitor's; `crate::explain`).
pub const MSG_EXPLAINED: &str = "8d09e443b62944249b71ee2f6aa7adff";

/// The main thread or the load shares a core with a measured CPU (the self-test's or
/// the monitor's).
pub const MSG_PLACEMENT: &str = "e677ff564d274fdaa78418a6ad5240c9";

/// The monitor started: CPUs, interval, priority, window, what the state file held.
pub const MSG_MONITOR_START: &str = "c235ff9bebdd447a895829d54b7b1aa9";
/// One CPU's figures for one window.
pub const MSG_MONITOR_WINDOW: &str = "cc642425788247bfaec2950f5114111e";
/// A window exceeded a `[monitor.limits]` limit on one CPU.
pub const MSG_MONITOR_LIMIT: &str = "a694d7ed549d47af8e69c18a54fad1a8";
/// The monitor stopped (state saved, or why not).
pub const MSG_MONITOR_STOP: &str = "d4afd97974874b9781398c86865fe1c7";
/// The window store, state file or Prometheus textfile could not be written (or can
/// be again).
pub const MSG_MONITOR_OUTPUT: &str = "37e4093074a449328d450b9a6e3f66f8";

/// Every MESSAGE_ID rtbench logs, the self-test's and the monitor's
/// (`scripts/lint-packaging.sh` checks that the catalog compiles with each of them).
pub const ALL_IDS: [&str; 15] = [
    MSG_RESULT,
    MSG_EXPLAINED,
    MSG_SUMMARY,
    MSG_TUNING,
    MSG_CONFIG,
    MSG_READY,
    MSG_DEFAULTS,
    MSG_OUTPUT,
    MSG_ABORTED,
    MSG_PLACEMENT,
    MSG_MONITOR_START,
    MSG_MONITOR_WINDOW,
    MSG_MONITOR_LIMIT,
    MSG_MONITOR_STOP,
    MSG_MONITOR_OUTPUT,
];

/// Syslog priority of an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Priority {
    /// err (3)
    Error,
    /// warning (4)
    Warning,
    /// notice (5)
    Info,
}

impl Priority {
    /// The syslog level's number, journald's `PRIORITY` field (syslog(3)).
    pub fn syslog(self) -> &'static str {
        match self {
            Priority::Error => "3",
            Priority::Warning => "4",
            Priority::Info => "5",
        }
    }
}

/// One thread's or one CPU window's latency figures, **ns** ([`Entry::figures`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Figures {
    /// Samples taken.
    pub samples: u64,
    /// Smallest latency.
    pub min_ns: u64,
    /// Mean latency.
    pub avg_ns: u64,
    /// Median; `None` where a record does not carry it.
    pub p50_ns: Option<u64>,
    /// 99th percentile.
    pub p99_ns: u64,
    /// 99.9th percentile.
    pub p999_ns: u64,
    /// 99.99th percentile; `None` where a record does not carry it.
    pub p9999_ns: Option<u64>,
    /// Largest latency.
    pub max_ns: u64,
    /// Wakeups (messages) later than the following deadline.
    pub overruns: u64,
    /// Periods those skipped.
    pub missed_periods: u64,
}

impl From<&crate::results::summary::ThreadSummary> for Figures {
    fn from(th: &crate::results::summary::ThreadSummary) -> Figures {
        Figures {
            samples: th.count,
            min_ns: th.min_ns,
            avg_ns: th.avg_ns,
            p50_ns: Some(th.p50_ns),
            p99_ns: th.p99_ns,
            p999_ns: th.p999_ns,
            p9999_ns: Some(th.p9999_ns),
            max_ns: th.max_ns,
            overruns: th.overruns,
            missed_periods: th.missed(),
        }
    }
}

#[cfg(feature = "monitor")]
impl From<&crate::results::window::WindowCpu> for Figures {
    fn from(c: &crate::results::window::WindowCpu) -> Figures {
        Figures {
            samples: c.samples,
            min_ns: c.min_ns,
            avg_ns: c.avg_ns,
            p50_ns: c.p50_ns,
            p99_ns: c.p99_ns,
            p999_ns: c.p999_ns,
            p9999_ns: c.p9999_ns,
            max_ns: c.max_ns,
            overruns: c.overruns,
            missed_periods: c.missed(),
        }
    }
}

/// A structured entry: MESSAGE, MESSAGE_ID, PRIORITY and `RTBENCH_*` fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The MESSAGE_ID (32 hex digits).
    pub message_id: &'static str,
    /// Priority.
    pub priority: Priority,
    /// Human-readable MESSAGE.
    pub message: String,
    /// Extra fields (upper-case names, e.g. `RTBENCH_CPU`).
    pub fields: Vec<(&'static str, String)>,
}

impl Entry {
    /// A new entry with no extra fields. The message is one line, every character that
    /// must not reach a log as itself escaped ([`crate::error::one_line`]: task names,
    /// file facts, labels, configuration values in it cannot forge an entry or a line,
    /// nor move the cursor).
    pub fn new(message_id: &'static str, priority: Priority, message: impl Into<String>) -> Self {
        let message = message.into();
        Entry {
            message_id,
            priority,
            message: crate::error::one_line(&message).into_owned(),
            fields: Vec::new(),
        }
    }

    /// Adds a field, escaped as the message is ([`Entry::new`]).
    pub fn field(mut self, name: &'static str, value: impl ToString) -> Self {
        let value = value.to_string();
        self.fields
            .push((name, crate::error::one_line(&value).into_owned()));
        self
    }

    /// The latency figures of one thread (self-test) or CPU window (monitor), the
    /// same fields in the same order for both: `RTBENCH_SAMPLES`, `RTBENCH_MIN_NS`,
    /// `RTBENCH_AVG_NS`, `RTBENCH_P50_NS`, `RTBENCH_P99_NS`, `RTBENCH_P999_NS`,
    /// `RTBENCH_P9999_NS`, `RTBENCH_MAX_NS` (**ns**), `RTBENCH_OVERRUNS`,
    /// `RTBENCH_MISSED_PERIODS`. A percentile a record does not carry is `none`.
    pub fn figures(self, f: &Figures) -> Self {
        let opt = |v: Option<u64>| v.map_or_else(|| "none".to_string(), |v| v.to_string());
        self.field("RTBENCH_SAMPLES", f.samples)
            .field("RTBENCH_MIN_NS", f.min_ns)
            .field("RTBENCH_AVG_NS", f.avg_ns)
            .field("RTBENCH_P50_NS", opt(f.p50_ns))
            .field("RTBENCH_P99_NS", f.p99_ns)
            .field("RTBENCH_P999_NS", f.p999_ns)
            .field("RTBENCH_P9999_NS", opt(f.p9999_ns))
            .field("RTBENCH_MAX_NS", f.max_ns)
            .field("RTBENCH_OVERRUNS", f.overruns)
            .field("RTBENCH_MISSED_PERIODS", f.missed_periods)
    }

    /// The entry for people: the MESSAGE, `rtbench: warning: ` or `rtbench: ` before
    /// warnings and errors.
    pub fn to_text(&self) -> String {
        match self.priority {
            Priority::Error if self.message.starts_with("rtbench") => self.message.clone(),
            Priority::Error => format!("rtbench: {}", self.message),
            Priority::Warning => format!("rtbench: warning: {}", self.message),
            Priority::Info => self.message.clone(),
        }
    }

    /// [`Entry::to_text`], after its time ([`stamped`]) when `times` is set.
    fn human(&self, times: bool) -> String {
        if times {
            stamped(&self.to_text())
        } else {
            self.to_text()
        }
    }

    /// Debug builds only (tests, development runs): panics when the entry lacks a field
    /// that the catalog text of its MESSAGE_ID names as `@FIELD@` (`journalctl -x`
    /// would show the bare name), or when its MESSAGE_ID is not in the catalog.
    pub fn check_catalog(&self) {
        #[cfg(debug_assertions)]
        {
            let fields = catalog_fields(self.message_id)
                .unwrap_or_else(|| panic!("MESSAGE_ID {} is not in the catalog", self.message_id));
            let missing: Vec<&str> = fields
                .into_iter()
                .filter(|f| self.get(f).is_none())
                .collect();
            assert!(
                missing.is_empty(),
                "entry {} lacks the catalog's @{}@ (journalctl -x shows it bare): {:?}",
                self.message_id,
                missing.join("@, @"),
                self.message
            );
        }
    }

    /// The value of field `name`, if the entry has it.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The entry as one logfmt line: `MESSAGE_ID=… PRIORITY=… RTBENCH_…=… MESSAGE="…"`.
    pub fn to_logfmt(&self) -> String {
        let mut s = format!(
            "MESSAGE_ID={} PRIORITY={}",
            self.message_id,
            self.priority.syslog()
        );
        for (k, v) in &self.fields {
            s.push_str(&format!(" {k}={}", logfmt_value(v)));
        }
        s.push_str(&format!(" MESSAGE={}", logfmt_value(&self.message)));
        s
    }
}

/// The `@FIELD@` names of the catalog text of `id` (`systemd/rtbench.catalog`), `None`
/// when the catalog has no entry for it. Names are upper-case letters, digits and `_`,
/// as systemd's catalog substitution takes them.
#[cfg(debug_assertions)]
fn catalog_fields(id: &str) -> Option<Vec<&'static str>> {
    const CATALOG: &str = include_str!("../../../systemd/rtbench.catalog");
    let start = CATALOG.find(&format!("-- {id}\n"))?;
    let text = &CATALOG[start + 4 + id.len()..];
    let text = &text[..text.find("\n-- ").unwrap_or(text.len())];
    let mut fields = Vec::new();
    let mut rest = text;
    while let Some(a) = rest.find('@') {
        let after = &rest[a + 1..];
        match after.find('@') {
            Some(b)
                if b > 0
                    && after[..b]
                        .chars()
                        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_') =>
            {
                if !fields.contains(&&after[..b]) {
                    fields.push(&after[..b]);
                }
                rest = &after[b + 1..];
            }
            _ => rest = after,
        }
    }
    Some(fields)
}

fn logfmt_value(v: &str) -> String {
    if !v.is_empty() && !v.contains(|c: char| c.is_whitespace() || c == '"' || c == '=') {
        return v.to_string();
    }
    let mut out = String::from("\"");
    for c in v.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `text` with the wall-clock time before each of its lines, in the one date format
/// of rtbench's texts (`2026-12-01T20:10:00Z line`, [`crate::date::iso_s`]): a human
/// line on standard error, unlike a journal entry or a syslog line, has no time of
/// its own, and a daemon's log (`rtbench monitor 2>&1 | logger`, a serial console)
/// needs one.
pub fn stamped(text: &str) -> String {
    let now = crate::date::iso_s(crate::sys::clock::Clock::wall_secs());
    let mut out = String::with_capacity(text.len() + 25);
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if !line.is_empty() {
            out.push_str(&now);
            out.push(' ');
            out.push_str(line);
        }
    }
    out
}

/// How entries are written when they do not go to journald (`--log-format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogFormat {
    /// journald when its socket exists, else human lines on standard error.
    #[default]
    Auto,
    /// journald (a warning and human lines on standard error when there is none).
    Journal,
    /// `MESSAGE_ID=… PRIORITY=… RTBENCH_…=… MESSAGE="…"` lines on standard error (for
    /// syslog on images without journald: every field kept).
    Logfmt,
    /// Human lines on standard error: the MESSAGE only, warnings and errors marked
    /// (the monitor's each after its time: [`Journal::with_times`]).
    Text,
}

/// Where entries go.
pub enum Journal {
    /// journald, through its native socket; with `echo`, also human lines on standard
    /// error (an interactive run on a systemd host: the person at the terminal sees them).
    Journald {
        /// The connection.
        log: native::Native,
        /// Echo human lines on standard error.
        echo: bool,
        /// The echoed lines begin with their time ([`Journal::with_times`]).
        times: bool,
    },
    /// Human lines on standard error.
    Text {
        /// Each begins with its time ([`Journal::with_times`]).
        times: bool,
    },
    /// `key=value` lines on standard error.
    Logfmt,
    /// Collected in memory (tests).
    Memory(Vec<Entry>),
}

/// The journald native socket (systemd-journald.service(8)).
pub const JOURNAL_SOCKET: &str = "/run/systemd/journal/socket";

fn stderr_is_terminal() -> bool {
    // SAFETY: isatty only inspects the descriptor.
    unsafe { libc::isatty(libc::STDERR_FILENO) == 1 }
}

impl Journal {
    /// The destination `format` asks for (see [`LogFormat`]).
    pub fn open(format: LogFormat) -> Journal {
        match format {
            LogFormat::Logfmt => return Journal::Logfmt,
            LogFormat::Text => return Journal::Text { times: false },
            LogFormat::Auto | LogFormat::Journal => {}
        }
        if std::path::Path::new(JOURNAL_SOCKET).exists() {
            if let Ok(log) = native::Native::connect(std::path::Path::new(JOURNAL_SOCKET)) {
                return Journal::Journald {
                    log,
                    echo: stderr_is_terminal(),
                    times: false,
                };
            }
        }
        if format == LogFormat::Journal {
            let _ = writeln!(
                std::io::stderr(),
                "rtbench: warning: no journald at {JOURNAL_SOCKET}: entries go to standard error"
            );
        }
        Journal::Text { times: false }
    }

    /// The same destination, its human lines each beginning with their time
    /// ([`stamped`]): for a daemon (`rtbench monitor`), whose log without journald
    /// (`2>&1 | logger`, a serial console, a terminal) would otherwise have no time.
    /// Journald and logfmt lines are unchanged: journald and syslog stamp their own.
    pub fn with_times(mut self) -> Journal {
        if let Journal::Text { times } | Journal::Journald { times, .. } = &mut self {
            *times = true;
        }
        self
    }

    /// Sends one entry. A journald failure falls back to standard error, so the facts
    /// are never lost.
    pub fn send(&mut self, e: &Entry) {
        let _ = self.try_send(e);
    }

    /// [`Journal::send`], returning the error of the write to standard error, if one
    /// was made and failed (EPIPE when the reader of a `| logger` pipe is gone; the
    /// caller must ignore SIGPIPE to see it). journald's own failures are not errors
    /// here: they fall back to standard error.
    pub fn try_send(&mut self, e: &Entry) -> std::io::Result<()> {
        e.check_catalog();
        match self {
            Journal::Journald { log, echo, times } => {
                let pid = std::process::id().to_string();
                let mut kvs: Vec<(&str, &str)> = vec![
                    ("MESSAGE", e.message.as_str()),
                    ("PRIORITY", e.priority.syslog()),
                    ("SYSLOG_IDENTIFIER", "rtbench"),
                    ("SYSLOG_PID", pid.as_str()),
                    ("MESSAGE_ID", e.message_id),
                ];
                kvs.extend(e.fields.iter().map(|(k, v)| (*k, v.as_str())));
                // EAGAIN (journald not reading: its queue is full) is a failure like
                // any other: the entry goes to standard error, nothing waits.
                let r = log.send(&kvs);
                if r.is_err() {
                    writeln!(std::io::stderr(), "{}", e.to_logfmt())
                } else if *echo {
                    writeln!(std::io::stderr(), "{}", e.human(*times))
                } else {
                    Ok(())
                }
            }
            Journal::Text { times } => writeln!(std::io::stderr(), "{}", e.human(*times)),
            Journal::Logfmt => writeln!(std::io::stderr(), "{}", e.to_logfmt()),
            Journal::Memory(v) => {
                v.push(e.clone());
                Ok(())
            }
        }
    }

    /// Whether entries reach journald.
    pub fn is_journald(&self) -> bool {
        matches!(self, Journal::Journald { .. })
    }

    /// Whether a person reads the entries on standard error as text (so a separate
    /// human line would repeat them).
    pub fn shows_text(&self) -> bool {
        matches!(
            self,
            Journal::Text { .. } | Journal::Journald { echo: true, .. }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_id_is_in_the_catalog_once_and_the_catalog_has_no_other() {
        let catalog = include_str!("../../../systemd/rtbench.catalog");
        for id in ALL_IDS {
            assert_eq!(catalog.matches(&format!("-- {id}\n")).count(), 1, "{id}");
        }
        let listed = catalog.lines().filter(|l| l.starts_with("-- ")).count();
        assert_eq!(listed, ALL_IDS.len());
        assert_eq!(
            catalog_fields(MSG_PLACEMENT).unwrap(),
            ["RTBENCH_PLACEMENT", "RTBENCH_MEASURED_CPUS", "RTBENCH_CPUS"]
        );
    }

    /// The self-test's thread entry and the monitor's window entry write the same
    /// figures, P50 and P99.99 included, from the same statistics.
    #[cfg(feature = "monitor")]
    #[test]
    fn the_self_test_and_the_monitor_write_the_same_figures() {
        let mut stats = crate::measure::stats::LatencyStats::new(None);
        for v in (1..=10_000u64).map(|i| i * 137 % 90_001) {
            stats.record(v);
        }
        let th = crate::results::summary::ThreadSummary::from_stats(0, Some(1), 98, 1000, &stats);
        let wc = crate::results::window::WindowCpu::from_stats(1, &stats, 0);
        let names = |e: &Entry| e.fields.iter().map(|f| f.0).collect::<Vec<_>>();
        let a = Entry::new(MSG_RESULT, Priority::Info, "").figures(&(&th).into());
        let b = Entry::new(MSG_MONITOR_WINDOW, Priority::Info, "").figures(&(&wc).into());
        assert_eq!(names(&a), names(&b));
        for f in [
            "RTBENCH_P50_NS",
            "RTBENCH_P99_NS",
            "RTBENCH_P999_NS",
            "RTBENCH_P9999_NS",
            "RTBENCH_MAX_NS",
            "RTBENCH_SAMPLES",
        ] {
            assert_eq!(a.get(f), b.get(f), "{f}");
            assert_ne!(a.get(f), Some("none"), "{f}");
        }
    }

    #[test]
    #[should_panic(expected = "lacks the catalog's @RTBENCH_CONFIG@")]
    fn an_entry_without_a_catalog_field_is_caught() {
        Journal::Memory(Vec::new()).send(&Entry::new(MSG_CONFIG, Priority::Error, "x"));
    }

    #[test]
    fn text_lines_each_carry_the_time() {
        let s = stamped("one\ntwo");
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines.len(), 2, "{s}");
        for (l, text) in lines.iter().zip(["one", "two"]) {
            // 2026-12-01T20:10:00Z one
            let (stamp, rest) = l.split_once(' ').unwrap();
            assert_eq!(rest, text);
            assert_eq!(stamp.len(), 20, "{l}");
            assert!(stamp.ends_with('Z') && stamp.as_bytes()[10] == b'T', "{l}");
        }
    }

    #[test]
    fn logfmt_quotes_what_needs_quoting() {
        let e = Entry::new(MSG_SUMMARY, Priority::Info, "self-test PASS: \"all\" good")
            .field("RTBENCH_VERDICT", "pass")
            .field("RTBENCH_KERNEL", "6.1.0 rt");
        assert_eq!(
            e.to_logfmt(),
            "MESSAGE_ID=7b1dd0eea94d4cc4bd8f9e6c91b6465d PRIORITY=5 RTBENCH_VERDICT=pass \
             RTBENCH_KERNEL=\"6.1.0 rt\" MESSAGE=\"self-test PASS: \\\"all\\\" good\""
        );
    }
}
