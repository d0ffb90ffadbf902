//! The self-test's sections of `/etc/rtbench/rtbench.toml`: `[selftest]`, `[cyclic]`,
//! `[load]`, `[limits]` and `[output]` (the `[tuning]` section belongs to `tune`).
//! Every section rejects unknown keys; every key has a documented default (see
//! `systemd/rtbench.toml`).

use super::limits::{CpuLimits, LimitSet, Limits};
use crate::cpuset::CpuSet;
use crate::sys::cpus::CpuTopology;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// Whether the self-test applies the `[tuning]` section or only checks it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TuningMode {
    /// Apply (and record) every change, then measure.
    #[default]
    Apply,
    /// Only compare with the configuration; deviations are reported, not fixed.
    Check,
    /// Leave tuning alone.
    Off,
}

/// `[selftest]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SelftestSection {
    /// Tuning mode.
    pub mode: TuningMode,
    /// Measurement duration (`30s`, `5m`, `1h`).
    pub duration: String,
}

impl Default for SelftestSection {
    fn default() -> Self {
        SelftestSection {
            mode: TuningMode::Apply,
            duration: "30s".into(),
        }
    }
}

/// `[cyclic]`: the timer-wakeup test (omit `enabled = false` to skip it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CyclicSection {
    /// Run the test.
    pub enabled: bool,
    /// CPUs to measure (cpu-list); default every online CPU, isolated ones included.
    pub cpus: Option<String>,
    /// Wakeup interval in **µs** (same on every CPU).
    pub interval_us: u64,
    /// SCHED_FIFO priority 1..99.
    pub priority: i32,
}

impl Default for CyclicSection {
    fn default() -> Self {
        CyclicSection {
            enabled: true,
            cpus: None,
            interval_us: 1000,
            priority: crate::plan::DEFAULT_RT_PRIORITY,
        }
    }
}

/// `[load]`: what runs beside the measurement.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LoadSection {
    /// Built-in load, e.g. `cpu:2,vm:1:64M,io:1`.
    pub spec: Option<String>,
    /// External load command, e.g. `stress-ng --cpu 2`.
    pub cmd: Option<String>,
    /// CPUs for the load (cpu-list); default every online CPU.
    pub cpus: Option<String>,
}

/// `[[limits.cpus]]`: limits for a CPU set.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CpuLimitsSection {
    /// The CPUs (cpu-list).
    pub cpus: String,
    /// Restrict to one test (`cyclic`, `pmq`, `pipe`).
    pub test: Option<String>,
    /// See [`Limits`].
    pub max_us: Option<u64>,
    /// See [`Limits`].
    pub avg_us: Option<u64>,
    /// See [`Limits`].
    pub p99_us: Option<u64>,
    /// See [`Limits`].
    pub p999_us: Option<u64>,
    /// See [`Limits`].
    pub p9999_us: Option<u64>,
    /// See [`Limits`].
    pub overruns: Option<u64>,
}

/// `[limits]`: defaults, `[limits.<test>]` and `[[limits.cpus]]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LimitsSection {
    /// See [`Limits`].
    pub max_us: Option<u64>,
    /// See [`Limits`].
    pub avg_us: Option<u64>,
    /// See [`Limits`].
    pub p99_us: Option<u64>,
    /// See [`Limits`].
    pub p999_us: Option<u64>,
    /// See [`Limits`].
    pub p9999_us: Option<u64>,
    /// See [`Limits`].
    pub overruns: Option<u64>,
    /// Overrides for the cyclic test.
    pub cyclic: Option<Limits>,
    /// Overrides for the pmq test.
    pub pmq: Option<Limits>,
    /// Overrides for the pipe test.
    pub pipe: Option<Limits>,
    /// Per-CPU-set overrides, later ones win.
    pub cpus: Vec<CpuLimitsSection>,
}

/// `[output]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OutputSection {
    /// Directory of the results store.
    pub results_dir: PathBuf,
    /// Runs to keep.
    pub keep: usize,
    /// Prometheus textfile to write (e.g. for node_exporter's textfile collector).
    pub prometheus: Option<PathBuf>,
}

impl Default for OutputSection {
    fn default() -> Self {
        OutputSection {
            results_dir: crate::report::store::DEFAULT_DIR.into(),
            keep: 10,
            prometheus: None,
        }
    }
}

/// A semantic error in a section: the key (`section.key`) and what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyError {
    /// Dotted key, e.g. `cyclic.cpus`.
    pub key: String,
    /// The message.
    pub message: String,
}

fn key_err<T>(key: &str, message: impl Into<String>) -> Result<T, KeyError> {
    Err(KeyError {
        key: key.into(),
        message: message.into(),
    })
}

/// Parses a cpu-list key against the topology: every CPU must be online.
pub fn cpus_key(key: &str, value: &str, topo: &CpuTopology) -> Result<CpuSet, KeyError> {
    let set = CpuSet::parse(value, topo.nr_cpu_ids).or_else(|e| {
        key_err(
            key,
            format!("\"{value}\": {e}; expected a cpu-list like \"0-3,5\""),
        )
    })?;
    if set.is_empty() {
        return key_err(key, format!("\"{value}\": empty CPU set"));
    }
    let offline = set.difference(&topo.online);
    if !offline.is_empty() {
        return key_err(
            key,
            format!(
                "\"{value}\": CPU {} is not online (online CPUs: {})",
                offline.to_list(),
                topo.online.to_list()
            ),
        );
    }
    Ok(set)
}

impl SelftestSection {
    /// The measurement duration.
    pub fn duration(&self) -> Result<Duration, KeyError> {
        let d = crate::duration::parse(&self.duration)
            .or_else(|e| key_err("selftest.duration", format!("\"{}\": {e}", self.duration)))?;
        if d.is_zero() {
            return key_err("selftest.duration", "must be at least 1s");
        }
        Ok(d)
    }
}

impl CyclicSection {
    /// Checks interval and priority; returns the CPUs to measure.
    pub fn cpus(&self, topo: &CpuTopology) -> Result<CpuSet, KeyError> {
        if self.interval_us == 0 || self.interval_us > 1_000_000 {
            return key_err(
                "cyclic.interval_us",
                format!("{}: expected 1..1000000 µs", self.interval_us),
            );
        }
        if !(1..=99).contains(&self.priority) {
            return key_err(
                "cyclic.priority",
                format!("{}: expected a SCHED_FIFO priority of 1..99", self.priority),
            );
        }
        match &self.cpus {
            Some(c) => cpus_key("cyclic.cpus", c, topo),
            None => Ok(topo.online.clone()),
        }
    }
}

impl LimitsSection {
    /// The limits as a [`LimitSet`], CPU lists checked.
    pub fn to_limit_set(&self, topo: &CpuTopology) -> Result<LimitSet, KeyError> {
        let mut per_test = BTreeMap::new();
        for (name, l) in [
            ("cyclic", &self.cyclic),
            ("pmq", &self.pmq),
            ("pipe", &self.pipe),
        ] {
            if let Some(l) = l {
                per_test.insert(name.to_string(), l.clone());
            }
        }
        let mut per_cpus = Vec::new();
        for (i, c) in self.cpus.iter().enumerate() {
            if let Some(t) = &c.test {
                if !["cyclic", "pmq", "pipe"].contains(&t.as_str()) {
                    return key_err(
                        &format!("limits.cpus[{i}].test"),
                        format!("\"{t}\": expected cyclic, pmq or pipe"),
                    );
                }
            }
            per_cpus.push(CpuLimits {
                cpus: cpus_key(&format!("limits.cpus[{i}].cpus"), &c.cpus, topo)?,
                test: c.test.clone(),
                limits: Limits {
                    max_us: c.max_us,
                    avg_us: c.avg_us,
                    p99_us: c.p99_us,
                    p999_us: c.p999_us,
                    p9999_us: c.p9999_us,
                    overruns: c.overruns,
                },
            });
        }
        Ok(LimitSet {
            default: Limits {
                max_us: self.max_us,
                avg_us: self.avg_us,
                p99_us: self.p99_us,
                p999_us: self.p999_us,
                p9999_us: self.p9999_us,
                overruns: self.overruns,
            },
            per_test,
            per_cpus,
        })
    }
}

impl OutputSection {
    /// Checks `keep`.
    pub fn check(&self) -> Result<(), KeyError> {
        if self.keep == 0 {
            return key_err("output.keep", "0: expected at least 1 run to keep");
        }
        Ok(())
    }
}
