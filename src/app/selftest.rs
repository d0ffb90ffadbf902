//! `rtbench selftest [--config FILE]`: read the configuration (an invalid one is one
//! journal entry with the file, line and key as fields, exit 2, nothing tuned or
//! written), plan, run.

use crate::cli::selftest::SelftestArgs;
use crate::config::{self, Reader};
use crate::error::{exit, ConfigError};
use crate::report::journal::Journal;
use crate::sys::cpus::CpuTopology;
use crate::sys::SysRoot;

/// `rtbench selftest [--config FILE]`: returns the exit code (0 pass, 1 fail, 2 bad
/// configuration — nothing tuned; the attempt's record says why —, 3 environment
/// refused, 130/143 interrupted; [`crate::results::outcome`] is the rule).
pub fn run(args: &SelftestArgs) -> i32 {
    // A standard output that went away must not end the run before its store,
    // journal and textfile are written (the notices on it are best effort).
    crate::sys::signals::ignore_sigpipe();
    let root = SysRoot::host();
    let mut journal = super::journal(&args.log_format);
    let mut located = match config::locate(args.config.as_deref(), Reader::Selftest, &root) {
        Ok(l) => l,
        Err(e) => {
            // A file found but refused is an attempt too: its record says why.
            crate::selftest::record::Record::config_refused(args.config.as_deref(), &root, &e);
            return config_error(&mut journal, &e);
        }
    };
    if located.text.is_none() {
        journal.send(&crate::report::journal::defaults_used(
            &located.shown(),
            "no [limits]: the verdict will be unjudged",
        ));
    }
    // The factory line names the unit in the environment too (config::unit); a value
    // it cannot store is refused before anything runs (exit 2).
    match located.config.unit.with_env(|k| std::env::var(k).ok()) {
        Ok(unit) => located.config.unit = unit,
        Err(e) => {
            crate::report::output::Output::new(None).warn(&format!("rtbench: {e}"));
            // A refused environment is an attempt too: its record (under the file's
            // label) says why, so no older run stands for it.
            let plan = crate::selftest::plan(&located, &CpuTopology::read(&root));
            crate::selftest::record::Record::start(&plan, &root).stop(
                "environment",
                &e.to_string(),
                exit::USAGE,
            );
            return exit::USAGE;
        }
    }
    for a in located.config.advice() {
        crate::report::output::Output::new(None).warn(&format!("rtbench: warning: {a}"));
    }
    let plan = crate::selftest::plan(&located, &CpuTopology::read(&root));
    let mut record = crate::selftest::record::Record::start(&plan, &root);
    crate::selftest::run::execute(&plan, &root, &mut journal, &mut record)
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
