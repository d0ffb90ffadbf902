//! `rtbench tune check|apply|revert|status`: load the configuration, run the engine,
//! print the report (text or `--json`), return the exit code.

use crate::cli::tune::TuneAction;
use crate::error::{exit, Error, Result};
use crate::plan::tune::{TunePlan, TuneStep};
use crate::report::output::{Output, Target};
use crate::report::tuning::{StatusText, TuneText};
use crate::report::PrettyJson;
use crate::tune::journal::{self, Journal, JournalState};
use crate::tune::ApplyOptions;

/// Runs one `rtbench tune` action and returns its exit code (0 ok, 1 deviations or
/// failure, 2 configuration error, 3 not root / lock / journal unusable).
pub fn run(action: &TuneAction) -> Result<i32> {
    let plan = crate::plan::tune::plan(action)?;
    let (root, spec) = (&plan.root, &plan.spec);
    if plan.step.writes() && root.is_host() && !nix::unistd::geteuid().is_root() {
        return Err(Error::Refused {
            what: format!("rtbench tune {} (writes /proc and /sys)", plan.step.name()),
            source: std::io::Error::from_raw_os_error(libc::EPERM),
            cause: Some(crate::error::Cause::new(
                "root",
                "it writes kernel files only root may write: run it as root",
            )),
        });
    }
    let report = match plan.step {
        TuneStep::Check => crate::tune::check(root, spec),
        TuneStep::Apply { pause_after_writes } => {
            crate::tune::apply(root, spec, &ApplyOptions { pause_after_writes })?
        }
        TuneStep::Revert => crate::tune::revert(root, spec)?,
        TuneStep::Status => return print_status(&plan),
    };
    // A check that compared nothing is not a clean check (the text says so).
    let code = if report.checked_nothing() {
        exit::FAIL
    } else {
        report.exit_code()
    };
    let out = output(&plan);
    if plan.json {
        // The report's keys (sorted, as serde_json's map keeps them) plus the exit code.
        let mut v = serde_json::to_value(&report).map_err(|e| Error::io("<stdout>", e.into()))?;
        v["exit_code"] = code.into();
        if plan.audit {
            // Checked without a configuration file (src/config/audit.toml).
            v["audit"] = true.into();
        }
        out.document(&Target::Stdout, &PrettyJson, &v)?;
    } else {
        let config = if plan.audit {
            format!("no {}: the generic real-time audit", plan.config.display())
        } else {
            plan.config.display().to_string()
        };
        out.text(&TuneText { config: &config }, &report)?;
    }
    Ok(code)
}

/// `--json` puts the document on standard output.
fn output(plan: &TunePlan) -> Output {
    Output::new(plan.json.then_some(&Target::Stdout))
}

fn print_status(plan: &TunePlan) -> Result<i32> {
    let dir = &plan.spec.journal_dir;
    let j = Journal::load(dir)?;
    let code = match &j {
        Some(j) if j.state == JournalState::Applying => exit::FAIL,
        _ => exit::OK,
    };
    let out = output(plan);
    let path = journal::path(dir);
    if plan.json {
        let v = serde_json::json!({
            "journal": path,
            "present": j.is_some(),
            "content": j,
        });
        out.document(&Target::Stdout, &PrettyJson, &v)?;
    } else {
        out.text(&StatusText { path: &path }, &j)?;
    }
    Ok(code)
}
