//! A self-test of three `[[condition]]`s on this machine — idle, the built-in load, the
//! last CPU measured alone while the load runs beside it — judged per condition: every
//! output names the condition (results file, journal entries, the summary, the
//! Prometheus labels, `rtbench report`'s vendors' table, `rtbench plot --test
//! CONDITION/TEST`), and each condition is judged against its own limits.

use crate::common::*;
use std::path::Path;

const RESULT: &str = "b338a16c561342608e6e5ef41b0a0813";
const SUMMARY: &str = "7b1dd0eea94d4cc4bd8f9e6c91b6465d";

/// Three conditions: `idle` and `isolated` under the generous top-level limit,
/// `stress` under a 1-µs maximum of its own.
fn three_conditions(dir: &Path) -> std::path::PathBuf {
    let last = online_cpus() - 1;
    let text = format!(
        "[selftest]\nmode = \"off\"\nduration = \"1s\"\n[limits]\nmax_us = 10000000\n\
         [output]\nresults_dir = \"{results}\"\nfallback_dir = \"{run}\"\nprometheus = \"{prom}\"\n\
         [[condition]]\nname = \"idle\"\n\
         [[condition]]\nname = \"stress\"\n[condition.load]\nspec = \"cpu:1\"\n\
         [condition.limits]\nmax_us = 1\n\
         [[condition]]\nname = \"isolated\"\ntests = [\"cyclic\"]\n\
         [condition.cyclic]\ncpus = \"{last}\"\n[condition.load]\nspec = \"cpu:1\"\n",
        results = dir.join("results").display(),
        run = dir.join("run").display(),
        prom = dir.join("rtbench.prom").display(),
    );
    let p = dir.join("rtbench.toml");
    std::fs::write(&p, on_any_kernel(&text)).unwrap();
    p
}

#[test]
fn three_conditions_are_measured_and_judged_each_against_its_own_limits() {
    let dir = TempDir::new("st-conditions");
    let cfg = three_conditions(&dir);
    let check = rtbench()
        .args(["config", "check"])
        .arg(&cfg)
        .output()
        .unwrap();
    assert!(
        stdout(&check).contains("ok (3 conditions: idle, stress, isolated)"),
        "{}",
        stderr(&check)
    );
    let o = selftest_logfmt(&cfg);
    let stored = stored_results(&dir);
    assert_eq!(stored.len(), 1, "{}", stderr(&o));
    let run = &stored[0];
    // The results file: each test with its condition, each condition with its load.
    let conditions: Vec<(&str, &str)> = run["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["name"].as_str().unwrap(), c["load"].as_str().unwrap()))
        .collect();
    assert_eq!(
        conditions,
        [("idle", ""), ("stress", "cpu:1"), ("isolated", "cpu:1")]
    );
    let tests = run["tests"].as_array().unwrap();
    let of: Vec<&str> = tests
        .iter()
        .map(|t| t["condition"].as_str().unwrap())
        .collect();
    assert_eq!(of, ["idle", "stress", "isolated"]);
    let last = (online_cpus() - 1) as u64;
    assert_eq!(tests[2]["threads"].as_array().unwrap().len(), 1);
    assert_eq!(tests[2]["threads"][0]["cpu"], last);
    // Judged per condition: idle and isolated against 10 s, stress against 1 µs.
    let checks = run["verdict"]["checks"].as_array().unwrap();
    for c in checks {
        let limit = if c["condition"] == "stress" {
            1_000
        } else {
            10_000_000_000u64
        };
        assert_eq!(c["limit"], limit, "{c}");
    }
    // Every failure names its condition, the test, the CPU and the limit.
    let failures: Vec<&str> = checks
        .iter()
        .filter(|c| c["pass"] == false)
        .map(|c| c["condition"].as_str().unwrap())
        .collect();
    assert!(failures.iter().all(|c| *c == "stress"), "{failures:?}");
    let e = entries(&o);
    let summary = with_id(&e, SUMMARY)[0];
    assert_eq!(
        summary["RTBENCH_TESTS"],
        "idle/cyclic,stress/cyclic,isolated/cyclic"
    );
    for th in tests[1]["threads"].as_array().unwrap() {
        if th["max_ns"].as_u64().unwrap() > 1_000 {
            let line = format!("stress: cyclic CPU {} max ", th["cpu"]);
            assert!(summary["MESSAGE"].contains(&line), "{}", summary["MESSAGE"]);
            assert_eq!(o.status.code(), Some(1));
            assert_eq!(summary["RTBENCH_VERDICT"], "fail");
        }
    }
    // One journal entry per thread per condition, each with its condition.
    let results = with_id(&e, RESULT);
    assert_eq!(results.len(), 2 * online_cpus() + 1);
    for (m, cond) in results.iter().zip(
        std::iter::repeat("idle")
            .take(online_cpus())
            .chain(std::iter::repeat("stress").take(online_cpus()))
            .chain(["isolated"]),
    ) {
        assert_eq!(m["RTBENCH_CONDITION"], cond, "{m:?}");
        assert!(
            m["MESSAGE"].starts_with(&format!("{cond}: cyclic CPU")),
            "{m:?}"
        );
    }
    // Prometheus: a condition label on every thread's series.
    let prom = std::fs::read_to_string(dir.join("rtbench.prom")).unwrap();
    for cond in ["idle", "stress", "isolated"] {
        assert!(
            prom.contains(&format!(
                "rtbench_latency_max_seconds{{condition=\"{cond}\",test=\"cyclic\""
            )),
            "{prom}"
        );
    }
    // The report: each condition's rows, then the vendors' table.
    let r = rtbench()
        .args(["report", "--dir"])
        .arg(dir.join("results"))
        .output()
        .unwrap();
    let table = stdout(&r);
    assert!(table.contains("condition stress, load: cpu:1"), "{table}");
    assert!(table.contains("cyclic (µs)"), "{table}");
    let header = table
        .lines()
        .find(|l| l.trim_start().starts_with("idle"))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(header.contains("stress"), "{table}");
    assert!(
        table
            .lines()
            .any(|l| l.trim_start().starts_with("isolated")),
        "{table}"
    );
    // The table fits a serial console (the heading names the file: not counted).
    for l in table.lines().filter(|l| !l.starts_with('#')) {
        assert!(l.chars().count() <= 80, "{l:?}");
    }
    println!("{table}");
    // One plot per condition and test.
    for sel in ["idle/cyclic", "stress/cyclic", "isolated/cyclic"] {
        let svg = dir.join(format!("{}.svg", sel.replace('/', "-")));
        let p = rtbench()
            .args(["plot", "--test", sel, "-o"])
            .arg(&svg)
            .arg(dir.join("results"))
            .output()
            .unwrap();
        assert!(p.status.success(), "{sel}: {}", stderr(&p));
        let text = std::fs::read_to_string(&svg).unwrap();
        let cond = sel.split('/').next().unwrap();
        assert!(text.contains(&format!("{cond}: cyclic")), "{sel}");
    }
}
