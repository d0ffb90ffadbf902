//! rtbench installed as `cyclictest` and `pmqtest` (a symlink and a hard link to the
//! test binary), driven the way harnesses drive rt-tests:
//!
//! - rteval's cyclictest module (rteval 3.x `rteval/modules/measurement/cyclictest.py`):
//!   its argv, standard output to a file, SIGINT (repeated every 2 s while the process
//!   lives), then the file read to the end and parsed as rteval parses it; every number
//!   of the `-h` dump is checked against an independent reading of its rows;
//! - the argv shapes of docs/COMPAT.md's table, each run by Debian's cyclictest 2.4 and by
//!   rtbench: both must accept it and read it the same way;
//! - pmqtest's common invocations (pmqtest(8), Linaro test-definitions) the same way;
//! - `--json` key sets equal to cyclictest 2.4's and pmqtest 2.4's for the same flags;
//! - `-u`: lines reach a pipe while the run goes on.
//!
//! No timing thresholds: the runs wait for the measuring threads to exist, and counts
//! are only required to be consistent, and non-zero.

use crate::common::*;
use serde_json::Value;
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::Duration;

/// A directory holding `cyclictest` (a symlink to rtbench) and `pmqtest` (a hard link),
/// on the file system of the build (hard links cannot cross file systems).
fn links(tag: &str) -> TempDir {
    let dir = TempDir::new_in(Path::new(env!("CARGO_TARGET_TMPDIR")), tag);
    let exe = Path::new(exe());
    std::os::unix::fs::symlink(exe, dir.join("cyclictest")).unwrap();
    std::fs::hard_link(exe, dir.join("pmqtest")).unwrap();
    dir
}

/// The online CPUs as the kernel lists them (rteval's `cpulist`), and their number.
fn cpulist() -> (String, usize) {
    let s = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    (s.trim().to_string(), online_cpus())
}

/// Waits until Debian's cyclictest `pid` has at least `threads` threads: it installs
/// its SIGINT/SIGTERM handler before it creates them (rt-tests src/cyclictest/
/// cyclictest.c, main), so a signal from then on ends the run as cyclictest ends it.
fn wait_cyclictest_threads(pid: u32, threads: usize) {
    wait_until(&format!("{threads} threads of cyclictest {pid}"), || {
        let n = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?.count();
        (n >= threads).then_some(n)
    });
}

/// rteval's `_WorkloadCleanup`: SIGINT, 2 s, again while the process lives (bounded
/// here so that a hang fails the test instead of blocking it).
fn stop_like_rteval(child: &mut Child) -> ExitStatus {
    for _ in 0..30 {
        signal(child.id(), libc::SIGINT);
        if let Some(st) = wait_for(Duration::from_secs(2), || child.try_wait().unwrap()) {
            return st;
        }
    }
    let _ = child.kill();
    panic!("still running after 30 SIGINTs");
}

/// A cyclictest `-h` dump read independently of rtbench: the rows and every trailer
/// line.
#[derive(Debug, Default)]
struct Dump {
    rows: Vec<(u64, Vec<u64>)>,
    total: Option<Vec<u64>>,
    min: Vec<u64>,
    avg: Vec<u64>,
    max: Vec<u64>,
    overflows: Vec<u64>,
    /// Per thread: the cycle numbers listed and the "# NNNNN others" count.
    overflow_cycles: Vec<(usize, u64)>,
    /// Lines that are neither `#` lines, rows nor empty (rteval logs them as
    /// "unexpected output").
    other: Vec<String>,
}

fn numbers(s: &str) -> Vec<u64> {
    s.split_whitespace().map(|t| t.parse().unwrap()).collect()
}

fn parse_dump(text: &str) -> Dump {
    let mut d = Dump::default();
    let mut in_cycles = false;
    for l in text.lines() {
        if let Some(rest) = l.strip_prefix("# Total:") {
            d.total = Some(numbers(rest));
        } else if let Some(rest) = l.strip_prefix("# Min Latencies:") {
            d.min = numbers(rest);
        } else if let Some(rest) = l.strip_prefix("# Avg Latencies:") {
            d.avg = numbers(rest);
        } else if let Some(rest) = l.strip_prefix("# Max Latencies:") {
            d.max = numbers(rest);
        } else if let Some(rest) = l.strip_prefix("# Histogram Overflows:") {
            d.overflows = numbers(rest);
        } else if l.starts_with("# Histogram Overflow at cycle number:") {
            in_cycles = true;
        } else if in_cycles && l.starts_with("# Thread ") {
            let list = l.split_once(": ").map_or("", |x| x.1);
            let (listed, others) = match list.split_once(" # ") {
                Some((a, b)) => (a, b.trim_end_matches(" others").trim().parse().unwrap()),
                None => (list, 0),
            };
            d.overflow_cycles
                .push((listed.split_whitespace().count(), others));
        } else if l.starts_with('#') || l.is_empty() {
            continue;
        } else if l.as_bytes()[0].is_ascii_digit() {
            let v = numbers(l);
            d.rows.push((v[0], v[1..].to_vec()));
        } else {
            d.other.push(l.to_string());
        }
    }
    d
}

/// rteval's parse of the same text: per core the bucket counts (`vals[i+1]` for core
/// i of its cpulist) and the `# Max Latencies:` values; `None` where rteval would
/// raise (a row with fewer columns than cores).
fn rteval_samples(text: &str, cores: usize) -> Option<(Vec<u64>, Vec<u64>)> {
    let mut samples = vec![0u64; cores];
    let mut max = vec![0u64; cores];
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# Max Latencies: ") {
            for (i, v) in rest.split_whitespace().take(cores).enumerate() {
                max[i] = max[i].max(v.parse().ok()?);
            }
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        let vals: Vec<&str> = line.split_whitespace().collect();
        let Some(Ok(index)) = vals.first().map(|v| v.parse::<u64>()) else {
            continue;
        };
        for (i, s) in samples.iter_mut().enumerate() {
            let n: u64 = vals.get(i + 1)?.parse().ok()?;
            *s += n;
            if n > 0 {
                max[i] = max[i].max(index);
            }
        }
    }
    Some((samples, max))
}

/// Every number of a legacy-layout dump of `cores` threads and `buckets` rows, checked
/// against the rows: totals, minima, maxima, averages, overflow counts and lists.
fn check_dump(text: &str, cores: usize, buckets: u64) -> Dump {
    let d = parse_dump(text);
    assert!(
        d.other.is_empty(),
        "lines rteval cannot parse: {:?}",
        d.other
    );
    let idx: Vec<u64> = d.rows.iter().map(|r| r.0).collect();
    assert_eq!(
        idx,
        (0..buckets).collect::<Vec<_>>(),
        "legacy layout: every row"
    );
    for (b, r) in &d.rows {
        assert_eq!(r.len(), cores, "row {b}: one column per thread");
    }
    let sums: Vec<u64> = (0..cores)
        .map(|i| d.rows.iter().map(|r| r.1[i]).sum())
        .collect();
    assert_eq!(d.total.as_ref(), Some(&sums), "# Total: is the column sums");
    for v in [&d.min, &d.avg, &d.max, &d.overflows] {
        assert_eq!(v.len(), cores, "one value per thread: {d:?}");
    }
    assert_eq!(d.overflow_cycles.len(), cores);
    #[allow(clippy::needless_range_loop)] // i indexes six per-thread vectors
    for i in 0..cores {
        assert!(
            sums[i] + d.overflows[i] > 0,
            "thread {i} measured nothing (rteval: samples 0)"
        );
        let (listed, others) = d.overflow_cycles[i];
        assert_eq!(listed as u64 + others, d.overflows[i], "thread {i}");
        assert!(listed as u64 <= buckets);
        let first = d.rows.iter().find(|r| r.1[i] > 0).map(|r| r.0);
        let last = d.rows.iter().rev().find(|r| r.1[i] > 0).map(|r| r.0);
        if let Some(first) = first {
            assert_eq!(d.min[i], first, "thread {i}: Min is the first non-zero row");
        } else {
            assert!(d.min[i] >= buckets, "thread {i}: all samples overflowed");
        }
        if d.overflows[i] == 0 {
            assert_eq!(
                Some(d.max[i]),
                last,
                "thread {i}: Max is the last non-zero row"
            );
        } else {
            assert!(d.max[i] >= buckets, "thread {i}: overflows above {buckets}");
        }
        assert!(
            d.min[i] <= d.avg[i] && d.avg[i] <= d.max[i],
            "thread {i}: {d:?}"
        );
    }
    let (samples, max) = rteval_samples(text, cores).expect("rteval parses every row");
    assert_eq!(samples, sums);
    assert_eq!(max, d.max);
    d
}

/// rteval 3.x's argv (`_WorkloadPrepare` with its defaults: interval 100, buckets 3500,
/// priority 95, the online CPUs), run through the `cyclictest` link and stopped as
/// rteval stops it; standard output goes to a file as rteval's tempfile.
fn run_like_rteval(dir: &Path, argv: &[String], cores: usize) -> (String, ExitStatus) {
    let out = dir.join(format!("stdout-{}", argv.len()));
    let mut child = dies_with_test(&mut Command::new(dir.join("cyclictest")))
        .args(argv)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Every thread has samples to dump (rteval reads a thread without any as broken).
    wait_samples(child.id(), "rtbench-T", cores, 50);
    let st = stop_like_rteval(&mut child);
    (std::fs::read_to_string(&out).unwrap(), st)
}

#[test]
fn rteval_drives_rtbench_as_cyclictest_and_reads_every_number() {
    let dir = links("rteval");
    let (list, n) = cpulist();
    let shapes: Vec<Vec<String>> = vec![
        // rteval 3.x with a cpulist (3.5, 3.6, main).
        vec![
            "-i100".into(),
            "-qmu".into(),
            "-h 3500".into(),
            "-p95".into(),
            format!("-t{n}"),
            format!("-a{list}"),
        ],
        // rteval 3.0–3.6 without one: bare -t and -a; and an unset interval (""),
        // as `'interval' in cfg and ... or ""` gives.
        vec![
            String::new(),
            "-qmu".into(),
            "-h 3500".into(),
            "-p95".into(),
            "-t".into(),
            "-a".into(),
        ],
    ];
    for argv in &shapes {
        let (text, st) = run_like_rteval(&dir, argv, n);
        assert_eq!(
            st.code(),
            Some(0),
            "{argv:?}: SIGINT ends the run with cyclictest's status 0\n{text}"
        );
        assert!(
            text.ends_with("\n\n"),
            "{argv:?}: the dump is complete:\n{text}"
        );
        assert!(text.starts_with("# /dev/cpu_dma_latency set to 0us\n# Histogram\n"));
        check_dump(&text, n, 3500);
    }
}

#[test]
fn rteval_dump_agrees_with_json_of_the_same_run() {
    let dir = links("rteval-json");
    let (list, n) = cpulist();
    let json = dir.join("r.json");
    let argv: Vec<String> = vec![
        "-i100".into(),
        "-qmu".into(),
        "-h 3500".into(),
        "-p95".into(),
        format!("-t{n}"),
        format!("-a{list}"),
        format!("--json={}", json.display()),
    ];
    let (text, _) = run_like_rteval(&dir, &argv, n);
    let d = check_dump(&text, n, 3500);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(v["cmdline:"].as_str().unwrap().ends_with(&format!(
        "cyclictest -i100 -qmu -h 3500 -p95 -t{n} -a{list} --json={}",
        json.display()
    )));
    for i in 0..n {
        let t = &v["thread"][i.to_string()];
        let rows: u64 = d.rows.iter().map(|r| r.1[i]).sum();
        assert_eq!(
            t["cycles"].as_u64(),
            Some(rows + d.overflows[i]),
            "thread {i}"
        );
        assert_eq!(t["min"].as_u64(), Some(d.min[i]));
        assert_eq!(t["max"].as_u64(), Some(d.max[i]));
        assert_eq!(
            t["cpu"].as_i64(),
            Some(i as i64),
            "-a{list}: thread {i} on CPU {i}"
        );
        let hist = t["histogram"].as_object().unwrap();
        let nonzero: Vec<(u64, u64)> = d
            .rows
            .iter()
            .filter(|r| r.1[i] > 0)
            .map(|r| (r.0, r.1[i]))
            .collect();
        let mut json_rows: Vec<(u64, u64)> = hist
            .iter()
            .map(|(k, c)| (k.parse().unwrap(), c.as_u64().unwrap()))
            .collect();
        json_rows.sort_unstable();
        assert_eq!(
            json_rows, nonzero,
            "thread {i}: JSON buckets are the dump's rows"
        );
        let x = &v["rtbench"]["threads"][i];
        assert_eq!(x["histogram_overflows"].as_u64(), Some(d.overflows[i]));
    }
}

/// The argv shapes of docs/COMPAT.md's table that finish on their own (`-l`), by source.
fn cyclictest_shapes(n: usize, list: &str) -> Vec<(&'static str, Vec<String>)> {
    let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let shapes = vec![
        (
            "rteval 3.x",
            [
                v(&["-i100", "-qmu", "-h 3500", "-p95"]),
                vec![format!("-t{n}"), format!("-a{list}"), "-l50".into()],
            ]
            .concat(),
        ),
        (
            "rteval <= 3.6, no cpulist",
            v(&["", "-qmu", "-h 3500", "-p95", "-t", "-a", "-l50"]),
        ),
        (
            "rteval 2.x",
            v(&["-i100", "-qmu", "-h 3500", "-p95", "--smp", "-l50"]),
        ),
        (
            "Linaro test-definitions",
            v(&[
                "-p", "98", "-i", "1000", "-t", "1", "-a", "0", "-D", "1m", "-m", "-l", "20", "-q",
            ]),
        ),
        (
            "rt-tests/OSADL classic",
            v(&["-m", "-Sp99", "-i1000", "-h800", "-q", "-l20"]),
        ),
        (
            "getopt: abbreviations, =",
            v(&[
                "--int=500",
                "--lo",
                "20",
                "--prior",
                "80",
                "--thr=2",
                "--qu",
            ]),
        ),
        (
            "getopt: bundle ending in a value",
            v(&["-qh", "100", "-p80", "-l", "20"]),
        ),
        (
            "cyclictest: -h and -H together, the last one's buckets",
            v(&["-h", "30", "-H", "30", "-t", "2", "-p80", "-l20", "-q"]),
        ),
        (
            "cyclictest: -H then -h",
            v(&["-H5", "-h8", "-t2", "-p80", "-l20", "-q"]),
        ),
        (
            "libnuma cpu string: all but CPU 0",
            v(&["-a", "!0", "-t", "-p80", "-l20", "-q"]),
        ),
        (
            "libnuma cpu string: relative, all but 0 attached",
            v(&["-a!+0", "-t", "-i1000", "-p80", "-l20", "-q"]),
        ),
        (
            "getopt: long options with values",
            v(&[
                "--histogram=100",
                "--smp",
                "--priority=80",
                "--loops=20",
                "--quiet",
            ]),
        ),
    ];
    // `!0` leaves no CPU on a machine with one.
    shapes
        .into_iter()
        .filter(|(source, _)| n > 1 || !source.starts_with("libnuma"))
        .collect()
}

/// What a run printed that depends on how its argv was read: per `T:` line the
/// thread, priority and interval; for a dump the row indices, the columns per row and
/// the trailer's line heads.
fn reading(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for l in text.lines() {
        if l.starts_with("T:") {
            let f: Vec<&str> = l.split_whitespace().collect();
            let keep: Vec<&str> = f
                .iter()
                .copied()
                .filter(|x| x.starts_with("P:") || x.starts_with("I:"))
                .collect();
            out.push(format!("T{} {}", f[1], keep.join(" ")));
        } else if l.as_bytes().first().is_some_and(u8::is_ascii_digit) {
            let n = l.split_whitespace().count();
            out.push(format!("row {} cols {n}", &l[..6]));
        } else if let Some(h) = l.strip_prefix("# ") {
            out.push(h.split(':').next().unwrap().to_string());
        }
    }
    out
}

#[test]
fn readme_argv_shapes_mean_the_same_to_cyclictest_and_rtbench() {
    let dir = links("shapes");
    let (list, n) = cpulist();
    for (source, argv) in cyclictest_shapes(n, &list) {
        let theirs = Command::new("cyclictest")
            .args(&argv)
            .output()
            .expect("cyclictest (Debian package rt-tests) must be installed");
        let ours = Command::new(dir.join("cyclictest"))
            .args(&argv)
            .output()
            .unwrap();
        assert!(theirs.status.success(), "{source}: cyclictest {argv:?}");
        assert!(
            ours.status.success(),
            "{source}: rtbench as cyclictest {argv:?}: {}",
            stderr(&ours)
        );
        let (a, b) = (reading(&stdout(&ours)), reading(&stdout(&theirs)));
        assert!(!a.is_empty(), "{source}: {}", stdout(&ours));
        // With a dump the trailer's "# Thread N" lines come once per thread, the
        // "# /dev/cpu_dma_latency" line once: the whole reading must agree.
        assert_eq!(a, b, "{source}: {argv:?}");
    }
}

#[test]
fn unimplemented_cyclictest_options_fail_by_name_when_called_as_cyclictest() {
    let dir = links("unimpl");
    for (args, named) in [
        (&["-s", "-l1"][..], "-s: cyclictest option --system"),
        (&["-qsm", "-l1"], "-s: cyclictest option --system"),
        (&["-M"], "-M: cyclictest option --refresh_on_max"),
        (&["--smi"], "--smi: cyclictest option"),
        (&["--spike=10"], "--spike: cyclictest option"),
        (&["--notrace"], "--notrace: cyclictest option"),
    ] {
        // An option that became implemented would measure instead of refusing: `timeout`
        // ends it (exit 124) rather than the suite.
        let o = Command::new("timeout")
            .args(["-k", "5", "60"])
            .arg(dir.join("cyclictest"))
            .args(args)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(o.stdout.is_empty());
        let e = stderr(&o);
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(e.starts_with(&format!("rtbench: {named}")), "{e}");
        assert!(
            e.trim_end().ends_with("is not implemented by rtbench"),
            "{e}"
        );
    }
}

/// Key paths of a JSON document, thread numbers as `N`, without rtbench's extension
/// object and without the bucket keys inside `"histogram"` (they are data).
fn keys(v: &Value, prefix: &str, out: &mut BTreeSet<String>) {
    if let Value::Object(m) = v {
        for (k, val) in m {
            if k == "rtbench" || prefix.ends_with(".histogram") {
                continue;
            }
            let k = if prefix.ends_with(".thread") { "N" } else { k };
            let p = format!("{prefix}.{k}");
            out.insert(p.clone());
            keys(val, &p, out);
        }
    }
}

/// The key paths of a `--json` file. cyclictest writes a bare `-nan` average for a
/// thread that had no cycle yet (a loaded host, `-l` reached by another thread first):
/// not JSON, read as null here as rtbench's own reader does (results/read/json.rs) —
/// the keys are the same either way.
fn json_keys(path: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let text = [": -nan", ": nan", ": -inf", ": inf"]
        .iter()
        .fold(text, |t, bad| t.replace(bad, ": null"));
    let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    let mut k = BTreeSet::new();
    keys(&v, "", &mut k);
    k
}

#[test]
fn json_key_sets_equal_rt_tests_2_4_for_the_same_flags() {
    let dir = links("json");
    for (program, flags) in [
        ("cyclictest", "-q -l 100 -t 2 -p 80"),
        ("cyclictest", "-q -l 100 -t 2 -p 80 -h 50"),
        ("cyclictest", "-q -l 100 -S -p 80 -N"),
        ("pmqtest", "-q -l 100 -t 2 -p 80"),
        ("pmqtest", "-Sp99 -i100 -d0 -l 100 -q"),
    ] {
        let (a, b) = (dir.join("ours.json"), dir.join("theirs.json"));
        let args: Vec<&str> = flags.split_whitespace().collect();
        let ours = Command::new(dir.join(program))
            .args(&args)
            .arg(format!("--json={}", a.display()))
            .output()
            .unwrap();
        let theirs = Command::new(program)
            .args(&args)
            .arg(format!("--json={}", b.display()))
            .output()
            .unwrap();
        assert!(
            ours.status.success(),
            "{program} {flags}: {}",
            stderr(&ours)
        );
        assert!(theirs.status.success(), "{program} {flags}");
        let (ka, kb) = (json_keys(&a), json_keys(&b));
        assert_eq!(ka, kb, "{program} {flags}");
        if program == "cyclictest" {
            // 2.4 writes "histogram" in every thread, {} without -h.
            assert!(ka.contains(".thread.N.histogram"), "{ka:?}");
        }
    }
}

/// `#1 -> #0, Min    4, Cur    4, Avg    5, Max    9` → (from, to, min, avg, max), as
/// Linaro's `parse_rt_tests_results.py` splits it.
fn pmq_result(l: &str) -> Option<(String, String, u64, u64, u64)> {
    let f: Vec<&str> = l
        .split([' ', ',', ':', '\n'])
        .filter(|s| !s.is_empty())
        .collect();
    let at = |k: &str| -> Option<u64> {
        let i = f.iter().position(|x| x.eq_ignore_ascii_case(k))?;
        f.get(i + 1)?.parse().ok()
    };
    if !l.starts_with('#') || !l.contains("->") {
        return None;
    }
    Some((
        f[0].trim_start_matches('#').to_string(),
        f[2].trim_start_matches('#').to_string(),
        at("Min")?,
        at("Avg")?,
        at("Max")?,
    ))
}

/// Linaro's `parse_rt_tests_results.py` on pmqtest's output: each line where it finds
/// one of min/avg/max must have all three (it raises KeyError otherwise).
fn linaro_parses(text: &str) {
    for l in text.lines() {
        let f: Vec<String> = l
            .split([' ', ',', ':'])
            .filter(|s| !s.is_empty())
            .map(|s| s.to_lowercase())
            .collect();
        let has = |k: &str| f.iter().any(|x| x == k);
        if has("min") || has("avg") || has("max") {
            assert!(
                has("min") && has("avg") && has("max"),
                "Linaro's parser fails on {l:?}"
            );
        }
    }
}

/// The last block of pmqtest result lines on standard output of a run with `pairs`
/// pairs, checked against rtbench's `# #1 -> #0 P50:… Max:…` summary lines (standard
/// error when called as pmqtest).
fn check_pmq_text(out: &str, err: &str, pairs: usize) -> Vec<(String, String, u64, u64, u64)> {
    linaro_parses(out);
    let results: Vec<_> = out.lines().filter_map(pmq_result).collect();
    assert!(results.len() >= pairs, "{out}");
    let last = results[results.len() - pairs..].to_vec();
    for (i, (from, to, min, avg, max)) in last.iter().enumerate() {
        assert_eq!(
            (from.as_str(), to.as_str()),
            (&*(2 * i + 1).to_string(), &*(2 * i).to_string())
        );
        assert!(min <= avg && avg <= max, "{out}");
        let summary = err
            .lines()
            .find(|l| l.starts_with(&format!("# #{from} -> #{to} P50:")))
            .unwrap_or_else(|| panic!("summary of #{from} on standard error: {err}"));
        let smax: u64 = summary
            .split("Max:")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .and_then(|m| m.parse().ok())
            .unwrap();
        assert_eq!(*max, smax, "{summary}");
    }
    last
}

#[test]
fn pmqtest_common_invocations() {
    let dir = links("pmq");
    let n = online_cpus();
    // Linaro test-definitions: `pmqtest -S -D 5m | tee LOG`, parsed line by line.
    let o = Command::new(dir.join("pmqtest"))
        .args(["-S", "-D", "2"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    check_pmq_text(&stdout(&o), &stderr(&o), n);
    assert!(Command::new("pmqtest")
        .args(["-S", "-D", "1"])
        .output()
        .unwrap()
        .status
        .success());

    // pmqtest(8): `pmqtest -Sp99 -i100 -d0`, endless, stopped with SIGINT; standard
    // output read to the end through a pipe.
    let mut child = dies_with_test(&mut Command::new(dir.join("pmqtest")))
        .args(["-Sp99", "-i100", "-d0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_samples(child.id(), "rtbench-S", n, 20);
    signal(child.id(), libc::SIGINT);
    let mut err_pipe = child.stderr.take().unwrap();
    let err_reader = std::thread::spawn(move || {
        let mut e = String::new();
        err_pipe.read_to_string(&mut e).unwrap();
        e
    });
    let mut text = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
    assert_eq!(
        child.wait().unwrap().code(),
        Some(0),
        "pmqtest 2.4 exits 0 after SIGINT"
    );
    check_pmq_text(&text, &err_reader.join().unwrap(), n);
    let headers: Vec<&str> = text.lines().filter(|l| l.contains(", Cycles ")).collect();
    let last = &headers[headers.len() - n..];
    for (i, h) in last.iter().enumerate() {
        assert!(
            h.starts_with(&format!("#{}: ID", 2 * i))
                && h.contains(", P99, ")
                && h.contains(", I100; "),
            "-Sp99 -i100 -d0: {h}"
        );
    }

    // The same with -q and --json: the JSON numbers are the text's.
    let json = dir.join("pmq.json");
    let o = Command::new(dir.join("pmqtest"))
        .args(["-Sp99", "-i100", "-d0", "-l", "300", "-q"])
        .arg(format!("--json={}", json.display()))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let last = check_pmq_text(&stdout(&o), &stderr(&o), n);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    for (i, (_, _, min, avg, max)) in last.iter().enumerate() {
        let t = &v["thread"][i.to_string()];
        assert_eq!(t["sender"]["samples"].as_u64(), Some(300));
        assert_eq!(t["sender"]["priority"].as_u64(), Some(99));
        assert_eq!(t["sender"]["interval"].as_u64(), Some(100));
        assert_eq!(t["receiver"]["min"].as_u64(), Some(*min));
        assert_eq!(t["receiver"]["max"].as_u64(), Some(*max));
        let javg = t["receiver"]["avg"].as_f64().unwrap();
        assert!((javg - *avg as f64).abs() < 1.0, "avg {javg} vs {avg}");
    }

    // pmqtest's -h is its help.
    let o = Command::new(dir.join("pmqtest"))
        .arg("-h")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("Usage: rtbench pmq"), "{}", stdout(&o));
}

#[test]
fn called_as_cyclictest_the_dump_is_the_rt_tests_2_6_layout_unless_told() {
    let dir = links("layout");
    let run = |extra: &[&str]| {
        let o = Command::new(dir.join("cyclictest"))
            .args(["-q", "-l", "20", "-h", "30", "-p", "80"])
            .args(extra)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
    };
    let legacy = run(&[]);
    assert!(legacy.contains("# Total:"), "{legacy}");
    assert_eq!(parse_dump(&legacy).rows.len(), 30);
    let current = run(&["--histogram-layout", "current"]);
    assert!(!current.contains("# Total:"), "{current}");
    // rtbench cyclic keeps the 2.7+ layout by default.
    let o = run_rtbench(&["cyclic", "-q", "-l", "20", "-h", "30", "-p", "80"]);
    assert!(!o.contains("# Total:"), "{o}");
}

fn run_rtbench(args: &[&str]) -> String {
    let o = rtbench().args(args).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    stdout(&o)
}

#[test]
fn unbuffered_lines_reach_a_pipe_while_the_run_goes_on() {
    let dir = links("unbuffered");
    let mut child = dies_with_test(&mut Command::new(dir.join("cyclictest")))
        .args([
            "-u",
            "-p",
            "80",
            "-i",
            "1000",
            "-D",
            "10m",
            "--report-interval",
            "0.2",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    // The first T: line arrives while rtbench runs (a reader thread, so that a missing
    // line fails the test after a generous bound instead of hanging it).
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        for l in lines.by_ref() {
            let l = l.unwrap();
            if l.starts_with("T: 0") {
                tx.send(()).unwrap();
                break;
            }
        }
        lines.map(|l| l.unwrap()).collect::<Vec<_>>()
    });
    rx.recv_timeout(BOUND)
        .expect("a T: line on the pipe before the run ends");
    assert!(child.try_wait().unwrap().is_none(), "still running");
    signal(child.id(), libc::SIGINT);
    assert_eq!(
        child.wait().unwrap().code(),
        Some(0),
        "cyclictest's status after SIGINT"
    );
    let rest = reader.join().unwrap();
    assert!(
        rest.iter().any(|l| l.starts_with("T: 0")),
        "final T: lines: {rest:?}"
    );
}

/// cyclictest 2.4 and pmqtest 2.4 exit 0 however the run ends (SIGINT, SIGTERM, `-b`):
/// the real tools are run beside rtbench under those names, and rtbench called as
/// `rtbench cyclic` keeps its own codes (130, 143, 1).
#[test]
fn exit_status_as_the_rt_tests_programs() {
    let dir = links("exit-status");
    let (list, _) = cpulist();
    let one = list.split([',', '-']).next().unwrap().to_string();
    let stopped = |prog: &Path, sig: i32| {
        let mut child = Command::new(prog)
            .args(["-q", "-m", "-p80", "-i1000", "-D30", "-a", &one])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        if prog == Path::new("cyclictest") {
            wait_cyclictest_threads(child.id(), 2);
        } else {
            wait_measuring(child.id(), "rtbench-T", 1);
        }
        signal(child.id(), sig);
        child.wait().unwrap().code()
    };
    for (sig, ours) in [(libc::SIGINT, 130), (libc::SIGTERM, 143)] {
        assert_eq!(
            stopped(Path::new("cyclictest"), sig),
            Some(0),
            "real cyclictest, signal {sig}"
        );
        assert_eq!(
            stopped(&dir.join("cyclictest"), sig),
            Some(0),
            "rtbench as cyclictest, signal {sig}"
        );
        let mut child = Command::new(crate::common::exe())
            .args(["cyclic", "-q", "-m", "-p80", "-i1000", "-D30", "-a", &one])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        wait_measuring(child.id(), "rtbench-T", 1);
        signal(child.id(), sig);
        assert_eq!(
            child.wait().unwrap().code(),
            Some(ours),
            "rtbench cyclic, signal {sig}"
        );
    }
    // -b 1: the first wake-up later than 1 µs stops the run (and turns tracing off).
    let _tracing = TracingOnGuard::save();
    let b = ["-q", "-m", "-p80", "-i1000", "-D10", "-b", "1"];
    let o = Command::new("cyclictest").args(b).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "real cyclictest -b");
    let o = Command::new(dir.join("cyclictest"))
        .args(b)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "rtbench as cyclictest -b: {}",
        stderr(&o)
    );
    assert!(stdout(&o).contains("# Break value: "), "{}", stdout(&o));
    let o = Command::new(crate::common::exe())
        .arg("cyclic")
        .args(b)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(1),
        "rtbench cyclic -b: {}",
        stderr(&o)
    );
}
