//! `rtbench monitor`: the `[monitor]` section with the flags laid over it.

use super::{parse_cpus, usage};
use crate::cli::monitor::MonitorArgs;
use crate::config::monitor::{self as cfg, MonitorSection};
use crate::config::selftest::OutputSection;
use crate::error::Result;
use crate::measure::monitor::MonitorSpec;
use crate::measure::{RunControl, ThreadSpec};
use crate::monitor::MonitorPlan;
use crate::report::window;
use crate::sys::cpus::CpuTopology;
use crate::sys::sched::Policy;
use std::time::Duration;

/// How often the main thread looks for a finished window (and pets the watchdog).
pub const TICK: Duration = Duration::from_secs(1);

/// The plan from the configuration's `[monitor]` and `[output]` and the flags, which
/// win. Errors name the flag.
pub fn plan(
    args: &MonitorArgs,
    section: &MonitorSection,
    output: &OutputSection,
    topo: &CpuTopology,
) -> Result<MonitorPlan> {
    let cpus = match &args.cpus {
        Some(s) => parse_cpus("-a", s, topo)?,
        None => section.cpus.clone(),
    };
    let interval_us = args.interval.unwrap_or(section.interval_us);
    if !(cfg::MIN_INTERVAL_US..=cfg::MAX_INTERVAL_US).contains(&interval_us) {
        return usage(
            "-i",
            interval_us,
            format!(
                "expected {}..{} µs",
                cfg::MIN_INTERVAL_US,
                cfg::MAX_INTERVAL_US
            ),
        );
    }
    let priority = match args.priority {
        Some(p) if !(1..=99).contains(&p) => {
            return usage("-p", p, "expected a SCHED_FIFO priority of 1..99")
        }
        Some(p) => p as i32,
        None => section.priority,
    };
    let window = match &args.window {
        Some(w) => {
            let d = crate::duration::parse(w).or_else(|e| usage("--window", w, e))?;
            if d < cfg::MIN_WINDOW || d > cfg::MAX_WINDOW {
                return usage("--window", w, "expected 1s to 1d");
            }
            d
        }
        None => section.window,
    };
    let duration = match &args.duration {
        Some(d) => {
            let v = crate::duration::parse(d).or_else(|e| usage("-D", d, e))?;
            (v > Duration::ZERO).then_some(v)
        }
        None => None,
    };
    let dir = match (&args.dir, &section.dir) {
        (Some(d), _) if !d.is_absolute() => {
            return usage("--dir", d.display(), "expected an absolute path")
        }
        (Some(d), _) | (None, Some(d)) => d.clone(),
        (None, None) => window::default_dir(&output.results_dir),
    };
    let prometheus = match &args.prometheus {
        Some(p) => {
            super::check_output_path("--prometheus", p)?;
            Some(p.clone())
        }
        None => section.prometheus.clone(),
    };
    let threads = cpus
        .iter()
        .enumerate()
        .map(|(index, cpu)| ThreadSpec {
            index,
            cpu: Some(cpu),
            policy: Policy::Fifo,
            priority,
            interval_us,
        })
        .collect();
    Ok(MonitorPlan {
        spec: MonitorSpec {
            threads,
            control: RunControl {
                duration,
                loops: None,
                mlockall: true,
                pm_qos_us: section.pm_qos_us,
                main_cpus: topo
                    .housekeeping()
                    .first()
                    .map(|c| [c].into_iter().collect()),
                report_every: Some(TICK),
                break_ns: None,
                tracemark: false,
                histogram: None,
            },
        },
        window,
        rolling: section.rolling.max(window),
        dir,
        store_bytes: section.store_kib * 1024,
        prometheus,
        limits: section.limits.clone(),
    })
}
