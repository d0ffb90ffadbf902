//! `[monitor]` and `[monitor.limits]`: the long-running field measurement
//! (`rtbench monitor`, `systemd/rtbench-monitor.service`). Every key is optional; the
//! defaults are documented in `systemd/rtbench.toml`.

use super::limits::Limits;
use super::selftest::cpus_key;
use super::Source;
use crate::cpuset::CpuSet;
use crate::error::ConfigError;
use crate::sys::cpus::CpuTopology;
use serde::Deserialize;
use std::path::PathBuf;
use std::time::Duration;
use toml::Spanned;

/// Default of `[monitor] interval_us`, **µs**.
pub const DEFAULT_INTERVAL_US: u64 = 1000;
/// Default of `[monitor] priority` (SCHED_FIFO).
pub const DEFAULT_PRIORITY: i32 = crate::measure::DEFAULT_RT_PRIORITY;
/// Default of `[monitor] window`: OSADL's monitoring reports maxima of 5-minute
/// intervals.
pub const DEFAULT_WINDOW: &str = "5m";
/// Default of `[monitor] rolling`: the rolling histogram covers this much history.
pub const DEFAULT_ROLLING: &str = "24h";
/// Default of `[monitor] store_kib`: disk space of the window store, **KiB**.
pub const DEFAULT_STORE_KIB: u64 = 4096;
/// Shortest window (tests use 1 s; the field, minutes).
pub const MIN_WINDOW: Duration = Duration::from_secs(1);
/// Longest window (one day).
pub const MAX_WINDOW: Duration = Duration::from_secs(86_400);
/// Longest rolling history (90 days).
pub const MAX_ROLLING: Duration = Duration::from_secs(90 * 86_400);
/// Smallest interval, **µs**: the monitor runs for weeks beside production work.
pub const MIN_INTERVAL_US: u64 = 50;
/// Largest interval, **µs** (one second).
pub const MAX_INTERVAL_US: u64 = 1_000_000;
/// Smallest window store, **KiB**.
pub const MIN_STORE_KIB: u64 = 64;
/// Largest `store_kib`: its size in bytes fits in 64 bits (2^54 - 1 KiB).
pub const MAX_STORE_KIB: u64 = u64::MAX >> 10;

/// `[monitor]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MonitorToml {
    cpus: Option<Spanned<String>>,
    interval_us: Option<Spanned<u64>>,
    priority: Option<Spanned<i32>>,
    window: Option<Spanned<String>>,
    rolling: Option<Spanned<String>>,
    dir: Option<Spanned<PathBuf>>,
    store_kib: Option<Spanned<u64>>,
    prometheus: Option<Spanned<PathBuf>>,
    pm_qos_us: Option<Spanned<i32>>,
    #[serde(default)]
    limits: Limits,
}

/// `[monitor]`, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MonitorSection {
    /// CPUs to monitor; default [`CpuTopology::run_default`] (every CPU this process
    /// may run on: online and in its cpuset), as `[cyclic] cpus`.
    pub cpus: CpuSet,
    /// Wakeup interval, **µs**.
    pub interval_us: u64,
    /// SCHED_FIFO priority 1..99.
    pub priority: i32,
    /// Length of one window.
    pub window: Duration,
    /// History the rolling histogram covers.
    pub rolling: Duration,
    /// State and window store directory; default `<[output] results_dir>/monitor`.
    pub dir: Option<PathBuf>,
    /// Disk space of the window store, **KiB**.
    pub store_kib: u64,
    /// Prometheus textfile, updated every window.
    pub prometheus: Option<PathBuf>,
    /// `/dev/cpu_dma_latency` value held while monitoring, **µs**; `None` (the
    /// default): leave PM QoS as the production system has it.
    pub pm_qos_us: Option<i32>,
    /// Limits per window; a window beyond one is a warning entry.
    pub limits: Limits,
}

/// A duration key within `min..=max`.
fn duration_key(
    src: &Source<'_>,
    v: &Spanned<String>,
    key: &str,
    min: Duration,
    max: Duration,
) -> Result<Duration, ConfigError> {
    let text = v.get_ref();
    let d = crate::duration::parse(text).map_err(|e| src.value_error(v.span(), key, e))?;
    if d < min || d > max {
        return Err(src.value_error(
            v.span(),
            key,
            format!(
                "expected {} to {}",
                crate::duration::format(min),
                crate::duration::format(max)
            ),
        ));
    }
    Ok(d)
}

impl MonitorToml {
    /// Validates the section against the system.
    pub fn resolve(
        &self,
        topo: &CpuTopology,
        src: &Source<'_>,
    ) -> Result<MonitorSection, ConfigError> {
        let cpus = match &self.cpus {
            Some(c) => cpus_key(src, c, "monitor.cpus", topo)?,
            None => topo.run_default(),
        };
        let interval_us = src.in_range(
            &self.interval_us,
            "monitor.interval_us",
            MIN_INTERVAL_US..=MAX_INTERVAL_US,
            DEFAULT_INTERVAL_US,
            format!("expected {MIN_INTERVAL_US}..{MAX_INTERVAL_US} µs"),
        )?;
        let priority = src.in_range(
            &self.priority,
            "monitor.priority",
            1..=99,
            DEFAULT_PRIORITY,
            "expected a SCHED_FIFO priority of 1..99",
        )?;
        let window = match &self.window {
            Some(v) => duration_key(src, v, "monitor.window", MIN_WINDOW, MAX_WINDOW)?,
            None => parse_default(DEFAULT_WINDOW),
        };
        let rolling = match &self.rolling {
            Some(v) => duration_key(src, v, "monitor.rolling", window, MAX_ROLLING)?,
            None => parse_default(DEFAULT_ROLLING).max(window),
        };
        if let Some(d) = &self.dir {
            src.nameable(d, "monitor.dir")?;
        }
        if let Some(p) = &self.prometheus {
            src.nameable(p, "monitor.prometheus")?;
        }
        let dir = match &self.dir {
            Some(d) if !d.get_ref().is_absolute() => {
                return Err(src.value_error(d.span(), "monitor.dir", "expected an absolute path"))
            }
            Some(d) => Some(d.get_ref().clone()),
            None => None,
        };
        let store_kib = match &self.store_kib {
            Some(v) if !(MIN_STORE_KIB..=MAX_STORE_KIB).contains(v.get_ref()) => {
                return Err(src.value_error(
                    v.span(),
                    "monitor.store_kib",
                    format!("expected {MIN_STORE_KIB}..{MAX_STORE_KIB} KiB"),
                ))
            }
            Some(v) => *v.get_ref(),
            None => DEFAULT_STORE_KIB,
        };
        // Only the shape here (the selftest reads this section too); what the path
        // names on this system is checked by `rtbench monitor` before it starts
        // (crate::plan::monitor), and a missing directory is a warning there.
        if let Some(p) = &self.prometheus {
            let path = p.get_ref();
            use std::os::unix::ffi::OsStrExt;
            let trailing = path.as_os_str().as_bytes().ends_with(b"/");
            if !path.is_absolute() || path.file_name().is_none() || trailing {
                return Err(src.value_error(
                    p.span(),
                    "monitor.prometheus",
                    "expected an absolute file path",
                ));
            }
        }
        if let Some(v) = &self.pm_qos_us {
            if *v.get_ref() < 0 {
                return Err(src.value_error(
                    v.span(),
                    "monitor.pm_qos_us",
                    "expected a PM QoS value >= 0 µs",
                ));
            }
        }
        Ok(MonitorSection {
            cpus,
            interval_us,
            priority,
            window,
            rolling,
            dir,
            store_kib,
            prometheus: self.prometheus.as_ref().map(|p| p.get_ref().clone()),
            pm_qos_us: self.pm_qos_us.as_ref().map(|v| *v.get_ref()),
            limits: self.limits.clone(),
        })
    }
}

fn parse_default(text: &str) -> Duration {
    crate::duration::parse(text).expect("the documented default parses")
}

#[cfg(test)]
mod tests {
    use crate::sys::SysRoot;

    #[test]
    fn defaults_and_errors_name_the_key() {
        let root = SysRoot::host();
        let c = crate::config::parse("", "f", &root).unwrap();
        assert_eq!(c.monitor.window.as_secs(), 300);
        assert_eq!(c.monitor.rolling.as_secs(), 86_400);
        assert_eq!((c.monitor.interval_us, c.monitor.priority), (1000, 98));
        assert_eq!(c.monitor.pm_qos_us, None);
        for (text, key) in [
            ("[monitor]\nwindow = \"0s\"\n", "monitor.window"),
            ("[monitor]\nwindow = \"5x\"\n", "monitor.window"),
            (
                "[monitor]\nwindow = \"10m\"\nrolling = \"5m\"\n",
                "monitor.rolling",
            ),
            ("[monitor]\ninterval_us = 10\n", "monitor.interval_us"),
            ("[monitor]\npriority = 0\n", "monitor.priority"),
            ("[monitor]\ndir = \"state\"\n", "monitor.dir"),
            ("[monitor]\nstore_kib = 1\n", "monitor.store_kib"),
            ("[monitor]\ncpus = \"9999\"\n", "monitor.cpus"),
            ("[monitor]\nprometheus = \"x.prom\"\n", "monitor.prometheus"),
            (
                "[monitor]\nprometheus = \"/var/lib/\"\n",
                "monitor.prometheus",
            ),
        ] {
            let e = crate::config::parse(text, "f", &root).unwrap_err();
            assert_eq!(e.key(), Some(key), "{text:?}: {e}");
        }
        let e = crate::config::parse("[monitor.limits]\nmax_ms = 1\n", "f", &root).unwrap_err();
        assert!(e.to_string().contains("max_ms"), "{e}");
        let c = crate::config::parse("[monitor.limits]\nmax_us = 80\n", "f", &root).unwrap();
        assert_eq!(c.monitor.limits.max_us, Some(80));
        // A Prometheus directory that does not exist is the monitor's warning, not an
        // error of the configuration (which the self-test reads too).
        let text = "[monitor]\nprometheus = \"/nonexistent-rtbench/x.prom\"\n";
        assert!(crate::config::parse(text, "f", &root).is_ok());
    }
}
