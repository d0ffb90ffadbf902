//! `rtbench diagnose -o FILE.tar.gz`: on this machine after a real failing self-test
//! and monitor windows over their limits (the bundle read back with the system's tar),
//! and on a fake board tree (isolated CPUs with IRQs firing on them, irqbalance, a
//! powersave governor, a deep idle state, an RT task, a soft lockup in the kernel log),
//! where SUMMARY.txt must name each problem.
#![cfg(feature = "diagnose")]

use crate::common::*;
use std::path::Path;
use std::process::Command;

/// Extracts `bundle` into `into` with tar(1) and returns the top directory.
fn extract(bundle: &Path, into: &Path) -> std::path::PathBuf {
    std::fs::create_dir_all(into).unwrap();
    let st = Command::new("tar")
        .arg("-xzf")
        .arg(bundle)
        .arg("-C")
        .arg(into)
        .status()
        .unwrap();
    assert!(st.success());
    let top: Vec<_> = std::fs::read_dir(into)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(top.len(), 1, "{top:?}");
    top[0].clone()
}

/// The member names of `bundle` in archive order.
fn members(bundle: &Path) -> Vec<String> {
    let o = Command::new("tar")
        .arg("-tzf")
        .arg(bundle)
        .output()
        .unwrap();
    assert!(o.status.success());
    String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split_once('/').map_or(l, |(_, r)| r).to_string())
        .collect()
}

#[test]
fn bundle_after_a_failing_self_test_and_monitor_windows_says_what_is_wrong() {
    let t = TempDir::new("diagnose");
    let results = t.join("results");
    let cfg = t.join("rtbench.toml");
    std::fs::write(
        &cfg,
        crate::common::on_any_kernel(
            &(format!(
                "[selftest]\nmode = \"off\"\nduration = \"1s\"\n[cyclic]\ncpus = \"0\"\n\
             [limits]\nmax_us = 1\n[output]\nresults_dir = \"{}\"\nfallback_dir = \"{}\"\n\
             [monitor]\ncpus = \"0\"\n[monitor.limits]\nmax_us = 1\n",
                results.display(),
                t.join("run").display()
            )),
        ),
    )
    .unwrap();
    let c = cfg.display().to_string();
    let o = run(&["selftest", "--config", &c]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let o = run(&["monitor", "--config", &c, "--window", "1s", "-D", "2"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));

    let bundle = t.join("board.tar.gz");
    let b = bundle.display().to_string();
    let o = run(&["diagnose", "--config", &c, "-o", &b, "--since", "1h"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // What looks wrong is also said on standard error.
    assert!(stderr(&o).contains("What looks wrong"), "{}", stderr(&o));
    let names = members(&bundle);
    assert_eq!(names[0], "SUMMARY.txt");
    for want in [
        "rtbench/rtbench.toml",
        "rtbench/selftest-report.txt",
        "rtbench/monitor/windows.jsonl",
        "rtbench/monitor/state.json",
        "rtbench/monitor-report.txt",
        "rtbench/tune-check.txt",
        "system/interrupts.txt",
        "system/softirqs.txt",
        "system/irq-affinity.txt",
        "system/cpus.txt",
        "system/sysctl.txt",
        "system/cpufreq.txt",
        "system/cpuidle.txt",
        "system/rt-tasks.txt",
        "system/cmdline.txt",
        "system/sysinfo.json",
    ] {
        assert!(names.iter().any(|n| n == want), "{want} missing: {names:?}");
    }
    assert!(
        names.iter().any(|n| n.starts_with("rtbench/results/run-")),
        "{names:?}"
    );
    let top = extract(&bundle, &t.join("x"));
    let summary = std::fs::read_to_string(top.join("SUMMARY.txt")).unwrap();
    assert!(
        summary.contains("PROBLEM  self-test FAIL (this boot"),
        "{summary}"
    );
    assert!(summary.contains("PROBLEM  monitor: "), "{summary}");
    assert!(summary.contains("exceeded [monitor.limits]"), "{summary}");
    // The copies are the real files.
    assert_eq!(
        std::fs::read_to_string(top.join("rtbench/rtbench.toml")).unwrap(),
        std::fs::read_to_string(&cfg).unwrap()
    );
    assert_eq!(
        std::fs::read_to_string(top.join("system/interrupts.txt"))
            .unwrap()
            .lines()
            .next(),
        std::fs::read_to_string("/proc/interrupts")
            .unwrap()
            .lines()
            .next()
    );
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&bundle).unwrap().permissions())
            & 0o777;
    assert_eq!(mode, 0o644);
}

#[test]
fn summary_names_each_problem_of_a_misconfigured_board() {
    let t = TempDir::new("diagnose-tree");
    let root = t.join("root");
    let f = |rel: &str, content: &str| {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    };
    f("sys/kernel/realtime", "1\n");
    f("sys/devices/system/cpu/possible", "0-3\n");
    f("sys/devices/system/cpu/online", "0-3\n");
    f("sys/devices/system/cpu/isolated", "2-3\n");
    f("sys/devices/system/cpu/offline", "\n");
    f("proc/cmdline", "console=ttyS2 isolcpus=2-3\n");
    f(
        "proc/interrupts",
        "           CPU0       CPU1       CPU2       CPU3\n\
         \x20 24:       1000          0        512          0  GICv3  65 Level     eth0\n\
         \x20 25:        300        200          0          0  GICv3  66 Level     mmc0\n\
         LOC:       5000       5000       5000       5000   Local timer interrupts\n",
    );
    for irq in [24, 25] {
        f(&format!("proc/irq/{irq}/smp_affinity_list"), "0-3\n");
        f(&format!("proc/irq/{irq}/effective_affinity_list"), "0\n");
    }
    f("proc/irq/default_smp_affinity", "f\n");
    f("proc/sys/kernel/sched_rt_runtime_us", "950000\n");
    f("proc/sys/kernel/sched_rt_period_us", "1000000\n");
    f("proc/4242/comm", "irqbalance\n");
    f(
        "proc/77/task/77/stat",
        &format!("77 (ctrl loop) S{}", " 0".repeat(36) + " 80 1 0"),
    );
    f(
        "proc/77/task/77/status",
        "Name:\tctrl loop\nCpus_allowed_list:\t2\n",
    );
    // A vendor daemon at SCHED_FIFO 99, above the measuring threads' 98: 10 s of CPU
    // (utime 500 + stime 500 ticks) in the 100 s since it started (starttime 100 ticks,
    // uptime 101 s).
    let mut fields = vec!["0".to_string(); 36];
    fields[14 - 4] = "500".into();
    fields[15 - 4] = "500".into();
    fields[22 - 4] = "100".into();
    f(
        "proc/88/task/88/stat",
        &format!("88 (vendord) S {} 99 1 0", fields.join(" ")),
    );
    f(
        "proc/88/task/88/status",
        "Name:\tvendord\nCpus_allowed_list:\t0-3\n",
    );
    f("proc/uptime", "101.00 50.00\n");
    f(
        "proc/self/status",
        "Name:\trtbench\nCpus_allowed_list:\t0-3\n",
    );
    let pol = "sys/devices/system/cpu/cpufreq/policy0";
    f(&format!("{pol}/affected_cpus"), "0 1 2 3\n");
    f(&format!("{pol}/scaling_governor"), "powersave\n");
    f("sys/devices/system/cpu/cpu2/cpuidle/state1/name", "C6\n");
    f(
        "sys/devices/system/cpu/cpu2/cpuidle/state1/latency",
        "120\n",
    );
    f("sys/devices/system/cpu/cpu2/cpuidle/state1/disable", "0\n");
    f(
        "dev/kmsg",
        "[  12.000000] ok\n[ 345.678000] watchdog: BUG: soft lockup - CPU#2 stuck for 22s!\n",
    );
    let cfg = t.join("rtbench.toml");
    std::fs::write(
        &cfg,
        crate::common::on_any_kernel(
            &(format!(
                "[cyclic]\ncpus = \"2-3\"\n[output]\nresults_dir = \"{}\"\n",
                t.join("results").display()
            )),
        ),
    )
    .unwrap();
    let bundle = t.join("b.tar.gz");
    let o = run(&[
        "diagnose",
        "--config",
        &cfg.display().to_string(),
        "--sysroot",
        &root.display().to_string(),
        "-o",
        &bundle.display().to_string(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let top = extract(&bundle, &t.join("x"));
    let s = std::fs::read_to_string(top.join("SUMMARY.txt")).unwrap();
    for want in [
        "PROBLEM  1 IRQ(s) fired on isolated CPUs 2-3: IRQ 24 eth0 ×512",
        "(345.7 s after boot): a soft lockup: watchdog: BUG: soft lockup",
        "PROBLEM  vendord (pid 88, FIFO 99) outranks the measuring threads (FIFO 98) and used 10.0 % of a CPU since it started (CPUs 0-3)",
        "note     irqbalance runs (pid 4242)",
        "note     RT throttling on: real-time tasks get 950000 µs per 1000000 µs period",
        "note     cpufreq governor not performance on measured CPUs: policy0 powersave",
        "note     idle states with exit latency > 10 µs enabled on measured CPUs: C6 (120 µs)",
        "note     no stored self-test result",
    ] {
        assert!(s.contains(want), "missing {want:?} in\n{s}");
    }
    assert!(!s.contains("not PREEMPT_RT"), "{s}");
    // Problems come before notes.
    assert!(s.find("PROBLEM").unwrap() < s.find("note ").unwrap());
    let rt = std::fs::read_to_string(top.join("system/rt-tasks.txt")).unwrap();
    assert!(rt.contains("77 77 FIFO 80 2 0.0 user ctrl loop"), "{rt}");
    assert!(
        !s.contains("ctrl loop (pid 77"),
        "FIFO 80 is below the measuring threads: {s}"
    );
    let cpus = std::fs::read_to_string(top.join("system/cpus.txt")).unwrap();
    assert!(cpus.contains("isolated     2-3"), "{cpus}");
    assert!(cpus.contains("housekeeping 0-1"), "{cpus}");
    assert!(cpus.contains("offline      none\n"), "{cpus}");
    assert!(
        cpus.ends_with("allowed      0-3 (rtbench's Cpus_allowed_list)\n"),
        "{cpus}"
    );
    assert!(!cpus.contains("rtbench diagnose"), "{cpus}");
    // The summary on the screen is SUMMARY.txt's lines, not one line with `\n` in it.
    let err = stderr(&o);
    assert!(o.stdout.is_empty(), "{o:?}");
    assert!(!err.contains("\\n"), "{err}");
    let on_screen: Vec<&str> = err.lines().collect();
    assert!(on_screen[0].starts_with("rtbench diagnostics of "), "{err}");
    assert!(
        on_screen
            .iter()
            .any(|l| l.starts_with("What looks wrong (")),
        "{err}"
    );
    assert!(
        on_screen
            .iter()
            .any(|l| l.starts_with("  note     irqbalance runs (pid 4242)")),
        "{err}"
    );
    assert!(
        on_screen
            .last()
            .unwrap()
            .starts_with("rtbench: diagnostics written to "),
        "{err}"
    );
}

#[test]
fn bad_output_is_one_line_and_nothing_is_written_and_dash_is_stdout() {
    let t = TempDir::new("diagnose-bad");
    let missing = t.join("no/such/dir/b.tar.gz").display().to_string();
    let o = run(&["diagnose", "--config", "/dev/null", "-o", &missing]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("-o"), "{}", stderr(&o));
    let o = run(&[
        "diagnose",
        "--config",
        "/dev/null",
        "-o",
        "-",
        "--since",
        "5x",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let o = run(&["diagnose", "--config", "/dev/null", "-o", "-"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(&o.stdout[..2], &[0x1f, 0x8b], "gzip on standard output");
    assert!(stderr(&o).contains("What looks wrong"));
    assert_eq!(t.entries(), Vec::<String>::new());
}
