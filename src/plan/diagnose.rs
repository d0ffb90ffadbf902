//! `rtbench diagnose`: flags and the configuration → [`DiagnosePlan`].

use super::usage;
use crate::cli::diagnose::DiagnoseArgs;
use crate::config::{self, Reader};
use crate::diagnose::DiagnosePlan;
use crate::error::Result;
use crate::results::window;
use crate::sys::SysRoot;

/// Validates `rtbench diagnose` against the system below `root`: `--since` a period of
/// at least 1 s, `-o` writable ([`super::check_output_path`]), the configuration
/// ([`config::locate()`]). The results directory is `--dir` or `[output] results_dir`;
/// the monitor's is `DIR/monitor` under `--dir`, else `[monitor] dir` or its default.
/// Errors: [`crate::error::Error::Usage`] or a configuration error (exit 2).
pub fn plan(args: &DiagnoseArgs, root: &SysRoot) -> Result<DiagnosePlan> {
    let since =
        crate::duration::parse(&args.since).or_else(|e| usage("--since", &args.since, e))?;
    if since.is_zero() {
        return usage("--since", &args.since, "expected at least 1s");
    }
    super::check_output_path("-o", &args.output)?;
    let located = config::locate(args.config.as_deref(), Reader::Diagnose, root)?;
    let cfg = located.config;
    let results_dir = args.dir.clone().unwrap_or(cfg.output.results_dir.clone());
    let monitor_dir = match (&args.dir, &cfg.monitor.dir) {
        (None, Some(d)) => d.clone(),
        _ => window::default_dir(&results_dir),
    };
    Ok(DiagnosePlan {
        config: located.text.map(|t| (located.path, t)),
        cfg,
        results_dir,
        monitor_dir,
        since,
    })
}
