//! One constructor per entry kind of the self-test's journal (see the parent module):
//! the fields each MESSAGE_ID always carries, as `systemd/rtbench.catalog` uses them.

use super::{
    Entry, Priority, MSG_ABORTED, MSG_CONFIG, MSG_DEFAULTS, MSG_EXPLAINED, MSG_OUTPUT,
    MSG_PLACEMENT, MSG_READY, MSG_RESULT, MSG_SUMMARY, MSG_TUNING,
};
use crate::duration::{us, UsStyle::Text};
use crate::error::ConfigError;
use crate::measure::harness::StopCause;
use crate::results::store::StoredRun;
use crate::results::summary::{TestSummary, ThreadSummary, Verdict};
use crate::tune::{ItemReport, Status};

/// One tuning item's outcome (`RTBENCH_TUNE_ITEM`, `_STATUS`, `_CHANGED`, and when
/// known `_PATH`, `_ERRNO`, `_EXPECTED`, `_FOUND`).
pub fn tuning_item(i: &ItemReport) -> Entry {
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
    if let Some(v) = &i.expected {
        e = e.field("RTBENCH_TUNE_EXPECTED", v);
    }
    if let Some(v) = &i.found {
        e = e.field("RTBENCH_TUNE_FOUND", v);
    }
    e
}

/// The journal field of a limit on `what` (`max` → `RTBENCH_LIMIT_MAX_NS`).
fn limit_field(what: &str) -> &'static str {
    match what {
        "max" => "RTBENCH_LIMIT_MAX_NS",
        "avg" => "RTBENCH_LIMIT_AVG_NS",
        "p99" => "RTBENCH_LIMIT_P99_NS",
        "p999" => "RTBENCH_LIMIT_P999_NS",
        "p9999" => "RTBENCH_LIMIT_P9999_NS",
        "p99999" => "RTBENCH_LIMIT_P99999_NS",
        "p999999" => "RTBENCH_LIMIT_P999999_NS",
        _ => "RTBENCH_LIMIT_OVERRUNS",
    }
}

/// One test's result on one CPU: the figures in **ns** as fields, every limit that
/// applied (`RTBENCH_LIMIT_<STAT>_NS`, and `RTBENCH_LIMITS` for people, `none` when no
/// limit applied), every failed check (`RTBENCH_FAILED`, `none` when none) and the
/// verdict of this CPU (`pass`, `fail`, or `unjudged` when no limit applied); with
/// its `[[condition]]` as `RTBENCH_CONDITION` and at the start of the message when the
/// test ran in one.
pub fn thread_result(t: &TestSummary, th: &ThreadSummary, verdict: &Verdict) -> Entry {
    let test = t.test.as_str();
    let checks: Vec<_> = verdict.checks_for(t, th.thread).collect();
    let failed: Vec<String> = checks
        .iter()
        .filter(|c| !c.pass)
        .map(|c| {
            let cause = c
                .cause
                .as_ref()
                .map(|w| format!(": {w}"))
                .unwrap_or_default();
            format!(
                "{} {} > limit {}{cause}",
                c.statistic(),
                c.value_text(),
                c.limit_text()
            )
        })
        .collect();
    let word = verdict.thread_outcome(t, th.thread).as_str();
    let limits = if checks.is_empty() {
        "none".to_string()
    } else {
        checks
            .iter()
            .map(|c| format!("{} {}", c.statistic(), c.limit_text()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let cpu = th.cpu.map_or_else(|| "-".to_string(), |c| c.to_string());
    let who = format!(
        "{}{}",
        crate::results::summary::condition_prefix(t.condition.as_deref()),
        crate::results::summary::thread_label(test, th.thread, th.cpu)
    );
    let outcome = match word {
        "fail" => format!("FAIL: {}", failed.join("; ")),
        "invalid" => format!("INVALID (not the system's latency): {}", failed.join("; ")),
        "unjudged" => "unjudged (no limit applies)".to_string(),
        _ => format!("pass (limits: {limits})"),
    };
    let mut e = Entry::new(
        MSG_RESULT,
        if word == "pass" {
            Priority::Info
        } else {
            Priority::Warning
        },
        format!(
            "{who}: max {}, p99.9 {}, p99 {}, avg {}, {} overruns, {} missed periods, {} samples: {outcome}",
            us(th.max_ns, Text),
            us(th.p999_ns, Text),
            us(th.p99_ns, Text),
            us(th.avg_ns, Text),
            th.overruns,
            th.missed(),
            th.count
        ),
    )
    .field("RTBENCH_TEST", test)
    .field("RTBENCH_CPU", &cpu)
    .field("RTBENCH_THREAD", th.thread)
    .figures(&th.into());
    if let Some([p5, p6]) = th.high_nines_ns {
        e = e
            .field("RTBENCH_P99999_NS", p5)
            .field("RTBENCH_P999999_NS", p6);
    }
    if let Some(c) = &t.condition {
        e = e.field("RTBENCH_CONDITION", c);
    }
    for c in &checks {
        e = e.field(limit_field(&c.what), c.limit);
    }
    e.field("RTBENCH_LIMITS", limits)
        .field(
            "RTBENCH_FAILED",
            if failed.is_empty() {
                "none".to_string()
            } else {
                failed.join("; ")
            },
        )
        .field("RTBENCH_VERDICT", word)
}

/// Where the run's results went.
#[derive(Debug, Clone, Copy)]
pub enum Storage<'a> {
    /// Stored in the results store as this file.
    Stored(&'a std::path::Path),
    /// Not stored (the reason is the run's `store_error`); kept in this fallback file
    /// when that could be written.
    NotStored(Option<&'a std::path::Path>),
}

/// [`summary`] with the run's most frequent causes of late samples
/// (`RTBENCH_TOP_CAUSES`, [`top_causes`]): the entry the self-test sends.
pub fn summary_with_causes(run: &StoredRun, stop: StopCause, storage: Storage<'_>) -> Entry {
    summary(run, stop, storage).field("RTBENCH_TOP_CAUSES", top_causes(run, 3))
}

/// The `n` causes with the most samples over the explain threshold in the run's
/// ledgers (`crate::explain::ledger`), over all tests and threads, by count then by
/// time over the threshold: `cyclic CPU 1: 12× task vendord (pid 312, started 41.37 s
/// after boot), 240 ms over`, joined by `; `; `none` when no sample was analysed. Task
/// names escaped ([`crate::error::one_line`]).
pub fn top_causes(run: &StoredRun, n: usize) -> String {
    let hz = crate::explain::ledger::ticks_per_s();
    let mut all: Vec<(String, &crate::explain::ledger::CauseEntry)> = Vec::new();
    for t in &run.tests {
        let Some(x) = &t.explain else { continue };
        for th in &x.ledger.threads {
            let cpu = th.cpu.map_or_else(|| "-".to_string(), |c| c.to_string());
            let test = match &t.condition {
                Some(c) => format!("{c}/{}", t.test),
                None => t.test.clone(),
            };
            all.extend(th.causes.iter().map(|c| (format!("{test} CPU {cpu}"), c)));
        }
    }
    all.sort_by(|a, b| {
        (b.1.tally.count, b.1.tally.over_ns).cmp(&(a.1.tally.count, a.1.tally.over_ns))
    });
    let top: Vec<String> = all
        .iter()
        .take(n)
        .map(|(at, c)| {
            format!(
                "{at}: {}× {}, {} over",
                c.tally.count,
                c.culprit.label(hz),
                us(c.tally.over_ns, Text)
            )
        })
        .collect();
    if top.is_empty() {
        return "none".into();
    }
    crate::error::one_line(&top.join("; ")).into_owned()
}

/// The self-test's summary and verdict: every failure by name (test, CPU, statistic,
/// value and limit in **µs**; tuning item, expected, found), why nothing was judged,
/// where the results went and the exit status.
pub fn summary(run: &StoredRun, stop: StopCause, storage: Storage<'_>) -> Entry {
    let worst = run
        .tests
        .iter()
        .flat_map(|t| t.threads.iter())
        .map(|t| t.max_ns)
        .max()
        .unwrap_or(0);
    let missed: u64 = run
        .tests
        .iter()
        .flat_map(|t| t.threads.iter())
        .map(|t| t.missed())
        .fold(0, u64::saturating_add);
    let failed = run.verdict.failures();
    let cpus: usize = run.tests.iter().map(|t| t.threads.len()).sum();
    // `cyclic+pmq`; with conditions `idle/cyclic+stress/cyclic`.
    let names = run
        .tests
        .iter()
        .map(|t| match &t.condition {
            Some(c) => format!("{c}/{}", t.test),
            None => t.test.clone(),
        })
        .collect::<Vec<_>>();
    let exit = run.exit_status();
    // Threads of the cyclic test, pairs (two threads each) of the pair tests.
    let count = |pairs: bool| -> usize {
        run.tests
            .iter()
            .filter(|t| crate::results::summary::is_pair_test(&t.test) == pairs)
            .map(|t| t.threads.len())
            .sum()
    };
    let n = |k: usize, what: &str| format!("{k} {what}{}", if k == 1 { "" } else { "s" });
    let on = match (count(false), count(true)) {
        (t, 0) => n(t, "thread"),
        (0, p) => n(p, "pair"),
        (t, p) => format!("{} and {}", n(t, "thread"), n(p, "pair")),
    };
    let mut msg = format!(
        "rtbench self-test {}: {} on {on} for {:.0} s, worst max {}, {missed} missed periods",
        run.verdict.word().to_uppercase(),
        names.join("+"),
        run.duration_s,
        us(worst, Text)
    );
    if stop.interrupted() {
        msg.push_str(" (interrupted)");
    }
    // What was passed: the kernel's preemption model and the tuning state.
    msg.push_str(&format!("; {}; {}", run.kernel_state(), run.tuning_state()));
    if !failed.is_empty() {
        msg.push_str(&format!("; failed: {}", failed.join("; ")));
    }
    let unjudged = run.verdict.unjudged_reason();
    if !unjudged.is_empty() {
        msg.push_str(&format!("; not judged: {unjudged}"));
    }
    let results_file = match storage {
        Storage::Stored(p) => p.display().to_string(),
        Storage::NotStored(fallback) => {
            msg.push_str(&format!(
                "; not stored: {}",
                run.store_error.as_deref().unwrap_or("unknown error")
            ));
            match fallback {
                Some(f) => msg.push_str(&format!(" (this boot's copy: {})", f.display())),
                None => msg.push_str(" (no copy kept)"),
            }
            String::new()
        }
    };
    if run.tuning_changed() > 0 {
        msg.push_str("; the tuning stays applied (rtbench tune revert undoes it)");
    }
    if let Some(u) = &run.unit {
        msg.push_str(&format!("; unit {}", u.text()));
    }
    msg.push_str(&not_written(run));
    msg.push_str(&format!("; exit {exit}"));
    if run.verdict.word() == "unjudged" && exit != 0 {
        msg.push_str(" ([selftest] allow_unjudged = true accepts unjudged runs)");
    }
    let mut e = Entry::new(
        MSG_SUMMARY,
        if run.passed() {
            Priority::Info
        } else if exit == 0 {
            Priority::Warning
        } else {
            Priority::Error
        },
        msg,
    )
    .field("RTBENCH_VERDICT", run.verdict.word())
    .field("RTBENCH_TUNING_STATE", run.tuning_state())
    .field("RTBENCH_EXIT_STATUS", exit)
    .field("RTBENCH_TESTS", names.join(","))
    .field("RTBENCH_THREADS", cpus)
    .field("RTBENCH_DURATION_S", format!("{:.1}", run.duration_s))
    .field("RTBENCH_MAX_NS", worst)
    .field("RTBENCH_MISSED_PERIODS", missed)
    .field("RTBENCH_FAILED_CHECKS", failed.len())
    .field(
        "RTBENCH_FAILED",
        if failed.is_empty() {
            "none".to_string()
        } else {
            failed.join("; ")
        },
    )
    .field(
        "RTBENCH_UNJUDGED",
        if unjudged.is_empty() {
            "none"
        } else {
            &unjudged
        },
    )
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
    .field(
        "RTBENCH_STORED",
        matches!(storage, Storage::Stored(_)) as u8,
    )
    .field("RTBENCH_RESULTS_FILE", results_file)
    .field("RTBENCH_BOOT_ID", &run.origin.boot_id)
    .field("RTBENCH_TRIGGER", &run.origin.trigger)
    .field(
        "RTBENCH_HWLAT",
        run.hardware
            .as_ref()
            .map(|h| h.hwlat_text())
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| "not run".into()),
    )
    .field(
        "RTBENCH_SMIS",
        run.hardware
            .as_ref()
            .map(|h| h.smi_text())
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| "not counted".into()),
    );
    // The unit, for factory records: one field per name it has.
    if let Some(u) = &run.unit {
        for (k, v) in u.parts() {
            let field = match k {
                "serial" => "RTBENCH_UNIT_SERIAL",
                "label" => "RTBENCH_UNIT_LABEL",
                "station" => "RTBENCH_STATION",
                _ => "RTBENCH_ORDER",
            };
            e = e.field(field, v);
        }
        if let Some(src) = &u.serial_source {
            e = e.field("RTBENCH_UNIT_SERIAL_SOURCE", src);
        }
    }
    e
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

/// No configuration file at `path`: the documented defaults are used. `unjudged`
/// says what goes unjudged without limits: for the self-test `no [limits]: the
/// verdict will be unjudged`, for the monitor `no [monitor.limits]: no window is
/// judged`.
pub fn defaults_used(path: &str, unjudged: &str) -> Entry {
    Entry::new(
        MSG_DEFAULTS,
        Priority::Warning,
        format!("no configuration at {path}: using the documented defaults ({unjudged})"),
    )
    .field("RTBENCH_CONFIG", path)
}

/// Which output was not written ([`output_not_written`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputKind {
    /// The results store (`[output] results_dir`).
    Results,
    /// The fallback copy of this boot's result (`[output] fallback_dir`).
    Fallback,
    /// The Prometheus textfile (`[output] prometheus`).
    Prometheus,
}

impl OutputKind {
    /// `results`, `fallback`, `prometheus`: the value of `RTBENCH_OUTPUT`.
    pub fn as_str(self) -> &'static str {
        match self {
            OutputKind::Results => "results",
            OutputKind::Fallback => "fallback",
            OutputKind::Prometheus => "prometheus",
        }
    }
}

/// `; not written: prometheus: WHY` for the outputs the run could not write other
/// than the results store (said with its fallback copy), else nothing.
fn not_written(run: &StoredRun) -> String {
    let other: Vec<&str> = run
        .unwritten
        .iter()
        .filter(|u| !u.starts_with("results:"))
        .map(String::as_str)
        .collect();
    if other.is_empty() {
        String::new()
    } else {
        format!("; not written: {}", other.join("; "))
    }
}

/// An output of the self-test was not written: `RTBENCH_OUTPUT` (which),
/// `RTBENCH_PATH` (the file or directory), `RTBENCH_ERROR` (why). The verdict is not
/// changed by it, the exit code of a pass is ([`crate::results::outcome`]: 1).
pub fn output_not_written(kind: OutputKind, path: &std::path::Path, why: &str) -> Entry {
    let what = match kind {
        OutputKind::Results => "results not stored in",
        OutputKind::Fallback => "this boot's result not kept in",
        OutputKind::Prometheus => "Prometheus textfile not written:",
    };
    Entry::new(
        MSG_OUTPUT,
        Priority::Warning,
        format!("{what} {}: {why}", path.display()),
    )
    .field("RTBENCH_OUTPUT", kind.as_str())
    .field("RTBENCH_PATH", path.display())
    .field("RTBENCH_ERROR", why)
}

/// The self-test stopped at `stage` (`tuning`, `load`, `measurement`) before a verdict,
/// exit status `exit`.
pub fn aborted(stage: &str, error: &str, exit: i32) -> Entry {
    Entry::new(
        MSG_ABORTED,
        Priority::Error,
        format!("rtbench self-test stopped before a verdict: {stage}: {error} (exit {exit})"),
    )
    .field("RTBENCH_STAGE", stage)
    .field("RTBENCH_ERROR", error)
    .field("RTBENCH_EXIT_STATUS", exit)
}

/// READY=1 was sent: tuning in `mode` (`apply`, `check`, `off`) is done, `changed` items
/// changed; `status` says what is measured next.
pub fn ready(mode: &str, changed: usize, status: &str) -> Entry {
    Entry::new(MSG_READY, Priority::Info, format!("READY: {status}"))
        .field("RTBENCH_TUNING_MODE", mode)
        .field("RTBENCH_TUNE_CHANGED", changed)
}

/// The main thread or the load runs on a core with a measured CPU, because the CPUs
/// this process may use leave no other (`RTBENCH_PLACEMENT`: `main thread` or `load`;
/// `RTBENCH_CPUS`, `RTBENCH_MEASURED_CPUS`: cpu-lists).
pub fn placement(s: &crate::sys::cpus::Sharing) -> Entry {
    Entry::new(
        MSG_PLACEMENT,
        Priority::Warning,
        format!("{} {}", s.who, s.text),
    )
    .field("RTBENCH_PLACEMENT", s.who)
    .field("RTBENCH_CPUS", s.cpus.to_list())
    .field("RTBENCH_MEASURED_CPUS", s.measured.to_list())
}

/// One explained sample (`crate::explain`): who was late and by how much (**ns**
/// fields), the cause's kind and words, the culprit task when one is named, whether the
/// sample is the system's latency at all, and the breakdown (`RTBENCH_EXPLAIN_DETAILS`,
/// lines joined by `; `). `when` is the sample's wall-clock time for the message.
pub fn explained(e: &crate::explain::Explanation, when: &str) -> Entry {
    use crate::explain::text::{details, headline};
    let s = &e.spike;
    let who = crate::results::summary::thread_label(&s.test, s.thread, Some(s.cpu));
    let none = |v: Option<u64>| v.map_or_else(|| "none".to_string(), |n| n.to_string());
    Entry::new(
        MSG_EXPLAINED,
        if e.cause.valid {
            Priority::Warning
        } else {
            Priority::Info
        },
        format!(
            "{who}: {} sample at {when} explained: {}",
            us(s.latency_ns(), Text),
            headline(e)
        ),
    )
    .field("RTBENCH_TEST", &s.test)
    .field("RTBENCH_CPU", s.cpu)
    .field("RTBENCH_THREAD", s.thread)
    .field("RTBENCH_TID", s.tid)
    .field("RTBENCH_LATENCY_NS", s.latency_ns())
    .field("RTBENCH_IRQ_LATENCY_NS", none(e.irq_latency_ns))
    .field("RTBENCH_THREAD_LATENCY_NS", none(e.thread_latency_ns))
    .field("RTBENCH_EXPLAIN_KIND", e.cause.kind.as_str())
    .field("RTBENCH_EXPLAIN_VALID", e.cause.valid as u8)
    .field("RTBENCH_EXPLANATION", headline(e))
    .field(
        "RTBENCH_CULPRIT_PID",
        e.cause
            .pid
            .map_or_else(|| "none".to_string(), |p| p.to_string()),
    )
    .field(
        "RTBENCH_CULPRIT_COMM",
        e.cause.comm.as_deref().unwrap_or("none"),
    )
    .field("RTBENCH_EXPLAIN_DETAILS", details(e).join("; "))
    .field("RTBENCH_SAMPLE_TIME", when)
    .field(
        "RTBENCH_EXPLAIN_ADVICE",
        if e.advice.is_empty() {
            "none".to_string()
        } else {
            e.advice.join("; ")
        },
    )
}
