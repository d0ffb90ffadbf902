//! One record per self-test attempt. A self-test writes its record to the results
//! store (or this boot's fallback copy, as for every result: [`super::store`]) as
//! soon as its configuration file is found and its unit label known — before tuning,
//! the load or any test — and rewrites that same record when the attempt ends: with
//! its verdict ([`AttemptState::Judged`]), or marked stopped with the stage and the
//! reason ([`AttemptState::Stopped`]: the configuration refused, the environment
//! refused, the load failed, SIGINT/SIGTERM/SIGHUP during the hwlat gate). A signal
//! during the measurement ends it with a verdict (interrupted, exit 130/143/129). A
//! record still [`AttemptState::Started`] is an attempt that never ended — killed
//! (SIGKILL, or SIGINT/SIGTERM during tuning or the load's start, which end the
//! process at once as they always have), power lost — or is still running.
//!
//! `rtbench report` shows the newest record, so a self-test that never reached a
//! verdict is what the report shows — never an older green run.

use serde::{Deserialize, Serialize};

/// How far an attempt got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AttemptState {
    /// Written at the start; no verdict yet (or never: the process was killed).
    Started,
    /// Ended before a verdict; `stage` and `reason` say where and why.
    Stopped,
    /// Ended with its verdict.
    Judged,
}

impl AttemptState {
    /// `started`, `stopped` or `judged`, as in the results file.
    pub fn as_str(self) -> &'static str {
        match self {
            AttemptState::Started => "started",
            AttemptState::Stopped => "stopped",
            AttemptState::Judged => "judged",
        }
    }
}

/// The attempt a record stands for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attempt {
    /// How far it got.
    pub state: AttemptState,
    /// When the attempt started, seconds since the epoch (UTC); the measurement's
    /// start (`StoredRun::start_s`) is later.
    pub started_s: i64,
    /// Where a stopped attempt stopped: `configuration`, `tuning`, `load`, a test's
    /// name, `measurement`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage: Option<String>,
    /// Why it stopped (the error's one line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl Attempt {
    /// A new attempt started at `started_s`.
    pub fn started(started_s: i64) -> Attempt {
        Attempt {
            state: AttemptState::Started,
            started_s,
            stage: None,
            reason: None,
        }
    }

    /// Whether the attempt reached a verdict.
    pub fn judged(&self) -> bool {
        self.state == AttemptState::Judged
    }

    /// Why there is no verdict, as one line for every output (the verdict's problem,
    /// the JUnit `<error>`, the table): `None` once judged. `exit` is the attempt's exit
    /// code when it ended.
    pub fn no_verdict_line(&self, exit: Option<i32>) -> Option<String> {
        match self.state {
            AttemptState::Judged => None,
            AttemptState::Started => Some(format!(
                "self-test started at {} and never reached a verdict (killed, power lost, \
                 or still running)",
                crate::date::iso_s(self.started_s)
            )),
            AttemptState::Stopped => Some(format!(
                "self-test stopped before a verdict at {}: {}{}",
                self.stage.as_deref().unwrap_or("start"),
                self.reason.as_deref().unwrap_or("no reason recorded"),
                exit.map_or_else(String::new, |c| format!(" (exit {c})"))
            )),
        }
    }
}
