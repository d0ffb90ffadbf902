//! `rtbench tune check|apply|revert|status`: load the configuration, run the engine,
//! print the report (text or `--json`), return the exit code.

use super::journal::{self, Journal, JournalState};
use super::{ApplyOptions, ItemReport, Status, TuningReport};
use crate::cli::{TuneAction, TuneArgs};
use crate::config;
use crate::error::{exit, Error, Result};
use crate::sys::SysRoot;
use std::fmt::Write as _;

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
    // error. An explicitly named file must exist.
    let cfg = if !args.config.exists()
        && args.config == std::path::Path::new(config::DEFAULT_PATH)
        && matches!(action, TuneAction::Revert(_) | TuneAction::Status(_))
    {
        config::parse("", &args.config.display().to_string(), &root)?
    } else {
        config::load(&args.config, &root)?
    };
    let spec = &cfg.tuning;
    let writes = matches!(action, TuneAction::Apply(_) | TuneAction::Revert(_));
    if writes && root.is_host() && !nix::unistd::geteuid().is_root() {
        return Err(Error::Refused {
            what: format!("rtbench tune {name} (writes /proc and /sys)"),
            source: std::io::Error::from_raw_os_error(libc::EPERM),
            hint: "; run it as root".into(),
        });
    }
    let report = match action {
        TuneAction::Check(_) => super::check(&root, spec),
        TuneAction::Apply(_) => super::apply(
            &root,
            spec,
            &ApplyOptions {
                pause_after_writes: args.pause_after_writes,
            },
        )?,
        TuneAction::Revert(_) => super::revert(&root, spec)?,
        TuneAction::Status(_) => return print_status(args, &spec.journal_dir),
    };
    let code = report.exit_code();
    if args.json {
        let mut v = serde_json::to_value(&report).map_err(|e| Error::io("<stdout>", e.into()))?;
        v["exit_code"] = code.into();
        println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
    } else {
        print!("{}", render(&report, &args.config.display().to_string()));
    }
    Ok(code)
}

fn line(out: &mut String, r: &ItemReport) {
    let _ = write!(
        out,
        "  {:<15} {:<34} {}",
        r.status.as_str(),
        r.item,
        r.detail
    );
    if let (Some(p), true) = (&r.path, r.status != Status::Ok) {
        let _ = write!(out, "  [{p}]");
    }
    out.push('\n');
}

/// The text report: one line per item (`STATUS ITEM DETAIL [PATH]`), then recovered and
/// rolled-back changes, the suggested bootargs and a summary.
pub fn render(report: &TuningReport, config: &str) -> String {
    let mut out = String::new();
    let action = serde_json::to_value(report.action)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let _ = writeln!(out, "rtbench tune {action} ({config})");
    if !report.recovered.is_empty() {
        out.push_str("recovered: an interrupted apply was rolled back first:\n");
        report.recovered.iter().for_each(|r| line(&mut out, r));
    }
    if report.items.is_empty() {
        out.push_str("  nothing to do\n");
    }
    report.items.iter().for_each(|r| line(&mut out, r));
    if !report.rolled_back.is_empty() {
        out.push_str("rolled back (newest first):\n");
        report.rolled_back.iter().for_each(|r| line(&mut out, r));
    }
    if let Some(b) = &report.bootargs {
        let _ = writeln!(out, "bootargs: {b}");
    }
    let counts: Vec<String> = [
        Status::Ok,
        Status::NotApplicable,
        Status::Unsupported,
        Status::Deviation,
        Status::Failed,
    ]
    .iter()
    .map(|&s| format!("{} {}", report.count(s), s.as_str()))
    .collect();
    let _ = writeln!(
        out,
        "summary: {}; {} writes",
        counts.join(", "),
        report.writes
    );
    out
}

fn print_status(args: &TuneArgs, dir: &std::path::Path) -> Result<i32> {
    let j = Journal::load(dir)?;
    let code = match &j {
        Some(j) if j.state == JournalState::Applying => exit::FAIL,
        _ => exit::OK,
    };
    if args.json {
        let v = serde_json::json!({
            "journal": journal::path(dir),
            "present": j.is_some(),
            "content": j,
        });
        println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
        return Ok(code);
    }
    let p = journal::path(dir);
    match j {
        None => println!("journal {}: none (nothing applied)", p.display()),
        Some(j) => {
            println!(
                "journal {}: {} by pid {} at {} (unix s), {} change(s)",
                p.display(),
                j.state.as_str(),
                j.pid,
                j.updated_unix_s,
                j.entries.len()
            );
            if j.state == JournalState::Applying {
                println!("an apply was interrupted: the next apply or revert rolls back its changes first");
            }
            for e in &j.entries {
                println!(
                    "  {:<34} {}  {} -> {}",
                    e.item,
                    e.step.path,
                    e.step.kind.normalise(&e.step.original),
                    e.step.kind.normalise(&e.step.desired)
                );
            }
        }
    }
    Ok(code)
}
