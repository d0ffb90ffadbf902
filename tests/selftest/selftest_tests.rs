//! The self-test runs every test of the procedure: `[cyclic]`,
//! `[pmq]` and `[pipe]` one after the other under the same load, real SCHED_FIFO
//! threads and real message queues and pipes on this machine, judged per test, pair
//! and CPU set; journal entries (logfmt on standard error, the init-script path), the
//! results store, `rtbench report`, the Prometheus textfile and `rtbench plot` cover
//! every test. Limits are 10 s (pass) or 0 µs (fail): no timing threshold.

use crate::common::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Output;

const SUMMARY: &str = "7b1dd0eea94d4cc4bd8f9e6c91b6465d";
const RESULT: &str = "b338a16c561342608e6e5ef41b0a0813";
const READY: &str = "6a9954f26ad8443b8423171c8abd3682";
const CONFIG: &str = "007f10bc07da46b6b3fc256220fca838";
const ABORTED: &str = "11388322edd8448fb26766740685d2fb";

/// A pass for anything this VM measures: 10 s.
const LOOSE: &str = "max_us = 10000000";

fn config(dir: &Path, body: &str) -> PathBuf {
    let p = dir.join("rtbench.toml");
    let text = format!(
        "[selftest]\nmode = \"off\"\nduration = \"1s\"\n{body}\n[output]\nresults_dir = \"{}\"\nfallback_dir = \"{}\"\nprometheus = \"{}\"\n",
        dir.join("results").display(),
        dir.join("run").display(),
        dir.join("rtbench.prom").display()
    );
    std::fs::write(&p, crate::common::on_any_kernel(&text)).unwrap();
    p
}

fn summary(o: &Output) -> HashMap<String, String> {
    let e = entries(o);
    let s = with_id(&e, SUMMARY);
    assert_eq!(s.len(), 1, "one summary: {}", stderr(o));
    s[0].clone()
}

/// The per-thread/pair entries of `test`.
fn results_of(o: &Output, test: &str) -> Vec<HashMap<String, String>> {
    entries(o)
        .into_iter()
        .filter(|m| m["MESSAGE_ID"] == RESULT && m["RTBENCH_TEST"] == test)
        .collect()
}

fn test_names(run: &serde_json::Value) -> Vec<String> {
    run["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["test"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn all_three_tests_pass_under_one_load_and_every_output_shows_them() {
    let dir = TempDir::new("st3-pass");
    let cfg = config(
        &dir,
        &format!(
            "[load]\nspec = \"cpu:1\"\n[pmq]\ninterval_us = 1000\n[pipe]\ninterval_us = 500\npriority = 90\n[limits]\n{LOOSE}\np999_us = 10000000\n"
        ),
    );
    let o = selftest_logfmt(&cfg);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let e = entries(&o);
    let ready = with_id(&e, READY);
    let status = &ready[0]["MESSAGE"];
    for t in ["cyclic on CPUs", "then pmq on CPUs", "then pipe on CPUs"] {
        assert!(status.contains(t), "{status}");
    }
    let s = summary(&o);
    assert_eq!(s["RTBENCH_VERDICT"], "pass");
    assert_eq!(s["RTBENCH_TESTS"], "cyclic,pmq,pipe");
    assert_eq!(s["RTBENCH_LOAD"], "cpu:1");
    assert_eq!(s["RTBENCH_THREADS"], (3 * online_cpus()).to_string());
    for test in ["cyclic", "pmq", "pipe"] {
        let r = results_of(&o, test);
        assert_eq!(r.len(), online_cpus(), "{test}: one entry per CPU or pair");
        for (i, m) in r.iter().enumerate() {
            assert_eq!(m["RTBENCH_THREAD"], i.to_string(), "{m:?}");
            assert_eq!(m["RTBENCH_CPU"], i.to_string(), "{m:?}");
            assert_eq!(m["RTBENCH_VERDICT"], "pass", "{m:?}");
            assert_eq!(m["RTBENCH_LIMIT_MAX_NS"], "10000000000", "{m:?}");
            let n: u64 = m["RTBENCH_SAMPLES"].parse().unwrap();
            assert!(n > 0, "{m:?}");
            if test != "cyclic" {
                let want = format!("{test} pair {i} CPU {i}: ");
                assert!(m["MESSAGE"].starts_with(&want), "{m:?}");
            }
        }
    }
    // Stored: every test, in the order they ran, one after the other (each measured
    // its whole second: together at least three).
    let runs = stored_results(&dir);
    assert_eq!(runs.len(), 1);
    assert_eq!(test_names(&runs[0]), ["cyclic", "pmq", "pipe"]);
    assert!(
        runs[0]["duration_s"].as_f64().unwrap() >= 3.0,
        "{}",
        runs[0]
    );
    let pipe = &runs[0]["tests"][2]["threads"][0];
    assert_eq!(pipe["priority"], 90);
    assert_eq!(pipe["interval_us"], 500);
    assert!(!pipe["histogram"].as_array().unwrap().is_empty());
    // rtbench report: one row per test and CPU.
    let r = rtbench()
        .args(["report", "--config"])
        .arg(&cfg)
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(0), "{}", stderr(&r));
    let table = stdout(&r);
    for test in ["cyclic", "pmq", "pipe"] {
        let rows = table.lines().filter(|l| l.starts_with(test)).count();
        assert_eq!(rows, online_cpus(), "{test}: {table}");
    }
    assert!(table.contains("\nrtbench self-test PASS"), "{table}");
    // Prometheus: every test's series, a pair labelled as one.
    let prom = std::fs::read_to_string(dir.join("rtbench.prom")).unwrap();
    for (test, who) in [("cyclic", "thread"), ("pmq", "pair"), ("pipe", "pair")] {
        let max = format!("rtbench_latency_max_seconds{{test=\"{test}\",{who}=\"0\",cpu=\"0\"}}");
        assert!(prom.contains(&max), "{test}: {prom}");
    }
    assert!(prom.contains("rtbench_selftest_verdict{verdict=\"pass\"} 1"));
    // rtbench plot draws each test of the stored result.
    for test in ["pmq", "pipe"] {
        let svg = dir.join(format!("{test}.svg"));
        let p = rtbench()
            .args(["plot", "--test", test, "-o"])
            .arg(&svg)
            .arg(dir.join("results"))
            .output()
            .unwrap();
        assert_eq!(p.status.code(), Some(0), "{}", stderr(&p));
        let text = std::fs::read_to_string(&svg).unwrap();
        assert!(text.contains(&format!("test: {test}")), "{test}");
    }
}

#[test]
fn a_pmq_limit_exceeded_fails_naming_test_pair_statistic_value_and_limit() {
    let dir = TempDir::new("st3-fail");
    // pmq over [limits.pmq]; pipe over a CPU-set rule for pipe only; cyclic passes.
    let cfg = config(
        &dir,
        &format!(
            "[cyclic]\ncpus = \"0\"\n[pmq]\ncpus = \"0\"\n[pipe]\ncpus = \"0\"\ninterval_us = 500\n\
             [limits]\n{LOOSE}\n[limits.pmq]\nmax_us = 0\n\
             [[limits.cpus]]\ncpus = \"0\"\ntest = \"pipe\"\np99_us = 0\n"
        ),
    );
    let o = selftest_logfmt(&cfg);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let s = summary(&o);
    assert_eq!(s["RTBENCH_VERDICT"], "fail");
    assert_eq!(s["RTBENCH_FAILED_CHECKS"], "2", "{s:?}");
    let failed: Vec<&str> = s["RTBENCH_FAILED"].split("; ").collect();
    assert!(
        // The maximum may carry its explained cause after the limit.
        failed[0].starts_with("pmq pair 0 CPU 0 max ") && failed[0].contains(" µs > limit 0 µs"),
        "{failed:?}"
    );
    assert!(
        failed[1].starts_with("pipe pair 0 CPU 0 p99 ") && failed[1].ends_with(" µs > limit 0 µs"),
        "{failed:?}"
    );
    let pmq = results_of(&o, "pmq");
    assert_eq!(pmq.len(), 1);
    assert_eq!(pmq[0]["RTBENCH_VERDICT"], "fail");
    assert_eq!(pmq[0]["RTBENCH_LIMIT_MAX_NS"], "0");
    assert!(pmq[0]["RTBENCH_FAILED"].starts_with("max "), "{:?}", pmq[0]);
    assert_eq!(results_of(&o, "cyclic")[0]["RTBENCH_VERDICT"], "pass");
    let pipe = results_of(&o, "pipe");
    assert_eq!(pipe[0]["RTBENCH_LIMIT_P99_NS"], "0");
    assert_eq!(pipe[0]["RTBENCH_LIMIT_MAX_NS"], "10000000000");
    // The report names the same failures; the stored verdict has the checks.
    let r = rtbench()
        .args(["report", "--config"])
        .arg(&cfg)
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(1));
    let table = stdout(&r);
    assert!(table.contains("\nFAIL pmq pair 0 CPU 0 max "), "{table}");
    assert!(table.contains("\nFAIL pipe pair 0 CPU 0 p99 "), "{table}");
    let runs = stored_results(&dir);
    let checks = runs[0]["verdict"]["checks"].as_array().unwrap();
    let pmq_check = checks
        .iter()
        .find(|c| c["test"] == "pmq" && c["what"] == "max")
        .unwrap();
    assert_eq!(pmq_check["limit"], 0);
    assert_eq!(pmq_check["pass"], false);
}

#[test]
fn a_disabled_test_is_absent_and_a_test_without_limits_is_unjudged() {
    let dir = TempDir::new("st3-off");
    // [pmq] enabled = false; [cyclic] enabled = false; only pipe runs, with limits for
    // cyclic alone: measured, not judged.
    let cfg = config(
        &dir,
        "[cyclic]\nenabled = false\n[pmq]\nenabled = false\n[pipe]\ncpus = \"0\"\ninterval_us = 500\n\
         [limits.cyclic]\nmax_us = 10000000\n[limits.pmq]\nmax_us = 10000000\n",
    );
    let o = selftest_logfmt(&cfg);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let s = summary(&o);
    assert_eq!(s["RTBENCH_TESTS"], "pipe");
    assert_eq!(s["RTBENCH_VERDICT"], "unjudged");
    assert_eq!(s["RTBENCH_UNJUDGED"], "pipe pair 0 CPU 0: no limit applies");
    assert!(results_of(&o, "pmq").is_empty() && results_of(&o, "cyclic").is_empty());
    assert_eq!(results_of(&o, "pipe")[0]["RTBENCH_VERDICT"], "unjudged");
    let runs = stored_results(&dir);
    assert_eq!(test_names(&runs[0]), ["pipe"]);
    let prom = std::fs::read_to_string(dir.join("rtbench.prom")).unwrap();
    assert!(prom.contains("test=\"pipe\""));
    assert!(!prom.contains("test=\"pmq\"") && !prom.contains("test=\"cyclic\""));
}

/// `[pmq] msg_size` and `[pipe] msg_size` (bytes): the tests run with them and the
/// stored result says the size of each pair test; out of range is a config error.
#[test]
fn pair_message_sizes_are_measured_and_stored() {
    let dir = TempDir::new("st3-msgsize");
    let cfg = config(
        &dir,
        &format!(
            "[cyclic]\nenabled = false\n[pmq]\ncpus = \"0\"\nmsg_size = 256\n\
             [pipe]\ncpus = \"0\"\ninterval_us = 500\nmsg_size = 4096\n[limits]\n{LOOSE}\n"
        ),
    );
    let o = selftest_logfmt(&cfg);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let runs = stored_results(&dir);
    assert_eq!(test_names(&runs[0]), ["pmq", "pipe"]);
    assert_eq!(runs[0]["tests"][0]["msg_size"], 256);
    assert_eq!(runs[0]["tests"][1]["msg_size"], 4096);
}

#[test]
fn every_test_disabled_is_unjudged_not_a_pass() {
    let dir = TempDir::new("st3-none");
    let cfg = config(
        &dir,
        &format!("[cyclic]\nenabled = false\n[pmq]\nenabled = false\n[limits]\n{LOOSE}\n"),
    );
    let o = selftest_logfmt(&cfg);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let s = summary(&o);
    assert_eq!(s["RTBENCH_VERDICT"], "unjudged");
    assert!(s["RTBENCH_UNJUDGED"].contains("no test enabled"), "{s:?}");
    assert_eq!(s["RTBENCH_TESTS"], "");
    assert!(with_id(&entries(&o), RESULT).is_empty());
    let runs = stored_results(&dir);
    assert_eq!(runs[0]["verdict"]["outcome"], "unjudged");
}

#[test]
fn a_pmq_test_the_system_refuses_stops_before_a_verdict_naming_the_limit() {
    let dir = TempDir::new("st3-refused");
    let cfg = config(
        &dir,
        &format!("[cyclic]\ncpus = \"0\"\n[pmq]\ncpus = \"0\"\n[limits]\n{LOOSE}\n"),
    );
    // RLIMIT_MSGQUEUE 0: mq_open fails with EMFILE.
    let o = std::process::Command::new("prlimit")
        .arg("--msgqueue=0:0")
        .arg(crate::common::exe())
        .args(["selftest", "--log-format", "logfmt", "--config"])
        .arg(&cfg)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let e = entries(&o);
    let a = with_id(&e, ABORTED);
    assert_eq!(a.len(), 1, "{}", stderr(&o));
    assert_eq!(a[0]["RTBENCH_STAGE"], "pmq");
    assert_eq!(a[0]["RTBENCH_CAUSE"], "RLIMIT_MSGQUEUE");
    assert!(with_id(&e, SUMMARY).is_empty(), "no verdict");
    // The attempt's record, marked stopped at the stage that refused: no verdict.
    let kept = stored_results(&dir);
    assert_eq!(kept.len(), 1, "one record of the attempt");
    assert_eq!(kept[0]["attempt"]["state"], "stopped", "{}", kept[0]);
    assert_eq!(kept[0]["attempt"]["stage"], "pmq", "{}", kept[0]);
    assert_eq!(kept[0]["exit_code"], 3);
}

#[test]
fn pair_sections_reject_unknown_keys_and_bad_values_in_one_line() {
    let dir = TempDir::new("st3-bad");
    for (body, want) in [
        ("[pmq]\nmsgsize = 64\n", ":2: msgsize"),
        ("[pipe]\npriority = 0\n", ":2: pipe.priority = 0"),
        ("[pmq]\ninterval_us = 0\n", ":2: pmq.interval_us = 0"),
        ("[pipe]\nmsg_size = 8192\n", ":2: pipe.msg_size = 8192"),
        ("[pmq]\nmsg_size = 8\n", ":2: pmq.msg_size = 8"),
        ("[pipe]\ncpus = \"9999\"\n", ":2: pipe.cpus = \"9999\""),
        ("[pmq]\ncpus = \"0\"\npairs = 2\n", ":3: pmq.pairs = 2"),
        ("[pipe]\npairs = 0\n", ":2: pipe.pairs = 0"),
        ("[pmq]\nenabled = \"yes\"\n", ":2: enabled"),
        ("[limits.pipe]\nmax_us = 5\n", ":1: [limits.pipe]"),
        (
            "[[limits.cpus]]\ncpus = \"0\"\ntest = \"pmqtest\"\n",
            ":3: limits.cpus[0].test = \"pmqtest\"",
        ),
    ] {
        let cfg = dir.join("bad.toml");
        std::fs::write(&cfg, body).unwrap();
        let o = selftest_logfmt(&cfg);
        assert_eq!(o.status.code(), Some(2), "{body}: {}", stderr(&o));
        let e = entries(&o);
        assert_eq!(e.len(), 1, "{body}: one entry: {}", stderr(&o));
        assert_eq!(e[0]["MESSAGE_ID"], CONFIG);
        let msg = &e[0]["MESSAGE"];
        assert!(!msg.contains('\n'), "{msg}");
        assert!(
            msg.starts_with(&format!("{}{want}", cfg.display())),
            "{body}: {msg}"
        );
        assert!(stdout(&o).is_empty());
    }
}

/// `[poll]` (rtbench oslat's busy-poll threads) judged on its maximum and high nines:
/// a 0 µs `p99999_us` fails (every gap takes time), the 10 s limits pass, and every
/// output says so — the journal entry with the high nines and their limits, the stored
/// run, the Prometheus textfile.
#[test]
fn poll_is_judged_on_max_and_high_nines_in_every_output() {
    let dir = TempDir::new("st-poll");
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let allowed = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap();
    let cpu = rtbench::cpuset::CpuSet::parse_list(allowed.trim(), 4096)
        .unwrap()
        .last()
        .unwrap();
    let cfg = config(
        &dir,
        &format!(
            "[cyclic]\nenabled = false\n[poll]\ncpus = \"{cpu}\"\n[limits.poll]\n{LOOSE}\n\
             p99999_us = 0\np999999_us = 10000000\n"
        ),
    );
    let o = selftest_logfmt(&cfg);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let s = summary(&o);
    assert_eq!(s["RTBENCH_VERDICT"], "fail");
    assert_eq!(s["RTBENCH_TESTS"], "poll");
    let r = results_of(&o, "poll");
    assert_eq!(r.len(), 1, "{}", stderr(&o));
    let m = &r[0];
    assert_eq!(m["RTBENCH_CPU"], cpu.to_string(), "{m:?}");
    assert_eq!(m["RTBENCH_LIMIT_P99999_NS"], "0", "{m:?}");
    assert_eq!(m["RTBENCH_LIMIT_P999999_NS"], "10000000000", "{m:?}");
    assert!(m["RTBENCH_P99999_NS"].parse::<u64>().unwrap() > 0, "{m:?}");
    assert!(m["RTBENCH_FAILED"].contains("p99.999 "), "{m:?}");
    assert!(!m["RTBENCH_FAILED"].contains("p99.9999"), "{m:?}");
    assert_eq!(m["RTBENCH_VERDICT"], "fail", "{m:?}");
    let runs = stored_results(&dir);
    assert_eq!(test_names(&runs[0]), ["poll"]);
    let th = &runs[0]["tests"][0]["threads"][0];
    assert_eq!(th["high_nines_ns"][0].to_string(), m["RTBENCH_P99999_NS"]);
    let prom = std::fs::read_to_string(dir.join("rtbench.prom")).unwrap();
    assert!(
        prom.lines()
            .any(|l| l.contains("test=\"poll\"") && l.contains("quantile=\"0.99999\"")),
        "{prom}"
    );
}
