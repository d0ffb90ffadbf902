//! rtbench cyclic against Debian's cyclictest (rt-tests 2.4) with the same flags: the
//! same `T:` line shape, the same histogram dump shape (legacy layout byte-for-byte in
//! structure; the 2.7+ layout as its documented reduction) and the same JSON keys.

use crate::common::*;
use serde_json::Value;
use std::collections::BTreeSet;

const T_LINE: &str = r"^T:[ \d]{2} \([ \d]{5,}\) P:[ \d]{2} I:\d+ C:[ \d]{7,} Min:[ \d]{7,} Act:[ \d]{5,} Avg:[ \d]{5,} Max:[ \d]{8,}$";

fn t_lines(s: &str) -> Vec<String> {
    s.lines()
        .filter(|l| l.starts_with("T:"))
        .map(String::from)
        .collect()
}

/// The shape of a line: digits collapsed, so values differ but layout must not.
fn shape(line: &str) -> String {
    let mut out = String::new();
    let mut in_digits = false;
    for c in line.chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                out.push('9');
            }
            in_digits = true;
        } else {
            in_digits = false;
            out.push(c);
        }
    }
    out
}

#[test]
fn t_lines_have_cyclictest_shape() {
    let flags = "-m -S -p 80 -i 1000 -l 100 -q";
    let ours = run(&format!("cyclic {flags}"));
    let theirs = cyclictest(flags);
    assert!(ours.status.success(), "{}", stderr(&ours));
    let re = regex_lite::Regex::new(T_LINE).unwrap();
    let (a, b) = (t_lines(&stdout(&ours)), t_lines(&stdout(&theirs)));
    assert_eq!(a.len(), online_cpus());
    assert_eq!(a.len(), b.len(), "ours:\n{a:?}\ncyclictest:\n{b:?}");
    for (x, y) in a.iter().zip(&b) {
        assert!(re.is_match(x), "rtbench line {x:?}");
        assert!(re.is_match(y), "cyclictest line {y:?}");
        // Same thread index, priority, interval and cycle count in the same columns.
        assert_eq!(x[..5], y[..5]);
        let fields = |l: &str| -> Vec<String> {
            l.split_whitespace()
                .filter(|f| f.starts_with("P:") || f.starts_with("I:"))
                .map(String::from)
                .collect()
        };
        assert_eq!(fields(x), fields(y));
        // Every rtbench thread completes -l cycles; cyclictest stops all threads when the
        // first one is done, so its slower threads show fewer.
        assert!(x.contains("C:    100"), "{x}");
    }
    assert_eq!(
        stdout(&ours).lines().next(),
        stdout(&theirs).lines().next(),
        "PM QoS line"
    );
}

#[test]
fn legacy_histogram_dump_matches_cyclictest_structure() {
    for flag in ["-h 40", "-H 40"] {
        let flags = format!("-m -S -p 80 -i 500 -l 200 -q {flag}");
        let ours = run(&format!("cyclic {flags} --histogram-layout legacy"));
        let theirs = cyclictest(&flags);
        assert!(ours.status.success(), "{}", stderr(&ours));
        let (a, b) = (stdout(&ours), stdout(&theirs));
        let (la, lb): (Vec<_>, Vec<_>) = (a.lines().collect(), b.lines().collect());
        assert_eq!(
            la.len(),
            lb.len(),
            "line count with {flag}\nours:\n{a}\ntheirs:\n{b}"
        );
        for (x, y) in la.iter().zip(&lb) {
            if x.starts_with("# Thread ") {
                // Overflow cycle lists differ in length with the run; the prefix may not.
                assert_eq!(&x[..11], &y[..11]);
                continue;
            }
            assert_eq!(
                shape(x),
                shape(y),
                "with {flag}\nours:   {x:?}\ntheirs: {y:?}"
            );
        }
    }
}

#[test]
fn current_histogram_dump_is_the_2_7_reduction_of_cyclictest() {
    let flags = "-m -S -p 80 -i 500 -l 200 -q -H 60";
    let ours = stdout(&run(&format!("cyclic {flags}")));
    let theirs = stdout(&cyclictest(flags));
    // rt-tests 2.7 dropped all-zero rows and the "# Total:" line, and prints
    // "# Thread N: " followed by the space-separated cycle numbers.
    assert!(!ours.contains("# Total:"));
    let rows: Vec<&str> = ours
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .collect();
    for r in &rows {
        let cols: Vec<u64> = r.split_whitespace().map(|c| c.parse().unwrap()).collect();
        assert_eq!(cols.len(), 1 + 2 + 1, "bucket, 2 threads, sum: {r:?}");
        assert!(cols[1] + cols[2] > 0, "zero row printed: {r:?}");
        assert_eq!(cols[1] + cols[2], cols[3]);
        assert_eq!(shape(r), shape(theirs.lines().nth(2).unwrap()));
    }
    let trailer = |s: &str| -> Vec<String> {
        s.lines()
            .filter(|l| {
                l.starts_with("# ") && !l.starts_with("# Total") && !l.starts_with("# /dev")
            })
            .map(|l| l.split(':').next().unwrap().to_string())
            .collect()
    };
    assert_eq!(trailer(&ours), trailer(&theirs));
    for l in ours.lines().filter(|l| l.starts_with("# Thread ")) {
        let rest = l.split_once(": ").expect("'# Thread N: ' prefix").1;
        for tok in rest.split(" # ").next().unwrap().split_whitespace() {
            assert_eq!(tok.len(), 5, "cycle numbers are %05lu: {l:?}");
        }
    }
    assert!(ours.ends_with("\n\n"), "blank line after the dump");
}

fn keys(v: &Value, prefix: &str, out: &mut BTreeSet<String>) {
    if let Value::Object(m) = v {
        for (k, val) in m {
            if prefix.ends_with(".histogram") || k == "rtbench" {
                continue;
            }
            let k = if prefix == ".thread" {
                "N".to_string()
            } else {
                k.clone()
            };
            let p = format!("{prefix}.{k}");
            out.insert(p.clone());
            keys(val, &p, out);
        }
    }
}

#[test]
fn json_has_every_rt_tests_key_and_the_rtbench_object() {
    let dir = TempDir::new("json");
    let (a, b) = (dir.join("ours.json"), dir.join("theirs.json"));
    let flags = "-m -S -p 80 -i 1000 -l 100 -q -h 100";
    let ours = run(&format!("cyclic {flags} --json {}", a.display()));
    assert!(ours.status.success(), "{}", stderr(&ours));
    cyclictest(&format!("{flags} --json={}", b.display()));
    let va: Value = serde_json::from_str(&std::fs::read_to_string(&a).unwrap()).unwrap();
    let vb: Value = serde_json::from_str(&std::fs::read_to_string(&b).unwrap()).unwrap();
    let (mut ka, mut kb) = (BTreeSet::new(), BTreeSet::new());
    keys(&va, "", &mut ka);
    keys(&vb, "", &mut kb);
    assert_eq!(ka, kb);
    assert!(ka.contains(".cmdline:") && ka.contains(".rt_test_version:"));
    let r = &va["rtbench"];
    assert_eq!(r["units"]["latency"], "ns");
    let t0 = &r["threads"][0];
    for k in [
        "p50_ns", "p90_ns", "p99_ns", "p999_ns", "p9999_ns", "max_ns", "overruns",
    ] {
        assert!(t0[k].is_u64(), "rtbench.threads[0].{k} = {}", t0[k]);
    }
    assert!(t0["p50_ns"].as_u64() <= t0["p99_ns"].as_u64());
    assert!(t0["p99_ns"].as_u64() <= t0["max_ns"].as_u64());
    // rt-tests fields are µs; the histogram counts add up with the overflows.
    let th = &va["thread"]["0"];
    let binned: u64 = th["histogram"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(
        binned + t0["histogram_overflows"].as_u64().unwrap(),
        th["cycles"].as_u64().unwrap()
    );
    assert_eq!(
        th["max"].as_u64().unwrap(),
        t0["max_ns"].as_u64().unwrap() / 1000
    );
}

#[test]
fn json_escapes_the_command_line_and_is_never_nan() {
    let dir = TempDir::new("esc");
    let p = dir.join("q\"uote.json");
    let o = rtbench()
        .args(["cyclic", "-l", "1", "-q", "-i", "100", "--json"])
        .arg(&p)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&p).unwrap();
    assert!(!text.contains("nan"));
    let v: Value = serde_json::from_str(&text).unwrap();
    assert!(v["cmdline:"].as_str().unwrap().contains("q\"uote.json"));
}
