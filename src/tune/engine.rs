//! The transaction: plan every item (reads only), then for each change journal the
//! original (fsync'd), write once, verify by re-reading; on the first failure restore
//! this run's changes in reverse order. Also `revert` and crash recovery.
//!
//! The procedure (journal before write, verify, reverse-order rollback, recovery of an
//! interrupted apply) is described in docs/ARCHITECTURE.md, "Where a knob is written"; tuned's
//! `tuned-adm verify` and revert (github.com/redhat-performance/tuned) are the
//! established model it improves on: tuned does not roll back a half-applied profile.

use super::journal::{Entry, Journal, JournalState, Lock};
use super::spec::TuningSpec;
use super::{boot, errno_name, Action, Decision, Item, ItemReport, Status, TuningReport};
use crate::error::Result;
use crate::sys::SysRoot;

/// Test hooks for `apply`.
#[derive(Debug, Clone, Default)]
pub struct ApplyOptions {
    /// Stop (sleep until killed) right after this many kernel writes, so a test can
    /// SIGKILL the process between two writes (hidden `--pause-after-writes`).
    pub pause_after_writes: Option<usize>,
}

/// Every item `spec` asks for, in apply order (check-only items first, then guards,
/// then the writes, jitter-producing ones early).
pub fn items(root: &SysRoot, spec: &TuningSpec) -> Vec<Box<dyn Item>> {
    let mut v: Vec<Box<dyn Item>> = Vec::new();
    boot::items(spec, &mut v);
    super::isolated::items(spec, &mut v);
    super::irq::items(root, spec, &mut v);
    super::knobs::items(root, spec, &mut v);
    super::power::items(root, spec, &mut v);
    v
}

/// Reads everything `spec` names below `root` and reports what differs; writes nothing.
/// Runtime items that `apply` would change are `deviation`s.
pub fn check(root: &SysRoot, spec: &TuningSpec) -> TuningReport {
    let mut report = new_report(Action::Check, spec, root);
    for item in items(root, spec) {
        report.items.push(match item.plan(root) {
            Decision::Done(r) => r,
            Decision::Change { steps, detail } => {
                let path = steps.first().map(|s| s.path.clone()).unwrap_or_default();
                let r = ItemReport::new(
                    item.name(),
                    Status::Deviation,
                    format!("{detail} (apply would write)"),
                )
                .at(path);
                match steps.as_slice() {
                    [s] => r.values(s.kind.normalise(&s.desired), s.kind.normalise(&s.original)),
                    _ => r,
                }
            }
        });
    }
    report
}

fn new_report(action: Action, spec: &TuningSpec, root: &SysRoot) -> TuningReport {
    let boot = boot::bootargs(spec, &boot::BootFacts::read(root));
    TuningReport {
        action,
        items: Vec::new(),
        recovered: Vec::new(),
        rolled_back: Vec::new(),
        bootargs: boot
            .as_ref()
            .map(|b| b.args.clone())
            .filter(|a| !a.is_empty()),
        bootargs_notes: boot.map(|b| b.notes).unwrap_or_default(),
        writes: 0,
    }
}

/// Writes `entries` back in reverse order and verifies each against its original.
/// A file that no longer exists (an IRQ that went away) counts as restored.
/// Returns one report per entry and the number of writes made.
fn restore(root: &SysRoot, entries: &[Entry]) -> (Vec<ItemReport>, usize) {
    let mut out = Vec::new();
    let mut writes = 0;
    for e in entries.iter().rev() {
        let s = &e.step;
        let r = ItemReport::new(e.item.clone(), Status::Ok, "").at(s.path.clone());
        let res = s.write(root, &s.restore);
        writes += 1;
        out.push(match res {
            Ok(()) => match s.holds(root, &s.original) {
                Ok(true) => ItemReport {
                    // One line: printk's "4\t4\t1\t7" shown as "4 4 1 7".
                    detail: format!(
                        "restored {}",
                        s.restore.split_whitespace().collect::<Vec<_>>().join(" ")
                    ),
                    ..r
                },
                Ok(false) | Err(_) => ItemReport {
                    status: Status::Failed,
                    detail: format!(
                        "wrote {} but it reads back {:?}",
                        s.restore,
                        root.read(&s.path).unwrap_or_default().trim()
                    ),
                    ..r
                },
            },
            Err(err) if err.raw_os_error() == Some(libc::ENOENT) => ItemReport {
                detail: "gone (nothing to restore)".into(),
                ..r
            },
            Err(err) => ItemReport {
                status: Status::Failed,
                detail: format!(
                    "restoring {} failed: {} ({err})",
                    s.restore,
                    err.raw_os_error()
                        .map_or_else(|| "error".into(), errno_name)
                ),
                errno: err.raw_os_error(),
                ..r
            },
        });
    }
    (out, writes)
}

/// Rolls back the entries of an interrupted apply (journal left `applying`).
fn recover(
    root: &SysRoot,
    spec: &TuningSpec,
    report: &mut TuningReport,
) -> Result<Option<Journal>> {
    let Some(mut j) = Journal::load(&spec.journal_dir)? else {
        return Ok(None);
    };
    if j.state == JournalState::Applying {
        let (restored, writes) = restore(root, j.pending());
        report.writes += writes;
        let ok = restored.iter().all(|r| r.status == Status::Ok);
        report.recovered = restored;
        if ok {
            j.entries.truncate(j.committed_len);
            j.state = if j.entries.is_empty() {
                JournalState::RolledBack
            } else {
                JournalState::Committed
            };
            j.save(&spec.journal_dir)?;
        }
    }
    Ok(Some(j))
}

/// Applies `spec` below `root` as a transaction (see the module doc). Items already as
/// wanted are not written; with nothing to change, nothing is written at all (not even
/// the journal). The report's exit code is 3 after a failure (a refused write, a value
/// that did not hold, a guard; everything of this run restored) and 1 when only a
/// check-only item deviates.
///
/// Errors (exit 3): the lock is held by another rtbench, the journal directory or file
/// cannot be written.
pub fn apply(root: &SysRoot, spec: &TuningSpec, opts: &ApplyOptions) -> Result<TuningReport> {
    let _lock = Lock::acquire(&spec.journal_dir)?;
    let mut report = new_report(Action::Apply, spec, root);
    let mut journal = recover(root, spec, &mut report)?
        .filter(|j| j.state == JournalState::Committed)
        .unwrap_or_default();
    if report.recovered.iter().any(|r| r.status == Status::Failed) {
        // The system is in an unknown state; do not stack new changes on it.
        return Ok(report);
    }
    let items = items(root, spec);
    let plans: Vec<Decision> = items.iter().map(|i| i.plan(root)).collect();
    if let Some(bad) = plans.iter().find_map(|d| match d {
        Decision::Done(r) if r.status == Status::Failed => Some(r.item.clone()),
        _ => None,
    }) {
        for (item, d) in items.iter().zip(plans) {
            report.items.push(match d {
                Decision::Done(r) => r,
                Decision::Change { detail, .. } => ItemReport::new(
                    item.name(),
                    Status::Deviation,
                    format!("{detail} not written: {bad} failed before any write"),
                ),
            });
        }
        return Ok(report);
    }
    journal.committed_len = journal.entries.len();
    for (idx, (item, d)) in items.iter().zip(plans).enumerate() {
        let (steps, detail) = match d {
            Decision::Done(r) => {
                report.items.push(r);
                continue;
            }
            Decision::Change { steps, detail } => (steps, detail),
        };
        let mut outcome = None;
        for s in &steps {
            journal.state = JournalState::Applying;
            journal.entries.push(Entry {
                item: item.name(),
                step: s.clone(),
            });
            journal.save(&spec.journal_dir)?;
            let res = s.write(root, &s.desired);
            report.writes += 1;
            if let Err(err) = res {
                // Refused: nothing changed in this file; forget the entry.
                journal.entries.pop();
                journal.save(&spec.journal_dir)?;
                let errno = err.raw_os_error().unwrap_or(libc::EIO);
                let status = item.refused(errno);
                let what = if status == Status::Unsupported {
                    "the kernel refuses this by design"
                } else {
                    "write failed"
                };
                let cause = item
                    .explain(root, errno)
                    .map_or_else(String::new, |c| format!("; {}", c.text));
                outcome = Some(ItemReport {
                    errno: Some(errno),
                    ..ItemReport::new(
                        item.name(),
                        status,
                        format!(
                            "{what}: {} writing {:?} ({err}){cause}",
                            errno_name(errno),
                            s.desired
                        ),
                    )
                    .at(s.path.clone())
                    .values(s.kind.normalise(&s.desired), s.kind.normalise(&s.original))
                });
                break;
            }
            if opts.pause_after_writes == Some(report.writes) {
                eprintln!("rtbench: paused after write {} (test hook)", report.writes);
                loop {
                    std::thread::sleep(std::time::Duration::from_secs(3600));
                }
            }
        }
        let written = journal.pending().iter().any(|e| e.item == item.name());
        let r = match outcome {
            Some(r) => r,
            None => match item.verify(root, &steps) {
                Ok(note) => ItemReport {
                    changed: true,
                    ..ItemReport::new(
                        item.name(),
                        Status::Ok,
                        if note.is_empty() {
                            format!("changed {detail}")
                        } else {
                            format!("changed {detail}; {note}")
                        },
                    )
                },
                Err((path, msg)) => {
                    ItemReport::new(item.name(), Status::Failed, format!("verify failed: {msg}"))
                        .at(path)
                }
            },
        };
        let failed = r.status == Status::Failed;
        report.items.push(ItemReport {
            changed: written && !failed,
            ..r
        });
        if failed {
            let (restored, writes) = restore(root, journal.pending());
            report.writes += writes;
            let ok = restored.iter().all(|r| r.status == Status::Ok);
            report.rolled_back = restored;
            for r in &mut report.items {
                r.changed = false;
            }
            for later in &items[idx + 1..] {
                report.items.push(ItemReport::new(
                    later.name(),
                    Status::Deviation,
                    "not attempted: an earlier item failed and the changes were rolled back",
                ));
            }
            if ok {
                journal.entries.truncate(journal.committed_len);
                journal.state = if journal.entries.is_empty() {
                    JournalState::RolledBack
                } else {
                    JournalState::Committed
                };
                journal.save(&spec.journal_dir)?;
            }
            return Ok(report);
        }
    }
    if journal.state == JournalState::Applying {
        journal.state = JournalState::Committed;
        journal.save(&spec.journal_dir)?;
    }
    // Check-only items were read before the writes; report the final state (e.g. the
    // default IRQ affinity that `irq.default_affinity` just set).
    if report.writes > 0 {
        for (item, r) in items.iter().zip(report.items.iter_mut()) {
            if r.status == Status::Deviation {
                if let Decision::Done(now) = item.plan(root) {
                    *r = now;
                }
            }
        }
    }
    Ok(report)
}

/// Restores everything the committed journal recorded, newest first, and verifies each
/// file against its original text. Entries restored are dropped from the journal;
/// when all are, its state becomes `reverted`. An interrupted apply is rolled back first.
///
/// Errors (exit 3): lock held, journal unreadable or unwritable.
pub fn revert(root: &SysRoot, spec: &TuningSpec) -> Result<TuningReport> {
    let _lock = Lock::acquire(&spec.journal_dir)?;
    let mut report = new_report(Action::Revert, spec, root);
    report.bootargs = None;
    report.bootargs_notes.clear();
    let Some(mut j) = recover(root, spec, &mut report)? else {
        return Ok(report);
    };
    if j.state != JournalState::Committed || j.entries.is_empty() {
        return Ok(report);
    }
    let (restored, writes) = restore(root, &j.entries);
    report.writes += writes;
    // `restored` is newest first; keep the entries whose restore failed.
    let failed: Vec<bool> = restored
        .iter()
        .rev()
        .map(|r| r.status != Status::Ok)
        .collect();
    j.entries = j
        .entries
        .iter()
        .zip(&failed)
        .filter(|(_, &f)| f)
        .map(|(e, _)| e.clone())
        .collect();
    j.committed_len = j.entries.len();
    j.state = if j.entries.is_empty() {
        JournalState::Reverted
    } else {
        JournalState::Committed
    };
    j.save(&spec.journal_dir)?;
    report.items = restored;
    Ok(report)
}

/// The journal in `spec.journal_dir`, if any (read without the lock).
pub fn status(spec: &TuningSpec) -> Result<Option<Journal>> {
    Journal::load(&spec.journal_dir)
}
