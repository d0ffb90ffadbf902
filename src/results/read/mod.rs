//! Readers of stored and foreign results: a stored self-test result
//! ([`stored`], `results::store::StoredRun`), rt-tests `file_version` 1 JSON —
//! `rtbench cyclic --json` or `cyclictest --json` ([`json`]) —, a cyclictest `-h`/`-H`
//! histogram dump ([`dump`]), each into the same [`Histograms`]: one [`Curve`] per
//! thread or pair with what the input says about the run ([`Meta`]). [`run`] reads a
//! whole input once into every test it holds with what it records about the system
//! (`rtbench compare`); [`parse`] picks one test (`rtbench plot`).
//!
//! Formats are told apart by content, not by file name. Nothing here prints: what a
//! results directory's reading skipped is returned ([`Input::skipped`]).

pub mod dump;
pub mod json;
pub mod run;
pub mod stored;

use crate::error::{Error, Result};
use crate::sys::input::{self, InputError};
use std::path::{Path, PathBuf};

/// One CPU's (thread's) latency histogram, as plotted. Latencies in **ns**.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    /// Thread index in the input.
    pub thread: usize,
    /// CPU the thread was pinned to (`None`: unknown or not pinned).
    pub cpu: Option<usize>,
    /// Width of one bucket in **ns** (1000: cyclictest's 1-µs classes; 1 with `-N`).
    pub bucket_ns: u64,
    /// Non-empty buckets as `(lower bound in ns, samples)`, ascending, bounds distinct.
    pub buckets: Vec<(u64, u64)>,
    /// Samples beyond the histogram's range: counted by cyclictest, never binned.
    pub overflows: u64,
    /// End of the histogram's range in **ns** (`-h US` × 1 µs); `None` for ns histogram
    /// input, which bins every sample.
    pub range_ns: Option<u64>,
    /// Maximum latency in **ns** (exact where the input has it; from a cyclictest dump
    /// it is the `# Max Latencies:` value in µs).
    pub max_ns: u64,
    /// 99.9th percentile in **ns** as the input states it (`None`: derive it from the
    /// buckets with [`Curve::p999`]).
    pub p999_ns: Option<u64>,
    /// Whose curve it is when several runs share one plot (`rtbench compare --plot`:
    /// `A`, `B`, …), before its label; `None` in a plot of one run.
    pub run: Option<String>,
}

/// Where a percentile lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Percentile {
    /// At this latency in **ns** (bucket lower bound when derived from buckets).
    At(u64),
    /// Among the overflows: at or above this latency in **ns** (the histogram's range).
    Beyond(u64),
}

impl Curve {
    /// Samples in the buckets (overflows not included). [`parse`] refuses inputs whose
    /// counts (with the overflows) add up past `u64::MAX`; for a curve built otherwise
    /// the sum saturates there.
    pub fn binned(&self) -> u64 {
        self.buckets.iter().fold(0, |a, b| a.saturating_add(b.1))
    }

    /// Every sample: binned and overflows (saturating, see [`Curve::binned`]).
    pub fn samples(&self) -> u64 {
        self.binned().saturating_add(self.overflows)
    }

    /// End of the bucket starting at `lo` ns (saturating; [`parse`] refuses buckets
    /// whose end does not fit).
    pub fn bucket_end(&self, lo: u64) -> u64 {
        lo.saturating_add(self.bucket_ns)
    }

    /// The 99.9th percentile: the input's value, else the lower bound of the bucket
    /// holding sample number ⌈0.999 × all samples⌉ (overflows counted as above the range).
    pub fn p999(&self) -> Percentile {
        if let Some(p) = self.p999_ns {
            return Percentile::At(p);
        }
        let total = self.samples();
        let rank = (total as f64 * 0.999).ceil().max(1.0) as u64;
        let mut seen = 0u64;
        for &(lo, n) in &self.buckets {
            seen = seen.saturating_add(n);
            if seen >= rank {
                return Percentile::At(lo);
            }
        }
        let end = self.buckets.last().map_or(0, |b| self.bucket_end(b.0));
        Percentile::Beyond(self.range_ns.unwrap_or(end))
    }

    /// The label used in the legend: `CPU 2`, or `T:1 CPU 0` when threads share CPUs,
    /// or `T:1` when the CPU is unknown; for a pair test (`pairs`) `pair 0 CPU 2`, or
    /// `pair 0` when not pinned.
    pub fn label(&self, cpus_unique: bool, pairs: bool) -> String {
        match &self.run {
            // The same CPU in several runs: the run tells them apart.
            Some(run) => format!("{run} {}", self.label_of_run(true, pairs)),
            None => self.label_of_run(cpus_unique, pairs),
        }
    }

    /// [`Curve::label`] without the run.
    fn label_of_run(&self, cpus_unique: bool, pairs: bool) -> String {
        if pairs {
            return match self.cpu {
                Some(c) => format!("pair {} CPU {c}", self.thread),
                None => format!("pair {}", self.thread),
            };
        }
        match self.cpu {
            Some(c) if cpus_unique => format!("CPU {c}"),
            Some(c) => format!("T:{} CPU {c}", self.thread),
            None => format!("T:{}", self.thread),
        }
    }
}

/// What the input says about the run; `None` where it does not record it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Meta {
    /// The input format, e.g. `rtbench cyclic --json`.
    pub format: String,
    /// Host name (uname -n).
    pub host: Option<String>,
    /// Kernel: release, preemption model, machine.
    pub kernel: Option<String>,
    /// Start of the run, as text.
    pub date: Option<String>,
    /// Test name (`cyclic`, ...).
    pub test: Option<String>,
    /// The command line of the run.
    pub command: Option<String>,
    /// Measured duration in seconds.
    pub duration_s: Option<f64>,
    /// Load beside the test (`none` when the input says there was none).
    pub load: Option<String>,
    /// A stored self-test result's verdict of the plotted test alone and what failed in
    /// it, e.g. `FAIL: cyclic CPU 1 p99.9 2974.0 µs > limit 50 µs`.
    pub verdict: Option<String>,
    /// The whole run's verdict where it says more than the test's (`run: FAIL, 1 more
    /// finding outside this test (rtbench report)`).
    pub run_verdict: Option<String>,
    /// A stored self-test result's latency limits of the plotted test: (statistic,
    /// limit in **ns**), drawn as vertical lines.
    pub limits: Vec<(String, u64)>,
    /// The curves are sender/receiver pairs (`rtbench pmq`/`pipe` in a stored result),
    /// labelled `pair N CPU C`.
    pub pairs: bool,
    /// The histogram bins every sample: no range was chosen (a stored self-test result
    /// without `[output] histogram_us`). The latency axis is then logarithmic, from the
    /// body to the largest maximum (docs/PLOT.md).
    pub binned_all: bool,
}

/// A parsed input: metadata and one curve per thread, in thread order.
#[derive(Debug, Clone, PartialEq)]
pub struct Histograms {
    /// Facts for the title and legend.
    pub meta: Meta,
    /// At least one curve, each with at least one non-empty bucket.
    pub curves: Vec<Curve>,
}

/// The one-line explanation for an input of unknown format.
pub const EXPECTED: &str = "expected rtbench or cyclictest --json output, a stored \
     self-test result (rtbench report --json) or a cyclictest -h/-H histogram dump";

/// Parses `bytes` read from `input` (named in errors). `test` picks a test from a
/// stored self-test result (default: `cyclic`, else the first).
///
/// Errors (all [`Error::Usage`], exit 2): neither format ([`EXPECTED`]); a JSON result
/// without histograms; an empty histogram; a truncated or inconsistent dump (naming the
/// line).
pub fn parse(input: &str, bytes: &[u8], test: Option<&str>) -> Result<Histograms> {
    let bad = |m: String| Error::usage(input, "", m);
    let text = std::str::from_utf8(bytes).map_err(|_| bad(format!("not text; {EXPECTED}")))?;
    let plot = if text.trim_start().starts_with('{') {
        json::parse(text, test).map_err(bad)?
    } else if dump::is_dump(text) {
        dump::parse(text).map_err(bad)?
    } else {
        return Err(bad(format!("unknown format; {EXPECTED}")));
    };
    check(input, plot)
}

/// `plot` unless it has no thread or a thread with an empty histogram: one
/// [`Error::Usage`] naming `input` and why (no samples; every sample beyond the range).
pub fn check(input: &str, plot: Histograms) -> Result<Histograms> {
    let bad = |m: String| Error::usage(input, "", m);
    if plot.curves.is_empty() {
        return Err(bad("no threads in the result".into()));
    }
    for c in &plot.curves {
        if c.buckets.is_empty() {
            let why = match c.range_ns {
                _ if c.overflows == 0 => "no samples".to_string(),
                Some(r) if r >= 1000 => format!(
                    "all {} samples lie beyond the histogram's {} µs (use a larger -h)",
                    c.overflows,
                    r / 1000
                ),
                // A dump without rows (rt-tests 2.7+ leaves out empty ones) does not
                // say where its range ends.
                _ => format!(
                    "all {} samples are histogram overflows, beyond its last bucket (use a larger -h)",
                    c.overflows
                ),
            };
            return Err(bad(format!(
                "the histogram of thread {} is empty: {why}",
                c.thread
            )));
        }
    }
    Ok(plot)
}

/// An input as read: the name to show, its bytes, and what a results directory's
/// reading skipped.
#[derive(Debug)]
pub struct Input {
    /// The name shown in messages: the path as given, `<stdin>`, or the results
    /// directory's file that was read.
    pub name: String,
    /// The file read, to tell whether an output would replace it; `None` for standard
    /// input.
    pub file: Option<PathBuf>,
    /// Its contents.
    pub bytes: Vec<u8>,
    /// Each file of a results directory that was passed over and why
    /// (`PATH: skipped, not a stored result: a FIFO, not a regular file`), newest first.
    pub skipped: Vec<String>,
}

/// Whether `bytes` are a stored self-test record of an attempt that never reached a
/// verdict ([`crate::results::attempt`]: `attempt.state` other than `judged`).
fn unmeasured(bytes: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Value>(bytes).is_ok_and(|v| {
        v.get("attempt")
            .and_then(|a| a.get("state"))
            .and_then(|s| s.as_str())
            .is_some_and(|s| s != "judged")
    })
}

/// Reads `path`: `-` is standard input; a directory is a results store (its newest run
/// that is a regular file and measured something; anything else named like a run — a
/// FIFO, a symbolic link, the record of an attempt stopped before a verdict — is
/// skipped and named in [`Input::skipped`]). At most [`input::MAX_INPUT_BYTES`] are
/// read: a named FIFO (`<(cmd)`) is fine, `/dev/zero` is not read without end.
/// Errors ([`Error::Usage`]): unreadable, too large, a directory without a readable run
/// (naming the first files it skipped and why).
pub fn read_input(path: &Path) -> Result<Input> {
    let name = path.display().to_string();
    let unreadable = |e: InputError| Error::usage(&name, "", format!("cannot read: {e}"));
    let max = input::MAX_INPUT_BYTES;
    if path == Path::new("-") {
        let bytes = input::read_stream(std::io::stdin().lock(), max).map_err(unreadable)?;
        return Ok(Input {
            name: "<stdin>".into(),
            file: None,
            bytes,
            skipped: Vec::new(),
        });
    }
    if path.is_dir() {
        let store = crate::results::store::Store::new(path, 1);
        let files = store.list().map_err(|e| unreadable(e.into()))?;
        let mut skipped = Vec::new();
        for f in files.iter().rev() {
            // A file of the store: never through a link (crate::sys::kept).
            match crate::sys::kept::read(f, max) {
                // The record of an attempt that measured nothing: the newest run that
                // did is read, and this one named.
                Ok(bytes) if unmeasured(&bytes) => skipped.push(format!(
                    "{}: skipped, a self-test attempt without a verdict (nothing measured)",
                    f.display()
                )),
                Ok(bytes) => {
                    return Ok(Input {
                        name: f.display().to_string(),
                        file: Some(f.clone()),
                        bytes,
                        skipped,
                    })
                }
                Err(e) => skipped.push(format!(
                    "{}: skipped, not a stored result: {e}",
                    f.display()
                )),
            }
        }
        // Nothing to return the skipped files with: the one error line names them
        // (the first few; a directory of thousands stays one short line).
        const NAMED: usize = 4;
        let why = if files.is_empty() {
            "directory holds no stored results".to_string()
        } else {
            let mut named: Vec<&str> = skipped.iter().take(NAMED).map(String::as_str).collect();
            let more = skipped.len().saturating_sub(NAMED);
            let more = format!("and {more} more skipped");
            if skipped.len() > NAMED {
                named.push(&more);
            }
            format!(
                "directory holds no readable stored result ({})",
                named.join("; ")
            )
        };
        return Err(Error::usage(&name, "", why));
    }
    let bytes = input::read_bounded(path, max).map_err(unreadable)?;
    Ok(Input {
        name,
        file: Some(path.to_path_buf()),
        bytes,
        skipped: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::exit;

    fn curve(buckets: Vec<(u64, u64)>, overflows: u64) -> Curve {
        Curve {
            thread: 0,
            cpu: Some(0),
            bucket_ns: 1000,
            buckets,
            overflows,
            range_ns: Some(100_000),
            max_ns: 150_000,
            p999_ns: None,
            run: None,
        }
    }

    #[test]
    fn a_directory_read_passes_over_attempts_without_a_verdict() {
        use crate::results::attempt::{Attempt, AttemptState};
        use crate::results::store::{sample_run, Store};
        let d = crate::config::tempdir::Dir::new("read-attempts");
        let store = Store::new(d.path(), 5);
        let measured = store.save(&sample_run(1)).unwrap();
        let mut stopped = sample_run(2);
        stopped.attempt = Some(Attempt {
            state: AttemptState::Stopped,
            ..Attempt::started(2)
        });
        store.save(&stopped).unwrap();
        let input = read_input(d.path()).unwrap();
        assert_eq!(input.file.as_deref(), Some(measured.as_path()));
        assert_eq!(input.skipped.len(), 1, "{:?}", input.skipped);
        assert!(
            input.skipped[0].contains("without a verdict"),
            "{:?}",
            input.skipped
        );
    }

    #[test]
    fn p999_from_buckets_and_overflows() {
        // 999 samples at 5 µs, 1 at 80 µs: sample 999 of 1000 is at 5 µs.
        let c = curve(vec![(5000, 999), (80_000, 1)], 0);
        assert_eq!(c.p999(), Percentile::At(5000));
        // 998 + 2: rank 999 falls in the 80 µs bucket.
        let c = curve(vec![(5000, 998), (80_000, 2)], 0);
        assert_eq!(c.p999(), Percentile::At(80_000));
        // Rank 999 of 1000 among the overflows.
        let c = curve(vec![(5000, 990)], 10);
        assert_eq!(c.p999(), Percentile::Beyond(100_000));
    }

    #[test]
    fn a_directory_of_unreadable_runs_names_the_first_it_skipped_in_one_line() {
        let d = crate::config::tempdir::Dir::new("read-skipped");
        for i in 1..=6 {
            let p = d.path().join(format!("run-{i:06}-20260101T000000Z.json"));
            nix::unistd::mkfifo(&p, nix::sys::stat::Mode::S_IRWXU).unwrap();
        }
        let e = read_input(d.path()).unwrap_err().to_string();
        assert!(!e.contains('\n'), "{e}");
        assert!(e.contains("no readable stored result"), "{e}");
        // Newest first: 6, 5, 4, 3 named, 2 and 1 counted.
        assert!(
            e.contains("run-000006-") && e.contains("run-000003-"),
            "{e}"
        );
        assert!(!e.contains("run-000002-"), "{e}");
        assert!(
            e.contains("FIFO") && e.contains("and 2 more skipped"),
            "{e}"
        );
    }

    #[test]
    fn neither_format_is_one_line_usage_error() {
        let e = parse("x.txt", b"hello\nworld\n", None).unwrap_err();
        assert_eq!(e.exit_code(), exit::USAGE);
        let s = e.to_string();
        assert!(s.starts_with("x.txt: unknown format; expected"), "{s}");
        assert!(!s.contains('\n'));
        let e = parse("x.bin", &[0xff, 0xfe, 0], None).unwrap_err();
        assert!(e.to_string().contains("not text"), "{e}");
        let e = parse("x.json", b"{\"a\": 1}", None).unwrap_err();
        assert!(e.to_string().starts_with("x.json: "), "{e}");
    }
}
