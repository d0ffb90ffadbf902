//! Structured journal entries (systemd journal native protocol through
//! systemd-journal-logger), or `key=value` lines on standard error where there is no
//! journald (BusyBox init on Buildroot). Each entry type has a constant MESSAGE_ID,
//! explained in `systemd/rtbench.catalog`.
//!
//! Source: systemd.journal-fields(7), sd_journal_send(3), journalctl(1) `--catalog`.

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
