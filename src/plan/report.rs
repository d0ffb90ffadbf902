//! `rtbench report`: flags and the configuration → [`ReportPlan`]. The configuration
//! is read only when a directory comes from it (`[output]`, `[monitor] dir`).

use super::usage;
use crate::cli::report::ReportArgs;
use crate::config::{self, Reader};
use crate::error::Result;
use crate::sys::SysRoot;
use std::path::PathBuf;

/// A validated `rtbench report`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReportPlan {
    /// The self-test's kept runs: this boot's, or every one with `--all`.
    Runs(RunsPlan),
    /// `--since TIME`: the monitor's windows of a period.
    #[cfg(feature = "monitor")]
    Since(SincePlan),
}

/// `rtbench report [--all]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunsPlan {
    /// The results store: `--dir` (an existing directory), else `[output] results_dir`
    /// (which may not exist yet: no self-test has run).
    pub dir: PathBuf,
    /// `[output] fallback_dir`: this boot's run when the store did not take it.
    pub fallback_dir: PathBuf,
    /// `--all`: every kept run, not only the newest.
    pub all: bool,
    /// `--json` (`--format json`): the runs as JSON on standard output.
    pub json: bool,
    /// `--format junit`: the runs as JUnit XML on standard output.
    pub junit: bool,
}

/// `rtbench report --since TIME`.
#[cfg(feature = "monitor")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SincePlan {
    /// The period, at least 1 s (at most [`crate::duration::MAX_SECS`]).
    pub period: std::time::Duration,
    /// The monitor's directory, which holds a window store.
    pub dir: PathBuf,
    /// `--json`: the summary as JSON on standard output.
    pub json: bool,
}

/// Validates `rtbench report`. Errors ([`crate::error::Error::Usage`], or a
/// configuration error, exit 2): `--since` not a period of at least 1 s, or no window
/// store where it points; `--dir` that is not an existing directory; the
/// configuration ([`config::locate()`]).
pub fn plan(args: &ReportArgs) -> Result<ReportPlan> {
    let format = args.format.as_deref();
    if args.json && format.is_some_and(|f| f != "json") {
        return usage(
            "--format",
            format.unwrap_or_default(),
            "conflicts with --json (which is --format json)",
        );
    }
    if format == Some("json") && !args.json {
        let args_json = ReportArgs {
            json: true,
            format: None,
            ..args.clone()
        };
        return plan(&args_json);
    }
    #[cfg(feature = "monitor")]
    if let Some(since) = &args.since {
        if format == Some("junit") {
            return usage(
                "--format",
                "junit",
                "the monitor's windows have no JUnit form; expected table or json with --since",
            );
        }
        return since_plan(args, since).map(ReportPlan::Since);
    }
    let cfg = configuration(args)?;
    let dir = args.dir.clone().unwrap_or(cfg.output.results_dir);
    // A directory named on the command line must be one; the configured one may not
    // exist yet (no self-test has run).
    if args.dir.is_some() {
        match std::fs::metadata(&dir) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return usage("--dir", dir.display(), "directory does not exist")
            }
            Err(e) => return usage("--dir", dir.display(), format!("cannot read: {e}")),
            Ok(m) if !m.is_dir() => {
                return usage(
                    "--dir",
                    dir.display(),
                    "not a directory; expected the results directory",
                )
            }
            Ok(_) => {}
        }
    }
    Ok(ReportPlan::Runs(RunsPlan {
        dir,
        fallback_dir: cfg.output.fallback_dir,
        all: args.all,
        json: args.json,
        junit: format == Some("junit"),
    }))
}

/// The configuration `args` names (the default file, or the defaults when that does
/// not exist).
fn configuration(args: &ReportArgs) -> Result<config::Config> {
    let root = SysRoot::host();
    Ok(config::locate(args.config.as_deref(), Reader::Report, &root)?.config)
}

/// `--since`: the period, and where the monitor's windows are. `--dir DIR`: DIR itself
/// when the monitor was given it with `--dir`, else DIR/monitor (the monitor's default
/// under a results directory); without `--dir`, the configuration's `[monitor] dir`.
#[cfg(feature = "monitor")]
fn since_plan(args: &ReportArgs, since: &str) -> Result<SincePlan> {
    use crate::results::window::{self, WindowStore};
    let period = crate::duration::parse(since).or_else(|e| usage("--since", since, e))?;
    if period.is_zero() {
        return usage("--since", since, "expected a period of at least 1s");
    }
    let dir = match &args.dir {
        // DIR itself when it holds a store file (either, of any kind: what is wrong
        // with it is said when it is read), else DIR/monitor.
        Some(d) if !WindowStore::new(d, u64::MAX).files().is_empty() => d.clone(),
        Some(d) => window::default_dir(d),
        None => {
            let cfg = configuration(args)?;
            cfg.monitor
                .dir
                .unwrap_or_else(|| window::default_dir(&cfg.output.results_dir))
        }
    };
    if WindowStore::new(&dir, u64::MAX).files().is_empty() {
        // Name every place looked in: --dir DIR itself, then DIR/monitor.
        let looked = match &args.dir {
            Some(d) if *d != dir => format!("{} or {}", d.display(), dir.display()),
            _ => dir.display().to_string(),
        };
        return usage(
            "--since",
            since,
            format!("no monitor windows in {looked} (is rtbench-monitor.service running?)"),
        );
    }
    Ok(SincePlan {
        period,
        dir,
        json: args.json,
    })
}
