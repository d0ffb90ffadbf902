//! Which kept self-test run stands for this boot, and which runs `rtbench report`
//! shows ([`select`]). A run of another boot is never shown as this boot's: every run
//! records its boot ([`Origin`](super::store::Origin)), and when this boot's run is
//! missing, or was not stored (only the fallback copy has it), the selection says so.

use super::store::{self, Store, StoredRun};
use crate::error::exit;
use std::path::{Path, PathBuf};

/// One run to show and the file it was read from.
#[derive(Debug, Clone, PartialEq)]
pub struct Shown {
    /// The stored run's file, or the fallback copy.
    pub file: PathBuf,
    /// The run.
    pub run: StoredRun,
}

/// What this boot's run is ([`Selection::this_boot`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThisBoot {
    /// This boot ran the self-test but the store did not take the run: it is the last
    /// run shown, read from the fallback copy (its `store_error` says why).
    NotStored,
    /// The newest stored run is this boot's, and the last run shown.
    Stored,
    /// No kept run is this boot's; the last run shown (if any) is an older boot's.
    Missing,
}

/// Something skipped on the way, said as a warning; the selection goes on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Note {
    /// A file named like a run (or the fallback copy) that is not a readable result.
    Skipped {
        /// The file.
        file: PathBuf,
        /// Why: the read or the parse error.
        error: String,
    },
    /// The store's directory could not be listed, but this boot's fallback copy is
    /// shown.
    Unlisted {
        /// Why (`not a directory`, the OS error).
        why: String,
    },
}

/// Why there is nothing to show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SelectError {
    /// The store's directory could not be listed and there is no fallback copy of this
    /// boot.
    CannotList {
        /// Why (`not a directory`, the OS error).
        why: String,
    },
    /// No file in the store is named like a run, and no fallback copy of this boot.
    NoResults,
    /// Files named like runs, none readable.
    NoReadable,
}

impl std::fmt::Display for SelectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SelectError::CannotList { why } => write!(f, "cannot list it: {why}"),
            SelectError::NoResults => {
                f.write_str("no stored self-test results (run `rtbench selftest` first)")
            }
            SelectError::NoReadable => f.write_str("no readable self-test result"),
        }
    }
}

/// What `rtbench report` shows and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Selection {
    /// The running boot's ID (empty when `/proc` does not say: no run is this boot's).
    pub boot: String,
    /// The runs to show, oldest first: the newest one, or every readable one with
    /// `all`; this boot's fallback copy last when it is the newest of this boot.
    pub shown: Vec<Shown>,
    /// What the last run shown is to this boot.
    pub this_boot: ThisBoot,
}

impl Selection {
    /// Whether `run` is of this boot.
    pub fn is_this_boot(&self, run: &StoredRun) -> bool {
        is_this_boot(run, &self.boot)
    }

    /// The exit code of `rtbench report`: 0 when this boot's newest attempt was stored
    /// and accepted ([`StoredRun::accepted`]: judged, exit 0), else 1 (failed,
    /// unjudged, no verdict, not stored, an output not written, or no run of this
    /// boot).
    pub fn exit_code(&self) -> i32 {
        match (self.this_boot, self.shown.last()) {
            (ThisBoot::Stored, Some(s)) if s.run.accepted() => exit::OK,
            _ => exit::FAIL,
        }
    }
}

fn is_this_boot(run: &StoredRun, boot: &str) -> bool {
    !boot.is_empty() && run.origin.boot_id == boot
}

/// Selects from the store in `dir` and the fallback copy in `fallback_dir` for boot
/// `boot` (the running one: [`store::current_boot_id`]): the newest run, or with `all`
/// every readable one, and this boot's fallback copy unless a stored run of this boot
/// is as new. A damaged file (foreign, a disk error, a FIFO named like a run) is
/// skipped with a [`Note`] in `notes`, in the order found (also when the result is an
/// error), and so is a store that cannot be listed while this boot's fallback copy
/// exists. Reads only the newest readable run without `all`.
pub fn select(
    dir: &Path,
    fallback_dir: &Path,
    boot: &str,
    all: bool,
    notes: &mut Vec<Note>,
) -> Result<Selection, SelectError> {
    // A store that cannot be listed (the configured results_dir is a file, EIO) hides
    // nothing: this boot's fallback copy is still shown, with the reason said.
    let (files, list_error) = match Store::new(dir, 1).list() {
        Ok(f) => (f, None),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (Vec::new(), None),
        Err(_) if dir.exists() && !dir.is_dir() => (Vec::new(), Some("not a directory".into())),
        Err(e) => (Vec::new(), Some(e.to_string())),
    };
    let unstored = match store::load_fallback(fallback_dir) {
        // The copy of another configuration (another results_dir) is not this
        // configuration's run, whatever boot it is from.
        Some(Ok(run))
            if is_this_boot(&run, boot)
                && run
                    .results_dir
                    .as_deref()
                    .map_or(true, |d| Path::new(d) == dir) =>
        {
            Some(Shown {
                file: store::fallback_path(fallback_dir),
                run,
            })
        }
        Some(Err(e)) => {
            notes.push(Note::Skipped {
                file: store::fallback_path(fallback_dir),
                error: e.to_string(),
            });
            None
        }
        _ => None,
    };
    let mut stored = Vec::new();
    for f in files.iter().rev() {
        match Store::load(f) {
            Ok(run) => {
                stored.push(Shown {
                    file: f.clone(),
                    run,
                });
                if !all {
                    break;
                }
            }
            Err(e) => notes.push(Note::Skipped {
                file: f.clone(),
                error: e.to_string(),
            }),
        }
    }
    stored.reverse();
    // A stored run of this boot as new as the fallback copy supersedes it.
    let unstored = unstored.filter(|u| {
        !stored
            .last()
            .is_some_and(|s| is_this_boot(&s.run, boot) && s.run.start_s >= u.run.start_s)
    });
    if let Some(why) = list_error {
        if unstored.is_none() {
            return Err(SelectError::CannotList { why });
        }
        notes.push(Note::Unlisted { why });
    }
    if stored.is_empty() && unstored.is_none() {
        return Err(if files.is_empty() {
            SelectError::NoResults
        } else {
            SelectError::NoReadable
        });
    }
    let this_boot = match &unstored {
        Some(_) => ThisBoot::NotStored,
        None if stored.last().is_some_and(|s| is_this_boot(&s.run, boot)) => ThisBoot::Stored,
        None => ThisBoot::Missing,
    };
    let mut shown = if all || unstored.is_none() {
        stored
    } else {
        Vec::new()
    };
    shown.extend(unstored);
    if !all {
        shown.drain(..shown.len().saturating_sub(1));
    }
    Ok(Selection {
        boot: boot.to_string(),
        shown,
        this_boot,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::tempdir::Dir;

    fn run(boot: &str, start_s: i64, exit_code: i32) -> StoredRun {
        let mut r = store::sample_run(start_s);
        r.origin.boot_id = boot.into();
        r.exit_code = Some(exit_code);
        r
    }

    #[test]
    fn this_boots_stored_run_decides_the_exit_code() {
        let d = Dir::new("select-stored");
        let s = Store::new(d.path().join("r"), 5);
        s.save(&run("old", 1, 0)).unwrap();
        s.save(&run("now", 2, 0)).unwrap();
        let sel = select(&s.dir, &d.path().join("f"), "now", false, &mut vec![]).unwrap();
        assert_eq!((sel.this_boot, sel.shown.len()), (ThisBoot::Stored, 1));
        assert_eq!(sel.exit_code(), exit::OK);
        let all = select(&s.dir, &d.path().join("f"), "now", true, &mut vec![]).unwrap();
        assert_eq!(all.shown.len(), 2);
        // Another boot's run is never this boot's.
        let later = select(&s.dir, &d.path().join("f"), "later", false, &mut vec![]).unwrap();
        assert_eq!(later.this_boot, ThisBoot::Missing);
        assert_eq!(later.exit_code(), exit::FAIL);
        // Nor is any run when the boot is unknown.
        let unknown = select(&s.dir, &d.path().join("f"), "", false, &mut vec![]).unwrap();
        assert_eq!(unknown.this_boot, ThisBoot::Missing);
    }

    #[test]
    fn the_fallback_copy_stands_for_this_boot_until_a_newer_run_is_stored() {
        let d = Dir::new("select-fallback");
        let (dir, fb) = (d.path().join("r"), d.path().join("f"));
        let s = Store::new(&dir, 5);
        s.save(&run("old", 1, 0)).unwrap();
        store::save_fallback(&fb, &run("now", 2, 0)).unwrap();
        let sel = select(&dir, &fb, "now", false, &mut vec![]).unwrap();
        assert_eq!(sel.this_boot, ThisBoot::NotStored);
        assert_eq!(sel.shown[0].file, store::fallback_path(&fb));
        assert_eq!(sel.exit_code(), exit::FAIL);
        let all = select(&dir, &fb, "now", true, &mut vec![]).unwrap();
        assert_eq!(all.shown.len(), 2);
        // A fallback copy of another boot is not shown.
        assert_eq!(
            select(&dir, &fb, "other", false, &mut vec![])
                .unwrap()
                .this_boot,
            ThisBoot::Missing
        );
        s.save(&run("now", 3, 0)).unwrap();
        let sel = select(&dir, &fb, "now", false, &mut vec![]).unwrap();
        assert_eq!(sel.this_boot, ThisBoot::Stored);
    }

    #[test]
    fn another_configurations_fallback_copy_is_not_this_boots_run() {
        let d = Dir::new("select-other-config");
        let (dir, fb) = (d.path().join("r"), d.path().join("f"));
        let mut other = run("now", 2, 1);
        other.results_dir = Some(d.path().join("factory").display().to_string());
        store::save_fallback(&fb, &other).unwrap();
        // Another store's unstored run: nothing of this configuration ran this boot.
        let e = select(&dir, &fb, "now", false, &mut vec![]).unwrap_err();
        assert!(matches!(e, SelectError::NoResults), "{e:?}");
        Store::new(&dir, 5).save(&run("old", 1, 0)).unwrap();
        let sel = select(&dir, &fb, "now", false, &mut vec![]).unwrap();
        assert_eq!(sel.this_boot, ThisBoot::Missing);
        // The configuration's own copy is shown.
        other.results_dir = Some(dir.display().to_string());
        store::save_fallback(&fb, &other).unwrap();
        let sel = select(&dir, &fb, "now", false, &mut vec![]).unwrap();
        assert_eq!(sel.this_boot, ThisBoot::NotStored);
    }

    #[test]
    fn damaged_files_and_an_unlistable_store_are_notes_or_errors() {
        let d = Dir::new("select-damaged");
        let (dir, fb) = (d.path().join("r"), d.path().join("f"));
        let mut notes = Vec::new();
        assert_eq!(
            select(&dir, &fb, "now", false, &mut notes),
            Err(SelectError::NoResults)
        );
        d.file("r/run-000001-19700101T000000Z.json", "{");
        // The skipped file is said also when nothing is left to show.
        assert_eq!(
            select(&dir, &fb, "now", false, &mut notes),
            Err(SelectError::NoReadable)
        );
        let damaged = dir.join("run-000001-19700101T000000Z.json");
        assert!(
            matches!(&notes[..], [Note::Skipped { file, .. }] if *file == damaged),
            "{notes:?}"
        );
        Store::new(&dir, 5).save(&run("now", 2, 1)).unwrap();
        let mut notes = Vec::new();
        let sel = select(&dir, &fb, "now", true, &mut notes).unwrap();
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert_eq!(
            (sel.this_boot, sel.exit_code()),
            (ThisBoot::Stored, exit::FAIL)
        );
        // A file where the store should be: an error, unless this boot's copy exists.
        d.file("file", "");
        let file = d.path().join("file");
        assert_eq!(
            select(&file, &fb, "now", false, &mut vec![]),
            Err(SelectError::CannotList {
                why: "not a directory".into()
            })
        );
        store::save_fallback(&fb, &run("now", 3, 0)).unwrap();
        let mut notes = Vec::new();
        let sel = select(&file, &fb, "now", false, &mut notes).unwrap();
        assert_eq!(
            notes,
            [Note::Unlisted {
                why: "not a directory".into()
            }]
        );
        assert_eq!(sel.this_boot, ThisBoot::NotStored);
    }
}
