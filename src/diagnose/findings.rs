//! "What looks wrong": the first lines of a bundle's `SUMMARY.txt`, from the facts
//! collected. A **problem** is something that makes latency figures bad or the
//! self-test fail; a **note** is something a field engineer should know when reading
//! the figures (a setting that is usual but costs latency, a missing source).

use super::system::{irqs_on, Snapshot};
use crate::duration::{us, UsStyle};
use crate::results::store::StoredRun;
use crate::results::summary::Outcome;
use crate::results::window::SinceSummary;
use crate::sys::info::SysInfo;
use crate::tune::{Status, TuningReport};

/// How serious a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Makes the figures bad or the self-test fail.
    Problem,
    /// Worth knowing when reading the figures.
    Note,
}

/// One finding: severity and one line of text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// How serious.
    pub severity: Severity,
    /// What, in one line.
    pub text: String,
}

/// Everything the findings are made from.
pub struct Facts<'a> {
    /// The system snapshot.
    pub sysinfo: &'a SysInfo,
    /// CPUs, IRQs, sysctls, cpufreq, cpuidle, RT tasks, kernel log.
    pub snapshot: &'a Snapshot,
    /// The newest self-test run, if any, and whether it is of this boot.
    pub last_run: Option<(&'a StoredRun, bool)>,
    /// The monitor's windows of the period, if the monitor has a store.
    pub monitor: Option<&'a SinceSummary>,
    /// `tune check` against the configuration.
    pub tune: Option<&'a TuningReport>,
    /// Whether journald runs.
    pub journald: bool,
    /// The CPUs the configuration measures (`[cyclic] cpus`, `[monitor] cpus`).
    pub measured: crate::cpuset::CpuSet,
    /// The highest SCHED_FIFO priority the configuration measures at (`[cyclic]`,
    /// `[monitor]`): a real-time task at or above it delays the measuring threads.
    pub measure_priority: u32,
}

fn problem(v: &mut Vec<Finding>, text: String) {
    v.push(Finding {
        severity: Severity::Problem,
        text,
    });
}

fn note(v: &mut Vec<Finding>, text: String) {
    v.push(Finding {
        severity: Severity::Note,
        text,
    });
}

/// Kernel log lines that mean latency trouble.
const KERNEL_SIGNS: &[(&str, &str)] = &[
    (
        "RT throttling activated",
        "RT throttling stopped real-time tasks",
    ),
    ("soft lockup", "a soft lockup"),
    ("hung_task", "a hung task"),
    ("blocked for more than", "a hung task"),
    ("BUG:", "a kernel BUG"),
    ("Marking clocksource", "an unstable clocksource"),
    ("timekeeping watchdog", "an unstable clocksource"),
];

/// The findings, problems first.
pub fn findings(f: &Facts<'_>) -> Vec<Finding> {
    let mut v = Vec::new();
    let si = f.sysinfo;
    if !si.realtime {
        problem(
            &mut v,
            format!(
                "kernel {} is {}, not PREEMPT_RT",
                si.release, si.preempt_model
            ),
        );
    }
    match f.last_run {
        None => note(&mut v, "no stored self-test result".into()),
        Some((r, this_boot)) => {
            let when = crate::date::iso_s(r.start_s);
            let boot = if this_boot {
                "this boot"
            } else {
                "an earlier boot"
            };
            match r.verdict.outcome {
                Outcome::Pass => {}
                Outcome::Fail => problem(
                    &mut v,
                    format!(
                        "self-test FAIL ({boot}, {when}): {}",
                        r.verdict.failures().join("; ")
                    ),
                ),
                Outcome::Unjudged => problem(
                    &mut v,
                    format!(
                        "self-test UNJUDGED ({boot}, {when}): {}",
                        r.verdict.unjudged_reason()
                    ),
                ),
                Outcome::Invalid => problem(
                    &mut v,
                    format!(
                        "self-test INVALID ({boot}, {when}): measure again; {}",
                        r.verdict.failures().join("; ")
                    ),
                ),
            }
            if !this_boot {
                note(
                    &mut v,
                    format!("no self-test result of this boot (newest: {when})"),
                );
            }
        }
    }
    if let Some(m) = f.monitor {
        if m.windows == 0 {
            problem(
                &mut v,
                "monitor: no window in the period (is rtbench-monitor.service running?)".into(),
            );
        } else if m.over_limit() > 0 {
            let worst = m.cpus.iter().max_by_key(|c| c.max_ns);
            problem(
                &mut v,
                format!(
                    "monitor: {} of {} windows exceeded [monitor.limits]{}",
                    m.over_limit(),
                    m.windows,
                    worst.map_or(String::new(), |c| format!(
                        "; worst max {} on CPU {} at {}",
                        us(c.max_ns, UsStyle::Text),
                        c.cpu,
                        crate::date::iso_s(c.max_at_s)
                    ))
                ),
            );
        }
    }
    if let Some(t) = f.tune {
        let bad: Vec<String> = t
            .items
            .iter()
            .filter(|i| matches!(i.status, Status::Deviation | Status::Failed))
            .map(|i| format!("{} ({})", i.item, i.status.as_str()))
            .collect();
        if !bad.is_empty() {
            problem(
                &mut v,
                format!(
                    "tune check: {} item(s) differ from the configuration: {}",
                    bad.len(),
                    bad.iter().take(6).cloned().collect::<Vec<_>>().join(", ")
                        + if bad.len() > 6 { ", …" } else { "" }
                ),
            );
        }
    }
    let s = f.snapshot;
    if let Some(topo) = &s.topo {
        if !topo.isolated.is_empty() {
            let fired = irqs_on(&s.irqs, &topo.isolated);
            if !fired.is_empty() {
                let top: Vec<String> = fired
                    .iter()
                    .take(4)
                    .map(|(irq, name, n)| format!("IRQ {irq} {} ×{n}", short(name)))
                    .collect();
                problem(
                    &mut v,
                    format!(
                        "{} IRQ(s) fired on isolated CPUs {}: {}",
                        fired.len(),
                        topo.isolated,
                        top.join(", ")
                    ),
                );
            }
        }
    }
    let sysctl = |k: &str| {
        s.sysctls
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.as_str())
    };
    if let Some(rt) = sysctl("kernel.sched_rt_runtime_us") {
        if rt != "-1" {
            note(
                &mut v,
                format!(
                    "RT throttling on: real-time tasks get {rt} µs per {} µs period",
                    sysctl("kernel.sched_rt_period_us").unwrap_or("?")
                ),
            );
        }
    }
    // The largest explained late samples, where the last self-test and the monitor
    // explained any: what the kernel did in that gap.
    if let Some((r, _)) = f.last_run {
        for t in &r.tests {
            let Some(e) = t
                .explain
                .as_ref()
                .and_then(|x| x.explained.iter().max_by_key(|e| e.spike.latency_ns()))
            else {
                continue;
            };
            let who =
                crate::results::summary::thread_label(&t.test, e.spike.thread, Some(e.spike.cpu));
            let text = format!(
                "self-test: the largest explained sample, {who} {} at {}: {}",
                us(e.spike.latency_ns(), UsStyle::Text),
                e.spike.when(),
                crate::explain::text::headline(e)
            );
            if e.cause.valid {
                problem(&mut v, text);
            } else {
                note(&mut v, text);
            }
        }
    }
    if let Some(m) = f.monitor {
        for c in m.cpus.iter().filter(|c| c.max_cause.is_some()) {
            problem(
                &mut v,
                format!(
                    "monitor CPU {}: the period's maximum {} at {}: {}",
                    c.cpu,
                    us(c.max_ns, UsStyle::Text),
                    crate::date::iso_ms(c.max_at_s.saturating_mul(1_000_000_000)),
                    c.max_cause.as_deref().unwrap_or("")
                ),
            );
        }
    }
    // Real-time user tasks at or above the measuring priority: each of their runs is
    // a late sample (a vendor daemon's periodic burst).
    for t in s
        .rt_tasks
        .iter()
        .filter(|t| !t.kernel && t.priority >= f.measure_priority && t.policy != "DEADLINE")
    {
        problem(
            &mut v,
            format!(
                "{} (pid {}, {} {}) outranks the measuring threads ({} {}) and used {:.1} % of a CPU since it started (CPUs {})",
                t.comm,
                t.tid,
                t.policy,
                t.priority,
                "FIFO",
                f.measure_priority,
                t.cpu_percent,
                t.cpus
            ),
        );
    }
    // Kernel log lines that mean latency trouble, with their wall-clock time (the log
    // counts seconds since boot) and how far they are from the latencies they might
    // explain.
    let worst_at = f
        .monitor
        .and_then(|m| m.cpus.iter().max_by_key(|c| c.max_ns))
        .map(|c| (c.max_at_s, "the monitor's worst maximum"))
        .or_else(|| {
            f.last_run
                .map(|(r, _)| (r.start_s, "the last self-test's start"))
        });
    let mut seen = std::collections::BTreeSet::new();
    for l in &s.kernel_lines {
        for (pat, what) in KERNEL_SIGNS {
            if l.text.contains(pat) && seen.insert(*what) {
                let at = l.wall_ns.div_euclid(1_000_000_000);
                let when = match worst_at {
                    Some((t, name)) if (t - at).abs() <= 1 => format!(", at {name}"),
                    Some((t, name)) if t > at => format!(", {} s before {name}", t - at),
                    Some((t, name)) => format!(", {} s after {name}", at - t),
                    None => String::new(),
                };
                problem(
                    &mut v,
                    format!(
                        "kernel log at {} ({:.1} s after boot{when}): {what}: {}",
                        crate::date::iso_ms(l.wall_ns),
                        l.mono_ns as f64 / 1e9,
                        l.text.trim()
                    ),
                );
            }
        }
    }
    if let Some(pid) = s.irqbalance {
        note(
            &mut v,
            format!("irqbalance runs (pid {pid}): it may move IRQs onto measured CPUs"),
        );
    }
    let measured = &f.measured;
    let slow: Vec<String> = s
        .governors
        .iter()
        .filter(|(_, cpus, g)| {
            g != "performance"
                && cpus
                    .split_whitespace()
                    .filter_map(|c| c.parse::<usize>().ok())
                    .any(|c| measured.contains(c))
        })
        .map(|(p, _, g)| format!("{p} {g}"))
        .collect();
    if !slow.is_empty() {
        note(
            &mut v,
            format!(
                "cpufreq governor not performance on measured CPUs: {}",
                slow.join(", ")
            ),
        );
    }
    let deep: std::collections::BTreeSet<String> = s
        .idle
        .iter()
        .filter(|st| !st.disabled() && st.latency_us > 10 && measured.contains(st.cpu))
        .map(|st| format!("{} ({} µs)", st.name, st.latency_us))
        .collect();
    if !deep.is_empty() {
        note(
            &mut v,
            format!(
                "idle states with exit latency > 10 µs enabled on measured CPUs: {}",
                deep.into_iter().collect::<Vec<_>>().join(", ")
            ),
        );
    }
    if !f.journald {
        note(
            &mut v,
            "no journald: rtbench's entries went to standard error / syslog".into(),
        );
    }
    v.sort_by_key(|f| f.severity);
    v
}

/// The device name at the end of an IRQ's `/proc/interrupts` description.
fn short(name: &str) -> &str {
    name.split_whitespace().last().unwrap_or(name)
}
