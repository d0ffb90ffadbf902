//! The monitor's outputs besides its journal entries (which are the journal's, in
//! [`super::journal`]): its Prometheus textfile and `rtbench report --since`'s text.
//! Latencies are **ns** in files, **µs** in human text, seconds in Prometheus.
//!
//! Source: Prometheus "Exposition formats" (text 0.0.4).

use super::exposition::{Exposition, Kind, Labels, Seconds};
use super::Sink;
use crate::duration::{us, UsStyle};
use crate::results::window::{AllTime, SinceSummary, Skipped, Snapshot, WindowRecord};

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

/// What the monitor knows about one CPU beyond the window: the all-time figures and
/// the rolling histogram's quantiles. Latencies in **ns**.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CpuLongTerm {
    /// The CPU.
    pub cpu: usize,
    /// The all-time figures.
    pub alltime: AllTime,
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
    /// Spikes over the limit explained since the monitor started: (CPU, cause kind
    /// as in [`crate::explain::CauseKind::as_str`], count), sorted.
    pub explained: Vec<(usize, &'static str, u64)>,
    /// The `[monitor.limits]` set: (statistic — `max`, `avg`, `p99`, `p999`,
    /// `overruns` —, limit in **ns**, a count for `overruns`).
    pub limits: Vec<(&'static str, u64)>,
}

/// The monitor's Prometheus textfile (node_exporter textfile collector), written
/// through [`super::exposition`] as the self-test's is.
pub struct MonitorProm;

impl Sink<MonitorMetrics> for MonitorProm {
    fn write(&self, m: &MonitorMetrics, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        let cpu = |cpu: usize| Labels::new().with("cpu", cpu);
        let none = Labels::new();
        let mut x = Exposition::new();
        let mut f = x.family(
            "rtbench_monitor_window_latency_seconds",
            Kind::Summary,
            "Wakeup latency quantiles of the monitor's last window (quantile 1 = max).",
        );
        for c in &m.window.cpus {
            let q = [("0.99", c.p99_ns), ("0.999", c.p999_ns), ("1", c.max_ns)];
            f.summary(&cpu(c.cpu), &q, c.avg_ns, c.samples);
        }
        let mut f = x.family(
            "rtbench_monitor_window_overruns",
            Kind::Gauge,
            "Wakeups later than the following deadline in the monitor's last window.",
        );
        for c in &m.window.cpus {
            f.sample(&cpu(c.cpu), c.overruns);
        }
        let mut f = x.family(
            "rtbench_monitor_window_over_limit",
            Kind::Gauge,
            "1 when the monitor's last window exceeded a [monitor.limits] limit on the CPU, else 0 (also when no limit is set).",
        );
        for c in &m.window.cpus {
            f.sample(&cpu(c.cpu), u8::from(!c.exceeded.is_empty()));
        }
        let mut f = x.family(
            "rtbench_monitor_limit_seconds",
            Kind::Gauge,
            "Latency limits of [monitor.limits] each window is judged against, by statistic (max, avg, p99, p999); absent: not set.",
        );
        for (what, l) in m.limits.iter().filter(|l| l.0 != "overruns") {
            f.sample(&none.clone().with("statistic", what), Seconds(*l));
        }
        let mut f = x.family(
            "rtbench_monitor_limit_overruns",
            Kind::Gauge,
            "Overruns a window may have ([monitor.limits] overruns); absent: not set.",
        );
        for (_, l) in m.limits.iter().filter(|l| l.0 == "overruns") {
            f.sample(&none, *l);
        }
        let mut f = x.family(
            "rtbench_monitor_window_missed_periods",
            Kind::Gauge,
            "Periods the late wakeups skipped in the monitor's last window (a wakeup k intervals late misses k).",
        );
        for c in &m.window.cpus {
            f.sample(&cpu(c.cpu), c.missed());
        }
        let mut f = x.family(
            "rtbench_monitor_rolling_latency_seconds",
            Kind::Summary,
            "Wakeup latency quantiles over the rolling period (quantile 1 = max).",
        );
        for l in &m.long {
            let q = [
                ("0.99", l.rolling_p99_ns),
                ("0.999", l.rolling_p999_ns),
                ("0.9999", l.rolling_p9999_ns),
                ("1", l.rolling_max_ns),
            ];
            f.summary(&cpu(l.cpu), &q, l.rolling_mean_ns, l.rolling_samples);
        }
        x.family(
            "rtbench_monitor_rolling_period_seconds",
            Kind::Gauge,
            "The period the rolling latency quantiles cover.",
        )
        .sample(&none, m.rolling_s);
        let mut f = x.family(
            "rtbench_monitor_max_seconds",
            Kind::Gauge,
            "Largest wakeup latency the monitor has seen, across restarts.",
        );
        for l in &m.long {
            f.sample(&cpu(l.cpu), Seconds(l.alltime.max_ns));
        }
        for (name, help, get) in [
            (
                "rtbench_monitor_samples_total",
                "Samples the monitor has taken, across restarts.",
                (|a: &AllTime| a.samples) as fn(&AllTime) -> u64,
            ),
            (
                "rtbench_monitor_overruns_total",
                "Overruns the monitor has counted, across restarts.",
                |a| a.overruns,
            ),
            (
                "rtbench_monitor_missed_periods_total",
                "Periods the monitor's late wakeups skipped, across restarts.",
                |a| a.missed_periods,
            ),
            (
                "rtbench_monitor_windows_over_limit_total",
                "Monitor windows that exceeded a [monitor.limits] limit, across restarts.",
                |a| a.windows_over_limit,
            ),
        ] {
            let mut f = x.family(name, Kind::Counter, help);
            for l in &m.long {
                f.sample(&cpu(l.cpu), get(&l.alltime));
            }
        }
        let mut f = x.family(
            "rtbench_monitor_explained_total",
            Kind::Counter,
            "Samples over [monitor.limits] max_us explained since the monitor started, by cause kind.",
        );
        for (c, kind, n) in &m.explained {
            f.sample(&cpu(*c).with("cause", kind), *n);
        }
        x.family(
            "rtbench_monitor_window_end_timestamp_seconds",
            Kind::Gauge,
            "End of the monitor's last window, seconds since the epoch.",
        )
        .sample(&none, m.window.end_s);
        out.write_all(x.finish().as_bytes())
    }
}

/// `rtbench report --since --json`: the summary (as [`SinceSummary`] serialises) with
/// every window of the period as its last member, `records`, read from the store's
/// snapshot one window at a time as it is written (with [`crate::report::output::Output::stream`],
/// the document is never held whole: memory does not grow with the store).
pub struct SinceJson;

/// What [`SinceJson`] writes: the summary and the snapshot it was made from.
pub struct SinceDoc<'a> {
    /// The summary of the period.
    pub summary: &'a SinceSummary,
    /// The store's files it was read from ([`crate::results::window::WindowStore::since`]).
    pub snapshot: &'a Snapshot,
}

impl Sink<SinceDoc<'_>> for SinceJson {
    fn write(&self, d: &SinceDoc<'_>, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        let head = serde_json::to_vec_pretty(d.summary)?;
        // The object without its closing `\n}`: `records` follows as its last member,
        // indented as serde_json's pretty printer would (JSON strings hold no raw
        // newline, so each line of a record is indented alike).
        out.write_all(head.strip_suffix(b"\n}").unwrap_or(&head))?;
        out.write_all(b",\n  \"records\": [")?;
        let mut first = true;
        let mut failed = None;
        d.summary.records(d.snapshot, |r| {
            if failed.is_some() {
                return;
            }
            let mut one = || -> std::io::Result<()> {
                let text = serde_json::to_string_pretty(&r)?;
                out.write_all(if first { b"\n" } else { b",\n" })?;
                for (i, line) in text.lines().enumerate() {
                    out.write_all(if i == 0 { b"    " } else { b"\n    " })?;
                    out.write_all(line.as_bytes())?;
                }
                Ok(())
            };
            failed = one().err();
            first = false;
        })?;
        if let Some(e) = failed {
            return Err(e);
        }
        out.write_all(if first { b"]\n}\n" } else { b"\n  ]\n}\n" })
    }
}

/// `rtbench report --since`'s table: one row per CPU, fitting 80 columns.
pub struct SinceTable;

impl Sink<SinceSummary> for SinceTable {
    fn write(&self, s: &SinceSummary, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        let stamp = crate::date::iso_s;
        if s.windows == 0 {
            return writeln!(
                out,
                "rtbench monitor: no windows since {}",
                stamp(s.since_s)
            );
        }
        writeln!(
            out,
            "rtbench monitor: {} windows, {} over a limit",
            s.windows,
            s.over_limit()
        )?;
        writeln!(out, "from {} to {}", stamp(s.first_s), stamp(s.last_s))?;
        let header = [
            "cpu", "windows", "samples", "max/us", "max at", "p99.9/us", "p99/us", "overruns",
            "over",
        ]
        .map(String::from);
        let rows: Vec<[String; 9]> = s
            .cpus
            .iter()
            .map(|c| {
                [
                    c.cpu.to_string(),
                    c.windows.to_string(),
                    c.samples.to_string(),
                    us(c.max_ns, UsStyle::Cell),
                    stamp(c.max_at_s),
                    us(c.worst_p999_ns, UsStyle::Cell),
                    us(c.worst_p99_ns, UsStyle::Cell),
                    c.overruns.to_string(),
                    c.windows_over_limit.to_string(),
                ]
            })
            .collect();
        // The usual widths, wider where a value needs it: a column is always at
        // least one space from the one before, whatever the numbers.
        let mut widths = [3, 8, 10, 8, 21, 9, 7, 9, 5];
        for row in std::iter::once(&header).chain(&rows) {
            for (i, cell) in row.iter().enumerate() {
                let gap = usize::from(i > 0);
                widths[i] = widths[i].max(cell.chars().count() + gap);
            }
        }
        for row in std::iter::once(&header).chain(&rows) {
            let mut line = String::new();
            for (cell, w) in row.iter().zip(widths) {
                line.push_str(&format!("{cell:>w$}"));
            }
            writeln!(out, "{line}")?;
        }
        // A column would not fit 80; one late wakeup can miss hundreds of periods.
        let missed: Vec<String> = s
            .cpus
            .iter()
            .map(|c| format!("CPU {} {}", c.cpu, c.missed_periods))
            .collect();
        writeln!(out, "missed periods: {}", missed.join(", "))?;
        for c in s.cpus.iter().filter(|c| c.max_cause.is_some()) {
            writeln!(
                out,
                "CPU {} max {}: {}",
                c.cpu,
                us(c.max_ns, UsStyle::Text),
                c.max_cause.as_deref().unwrap_or_default()
            )?;
        }
        let alltime: Vec<String> = s
            .cpus
            .iter()
            .filter_map(|c| {
                c.alltime
                    .map(|a| format!("CPU {} {}", c.cpu, us(a.max_ns, UsStyle::Text)))
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
    use crate::results::window::WindowCpu;

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
                p50_ns: None,
                p99_ns: 9_000,
                p9999_ns: None,
                p999_ns: 9_500,
                max_ns: 12_000,
                overruns: 1,
                missed_periods: Some(290),
                exceeded: vec![],
                max_at_ms: None,
                cause: None,
                cause_kind: None,
            }],
        };
        let m = MonitorMetrics {
            window: w,
            long: vec![CpuLongTerm {
                cpu: 2,
                alltime: AllTime {
                    max_ns: 50_000,
                    ..Default::default()
                },
                ..Default::default()
            }],
            rolling_s: 86_400,
            explained: vec![(2, "task", 3)],
            limits: vec![("max", 100_000), ("overruns", 5)],
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
        assert_eq!(types, 15, "{text}");
        assert!(text.contains("rtbench_monitor_limit_seconds{statistic=\"max\"} 1e-4\n"));
        assert!(text.contains("rtbench_monitor_limit_overruns 5\n"));
        assert!(text.contains("rtbench_monitor_window_over_limit{cpu=\"2\"} 0\n"));
        assert!(text.contains("rtbench_monitor_window_missed_periods{cpu=\"2\"} 290\n"));
        assert!(text.contains("rtbench_monitor_explained_total{cpu=\"2\",cause=\"task\"} 3\n"));
    }

    #[test]
    fn since_table_columns_stay_apart_for_huge_values() {
        let cpu = WindowCpu {
            cpu: 4095,
            samples: u64::MAX / 2,
            min_ns: 1,
            avg_ns: u64::MAX / 2,
            p50_ns: None,
            p99_ns: u64::MAX - 1,
            p9999_ns: None,
            p999_ns: u64::MAX,
            max_ns: u64::MAX,
            overruns: u64::MAX / 2,
            missed_periods: Some(0),
            exceeded: vec![],
            max_at_ms: Some(250_500),
            cause: None,
            cause_kind: None,
        };
        let w = |seq| WindowRecord {
            seq,
            start_s: 100,
            end_s: 400,
            duration_s: 300.0,
            cpus: vec![cpu.clone()],
        };
        let s = SinceSummary::new(vec![w(1), w(2)], 0, 500)
            .map_err(|e| e.to_string())
            .unwrap();
        let mut out = Vec::new();
        SinceTable.write(&s, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let head = lines
            .iter()
            .position(|l| l.trim_start().starts_with("cpu"))
            .unwrap();
        assert_eq!(lines[head].split_whitespace().count(), 10, "{text}");
        assert_eq!(lines[head + 1].split_whitespace().count(), 9, "{text}");
        assert!(lines[head + 1].starts_with("4095 "), "{text}");
    }

    #[test]
    fn since_table_names_the_cause_of_an_explained_maximum() {
        let cpu = |cpu, max_ns, cause: Option<&str>| WindowCpu {
            cpu,
            samples: 10,
            min_ns: 1,
            avg_ns: 5_000,
            p50_ns: None,
            p99_ns: 9_000,
            p9999_ns: None,
            p999_ns: 9_500,
            max_ns,
            overruns: 0,
            missed_periods: Some(0),
            exceeded: vec![],
            max_at_ms: Some(250_500),
            cause: cause.map(str::to_string),
            cause_kind: cause.map(|_| "task".to_string()),
        };
        let w = WindowRecord {
            seq: 1,
            start_s: 100,
            end_s: 400,
            duration_s: 300.0,
            cpus: vec![
                cpu(0, 12_000, None),
                cpu(
                    1,
                    290_000,
                    Some("CPU 1 ran burn (pid 7, FIFO 99) for 289 µs"),
                ),
            ],
        };
        let s = SinceSummary::new(vec![w], 0, 500).unwrap();
        let mut out = Vec::new();
        SinceTable.write(&s, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains("CPU 1 max 290 µs: CPU 1 ran burn (pid 7, FIFO 99) for 289 µs\n"),
            "{text}"
        );
        assert!(!text.contains("CPU 0 max"), "{text}");
        assert!(
            text.contains(" 1970-01-01T00:04:10Z "),
            "max at its own time: {text}"
        );
    }
}
