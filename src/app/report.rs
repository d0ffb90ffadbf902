//! `rtbench report`: the stored self-test results as a table or JSON.

use crate::cli::report::ReportArgs;
use crate::error::{exit, Error, Result};
use crate::report::output::{Output, Target};
use crate::report::table::Table;
use crate::report::PrettyJson;

/// `rtbench report`.
pub fn run(args: &ReportArgs) -> Result<i32> {
    use crate::report::store::Store;
    let out = Output::new(args.json.then_some(&Target::Stdout));
    let store = Store::new(&args.dir, 1);
    let files = store.list().map_err(|e| Error::io(&args.dir, e))?;
    if files.is_empty() {
        return Err(Error::usage(
            "--dir",
            args.dir.display(),
            "no stored self-test results (run `rtbench selftest` first)",
        ));
    }
    // A damaged file (a foreign file, a disk error) is reported and skipped: the other
    // runs stay readable.
    let mut runs = Vec::new();
    let mut chosen = Vec::new();
    for f in files.iter().rev() {
        match Store::load(f) {
            Ok(r) => {
                chosen.push(f.clone());
                runs.push(r);
                if !args.all {
                    break;
                }
            }
            Err(e) => out.warn(&format!(
                "rtbench: {}: skipped, not a stored result: {e}",
                f.display()
            )),
        }
    }
    if runs.is_empty() {
        return Err(Error::usage(
            "--dir",
            args.dir.display(),
            "no readable self-test result",
        ));
    }
    chosen.reverse();
    runs.reverse();
    if args.json {
        if args.all {
            out.document(&Target::Stdout, &PrettyJson, &runs)?;
        } else {
            out.document(&Target::Stdout, &PrettyJson, &runs[0])?;
        }
    } else {
        for (f, r) in chosen.iter().zip(&runs) {
            out.line(&format!("# {}", f.display()));
            out.text(&Table, r)?;
        }
    }
    let last_pass = runs.last().is_some_and(|r| r.verdict.pass);
    Ok(if last_pass { exit::OK } else { exit::FAIL })
}
