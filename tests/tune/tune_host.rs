//! On this machine, for real: `rtbench tune apply` then `rtbench tune revert` leaves
//! every touched kernel file byte-identical, and the IRQ handler threads
//! (`irq/N-name`, which this kernel has for threaded handlers such as ACPI GED) follow
//! their IRQ off the isolated CPU and come back. Needs root. A Drop guard writes the
//! saved originals (and thread affinities) back even when an assertion fails half-way.

use crate::common::TempDir;
use rtbench::cpuset::CpuSet;
use rtbench::sys::SysRoot;
use rtbench::tune::irq::{irq_threads, IrqThread};
use std::collections::BTreeMap;
use std::process::Command;

/// Kernel files the test configuration may touch, in restore order (global workqueue
/// mask before per-workqueue masks; IRQs through `smp_affinity`).
fn touched_files(root: &SysRoot) -> Vec<String> {
    let mut v: Vec<String> = [
        "/proc/sys/kernel/printk",
        "/proc/sys/vm/overcommit_memory",
        "/proc/sys/vm/overcommit_ratio",
        "/proc/sys/vm/overcommit_kbytes",
        "/proc/sys/kernel/timer_migration",
        "/proc/sys/vm/stat_interval",
        "/sys/kernel/mm/transparent_hugepage/enabled",
        "/proc/irq/default_smp_affinity",
        "/sys/devices/virtual/workqueue/cpumask",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let mut dirs = |base: &str, file: &str| {
        let mut names = root.list_dir(base).unwrap_or_default();
        names.sort();
        for n in names {
            let p = format!("{base}/{n}/{file}");
            if root.exists(&p) {
                v.push(p);
            }
        }
    };
    dirs("/proc/irq", "smp_affinity");
    dirs("/proc/irq", "smp_affinity_list");
    dirs("/sys/devices/virtual/workqueue", "cpumask");
    for cpu in ["cpu0", "cpu1"] {
        dirs(&format!("/sys/devices/system/cpu/{cpu}/cpuidle"), "disable");
    }
    v.retain(|p| root.exists(p));
    v
}

fn snapshot(root: &SysRoot, files: &[String]) -> BTreeMap<String, Vec<u8>> {
    files
        .iter()
        .map(|p| (p.clone(), std::fs::read(root.path(p)).unwrap()))
        .collect()
}

/// The `Cpus_allowed_list` of task `pid`.
fn allowed(root: &SysRoot, pid: u32) -> Option<CpuSet> {
    let s = root.read(&format!("/proc/{pid}/status")).ok()?;
    let l = s
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?;
    CpuSet::parse_list(l, 1 << 12).ok()
}

/// Writes back every saved file that differs, whatever happened in the test.
struct Restore {
    saved: BTreeMap<String, Vec<u8>>,
    order: Vec<String>,
    threads: Vec<(IrqThread, CpuSet)>,
}

impl Drop for Restore {
    fn drop(&mut self) {
        let root = SysRoot::host();
        for (t, set) in &self.threads {
            if allowed(&root, t.pid).as_ref() != Some(set) {
                let r = root.set_task_affinity(t.pid, set);
                eprintln!("teardown: restored {} affinity to {set}: {r:?}", t.comm);
            }
        }
        for p in &self.order {
            if p.ends_with("smp_affinity_list") {
                continue; // follows smp_affinity
            }
            let orig = &self.saved[p];
            if std::fs::read(root.path(p)).ok().as_ref() == Some(orig) {
                continue;
            }
            let text = String::from_utf8_lossy(orig);
            let value = match (text.find('['), text.find(']')) {
                (Some(a), Some(b)) if a < b => text[a + 1..b].to_string(),
                _ => text.trim().to_string(),
            };
            let r = root.write(p, format!("{value}\n").as_bytes());
            eprintln!("teardown: restored {p} to {value:?}: {r:?}");
        }
    }
}

fn rtbench(cfg: &std::path::Path, action: &str) -> (i32, String) {
    let out = Command::new(crate::common::exe())
        .args(["tune", action, "--config"])
        .arg(cfg)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

#[test]
fn apply_then_revert_is_byte_identical_on_this_machine() {
    // Real tuning of this machine (isolation, overcommit, IRQs): nothing else measures
    // meanwhile (common::lock).
    let _machine = crate::common::exclusive();
    assert!(
        nix::unistd::geteuid().is_root(),
        "this test changes kernel settings and needs root"
    );
    let root = SysRoot::host();
    let files = touched_files(&root);
    let before = snapshot(&root, &files);
    let threads: Vec<(IrqThread, CpuSet)> = irq_threads(&root)
        .into_iter()
        .filter_map(|t| allowed(&root, t.pid).map(|a| (t, a)))
        .collect();
    let _guard = Restore {
        saved: before.clone(),
        order: files.clone(),
        threads: threads.clone(),
    };
    let dir = TempDir::new("host");
    let cfg = dir.join("rtbench.toml");
    let online = root.read_trim("/sys/devices/system/cpu/online").unwrap();
    assert_eq!(
        online, "0-1",
        "the test configuration is written for 2 CPUs"
    );
    std::fs::write(
        &cfg,
        format!(
            "[tuning]\nisolated = \"1\"\njournal_dir = \"{}\"\n\
             [tuning.irq]\naffinity = true\ndefault_affinity = true\nirqbalance = \"warn\"\n\
             [tuning.workqueue]\ncpumask = true\n\
             [tuning.sysctl]\nprintk = 1\novercommit_memory = 2\novercommit_ratio = 80\n\
             timer_migration = 0\nstat_interval = 10\n\
             [tuning.power]\ncpuidle_max_latency_us = 0\n\
             [tuning.memory]\nthp = \"never\"\n",
            dir.join("run").display()
        ),
    )
    .unwrap();

    let (code, out) = rtbench(&cfg, "apply");
    assert_eq!(code, 0, "{out}");
    let after_apply = snapshot(&root, &files);
    let changed: Vec<&String> = files
        .iter()
        .filter(|p| before[*p] != after_apply[*p])
        .collect();
    assert!(
        changed.contains(&&"/proc/sys/kernel/printk".to_string()),
        "{changed:?}\n{out}"
    );
    let printk = root.read("/proc/sys/kernel/printk").unwrap();
    let old_printk = String::from_utf8_lossy(&before["/proc/sys/kernel/printk"]).to_string();
    assert_eq!(printk.split_whitespace().next(), Some("1"));
    assert_eq!(
        printk.split_whitespace().skip(1).collect::<Vec<_>>(),
        old_printk.split_whitespace().skip(1).collect::<Vec<_>>()
    );

    // Every IRQ thread whose IRQ moved off CPU 1 is off it too (not waiting for the
    // IRQ's next interrupt), unless the kernel refused to move it (reported).
    for (t, _) in &threads {
        let irq = root
            .read(&format!("/proc/irq/{}/smp_affinity_list", t.irq))
            .ok()
            .and_then(|s| CpuSet::parse_list(&s, 1 << 12).ok());
        let now = allowed(&root, t.pid);
        if let (Some(irq), Some(now)) = (irq, now) {
            let unsupported = out.lines().any(|l| {
                l.contains(&format!("irq-thread.{}", t.comm)) && l.contains("unsupported")
            });
            assert!(
                now.is_subset(&irq) || unsupported,
                "{} allowed on {now}, its IRQ on {irq}\n{out}",
                t.comm
            );
        }
    }
    eprintln!("IRQ threads on this machine: {threads:?}");
    for l in out
        .lines()
        .filter(|l| l.contains("irq-thread.") || l.contains("irq.25"))
    {
        eprintln!("{l}");
    }

    // Nothing left to change: the second apply writes nothing, check agrees.
    let (code, out2) = rtbench(&cfg, "apply");
    assert_eq!(code, 0, "{out2}");
    assert!(out2.contains("; 0 writes"), "{out2}");
    assert_eq!(snapshot(&root, &files), after_apply);
    let (code, out3) = rtbench(&cfg, "check");
    assert_eq!(code, 0, "{out3}");

    let (code, out4) = rtbench(&cfg, "revert");
    assert_eq!(code, 0, "{out4}");
    let after = snapshot(&root, &files);
    for p in &files {
        assert_eq!(
            String::from_utf8_lossy(&after[p]),
            String::from_utf8_lossy(&before[p]),
            "{p} differs after revert\n{out}\n{out4}"
        );
    }
    for (t, was) in &threads {
        assert_eq!(
            allowed(&root, t.pid).as_ref(),
            Some(was),
            "{} not restored\n{out4}",
            t.comm
        );
    }
    eprintln!(
        "{} files changed by apply and restored: {changed:?}",
        changed.len()
    );
}
