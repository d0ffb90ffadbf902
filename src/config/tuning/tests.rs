//! Unit tests of `[tuning]` validation on a 2-CPU tree.

use crate::config::parse;
use crate::config::tempdir;
use crate::sys::SysRoot;

/// A 2-CPU tree like this machine, so the tests mean the same everywhere.
fn two_cpus() -> (tempdir::Dir, SysRoot) {
    let d = tempdir::Dir::new("cfg");
    d.file("sys/devices/system/cpu/possible", "0-1\n");
    d.file("sys/devices/system/cpu/online", "0-1\n");
    let r = SysRoot::at(d.path());
    (d, r)
}

fn err(text: &str) -> String {
    let (_d, r) = two_cpus();
    let e = parse(text, "/etc/rtbench/rtbench.toml", &r).unwrap_err();
    assert_eq!(crate::error::Error::from(e.clone()).exit_code(), 2);
    e.to_string()
}

#[test]
fn full_example_resolves() {
    let (_d, r) = two_cpus();
    let text = "[tuning]\nisolated = \"1\"\nrequire_preempt_rt = true\n\
        [tuning.boot]\nisolcpus = [\"domain\", \"managed_irq\"]\nnohz_full = true\n\
        [tuning.irq]\naffinity = true\ndefault_affinity = true\nexclude = [36]\nirqbalance = \"warn\"\n\
        [tuning.sysctl]\nprintk = 1\novercommit_memory = 2\novercommit_ratio = 80\ntimer_migration = 0\nstat_interval = 10\n\
        [tuning.power]\ngovernor = \"performance\"\ncpuidle_max_latency_us = 0\n\
        [tuning.memory]\nthp = \"never\"\n[tuning.workqueue]\ncpumask = true\n";
    let t = parse(text, "f", &r).unwrap().tuning;
    assert_eq!(t.isolated.to_list(), "1");
    assert_eq!(t.housekeeping.to_list(), "0");
    assert_eq!(t.cpuidle_cpus.to_list(), "1");
    assert_eq!(t.printk, Some(1));
    assert_eq!(t.irq_exclude, vec![36]);
    assert_eq!(t.commit_headroom_pct, 0);
    assert_eq!(t.journal_dir, std::path::PathBuf::from("/run/rtbench"));
    assert!(!t.is_empty());
}

#[test]
fn bad_values_are_one_line_with_file_line_key_and_expectation() {
    let e = err("[tuning]\nisolated = \"5\"\n");
    assert!(
        e.starts_with("/etc/rtbench/rtbench.toml:2: tuning.isolated = \"5\": "),
        "{e}"
    );
    assert!(e.contains("beyond the last possible CPU 1"), "{e}");
    let e = err("[tuning.sysctl]\nprintk = 12\n");
    assert!(e.starts_with("/etc/rtbench/rtbench.toml:2: tuning.sysctl.printk = 12: expected a console log level 1..8"), "{e}");
    let e = err("[tuning]\nisolated = \"1\"\nhousekeeping = \"\"\n");
    assert!(
        e.contains(":3: tuning.housekeeping = \"\": expected at least one CPU"),
        "{e}"
    );
    let e = err("[tuning]\nisolated = \"0-1\"\n");
    assert!(e.contains("boot CPU 0 cannot be isolated"), "{e}");
    let e = err("[tuning.sysctl]\nsched_rt_runtime_us = -1\n");
    assert!(e.contains("allow_unthrottled_rt = true"), "{e}");
    let e = err("[tuning.irq]\naffinity = true\n");
    assert!(
        e.contains(":2: tuning.irq.affinity = true: needs tuning.isolated"),
        "{e}"
    );
    let e = err(
        "[tuning]\nisolated = \"1\"\n[[limits.cpus]]\ncpus = \"1\"\ntest = \"pipe\"\nmax_us = 9\n",
    );
    assert!(
        e.contains("limits.cpus[0].test = \"pipe\": the self-test runs no pipe test"),
        "{e}"
    );
    let e = err("[pmq]\npairs = 2\n[[limits.cpus]]\ncpus = \"1\"\ntest = \"pmq\"\nmax_us = 9\n");
    assert!(e.contains("placed by the scheduler"), "{e}");
    let e = err("[cyclic]\ncpus = \"0\"\n[[limits.cpus]]\ncpus = \"1\"\nmax_us = 9\n");
    assert!(
        e.contains("no test measures CPU 1 (cyclic measures 0)"),
        "{e}"
    );
    let e = err("[[limits.cpus]]\ncpus = \"1\"\n");
    assert!(e.contains("limits.cpus[0] = \"1\": sets no limit"), "{e}");
    let e = err("[tuning.boot]\nisolcpus = [\"domian\"]\n");
    assert!(e.contains("unknown flag \"domian\""), "{e}");
    let e = err("[tuning.memory]\nthp = \"off\"\n");
    assert!(
        e.starts_with("/etc/rtbench/rtbench.toml:2: thp = \"off\""),
        "{e}"
    );
    for e in [
        err("[tuning]\nisolated = \"1\"\nhousekeeping = \"0-1\"\n"),
        err("[tuning]\nisolated = \"1\"\nhousekeeping = \"1\"\n"),
    ] {
        assert!(e.contains("tuning.housekeeping"), "{e}");
    }
    assert_eq!(
        err("[tuning]\nisolated = \"1\"\n\n\nisolated = \"1\"\n")
            .lines()
            .count(),
        1
    );
}

#[test]
fn unthrottled_rt_with_opt_in() {
    let (_d, r) = two_cpus();
    let t = parse(
        "[tuning]\nallow_unthrottled_rt = true\n[tuning.sysctl]\nsched_rt_runtime_us = -1\n",
        "f",
        &r,
    )
    .unwrap()
    .tuning;
    assert_eq!(t.sched_rt_runtime_us, Some(-1));
}
