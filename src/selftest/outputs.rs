//! The self-test's outputs once the verdict is known: one journal entry per thread,
//! the results store (or this boot's fallback copy, with why), the Prometheus textfile
//! and the summary entry. Nothing here stops the run: an output that cannot be written
//! is said in the journal ([`entries::output_not_written`]).

use super::SelftestPlan;
use crate::measure::harness::StopCause;
use crate::report::journal::{self as entries, Journal, OutputKind, Storage};
use crate::report::output;
use crate::report::prometheus::Prometheus;
use crate::results::store::{self, Store, StoredRun};

/// Stage 5: writes the outputs of `run`, the journal first (it must reach the operator even if the disk is full),
/// then the results store (or this boot's fallback copy, with why), the Prometheus
/// textfile and the summary entry. Returns the run as stored.
pub fn write(
    plan: &SelftestPlan,
    mut run: StoredRun,
    stop: StopCause,
    journal: &mut Journal,
) -> StoredRun {
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
    let stored = Store::new(&plan.results_dir, plan.keep).save(&run);
    let fallback = match &stored {
        Ok(_) => {
            store::clear_fallback(&plan.fallback_dir);
            None
        }
        Err(e) => {
            let why = e.to_string();
            journal.send(&entries::output_not_written(
                OutputKind::Results,
                &plan.results_dir,
                &why,
            ));
            run.store_error = Some(format!("{}: {why}", plan.results_dir.display()));
            run.results_dir = Some(plan.results_dir.display().to_string());
            match store::save_fallback(&plan.fallback_dir, &run) {
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
    };
    if let Some(p) = &plan.prometheus {
        let dir = p.parent().unwrap_or(std::path::Path::new("/"));
        let written = if dir.is_dir() {
            // A textfile written at every boot: the temporary files of writes cut short by
            // a power loss in earlier boots go first (crate::sys::kept).
            if let Some(name) = p.file_name().and_then(|n| n.to_str()) {
                crate::sys::kept::remove_stale_temps(dir, &[name]);
            }
            output::write_file(p, &Prometheus, &run).map_err(|e| e.to_string())
        } else {
            Err(format!(
                "directory {} does not exist (is node_exporter's textfile collector installed?)",
                dir.display()
            ))
        };
        if let Err(why) = written {
            journal.send(&entries::output_not_written(
                OutputKind::Prometheus,
                p,
                &why,
            ));
        }
    }
    let storage = match &stored {
        Ok(p) => Storage::Stored(p),
        Err(_) => Storage::NotStored(fallback.as_deref()),
    };
    journal.send(&entries::summary_with_causes(&run, stop, storage));
    run
}
