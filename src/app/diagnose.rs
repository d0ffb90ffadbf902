//! `rtbench diagnose -o FILE.tar.gz`: read the configuration, collect, write the bundle
//! atomically (or to standard output with `-o -`), say where it went and what looks
//! wrong on standard error.

use crate::cli::diagnose::DiagnoseArgs;
use crate::config::Reader;
use crate::diagnose::DiagnosePlan;
use crate::error::{exit, Error, Result};
use crate::report::bundle::TarGz;
use crate::report::output::{Output, Target};
use crate::results::window;
use crate::sys::SysRoot;

/// `rtbench diagnose`: 0 written, 2 bad input, 3 (I/O) not written.
pub fn run(args: &DiagnoseArgs) -> Result<i32> {
    let root = args
        .sysroot
        .as_ref()
        .map_or_else(SysRoot::host, SysRoot::at);
    let since =
        crate::duration::parse(&args.since).map_err(|e| Error::usage("--since", &args.since, e))?;
    if since.is_zero() {
        return Err(Error::usage("--since", &args.since, "expected at least 1s"));
    }
    crate::plan::check_output_path("-o", &args.output)?;
    let located = crate::config::locate(args.config.as_deref(), Reader::Diagnose, &root)?;
    let cfg = located.config;
    let results_dir = args.dir.clone().unwrap_or(cfg.output.results_dir.clone());
    let monitor_dir = match (&args.dir, &cfg.monitor.dir) {
        (None, Some(d)) => d.clone(),
        _ => window::default_dir(&results_dir),
    };
    let plan = DiagnosePlan {
        config: located.text.map(|t| (located.path, t)),
        cfg,
        results_dir,
        monitor_dir,
        since,
    };
    let now = crate::sys::clock::Clock::wall_secs();
    let bundle = crate::diagnose::collect(&plan, &root, now);
    let target = Target::from_path(&args.output);
    let out = Output::new(Some(&target));
    out.document(&target, &TarGz, &bundle)?;
    // What looks wrong, on standard error whatever the target.
    if let Some(summary) = bundle.files.first() {
        let text = String::from_utf8_lossy(&summary.bytes);
        let head: String = text
            .lines()
            .take_while(|l| !l.starts_with("Files:"))
            .map(|l| format!("{l}\n"))
            .collect();
        out.warn(head.trim_end());
    }
    if target != Target::Stdout {
        out.warn(&format!(
            "rtbench: diagnostics written to {} ({} files)",
            args.output.display(),
            bundle.files.len()
        ));
    }
    Ok(exit::OK)
}
