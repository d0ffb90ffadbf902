//! `rtbench compare RUN RUN…`: plan, read every run, render the comparison, write the
//! overlay plot when asked; exit 1 when a run regressed against the baseline.

use crate::cli::compare::CompareArgs;
use crate::compare::judge::Verdict;
use crate::error::{exit, Error, Result};
use crate::report::output::{Output, Target};

/// `rtbench compare`.
pub fn run(args: &CompareArgs) -> Result<i32> {
    let p = crate::plan::compare::plan(args)?;
    let runs = p
        .runs
        .iter()
        .map(|r| crate::compare::load(r))
        .collect::<Result<Vec<_>>>()?;
    let (text, outcomes) = crate::compare::text::render(&runs, p.tolerance);
    let plot_target = p.plot.as_ref().map(|f| Target::from_path(f));
    let out = Output::new(plot_target.as_ref());
    out.text(&crate::report::output::Verbatim, &text)?;
    if let (Some(target), Some(file)) = (&plot_target, &p.plot) {
        let base = &runs[0];
        let key = p.test.clone().unwrap_or_else(|| {
            base.series("cyclic")
                .or(base.series.first())
                .map_or_else(String::new, |s| s.key.clone())
        });
        let overlay = crate::compare::overlay(&runs, &key)
            .ok_or_else(|| Error::usage("--test", &key, "no run has this test"))?;
        let svg = crate::plot::svg::Svg {
            title: None,
            x_max_us: None,
        };
        out.document(target, &svg, &overlay)?;
        let _ = file;
    }
    Ok(
        if outcomes.iter().any(|o| o.verdict == Verdict::Regression) {
            exit::FAIL
        } else if outcomes.iter().any(|o| o.compared == 0) {
            // Nothing in common: a CI job must not read that as a pass.
            exit::USAGE
        } else {
            exit::OK
        },
    )
}
