//! The boot self-test: configuration → tuning → READY → measurement under load →
//! verdict → journal, results store, Prometheus → exit code. `app/selftest.rs` loads
//! the configuration; [`plan`] turns it into a [`SelftestPlan`], [`run::execute`] runs
//! it and [`verdict::judge`] judges it. docs/ARCHITECTURE.md has the flow.

pub mod run;
pub mod verdict;

use crate::config::limits::LimitSet;
use crate::config::{Config, TuningMode};
use crate::measure::cyclic::CyclicSpec;
use crate::measure::{RunControl, ThreadSpec};
use crate::sys::clock::Clock;
use crate::sys::cpus::{CpuTopology, Sharing};
use crate::sys::sched::Policy;
use std::path::PathBuf;
use std::time::Duration;

/// A validated self-test: everything [`run::execute`] needs.
#[derive(Debug, Clone)]
pub struct SelftestPlan {
    /// The configuration file read (empty when the defaults were used).
    pub config_path: String,
    /// The configuration file as named (also when it did not exist).
    pub config_shown: String,
    /// Its text, stored with the results.
    pub config_text: String,
    /// Apply, check or leave the tuning.
    pub mode: TuningMode,
    /// The `[tuning]` section.
    pub tuning: crate::config::tuning::TuningSpec,
    /// Measurement duration.
    pub duration: Duration,
    /// The cyclic test.
    pub cyclic: CyclicSpec,
    /// Pass/fail limits.
    pub limits: LimitSet,
    /// Results store directory.
    pub results_dir: PathBuf,
    /// Where this boot's result goes when the store fails.
    pub fallback_dir: PathBuf,
    /// `[selftest] allow_unjudged`: an unjudged run exits 0.
    pub allow_unjudged: bool,
    /// Runs to keep.
    pub keep: usize,
    /// Prometheus textfile.
    pub prometheus: Option<PathBuf>,
    /// The load as configured, for reports (empty: none).
    pub load_label: String,
    /// The load to run beside the measurement.
    pub load: Option<crate::load::LoadSpec>,
    /// The main thread or the load sharing a core with a measured CPU (a warning each).
    pub sharing: Vec<Sharing>,
}

/// Builds the plan from a validated configuration.
/// `path` is the file read (empty: none, the defaults), `shown` the file as named.
pub fn plan(cfg: &Config, topo: &CpuTopology, path: &str, shown: &str, text: &str) -> SelftestPlan {
    let threads = cfg
        .cyclic_cpus
        .iter()
        .enumerate()
        .map(|(i, cpu)| ThreadSpec {
            index: i,
            cpu: Some(cpu),
            policy: Policy::Fifo,
            priority: cfg.cyclic.priority,
            interval_us: cfg.cyclic.interval_us,
        })
        .collect();
    let mut load = Vec::new();
    if let Some(s) = &cfg.load.spec {
        load.push(s.clone());
    }
    if let Some(c) = &cfg.load.cmd {
        load.push(format!("cmd: {c}"));
    }
    // The main thread and the load beside the measured CPUs (and their SMT siblings).
    let placed = topo.companions(Some(&cfg.cyclic_cpus));
    let mut sharing: Vec<Sharing> = placed.main_shares.into_iter().collect();
    let mut load_spec = cfg.load_spec.clone();
    if let Some(l) = load_spec.as_mut().filter(|l| !l.cpus_given) {
        l.cpus = placed.load;
        sharing.extend(placed.load_shares);
    }
    SelftestPlan {
        config_path: path.to_string(),
        config_shown: shown.to_string(),
        config_text: text.to_string(),
        mode: cfg.selftest.mode,
        tuning: cfg.tuning.clone(),
        duration: cfg.duration,
        cyclic: CyclicSpec {
            threads,
            clock: Clock::Monotonic,
            control: RunControl {
                duration: Some(cfg.duration),
                loops: None,
                mlockall: true,
                pm_qos_us: Some(0),
                main_cpus: placed.main,
                report_every: Some(Duration::from_secs(1)),
                break_ns: None,
                tracemark: false,
                histogram: None,
            },
        },
        limits: cfg.limits.clone(),
        results_dir: cfg.output.results_dir.clone(),
        fallback_dir: cfg.output.fallback_dir.clone(),
        allow_unjudged: cfg.selftest.allow_unjudged,
        keep: cfg.output.keep,
        prometheus: cfg.output.prometheus.clone(),
        load_label: load.join("; "),
        load: load_spec,
        sharing,
    }
}
