//! `rtbench selftest [--config FILE]`: read the configuration (an invalid one is one
//! journal entry with the file, line and key as fields, exit 2, nothing tuned or
//! written), plan, run.

use crate::cli::selftest::SelftestArgs;
use crate::error::{exit, ConfigError};
use crate::report::journal::Journal;
use crate::sys::cpus::CpuTopology;
use crate::sys::SysRoot;
use std::path::{Path, PathBuf};

/// `rtbench selftest [--config FILE]`: returns the exit code (0 pass, 1 fail, 2 bad
/// configuration — nothing tuned, nothing written —, 3 environment refused, 130/143
/// interrupted).
pub fn run(args: &SelftestArgs) -> i32 {
    let config = args.config.as_deref();
    let root = SysRoot::host();
    let mut journal = super::journal(&args.log_format);
    let explicit = config.is_some();
    let path = config.map_or_else(
        || PathBuf::from(crate::config::DEFAULT_PATH),
        Path::to_path_buf,
    );
    let shown = path.display().to_string();
    let text = match crate::config::read(&path) {
        Ok(t) => Some(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !explicit => None,
        Err(e) => {
            return config_error(
                &mut journal,
                &crate::config::unreadable(&shown, format!("cannot read the configuration: {e}")),
            )
        }
    };
    if text.is_none() {
        journal.send(&crate::report::journal::defaults_used(&shown));
    }
    let text_ref = text.as_deref().unwrap_or("");
    let cfg = match crate::config::parse(text_ref, &shown, &root) {
        Ok(c) => c,
        Err(e) => return config_error(&mut journal, &e),
    };
    let topo = CpuTopology::read(&root);
    let plan = crate::selftest::plan(
        &cfg,
        &topo,
        if text.is_some() { &shown } else { "" },
        &shown,
        text_ref,
    );
    crate::selftest::run::execute(&plan, &root, &mut journal)
}

/// The configuration error as one journal entry whose fields come from the error
/// (see [`crate::report::journal::config_error`]); exit 2.
fn config_error(journal: &mut Journal, err: &ConfigError) -> i32 {
    journal.send(&crate::report::journal::config_error(err));
    if journal.is_journald() && !journal.shows_text() {
        crate::report::output::Output::new(None).warn(&format!("rtbench: {err}"));
    }
    exit::USAGE
}
