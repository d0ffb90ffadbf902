//! `rtbench config template|check`: print the template, or read and validate a file
//! the way every command reads it ([`crate::config::locate()`]) and say so.

use crate::cli::config::{ConfigAction, ConfigCheckArgs};
use crate::config::{self, Reader};
use crate::error::{exit, Result};
use crate::report::output::Output;
use crate::sys::SysRoot;

/// Runs one `rtbench config` action: 0 printed or valid, 2 not valid (the
/// [`crate::error::ConfigError`], printed by the caller).
pub fn run(action: &ConfigAction) -> Result<i32> {
    match action {
        ConfigAction::Template => {
            Output::new(None).text(&crate::report::output::Verbatim, config::TEMPLATE)?;
            Ok(exit::OK)
        }
        ConfigAction::Check(args) => check(args),
    }
}

/// Validates the file (every section, CPU lists against this machine) and prints one
/// line: `FILE: ok`, or that the default file is absent and the defaults apply.
fn check(args: &ConfigCheckArgs) -> Result<i32> {
    let root = args
        .sysroot
        .as_ref()
        .map_or_else(SysRoot::host, SysRoot::at);
    let located = config::locate(args.file.as_deref(), Reader::ConfigCheck, &root)?;
    let conditions: Vec<&str> = located
        .config
        .conditions
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    let line = match located.text {
        Some(_) if !conditions.is_empty() => format!(
            "{}: ok ({} conditions: {})",
            located.shown(),
            conditions.len(),
            conditions.join(", ")
        ),
        Some(_) => format!("{}: ok", located.shown()),
        None => format!(
            "{}: no such file; the documented defaults apply (rtbench config template)",
            located.shown()
        ),
    };
    let out = Output::new(None);
    out.line(&line);
    for a in located.config.advice() {
        out.line(&format!("{}: advice: {a}", located.shown()));
    }
    Ok(exit::OK)
}
