//! Plan: turns command-line values plus a read-only snapshot of the CPU topology into
//! validated, typed options. Every check happens here, before anything is written or
//! any thread is started; each failure is a one-line [`Error::Usage`] naming the flag,
//! the value and what was expected. Planning has no side effects (the output-path
//! probe creates and removes one empty file). One file per command; the checks several
//! commands share are here.

pub mod cyclic;
pub mod load;
pub mod pair;
#[cfg(feature = "plot")]
pub mod plot;

use crate::cli::RunFlags;
use crate::cpuset::CpuSet;
use crate::error::{Error, Result};
use crate::sys::cpus::CpuTopology;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use crate::measure::DEFAULT_RT_PRIORITY;

/// Largest `-h/-H` bucket count (cyclictest's HIST_MAX).
pub const HIST_MAX: usize = 1_000_000;
/// cyclictest's default distance between thread intervals, **µs**.
pub const DEFAULT_DISTANCE_US: u64 = 500;

pub(crate) fn usage<T>(
    flag: &str,
    value: impl std::fmt::Display,
    msg: impl Into<String>,
) -> Result<T> {
    Err(Error::usage(flag, value, msg))
}

/// Checks that `path` can be written before anything starts: its directory exists and
/// a file can be created in it (a probe file is created and removed — this catches
/// /proc, /sys, read-only mounts and permissions), and the path is not a directory.
pub fn check_output_path(flag: &str, path: &Path) -> Result<()> {
    if path == Path::new("-") {
        return Ok(());
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !dir.is_dir() {
        return usage(
            flag,
            path.display(),
            format!("directory {} does not exist", dir.display()),
        );
    }
    if path.is_dir() {
        return usage(flag, path.display(), "is a directory; expected a file name");
    }
    let probe = dir.join(format!(".rtbench-probe-{}", std::process::id()));
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
    {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => usage(
            flag,
            path.display(),
            format!("cannot create files in {}: {e}", dir.display()),
        ),
    }
}

/// Parses a CPU list given with `flag` as CPUs to run on (see
/// [`CpuTopology::online_subset`]).
pub(crate) fn parse_cpus(flag: &str, s: &str, topo: &CpuTopology) -> Result<CpuSet> {
    topo.online_subset(s)
        .map_err(|e| Error::usage(flag, s, e.message()))
}

/// Interval of thread (or pair) `index` in **µs**: `base + index × distance`
/// (cyclictest/pmqtest `-i` and `-d`), at most one hour.
pub fn thread_interval_us(base: u64, distance: u64, index: usize) -> Result<u64> {
    base.checked_add(distance.saturating_mul(index as u64))
        .filter(|&v| v <= 3_600_000_000)
        .map_or_else(
            || usage("-d", distance, "interval + index × distance exceeds 1 hour"),
            Ok,
        )
}

/// The validated [`RunFlags`] shared by every measuring subcommand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunOptions {
    /// `-D` (`None`: no limit, also for `-D 0`).
    pub duration: Option<Duration>,
    /// `--json` target (checked writable).
    pub json: Option<PathBuf>,
    /// Where the main thread runs (`--mainaffinity`, else the first housekeeping CPU).
    pub main_cpus: Option<CpuSet>,
    /// mlockall unless `--no-mlockall`.
    pub mlockall: bool,
    /// `-N`.
    pub nsecs: bool,
    /// `-q`.
    pub quiet: bool,
    /// Live report period (`None` with `-q`).
    pub report_every: Option<Duration>,
    /// `/dev/cpu_dma_latency` value in **µs** (`None` with `--default-system`).
    pub pm_qos_us: Option<i32>,
}

/// Validates the shared run-control flags.
pub fn run_options(f: &RunFlags, topo: &CpuTopology) -> Result<RunOptions> {
    let duration = match &f.duration {
        None => None,
        Some(d) => {
            let v = crate::duration::parse(d).or_else(|e| usage("-D", d, e))?;
            (v > Duration::ZERO).then_some(v)
        }
    };
    if let Some(p) = &f.json {
        check_output_path("--json", p)?;
    }
    if !(f.report_interval > 0.0 && f.report_interval <= 3600.0) {
        return usage(
            "--report-interval",
            f.report_interval,
            "expected 0 < SECS <= 3600",
        );
    }
    if f.latency < 0 {
        return usage("--latency", f.latency, "expected a PM QoS value >= 0 µs");
    }
    let main_cpus = match &f.mainaffinity {
        Some(s) => parse_cpus("--mainaffinity", s, topo)?,
        None => topo.housekeeping().first().into_iter().collect(),
    };
    Ok(RunOptions {
        duration,
        json: f.json.clone(),
        main_cpus: (!main_cpus.is_empty()).then_some(main_cpus),
        mlockall: !f.no_mlockall,
        nsecs: f.nsecs,
        quiet: f.quiet,
        report_every: (!f.quiet).then(|| Duration::from_secs_f64(f.report_interval)),
        pm_qos_us: (!f.default_system).then_some(f.latency),
    })
}
