//! The self-test's sections of `/etc/rtbench/rtbench.toml`: `[selftest]`, `[cyclic]`,
//! `[load]` and `[output]` (`[limits]` is in [`super::limits`], `[tuning]` in
//! [`super::tuning`]). Every section rejects unknown keys; every key has a documented
//! default (see `systemd/rtbench.toml`).

use super::Source;
use crate::cpuset::CpuSet;
use crate::error::ConfigError;
use crate::load::{LoadError, LoadField, LoadRequest, LoadSpec};
use crate::sys::cpus::{CpuListError, CpuTopology};
use serde::Deserialize;
use std::path::PathBuf;
use std::time::Duration;
use toml::Spanned;

/// Whether the self-test applies the `[tuning]` section or only checks it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
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

impl TuningMode {
    /// The word used in the configuration and the journal.
    pub fn as_str(self) -> &'static str {
        match self {
            TuningMode::Apply => "apply",
            TuningMode::Check => "check",
            TuningMode::Off => "off",
        }
    }
}

/// Default of `[selftest] duration`.
pub const DEFAULT_DURATION: &str = "30s";
/// Default of `[cyclic] interval_us`, **µs**.
pub const DEFAULT_INTERVAL_US: u64 = 1000;
/// Largest `[cyclic] interval_us`, **µs** (one second).
pub const MAX_INTERVAL_US: u64 = 1_000_000;
/// Default of `[output] results_dir`: the results store.
pub const DEFAULT_RESULTS_DIR: &str = "/var/lib/rtbench";
/// Default of `[output] keep`.
pub const DEFAULT_KEEP: usize = 10;
/// Default of `[output] fallback_dir`: where this boot's result goes when the results
/// store cannot take it (`/run`: RAM, this boot only; rtbench.service's
/// RuntimeDirectory).
pub const DEFAULT_FALLBACK_DIR: &str = "/run/rtbench";

/// `[selftest]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SelftestToml {
    mode: Option<TuningMode>,
    duration: Option<Spanned<String>>,
    allow_unjudged: Option<bool>,
    hwlat: Option<Spanned<String>>,
    hwlat_limit_us: Option<Spanned<u64>>,
    require_preempt_rt: Option<bool>,
}

/// `[selftest]`, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelftestSection {
    /// Tuning mode.
    pub mode: TuningMode,
    /// Measurement duration as written (`30s`, `5m`, `1h`).
    pub duration: String,
    /// `allow_unjudged = true`: a run with nothing (or not everything) judged exits 0
    /// instead of 1 — for images that only log measurements. Its verdict is still
    /// `unjudged`, never `pass`. Default false: the self-test fails closed.
    pub allow_unjudged: bool,
    /// `hwlat = "10s"`: run the kernel's hwlat tracer on the measured CPUs this long
    /// before the tests (`crate::explain::hardware`); `None` (the default): not run.
    pub hwlat: Option<Duration>,
    /// `hwlat_limit_us`: a hardware gap above this fails the self-test, **µs**
    /// (default [`DEFAULT_HWLAT_LIMIT_US`]).
    pub hwlat_limit_us: u64,
    /// `require_preempt_rt` (default true): a kernel that is not PREEMPT_RT
    /// (`crate::sys::info::SysInfo::realtime`) fails the self-test, whatever it
    /// measured — the self-test is a real-time acceptance test. False measures and
    /// judges any kernel (the verdict line still names its preemption model).
    pub require_preempt_rt: bool,
}

/// Default of `[selftest] hwlat_limit_us`, **µs**: the threshold OpenShift's latency
/// tests give hwlatdetect ("you cannot fix hardware latency spikes by tuning").
pub const DEFAULT_HWLAT_LIMIT_US: u64 = 20;
/// Longest `[selftest] hwlat` gate: it holds every measured CPU with interrupts off
/// half of each second.
pub const MAX_HWLAT: Duration = Duration::from_secs(600);

impl SelftestToml {
    /// The section and its measurement duration.
    pub fn resolve(&self, src: &Source<'_>) -> Result<(SelftestSection, Duration), ConfigError> {
        let (text, d) = match &self.duration {
            Some(s) => duration_key(src, s, "selftest.duration")?,
            None => (
                DEFAULT_DURATION.to_string(),
                crate::duration::parse(DEFAULT_DURATION).unwrap_or(Duration::from_secs(30)),
            ),
        };
        let hwlat = match &self.hwlat {
            Some(v) => {
                let (_, d) = duration_key(src, v, "selftest.hwlat")?;
                if d > MAX_HWLAT {
                    return Err(src.value_error(
                        v.span(),
                        "selftest.hwlat",
                        "expected at most 10m (the gate holds the CPUs with interrupts off)",
                    ));
                }
                Some(d)
            }
            None => None,
        };
        let hwlat_limit_us = src.in_range(
            &self.hwlat_limit_us,
            "selftest.hwlat_limit_us",
            10..=1_000_000,
            DEFAULT_HWLAT_LIMIT_US,
            "expected 10..1000000 µs (the hwlat tracer reports gaps above 10 µs)",
        )?;
        let section = SelftestSection {
            mode: self.mode.unwrap_or_default(),
            duration: text,
            allow_unjudged: self.allow_unjudged.unwrap_or(false),
            hwlat,
            hwlat_limit_us,
            require_preempt_rt: self.require_preempt_rt.unwrap_or(true),
        };
        Ok((section, d))
    }
}

/// A duration key (`selftest.duration`, `pmq.duration`, …): seconds with an optional
/// `s`, `m`, `h` or `d` suffix, at least 1 s. Returns the text as written and its value.
pub(super) fn duration_key(
    src: &Source<'_>,
    s: &Spanned<String>,
    key: &str,
) -> Result<(String, Duration), ConfigError> {
    let v = s.get_ref();
    let d = crate::duration::parse(v).map_err(|e| src.value_error(s.span(), key, e))?;
    if d.is_zero() {
        return Err(src.value_error(s.span(), key, "must be at least 1s"));
    }
    Ok((v.clone(), d))
}

/// `[cyclic]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CyclicToml {
    enabled: Option<bool>,
    cpus: Option<Spanned<String>>,
    interval_us: Option<Spanned<u64>>,
    priority: Option<Spanned<i32>>,
    duration: Option<Spanned<String>>,
}

/// `[cyclic]`: the timer-wakeup test, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CyclicSection {
    /// Run the test (`enabled = false` to skip it).
    pub enabled: bool,
    /// CPUs to measure (cpu-list); default every CPU this process may run on
    /// (online ∩ its cpuset), isolated ones included.
    pub cpus: Option<String>,
    /// Wakeup interval in **µs** (same on every CPU).
    pub interval_us: u64,
    /// SCHED_FIFO priority 1..99.
    pub priority: i32,
    /// How long this test measures (default: `[selftest] duration`).
    pub duration: Option<Duration>,
}

/// A `cpus` key: a cpu-list (or mask) of online CPUs.
pub(super) fn cpus_key(
    src: &Source<'_>,
    v: &Spanned<String>,
    key: &str,
    topo: &CpuTopology,
) -> Result<CpuSet, ConfigError> {
    let value = v.get_ref();
    topo.where_to_run(value).map_err(|e| {
        let why = match e {
            CpuListError::Parse(e) => format!("{e}; expected a cpu-list like \"0-3,5\""),
            e => e.message(),
        };
        src.value_error(v.span(), key, why)
    })
}

impl CyclicToml {
    /// Checks interval and priority; returns the section and the CPUs to measure.
    pub fn resolve(
        &self,
        topo: &CpuTopology,
        src: &Source<'_>,
    ) -> Result<(CyclicSection, CpuSet), ConfigError> {
        let interval_us = src.in_range(
            &self.interval_us,
            "cyclic.interval_us",
            1..=MAX_INTERVAL_US,
            DEFAULT_INTERVAL_US,
            format!("expected 1..{MAX_INTERVAL_US} µs"),
        )?;
        let priority = src.in_range(
            &self.priority,
            "cyclic.priority",
            1..=99,
            crate::measure::DEFAULT_RT_PRIORITY,
            "expected a SCHED_FIFO priority of 1..99",
        )?;
        let cpus = match &self.cpus {
            Some(c) => cpus_key(src, c, "cyclic.cpus", topo)?,
            None => topo.run_default(),
        };
        let section = CyclicSection {
            enabled: self.enabled.unwrap_or(true),
            cpus: self.cpus.as_ref().map(|c| c.get_ref().clone()),
            interval_us,
            priority,
            duration: match &self.duration {
                Some(d) => Some(duration_key(src, d, "cyclic.duration")?.1),
                None => None,
            },
        };
        Ok((section, cpus))
    }
}

/// `[load]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoadToml {
    spec: Option<Spanned<String>>,
    cmd: Option<Spanned<String>>,
    cpus: Option<Spanned<String>>,
}

/// `[load]`: what runs beside the measurement, as written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadSection {
    /// Built-in load, e.g. `cpu:2,vm:1:64M,io:1`.
    pub spec: Option<String>,
    /// External load command, e.g. `stress-ng --cpu 2`.
    pub cmd: Option<String>,
    /// CPUs for the load (cpu-list); default the CPUs beside the measured ones
    /// (off their cores while another core is allowed).
    pub cpus: Option<String>,
}

impl LoadToml {
    /// The section as written.
    pub fn as_written(&self) -> LoadSection {
        let s = |v: &Option<Spanned<String>>| v.as_ref().map(|v| v.get_ref().clone());
        LoadSection {
            spec: s(&self.spec),
            cmd: s(&self.cmd),
            cpus: s(&self.cpus),
        }
    }

    /// Validates the load the way `--load`, `--load-cmd` and `--load-cpus` are
    /// validated; `None` when no load is configured.
    pub fn resolve(
        &self,
        topo: &CpuTopology,
        src: &Source<'_>,
    ) -> Result<Option<LoadSpec>, ConfigError> {
        fn s(v: &Option<Spanned<String>>) -> Option<&str> {
            v.as_ref().map(|v| v.get_ref().as_str())
        }
        let req = LoadRequest {
            spec: s(&self.spec),
            cmd: s(&self.cmd),
            cpus: s(&self.cpus),
        };
        crate::load::validate(&req, topo).map_err(|e| {
            let (key, value) = match &e {
                LoadError::Invalid {
                    field: LoadField::Spec,
                    ..
                } => ("load.spec", &self.spec),
                LoadError::Invalid {
                    field: LoadField::Cmd,
                    ..
                } => ("load.cmd", &self.cmd),
                LoadError::Invalid {
                    field: LoadField::Cpus,
                    ..
                }
                | LoadError::CpusWithoutLoad => ("load.cpus", &self.cpus),
            };
            // validate() names only parts that are present; its message for CPUs
            // without a load names the flags, here the keys.
            let span = value.as_ref().map_or(0..0, |v| v.span());
            let message = match e {
                LoadError::CpusWithoutLoad => "needs load.spec or load.cmd",
                _ => e.message(),
            };
            src.value_error(span, key, message)
        })
    }
}

/// `[output]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputToml {
    results_dir: Option<Spanned<PathBuf>>,
    keep: Option<Spanned<usize>>,
    prometheus: Option<Spanned<PathBuf>>,
    fallback_dir: Option<Spanned<PathBuf>>,
    histogram_us: Option<Spanned<u64>>,
}

/// `[output]`, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputSection {
    /// Directory of the results store (absolute).
    pub results_dir: PathBuf,
    /// Runs to keep (at least 1).
    pub keep: usize,
    /// Prometheus textfile to write (e.g. for node_exporter's textfile collector). A
    /// missing directory is a warning at run time, not a configuration error: the
    /// collector may be installed later, and an optional output never stops the test.
    pub prometheus: Option<PathBuf>,
    /// Where this boot's result is kept when the results store cannot take it (see
    /// [`DEFAULT_FALLBACK_DIR`]); `rtbench report` looks there too.
    pub fallback_dir: PathBuf,
    /// `histogram_us`: the range of every stored test's 1-µs histogram as `rtbench plot`
    /// draws it, **µs** — cyclictest's `-h US` (rt-tests src/cyclictest/cyclictest.c:
    /// buckets of 1 µs up to US, samples beyond counted as overflows). The stored
    /// The ns histogram keeps every sample whatever it is; `None`: the plot covers them all.
    pub histogram_us: Option<u64>,
}

/// Largest `[output] histogram_us`, **µs** (one second, as cyclictest's largest useful
/// `-h` for 1-µs buckets).
pub const MAX_HISTOGRAM_US: u64 = 1_000_000;

impl OutputToml {
    /// Checks `keep` and the paths.
    pub fn resolve(&self, src: &Source<'_>) -> Result<OutputSection, ConfigError> {
        let keep = match &self.keep {
            Some(k) if *k.get_ref() == 0 => {
                return Err(src.value_error(
                    k.span(),
                    "output.keep",
                    "expected at least 1 run to keep",
                ));
            }
            Some(k) => *k.get_ref(),
            None => DEFAULT_KEEP,
        };
        let absolute = |v: &Option<Spanned<PathBuf>>, key: &str, what: &str, default: &str| match v
        {
            Some(d) => {
                src.nameable(d, key)?;
                if !d.get_ref().is_absolute() {
                    return Err(src.value_error(
                        d.span(),
                        key,
                        format!(
                            "expected an absolute {what} (a service has no useful working directory)"
                        ),
                    ));
                }
                Ok(d.get_ref().clone())
            }
            None => Ok(PathBuf::from(default)),
        };
        let results_dir = absolute(
            &self.results_dir,
            "output.results_dir",
            "path",
            DEFAULT_RESULTS_DIR,
        )?;
        let fallback_dir = absolute(
            &self.fallback_dir,
            "output.fallback_dir",
            "path",
            DEFAULT_FALLBACK_DIR,
        )?;
        if let Some(p) = &self.prometheus {
            absolute(&self.prometheus, "output.prometheus", "file path", "")?;
            if p.get_ref().file_name().is_none() {
                return Err(src.value_error(
                    p.span(),
                    "output.prometheus",
                    "expected a file path, not a directory",
                ));
            }
        }
        let histogram_us = match &self.histogram_us {
            Some(h) if !(1..=MAX_HISTOGRAM_US).contains(h.get_ref()) => {
                return Err(src.value_error(
                    h.span(),
                    "output.histogram_us",
                    format!("expected 1..{MAX_HISTOGRAM_US} µs (as cyclictest -h)"),
                ));
            }
            h => h.as_ref().map(|h| *h.get_ref()),
        };
        Ok(OutputSection {
            results_dir,
            keep,
            histogram_us,
            prometheus: self.prometheus.as_ref().map(|p| p.get_ref().clone()),
            fallback_dir,
        })
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
        assert!(c.selftest.require_preempt_rt);
        assert!(c.cyclic.enabled && c.pmq.is_none() && c.pipe.is_none());
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
        assert!(c
            .pmq
            .as_ref()
            .is_some_and(|p| p.enabled && p.interval_us == 1000));
        assert!(c
            .pipe
            .as_ref()
            .is_some_and(|p| p.enabled && p.interval_us == 1000));
        assert!(c
            .poll
            .as_ref()
            .is_some_and(|p| p.enabled && p.cpus.to_list() == "1" && p.priority == 0));
        assert_eq!(c.limits.per_test.len(), 4);
        assert_eq!(
            c.cyclic.duration,
            Some(std::time::Duration::from_secs(12 * 3600))
        );
        assert_eq!(c.monitor.limits.max_us, Some(100));
        assert_eq!(c.monitor.pm_qos_us, Some(0));
        assert_eq!(c.output.histogram_us, Some(800));
        assert!(!c.tuning.is_empty());
        let names: Vec<&str> = c.conditions.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["idle", "stress", "isolated"]);
        assert_eq!(c.unit.station.as_deref(), Some("EOL-3"));
        assert!(c.conditions[0].measure.load_spec.is_none());
        assert!(c.conditions[2]
            .measure
            .pmq
            .as_ref()
            .is_some_and(|p| !p.enabled));
    }
}
