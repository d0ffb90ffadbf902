//! `rtbench compare`: its statistics on synthetic `-h` dumps (deterministic: twenty runs
//! of one distribution never regress, a longer tail does, a short run is undecided), and
//! on runs made here only an effect far larger than any host noise (a measuring thread
//! that a SCHED_FIFO load above it preempts regresses against a stored idle run and
//! against cyclictest 2.4's own `--json`); cyclictest's `-h` dump and its JSON of the
//! same run read alike; `--plot` overlays the runs. No latency value is asserted: only
//! what the comparison says.

use crate::common::generated;
use crate::common::*;
use std::path::{Path, PathBuf};

/// A 1-s self-test storing into `dir/results` (keep 25); `body` adds sections.
fn selftest(dir: &Path, body: &str) -> std::process::Output {
    let text = format!(
        "{body}\n[selftest]\nmode = \"off\"\nduration = \"1s\"\n[output]\nresults_dir = \"{}\"\n\
         fallback_dir = \"{}\"\nkeep = 25\n",
        dir.join("results").display(),
        dir.join("run").display()
    );
    let cfg = dir.join("rtbench.toml");
    std::fs::write(&cfg, on_any_kernel(&text)).unwrap();
    selftest_logfmt(&cfg)
}

fn stored_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir.join("results"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    v.sort();
    v
}

fn compare(args: &[&Path], extra: &[&str]) -> (Option<i32>, String) {
    let o = rtbench()
        .arg("compare")
        .args(args)
        .args(extra)
        .output()
        .unwrap();
    (o.status.code(), format!("{}{}", stdout(&o), stderr(&o)))
}

/// The load that makes the measuring thread (SCHED_FIFO 1 on `cpu`) wait: stress-ng at
/// SCHED_FIFO 2 on the same CPU, busy half of every 2 ms.
fn preempting_load(cpu: usize) -> String {
    format!(
        "chrt -f 2 stress-ng --cpu 1 --cpu-load 50 --cpu-load-slice 1 --taskset {cpu} --timeout 20"
    )
}

/// A cyclictest `-h 1000` dump (rt-tests 2.7+ layout, one thread) of `n` synthetic
/// wake-up latencies in µs drawn with seed `seed`: 10 µs plus a geometric tail of mean
/// `tail_us`, the occasional (1 in 5,000) long one up to 10 × `tail_us` more. Runs with
/// the same `tail_us` come from one distribution; only their samples differ.
fn synthetic_dump(seed: u64, n: u64, tail_us: f64) -> String {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut uniform = move || {
        // xorshift64*: deterministic, independent of any crate's generator.
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut counts = vec![0u64; 1000];
    let (mut sum, mut min, mut max) = (0u64, u64::MAX, 0u64);
    for _ in 0..n {
        let mut v = 10.0 - tail_us * (1.0 - uniform()).ln();
        if uniform() < 1.0 / 5000.0 {
            v += 10.0 * tail_us * uniform();
        }
        let v = (v as u64).min(999);
        counts[v as usize] += 1;
        sum += v;
        min = min.min(v);
        max = max.max(v);
    }
    let mut out = String::from("# Histogram\n");
    for (b, c) in counts.iter().enumerate().filter(|(_, c)| **c > 0) {
        out += &format!("{b:06} {c:06}\n");
    }
    out += &format!(
        "# Min Latencies: {min:05}\n# Avg Latencies: {:05}\n# Max Latencies: {max:05}\n\
         # Histogram Overflows: 00000\n# Histogram Overflow at cycle number:\n# Thread 0:\n",
        sum / n
    );
    out
}

/// The statistics on synthetic data, deterministic whatever the host does: twenty runs
/// of one distribution compared with the first are never a regression (each is
/// EQUIVALENT or INCONCLUSIVE, never REGRESSION); a run whose tail is four times longer
/// is a regression named at its percentiles; the same data twice is equivalent where
/// decided; a run too short to decide its tail is INCONCLUSIVE with exit 0, never a pass
/// nor a regression (the samples-above rule: a percentile rests on the samples above it).
#[test]
fn synthetic_runs_of_one_distribution_never_regress_a_longer_tail_does() {
    let dir = TempDir::new("cmp-synthetic");
    let write = |name: &str, text: String| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let same: Vec<PathBuf> = (0..20)
        .map(|k| {
            write(
                &format!("same{k:02}.txt"),
                synthetic_dump(k + 1, 200_000, 3.0),
            )
        })
        .collect();
    let refs: Vec<&Path> = same.iter().map(PathBuf::as_path).collect();
    let (code, text) = compare(&refs, &[]);
    assert_eq!(code, Some(0), "{text}");
    assert!(!text.contains("REGRESSION"), "{text}");
    assert!(!text.lines().any(|l| l.ends_with(" regression")), "{text}");
    assert_eq!(text.matches(" against A: ").count(), 19, "{text}");

    let longer = write("longer.txt", synthetic_dump(99, 200_000, 12.0));
    let (code, text) = compare(&[&same[0], &longer], &[]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("verdict B against A: REGRESSION"), "{text}");
    assert!(text.lines().any(|l| l.ends_with(" regression")), "{text}");
    // And the other way round it is an improvement, not a regression.
    let (code, text) = compare(&[&longer, &same[0]], &[]);
    assert_eq!(code, Some(0), "{text}");
    assert!(!text.contains("REGRESSION"), "{text}");

    let (code, text) = compare(&[&same[0], &same[0]], &[]);
    assert_eq!(code, Some(0), "{text}");
    assert!(!text.contains("REGRESSION"), "{text}");

    let short = write("short.txt", synthetic_dump(7, 300, 3.0));
    let (code, text) = compare(&[&short, &short], &[]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("verdict B against A: INCONCLUSIVE (no regression found; ")
            && text.contains("statistic(s) undecided"),
        "{text}"
    );
}

/// Live runs, asserting only an effect far larger than any host noise: a measuring
/// thread at SCHED_FIFO 1 that a SCHED_FIFO 2 load on its CPU keeps from running for up
/// to a millisecond at a time regresses against an idle stored run and against
/// cyclictest 2.4's own `--json` (neither of which a SCHED_OTHER host load can delay
/// past its FIFO priority); cyclictest's `-h` dump and its JSON of one run read alike;
/// `--plot` overlays the runs.
#[test]
fn a_preempted_run_regresses_against_idle_runs_and_cyclictest() {
    let _serial = lock::exclusive();
    let last = online_cpus() - 1;
    let idle = TempDir::new("cmp-idle");
    selftest(&idle, "");
    let runs = stored_files(&idle);
    assert_eq!(runs.len(), 1);

    // The loaded run: CPU `last` at FIFO 1 under the FIFO 2 load.
    let loaded = TempDir::new("cmp-load");
    let body = format!(
        "[cyclic]\ncpus = \"{last}\"\npriority = 1\n[load]\ncmd = \"{}\"\ncpus = \"{last}\"\n",
        preempting_load(last)
    );
    let o = selftest(&loaded, &body);
    let loaded_run = stored_files(&loaded);
    assert_eq!(loaded_run.len(), 1, "{}", stderr(&o));
    let svg = loaded.join("overlay.svg");
    let (code, text) = compare(
        &[&runs[0], &loaded_run[0]],
        &["--plot", svg.to_str().unwrap()],
    );
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("verdict B against A: REGRESSION"), "{text}");
    assert!(text.contains(&format!("cyclic CPU {last} p")), "{text}");
    // What differs names the load (and the stored tuning, version … alike).
    assert!(
        text.contains("load: none → cmd: chrt -f 2 stress-ng"),
        "{text}"
    );
    let plot = std::fs::read_to_string(&svg).unwrap();
    assert!(plot.contains(&format!("A CPU {last}")) && plot.contains(&format!("B CPU {last}")));

    // cyclictest 2.4 itself: one idle run as its -h dump and its JSON read alike, and
    // the preempted stored run regresses against it.
    let ct = TempDir::new("cmp-ct");
    let json = ct.join("ct.json");
    let o = cyclictest(&format!(
        "-m -a {last} -p 1 -i 1000 -D 1 -q -h 5000 --json={}",
        json.display()
    ));
    let dump = ct.join("ct.txt");
    std::fs::write(&dump, &o.stdout).unwrap();
    let (code, text) = compare(&[&dump, &json], &[]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("cyclictest --json"), "{text}");
    assert!(
        !text.contains("REGRESSION") && !text.contains("only in"),
        "{text}"
    );
    let (code, text) = compare(&[&json, &loaded_run[0]], &[]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("verdict B against A: REGRESSION"), "{text}");
}

/// Two short runs of one CPU each: compared with itself a run has too few samples to
/// decide its tail, which is INCONCLUSIVE with the reason, exit 0; against a run of
/// another CPU there is nothing to compare, exit 2 (a CI job must not read it as a pass).
#[test]
fn undecided_statistics_are_not_equivalent_and_nothing_in_common_is_not_a_pass() {
    let dir = TempDir::new("cmp-small");
    let run = |cpu: usize, name: &str| {
        let f = dir.join(name);
        let o = rtbench()
            .args([
                "cyclic", "-m", "-p", "80", "-i", "1000", "-l", "300", "-q", "-h", "2000",
            ])
            .args(["-a", &cpu.to_string(), "--json"])
            .arg(&f)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        f
    };
    let last = online_cpus() - 1;
    let a = run(last, "a.json");
    let (code, text) = compare(&[&a, &a], &[]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("verdict B against A: INCONCLUSIVE (no regression found; ")
            && text.contains("statistic(s) undecided"),
        "{text}"
    );
    if last > 0 {
        let b = run(0, "b.json");
        let (code, text) = compare(&[&a, &b], &[]);
        assert_eq!(code, Some(2), "{text}");
        assert!(text.contains("nothing in common with A"), "{text}");
        assert!(text.contains("only in B"), "{text}");
    }
}

/// A baseline and a candidate shifted 1 ms up, generated: `tests` tests × `conditions`
/// conditions × `cpus` CPUs.
fn generated_pair(dir: &Path, tests: usize, conditions: usize, cpus: usize) -> [PathBuf; 2] {
    let a = dir.join("a.json");
    let b = dir.join("b.json");
    std::fs::write(&a, generated::stored_result(tests, conditions, cpus, 30, 0)).unwrap();
    std::fs::write(
        &b,
        generated::stored_result(tests, conditions, cpus, 30, 1_000_000),
    )
    .unwrap();
    [a, b]
}

#[test]
fn compare_at_scale_judges_every_test_and_cpu_of_each_input() {
    let dir = TempDir::new("compare-scale");
    // 300 tests of 2 CPUs; 20 conditions of one test on 128 CPUs.
    for (tests, conditions, cpus) in [(300, 0, 2), (1, 20, 128)] {
        let [a, b] = generated_pair(dir.path(), tests, conditions, cpus);
        let (code, out) = compare(&[&a, &b], &[]);
        assert_eq!(code, Some(1), "{out}");
        let tables = out.lines().filter(|l| l.ends_with("  verdict")).count();
        assert_eq!(tables, tests * conditions.max(1) * cpus, "{}", &out[..2000]);
        let last = out.lines().last().unwrap_or_default();
        assert!(
            last.starts_with("verdict B against A: REGRESSION: "),
            "{last}"
        );
        // Conditions are told apart: CONDITION/TEST.
        if conditions > 0 {
            assert!(out.contains("\nc19/cyclic CPU 127 "), "{}", &out[..2000]);
        }
    }
}

#[test]
fn every_argument_is_checked_before_anything_is_printed_or_written() {
    let dir = TempDir::new("compare-args");
    let [a, b] = generated_pair(dir.path(), 2, 0, 2);
    let svg = dir.path().join("overlay.svg");
    let svg_s = svg.display().to_string();
    // An unknown --test: exit 2 with one line naming it, nothing printed, no plot.
    let o = rtbench()
        .arg("compare")
        .args([&a, &b])
        .args(["--plot", &svg_s, "--test", "nosuch"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(stdout(&o), "");
    let err = stderr(&o);
    assert!(
        err.starts_with(
            "rtbench: --test nosuch: no run has this test; expected one of: cyclic, cyclic1"
        ),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!svg.exists());
    // A negative tolerance names the option and what it expects.
    for (flag, expected) in [
        ("--tolerance", "expected 0..10000 %"),
        ("--tolerance-us", "expected 0..1000000 µs"),
    ] {
        let o = rtbench()
            .arg("compare")
            .args([&a, &b])
            .args([flag, "-1"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2));
        assert_eq!(stdout(&o), "");
        let err = stderr(&o);
        assert!(err.contains(flag) && err.contains(expected), "{err}");
        assert!(!err.contains("unexpected argument"), "{err}");
    }
}

#[test]
fn an_output_that_is_one_of_the_inputs_is_refused_by_inode_not_name() {
    let dir = TempDir::new("compare-same-file");
    let [a, b] = generated_pair(dir.path(), 1, 0, 1);
    let before = std::fs::read(&b).unwrap();
    let hard = dir.path().join("hard.json");
    std::fs::hard_link(&b, &hard).unwrap();
    let soft = dir.path().join("soft.json");
    std::os::unix::fs::symlink(&a, &soft).unwrap();
    let dotted = dir.path().join(".").join("b.json");
    // The newest run of a results directory given as a RUN.
    let store = dir.path().join("results");
    std::fs::create_dir(&store).unwrap();
    let stored = store.join("run-1-20261201T000000Z.json");
    std::fs::copy(&a, &stored).unwrap();
    for (runs, out) in [
        ([&a, &b], &b),
        ([&a, &b], &hard),
        ([&a, &b], &soft),
        ([&a, &b], &dotted),
        ([&store, &b], &stored),
    ] {
        let (code, text) = compare(&[runs[0], runs[1]], &["--plot", &out.display().to_string()]);
        assert_eq!(code, Some(2), "{}: {text}", out.display());
        assert!(
            text.contains("--plot") && text.contains("is the input"),
            "{text}"
        );
        assert!(!text.contains("verdict"), "{text}");
    }
    assert_eq!(std::fs::read(&b).unwrap(), before);
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&stored).unwrap());
    // `rtbench plot -o` likewise.
    for (input, out) in [(&a, &a), (&a, &soft), (&store, &stored)] {
        let o = rtbench()
            .arg("plot")
            .arg(input)
            .arg("-o")
            .arg(out)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("-o") && stderr(&o).contains("is the input"),
            "{}",
            stderr(&o)
        );
    }
    assert!(std::fs::read_to_string(&a)
        .unwrap()
        .starts_with("{\"rtbench_version\""));
}
