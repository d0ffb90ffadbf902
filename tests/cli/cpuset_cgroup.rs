//! Real runs inside a real cgroup cpuset on this machine: `cyclic`, `pmq`, `pipe` and
//! `selftest` measure on the CPU the cpuset allows (rtbench used to die in every one of
//! them with `sched_setaffinity(0): Invalid argument`, exit 3), a CPU outside it is a
//! one-line error naming the cpuset (exit 2, nothing started), and cyclictest 2.4 `-S`
//! is run beside rtbench in the same cpuset. Plus `taskset`-narrowed runs.
//!
//! Each test creates its own child cpuset holding the last online CPU — CPU 0, where
//! the main thread used to go, is outside it (`common::cpuset::Cpuset`: on the cgroup
//! v1 cpuset hierarchy, or on cgroup v2 when the cpuset controller is there, removed on
//! drop). Needs root and at least 2 online CPUs.

use crate::common::cpuset::Cpuset;
use crate::common::*;
use serde_json::Value;
use std::process::{Command, Output};

fn t_lines(o: &Output) -> Vec<String> {
    stdout(o)
        .lines()
        .filter(|l| l.starts_with("T:"))
        .map(String::from)
        .collect()
}

fn ok(o: &Output) {
    assert_eq!(
        o.status.code(),
        Some(0),
        "stdout:\n{}\nstderr:\n{}",
        stdout(o),
        stderr(o)
    );
}

#[test]
fn cyclic_measures_inside_the_cpuset_and_refuses_cpus_outside_it() {
    let cg = Cpuset::new("cyclic");
    // The plain invocation: one unpinned thread, main thread unpinned.
    let o = cg.rtbench("cyclic -p 90 -l 200 -q");
    ok(&o);
    assert_eq!(t_lines(&o).len(), 1, "{}", stdout(&o));
    // -S and -t: one thread per allowed CPU, i.e. one.
    for flags in ["-S", "-t", "-a", "-a all", "-a N", "-t -a"] {
        let o = cg.rtbench(&format!("cyclic {flags} -p 90 -l 200 -q -i 500"));
        ok(&o);
        assert_eq!(t_lines(&o).len(), 1, "{flags}: {}", stdout(&o));
        if flags == "-S" {
            // Nowhere else to go: the main thread shares the measured CPU, said so.
            assert!(
                stderr(&o).contains(&format!(
                    "# main thread runs on measured CPU {} (every allowed CPU, {}, is measured)",
                    cg.cpu, cg.cpu
                )),
                "{}",
                stderr(&o)
            );
        }
    }
    // The JSON records where it ran and why.
    let dir = TempDir::new("cgroup-json");
    let json = dir.join("r.json");
    let o = cg.rtbench(&format!(
        "cyclic -S -p 90 -l 100 -q --json {}",
        json.display()
    ));
    ok(&o);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let sys = &v["rtbench"]["sysinfo"];
    assert_eq!(sys["cpus_allowed"], cg.cpu.to_string(), "{sys}");
    assert_eq!(sys["cpuset"]["version"], cg.version, "{sys}");
    assert_eq!(sys["cpuset"]["file"], cg.cpus_file(), "{sys}");
    assert_eq!(v["thread"]["0"]["cpu"], cg.cpu, "{v}");
    // A CPU outside the cpuset: one line naming the cpuset, exit 2, nothing measured.
    for flags in [
        "-a 0",
        "-S --mainaffinity 0",
        "-S --load cpu:1 --load-cpus 0",
    ] {
        let o = cg.rtbench(&format!("cyclic {flags} -p 90 -l 100 -q"));
        assert_eq!(o.status.code(), Some(2), "{flags}: {}", stderr(&o));
        assert_eq!(stdout(&o), "", "{flags}");
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{flags}: {err}");
        assert!(
            err.contains(&format!(
                "CPU 0 is not allowed by this process's cgroup {} cpuset {} = {}; expected CPUs within {}",
                cg.version,
                cg.cpus_file(),
                cg.cpu,
                cg.cpu
            )),
            "{flags}: {err}"
        );
    }
}

#[test]
fn pmq_and_pipe_measure_inside_the_cpuset() {
    let cg = Cpuset::new("pair");
    for cmd in ["pmq", "pipe"] {
        for flags in ["", "-S", "-t -a"] {
            let o = cg.rtbench(&format!("{cmd} {flags} -p 90 -l 200 -q -i 500"));
            ok(&o);
            let pairs = stdout(&o).lines().filter(|l| l.starts_with("#0:")).count();
            assert_eq!(pairs, 1, "{cmd} {flags}: {}", stdout(&o));
        }
        let o = cg.rtbench(&format!("{cmd} -a 0 -l 10"));
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("is not allowed by this process's cgroup"));
    }
}

#[test]
fn selftest_measures_inside_the_cpuset() {
    let cg = Cpuset::new("selftest");
    let dir = TempDir::new("cgroup-selftest");
    let cfg = dir.join("rtbench.toml");
    std::fs::write(
        &cfg,
        crate::common::on_any_kernel(
            &(format!(
                "[selftest]\nmode = \"off\"\nduration = \"1s\"\n[cyclic]\ninterval_us = 500\n\
             [load]\nspec = \"cpu:1\"\n[limits]\nmax_us = 60000000\n\
             [output]\nresults_dir = \"{}/results\"\n",
                dir.display()
            )),
        ),
    )
    .unwrap();
    let o = cg.rtbench(&format!(
        "selftest --log-format logfmt --config {}",
        cfg.display()
    ));
    ok(&o);
    let err = stderr(&o);
    // One result entry, for the allowed CPU; the load had to share it, said so.
    let results: Vec<&str> = err.lines().filter(|l| l.contains("RTBENCH_CPU=")).collect();
    assert_eq!(results.len(), 1, "{err}");
    assert!(
        results[0].contains(&format!("RTBENCH_CPU={}", cg.cpu)),
        "{err}"
    );
    assert!(
        err.contains(&format!("load runs on measured CPU {}", cg.cpu)),
        "{err}"
    );
    // [cyclic] cpus outside the cpuset: a configuration error naming it, exit 2.
    std::fs::write(
        &cfg,
        crate::common::on_any_kernel("[selftest]\nmode = \"off\"\n[cyclic]\ncpus = \"0\"\n"),
    )
    .unwrap();
    let o = cg.rtbench(&format!(
        "selftest --log-format logfmt --config {}",
        cfg.display()
    ));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("RTBENCH_CONFIG_KEY=cyclic.cpus")
            && stderr(&o).contains("is not allowed by this process's cgroup"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn cyclictest_beside_rtbench_in_the_same_cpuset() {
    let cg = Cpuset::new("reference");
    // cyclictest 2.4 -S: one thread per CPU of its affinity, which the cpuset set.
    let theirs = cg
        .command(
            "cyclictest",
            &["-S", "-p", "90", "-l", "200", "-q", "-i", "500"],
        )
        .output()
        .unwrap();
    ok(&theirs);
    let ours = cg.rtbench("cyclic -S -p 90 -l 200 -q -i 500");
    ok(&ours);
    assert_eq!(t_lines(&theirs).len(), 1, "{}", stdout(&theirs));
    assert_eq!(t_lines(&ours).len(), t_lines(&theirs).len());
    // cyclictest -a 0 outside the cpuset warns and measures elsewhere; rtbench refuses.
    let theirs = cg
        .command("cyclictest", &["-a", "0", "-p", "90", "-l", "100", "-q"])
        .output()
        .unwrap();
    assert!(
        stderr(&theirs).contains("Could not set CPU affinity to CPU #0"),
        "{}",
        stderr(&theirs)
    );
    assert_eq!(
        cg.rtbench("cyclic -a 0 -p 90 -l 100 -q").status.code(),
        Some(2)
    );
}

#[test]
fn taskset_narrowed_runs_follow_the_affinity_like_cyclictest() {
    let cpus = online_cpus();
    assert!(cpus >= 2, "needs 2 online CPUs");
    let last = (cpus - 1).to_string();
    let run_in = |program: &str, args: &[&str]| {
        Command::new("taskset")
            .args(["-c", &last, program])
            .args(args)
            .output()
            .unwrap()
    };
    let args = ["-S", "-p", "90", "-l", "200", "-q", "-i", "500"];
    let theirs = run_in("cyclictest", &args);
    let ours = run_in(crate::common::exe(), &[&["cyclic"][..], &args[..]].concat());
    ok(&theirs);
    ok(&ours);
    assert_eq!(t_lines(&theirs).len(), 1);
    assert_eq!(t_lines(&ours).len(), 1);
    // An explicit CPU outside the affinity is still allowed (the cpuset allows it),
    // as with cyclictest -a.
    let o = run_in(
        crate::common::exe(),
        &["cyclic", "-a", "0", "-p", "90", "-l", "100", "-q"],
    );
    ok(&o);
}
