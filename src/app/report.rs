//! `rtbench report`: the stored self-test results as a table or JSON.

use crate::cli::report::ReportArgs;
use crate::error::{exit, Error, Result};

/// `rtbench report`.
pub fn run(args: &ReportArgs) -> Result<i32> {
    use crate::report::store::Store;
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
            Err(e) => eprintln!(
                "rtbench: {}: skipped, not a stored result: {e}",
                f.display()
            ),
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
        let v = if args.all {
            serde_json::to_string_pretty(&runs)
        } else {
            serde_json::to_string_pretty(&runs[0])
        }
        .map_err(|e| Error::io("<stdout>", e.into()))?;
        println!("{v}");
    } else {
        for (f, r) in chosen.iter().zip(&runs) {
            println!("# {}", f.display());
            print!("{}", crate::report::table::render(r));
        }
    }
    let last_pass = runs.last().is_some_and(|r| r.verdict.pass);
    Ok(if last_pass { exit::OK } else { exit::FAIL })
}
