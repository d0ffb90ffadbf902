//! Generated stored self-test results of any size, for `rtbench compare` at scale
//! (tests/selftest/compare.rs, benches/compare_scale.rs): `tests` tests (with
//! `conditions` > 0, every test in each of that many `[[condition]]`s) of `cpus`
//! threads each, every thread a histogram of `buckets` `[value_ns, count]` pairs.

use std::fmt::Write as _;

/// The JSON text of such a result (the shape of `results::store::StoredRun`). Every
/// latency is shifted by `shift_ns`: a candidate shifted far above its baseline
/// regresses in every statistic the samples decide.
pub fn stored_result(
    tests: usize,
    conditions: usize,
    cpus: usize,
    buckets: usize,
    shift_ns: u64,
) -> String {
    let mut s = String::from(
        r##"{"rtbench_version": "0.1.0", "start_s": 1700000000, "duration_s": 60.0,
"sysinfo": {"sysname": "Linux", "nodename": "gen", "release": "6.6.30-rt30",
 "version": "#1 SMP PREEMPT_RT", "machine": "x86_64", "realtime": true,
 "realtime_evidence": ["sysfs"], "preempt_model": "PREEMPT_RT", "cmdline": "",
 "nr_cpu_ids": 128, "cpus_online": "0-127", "cpus_isolated": "", "cpus_nohz_full": "",
 "cpus_housekeeping": "0-127"},
"config": {}, "tuning": null, "load": "", "tests": ["##,
    );
    let names: Vec<Option<String>> = if conditions == 0 {
        vec![None]
    } else {
        (0..conditions).map(|c| Some(format!("c{c}"))).collect()
    };
    let mut first = true;
    for cond in &names {
        for t in 0..tests {
            if !first {
                s.push(',');
            }
            first = false;
            let name = if t == 0 {
                "cyclic".to_string()
            } else {
                format!("cyclic{t}")
            };
            let _ = write!(s, "\n{{\"test\": \"{name}\"");
            if let Some(c) = cond {
                let _ = write!(s, ", \"condition\": \"{c}\"");
            }
            s.push_str(", \"threads\": [");
            for cpu in 0..cpus {
                if cpu > 0 {
                    s.push(',');
                }
                thread(&mut s, cpu, buckets, shift_ns);
            }
            s.push_str("]}");
        }
    }
    s.push_str("],\n\"verdict\": {\"pass\": true, \"checks\": [], \"problems\": []},\n");
    if conditions > 0 {
        s.push_str("\"conditions\": [");
        for (i, c) in names.iter().flatten().enumerate() {
            let sep = if i > 0 { "," } else { "" };
            let _ = write!(s, "{sep}{{\"name\": \"{c}\", \"load\": \"\"}}");
        }
        s.push_str("],\n");
    }
    s.push_str("\"interrupted\": false}\n");
    s
}

/// One thread: `buckets` values 1 µs apart from 2 µs (+ `shift_ns`), counts falling
/// off geometrically from 400,000 (about 1.3 million samples).
fn thread(s: &mut String, cpu: usize, buckets: usize, shift_ns: u64) {
    let mut hist = String::new();
    let mut total = 0u64;
    let mut n = 400_000u64;
    let mut max = 0;
    for b in 0..buckets as u64 {
        let v = 2000 + b * 1000 + shift_ns;
        let sep = if b > 0 { "," } else { "" };
        let _ = write!(hist, "{sep}[{v},{n}]");
        total += n;
        max = v;
        n = (n * 7 / 10).max(1);
    }
    let _ = write!(
        s,
        "\n {{\"thread\": {cpu}, \"cpu\": {cpu}, \"priority\": 98, \"interval_us\": 1000, \
         \"count\": {total}, \"min_ns\": {lo}, \"avg_ns\": {lo}, \"p50_ns\": {lo}, \"p90_ns\": {lo}, \
         \"p99_ns\": {lo}, \"p999_ns\": {lo}, \"p9999_ns\": {lo}, \"max_ns\": {max}, \
         \"overruns\": 0, \"histogram\": [{hist}]}}",
        lo = 2000 + shift_ns
    );
}
