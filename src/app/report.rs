//! `rtbench report`: this boot's self-test result (or every kept run) as a table or
//! JSON, chosen by [`crate::results::select`]; with `--since`, the monitor's windows.

use crate::cli::report::ReportArgs;
use crate::error::{Error, Result};
use crate::plan::report::{ReportPlan, RunsPlan};
use crate::report::junit::Junit;
use crate::report::output::{Output, Target};
use crate::report::selection::{heading, label_line, note_line, this_boot_line};
use crate::report::table::Table;
use crate::report::PrettyJson;
use crate::results::select::{self, SelectError};
use crate::results::store::{self, StoredRun};

/// `rtbench report`: 0 this boot's newest self-test attempt reached a verdict, passed
/// (or was accepted unjudged) and was stored, 1 it did not (failed, no verdict —
/// stopped or never finished —, not stored, an output not written) or is missing; 2
/// nothing to show (with `--format junit` a document with one `<error>` case is
/// still written).
pub fn run(args: &ReportArgs) -> Result<i32> {
    match crate::plan::report::plan(args)? {
        ReportPlan::Runs(p) => runs(&p),
        #[cfg(feature = "monitor")]
        ReportPlan::Since(p) => since(&p),
    }
}

fn runs(p: &RunsPlan) -> Result<i32> {
    let document = p.json || p.junit;
    let out = Output::new(document.then_some(&Target::Stdout));
    let boot = store::current_boot_id();
    let mut notes = Vec::new();
    let selected = select::select(&p.dir, &p.fallback_dir, &boot, p.all, &mut notes);
    for n in &notes {
        out.warn(&note_line(n, &p.dir));
    }
    if let (Err(e), true) = (&selected, p.junit) {
        // A station reading the file must find a document, never take none for a pass.
        let doc = crate::report::junit::none_found(&format!("{}: {e}", p.dir.display()));
        out.document(&Target::Stdout, &Raw, &doc)?;
    }
    let sel = selected.map_err(|e| {
        let flag = match e {
            SelectError::CannotList { .. } => "results directory",
            SelectError::NoResults | SelectError::NoReadable => "--dir",
        };
        Error::usage(flag, p.dir.display(), e.to_string())
    })?;
    let env_label = std::env::var("RTBENCH_UNIT_LABEL").ok();
    if let Some(line) = sel
        .shown
        .last()
        .and_then(|s| label_line(s, env_label.as_deref()))
    {
        out.warn(&line);
    }
    if p.junit {
        let runs: Vec<&StoredRun> = sel.shown.iter().map(|s| &s.run).collect();
        out.document(&Target::Stdout, &Junit, &runs[..])?;
    } else if p.json {
        let runs: Vec<&StoredRun> = sel.shown.iter().map(|s| &s.run).collect();
        if p.all {
            out.document(&Target::Stdout, &PrettyJson, &runs)?;
        } else {
            out.document(&Target::Stdout, &PrettyJson, runs[0])?;
        }
    } else {
        for s in &sel.shown {
            out.line(&heading(&sel, s));
            out.text(&Table, &s.run)?;
        }
    }
    if let Some(line) = this_boot_line(&sel, &p.dir, &p.fallback_dir) {
        if document {
            out.warn(&format!("rtbench: {line}"));
        } else {
            out.line(&line);
        }
    }
    Ok(sel.exit_code())
}

/// A document already made, written as it is.
struct Raw;

impl crate::report::Sink<String> for Raw {
    fn write(&self, doc: &String, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        out.write_all(doc.as_bytes())
    }
}

/// `rtbench report --since TIME`: the monitor's windows of the last TIME, per CPU;
/// exit 1 when one exceeded a limit or there is none in the period.
#[cfg(feature = "monitor")]
fn since(p: &crate::plan::report::SincePlan) -> Result<i32> {
    use crate::error::exit;
    use crate::monitor::aggregate::STATE_FILE;
    use crate::monitor::history::State;
    use crate::report::monitor::{skipped_lines, SinceDoc, SinceJson, SinceTable};
    use crate::results::window::WindowStore;
    let dir = &p.dir;
    let now = crate::sys::clock::Clock::wall_secs();
    // period is at most duration::MAX_SECS: the subtraction cannot overflow.
    let since_s = now.saturating_sub(i64::try_from(p.period.as_secs()).unwrap_or(i64::MAX));
    // Streamed: the summary is made one window at a time, and the JSON's windows are
    // read again from the same snapshot as they are written (docs/FIELD.md: memory does not
    // grow with the store).
    let store = WindowStore::new(dir, u64::MAX);
    let (summary, snapshot) = store.since(since_s, now).map_err(|e| Error::io(dir, e))?;
    // A store file that is not a regular file (a FIFO, a device, a link where the
    // store should be) is bad input (exit 2), not a window over a limit or a quiet
    // period (exit 1) — nor a pass: a summary without its windows would judge only
    // the rest of the period.
    if let Some((path, kind)) = snapshot.skipped.files.first() {
        return Err(Error::usage(
            "--since",
            "",
            format!(
                "{} is a {kind}, not a window store file; expected the monitor's directory \
                 with regular files",
                path.display()
            ),
        ));
    }
    let out = Output::new(p.json.then_some(&Target::Stdout));
    for line in skipped_lines(dir, &snapshot.skipped, true) {
        out.warn(&line);
    }
    let mut summary = summary.map_err(|e| Error::usage(dir.display().to_string(), "", e))?;
    let max = crate::sys::input::MAX_INPUT_BYTES;
    if let Ok(text) = crate::sys::kept::read_text(&dir.join(STATE_FILE), max) {
        if let Ok(state) = serde_json::from_str::<State>(&text) {
            summary.add_alltime(|cpu| state.alltime(cpu));
        }
    }
    if p.json {
        let doc = SinceDoc {
            summary: &summary,
            snapshot: &snapshot,
        };
        out.stream(&SinceJson, &doc)?;
    } else {
        out.text(&SinceTable, &summary)?;
    }
    Ok(if summary.windows == 0 || summary.over_limit() > 0 {
        exit::FAIL
    } else {
        exit::OK
    })
}
