//! A whole result read once, as `rtbench compare` sees it: every test it holds (with
//! `[[condition]]`s, `CONDITION/TEST`) with its histograms, and what the file records
//! about the system and the run ([`Run::facts`]: kernel release, preemption model,
//! kernel configuration, command line, tuning, CPU model, rtbench version, load).

use super::{check, read_input, Histograms, Input, EXPECTED};
use crate::error::{Error, Result};
use crate::results::store::StoredRun;
use crate::sys::info::SysInfo;
use serde_json::Value;
use std::path::Path;

/// One test of a run (`cyclic`; with conditions `stress/cyclic`): its histograms.
#[derive(Debug, Clone)]
pub struct Series {
    /// How the series is matched between runs: the test, or `CONDITION/TEST`.
    pub key: String,
    /// Pair tests (pmq, pipe): the curves are pairs.
    pub pairs: bool,
    /// The parsed histograms, one curve per thread or pair, with the input's metadata.
    pub histograms: Histograms,
}

/// One RUN as read.
#[derive(Debug, Clone)]
pub struct Run {
    /// The path as given.
    pub name: String,
    /// What kind of input it is (`stored self-test result`, `rtbench cyclic --json`, …).
    pub format: String,
    /// Its tests.
    pub series: Vec<Series>,
    /// What the file records about the system and the run, as `(what, value)` in a
    /// fixed order; a fact the file does not record is absent.
    pub facts: Vec<(&'static str, String)>,
}

impl Run {
    /// The series matched by `key`.
    pub fn series(&self, key: &str) -> Option<&Series> {
        self.series.iter().find(|s| s.key == key)
    }

    /// The value of fact `what`, if recorded.
    pub fn fact(&self, what: &str) -> Option<&str> {
        self.facts
            .iter()
            .find(|(k, _)| *k == what)
            .map(|(_, v)| v.as_str())
    }
}

/// The facts compared between runs, in this order.
pub const FACTS: [&str; 9] = [
    "kernel release",
    "preemption model",
    "kernel config",
    "kernel command line",
    "tuning",
    "CPU model",
    "CPUs online",
    "rtbench version",
    "load",
];

/// Reads `path` once ([`read_input`]: `-`, a file, or a results directory's newest
/// run) into every test it holds: a stored self-test result's tests each with its own
/// histograms, any other input's one test. Returns the run and the input as read (for
/// [`Input::skipped`] and [`Input::file`]; its bytes are dropped). Errors
/// ([`Error::Usage`], exit 2): unreadable, an unknown format, a result without
/// histograms (run with `-h`), an empty histogram.
pub fn load(path: &Path) -> Result<(Run, Input)> {
    let mut input = read_input(path)?;
    let bytes = std::mem::take(&mut input.bytes);
    let name = input.name.clone();
    let bad = |m: String| Error::usage(&name, "", m);
    let text = std::str::from_utf8(&bytes).map_err(|_| bad(format!("not text; {EXPECTED}")))?;
    let value: Option<Value> = if text.trim_start().starts_with('{') {
        Some(serde_json::from_str(text).map_err(|e| bad(format!("invalid JSON ({e})")))?)
    } else {
        None
    };
    let run = match value {
        Some(v) if v.get("rtbench_version").is_some() && v.get("tests").is_some() => {
            drop(v);
            let run: StoredRun = serde_json::from_str(text)
                .map_err(|e| bad(format!("not a stored self-test result: {e}")))?;
            stored_run(&name, &run)?
        }
        Some(v) if v.get("file_version").is_some() && v.get("thread").is_some() => {
            let plot = check(&name, super::json::rt_tests(&v).map_err(bad)?)?;
            let (format, facts) = if v.get("rtbench").is_some_and(Value::is_object) {
                ("rtbench --json", rtbench_facts(&v))
            } else {
                ("cyclictest --json", rt_tests_facts(&v))
            };
            one(&name, format.to_string(), plot, facts)
        }
        Some(_) => {
            return Err(bad(format!(
            "JSON without \"file_version\"/\"thread\" or \"rtbench_version\"/\"tests\"; {EXPECTED}"
        )))
        }
        None if super::dump::is_dump(text) => {
            let plot = check(&name, super::dump::parse(text).map_err(bad)?)?;
            one(&name, plot.meta.format.clone(), plot, Vec::new())
        }
        None => return Err(bad(format!("unknown format; {EXPECTED}"))),
    };
    Ok((run, input))
}

/// A stored self-test result's tests, each converted once.
fn stored_run(name: &str, run: &StoredRun) -> Result<Run> {
    let mut series = Vec::with_capacity(run.tests.len());
    for t in &run.tests {
        let plot = super::stored::histograms(run, t).map_err(|m| Error::usage(name, "", m))?;
        series.push(Series {
            key: super::stored::selector(t),
            pairs: crate::results::summary::is_pair_test(&t.test),
            histograms: check(name, plot)?,
        });
    }
    Ok(Run {
        name: name.to_string(),
        format: "stored self-test result".into(),
        series,
        facts: stored_facts(run),
    })
}

/// A run of one test (rt-tests JSON, a dump).
fn one(name: &str, format: String, plot: Histograms, facts: Vec<(&'static str, String)>) -> Run {
    // cyclictest's and pmqtest's own files name the tool: the test is rtbench's name.
    let key = match plot.meta.test.as_deref() {
        None | Some("cyclictest") => "cyclic".to_string(),
        Some("pmqtest") => "pmq".to_string(),
        Some(t) => t.to_string(),
    };
    Run {
        name: name.to_string(),
        format,
        series: vec![Series {
            pairs: plot.meta.pairs,
            key,
            histograms: plot,
        }],
        facts,
    }
}

/// The facts of a system snapshot.
fn sysinfo_facts(si: &SysInfo) -> Vec<(&'static str, String)> {
    let mut f = vec![
        ("kernel release", si.release.clone()),
        ("preemption model", si.preempt_model.clone()),
    ];
    if let Some(h) = &si.kernel_config_hash {
        f.push(("kernel config", h.clone()));
    }
    f.push(("kernel command line", si.cmdline.clone()));
    if let Some(m) = &si.cpu_model {
        f.push(("CPU model", m.clone()));
    }
    f.push(("CPUs online", si.cpus_online.clone()));
    f
}

/// A stored self-test result's facts; its tuning as the report names it, with each
/// item's status (`tuning checked: 2 ok, 1 deviation (sysctl.kernel.printk)`).
fn stored_facts(run: &StoredRun) -> Vec<(&'static str, String)> {
    let mut f = sysinfo_facts(&run.sysinfo);
    let items: Vec<String> = run
        .tuning
        .get("items")
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .map(|i| {
                    let s = |k: &str| i.get(k).and_then(Value::as_str).unwrap_or_default();
                    format!("{}={}", s("item"), s("status"))
                })
                .collect()
        })
        .unwrap_or_default();
    let tuning = if items.is_empty() {
        run.tuning_state()
    } else {
        format!("{} [{}]", run.tuning_state(), items.join(", "))
    };
    f.push(("tuning", tuning));
    f.push(("rtbench version", run.rtbench_version.clone()));
    f.push((
        "load",
        if run.load.is_empty() {
            "none".into()
        } else {
            run.load.clone()
        },
    ));
    order(f)
}

/// `rtbench cyclic --json` (and pmq, pipe): its `"rtbench"` object's snapshot, version
/// and load.
fn rtbench_facts(v: &Value) -> Vec<(&'static str, String)> {
    let ext = &v["rtbench"];
    let mut f = serde_json::from_value::<SysInfo>(ext["sysinfo"].clone())
        .map(|si| sysinfo_facts(&si))
        .unwrap_or_default();
    if let Some(version) = ext["version"].as_str() {
        f.push(("rtbench version", version.to_string()));
    }
    let load = &ext["load"];
    let text = |k: &str| load[k].as_str().filter(|s| !s.is_empty());
    let load = match (text("spec"), text("cmd")) {
        (None, None) => "none".to_string(),
        (Some(s), None) => s.to_string(),
        (None, Some(c)) => format!("cmd: {c}"),
        (Some(s), Some(c)) => format!("{s}; cmd: {c}"),
    };
    f.push(("load", load));
    order(f)
}

/// cyclictest's own `--json` (rt-tests `rt_write_json()`): uname fields only; the
/// preemption model from `uname -v` as `crate::sys::info` reads it.
fn rt_tests_facts(v: &Value) -> Vec<(&'static str, String)> {
    let si = &v["sysinfo"];
    let mut f = Vec::new();
    if let Some(r) = si["release"].as_str() {
        f.push(("kernel release", r.to_string()));
    }
    if let Some(version) = si["version"].as_str() {
        let tokens: Vec<&str> = version.split_whitespace().collect();
        let model = ["PREEMPT_RT", "PREEMPT_DYNAMIC", "PREEMPT"]
            .into_iter()
            .find(|m| tokens.contains(m))
            .unwrap_or("unknown");
        f.push(("preemption model", model.to_string()));
    }
    order(f)
}

/// `f` in the order of [`FACTS`].
fn order(mut f: Vec<(&'static str, String)>) -> Vec<(&'static str, String)> {
    f.sort_by_key(|(k, _)| FACTS.iter().position(|x| x == k));
    f
}
