//! A verdict a factory can trust: `rtbench selftest` and `rtbench report` on this
//! machine, each test named after the number of the property below it covers (p1 …):
//!
//! 1. nothing judged is not a pass (`unjudged`, exit 1, `allow_unjudged`);
//! 2. a result that could not be stored is never replaced by an older one (a real 300 KB
//!    tmpfs and a read-only bind mount, in a private mount namespace: `unshare -m`);
//! 3. every failure by name (journal, per-CPU entries, report, plot);
//! 4. µs for people, ns in fields;
//! 5. Prometheus: a missing directory is a warning; files 0644 under umask 077; the
//!    shipped unit lets the documented path be written;
//! 6. one meaning per MESSAGE_ID, every catalog `@FIELD@` in every entry of its ID;
//! 8. a hand run prints human lines; `report` reads `results_dir` from the config.
//!
//! (7, sd_notify to an abstract socket, is in tests/selftest/notify.rs.)

use crate::common::*;
use std::collections::{HashMap, HashSet};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SUMMARY: &str = "7b1dd0eea94d4cc4bd8f9e6c91b6465d";
const RESULT: &str = "b338a16c561342608e6e5ef41b0a0813";
const CONFIG: &str = "007f10bc07da46b6b3fc256220fca838";

/// A configuration measuring CPU 0 for 1 s, tuning off, with `body` and an `[output]`
/// section below `dir` (`results_dir`, `fallback_dir`, `prometheus` unless `body` has
/// its own `[output]`).
fn config(dir: &Path, name: &str, body: &str) -> PathBuf {
    let p = dir.join(name);
    let output = if body.contains("[output]") {
        String::new()
    } else {
        format!(
            "[output]\nresults_dir = \"{}\"\nfallback_dir = \"{}\"\nprometheus = \"{}\"\n",
            dir.join("results").display(),
            dir.join("run").display(),
            dir.join("rtbench.prom").display()
        )
    };
    let text = if body.contains("[selftest]") {
        format!("[cyclic]\ncpus = \"0\"\n{body}\n{output}")
    } else {
        format!("[selftest]\nmode = \"off\"\nduration = \"1s\"\n[cyclic]\ncpus = \"0\"\n{body}\n{output}")
    };
    std::fs::write(&p, crate::common::on_any_kernel(&text)).unwrap();
    p
}

fn report(cfg: &Path, extra: &[&str]) -> Output {
    rtbench()
        .args(["report", "--config"])
        .arg(cfg)
        .args(extra)
        .output()
        .unwrap()
}

fn one(e: &[HashMap<String, String>], id: &str) -> HashMap<String, String> {
    let v = with_id(e, id);
    assert_eq!(v.len(), 1, "one entry with MESSAGE_ID {id}: {e:?}");
    v[0].clone()
}

#[test]
fn p1_nothing_judged_is_unjudged_everywhere_and_fails_closed() {
    let dir = TempDir::new("v-unjudged");
    let cfg = config(&dir, "none.toml", "");
    let o = selftest_logfmt(&cfg);
    assert_eq!(o.status.code(), Some(1), "fails closed: {}", stderr(&o));
    let e = entries(&o);
    let s = one(&e, SUMMARY);
    assert_eq!(s["RTBENCH_VERDICT"], "unjudged");
    assert_eq!(s["RTBENCH_EXIT_STATUS"], "1");
    assert!(s["RTBENCH_UNJUDGED"].contains("no [limits]"), "{s:?}");
    assert!(
        s["MESSAGE"].starts_with("rtbench self-test UNJUDGED")
            && s["MESSAGE"].contains("no [limits]"),
        "the reason in the message: {s:?}"
    );
    assert_eq!(one(&e, RESULT)["RTBENCH_VERDICT"], "unjudged");
    assert!(
        stdout(&o).contains("UNJUDGED: no [limits]"),
        "{}",
        stdout(&o)
    );
    let runs = stored_results(&dir);
    assert_eq!(runs[0]["verdict"]["outcome"], "unjudged");
    assert_eq!(runs[0]["verdict"]["pass"], false);
    assert_eq!(runs[0]["exit_code"], 1);
    let prom = std::fs::read_to_string(dir.join("rtbench.prom")).unwrap();
    assert!(prom.contains("rtbench_selftest_verdict{verdict=\"unjudged\"} 1"));
    assert!(prom.contains("rtbench_selftest_pass 0"));
    let r = report(&cfg, &[]);
    assert_eq!(r.status.code(), Some(1), "{}", stdout(&r));
    assert!(
        stdout(&r).contains("rtbench self-test UNJUDGED"),
        "{}",
        stdout(&r)
    );

    // The one documented key for images that only log measurements: exit 0, verdict
    // still unjudged.
    let cfg = config(
        &dir,
        "logged.toml",
        "[selftest]\nmode = \"off\"\nduration = \"1s\"\nallow_unjudged = true\n",
    );
    let o = selftest_logfmt(&cfg);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(one(&entries(&o), SUMMARY)["RTBENCH_VERDICT"], "unjudged");
    assert_eq!(report(&cfg, &[]).status.code(), Some(0));
}

/// Runs `script` (sh) in a private mount namespace: its mounts vanish with it.
fn in_mount_namespace(script: &str) -> Output {
    Command::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-ec", script])
        .env("RTBENCH", crate::common::exe())
        .env_remove("INVOCATION_ID")
        .env_remove("RTBENCH_TRIGGER")
        .output()
        .expect("unshare (util-linux)")
}

#[test]
fn p2_an_unstored_fail_is_never_replaced_by_an_older_pass() {
    let dir = TempDir::new("v-store");
    let pass = config(&dir, "pass.toml", "[limits]\nmax_us = 10000000\n");
    config(&dir, "fail.toml", "[limits]\nmax_us = 1\n");
    for (how, setup) in [
        // 300 KB tmpfs, filled after the first (passing) run.
        (
            "full",
            "mount -t tmpfs -o size=300k rtbench-test \"$D/results\"\n\
             \"$RTBENCH\" selftest --log-format logfmt --config \"$D/pass.toml\" > \"$D/pass.out\" 2>&1\n\
             dd if=/dev/zero of=\"$D/results/filler\" bs=4k 2>/dev/null || true\n",
        ),
        // The same, then the directory turns read-only.
        (
            "read-only",
            "\"$RTBENCH\" selftest --log-format logfmt --config \"$D/pass.toml\" > \"$D/pass.out\" 2>&1\n\
             mount --bind \"$D/results\" \"$D/results\"\n\
             mount -o remount,ro,bind \"$D/results\"\n",
        ),
    ] {
        let _ = std::fs::remove_dir_all(dir.join("results"));
        let _ = std::fs::remove_dir_all(dir.join("run"));
        std::fs::create_dir_all(dir.join("results")).unwrap();
        let script = format!(
            "D='{}'\n{setup}\
             set +e\n\
             \"$RTBENCH\" selftest --log-format logfmt --config \"$D/fail.toml\" > \"$D/fail.out\" 2> \"$D/fail.err\"\n\
             echo $? > \"$D/fail.rc\"\n\
             \"$RTBENCH\" report --config \"$D/fail.toml\" > \"$D/report.out\" 2>&1\n\
             echo $? > \"$D/report.rc\"\n\
             \"$RTBENCH\" report --all --config \"$D/fail.toml\" > \"$D/all.out\" 2>&1\n\
             ls -la \"$D/results\" > \"$D/ls.txt\"\n",
            dir.display()
        );
        let o = in_mount_namespace(&script);
        assert!(o.status.success(), "{how}: {}", stderr(&o));
        let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap_or_default();
        assert!(read("pass.out").contains("PASS"), "{how}: {}", read("pass.out"));
        assert_eq!(read("fail.rc").trim(), "1", "{how}: {}", read("fail.err"));
        // The self-test's own output says it was not stored, and why.
        assert!(
            read("fail.out").contains("NOT STORED:"),
            "{how}: {}",
            read("fail.out")
        );
        let e: Vec<_> = read("fail.err")
            .lines()
            .filter(|l| l.starts_with("MESSAGE_ID="))
            .map(logfmt)
            .collect();
        let s = one(&e, SUMMARY);
        assert_eq!(s["RTBENCH_VERDICT"], "fail");
        assert_eq!(s["RTBENCH_STORED"], "0");
        assert!(s["MESSAGE"].contains("not stored: "), "{how}: {s:?}");
        // This boot's result is kept in the fallback directory, with its boot.
        let kept: serde_json::Value =
            serde_json::from_str(&read("run/unstored-run.json")).expect("fallback copy");
        assert_eq!(kept["verdict"]["outcome"], "fail");
        let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap();
        assert_eq!(kept["origin"]["boot_id"], boot.trim());
        assert_eq!(kept["origin"]["trigger"], "manual");
        assert!(kept["store_error"].as_str().unwrap().contains("results"));
        // report never shows the older PASS as this boot's: it shows the FAIL, says
        // it was not stored, exits 1.
        let rep = read("report.out");
        assert_eq!(read("report.rc").trim(), "1", "{how}: {rep}");
        assert!(rep.contains("rtbench self-test FAIL"), "{how}: {rep}");
        assert!(!rep.contains("rtbench self-test PASS"), "{how}: {rep}");
        assert!(rep.contains("was NOT STORED"), "{how}: {rep}");
        // --all shows both, each with its boot, the unstored one last.
        let all = read("all.out");
        let (p, f) = (
            all.find("self-test PASS").expect("the stored pass"),
            all.find("self-test FAIL").expect("the unstored fail"),
        );
        assert!(p < f, "{how}: {all}");
        assert!(all.contains("this boot"), "{how}: {all}");
    }

    // A stored run of another boot is never presented as this boot's.
    let _ = std::fs::remove_dir_all(dir.join("results"));
    let _ = std::fs::remove_dir_all(dir.join("run"));
    assert_eq!(selftest_logfmt(&pass).status.code(), Some(0));
    let f = std::fs::read_dir(dir.join("results"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "json"))
        .unwrap();
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
    v["origin"]["boot_id"] = "00000000-1111-2222-3333-444444444444".into();
    std::fs::write(&f, serde_json::to_vec(&v).unwrap()).unwrap();
    let r = report(&pass, &[]);
    assert_eq!(r.status.code(), Some(1), "{}", stdout(&r));
    assert!(stdout(&r).contains("NOT this boot"), "{}", stdout(&r));
    assert!(
        stdout(&r).contains("no self-test result of this boot"),
        "{}",
        stdout(&r)
    );
}

/// A results_dir that is a file (a packaging slip): the self-test names that cause, not
/// mkdir's "File exists"; `report` cannot list the store but still shows this boot's
/// fallback copy and exits 1, instead of stopping at the listing error.
#[test]
fn p2_a_results_dir_that_is_a_file_hides_nothing() {
    let dir = TempDir::new("v-file");
    std::fs::write(dir.join("results"), b"not a directory").unwrap();
    let cfg = config(&dir, "pass.toml", "[limits]\nmax_us = 10000000\n");
    let o = selftest_logfmt(&cfg);
    assert!(
        stdout(&o).contains("NOT STORED: ") && stdout(&o).contains("results: not a directory"),
        "{}",
        stdout(&o)
    );
    assert!(!stdout(&o).contains("File exists"), "{}", stdout(&o));
    assert!(dir.join("run/unstored-run.json").is_file());
    let r = report(&cfg, &[]);
    assert_eq!(r.status.code(), Some(1), "{}{}", stdout(&r), stderr(&r));
    assert!(
        stdout(&r).contains("rtbench self-test PASS"),
        "{}",
        stdout(&r)
    );
    assert!(stdout(&r).contains("was NOT STORED"), "{}", stdout(&r));
    assert!(
        stderr(&r).contains("cannot list it: not a directory"),
        "{}",
        stderr(&r)
    );
    // Nothing stored anywhere and the store unreadable: one line, exit 2 as before.
    std::fs::remove_dir_all(dir.join("run")).unwrap();
    let r = report(&cfg, &[]);
    assert_eq!(r.status.code(), Some(2), "{}", stderr(&r));
    assert_eq!(stderr(&r).lines().count(), 1, "{}", stderr(&r));
}

#[test]
fn p3_p4_every_failure_is_named_in_microseconds() {
    let _printk = serial(Resource::Printk);
    let dir = TempDir::new("v-named");
    let level = std::fs::read_to_string("/proc/sys/kernel/printk")
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    let other = if level == "3" { 2 } else { 3 };
    // p99.9 fails (1 µs), max passes (10 s): the failing statistic is p99.9, not max.
    // mode = "check" with a printk level the system does not have: a tuning deviation.
    let cfg = config(
        &dir,
        "named.toml",
        &format!(
            "[selftest]\nmode = \"check\"\nduration = \"1s\"\n[tuning.sysctl]\nprintk = {other}\n\
             [limits]\nmax_us = 10000000\np999_us = 1\n"
        ),
    );
    let o = selftest_logfmt(&cfg);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = entries(&o);
    let s = one(&e, SUMMARY);
    let msg = &s["MESSAGE"];
    assert!(
        msg.contains("cyclic CPU 0 p99.9 ") && msg.contains(" µs > limit 1 µs"),
        "test, CPU, statistic, value, limit: {msg}"
    );
    // kernel.printk holds four words: expected/found are the whole file's words.
    let deviation = format!("tuning sysctl.kernel.printk deviation: expected {other} ");
    assert!(
        msg.contains(&deviation) && msg.contains(&format!(", found {level} ")),
        "item, expected, found: {msg}"
    );
    assert!(!msg.contains(" ns"), "people read µs: {msg}");
    assert_eq!(s["RTBENCH_FAILED_CHECKS"], "2");
    let cpu = one(&e, RESULT);
    assert_eq!(cpu["RTBENCH_VERDICT"], "fail");
    assert!(cpu["RTBENCH_FAILED"].starts_with("p99.9 "), "{cpu:?}");
    assert!(cpu["MESSAGE"].contains("FAIL: p99.9 "), "{cpu:?}");
    assert_eq!(cpu["RTBENCH_LIMIT_P999_NS"], "1000");
    assert_eq!(cpu["RTBENCH_LIMIT_MAX_NS"], "10000000000");
    assert!(
        cpu["RTBENCH_MAX_NS"].parse::<u64>().is_ok(),
        "ns kept in fields"
    );
    assert!(!cpu["MESSAGE"].contains(" ns"), "{cpu:?}");
    // report's table names the same, in µs.
    let r = report(&cfg, &[]);
    let t = stdout(&r);
    assert_eq!(r.status.code(), Some(1));
    assert!(t.contains("limits: max 10000000 µs, p99.9 1 µs"), "{t}");
    assert!(t.contains("FAIL cyclic CPU 0 p99.9 "), "{t}");
    assert!(t.contains(&format!("FAIL {deviation}")), "{t}");
    assert!(!t.contains(" ns"), "{t}");
    // The plot of the stored result: the limit lines and the verdict.
    let json = std::fs::read_dir(dir.join("results"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "json"))
        .unwrap();
    let svg = dir.join("plot.svg");
    let p = rtbench()
        .arg("plot")
        .arg(&json)
        .arg("-o")
        .arg(&svg)
        .output()
        .unwrap();
    assert_eq!(p.status.code(), Some(0), "{}", stderr(&p));
    let svg = std::fs::read_to_string(&svg).unwrap();
    assert!(svg.contains("verdict: FAIL: cyclic CPU 0 p99.9"), "{svg}");
    assert!(
        svg.contains("class=\"limit\" data-statistic=\"p99.9\" data-limit-ns=\"1000\""),
        "the p99.9 limit line"
    );
}

#[test]
fn p5_prometheus_missing_directory_warns_and_files_are_0644_under_umask_077() {
    let dir = TempDir::new("v-prom");
    let missing = dir.join("no-such-dir");
    let cfg = config(
        &dir,
        "prom.toml",
        &format!(
            "[limits]\nmax_us = 10000000\n[output]\nresults_dir = \"{}\"\nfallback_dir = \"{}\"\nprometheus = \"{}\"\n",
            dir.join("results").display(),
            dir.join("run").display(),
            missing.join("rtbench.prom").display()
        ),
    );
    let o = selftest_logfmt(&cfg);
    // Not an abort, but a pass whose textfile was not written is not a pass: exit 1.
    assert_eq!(o.status.code(), Some(1), "not an abort: {}", stderr(&o));
    let e = entries(&o);
    let w: Vec<_> = e
        .iter()
        .filter(|m| m.get("RTBENCH_OUTPUT").map(String::as_str) == Some("prometheus"))
        .collect();
    assert_eq!(w.len(), 1, "one warning: {e:?}");
    assert_eq!(w[0]["PRIORITY"], "4");
    assert!(
        w[0]["MESSAGE"].contains(&format!("directory {} does not exist", missing.display())),
        "{:?}",
        w[0]
    );
    assert_eq!(stored_results(&dir).len(), 1, "results still stored");

    // Under umask 077 (a hand run as root): the collector and other users still read.
    let cfg = config(&dir, "umask.toml", "[limits]\nmax_us = 10000000\n");
    let _ = std::fs::remove_dir_all(dir.join("results"));
    let o = Command::new("sh")
        .env_remove("INVOCATION_ID")
        .args(["-c", "umask 077; exec \"$0\" selftest --config \"$1\""])
        .arg(crate::common::exe())
        .arg(&cfg)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&dir.join("rtbench.prom")), 0o644);
    assert_eq!(mode(&dir.join("results")), 0o755, "the store's directory");
    for f in std::fs::read_dir(dir.join("results")).unwrap().flatten() {
        assert_eq!(mode(&f.path()), 0o644, "{}", f.path().display());
    }
}

#[test]
fn p5_the_shipped_unit_lets_the_documented_prometheus_path_be_written() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let example = std::fs::read_to_string(root.join("systemd/rtbench.toml")).unwrap();
    let documented = example
        .lines()
        .find_map(|l| l.trim_start_matches("# ").strip_prefix("prometheus = \""))
        .and_then(|r| r.split('"').next())
        .expect("rtbench.toml documents a prometheus path");
    let dir = Path::new(documented).parent().unwrap();
    let unit = std::fs::read_to_string(root.join("systemd/rtbench.service")).unwrap();
    assert!(unit.contains("ProtectSystem=strict"));
    let writable: Vec<&str> = unit
        .lines()
        .filter_map(|l| l.strip_prefix("ReadWritePaths="))
        .flat_map(str::split_whitespace)
        .map(|p| p.trim_start_matches(['-', '+']))
        .collect();
    assert!(
        writable.iter().any(|w| dir.starts_with(w)),
        "{} is read-only under ProtectSystem=strict unless ReadWritePaths= names it: {writable:?}",
        dir.display()
    );
}

#[test]
fn p6_every_catalog_field_is_in_every_entry_and_each_id_means_one_thing() {
    let dir = TempDir::new("v-catalog");
    let cat = catalog();
    let mut all = Vec::new();
    // No limits; a missing Prometheus directory; a read-only results directory is not
    // needed: an unwritable store (a file where the directory should be) does it.
    std::fs::write(dir.join("blocker"), "").unwrap();
    let cfg = config(
        &dir,
        "cat.toml",
        &format!(
            "[output]\nresults_dir = \"{}\"\nfallback_dir = \"{}\"\nprometheus = \"{}\"\n",
            dir.join("blocker/results").display(),
            dir.join("run").display(),
            dir.join("missing/rtbench.prom").display()
        ),
    );
    let o = selftest_logfmt(&cfg);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    all.extend(entries(&o));
    // A failing run with limits, tuning checked.
    let cfg = config(
        &dir,
        "fail.toml",
        "[selftest]\nmode = \"check\"\nduration = \"1s\"\n[limits]\nmax_us = 1\n",
    );
    all.extend(entries(&selftest_logfmt(&cfg)));
    // A configuration error without a line (an unreadable file).
    all.extend(entries(&selftest_logfmt(&dir.join("does-not-exist.toml"))));
    // A configuration error with line and key.
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, "[selftest]\nduration = \"5x\"\n").unwrap();
    all.extend(entries(&selftest_logfmt(&bad)));

    let mut seen = HashSet::new();
    for e in &all {
        let id = &e["MESSAGE_ID"];
        seen.insert(id.clone());
        let fields = cat
            .get(id)
            .unwrap_or_else(|| panic!("MESSAGE_ID {id} is not in the catalog: {e:?}"));
        for f in fields {
            assert!(
                e.contains_key(f),
                "catalog entry {id} uses @{f}@, which this entry lacks (journalctl -x shows the bare name): {e:?}"
            );
        }
    }
    for id in [SUMMARY, RESULT, CONFIG] {
        assert!(seen.contains(id), "{id} logged");
    }
    // journalctl -x substitutes only [A-Z_] names (systemd's replace_var()): a
    // placeholder with a digit stays bare on screen.
    for (id, fields) in &cat {
        for f in fields {
            assert!(
                f.chars().all(|c| c.is_ascii_uppercase() || c == '_'),
                "catalog entry {id}: @{f}@ has a digit, journalctl -x would show it bare"
            );
        }
    }
    // One meaning per ID: the summary ID only for verdicts (once per run), the
    // configuration-error ID only for invalid configurations, never for notices or
    // warnings about outputs.
    let summaries: Vec<_> = all.iter().filter(|e| e["MESSAGE_ID"] == SUMMARY).collect();
    assert_eq!(summaries.len(), 2, "one summary per finished run");
    for s in summaries {
        assert!(["pass", "fail", "unjudged"].contains(&s["RTBENCH_VERDICT"].as_str()));
    }
    for e in all.iter().filter(|e| e["MESSAGE_ID"] == CONFIG) {
        assert_eq!(e["PRIORITY"], "3", "only errors: {e:?}");
    }
    let not_stored: Vec<_> = all
        .iter()
        .filter(|e| e["MESSAGE"].contains("results not stored"))
        .collect();
    assert_eq!(not_stored.len(), 1);
    assert!(![SUMMARY, CONFIG].contains(&not_stored[0]["MESSAGE_ID"].as_str()));
}

#[test]
fn p8_a_hand_run_prints_human_lines_and_report_reads_results_dir_from_the_config() {
    let dir = TempDir::new("v-human");
    let cfg = config(&dir, "human.toml", "[limits]\nmax_us = 10000000\n");
    // No journald on this machine: the default destination is human text on stderr.
    assert!(!Path::new("/run/systemd/journal/socket").exists());
    let o = rtbench()
        .args(["selftest", "--config"])
        .arg(&cfg)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        !err.contains("MESSAGE_ID="),
        "no journal-format lines: {err}"
    );
    assert!(!err.contains("\\\""), "no escaped quotes: {err}");
    assert!(err.contains("READY: "), "{err}");
    assert!(err.contains("rtbench self-test PASS"), "{err}");
    assert!(err.lines().count() < 10, "a few lines, not a dump: {err}");
    // report without --dir: results_dir from the configuration.
    let r = report(&cfg, &[]);
    assert_eq!(r.status.code(), Some(0), "{}", stderr(&r));
    assert!(
        stdout(&r).contains(&dir.join("results").display().to_string()),
        "{}",
        stdout(&r)
    );
}

/// Whether this machine's kernel is PREEMPT_RT, read as rtbench documents it
/// (`/sys/kernel/realtime`, or `PREEMPT_RT` in the version).
fn kernel_is_rt() -> bool {
    std::fs::read_to_string("/sys/kernel/realtime").is_ok_and(|s| s.trim() == "1")
        || std::fs::read_to_string("/proc/sys/kernel/version")
            .is_ok_and(|v| v.contains("PREEMPT_RT"))
}

#[test]
fn p9_a_pass_names_the_kernel_and_tuning_and_a_kernel_that_is_not_rt_fails_by_default() {
    let dir = TempDir::new("v-kernel");
    // Written by hand: the other tests' configurations accept any kernel.
    let cfg = dir.join("default.toml");
    std::fs::write(
        &cfg,
        format!(
            "[selftest]\nmode = \"off\"\nduration = \"1s\"\n[cyclic]\ncpus = \"0\"\n\
             [limits]\nmax_us = 10000000\n[output]\nresults_dir = \"{0}/results\"\n\
             fallback_dir = \"{0}/run\"\n",
            dir.display()
        ),
    )
    .unwrap();
    let o = selftest_logfmt(&cfg);
    let summary = one(&entries(&o), SUMMARY);
    let msg = &summary["MESSAGE"];
    if kernel_is_rt() {
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert!(msg.contains("; PREEMPT_RT kernel "), "{msg}");
    } else {
        // The requirement is the default: measured, then failed with the cause named.
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert_eq!(summary["RTBENCH_VERDICT"], "fail", "{msg}");
        assert!(msg.contains("(not PREEMPT_RT)"), "{msg}");
        assert!(
            msg.contains("not PREEMPT_RT: a real-time acceptance needs a PREEMPT_RT kernel"),
            "{msg}"
        );
    }
    assert!(msg.contains("; tuning off (not checked);"), "{msg}");
    assert_eq!(summary["RTBENCH_TUNING_STATE"], "tuning off (not checked)");
    // The report's table says the same.
    let r = report(&cfg, &[]);
    let table = stdout(&r);
    assert!(table.contains("\ntuning off (not checked)\n"), "{table}");
    // Opting out judges any kernel, and the PASS still names it.
    let any = config(&dir, "any.toml", "[limits]\nmax_us = 10000000\n");
    let o = selftest_logfmt(&any);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let msg = one(&entries(&o), SUMMARY)["MESSAGE"].clone();
    assert!(msg.starts_with("rtbench self-test PASS: "), "{msg}");
    assert!(msg.contains(" kernel "), "{msg}");
}

#[test]
fn p10_a_check_with_nothing_to_compare_is_never_ok() {
    // `isolcpus = []` is a plain `isolcpus=1`: it checks `domain`, in
    // /sys/devices/system/cpu/isolated, and fails where CPU 1 is not isolated.
    if online_cpus() < 2 {
        crate::common::skip("needs CPU 1 (one CPU online)");
        return;
    }
    let dir = TempDir::new("v-isolcpus");
    let cfg = config(
        &dir,
        "iso.toml",
        "[selftest]\nmode = \"check\"\nduration = \"1s\"\n[tuning]\nisolated = \"1\"\n\
         [tuning.boot]\nisolcpus = []\n[limits]\nmax_us = 10000000\n",
    );
    let o = selftest_logfmt(&cfg);
    let isolated = std::fs::read_to_string("/sys/devices/system/cpu/isolated").unwrap_or_default();
    let cpu1 = isolated.trim().split(',').any(|r| match r.split_once('-') {
        Some((a, b)) => {
            a.parse::<u32>().is_ok_and(|a| a <= 1) && b.parse::<u32>().is_ok_and(|b| b >= 1)
        }
        None => r == "1",
    });
    let summary = one(&entries(&o), SUMMARY);
    let msg = &summary["MESSAGE"];
    assert!(msg.contains("tuning check: 1 item, "), "{msg}");
    if cpu1 {
        assert_eq!(o.status.code(), Some(0), "{msg}");
    } else {
        assert_eq!(o.status.code(), Some(1), "{msg}");
        assert!(
            msg.contains("boot.isolcpus deviation: expected 1 isolated (domain), found isolated "),
            "{msg}"
        );
    }
}
