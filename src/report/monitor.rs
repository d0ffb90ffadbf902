//! The monitor's outputs: its journal entries (start, one per CPU per window, a warning
//! per CPU when a window exceeds `[monitor.limits]`, stop), its Prometheus textfile, and
//! `rtbench report --since`'s text. Latencies are **ns** in fields and files, **µs** in
//! human text, seconds in Prometheus. The MESSAGE_IDs are explained in
//! `systemd/rtbench.catalog`.
//!
//! Source: systemd.journal-fields(7); Prometheus "Exposition formats" (text 0.0.4).

use super::journal::{Entry, Priority};
use super::Sink;
use crate::results::window::{SinceSummary, Skipped, WindowCpu, WindowRecord};
use std::fmt::Write;

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

use crate::results::summary::us as unit_us;

/// Every MESSAGE_ID of the monitor (`scripts/lint-packaging.sh` checks that the
/// catalog compiles with each of them).
pub const MONITOR_IDS: [&str; 5] = [
    MSG_MONITOR_START,
    MSG_MONITOR_WINDOW,
    MSG_MONITOR_LIMIT,
    MSG_MONITOR_STOP,
    MSG_MONITOR_OUTPUT,
];

/// What a scan of the window store in `dir` skipped, one warning line each: the store
/// files that are not regular files, then (with `count_lines`) the lines not read.
pub fn skipped_lines(dir: &std::path::Path, s: &Skipped, count_lines: bool) -> Vec<String> {
    let mut lines: Vec<String> = s
        .files
        .iter()
        .map(|(path, kind)| {
            format!(
                "rtbench: {}: skipped, not a window store: a {kind}, not a regular file",
                path.display()
            )
        })
        .collect();
    if count_lines && s.lines > 0 {
        lines.push(format!(
            "rtbench: {}: {} unreadable line(s) skipped",
            dir.display(),
            s.lines
        ));
    }
    lines
}

/// µs for table columns (no unit): one decimal below 10 ms, whole µs above (as
/// `rtbench report`), rounded to nearest without wrapping (the values come from files).
pub fn us(ns: u64) -> String {
    if ns < 10_000_000 {
        format!("{:.1}", ns as f64 / 1000.0)
    } else {
        format!("{}", (u128::from(ns) + 500) / 1000)
    }
}

/// A window's length for messages: whole seconds from 10 s, one decimal below
/// (`1.5`, `0.4`, `300`), so a window cut short is not shown as a whole one.
pub fn seconds(s: f64) -> String {
    if s >= 10.0 {
        format!("{s:.0}")
    } else {
        format!("{s:.1}")
    }
}

/// What the monitor knows about one CPU beyond the window: the all-time figures and
/// the rolling histogram's quantiles. Latencies in **ns**.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
pub struct CpuLongTerm {
    /// The CPU.
    pub cpu: usize,
    /// Largest latency ever.
    pub alltime_max_ns: u64,
    /// When, seconds since the epoch.
    pub alltime_max_at_s: i64,
    /// Samples ever.
    pub alltime_samples: u64,
    /// Overruns ever.
    pub alltime_overruns: u64,
    /// Windows over a limit, ever.
    pub windows_over_limit: u64,
    /// Start of the rolling histogram's oldest slot, seconds since the epoch.
    pub rolling_since_s: i64,
    /// Rolling histogram: samples.
    pub rolling_samples: u64,
    /// Rolling histogram: mean.
    pub rolling_mean_ns: u64,
    /// Rolling histogram: 99th percentile.
    pub rolling_p99_ns: u64,
    /// Rolling histogram: 99.9th percentile.
    pub rolling_p999_ns: u64,
    /// Rolling histogram: 99.99th percentile.
    pub rolling_p9999_ns: u64,
    /// Rolling histogram: largest sample (within the histogram's precision).
    pub rolling_max_ns: u64,
}

/// The monitor's start: one entry.
pub fn start_entry(
    cpus: &str,
    interval_us: u64,
    priority: i32,
    window_s: u64,
    restored: &str,
) -> Entry {
    Entry::new(
        MSG_MONITOR_START,
        Priority::Info,
        format!(
            "monitor started on {} {cpus}: SCHED_FIFO {priority}, interval {interval_us} µs, \
             window {window_s} s; {restored}",
            if cpus.contains([',', '-']) {
                "CPUs"
            } else {
                "CPU"
            }
        ),
    )
    .field("RTBENCH_CPUS", cpus)
    .field("RTBENCH_INTERVAL_US", interval_us)
    .field("RTBENCH_PRIORITY", priority)
    .field("RTBENCH_WINDOW_S", window_s)
}

/// One CPU's window: figures of the window and the all-time maximum.
pub fn window_entry(w: &WindowRecord, c: &WindowCpu, long: &CpuLongTerm) -> Entry {
    Entry::new(
        MSG_MONITOR_WINDOW,
        Priority::Info,
        format!(
            "monitor CPU {}: max {}, p99.9 {}, p99 {}, {} overrun{}, {} samples in {} s; all-time max {}",
            c.cpu,
            unit_us(c.max_ns),
            unit_us(c.p999_ns),
            unit_us(c.p99_ns),
            c.overruns,
            if c.overruns == 1 { "" } else { "s" },
            c.samples,
            seconds(w.duration_s),
            unit_us(long.alltime_max_ns)
        ),
    )
    .field("RTBENCH_TEST", "monitor")
    .field("RTBENCH_CPU", c.cpu)
    .field("RTBENCH_WINDOW", w.seq)
    .field("RTBENCH_DURATION_S", format!("{:.1}", w.duration_s))
    .field("RTBENCH_SAMPLES", c.samples)
    .field("RTBENCH_MIN_NS", c.min_ns)
    .field("RTBENCH_AVG_NS", c.avg_ns)
    .field("RTBENCH_P99_NS", c.p99_ns)
    .field("RTBENCH_P999_NS", c.p999_ns)
    .field("RTBENCH_MAX_NS", c.max_ns)
    .field("RTBENCH_OVERRUNS", c.overruns)
    .field("RTBENCH_ALLTIME_MAX_NS", long.alltime_max_ns)
    .field("RTBENCH_ROLLING_P999_NS", long.rolling_p999_ns)
}

/// The warning for a window that exceeded limits on one CPU; `checks` are
/// `(name, value, limit)` with latencies in **ns**.
pub fn limit_entry(w: &WindowRecord, c: &WindowCpu, checks: &[(&str, u64, u64)]) -> Entry {
    let text: Vec<String> = checks
        .iter()
        .map(|(what, v, l)| {
            if *what == "overruns" {
                format!("{what} {v} > {l}")
            } else {
                format!("{what} {} > {}", unit_us(*v), unit_us(*l))
            }
        })
        .collect();
    let mut e = Entry::new(
        MSG_MONITOR_LIMIT,
        Priority::Warning,
        format!(
            "monitor CPU {}: window {} exceeded its limits: {}",
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
    .field("RTBENCH_MAX_NS", c.max_ns);
    if let Some((_, _, l)) = checks.iter().find(|c| c.0 == "max") {
        e = e.field("RTBENCH_LIMIT_NS", l);
    }
    e
}

/// The monitor's end: why, windows, whether the state was saved.
pub fn stop_entry(how: &str, windows: u64, state: &str, priority: Priority) -> Entry {
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

/// Everything the Prometheus textfile shows: the last window and each CPU's
/// long-term figures.
#[derive(Debug, Clone)]
pub struct MonitorMetrics {
    /// The last window.
    pub window: WindowRecord,
    /// Per CPU, same order as the window's CPUs.
    pub long: Vec<CpuLongTerm>,
    /// The period the rolling histogram covers, seconds.
    pub rolling_s: u64,
}

/// The monitor's Prometheus textfile (node_exporter textfile collector).
pub struct MonitorProm;

fn secs(ns: u64) -> String {
    format!("{:e}", ns as f64 / 1e9)
}

impl Sink<MonitorMetrics> for MonitorProm {
    fn write(&self, m: &MonitorMetrics, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        let mut s = String::new();
        let head = |s: &mut String, name: &str, kind: &str, help: &str| {
            let _ = writeln!(s, "# HELP {name} {help}");
            let _ = writeln!(s, "# TYPE {name} {kind}");
        };
        head(
            &mut s,
            "rtbench_monitor_window_latency_seconds",
            "summary",
            "Wakeup latency quantiles of the monitor's last window (quantile 1 = max).",
        );
        for c in &m.window.cpus {
            for (q, v) in [("0.99", c.p99_ns), ("0.999", c.p999_ns), ("1", c.max_ns)] {
                let _ = writeln!(
                    s,
                    "rtbench_monitor_window_latency_seconds{{cpu=\"{}\",quantile=\"{q}\"}} {}",
                    c.cpu,
                    secs(v)
                );
            }
            let sum = c.avg_ns as f64 * c.samples as f64 / 1e9;
            let _ = writeln!(
                s,
                "rtbench_monitor_window_latency_seconds_sum{{cpu=\"{}\"}} {sum:e}",
                c.cpu
            );
            let _ = writeln!(
                s,
                "rtbench_monitor_window_latency_seconds_count{{cpu=\"{}\"}} {}",
                c.cpu, c.samples
            );
        }
        head(
            &mut s,
            "rtbench_monitor_window_overruns",
            "gauge",
            "Wakeups later than the following deadline in the monitor's last window.",
        );
        for c in &m.window.cpus {
            let _ = writeln!(
                s,
                "rtbench_monitor_window_overruns{{cpu=\"{}\"}} {}",
                c.cpu, c.overruns
            );
        }
        head(
            &mut s,
            "rtbench_monitor_rolling_latency_seconds",
            "summary",
            "Wakeup latency quantiles over the rolling period (quantile 1 = max).",
        );
        for l in &m.long {
            for (q, v) in [
                ("0.99", l.rolling_p99_ns),
                ("0.999", l.rolling_p999_ns),
                ("0.9999", l.rolling_p9999_ns),
                ("1", l.rolling_max_ns),
            ] {
                let _ = writeln!(
                    s,
                    "rtbench_monitor_rolling_latency_seconds{{cpu=\"{}\",quantile=\"{q}\"}} {}",
                    l.cpu,
                    secs(v)
                );
            }
            let sum = l.rolling_mean_ns as f64 * l.rolling_samples as f64 / 1e9;
            let _ = writeln!(
                s,
                "rtbench_monitor_rolling_latency_seconds_sum{{cpu=\"{}\"}} {sum:e}",
                l.cpu
            );
            let _ = writeln!(
                s,
                "rtbench_monitor_rolling_latency_seconds_count{{cpu=\"{}\"}} {}",
                l.cpu, l.rolling_samples
            );
        }
        head(
            &mut s,
            "rtbench_monitor_rolling_period_seconds",
            "gauge",
            "The period the rolling latency quantiles cover.",
        );
        let _ = writeln!(s, "rtbench_monitor_rolling_period_seconds {}", m.rolling_s);
        head(
            &mut s,
            "rtbench_monitor_max_seconds",
            "gauge",
            "Largest wakeup latency the monitor has seen, across restarts.",
        );
        for l in &m.long {
            let _ = writeln!(
                s,
                "rtbench_monitor_max_seconds{{cpu=\"{}\"}} {}",
                l.cpu,
                secs(l.alltime_max_ns)
            );
        }
        for (name, help, get) in [
            (
                "rtbench_monitor_samples_total",
                "Samples the monitor has taken, across restarts.",
                (|l: &CpuLongTerm| l.alltime_samples) as fn(&CpuLongTerm) -> u64,
            ),
            (
                "rtbench_monitor_overruns_total",
                "Overruns the monitor has counted, across restarts.",
                |l| l.alltime_overruns,
            ),
            (
                "rtbench_monitor_windows_over_limit_total",
                "Monitor windows that exceeded a [monitor.limits] limit, across restarts.",
                |l| l.windows_over_limit,
            ),
        ] {
            head(&mut s, name, "counter", help);
            for l in &m.long {
                let _ = writeln!(s, "{name}{{cpu=\"{}\"}} {}", l.cpu, get(l));
            }
        }
        head(
            &mut s,
            "rtbench_monitor_window_end_timestamp_seconds",
            "gauge",
            "End of the monitor's last window, seconds since the epoch.",
        );
        let _ = writeln!(
            s,
            "rtbench_monitor_window_end_timestamp_seconds {}",
            m.window.end_s
        );
        out.write_all(s.as_bytes())
    }
}

/// `rtbench report --since`'s table: one row per CPU, fitting 80 columns.
pub struct SinceTable;

impl Sink<SinceSummary> for SinceTable {
    fn write(&self, s: &SinceSummary, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        let stamp = crate::date::utc_stamp;
        if s.windows == 0 {
            return writeln!(
                out,
                "rtbench monitor: no windows since {} UTC",
                stamp(s.since_s)
            );
        }
        writeln!(
            out,
            "rtbench monitor: {} windows, {} over a limit",
            s.windows,
            s.over_limit()
        )?;
        writeln!(out, "from {} to {} UTC", stamp(s.first_s), stamp(s.last_s))?;
        writeln!(
            out,
            "{:>3}{:>8}{:>12}{:>9}{:>17}{:>9}{:>8}{:>9}{:>5}",
            "cpu",
            "windows",
            "samples",
            "max/us",
            "max at (UTC)",
            "p99.9/us",
            "p99/us",
            "overruns",
            "over"
        )?;
        for c in &s.cpus {
            writeln!(
                out,
                "{:>3}{:>8}{:>12}{:>9}{:>17}{:>9}{:>8}{:>9}{:>5}",
                c.cpu,
                c.windows,
                c.samples,
                us(c.max_ns),
                stamp(c.max_at_s),
                us(c.worst_p999_ns),
                us(c.worst_p99_ns),
                c.overruns,
                c.windows_over_limit
            )?;
        }
        let alltime: Vec<String> = s
            .cpus
            .iter()
            .filter_map(|c| {
                c.alltime_max_ns
                    .map(|m| format!("CPU {} {}", c.cpu, unit_us(m)))
            })
            .collect();
        if !alltime.is_empty() {
            writeln!(out, "all-time max: {}", alltime.join(", "))?;
        }
        writeln!(
            out,
            "(p99.9/us, p99/us: the worst window; over: windows over [monitor.limits])"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_id_is_in_the_catalog_once_and_not_the_self_tests() {
        let catalog = include_str!("../../systemd/rtbench.catalog");
        for id in MONITOR_IDS {
            assert_eq!(catalog.matches(&format!("-- {id}\n")).count(), 1, "{id}");
            assert!(!super::super::journal::ALL_IDS.contains(&id), "{id}");
        }
    }

    #[test]
    fn prometheus_text_has_every_family_once() {
        let w = WindowRecord {
            seq: 4,
            start_s: 100,
            end_s: 400,
            duration_s: 300.0,
            cpus: vec![WindowCpu {
                cpu: 2,
                samples: 10,
                min_ns: 1,
                avg_ns: 5_000,
                p99_ns: 9_000,
                p999_ns: 9_500,
                max_ns: 12_000,
                overruns: 1,
                exceeded: vec![],
            }],
        };
        let m = MonitorMetrics {
            window: w,
            long: vec![CpuLongTerm {
                cpu: 2,
                alltime_max_ns: 50_000,
                ..Default::default()
            }],
            rolling_s: 86_400,
        };
        let mut out = Vec::new();
        MonitorProm.write(&m, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains("rtbench_monitor_max_seconds{cpu=\"2\"} 5e-5\n"),
            "{text}"
        );
        assert!(text
            .contains("rtbench_monitor_window_latency_seconds{cpu=\"2\",quantile=\"1\"} 1.2e-5\n"));
        let types = text.lines().filter(|l| l.starts_with("# TYPE")).count();
        assert_eq!(types, 9, "{text}");
    }
}
