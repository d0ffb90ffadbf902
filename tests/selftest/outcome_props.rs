//! A property over the real binary: small self-test configurations (loose, tight or
//! no limits; `allow_unjudged`; a Prometheus textfile or not, or one whose path names a
//! directory) × results store states (writable, missing — created by the self-test —,
//! read-only: a file where its parent directory should be) × events (one attempt, a
//! load that exits at once, a good attempt then a failing one, a failing one then a
//! good one). Each case runs `rtbench selftest` (1 s) and `rtbench report` in every
//! format and checks them against an oracle written from the inputs alone: exit 0,
//! JUnit without failures or errors and `rtbench_selftest_pass 1` only when every
//! configured check ran and passed and everything asked was written; every output
//! says the same exit code (src/results/outcome.rs).
//!
//! 24 cases by default (about 30 s); `RTBENCH_OUTCOME_CASES=N` for a long run,
//! `RTBENCH_PROPTEST_SEED=N` for another seed.

use crate::common::*;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::path::Path;

const SUMMARY: &str = "7b1dd0eea94d4cc4bd8f9e6c91b6465d";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Limits {
    Loose,
    Tight,
    None,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StoreState {
    Writable,
    Missing,
    ReadOnly,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Prom {
    None,
    File,
    Directory,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Event {
    Once,
    LoadFails,
    GoodThenLoadFails,
    LoadFailsThenGood,
}

#[derive(Debug, Clone, Copy)]
struct Case {
    limits: Limits,
    allow_unjudged: bool,
    store: StoreState,
    prom: Prom,
    event: Event,
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop_oneof![Just(Limits::Loose), Just(Limits::Tight), Just(Limits::None)],
        any::<bool>(),
        prop_oneof![
            Just(StoreState::Writable),
            Just(StoreState::Missing),
            Just(StoreState::ReadOnly)
        ],
        prop_oneof![Just(Prom::None), Just(Prom::File), Just(Prom::Directory)],
        prop_oneof![
            Just(Event::Once),
            Just(Event::LoadFails),
            Just(Event::GoodThenLoadFails),
            Just(Event::LoadFailsThenGood)
        ],
    )
        .prop_map(|(limits, allow_unjudged, store, prom, event)| Case {
            limits,
            allow_unjudged,
            store,
            prom,
            event,
        })
}

/// What the oracle expects of the last attempt: its exit code, and whether it is a
/// pass of the limits (for `rtbench_selftest_pass`).
fn oracle(c: &Case) -> (i32, bool) {
    if matches!(c.event, Event::LoadFails | Event::GoodThenLoadFails) {
        return (3, false);
    }
    let written = c.store != StoreState::ReadOnly && c.prom != Prom::Directory;
    let exit = match c.limits {
        Limits::Loose if written => 0,
        Limits::None if written && c.allow_unjudged => 0,
        _ => 1,
    };
    (exit, exit == 0 && c.limits == Limits::Loose)
}

/// The configuration of `c` in `dir`, with a load that exits at once when `failing`.
fn config(dir: &Path, c: &Case, failing: bool) -> std::path::PathBuf {
    let results = match c.store {
        StoreState::Writable => dir.join("results"),
        StoreState::Missing => dir.join("absent/results"),
        StoreState::ReadOnly => dir.join("afile/results"),
    };
    let mut text = format!(
        "[selftest]\nmode = \"off\"\nduration = \"1s\"\nallow_unjudged = {}\n",
        c.allow_unjudged
    );
    if failing {
        text.push_str("[load]\ncmd = \"false\"\n");
    }
    match c.limits {
        Limits::Loose => text.push_str("[limits]\nmax_us = 10000000\n"),
        Limits::Tight => text.push_str("[limits]\nmax_us = 1\n"),
        Limits::None => {}
    }
    text.push_str(&format!(
        "[output]\nresults_dir = \"{}\"\nfallback_dir = \"{}\"\n",
        results.display(),
        dir.join("run").display()
    ));
    match c.prom {
        Prom::None => {}
        Prom::File => text.push_str(&format!(
            "prometheus = \"{}\"\n",
            dir.join("rtbench.prom").display()
        )),
        Prom::Directory => text.push_str(&format!(
            "prometheus = \"{}\"\n",
            dir.join("promdir").display()
        )),
    }
    let p = dir.join(if failing { "failing.toml" } else { "good.toml" });
    std::fs::write(&p, on_any_kernel(&text)).unwrap();
    p
}

fn gauge(text: &str, name: &str) -> Option<i64> {
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{name} ")))
        .and_then(|v| v.trim().parse().ok())
}

fn check_case(c: Case) -> Result<(), TestCaseError> {
    let dir = TempDir::new("st-outcome-prop");
    std::fs::write(dir.join("afile"), "").unwrap();
    std::fs::create_dir(dir.join("promdir")).unwrap();
    let attempts: &[bool] = match c.event {
        Event::Once => &[false],
        Event::LoadFails => &[true],
        Event::GoodThenLoadFails => &[false, true],
        Event::LoadFailsThenGood => &[true, false],
    };
    let mut last = None;
    let mut cfg = dir.join("good.toml");
    for &failing in attempts {
        cfg = config(&dir, &c, failing);
        last = Some(selftest_logfmt(&cfg));
    }
    let o = last.unwrap();
    let (want, pass) = oracle(&c);
    let code = o.status.code().unwrap_or(-1);
    prop_assert_eq!(code, want, "{:?}: {}", c, stderr(&o));
    // The journal summary (a verdict was reached) says the same code.
    if let Some(s) = with_id(&entries(&o), SUMMARY).first() {
        prop_assert_eq!(&s["RTBENCH_EXIT_STATUS"], &code.to_string(), "{:?}", c);
    }
    // `rtbench report`, every format: 0 only for the oracle's exit 0.
    let report_want = if want == 0 { 0 } else { 1 };
    for format in ["table", "json", "junit"] {
        let r = rtbench()
            .args(["report", "--format", format, "--config"])
            .arg(&cfg)
            .output()
            .unwrap();
        prop_assert_eq!(
            r.status.code(),
            Some(report_want),
            "{:?} {}: {}",
            c,
            format,
            stderr(&r)
        );
        if format == "json" {
            let v: serde_json::Value = serde_json::from_str(&stdout(&r)).unwrap();
            prop_assert_eq!(v["exit_code"].as_i64(), Some(i64::from(want)), "{:?}", c);
        }
        if format == "junit" {
            let xml = stdout(&r);
            let doc = roxmltree::Document::parse(&xml).unwrap();
            let bad = doc
                .descendants()
                .filter(|n| n.has_tag_name("failure") || n.has_tag_name("error"))
                .count();
            prop_assert_eq!(bad == 0, want == 0, "{:?}: {}", c, xml);
        }
    }
    if c.prom == Prom::File {
        let text = std::fs::read_to_string(dir.join("rtbench.prom")).unwrap_or_default();
        prop_assert_eq!(
            gauge(&text, "rtbench_selftest_exit_code"),
            Some(i64::from(want)),
            "{:?}: {}",
            c,
            text
        );
        prop_assert_eq!(
            gauge(&text, "rtbench_selftest_pass"),
            Some(i64::from(pass)),
            "{:?}: {}",
            c,
            text
        );
    }
    Ok(())
}

#[test]
fn every_output_agrees_with_the_oracle_on_one_exit_code() {
    let cases = std::env::var("RTBENCH_OUTCOME_CASES")
        .ok()
        .and_then(|c| c.trim().parse().ok())
        .unwrap_or(24);
    let mut seed = *b"rtbench: one outcome, every out.";
    if let Some(n) = std::env::var("RTBENCH_PROPTEST_SEED")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
    {
        seed[..8].copy_from_slice(&n.to_le_bytes());
    }
    let config = Config {
        cases,
        failure_persistence: None,
        // Each case runs the binary for seconds: no shrinking, the case is printed.
        max_shrink_iters: 0,
        ..Config::default()
    };
    let mut runner =
        TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &seed));
    if let Err(e) = runner.run(&case(), check_case) {
        panic!("{e}");
    }
}
