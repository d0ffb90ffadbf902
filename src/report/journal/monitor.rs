//! The monitor's journal entries (`rtbench monitor`): start, one per CPU per window, a
//! warning per CPU when a window exceeds `[monitor.limits]`, an output that could not be
//! written (or can be again), stop. Fields as `systemd/rtbench.catalog` uses them for
//! each MESSAGE_ID (see the parent module); latencies are **ns** in fields, **µs** in
//! the MESSAGE.

use super::{
    Entry, Priority, MSG_MONITOR_LIMIT, MSG_MONITOR_OUTPUT, MSG_MONITOR_START, MSG_MONITOR_STOP,
    MSG_MONITOR_WINDOW,
};
use crate::duration::{us, UsStyle};
use crate::report::monitor::CpuLongTerm;
use crate::results::window::{WindowCpu, WindowRecord};
use std::path::Path;

/// A window's length for messages: whole seconds from 10 s, one decimal below
/// (`1.5`, `0.4`, `300`), so a window cut short is not shown as a whole one.
fn seconds(s: f64) -> String {
    if s >= 10.0 {
        format!("{s:.0}")
    } else {
        format!("{s:.1}")
    }
}

/// What the monitor's start entry says: what it measures, how, and where its figures
/// go, so that the first line of its log answers all of it (the first window's
/// entries come a window later).
#[derive(Debug, Clone)]
pub struct MonitorStart<'a> {
    /// The monitored CPUs, a cpu-list.
    pub cpus: &'a str,
    /// The threads' interval, **µs**.
    pub interval_us: u64,
    /// Their SCHED_FIFO priority.
    pub priority: i32,
    /// The window's length, **s**.
    pub window_s: u64,
    /// When the first window ends, wall clock, seconds since the epoch.
    pub first_end_s: i64,
    /// What the state file held (`no state in DIR yet`, `state restored …`).
    pub restored: &'a str,
    /// The monitor's directory: window store and state file.
    pub dir: &'a Path,
    /// The Prometheus textfile, if one is written.
    pub prometheus: Option<&'a Path>,
}

/// The monitor's start: one entry, sent before the threads start.
pub fn monitor_start(s: &MonitorStart) -> Entry {
    let prometheus = s
        .prometheus
        .map_or_else(|| "none".to_string(), |p| p.display().to_string());
    let first = crate::date::iso_s(s.first_end_s);
    Entry::new(
        MSG_MONITOR_START,
        Priority::Info,
        format!(
            "monitor started on {} {}: SCHED_FIFO {}, interval {} µs, window {} s \
             (first figures at {first}); {}; windows to {}, Prometheus textfile {prometheus}",
            if s.cpus.contains([',', '-']) {
                "CPUs"
            } else {
                "CPU"
            },
            s.cpus,
            s.priority,
            s.interval_us,
            s.window_s,
            s.restored,
            s.dir.join(crate::results::window::CURRENT).display(),
        ),
    )
    .field("RTBENCH_CPUS", s.cpus)
    .field("RTBENCH_INTERVAL_US", s.interval_us)
    .field("RTBENCH_PRIORITY", s.priority)
    .field("RTBENCH_WINDOW_S", s.window_s)
    .field("RTBENCH_FIRST_WINDOW_END", first)
    .field("RTBENCH_DIR", s.dir.display())
    .field("RTBENCH_PROMETHEUS", prometheus)
}

/// One CPU's window: figures of the window and the all-time maximum.
pub fn monitor_window(w: &WindowRecord, c: &WindowCpu, long: &CpuLongTerm) -> Entry {
    Entry::new(
        MSG_MONITOR_WINDOW,
        Priority::Info,
        format!(
            "monitor CPU {}: max {}, p99.9 {}, p99 {}, {} overrun{}, {} missed period{}, {} samples in {} s; all-time max {}",
            c.cpu,
            us(c.max_ns, UsStyle::Text),
            us(c.p999_ns, UsStyle::Text),
            us(c.p99_ns, UsStyle::Text),
            c.overruns,
            if c.overruns == 1 { "" } else { "s" },
            c.missed(),
            if c.missed() == 1 { "" } else { "s" },
            c.samples,
            seconds(w.duration_s),
            us(long.alltime.max_ns, UsStyle::Text)
        ),
    )
    .field("RTBENCH_TEST", "monitor")
    .field("RTBENCH_CPU", c.cpu)
    .field("RTBENCH_WINDOW", w.seq)
    .field("RTBENCH_DURATION_S", format!("{:.1}", w.duration_s))
    .figures(&c.into())
    .field("RTBENCH_ALLTIME_MAX_NS", long.alltime.max_ns)
    .field("RTBENCH_ROLLING_P999_NS", long.rolling_p999_ns)
}

/// The warning for a window that exceeded limits on one CPU; `checks` are
/// `(name, value, limit)` with latencies in **ns**. `RTBENCH_LIMIT_NS` is the `max`
/// limit, `none` when no `max` limit was exceeded.
pub fn monitor_limit(w: &WindowRecord, c: &WindowCpu, checks: &[(&str, u64, u64)]) -> Entry {
    let text: Vec<String> = checks
        .iter()
        .map(|(what, v, l)| {
            if *what == "overruns" {
                format!("{what} {v} > {l}")
            } else {
                format!(
                    "{what} {} > {}",
                    us(*v, UsStyle::Text),
                    us(*l, UsStyle::Text)
                )
            }
        })
        .collect();
    let when = c.max_at_ms.map_or_else(
        || "none".to_string(),
        |ms| crate::date::iso_ms(ms * 1_000_000),
    );
    let cause = c
        .cause
        .as_ref()
        .map(|x| format!("; the maximum at {when}: {x}"))
        .unwrap_or_default();
    Entry::new(
        MSG_MONITOR_LIMIT,
        Priority::Warning,
        format!(
            "monitor CPU {}: window {} exceeded its limits: {}{cause}",
            c.cpu,
            w.seq,
            text.join(", ")
        ),
    )
    .field("RTBENCH_TEST", "monitor")
    .field("RTBENCH_CPU", c.cpu)
    .field("RTBENCH_WINDOW", w.seq)
    .field(
        "RTBENCH_EXCEEDED",
        checks.iter().map(|c| c.0).collect::<Vec<_>>().join(","),
    )
    .field("RTBENCH_MAX_NS", c.max_ns)
    .field(
        "RTBENCH_LIMIT_NS",
        checks
            .iter()
            .find(|c| c.0 == "max")
            .map_or_else(|| "none".to_string(), |c| c.2.to_string()),
    )
    .field("RTBENCH_MAX_TIME", when)
    .field("RTBENCH_EXPLANATION", c.cause.as_deref().unwrap_or("none"))
}

/// The monitor's end: why, windows, whether the state was saved.
pub fn monitor_stop(how: &str, windows: u64, state: &str, priority: Priority) -> Entry {
    Entry::new(
        MSG_MONITOR_STOP,
        priority,
        format!(
            "monitor stopped ({how}) after {windows} window{}; {state}",
            if windows == 1 { "" } else { "s" }
        ),
    )
    .field("RTBENCH_STOP", how)
    .field("RTBENCH_WINDOWS", windows)
}

/// The monitor's `what` (`window store`, `state file`, `Prometheus textfile`) at `path`
/// could not be written (`why`, a warning), or, with `why` `None`, is written again.
pub fn monitor_output(what: &str, path: &Path, why: Option<&str>) -> Entry {
    let (priority, message) = match why {
        Some(why) => (
            Priority::Warning,
            format!(
                "monitor {what} {} not written ({why}); windows still go to the journal",
                path.display()
            ),
        ),
        None => (
            Priority::Info,
            format!("monitor {what} {} written again", path.display()),
        ),
    };
    Entry::new(MSG_MONITOR_OUTPUT, priority, message)
        .field("RTBENCH_OUTPUT", what)
        .field("RTBENCH_PATH", path.display())
}
