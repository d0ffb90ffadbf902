//! `rtbench diagnose -o FILE.tar.gz`: everything a field engineer needs about a unit's
//! real-time behaviour in one file, collected with no network and no other tool
//! (`journalctl` is used when journald is there): the last self-test results, the
//! monitor's recent windows and state, `tune check` against the configuration, the
//! system snapshot ([`system`]) and the units' journal. `SUMMARY.txt`, the first file,
//! says what looks wrong ([`findings`]) and lists the rest.

pub mod findings;
pub mod system;

use crate::config::Config;
use crate::report::bundle::Bundle;
use crate::results::select::{self, ThisBoot};
use crate::results::store::{self, Store, StoredRun};
use crate::results::window::{SinceSummary, WindowStore};
use crate::sys::info::SysInfo;
use crate::sys::input;
use crate::sys::SysRoot;
use findings::{Facts, Severity};
use std::fmt::Write;
use std::path::PathBuf;
use std::time::Duration;

/// Stored self-test runs copied into the bundle (the newest).
pub const RUNS: usize = 3;
/// Journal lines kept per unit at most.
pub const JOURNAL_LINES: usize = 20_000;

/// What to collect, validated.
#[derive(Debug, Clone)]
pub struct DiagnosePlan {
    /// The configuration file read, and its text (`None`: the defaults).
    pub config: Option<(PathBuf, String)>,
    /// The configuration (defaults when there was no file).
    pub cfg: Config,
    /// The self-test results store.
    pub results_dir: PathBuf,
    /// The monitor's directory.
    pub monitor_dir: PathBuf,
    /// The period of monitor windows and journal entries.
    pub since: Duration,
}

/// Collects the bundle at wall time `now_s` below `root` (`/` except in tests).
pub fn collect(plan: &DiagnosePlan, root: &SysRoot, now_s: i64) -> Bundle {
    let sysinfo = SysInfo::read(root);
    let mut files: Vec<(String, String)> = Vec::new();
    let mut missing = Vec::new();

    // rtbench itself.
    files.push((
        "rtbench/version.txt".into(),
        format!("rtbench {}\n", crate::VERSION),
    ));
    files.push((
        "rtbench/rtbench.toml".into(),
        match &plan.config {
            Some((_, text)) => text.clone(),
            None => format!(
                "# no configuration file at {}: the documented defaults were used\n",
                crate::config::DEFAULT_PATH
            ),
        },
    ));
    if let Ok(j) = serde_json::to_string_pretty(&sysinfo) {
        files.push(("system/sysinfo.json".into(), j + "\n"));
    }

    // Self-test results.
    let boot = store::current_boot_id();
    let last_run = self_test(plan, &boot, &mut files, &mut missing);

    // Monitor.
    let monitor = monitor(plan, now_s, &mut files, &mut missing);

    // Tuning against the configuration (read-only).
    let tune = crate::tune::check(root, &plan.cfg.tuning);
    let config_name = plan.config.as_ref().map_or_else(
        || "(defaults)".to_string(),
        |(p, _)| p.display().to_string(),
    );
    files.push((
        "rtbench/tune-check.txt".into(),
        crate::report::tuning::render(&tune, &config_name),
    ));
    if let Ok(j) = serde_json::to_string_pretty(&tune) {
        files.push(("rtbench/tune-check.json".into(), j + "\n"));
    }

    // The system.
    let snapshot = system::collect(root, &mut files);
    missing.extend(snapshot.missing.iter().cloned());

    // The journal.
    let journald =
        root.is_host() && std::path::Path::new(crate::report::journal::JOURNAL_SOCKET).exists();
    journal(plan, root, journald, &mut files, &mut missing);

    let measured = plan.cfg.cyclic_cpus.union(&plan.cfg.monitor.cpus);
    if let Some((r, _)) = &last_run {
        if let Some(text) = explained_text(r) {
            files.push(("rtbench/explained.txt".into(), text));
        }
    }
    let found = findings::findings(&Facts {
        sysinfo: &sysinfo,
        snapshot: &snapshot,
        last_run: last_run.as_ref().map(|(r, b)| (r, *b)),
        monitor: monitor.as_ref(),
        tune: Some(&tune),
        journald,
        measured,
        measure_priority: plan
            .cfg
            .cyclic
            .priority
            .max(plan.cfg.monitor.priority)
            .max(1) as u32,
    });
    let summary = summary(&sysinfo, now_s, &found, &files, &missing);
    let stamp = crate::date::utc_stamp(now_s);
    let host: String = sysinfo
        .nodename
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut b = Bundle {
        top: format!("rtbench-diagnose-{host}-{stamp}"),
        mtime: now_s,
        files: Vec::with_capacity(files.len() + 1),
    };
    b.add("SUMMARY.txt", summary);
    for (name, text) in files {
        b.add(name, text);
    }
    b
}

/// The explanations of `run`'s late samples for people: per test, each explained
/// sample largest first (headline, breakdown), the trace excerpt around the largest,
/// and the kernel log lines of the run with their wall-clock times; `None` when the
/// run explained nothing.
fn explained_text(run: &StoredRun) -> Option<String> {
    let mut out = String::new();
    for t in &run.tests {
        let Some(x) = &t.explain else { continue };
        let _ = writeln!(
            out,
            "== {}: {} explained, {} not (the recorder was busy); analysis at most {} ms",
            t.test,
            x.total(),
            x.missed,
            x.analysis_max_ms
        );
        let mut kept: Vec<_> = x.explained.iter().collect();
        kept.sort_by_key(|e| std::cmp::Reverse(e.spike.latency_ns()));
        for e in kept {
            let _ = writeln!(
                out,
                "\n{} at {}: {} sample\n  {}",
                crate::results::summary::thread_label(&t.test, e.spike.thread, Some(e.spike.cpu)),
                e.spike.when(),
                crate::duration::us(e.spike.latency_ns(), crate::duration::UsStyle::Text),
                crate::explain::text::headline(e)
            );
            for d in crate::explain::text::details(e) {
                let _ = writeln!(out, "  {d}");
            }
        }
        if !x.excerpt.is_empty() {
            let _ = writeln!(
                out,
                "\n-- the trace of the largest (tracefs, trace_clock mono: seconds since boot) --"
            );
            for l in &x.excerpt {
                let _ = writeln!(out, "{l}");
            }
        }
        if !x.kernel_lines.is_empty() {
            let _ = writeln!(out, "\n-- kernel log during the test --");
            for l in &x.kernel_lines {
                let _ = writeln!(out, "[{}] {}", crate::date::iso_ms(l.wall_ns), l.text);
            }
        }
        for n in &x.notes {
            let _ = writeln!(out, "note: {n}");
        }
        out.push('\n');
    }
    (!out.is_empty()).then_some(out)
}

/// The newest stored runs (and the unstored run) into `files`; returns the run that
/// `rtbench report` shows as this boot's ([`select::select`]), or the newest of
/// another boot, and whether it is of this boot.
fn self_test(
    plan: &DiagnosePlan,
    boot: &str,
    files: &mut Vec<(String, String)>,
    missing: &mut Vec<String>,
) -> Option<(StoredRun, bool)> {
    let store = Store::new(&plan.results_dir, 1);
    let list = match store.list() {
        Ok(l) => l,
        Err(e) => {
            missing.push(format!("{}: {e}", plan.results_dir.display()));
            Vec::new()
        }
    };
    for p in list.iter().rev().take(RUNS) {
        let name = p
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        // Kept files (crate::sys::kept): regular files of sane size only, no link
        // followed (a FIFO named like a run must not stall the collection, a link to
        // /dev/zero exhaust memory, nor a link to another file put it in the bundle).
        match crate::sys::kept::read_text(p, input::MAX_INPUT_BYTES) {
            Ok(text) => files.push((format!("rtbench/results/{name}"), text)),
            Err(e) => missing.push(format!("{}: {e}; not copied", p.display())),
        }
    }
    let fallback_dir = &plan.cfg.output.fallback_dir;
    if let Some(Ok(f)) = store::load_fallback(fallback_dir) {
        if let Ok(text) = serde_json::to_string_pretty(&f) {
            files.push(("rtbench/results/unstored-run.json".into(), text + "\n"));
        }
    }
    // The run `rtbench report` shows as this boot's, or the newest of another boot.
    let mut sel = select::select(
        &plan.results_dir,
        fallback_dir,
        boot,
        false,
        &mut Vec::new(),
    )
    .ok()?;
    let this = sel.this_boot != ThisBoot::Missing;
    let last = sel.shown.pop()?.run;
    files.push((
        "rtbench/selftest-report.txt".into(),
        crate::report::table::render(&last),
    ));
    Some((last, this))
}

/// The monitor's store, state and the summary of the period into `files`; store files
/// that are not regular files into `missing`.
fn monitor(
    plan: &DiagnosePlan,
    now_s: i64,
    files: &mut Vec<(String, String)>,
    missing: &mut Vec<String>,
) -> Option<SinceSummary> {
    let store = WindowStore::new(&plan.monitor_dir, u64::MAX);
    let present = store.files();
    if present.is_empty() {
        return None;
    }
    for p in &present {
        if let Ok(t) = crate::sys::kept::read_text(p, input::MAX_INPUT_BYTES) {
            let name = p
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            files.push((format!("rtbench/monitor/{name}"), t));
        }
    }
    let state = plan.monitor_dir.join(crate::monitor::aggregate::STATE_FILE);
    let state_text = crate::sys::kept::read_text(&state, input::MAX_INPUT_BYTES).ok();
    if let Some(t) = &state_text {
        files.push(("rtbench/monitor/state.json".into(), t.clone()));
    }
    let since_s = now_s.saturating_sub(i64::try_from(plan.since.as_secs()).unwrap_or(i64::MAX));
    let (summary, snapshot) = match store.since(since_s, now_s) {
        Ok(r) => r,
        Err(e) => {
            missing.push(format!("{}: {e}", plan.monitor_dir.display()));
            return None;
        }
    };
    for (path, kind) in &snapshot.skipped.files {
        missing.push(format!("{}: a {kind}, not a regular file", path.display()));
    }
    // A store whose sums do not fit (a damaged one) is said, not summarised wrongly.
    let mut s = match summary {
        Ok(s) => s,
        Err(e) => {
            files.push((
                "rtbench/monitor-report.txt".into(),
                format!("not summarised: {e}\n"),
            ));
            return None;
        }
    };
    if let Some(st) =
        state_text.and_then(|t| serde_json::from_str::<crate::monitor::history::State>(&t).ok())
    {
        s.add_alltime(|cpu| st.alltime(cpu));
    }
    let mut text = Vec::new();
    let _ = crate::report::Sink::write(&crate::report::monitor::SinceTable, &s, &mut text);
    files.push((
        "rtbench/monitor-report.txt".into(),
        String::from_utf8_lossy(&text).into_owned(),
    ));
    Some(s)
}

/// `journalctl` of rtbench's units for the period, as text and as JSON entries; on
/// images without journald, BusyBox syslogd's `/var/log/messages` (its last 2 MiB).
fn journal(
    plan: &DiagnosePlan,
    root: &SysRoot,
    journald: bool,
    files: &mut Vec<(String, String)>,
    missing: &mut Vec<String>,
) {
    if journald {
        let since = format!("--since=-{}s", plan.since.as_secs());
        let lines = format!("--lines={JOURNAL_LINES}");
        for (format, name) in [
            ("short-iso-precise", "journal/rtbench.txt"),
            ("json", "journal/rtbench.json"),
        ] {
            let out = std::process::Command::new("journalctl")
                .args(["-u", "rtbench", "-u", "rtbench-monitor", "--no-pager"])
                .args([since.as_str(), lines.as_str(), "-o", format])
                .stdin(std::process::Stdio::null())
                .output();
            match out {
                Ok(o) if o.status.success() => {
                    files.push((name.into(), String::from_utf8_lossy(&o.stdout).into_owned()))
                }
                Ok(o) => missing.push(format!(
                    "journalctl -o {format}: {}",
                    String::from_utf8_lossy(&o.stderr).trim()
                )),
                Err(e) => missing.push(format!("journalctl: {e}")),
            }
        }
    }
    if let Ok(text) = root.read("/var/log/messages") {
        let keep = 2 << 20;
        let start = text.len().saturating_sub(keep);
        let start = (start..text.len())
            .find(|&i| text.is_char_boundary(i))
            .unwrap_or(text.len());
        files.push((
            "journal/var-log-messages.txt".into(),
            text[start..].to_string(),
        ));
    } else if !journald {
        missing.push("journal: no journald and no /var/log/messages".into());
    }
}

/// `SUMMARY.txt`: the unit, what looks wrong, what could not be collected, the files.
fn summary(
    si: &SysInfo,
    now_s: i64,
    found: &[findings::Finding],
    files: &[(String, String)],
    missing: &[String],
) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "rtbench diagnostics of {} at {}",
        si.nodename,
        crate::date::iso_s(now_s)
    );
    let _ = writeln!(
        s,
        "kernel {} ({}), {} {}, rtbench {}",
        si.release,
        si.preempt_model,
        si.machine,
        if si.realtime {
            "PREEMPT_RT"
        } else {
            "not PREEMPT_RT"
        },
        crate::VERSION
    );
    let _ = writeln!(
        s,
        "CPUs online {}, isolated {}, housekeeping {}",
        si.cpus_online,
        if si.cpus_isolated.is_empty() {
            "none"
        } else {
            &si.cpus_isolated
        },
        si.cpus_housekeeping
    );
    let _ = writeln!(s, "boot id {}\n", store::current_boot_id());
    let problems = found
        .iter()
        .filter(|f| f.severity == Severity::Problem)
        .count();
    if problems == 0 {
        let _ = writeln!(s, "What looks wrong: nothing found.");
    } else {
        let _ = writeln!(s, "What looks wrong ({problems}):");
    }
    for f in found.iter().filter(|f| f.severity == Severity::Problem) {
        let _ = writeln!(s, "  PROBLEM  {}", f.text);
    }
    let notes: Vec<_> = found
        .iter()
        .filter(|f| f.severity == Severity::Note)
        .collect();
    if !notes.is_empty() {
        let _ = writeln!(s, "\nWorth knowing:");
        for f in notes {
            let _ = writeln!(s, "  note     {}", f.text);
        }
    }
    if !missing.is_empty() {
        let _ = writeln!(s, "\nNot collected:");
        for m in missing {
            let _ = writeln!(s, "  {m}");
        }
    }
    let _ = writeln!(s, "\nFiles:");
    for (name, text) in files {
        let _ = writeln!(s, "  {name} ({} bytes)", text.len());
    }
    s
}
