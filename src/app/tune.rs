//! `rtbench tune check|apply|revert|status`: load the configuration, run the engine,
//! print the report (text or `--json`), return the exit code.

use crate::cli::tune::{TuneAction, TuneArgs};
use crate::config;
use crate::error::{exit, Error, Result};
use crate::report::output::{Output, Target};
use crate::report::tuning::{StatusText, TuneText};
use crate::report::PrettyJson;
use crate::sys::SysRoot;
use crate::tune::journal::{self, Journal, JournalState};
use crate::tune::ApplyOptions;
use std::path::Path;

/// Runs one `rtbench tune` action and returns its exit code (0 ok, 1 deviations or
/// failure, 2 configuration error, 3 not root / lock / journal unusable).
pub fn run(action: &TuneAction) -> Result<i32> {
    let (args, name) = match action {
        TuneAction::Check(a) => (a, "check"),
        TuneAction::Apply(a) => (a, "apply"),
        TuneAction::Revert(a) => (a, "revert"),
        TuneAction::Status(a) => (a, "status"),
    };
    let root = args
        .sysroot
        .as_ref()
        .map_or_else(SysRoot::host, SysRoot::at);
    // `revert` and `status` work from the journal; like the self-test, a missing default
    // configuration means the documented defaults (an empty [tuning]) rather than an
    // error. `--config` defaults to that file: naming it is not naming another one.
    let reader = match action {
        TuneAction::Revert(_) | TuneAction::Status(_) => config::Reader::TuneJournal,
        TuneAction::Check(_) | TuneAction::Apply(_) => config::Reader::TuneCheck,
    };
    let explicit = Some(args.config.as_path()).filter(|p| *p != Path::new(config::DEFAULT_PATH));
    let cfg = config::locate(explicit, reader, &root)?.config;
    let spec = &cfg.tuning;
    let writes = matches!(action, TuneAction::Apply(_) | TuneAction::Revert(_));
    if writes && root.is_host() && !nix::unistd::geteuid().is_root() {
        return Err(Error::Refused {
            what: format!("rtbench tune {name} (writes /proc and /sys)"),
            source: std::io::Error::from_raw_os_error(libc::EPERM),
            cause: Some(crate::error::Cause::new(
                "root",
                "it writes kernel files only root may write: run it as root",
            )),
        });
    }
    let report = match action {
        TuneAction::Check(_) => crate::tune::check(&root, spec),
        TuneAction::Apply(_) => crate::tune::apply(
            &root,
            spec,
            &ApplyOptions {
                pause_after_writes: args.pause_after_writes,
            },
        )?,
        TuneAction::Revert(_) => crate::tune::revert(&root, spec)?,
        TuneAction::Status(_) => return print_status(args, &spec.journal_dir),
    };
    let code = report.exit_code();
    let out = output(args);
    if args.json {
        // The report's keys (sorted, as serde_json's map keeps them) plus the exit code.
        let mut v = serde_json::to_value(&report).map_err(|e| Error::io("<stdout>", e.into()))?;
        v["exit_code"] = code.into();
        out.document(&Target::Stdout, &PrettyJson, &v)?;
    } else {
        let config = args.config.display().to_string();
        out.text(&TuneText { config: &config }, &report)?;
    }
    Ok(code)
}

/// `--json` puts the document on standard output.
fn output(args: &TuneArgs) -> Output {
    Output::new(args.json.then_some(&Target::Stdout))
}

fn print_status(args: &TuneArgs, dir: &std::path::Path) -> Result<i32> {
    let j = Journal::load(dir)?;
    let code = match &j {
        Some(j) if j.state == JournalState::Applying => exit::FAIL,
        _ => exit::OK,
    };
    let out = output(args);
    let path = journal::path(dir);
    if args.json {
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
