//! The self-test's structured journal entries — one function per entry kind, every
//! field named `RTBENCH_*` — and their destination: journald (native protocol through
//! systemd-journal-logger), or `key=value` lines on standard error where there is no
//! journald (BusyBox init on Buildroot). Each entry kind has a constant MESSAGE_ID,
//! explained in `systemd/rtbench.catalog`.
//!
//! Source: systemd.journal-fields(7), sd_journal_send(3), journalctl(1) `--catalog`.

use super::store::StoredRun;
use super::summary::{ThreadSummary, Verdict};
use crate::error::ConfigError;
use crate::measure::harness::StopCause;
use crate::sys::clock::NS_PER_US;
use crate::tune::{ItemReport, Status};
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

/// Syslog priority of an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Priority {
    /// err (3)
    Error,
    /// warning (4)
    Warning,
    /// notice (5) — maps to info in the log crate, which has no notice level
    Info,
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
    /// A new entry with no extra fields.
    pub fn new(message_id: &'static str, priority: Priority, message: impl Into<String>) -> Self {
        Entry {
            message_id,
            priority,
            message: message.into(),
            fields: Vec::new(),
        }
    }

    /// Adds a field.
    pub fn field(mut self, name: &'static str, value: impl ToString) -> Self {
        self.fields.push((name, value.to_string()));
        self
    }

    /// The entry as one logfmt line: `MESSAGE_ID=… PRIORITY=… RTBENCH_…=… MESSAGE="…"`.
    pub fn to_logfmt(&self) -> String {
        let mut s = format!(
            "MESSAGE_ID={} PRIORITY={}",
            self.message_id,
            match self.priority {
                Priority::Error => 3,
                Priority::Warning => 4,
                Priority::Info => 5,
            }
        );
        for (k, v) in &self.fields {
            s.push_str(&format!(" {k}={}", logfmt_value(v)));
        }
        s.push_str(&format!(" MESSAGE={}", logfmt_value(&self.message)));
        s
    }
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

/// Where entries go.
pub enum Journal {
    /// journald, through its native socket.
    Journald(systemd_journal_logger::JournalLog),
    /// `key=value` lines on standard error.
    Stderr,
    /// Collected in memory (tests).
    Memory(Vec<Entry>),
}

/// The journald native socket (systemd-journald.service(8)).
pub const JOURNAL_SOCKET: &str = "/run/systemd/journal/socket";

impl Journal {
    /// journald when its socket exists, else standard error.
    pub fn open() -> Journal {
        if std::path::Path::new(JOURNAL_SOCKET).exists() {
            if let Ok(j) = systemd_journal_logger::JournalLog::new() {
                return Journal::Journald(j.with_syslog_identifier("rtbench".into()));
            }
        }
        Journal::Stderr
    }

    /// Sends one entry. A journald failure falls back to standard error, so the facts
    /// are never lost.
    pub fn send(&mut self, e: &Entry) {
        match self {
            Journal::Journald(j) => {
                let mut kvs: Vec<(&str, &str)> = vec![("MESSAGE_ID", e.message_id)];
                kvs.extend(e.fields.iter().map(|(k, v)| (*k, v.as_str())));
                let level = match e.priority {
                    Priority::Error => log::Level::Error,
                    Priority::Warning => log::Level::Warn,
                    Priority::Info => log::Level::Info,
                };
                let kv_slice: &[(&str, &str)] = &kvs;
                let r = j.journal_send(
                    &log::Record::builder()
                        .args(format_args!("{}", e.message))
                        .level(level)
                        .target("rtbench")
                        .key_values(&kv_slice)
                        .build(),
                );
                if r.is_err() {
                    let _ = writeln!(std::io::stderr(), "{}", e.to_logfmt());
                }
            }
            Journal::Stderr => {
                let _ = writeln!(std::io::stderr(), "{}", e.to_logfmt());
            }
            Journal::Memory(v) => v.push(e.clone()),
        }
    }

    /// Whether entries reach journald.
    pub fn is_journald(&self) -> bool {
        matches!(self, Journal::Journald(_))
    }
}

/// One tuning item's outcome (`RTBENCH_TUNE_ITEM`, `_STATUS`, `_CHANGED`, `_PATH`,
/// `_ERRNO`).
pub fn tuning_item(i: &ItemReport) -> Entry {
    {
        let priority = match i.status {
            Status::Failed => Priority::Error,
            Status::Deviation | Status::Unsupported => Priority::Warning,
            Status::Ok | Status::NotApplicable => Priority::Info,
        };
        let mut e = Entry::new(
            MSG_TUNING,
            priority,
            format!("tuning {}: {} ({})", i.item, i.status.as_str(), i.detail),
        )
        .field("RTBENCH_TUNE_ITEM", &i.item)
        .field("RTBENCH_TUNE_STATUS", i.status.as_str())
        .field("RTBENCH_TUNE_CHANGED", i.changed as u8);
        if let Some(p) = &i.path {
            e = e.field("RTBENCH_TUNE_PATH", p);
        }
        if let Some(n) = i.errno {
            e = e.field("RTBENCH_TUNE_ERRNO", n);
        }
        e
    }
}

/// One test's result on one CPU: the figures in **ns** as fields, the verdict of its
/// checks (`pass`, `fail`, or `none` when nothing was judged).
pub fn thread_result(test: &str, th: &ThreadSummary, verdict: &Verdict) -> Entry {
    let checks: Vec<_> = verdict.checks_for(test, th.thread).collect();
    let ok = checks.iter().all(|c| c.pass);
    let word = if checks.is_empty() {
        "none"
    } else if ok {
        "pass"
    } else {
        "fail"
    };
    let cpu = th.cpu.map_or_else(|| "-".to_string(), |c| c.to_string());
    let limit = checks.iter().find(|c| c.what == "max").map(|c| c.limit);
    let mut e = Entry::new(
        MSG_RESULT,
        if ok { Priority::Info } else { Priority::Warning },
        format!(
            "{test} CPU {cpu}: max {} us, p99.9 {} us, p99 {} us, avg {} us, {} overruns, {} samples: {word}",
            th.max_ns / NS_PER_US,
            th.p999_ns / NS_PER_US,
            th.p99_ns / NS_PER_US,
            th.avg_ns / NS_PER_US,
            th.overruns,
            th.count
        ),
    )
    .field("RTBENCH_TEST", test)
    .field("RTBENCH_CPU", &cpu)
    .field("RTBENCH_THREAD", th.thread)
    .field("RTBENCH_SAMPLES", th.count)
    .field("RTBENCH_MIN_NS", th.min_ns)
    .field("RTBENCH_AVG_NS", th.avg_ns)
    .field("RTBENCH_P50_NS", th.p50_ns)
    .field("RTBENCH_P99_NS", th.p99_ns)
    .field("RTBENCH_P999_NS", th.p999_ns)
    .field("RTBENCH_P9999_NS", th.p9999_ns)
    .field("RTBENCH_MAX_NS", th.max_ns)
    .field("RTBENCH_OVERRUNS", th.overruns);
    if let Some(l) = limit {
        e = e.field("RTBENCH_LIMIT_NS", l);
    }
    e.field("RTBENCH_VERDICT", word)
}

/// The self-test's summary and verdict, with the results file (empty when it could
/// not be stored).
pub fn summary(run: &StoredRun, stop: StopCause, results_file: &str) -> Entry {
    let worst = run
        .tests
        .iter()
        .flat_map(|t| t.threads.iter())
        .map(|t| t.max_ns)
        .max()
        .unwrap_or(0);
    let failed: Vec<String> = run
        .verdict
        .checks
        .iter()
        .filter(|c| !c.pass)
        .map(|c| {
            format!(
                "{} cpu {} {} {} > {}",
                c.test,
                c.cpu.map_or_else(|| "-".into(), |x: usize| x.to_string()),
                c.what,
                c.value,
                c.limit
            )
        })
        .chain(run.verdict.problems.iter().cloned())
        .collect();
    let cpus: usize = run.tests.iter().map(|t| t.threads.len()).sum();
    let mut msg = format!(
        "rtbench self-test {}: {} on {cpus} threads for {:.0} s, worst max {} us",
        run.verdict.word().to_uppercase(),
        run.tests
            .iter()
            .map(|t| t.test.as_str())
            .collect::<Vec<_>>()
            .join("+"),
        run.duration_s,
        worst / NS_PER_US
    );
    if stop.interrupted() {
        msg.push_str(" (interrupted)");
    }
    if run.verdict.checks.is_empty() {
        msg.push_str(" (no [limits] configured: measured, nothing judged)");
    }
    if !failed.is_empty() {
        msg.push_str(&format!("; failed: {}", failed.join("; ")));
    }
    Entry::new(
        MSG_SUMMARY,
        if run.verdict.pass {
            Priority::Info
        } else {
            Priority::Error
        },
        msg,
    )
    .field("RTBENCH_VERDICT", run.verdict.word())
    .field(
        "RTBENCH_TESTS",
        run.tests
            .iter()
            .map(|t| t.test.as_str())
            .collect::<Vec<_>>()
            .join(","),
    )
    .field("RTBENCH_THREADS", cpus)
    .field("RTBENCH_DURATION_S", format!("{:.1}", run.duration_s))
    .field("RTBENCH_MAX_NS", worst)
    .field("RTBENCH_FAILED_CHECKS", failed.len())
    .field("RTBENCH_INTERRUPTED", stop.interrupted() as u8)
    .field("RTBENCH_KERNEL", &run.sysinfo.release)
    .field("RTBENCH_PREEMPT_RT", run.sysinfo.realtime as u8)
    .field(
        "RTBENCH_LOAD",
        if run.load.is_empty() {
            "none"
        } else {
            &run.load
        },
    )
    .field("RTBENCH_RESULTS_FILE", results_file)
}

/// An invalid configuration, its fields taken from the error: `RTBENCH_CONFIG` (the
/// file), `RTBENCH_CONFIG_LINE` and `RTBENCH_CONFIG_KEY` when it has them.
pub fn config_error(err: &ConfigError) -> Entry {
    let mut e =
        Entry::new(MSG_CONFIG, Priority::Error, err.to_string()).field("RTBENCH_CONFIG", &err.file);
    if let Some(line) = err.line() {
        e = e.field("RTBENCH_CONFIG_LINE", line);
    }
    if let Some(key) = err.key() {
        e = e.field("RTBENCH_CONFIG_KEY", key);
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;

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
