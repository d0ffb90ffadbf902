//! `rtbench monitor`: the `[monitor]` section with the flags laid over it.

use super::{parse_cpus, usage};
use crate::cli::monitor::MonitorArgs;
use crate::config::explain::ExplainSection;
use crate::config::monitor::{self as cfg, MonitorSection};
use crate::config::selftest::OutputSection;
use crate::error::Result;
use crate::explain::explainer::ExplainSpec;
use crate::explain::SpikeKind;
use crate::measure::monitor::MonitorSpec;
use crate::measure::{RunControl, ThreadSpec};
use crate::monitor::MonitorPlan;
use crate::results::window;
use crate::sys::cpus::CpuTopology;
use crate::sys::sched::Policy;
use std::path::Path;
use std::time::Duration;

/// How often the main thread looks for a finished window (and pets the watchdog).
pub const TICK: Duration = Duration::from_secs(1);

/// The plan from the configuration's `[monitor]` and `[output]` and the flags, which
/// win. Errors name the flag.
pub fn plan(
    args: &MonitorArgs,
    section: &MonitorSection,
    output: &OutputSection,
    explain: &ExplainSection,
    topo: &CpuTopology,
) -> Result<MonitorPlan> {
    let cpus = match &args.cpus {
        Some(s) => parse_cpus("-a", s, topo)?,
        None => section.cpus.clone(),
    };
    let (interval_us, priority, window, duration) = timing(args, section)?;
    let (dir, prometheus) = outputs(args, section, output)?;
    // The main thread beside the measured CPUs and their SMT siblings, on an allowed
    // CPU, as for every measuring command (CpuTopology::companions).
    let placed = topo.companions(Some(&cpus));
    let threads: Vec<ThreadSpec> = cpus
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
    let explain = explain_spec(explain, section, threads.len());
    Ok(MonitorPlan {
        spec: MonitorSpec {
            threads,
            control: RunControl {
                duration,
                loops: None,
                mlockall: true,
                pm_qos_us: section.pm_qos_us,
                main_cpus: placed.main,
                report_every: Some(TICK),
                break_ns: None,
                tracemark: false,
                histogram: None,
                explain,
            },
        },
        window,
        rolling: section.rolling.max(window),
        dir,
        store_bytes: section.store_kib * 1024,
        prometheus,
        limits: section.limits.clone(),
        sharing: placed.main_shares.into_iter().collect(),
    })
}

/// `-i`, `-p`, `--window` and `-D` (`0`: no end), or the section's values.
fn timing(
    args: &MonitorArgs,
    section: &MonitorSection,
) -> Result<(u64, i32, Duration, Option<Duration>)> {
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
    Ok((interval_us, priority, window, duration))
}

/// `--dir` and `--prometheus` (absolute paths), or the section's, each checked.
fn outputs(
    args: &MonitorArgs,
    section: &MonitorSection,
    output: &OutputSection,
) -> Result<(std::path::PathBuf, Option<std::path::PathBuf>)> {
    let (dir_flag, dir) = match (&args.dir, &section.dir) {
        (Some(d), _) if !d.is_absolute() => {
            return usage("--dir", d.display(), "expected an absolute path")
        }
        (Some(d), _) => ("--dir", d.clone()),
        (None, Some(d)) => ("monitor.dir", d.clone()),
        (None, None) => (
            "output.results_dir",
            window::default_dir(&output.results_dir),
        ),
    };
    check_dir(dir_flag, &dir)?;
    let (prom_flag, prometheus) = match &args.prometheus {
        // As `monitor.prometheus` in the file: a unit's working directory is `/`, so a
        // relative textfile would land wherever the monitor happens to be started.
        Some(p) if !p.is_absolute() => {
            return usage(
                "--prometheus",
                p.display(),
                "expected an absolute file path",
            )
        }
        Some(p) => ("--prometheus", Some(p.clone())),
        None => ("monitor.prometheus", section.prometheus.clone()),
    };
    if let Some(p) = &prometheus {
        check_prometheus(prom_flag, p)?;
    }
    Ok((dir, prometheus))
}

/// The flight recorder of the monitor's `threads` threads: every window's new maxima
/// over `[explain] threshold_us` (or `[monitor.limits] max_us`) are explained; the
/// thresholds go back down at each window.
fn explain_spec(
    explain: &ExplainSection,
    section: &MonitorSection,
    threads: usize,
) -> Option<ExplainSpec> {
    explain
        .enabled
        .then(|| explain.threshold_us.or(section.limits.max_us))
        .flatten()
        .map(|us| {
            let ns = us.saturating_mul(crate::sys::clock::NS_PER_US);
            ExplainSpec {
                buffer_kib: explain.buffer_kib,
                timerlat: explain.timerlat,
                keep: 4,
                // Each window's new maxima, not a ledger of every sample.
                ledger: false,
                ..ExplainSpec::new("monitor", SpikeKind::Timer, vec![ns; threads])
            }
        })
}

/// The files the monitor keeps in its directory: each must be a regular file if it
/// exists.
const DIR_FILES: [&str; 3] = [
    crate::monitor::aggregate::STATE_FILE,
    window::CURRENT,
    window::PREVIOUS,
];

/// The first existing path of `path` and its ancestors that is not a directory, with
/// what it is. Paths that cannot be examined (permissions) are left to the run.
fn non_directory(path: &Path) -> Option<(&Path, &'static str)> {
    for p in path.ancestors() {
        match std::fs::metadata(p) {
            Ok(m) if m.is_dir() => return None,
            Ok(m) => return Some((p, crate::sys::atomic::kind_name(m.file_type()))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            // ENOTDIR: an ancestor is not a directory, found further up.
            Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => continue,
            Err(_) => return None,
        }
    }
    None
}

/// The monitor's directory `dir` (given with `flag`) before anything starts: it, or
/// the part of it that exists, must be a directory (a link to one is fine, a dangling
/// link or a loop is not), and the state file and the window store in it, where they
/// exist, regular files, not links ([`crate::sys::kept`]). A directory that turns out read-only
/// or full is not an error here: the run says so once and keeps measuring.
/// Errors: [`crate::error::Error::Usage`] naming the path and what was expected.
pub fn check_dir(flag: &str, dir: &Path) -> Result<()> {
    if let Some(why) = crate::sys::atomic::unnameable(dir) {
        return usage(flag, dir.display(), format!("path {why}"));
    }
    if let Some(why) = broken_link(dir) {
        return usage(flag, dir.display(), why);
    }
    if let Some((p, kind)) = non_directory(dir) {
        let what = if p == dir {
            format!("not a directory (a {kind})")
        } else {
            format!("{} is not a directory (a {kind})", p.display())
        };
        return usage(flag, dir.display(), what);
    }
    for name in DIR_FILES {
        let p = dir.join(name);
        if let Some(why) = crate::sys::kept::why_not(&p) {
            return usage(flag, dir.display(), format!("{} {why}", p.display()));
        }
    }
    Ok(())
}

/// The first of `path` and its ancestors that is a dangling symbolic link or a loop of
/// links, said as [`crate::sys::kept::why_not_dir`] says it (with the link's path when
/// it is an ancestor): creating the directory below it would fail at every write, so a
/// monitor would run for weeks without saving anything.
fn broken_link(path: &Path) -> Option<String> {
    path.ancestors()
        .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink()))
        .find_map(|p| {
            crate::sys::kept::why_not_dir(p).map(|why| {
                if p == path {
                    why
                } else {
                    format!("{} {why}", p.display())
                }
            })
        })
}

/// The Prometheus textfile `path` (given with `flag`): a file name, not a directory,
/// in a directory whose existing part is a directory; a regular file where it exists
/// (not a link, FIFO or device: the monitor rewrites it every window, as a file it
/// keeps, [`crate::sys::kept`]). A directory that does not exist
/// yet (node_exporter not installed) is not an error: the run warns once and writes
/// the file when it appears, as the self-test does.
/// Errors: [`crate::error::Error::Usage`] naming the path and what was expected.
pub fn check_prometheus(flag: &str, path: &Path) -> Result<()> {
    use std::os::unix::ffi::OsStrExt;
    if let Some(why) = crate::sys::atomic::unnameable(path) {
        return usage(flag, path.display(), format!("path {why}"));
    }
    if path.as_os_str().as_bytes().ends_with(b"/") || path.file_name().is_none() {
        return usage(
            flag,
            path.display(),
            "expected a file name, not a directory",
        );
    }
    if std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
        return usage(flag, path.display(), "is a directory; expected a file name");
    }
    // Rewritten every window for weeks: a kept file, regular only (node_exporter's
    // textfile collector reads regular `*.prom` files of its directory).
    if let Some(why) = crate::sys::kept::why_not(path) {
        return usage(flag, path.display(), why);
    }
    let dir = crate::sys::atomic::parent_dir(path);
    if let Some(why) = broken_link(&dir) {
        return usage(flag, path.display(), format!("{} {why}", dir.display()));
    }
    if let Some((p, kind)) = non_directory(&dir) {
        return usage(
            flag,
            path.display(),
            format!("{} is not a directory (a {kind})", p.display()),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use crate::cpuset::CpuSet;
    use clap::Parser;

    fn set(s: &str) -> CpuSet {
        CpuSet::parse_list(s, 4).unwrap()
    }

    fn plan_with(argv: &str, topo: &CpuTopology) -> MonitorPlan {
        let mut v = vec![
            "rtbench",
            "monitor",
            "--dir",
            "/nonexistent-rtbench-test/mon",
        ];
        v.extend(argv.split_whitespace());
        let Command::Monitor(args) = Cli::try_parse_from(v).unwrap().command else {
            unreachable!()
        };
        let cfg = crate::config::parse("", "f", &crate::sys::SysRoot::host()).unwrap();
        // `[monitor] cpus` not given: its default on this topology.
        let section = MonitorSection {
            cpus: topo.run_default(),
            ..cfg.monitor
        };
        plan(&args, &section, &cfg.output, &cfg.explain, topo).unwrap()
    }

    /// The planner every measuring command uses (CpuTopology::companions): the main
    /// thread on an allowed CPU, off the measured CPUs' cores while one is free.
    #[test]
    fn cpus_and_main_thread_are_planned_as_for_every_command() {
        // Two cores of SMT siblings, {0,2} and {1,3}; the cpuset leaves out CPU 0.
        let mut t = CpuTopology::uniform(4, "");
        t.cores = vec![set("0,2"), set("1,3")];
        t.allowed = set("1-3");
        // CPU 1 measured: not its sibling 3, not CPU 0 (outside the cpuset), but 2.
        let p = plan_with("-a 1", &t);
        assert_eq!(p.cpus_text(), "1");
        assert_eq!(p.spec.control.main_cpus, Some(set("2")));
        assert!(p.sharing.is_empty());
        // By default every allowed CPU is measured, and the main thread must share.
        let p = plan_with("", &t);
        assert_eq!(p.cpus_text(), "1-3");
        let main = p.spec.control.main_cpus.clone().unwrap();
        assert!(main.is_subset(&t.allowed), "{main}");
        assert_eq!(p.sharing.len(), 1);
        assert_eq!(p.sharing[0].who, "main thread");
    }
}
