//! The one rule from a self-test's outcome to its exit code, used by every output: the
//! self-test's exit status, the journal's summary entry, the stored result (and so
//! `rtbench report` in every format) and the Prometheus textfile all read the code
//! [`RunOutcome::exit_code`] made, stored once in the result (`exit_code`); none of
//! them derives it again from the verdict.
//!
//! The rule, first match wins:
//!
//! 1. interrupted by a signal: the signal's code (130 SIGINT, 143 SIGTERM);
//! 2. the system refused a tuning write or guard, or a test (the others still ran): 3;
//! 3. invalid (only samples that are not the system's latency exceeded a limit): 4;
//! 4. a pass — or an unjudged run with `[selftest] allow_unjudged` — whose requested
//!    outputs were all written: 0;
//! 5. everything else: 1 — a fail, an unjudged run, and a pass or accepted unjudged run
//!    with an output it was asked for not written (the results not stored in
//!    `[output] results_dir`, the `[output] prometheus` textfile not written): "pass,
//!    not stored" is exit 1, and every output says so the same way.

use super::summary::Outcome;
use crate::error::exit;

/// What decides a finished self-test's exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunOutcome {
    /// The verdict's outcome.
    pub verdict: Outcome,
    /// The signal's exit code when a signal cut the run short.
    pub interrupted: Option<i32>,
    /// The exit code of what the system refused (a tuning write or guard, a test).
    pub refused: Option<i32>,
    /// `[selftest] allow_unjudged`.
    pub allow_unjudged: bool,
    /// How many requested outputs could not be written (results store, textfile).
    pub unwritten: usize,
}

impl RunOutcome {
    /// The exit code by the rule in the module's documentation.
    pub fn exit_code(&self) -> i32 {
        let written = self.unwritten == 0;
        match (self.interrupted, self.refused, self.verdict) {
            (Some(code), _, _) => code,
            (None, Some(code), _) => code,
            (None, None, Outcome::Invalid) => exit::INVALID,
            (None, None, Outcome::Pass) if written => exit::OK,
            (None, None, Outcome::Unjudged) if written && self.allow_unjudged => exit::OK,
            _ => exit::FAIL,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(verdict: Outcome, unwritten: usize) -> RunOutcome {
        RunOutcome {
            verdict,
            interrupted: None,
            refused: None,
            allow_unjudged: true,
            unwritten,
        }
    }

    #[test]
    fn an_unwritten_output_makes_a_pass_exit_1_and_nothing_else_changes() {
        assert_eq!(of(Outcome::Pass, 0).exit_code(), exit::OK);
        assert_eq!(of(Outcome::Pass, 1).exit_code(), exit::FAIL);
        assert_eq!(of(Outcome::Unjudged, 0).exit_code(), exit::OK);
        assert_eq!(of(Outcome::Unjudged, 2).exit_code(), exit::FAIL);
        assert_eq!(of(Outcome::Invalid, 1).exit_code(), exit::INVALID);
        assert_eq!(of(Outcome::Fail, 0).exit_code(), exit::FAIL);
        let mut o = of(Outcome::Pass, 1);
        o.refused = Some(exit::ENV);
        assert_eq!(o.exit_code(), exit::ENV);
        o.interrupted = Some(130);
        assert_eq!(o.exit_code(), 130);
        let mut strict = of(Outcome::Unjudged, 0);
        strict.allow_unjudged = false;
        assert_eq!(strict.exit_code(), exit::FAIL);
    }
}
