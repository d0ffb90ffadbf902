//! `rtbench tune`'s text report: one line per item (`STATUS ITEM DETAIL [PATH]`), the
//! recovered and rolled-back changes, the suggested bootargs and a summary; and the
//! text of `rtbench tune status`.

use super::Sink;
use crate::tune::journal::{Journal, JournalState};
use crate::tune::{ItemReport, Status, TuningReport};
use std::fmt::Write as _;
use std::path::Path;

/// `rtbench tune check|apply|revert`'s text report (see [`render`]) for the
/// configuration file `config`.
pub struct TuneText<'a> {
    /// The configuration file, as named on the first line.
    pub config: &'a str,
}

impl Sink<TuningReport> for TuneText<'_> {
    fn write(&self, report: &TuningReport, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        out.write_all(render(report, self.config).as_bytes())
    }
}

/// `rtbench tune status`'s text (see [`render_status`]) for the journal at `path`.
pub struct StatusText<'a> {
    /// The journal file.
    pub path: &'a Path,
}

impl Sink<Option<Journal>> for StatusText<'_> {
    fn write(&self, j: &Option<Journal>, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        out.write_all(render_status(self.path, j.as_ref()).as_bytes())
    }
}

fn line(out: &mut String, r: &ItemReport) {
    let _ = write!(
        out,
        "  {:<15} {:<34} {}",
        r.status.as_str(),
        r.item,
        r.detail
    );
    if let (Some(p), true) = (&r.path, r.status != Status::Ok) {
        let _ = write!(out, "  [{p}]");
    }
    out.push('\n');
}

/// The text report: one line per item (`STATUS ITEM DETAIL [PATH]`), then recovered and
/// rolled-back changes, the suggested bootargs and a summary.
pub fn render(report: &TuningReport, config: &str) -> String {
    let mut out = String::new();
    let action = serde_json::to_value(report.action)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let _ = writeln!(out, "rtbench tune {action} ({config})");
    if !report.recovered.is_empty() {
        out.push_str("recovered: an interrupted apply was rolled back first:\n");
        report.recovered.iter().for_each(|r| line(&mut out, r));
    }
    if report.items.is_empty() && !report.checked_nothing() {
        out.push_str("  nothing to do\n");
    }
    report.items.iter().for_each(|r| line(&mut out, r));
    if report.checked_nothing() {
        out.push_str(if report.items.is_empty() {
            "  nothing checked: [tuning] configures no item (rtbench config template lists them)\n"
        } else {
            "  nothing checked: no configured knob exists on this system\n"
        });
    }
    if !report.rolled_back.is_empty() {
        out.push_str("rolled back (newest first):\n");
        report.rolled_back.iter().for_each(|r| line(&mut out, r));
    }
    if let Some(b) = &report.bootargs {
        let _ = writeln!(out, "bootargs: {b}");
    }
    for n in &report.bootargs_notes {
        let _ = writeln!(out, "bootargs note: {n}");
    }
    let counts: Vec<String> = [
        Status::Ok,
        Status::NotApplicable,
        Status::Unsupported,
        Status::Deviation,
        Status::Failed,
    ]
    .iter()
    .map(|&s| format!("{} {}", report.count(s), s.as_str()))
    .collect();
    let _ = writeln!(
        out,
        "summary: {}; {} writes",
        counts.join(", "),
        report.writes
    );
    out
}

/// The text of `rtbench tune status` for the journal at `path` (`None`: no journal).
pub fn render_status(path: &Path, journal: Option<&Journal>) -> String {
    let mut out = String::new();
    match journal {
        None => {
            let _ = writeln!(out, "journal {}: none (nothing applied)", path.display());
        }
        Some(j) => {
            let _ = writeln!(
                out,
                "journal {}: {} by pid {} at {}, {} change(s)",
                path.display(),
                j.state.as_str(),
                j.pid,
                i64::try_from(j.updated_unix_s)
                    .map_or_else(|_| j.updated_unix_s.to_string(), crate::date::iso_s),
                j.entries.len()
            );
            if j.state == JournalState::Applying {
                out.push_str("an apply was interrupted: the next apply or revert rolls back its changes first\n");
            }
            for e in &j.entries {
                let _ = writeln!(
                    out,
                    "  {:<34} {}  {} -> {}",
                    e.item,
                    e.step.path,
                    e.step.kind.normalise(&e.step.original),
                    e.step.kind.normalise(&e.step.desired)
                );
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `tune status` says when the journal was written in the date every text of
    /// rtbench uses (`crate::date::iso_s`), not in seconds since the epoch.
    #[test]
    fn status_dates_the_journal_as_every_output_does() {
        let j = Journal {
            pid: 42,
            updated_unix_s: 1_234_567_890,
            ..Journal::default()
        };
        let text = render_status(Path::new("/run/rtbench/journal.json"), Some(&j));
        assert_eq!(
            text,
            "journal /run/rtbench/journal.json: committed by pid 42 at 2009-02-13T23:31:30Z, 0 change(s)\n"
        );
    }
}
