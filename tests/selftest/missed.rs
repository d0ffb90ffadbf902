//! A stalled self-test counts the periods its measuring thread missed, in the result
//! entry, the results store and the Prometheus textfile, as `rtbench cyclic`'s
//! `Missed:` does: one late wakeup is one overrun, however many periods it skipped.

use crate::common::*;
use std::process::Stdio;
use std::time::Duration;

const RESULT: &str = "b338a16c561342608e6e5ef41b0a0813";
const SUMMARY: &str = "7b1dd0eea94d4cc4bd8f9e6c91b6465d";

/// The stall: the whole process stopped (SIGSTOP) this long at a 1 ms interval misses
/// at least as many periods as whole milliseconds it lasted.
const STALL_MS: u64 = 50;
/// What the stall guarantees, with room for the rounding at its ends.
const AT_LEAST: u64 = 40;

#[test]
fn a_stalled_self_test_counts_its_missed_periods_in_every_output() {
    let _machine = exclusive();
    let d = TempDir::new("st-missed");
    let cfg = d.join("rtbench.toml");
    std::fs::write(
        &cfg,
        format!(
            "[selftest]\nmode = \"off\"\nduration = \"3s\"\n[cyclic]\ncpus = \"1\"\n\
             interval_us = 1000\n[output]\nresults_dir = \"{0}/results\"\n\
             fallback_dir = \"{0}/run\"\nprometheus = \"{0}/rtbench.prom\"\n",
            d.display()
        ),
    )
    .unwrap();
    let st = rtbench()
        .args(["selftest", "--log-format", "logfmt", "--config"])
        .arg(&cfg)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rtbench starts");
    wait_samples(st.id(), "rtbench-T", 1, 20);
    stop_for(st.id(), Duration::from_millis(STALL_MS));
    let o = st.wait_with_output().unwrap();
    let e = entries(&o);
    let r = with_id(&e, RESULT);
    assert_eq!(r.len(), 1, "{}", stderr(&o));
    let missed: u64 = r[0]["RTBENCH_MISSED_PERIODS"].parse().unwrap();
    let overruns: u64 = r[0]["RTBENCH_OVERRUNS"].parse().unwrap();
    assert!(missed >= AT_LEAST && missed >= overruns, "{:?}", r[0]);
    assert!(
        r[0]["MESSAGE"].contains(&format!(" {missed} missed periods, ")),
        "{:?}",
        r[0]
    );
    // The summary adds up every thread's (one here).
    let s = with_id(&e, SUMMARY);
    assert_eq!(
        s[0]["RTBENCH_MISSED_PERIODS"],
        missed.to_string(),
        "{:?}",
        s[0]
    );
    assert!(
        s[0]["MESSAGE"].contains(&format!(", {missed} missed periods")),
        "{:?}",
        s[0]
    );
    let stored = stored_results(&d);
    assert_eq!(
        stored[0]["tests"][0]["threads"][0]["missed_periods"].as_u64(),
        Some(missed)
    );
    let prom = std::fs::read_to_string(d.join("rtbench.prom")).unwrap();
    assert!(
        prom.contains(&format!(
            "rtbench_missed_periods{{test=\"cyclic\",thread=\"0\",cpu=\"1\"}} {missed}\n"
        )),
        "{prom}"
    );
}
