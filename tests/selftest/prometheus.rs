//! The self-test's Prometheus textfile says what its journal says: each test's verdict
//! per CPU (per pair for pmq and pipe, labelled `pair`, as the journal and the report
//! name them), the limits each figure was judged against, and the tuning deviations;
//! promtool accepts it. Limits are 10 s (pass) or 0 µs (fail): no timing threshold.

use crate::common::*;

#[test]
fn the_textfile_has_verdicts_per_cpu_and_pair_the_limits_and_the_tuning_deviations() {
    let dir = TempDir::new("st-prom");
    // One deviation: [tuning.sysctl] printk wants another console level than this
    // machine has; mode "check" only reads it.
    let printk = std::fs::read_to_string("/proc/sys/kernel/printk").unwrap();
    let level: u8 = printk.split_whitespace().next().unwrap().parse().unwrap();
    let want = if level == 1 { 2 } else { 1 };
    let cfg = dir.join("rtbench.toml");
    std::fs::write(
        &cfg,
        format!(
            "[selftest]\nmode = \"check\"\nduration = \"1s\"\n[tuning.sysctl]\nprintk = {want}\n\
             [cyclic]\ncpus = \"0\"\n[pmq]\ncpus = \"0\"\n\
             [limits]\nmax_us = 10000000\noverruns = 1000000\n[limits.pmq]\nmax_us = 0\n\
             [output]\nresults_dir = \"{0}/results\"\nfallback_dir = \"{0}/run\"\n\
             prometheus = \"{0}/rtbench.prom\"\n",
            dir.display()
        ),
    )
    .unwrap();
    let o = selftest_logfmt(&cfg);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let prom = dir.join("rtbench.prom");
    let text = std::fs::read_to_string(&prom).unwrap();
    let has = |line: &str| {
        assert!(
            text.lines().any(|l| l == line),
            "no line {line:?} in\n{text}"
        )
    };
    // Each test's own verdict per CPU, the pair labelled as a pair.
    has(r#"rtbench_cpu_verdict{test="cyclic",thread="0",cpu="0",verdict="pass"} 1"#);
    has(r#"rtbench_cpu_verdict{test="cyclic",thread="0",cpu="0",verdict="fail"} 0"#);
    has(r#"rtbench_cpu_verdict{test="pmq",pair="0",cpu="0",verdict="fail"} 1"#);
    has(r#"rtbench_cpu_verdict{test="pmq",pair="0",cpu="0",verdict="pass"} 0"#);
    assert!(!text.contains(r#"test="pmq",thread="#), "{text}");
    // The limits, in seconds as the latencies are; the overrun limit a count.
    has(r#"rtbench_limit_seconds{test="cyclic",thread="0",cpu="0",statistic="max"} 1e1"#);
    has(r#"rtbench_limit_seconds{test="pmq",pair="0",cpu="0",statistic="max"} 0e0"#);
    has(r#"rtbench_limit_overruns{test="cyclic",thread="0",cpu="0"} 1000000"#);
    has(r#"rtbench_limit_overruns{test="pmq",pair="0",cpu="0"} 1000000"#);
    // The tuning deviation, counted as the summary entry lists it.
    has(r#"rtbench_tuning_deviations{status="deviation"} 1"#);
    has(r#"rtbench_tuning_deviations{status="failed"} 0"#);
    has(r#"rtbench_selftest_verdict{verdict="fail"} 1"#);
    crate::common::promtool_accepts(prom.as_ref());
}
