//! `rtbench plot INPUT -o FILE`: plan, read, parse, refuse an `-o` that is the file
//! read, render (a latency plot, or the monitor's timeline), write (atomically; `-` =
//! standard output).

use crate::cli::plot::PlotArgs;
use crate::error::{exit, Result};
use crate::plot;
use crate::report::output::{Output, Target};

/// `rtbench plot`.
pub fn run(args: &PlotArgs) -> Result<i32> {
    let p = crate::plan::plot::plot(args)?;
    let loaded = plot::load(&p.input, p.test.as_deref())?;
    if let Some(file) = &loaded.file {
        crate::plan::check_not_input("-o", &p.output, &[file])?;
    }
    let target = Target::from_path(&p.output);
    let out = Output::new(Some(&target));
    for line in &loaded.skipped {
        out.warn(&format!("rtbench: {line}"));
    }
    match loaded.input {
        plot::Input::Latency(parsed) => {
            let svg = plot::svg::Svg {
                title: p.title.as_deref(),
                x_max_us: p.x_max_us,
            };
            out.document(&target, &svg, &parsed)?;
        }
        plot::Input::Windows(records) => {
            let svg = plot::timeline::Timeline {
                title: p.title.as_deref(),
                source: &loaded.name,
            };
            out.document(&target, &svg, &records)?;
        }
    }
    Ok(exit::OK)
}
