//! `rtbench plot`: the OSADL-style latency plot — one curve per CPU (thread), latency in
//! µs on a linear x axis (logarithmic where the input binned every sample, [`axis`]),
//! sample count on a logarithmic y axis, each CPU's maximum marked, as the OSADL QA farm
//! draws them
//! (<https://www.osadl.org/Latency-plots.latency-plots.0.html>).
//!
//! Inputs (told apart by content, not by file name):
//! - a result read by `crate::results::read` (`parse`): rt-tests `file_version` 1
//!   JSON — `rtbench cyclic --json` (with its `"rtbench"` object: exact p99.9 and max
//!   in ns, system snapshot) or `cyclictest --json` —, a stored self-test result, a
//!   cyclictest `-h`/`-H` dump (rt-tests ≤ 2.6 and 2.7+ layouts);
//! - the monitor's window store (`windows.jsonl`), drawn as a timeline; see [`timeline`].
//!
//! Output: SVG written by [`svg`] (no plotting crate: see that module for why) and
//! [`timeline`], on the page of `page.rs`.

pub mod axis;
mod labels;
mod page;
mod place;
pub mod svg;
pub mod timeline;

use crate::error::{Error, Result};
use crate::results::read::{self, Histograms};
use std::path::Path;

/// What an input of `rtbench plot` is drawn as.
#[derive(Debug)]
pub enum Input {
    /// A latency histogram per CPU ([`svg`]).
    Latency(Box<Histograms>),
    /// The monitor's windows, oldest first, at least one ([`timeline`]).
    Windows(Vec<crate::results::window::WindowRecord>),
}

/// Reads and parses `path` (`crate::results::read::read_input` and `parse`); a
/// monitor's window store (its directory, or a `windows.jsonl` file or stream) is read
/// as [`Input::Windows`]. Returns the name to show, the input, the file read (`None`:
/// standard input or a window store's directory) and what a results directory's reading
/// skipped. Errors: those of `read_input` and `parse`; a window store without a
/// readable window ([`Error::Usage`]).
pub fn load(path: &Path, test: Option<&str>) -> Result<Loaded> {
    let (name, records, file) = match timeline::store_dir(path) {
        Some(dir) => {
            let name = dir.display().to_string();
            let (records, _) = timeline::read_store(&dir)
                .map_err(|e| Error::usage(&name, "", format!("cannot read: {e}")))?;
            (name, records, None)
        }
        None => {
            let read = read::read_input(path)?;
            match std::str::from_utf8(&read.bytes)
                .ok()
                .filter(|t| timeline::is_windows(t))
            {
                Some(text) => (read.name.clone(), timeline::parse_lines(text).0, read.file),
                None => {
                    let plot = read::parse(&read.name, &read.bytes, test)?;
                    return Ok(Loaded {
                        name: read.name,
                        input: Input::Latency(Box::new(plot)),
                        file: read.file,
                        skipped: read.skipped,
                    });
                }
            }
        }
    };
    if records.is_empty() {
        return Err(Error::usage(
            &name,
            "",
            "the monitor's window store holds no readable window",
        ));
    }
    Ok(Loaded {
        name,
        input: Input::Windows(records),
        file,
        skipped: Vec::new(),
    })
}

/// An input of `rtbench plot` as [`load`] read it.
#[derive(Debug)]
pub struct Loaded {
    /// The name to show.
    pub name: String,
    /// What it is drawn as.
    pub input: Input,
    /// The file read (`None`: standard input, a window store's directory).
    pub file: Option<std::path::PathBuf>,
    /// What a results directory's reading passed over, one line each.
    pub skipped: Vec<String>,
}
