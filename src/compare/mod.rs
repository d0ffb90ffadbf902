//! `rtbench compare RUN RUN…`: runs side by side — this kernel against the last, this
//! board against the golden unit, before and after `tune apply`. Each RUN is a stored
//! self-test result (or a results directory: its newest run), `rtbench cyclic --json`
//! or cyclictest `--json` output (with `-h`: the histogram is what is compared), or a
//! cyclictest `-h` dump; they are read by `crate::plot`'s parsers, so every input
//! `rtbench plot` draws can be compared.
//!
//! The first RUN is the baseline; every other one is compared with it, per test (with
//! `[[condition]]`s, per condition and test) and CPU or pair, statistic by statistic
//! ([`judge`]: equivalent, regression, improvement, or inconclusive when the samples
//! cannot support the claim), beside what differs between the systems (kernel release,
//! preemption model, kernel configuration, command line, tuning, CPU model, rtbench
//! version, load: [`Run::facts`]). [`text`] renders it; `--plot` overlays the
//! histograms with `crate::plot::svg`.

pub mod judge;
pub mod text;

use crate::error::{Error, Result};
use crate::plot::{Curve, LatencyPlot};
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
    pub plot: LatencyPlot,
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

/// Reads `path` (`crate::plot::read_input`: `-`, a file, or a results directory's
/// newest run). Errors ([`Error::Usage`], exit 2): unreadable, an unknown format, a
/// result without histograms (run with `-h`), an empty histogram.
pub fn load(path: &Path) -> Result<Run> {
    let (name, bytes) = crate::plot::read_input(path)?;
    let text = std::str::from_utf8(&bytes)
        .map_err(|_| Error::usage(&name, "", format!("not text; {}", crate::plot::EXPECTED)))?;
    let value: Option<Value> = text
        .trim_start()
        .starts_with('{')
        .then(|| serde_json::from_str(text).ok())
        .flatten();
    let stored = value
        .as_ref()
        .filter(|v| v.get("rtbench_version").is_some() && v.get("tests").is_some());
    if stored.is_some() {
        let run: StoredRun = serde_json::from_str(text)
            .map_err(|e| Error::usage(&name, "", format!("not a stored self-test result: {e}")))?;
        let mut series = Vec::new();
        for t in &run.tests {
            let key = match &t.condition {
                Some(c) => format!("{c}/{}", t.test),
                None => t.test.clone(),
            };
            let plot = crate::plot::parse(&name, &bytes, Some(&key))?;
            series.push(Series {
                pairs: crate::results::summary::is_pair_test(&t.test),
                key,
                plot,
            });
        }
        return Ok(Run {
            name,
            format: "stored self-test result".into(),
            series,
            facts: stored_facts(&run),
        });
    }
    let plot = crate::plot::parse(&name, &bytes, None)?;
    // cyclictest's and pmqtest's own files name the tool: the test is rtbench's name.
    let key = match plot.meta.test.as_deref() {
        None | Some("cyclictest") => "cyclic".to_string(),
        Some("pmqtest") => "pmq".to_string(),
        Some(t) => t.to_string(),
    };
    let (format, facts) = match &value {
        Some(v) if v.get("rtbench").is_some_and(Value::is_object) => {
            ("rtbench --json".to_string(), rtbench_facts(v))
        }
        Some(v) => ("cyclictest --json".to_string(), rt_tests_facts(v)),
        None => (plot.meta.format.clone(), Vec::new()),
    };
    Ok(Run {
        name,
        format,
        series: vec![Series {
            pairs: plot.meta.pairs,
            key,
            plot,
        }],
        facts,
    })
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

/// The overlay of `key`'s histograms of every run that has it, each curve named by its
/// run's letter (`A CPU 0`, `B CPU 0`); `None` when no run has it.
pub fn overlay(runs: &[Run], key: &str) -> Option<LatencyPlot> {
    let mut plot: Option<LatencyPlot> = None;
    for (i, r) in runs.iter().enumerate() {
        let Some(s) = r.series(key) else { continue };
        let curves: Vec<Curve> = s
            .plot
            .curves
            .iter()
            .cloned()
            .map(|mut c| {
                c.run = Some(letter(i));
                c
            })
            .collect();
        match plot.as_mut() {
            Some(p) => p.curves.extend(curves),
            None => {
                let mut p = s.plot.clone();
                p.curves = curves;
                p.meta.format = format!("rtbench compare ({} runs)", runs.len());
                p.meta.verdict = None;
                p.meta.run_verdict = None;
                p.meta.limits.clear();
                plot = Some(p);
            }
        }
    }
    plot
}

/// The letter of run `i`: `A` (the baseline), `B`, … `Z`, then `R27`, `R28`, ….
pub fn letter(i: usize) -> String {
    match u8::try_from(i).ok().filter(|i| *i < 26) {
        Some(i) => char::from(b'A' + i).to_string(),
        None => format!("R{}", i + 1),
    }
}
