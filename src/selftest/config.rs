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
        // The self-test runs the cyclic test only (so far): limits for another test
        // would never be checked, and a check that silently never runs is worse than an
        // error.
        for (name, l) in [("pmq", &self.pmq), ("pipe", &self.pipe)] {
            if l.is_some() {
                return key_err(
                    &format!("limits.{name}"),
                    format!(
                        "the self-test does not run the {name} test yet; \
                         expected [limits] or [limits.cyclic]"
                    ),
                );
            }
        }
        let mut per_test = BTreeMap::new();
        if let Some(l) = &self.cyclic {
            per_test.insert("cyclic".to_string(), l.clone());
        }
        let mut per_cpus = Vec::new();
        for (i, c) in self.cpus.iter().enumerate() {
            if let Some(t) = &c.test {
                if t != "cyclic" {
                    return key_err(
                        &format!("limits.cpus[{i}].test"),
                        format!("\"{t}\": expected \"cyclic\" (the test the self-test runs)"),
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

impl LoadSection {
    /// Validates the load the way `--load`, `--load-cmd` and `--load-cpus` are
    /// validated; `None` when no load is configured.
    pub fn resolve(&self, topo: &CpuTopology) -> Result<Option<crate::load::LoadSpec>, KeyError> {
        let flags = crate::cli_pair::LoadFlags {
            load: self.spec.clone(),
            load_cmd: self.cmd.clone(),
            load_cpus: self.cpus.clone(),
        };
        crate::plan_pair::load(&flags, topo).map_err(|e| {
            let text = e.to_string();
            let (key, msg) = if text.starts_with("--load-cmd") {
                ("load.cmd", text)
            } else if text.starts_with("--load-cpus") {
                ("load.cpus", text)
            } else {
                ("load.spec", text)
            };
            let msg = msg
                .split_once(": ")
                .map_or(msg.clone(), |(_, m)| m.to_string());
            KeyError {
                key: key.into(),
                message: msg,
            }
        })
    }
}

impl OutputSection {
    /// Checks `keep`.
    pub fn check(&self) -> Result<(), KeyError> {
        if self.keep == 0 {
            return key_err("output.keep", "0: expected at least 1 run to keep");
        }
        if !self.results_dir.is_absolute() {
            return key_err(
                "output.results_dir",
                format!(
                    "\"{}\": expected an absolute path (a service has no useful working directory)",
                    self.results_dir.display()
                ),
            );
        }
        if let Some(p) = &self.prometheus {
            let dir = p.parent().filter(|d| !d.as_os_str().is_empty());
            if !p.is_absolute() || !dir.is_some_and(|d| d.is_dir()) {
                return key_err(
                    "output.prometheus",
                    format!(
                        "\"{}\": expected an absolute file path in an existing directory",
                        p.display()
                    ),
                );
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::sys::SysRoot;

    #[test]
    fn the_shipped_example_configuration_parses_to_the_defaults() {
        let text = include_str!("../../systemd/rtbench.toml");
        let c = crate::config::parse(text, "systemd/rtbench.toml", &SysRoot::host()).unwrap();
        assert_eq!(c.duration.as_secs(), 30);
        assert_eq!(c.cyclic.interval_us, 1000);
        assert_eq!(c.cyclic.priority, 98);
        assert_eq!(c.output.keep, 10);
        assert!(c.load_spec.is_none());
        assert!(c.tuning.is_empty());
        // Every commented example line is valid too once uncommented.
        let uncommented: String = text
            .lines()
            .map(|l| {
                let t = l.trim_start();
                let is_key = |r: &str| {
                    r.split_once(" = ").is_some_and(|(k, _)| {
                        k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    })
                };
                match t.strip_prefix("# ") {
                    Some(rest) if is_key(rest) || rest.starts_with('[') => rest
                        .split("  #")
                        .next()
                        .unwrap_or(rest)
                        .trim_end()
                        // The CPU examples are for a 4-CPU board; fit them to any machine.
                        .replace("\"2-3\"", "\"1\"")
                        .replace("\"0-1\"", "\"0\"")
                        // node_exporter's directory need not exist here.
                        .replace("/var/lib/prometheus/node-exporter/", "/tmp/"),
                    _ => l.to_string(),
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        let c = crate::config::parse(&uncommented, "uncommented", &SysRoot::host());
        let c = c.unwrap_or_else(|e| panic!("{e}\n{uncommented}"));
        assert!(c.load_spec.is_some());
        assert_eq!(c.limits.per_cpus.len(), 1);
        assert!(!c.tuning.is_empty());
    }
}
