//! The boot self-test (DESIGN.md §5): configuration → tuning → READY → measurement
//! under load → verdict → journal, results store, Prometheus → exit code.

pub mod config;
pub mod limits;
pub mod run;

use crate::config::Config;
use crate::error::exit;
use crate::measure::cyclic::{CyclicSpec, ThreadSpec};
use crate::report::journal::{Entry, Journal, Priority, MSG_CONFIG};
use crate::sys::clock::Clock;
use crate::sys::cpus::CpuTopology;
use crate::sys::sched::Policy;
use crate::sys::SysRoot;
use config::TuningMode;
use limits::LimitSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A validated self-test: everything [`run::execute`] needs.
#[derive(Debug, Clone)]
pub struct SelftestPlan {
    /// The configuration file read (empty when the defaults were used).
    pub config_path: String,
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
    /// Runs to keep.
    pub keep: usize,
    /// Prometheus textfile.
    pub prometheus: Option<PathBuf>,
    /// The load as configured, for reports (empty: none).
    pub load_label: String,
    /// The load to run beside the measurement.
    pub load: Option<crate::load::LoadSpec>,
}

/// Builds the plan from a validated configuration.
pub fn plan(cfg: &Config, topo: &CpuTopology, path: &str, text: &str) -> SelftestPlan {
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
    SelftestPlan {
        config_path: path.to_string(),
        config_text: text.to_string(),
        mode: cfg.selftest.mode,
        tuning: cfg.tuning.clone(),
        duration: cfg.duration,
        cyclic: CyclicSpec {
            threads,
            clock: Clock::Monotonic,
            duration: Some(cfg.duration),
            loops: None,
            mlockall: true,
            pm_qos_us: Some(0),
            main_cpus: topo
                .housekeeping()
                .first()
                .map(|c| [c].into_iter().collect()),
            histogram: None,
            break_ns: None,
            tracemark: false,
            report_every: Some(Duration::from_secs(1)),
        },
        limits: cfg.limits.clone(),
        results_dir: cfg.output.results_dir.clone(),
        keep: cfg.output.keep,
        prometheus: cfg.output.prometheus.clone(),
        load_label: load.join("; "),
        load: cfg.load_spec.clone(),
    }
}

/// `rtbench selftest [--config FILE]`: returns the exit code (0 pass, 1 fail, 2 bad
/// configuration — nothing tuned, nothing written —, 3 environment refused, 130/143
/// interrupted).
pub fn main(config: Option<&Path>) -> i32 {
    let root = SysRoot::host();
    let mut journal = Journal::open();
    let explicit = config.is_some();
    let path = config.map_or_else(
        || PathBuf::from(crate::config::DEFAULT_PATH),
        Path::to_path_buf,
    );
    let shown = path.display().to_string();
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => Some(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !explicit => None,
        Err(e) => {
            return config_error(
                &mut journal,
                &shown,
                &format!("{shown}: cannot read the configuration: {e}"),
            )
        }
    };
    if text.is_none() {
        journal.send(
            &Entry::new(
                MSG_CONFIG,
                Priority::Info,
                format!("no configuration at {shown}: using the documented defaults"),
            )
            .field("RTBENCH_CONFIG", &shown),
        );
    }
    let text_ref = text.as_deref().unwrap_or("");
    let cfg = match crate::config::parse(text_ref, &shown, &root) {
        Ok(c) => c,
        Err(e) => return config_error(&mut journal, &shown, &e.to_string()),
    };
    let topo = CpuTopology::read(&root);
    let plan = plan(
        &cfg,
        &topo,
        if text.is_some() { &shown } else { "" },
        text_ref,
    );
    run::execute(&plan, &root, &mut journal)
}

fn config_error(journal: &mut Journal, file: &str, message: &str) -> i32 {
    let mut e =
        Entry::new(MSG_CONFIG, Priority::Error, message.to_string()).field("RTBENCH_CONFIG", file);
    // Errors read "FILE:LINE: KEY = VALUE: what was expected".
    if let Some(rest) = message.strip_prefix(file).and_then(|r| r.strip_prefix(':')) {
        if let Some((line, after)) = rest.split_once(": ") {
            if line.chars().all(|c| c.is_ascii_digit()) && !line.is_empty() {
                e = e.field("RTBENCH_CONFIG_LINE", line);
                let key = after.split([' ', ':']).next().unwrap_or("");
                if !key.is_empty() && !key.starts_with('[') {
                    e = e.field("RTBENCH_CONFIG_KEY", key);
                }
            }
        }
    }
    journal.send(&e);
    if journal.is_journald() {
        eprintln!("rtbench: {message}");
    }
    exit::USAGE
}
