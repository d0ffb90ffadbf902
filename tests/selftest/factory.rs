//! Factory records: a stored run names its unit — the line's label, station and order
//! from `[unit]` and the environment (which wins) — in the results file, the journal
//! summary, `rtbench report` and the Prometheus textfile; `rtbench report --format
//! junit` is read by a real JUnit consumer (the `junitparser` package from PyPI, which
//! .ci/run installs) case by case. The serial-number sources are read from fake trees
//! in src/sys/serial.rs.

use crate::common::*;
use std::process::Command;

const SUMMARY: &str = "7b1dd0eea94d4cc4bd8f9e6c91b6465d";

/// Reads the JUnit file with junitparser and prints one line per test case:
/// `CLASSNAME|NAME|RESULT` (pass, failure, error, skipped), after the suite's counts.
const READ_JUNIT: &str = r#"
import sys
from junitparser import JUnitXml, Failure, Error, Skipped
xml = JUnitXml.fromfile(sys.argv[1])
for suite in xml:
    print("suite|%s|%d|%d|%d|%d" % (suite.name, suite.tests, suite.failures, suite.errors, suite.skipped))
    for p in suite.properties():
        print("property|%s|%s" % (p.name, p.value))
    for case in suite:
        kinds = [type(r).__name__.lower() for r in case.result]
        print("case|%s|%s|%s" % (case.classname, case.name, kinds[0] if kinds else "pass"))
"#;

#[test]
fn a_stored_run_names_its_unit_and_exports_as_junit() {
    let dir = TempDir::new("st-factory");
    // A tuning item that deviates (checked only): kernel.timer_migration as it is not.
    let now: u8 = std::fs::read_to_string("/proc/sys/kernel/timer_migration")
        .map_or(1, |v| v.trim().parse().unwrap_or(1));
    let text = format!(
        "[selftest]\nmode = \"check\"\nduration = \"1s\"\n[tuning.sysctl]\ntimer_migration = {}\n\
         [limits]\nmax_us = 10000000\n[unit]\nstation = \"S3\"\nlabel = \"from-file\"\n\
         [output]\nresults_dir = \"{}\"\nfallback_dir = \"{}\"\nprometheus = \"{}\"\n",
        1 - now.min(1),
        dir.join("results").display(),
        dir.join("run").display(),
        dir.join("rtbench.prom").display()
    );
    let cfg = dir.join("rtbench.toml");
    std::fs::write(&cfg, on_any_kernel(&text)).unwrap();
    // A label the line sets that cannot be stored: refused before anything runs, never
    // stored under the file's label.
    let bad = rtbench()
        .args(["selftest", "--log-format", "logfmt", "--config"])
        .arg(&cfg)
        .env("RTBENCH_UNIT_LABEL", "bad\u{1}label")
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    assert!(
        stderr(&bad).contains("RTBENCH_UNIT_LABEL = \"bad\\u{1}label\": expected 1..64 printable"),
        "{}",
        stderr(&bad)
    );
    // Nothing ran and nothing is stored under the file's label as a run: the attempt
    // is recorded as stopped at `environment`, so no older result stands for it.
    let stored = stored_results(&dir);
    assert_eq!(stored.len(), 1, "the attempt's record only");
    assert_eq!(stored[0]["attempt"]["state"], "stopped", "{}", stored[0]);
    assert_eq!(
        stored[0]["attempt"]["stage"], "environment",
        "{}",
        stored[0]
    );
    let o = rtbench()
        .args(["selftest", "--log-format", "logfmt", "--config"])
        .arg(&cfg)
        .env("RTBENCH_UNIT_LABEL", "A7 <&>")
        .env("RTBENCH_ORDER", "4711")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let stored = stored_results(&dir);
    let unit = &stored.last().unwrap()["unit"];
    assert_eq!(unit["label"], "A7 <&>", "the environment wins: {unit}");
    assert_eq!(unit["station"], "S3");
    assert_eq!(unit["order"], "4711");
    let e = entries(&o);
    let s = with_id(&e, SUMMARY)[0];
    assert_eq!(s["RTBENCH_UNIT_LABEL"], "A7 <&>");
    assert_eq!(s["RTBENCH_STATION"], "S3");
    assert_eq!(s["RTBENCH_ORDER"], "4711");
    assert!(s["MESSAGE"].contains("; unit "), "{}", s["MESSAGE"]);
    assert!(
        s["MESSAGE"].contains("label A7 <&>, station S3, order 4711"),
        "{}",
        s["MESSAGE"]
    );
    let prom = std::fs::read_to_string(dir.join("rtbench.prom")).unwrap();
    assert!(prom.contains("station=\"S3\",order=\"4711\"} 1"), "{prom}");
    let results = dir.join("results");
    let r = rtbench()
        .args(["report", "--dir"])
        .arg(&results)
        .output()
        .unwrap();
    assert!(stdout(&r).contains("unit: "), "{}", stdout(&r));
    // JUnit, read by junitparser.
    let j = rtbench()
        .args(["report", "--format", "junit", "--dir"])
        .arg(&results)
        .output()
        .unwrap();
    assert_eq!(j.status.code(), Some(1), "{}", stderr(&j));
    let xml = dir.join("rtbench.xml");
    std::fs::write(&xml, &j.stdout).unwrap();
    let py = Command::new("python3")
        .args(["-c", READ_JUNIT])
        .arg(&xml)
        .output()
        .unwrap();
    assert!(
        py.status.success(),
        "junitparser (pip install junitparser; .ci/run installs it) could not read the file: {}\n{}",
        stderr(&py),
        String::from_utf8_lossy(&j.stdout)
    );
    let lines = stdout(&py);
    let field = |l: &str, i: usize| l.split('|').nth(i).unwrap_or_default().to_string();
    let suite = lines.lines().find(|l| l.starts_with("suite|")).unwrap();
    let cases: Vec<&str> = lines.lines().filter(|l| l.starts_with("case|")).collect();
    assert_eq!(field(suite, 2), cases.len().to_string(), "{lines}");
    // One case per CPU and limit (only max here), each passing the 10-s limit.
    let cpus = online_cpus();
    let limit_cases: Vec<&&str> = cases
        .iter()
        .filter(|c| c.starts_with("case|rtbench.cyclic|"))
        .collect();
    assert_eq!(limit_cases.len(), cpus, "{lines}");
    for c in &limit_cases {
        assert!(field(c, 2).ends_with("max <= 10000000 µs"), "{c}");
        assert_eq!(field(c, 3), "pass", "{c}");
    }
    // The tuning item that deviated is a failure, and so is the run's verdict.
    let tuning: Vec<&&str> = cases
        .iter()
        .filter(|c| c.starts_with("case|rtbench.tuning|"))
        .collect();
    assert_eq!(tuning.len(), 1, "{lines}");
    assert_eq!(field(tuning[0], 2), "sysctl.kernel.timer_migration");
    assert_eq!(field(tuning[0], 3), "failure");
    assert!(
        cases.contains(&"case|rtbench.run|verdict|failure"),
        "{lines}"
    );
    assert_eq!(field(suite, 3), "2", "two failures: {lines}");
    assert!(lines.contains("property|unit.label|A7 <&>"), "{lines}");
    assert!(lines.contains("property|unit.station|S3"), "{lines}");
}
