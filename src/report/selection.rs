//! `rtbench report`'s lines around each run's table ([`super::table`]): which file and
//! boot a run shown comes from, and what this boot's run is
//! ([`crate::results::select`]).

use crate::results::select::{Note, Selection, Shown, ThisBoot};
use std::path::Path;

/// `# FILE (boot 1a2b3c4d, this boot)` or `… NOT this boot)`: the heading of a run
/// shown.
pub fn heading(sel: &Selection, s: &Shown) -> String {
    let whose = if sel.is_this_boot(&s.run) {
        "this boot"
    } else {
        "NOT this boot"
    };
    // Stored fields and file names are any text: one line, escaped.
    crate::error::one_line(&format!(
        "# {} (boot {}, {whose})",
        s.file.display(),
        s.run.origin.short_boot()
    ))
    .into_owned()
}

/// What this boot's run is, said plainly, when it is not simply the stored run shown:
/// not stored (and why, from where it is shown), or missing (and whose the newest
/// stored run is). `dir` and `fallback_dir` are where it was looked for.
pub fn this_boot_line(sel: &Selection, dir: &Path, fallback_dir: &Path) -> Option<String> {
    let last = sel.shown.last();
    let line = match (sel.this_boot, last) {
        (ThisBoot::NotStored, Some(u)) => Some(format!(
            "this boot's self-test ({}) was NOT STORED: {}; shown from {}",
            u.run.shown_word(),
            u.run.store_error.as_deref().unwrap_or("unknown error"),
            u.file.display()
        )),
        (ThisBoot::Missing, newest) => Some(format!(
            "no self-test result of this boot ({}) in {} or {}{}",
            short(&sel.boot),
            dir.display(),
            fallback_dir.display(),
            newest.map_or_else(String::new, |s| format!(
                "; the newest stored run is from boot {}",
                s.run.origin.short_boot()
            ))
        )),
        _ => None,
    };
    line.map(|l| crate::error::one_line(&l).into_owned())
}

/// The warning when the unit label the environment names (`RTBENCH_UNIT_LABEL`,
/// `env_label`) is not the label of the run shown: the report is of another unit (or
/// of a run that recorded none). `None` when the environment names none or they agree.
pub fn label_line(s: &Shown, env_label: Option<&str>) -> Option<String> {
    let want = env_label.filter(|l| !l.is_empty())?;
    let got = s.run.unit.as_ref().and_then(|u| u.label.as_deref());
    (got != Some(want)).then(|| {
        crate::error::one_line(&format!(
            "rtbench: warning: RTBENCH_UNIT_LABEL is {want:?} but the run shown ({}) is {}",
            s.file.display(),
            got.map_or_else(
                || "of no unit label".to_string(),
                |g| format!("of unit {g:?}")
            )
        ))
        .into_owned()
    })
}

/// A warning line for what the selection from the store in `dir` skipped.
pub fn note_line(n: &Note, dir: &Path) -> String {
    let line = match n {
        Note::Skipped { file, error } => format!(
            "rtbench: {}: skipped, not a stored result: {error}",
            file.display()
        ),
        Note::Unlisted { why } => format!(
            "rtbench: results directory {}: cannot list it: {why}",
            dir.display()
        ),
    };
    crate::error::one_line(&line).into_owned()
}

/// The running boot's ID shortened like [`crate::results::store::Origin::short_boot`]
/// (`unknown` when `/proc` did not say).
fn short(boot: &str) -> String {
    if boot.is_empty() {
        "unknown".into()
    } else {
        boot.chars().filter(|c| *c != '-').take(8).collect()
    }
}
