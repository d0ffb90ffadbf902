//! `rtbench tune check|apply|revert|status`: flags and the configuration →
//! [`TunePlan`].

use crate::cli::tune::{TuneAction, TuneArgs};
use crate::config::{self, Reader};
use crate::error::Result;
use crate::sys::SysRoot;
use crate::tune::spec::TuningSpec;
use std::path::{Path, PathBuf};

/// What `rtbench tune` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TuneStep {
    /// Compare the system with the configuration; write nothing.
    Check,
    /// Change what differs, as a transaction.
    Apply {
        /// Stop after this many writes (hidden; crash tests).
        pause_after_writes: Option<usize>,
    },
    /// Restore what the last `apply` changed, from its journal.
    Revert,
    /// Show the journal.
    Status,
}

impl TuneStep {
    /// `check`, `apply`, `revert`, `status`.
    pub fn name(self) -> &'static str {
        match self {
            TuneStep::Check => "check",
            TuneStep::Apply { .. } => "apply",
            TuneStep::Revert => "revert",
            TuneStep::Status => "status",
        }
    }

    /// Whether it writes kernel files (`apply`, `revert`).
    pub fn writes(self) -> bool {
        matches!(self, TuneStep::Apply { .. } | TuneStep::Revert)
    }
}

/// A validated `rtbench tune`.
#[derive(Debug, Clone)]
pub struct TunePlan {
    /// The action.
    pub step: TuneStep,
    /// Where `/proc` and `/sys` are (`/`, or `--sysroot` in tests).
    pub root: SysRoot,
    /// `[tuning]` of the configuration.
    pub spec: TuningSpec,
    /// The configuration file as named (`--config`, default [`config::DEFAULT_PATH`]).
    pub config: PathBuf,
    /// `check` without a configuration file: `spec` is the generic real-time audit
    /// ([`config::AUDIT`]).
    pub audit: bool,
    /// `--json`: the report as JSON on standard output.
    pub json: bool,
}

/// Validates `rtbench tune`: reads the configuration ([`config::locate()`]). Without the
/// default file, `check` checks the generic real-time audit ([`config::AUDIT`]) and
/// `apply` refuses (it changes the system only as a file says); `revert` and `status`
/// work from the journal, and a missing default file means the documented defaults
/// (an empty `[tuning]`), as for the self-test. `--config` defaults to that
/// file: naming it is not naming another one. Errors: a configuration error (exit 2).
pub fn plan(action: &TuneAction) -> Result<TunePlan> {
    let (args, step): (&TuneArgs, _) = match action {
        TuneAction::Check(a) => (a, TuneStep::Check),
        TuneAction::Apply(a) => (
            a,
            TuneStep::Apply {
                pause_after_writes: a.pause_after_writes,
            },
        ),
        TuneAction::Revert(a) => (a, TuneStep::Revert),
        TuneAction::Status(a) => (a, TuneStep::Status),
    };
    let root = args
        .sysroot
        .as_ref()
        .map_or_else(SysRoot::host, SysRoot::at);
    let reader = match step {
        TuneStep::Revert | TuneStep::Status => Reader::TuneJournal,
        TuneStep::Check => Reader::TuneCheck,
        TuneStep::Apply { .. } => Reader::TuneApply,
    };
    let explicit = Some(args.config.as_path()).filter(|p| *p != Path::new(config::DEFAULT_PATH));
    let located = config::locate(explicit, reader, &root)?;
    let audit = step == TuneStep::Check && located.text.is_none();
    Ok(TunePlan {
        step,
        root,
        spec: located.config.tuning,
        config: args.config.clone(),
        audit,
        json: args.json,
    })
}
