//! The self-test's outputs once the verdict is known: one journal entry per thread,
//! the attempt's record in the results store (or this boot's fallback copy, with why),
//! the Prometheus textfile and the summary entry. Nothing here stops the run: an
//! output that cannot be written is said in the journal
//! ([`entries::output_not_written`]), recorded in the run (`unwritten`) and makes a
//! pass exit 1 by the one rule ([`crate::results::outcome`]); every output written
//! after it, and the record rewritten, carry that same exit code.

use super::record::Record;
use super::SelftestPlan;
use crate::measure::harness::StopCause;
use crate::report::journal::{self as entries, Journal, OutputKind, Storage};
use crate::results::outcome::RunOutcome;
use crate::results::store::StoredRun;
use std::path::PathBuf;

/// Stage 5: writes the outputs of `run`, the journal first (it must reach the operator
/// even if the disk is full), then the attempt's record (or this boot's fallback copy,
/// with why), the Prometheus textfile and the summary entry. Returns the run as
/// stored and its exit code (`outcome`'s, with the outputs not written counted).
pub fn write(
    plan: &SelftestPlan,
    mut run: StoredRun,
    mut outcome: RunOutcome,
    stop: StopCause,
    journal: &mut Journal,
    record: &mut Record,
) -> (StoredRun, i32) {
    thread_entries(&run, journal);
    run.attempt = Some(record.judged());
    run.exit_code = Some(outcome.exit_code());
    let stored = match record.save(&run) {
        Ok(p) => Ok(p),
        Err(e) => {
            let why = e.to_string();
            journal.send(&entries::output_not_written(
                OutputKind::Results,
                &plan.results_dir,
                &why,
            ));
            unwritten(&mut run, &mut outcome, "results", &why);
            run.store_error = Some(format!("{}: {why}", plan.results_dir.display()));
            run.results_dir = Some(plan.results_dir.display().to_string());
            Err(keep_copy(plan, &run, journal, record))
        }
    };
    if let Some(p) = &plan.prometheus {
        if let Err(why) = super::record::textfile(p, &run) {
            journal.send(&entries::output_not_written(
                OutputKind::Prometheus,
                p,
                &why,
            ));
            unwritten(&mut run, &mut outcome, "prometheus", &why);
            // The record says the same exit code as everything else.
            let _ = match &stored {
                Ok(_) => record.save(&run).map(|_| ()),
                Err(Some(_)) => record.keep_fallback(&run).map(|_| ()),
                Err(None) => Ok(()),
            };
        }
    }
    let storage = match &stored {
        Ok(p) => Storage::Stored(p),
        Err(fallback) => Storage::NotStored(fallback.as_deref()),
    };
    journal.send(&entries::summary_with_causes(&run, stop, storage));
    let code = run.exit_status();
    (run, code)
}

/// The explained samples and the figures of each thread, one entry each.
fn thread_entries(run: &StoredRun, journal: &mut Journal) {
    for t in &run.tests {
        // The explained samples, largest first, before the test's results.
        if let Some(x) = &t.explain {
            let mut kept: Vec<_> = x.explained.iter().collect();
            kept.sort_by_key(|e| std::cmp::Reverse(e.spike.latency_ns()));
            for e in kept {
                journal.send(&entries::explained(e, &e.spike.when()));
            }
        }
        for th in &t.threads {
            journal.send(&entries::thread_result(t, th, &run.verdict));
        }
    }
}

/// An output `what` the run was asked for and could not write, because of `why`:
/// recorded in the run, counted in the outcome, the exit code made again.
fn unwritten(run: &mut StoredRun, outcome: &mut RunOutcome, what: &str, why: &str) {
    run.unwritten.push(format!("{what}: {why}"));
    outcome.unwritten += 1;
    run.exit_code = Some(outcome.exit_code());
}

/// This boot's fallback copy of `run`, its path when written.
fn keep_copy(
    plan: &SelftestPlan,
    run: &StoredRun,
    journal: &mut Journal,
    record: &mut Record,
) -> Option<PathBuf> {
    match record.keep_fallback(run) {
        Ok(p) => Some(p),
        Err(e2) => {
            journal.send(&entries::output_not_written(
                OutputKind::Fallback,
                &plan.fallback_dir,
                &e2.to_string(),
            ));
            None
        }
    }
}
