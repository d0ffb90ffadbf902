//! Fault tests for `rtbench tune apply` on a temporary /proc + /sys tree: the k-th of
//! n writes fails with EIO, EPERM, EINVAL, ENOSPC, EROFS (read-only /proc/sys) or
//! ENOENT (the file went away); the first k−1 changes must be restored byte-for-byte
//! and the report must name the errno and the path. Plus the guards, idempotence,
//! revert and recovery of an interrupted journal.

use crate::common::{no_forks, tune_tree};

use rtbench::config;
use rtbench::sys::SysRoot;
use rtbench::tune::journal::{Entry, Journal, JournalState};
use rtbench::tune::spec::TuningSpec;
use rtbench::tune::{self, ApplyOptions, Decision, Status, Step, ValueKind};
use tune_tree::Tree;

/// The writes `apply` would make, in order.
fn planned_writes(root: &SysRoot, spec: &TuningSpec) -> Vec<Step> {
    tune::engine::items(root, spec)
        .iter()
        .filter_map(|i| match i.plan(root) {
            Decision::Change { steps, .. } => Some(steps),
            Decision::Done(_) => None,
        })
        .flatten()
        .collect()
}

#[test]
fn the_tree_plans_thirteen_writes() {
    let t = Tree::new("plan");
    let paths: Vec<String> = planned_writes(&t.root(), &t.spec(""))
        .into_iter()
        .map(|s| s.path)
        .collect();
    assert_eq!(
        paths,
        [
            "/proc/irq/default_smp_affinity",
            "/proc/irq/10/smp_affinity_list",
            "/proc/irq/11/smp_affinity_list",
            "/proc/irq/12/smp_affinity_list",
            "/sys/devices/virtual/workqueue/cpumask",
            "/proc/sys/vm/overcommit_ratio",
            "/proc/sys/vm/overcommit_memory",
            "/proc/sys/kernel/printk",
            "/proc/sys/kernel/timer_migration",
            "/proc/sys/vm/stat_interval",
            "/sys/devices/system/cpu/cpufreq/policy0/scaling_governor",
            "/sys/devices/system/cpu/cpu2/cpuidle/state1/disable",
            "/sys/devices/system/cpu/cpu3/cpuidle/state1/disable",
        ]
    );
}

#[test]
fn kth_write_fails_first_k_minus_1_restored_byte_for_byte() {
    // rtbench's tuning lock in this process (common::lock).
    let _no_forks = no_forks();
    let errnos = [
        libc::EIO,
        libc::EPERM,
        libc::EINVAL,
        libc::ENOSPC,
        libc::EROFS,
        libc::ENOENT,
    ];
    let n = {
        let t = Tree::new("count");
        planned_writes(&t.root(), &t.spec("")).len()
    };
    for k in 1..=n {
        for &errno in &errnos {
            let t = Tree::new("kth");
            let spec = t.spec("");
            let before = t.snapshot();
            let path = planned_writes(&t.root(), &spec)[k - 1].path.clone();
            let root = t.root().with_faults([(path.clone(), errno)]);
            let report = tune::apply(&root, &spec, &ApplyOptions::default()).unwrap();
            let ctx = format!("k={k} of {n}, errno {errno}, {path}");
            let irq = path.contains("/smp_affinity_list");
            if irq && (errno == libc::EIO || errno == libc::EPERM) {
                // Unmovable IRQ: unsupported, the rest is applied and kept.
                let r = report
                    .items
                    .iter()
                    .find(|i| i.path.as_deref() == Some(&path))
                    .unwrap();
                assert_eq!(r.status, Status::Unsupported, "{ctx}");
                assert_eq!(r.errno, Some(errno), "{ctx}");
                assert_eq!(report.exit_code(), 0, "{ctx}");
                assert!(report.rolled_back.is_empty(), "{ctx}");
                let j = Journal::load(&spec.journal_dir).unwrap().unwrap();
                assert_eq!(j.state, JournalState::Committed, "{ctx}");
                assert_eq!(j.entries.len(), n - 1, "{ctx}");
                let rel = path.trim_start_matches('/');
                let key = t.join("root").join(rel);
                assert_eq!(t.snapshot()[&key], before[&key], "{ctx}");
                // And revert brings back every byte.
                let rv = tune::revert(&t.root(), &spec).unwrap();
                assert_eq!(rv.exit_code(), 0, "{ctx}");
                assert_eq!(t.snapshot(), before, "{ctx}");
                continue;
            }
            // The kernel refused a write: the environment's answer, exit 3.
            assert_eq!(report.exit_code(), 3, "{ctx}");
            let failed: Vec<_> = report
                .items
                .iter()
                .filter(|i| i.status == Status::Failed)
                .collect();
            assert_eq!(failed.len(), 1, "{ctx}: {:#?}", report.items);
            assert_eq!(failed[0].errno, Some(errno), "{ctx}");
            assert_eq!(failed[0].path.as_deref(), Some(path.as_str()), "{ctx}");
            let name = tune::errno_name(errno);
            assert!(
                failed[0].detail.contains(&name),
                "{ctx}: {}",
                failed[0].detail
            );
            assert_eq!(report.rolled_back.len(), k - 1, "{ctx}");
            assert!(
                report.rolled_back.iter().all(|r| r.status == Status::Ok),
                "{ctx}"
            );
            assert_eq!(t.snapshot(), before, "{ctx}: not restored byte-for-byte");
            let j = Journal::load(&spec.journal_dir).unwrap().unwrap();
            assert_eq!(j.state, JournalState::RolledBack, "{ctx}");
            assert!(j.entries.is_empty(), "{ctx}");
        }
    }
}

#[test]
fn apply_then_apply_writes_nothing_then_revert_restores_all() {
    // rtbench's tuning lock in this process (common::lock).
    let _no_forks = no_forks();
    let t = Tree::new("idem");
    let spec = t.spec("");
    let before = t.snapshot();
    let r1 = tune::apply(&t.root(), &spec, &ApplyOptions::default()).unwrap();
    assert_eq!(r1.exit_code(), 0, "{:#?}", r1.items);
    assert_eq!(r1.writes, 13);
    assert_eq!(r1.items.iter().filter(|i| i.changed).count(), 12);
    // Only console_loglevel changed; the other three printk values stay.
    let root = t.root();
    assert_eq!(
        root.read("/proc/sys/kernel/printk").unwrap(),
        "1\t4\t1\t7\n"
    );
    assert_eq!(
        root.read("/proc/irq/11/smp_affinity_list").unwrap(),
        "0-1\n"
    );
    assert_eq!(root.read("/proc/irq/default_smp_affinity").unwrap(), "3\n");
    let journal_file = tune::journal::path(&spec.journal_dir);
    let j1 = std::fs::read(&journal_file).unwrap();
    let m1 = std::fs::metadata(&journal_file)
        .unwrap()
        .modified()
        .unwrap();
    let after_first = t.snapshot();

    // Second apply: nothing differs, so no kernel write and no journal write.
    let faulty_everywhere = t.root().with_faults(after_first.keys().map(|p| {
        (
            format!("/{}", p.strip_prefix(t.join("root")).unwrap().display()),
            libc::EIO,
        )
    }));
    let r2 = tune::apply(&faulty_everywhere, &spec, &ApplyOptions::default()).unwrap();
    assert_eq!(r2.writes, 0);
    assert_eq!(r2.exit_code(), 0);
    assert!(r2.items.iter().all(|i| !i.changed));
    assert_eq!(t.snapshot(), after_first);
    assert_eq!(std::fs::read(&journal_file).unwrap(), j1);
    assert_eq!(
        std::fs::metadata(&journal_file)
            .unwrap()
            .modified()
            .unwrap(),
        m1
    );
    assert_eq!(tune::check(&t.root(), &spec).exit_code(), 0);

    let rv = tune::revert(&t.root(), &spec).unwrap();
    assert_eq!(rv.exit_code(), 0, "{:#?}", rv.items);
    assert_eq!(rv.items.len(), 13);
    assert_eq!(t.snapshot(), before);
    assert_eq!(
        Journal::load(&spec.journal_dir).unwrap().unwrap().state,
        JournalState::Reverted
    );
    // A second revert has nothing left to do.
    assert_eq!(tune::revert(&t.root(), &spec).unwrap().writes, 0);
}

/// The margin of the `overcommit_memory = 2` guard is what may be
/// committed next — the largest process that may fork and the self-test's own load,
/// forks, stacks and memory — not a percentage; `check` shows the numbers, `apply`
/// refuses the item before any write (exit 3) when they do not fit.
#[test]
fn overcommit_guard_counts_the_largest_fork_and_the_selftest() {
    // rtbench's tuning lock in this process (common::lock).
    let _no_forks = no_forks();
    let t = Tree::new("guard");
    // CommitLimit with ratio 80: 1000000 × 80 % = 800000 kB.
    t.file(
        "proc/meminfo",
        "MemTotal:        1000000 kB\nSwapTotal:             0 kB\nCommitted_AS:     700000 kB\nHugetlb:               0 kB\n",
    );
    let item = |r: &tune::TuningReport| {
        r.items
            .iter()
            .find(|i| i.item == "sysctl.vm.overcommit")
            .unwrap()
            .clone()
    };
    // 700000 + 4 measuring threads × their stack mapping (glibc's: 32 KiB here, 128 KiB
    // on aarch64) fits.
    let stack_kib = rtbench::measure::thread_stack_mapping_bytes() / 1024;
    let threads_kib = 4 * stack_kib;
    let c = tune::check(&t.root(), &t.spec(""));
    let i = item(&c);
    assert_eq!(i.status, Status::Deviation, "{}", i.detail);
    assert!(
        i.detail.contains(&format!(
            "CommitLimit 800000 kB covers {} kB (Committed_AS 700000 + largest fork 0 + self-test {threads_kib})",
            700_000 + threads_kib
        )),
        "{}",
        i.detail
    );
    // The self-test's vm load of 128 MiB does not.
    let spec = t.spec("[load]\nspec = \"vm:1:128M\"\n");
    let i = item(&tune::check(&t.root(), &spec));
    assert_eq!(i.status, Status::Failed, "{}", i.detail);
    assert!(
        i.detail.starts_with(&format!(
            "refused: CommitLimit would be 800000 kB, below Committed_AS 700000 kB + the self-test {} kB (vm load 131072 kB, 1 load process(es), 4 measuring thread(s) × {stack_kib} KiB stack",
            131_072 + threads_kib
        )) && i.detail.contains(&format!(
            "= {} kB (fork and mmap would fail); raise overcommit_ratio to 84 or more",
            700_000 + 131_072 + threads_kib
        )),
        "{}",
        i.detail
    );
    let before = t.snapshot();
    let r = tune::apply(&t.root(), &spec, &ApplyOptions::default()).unwrap();
    assert_eq!(r.exit_code(), 3);
    assert_eq!(r.writes, 0);
    assert_eq!(t.snapshot(), before);
    assert!(Journal::load(&spec.journal_dir).unwrap().is_none());
    // Nor does a process whose fork would commit its 150000 kB once more.
    t.file(
        "proc/77/status",
        "Name:\tjava\nVmData:\t  149868 kB\nVmStk:\t     132 kB\n",
    );
    let i = item(&tune::check(&t.root(), &t.spec("")));
    assert_eq!(i.status, Status::Failed, "{}", i.detail);
    assert!(
        i.detail
            .contains("+ the largest process that may fork, java (pid 77), 150000 kB")
            && i.detail
                .contains(&format!("= {} kB", 850_000 + threads_kib)),
        "{}",
        i.detail
    );
}

#[test]
fn missing_files_are_not_applicable_and_read_only_irqs_unsupported() {
    // rtbench's tuning lock in this process (common::lock).
    let _no_forks = no_forks();
    let t = Tree::new("missing");
    std::fs::remove_file(t.join("root/proc/sys/kernel/timer_migration")).unwrap();
    std::fs::remove_dir_all(t.join("root/sys/devices/system/cpu/cpufreq")).unwrap();
    std::fs::remove_dir_all(t.join("root/sys/devices/system/cpu/cpu3/cpuidle")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    let irq12 = t.join("root/proc/irq/12/smp_affinity_list");
    std::fs::set_permissions(&irq12, std::fs::Permissions::from_mode(0o444)).unwrap();
    let spec = t.spec("");
    let r = tune::check(&t.root(), &spec);
    let status = |name: &str| r.items.iter().find(|i| i.item == name).unwrap().status;
    assert_eq!(
        status("sysctl.kernel.timer_migration"),
        Status::NotApplicable
    );
    assert_eq!(status("cpufreq.governor"), Status::NotApplicable);
    assert_eq!(status("cpuidle.cpu3"), Status::NotApplicable);
    assert_eq!(status("irq.12"), Status::Unsupported);
    assert_eq!(status("irq.10"), Status::Deviation);
    // apply never writes the read-only IRQ (a fault there would show up otherwise).
    let root = t
        .root()
        .with_faults([("/proc/irq/12/smp_affinity_list".to_string(), libc::EINVAL)]);
    let a = tune::apply(&root, &spec, &ApplyOptions::default()).unwrap();
    assert_eq!(a.exit_code(), 0, "{:#?}", a.items);
    assert_eq!(std::fs::read_to_string(&irq12).unwrap(), "0-3\n");
}

#[test]
fn unavailable_governor_refused_before_any_write() {
    // rtbench's tuning lock in this process (common::lock).
    let _no_forks = no_forks();
    let t = Tree::new("gov");
    let spec = {
        let text = format!(
            "[tuning]\njournal_dir = \"{}\"\n[tuning.sysctl]\nprintk = 1\n[tuning.power]\ngovernor = \"userspace\"\n",
            t.journal_dir().display()
        );
        config::parse(&text, "t", &t.root()).unwrap().tuning
    };
    let before = t.snapshot();
    let r = tune::apply(&t.root(), &spec, &ApplyOptions::default()).unwrap();
    assert_eq!(r.exit_code(), 3);
    assert_eq!(r.writes, 0);
    assert_eq!(t.snapshot(), before);
    let f = r.items.iter().find(|i| i.status == Status::Failed).unwrap();
    assert!(f.detail.contains("not available"), "{}", f.detail);
}

#[test]
fn interrupted_journal_is_rolled_back_before_a_new_apply() {
    // rtbench's tuning lock in this process (common::lock).
    let _no_forks = no_forks();
    let t = Tree::new("recover");
    let spec = t.spec("");
    let before = t.snapshot();
    // What a crash after two writes leaves: files changed, journal `applying`.
    let root = t.root();
    let steps = planned_writes(&root, &spec);
    let mut j = Journal {
        state: JournalState::Applying,
        ..Journal::default()
    };
    for s in &steps[..2] {
        j.entries.push(Entry {
            item: "crashed".into(),
            step: s.clone(),
        });
        root.write(&s.path, format!("{}\n", s.desired).as_bytes())
            .unwrap();
    }
    std::fs::create_dir_all(&spec.journal_dir).unwrap();
    j.save(&spec.journal_dir).unwrap();
    assert_ne!(t.snapshot(), before);
    let rv = tune::revert(&root, &spec).unwrap();
    assert_eq!(rv.recovered.len(), 2);
    assert!(rv.recovered.iter().all(|r| r.status == Status::Ok));
    assert_eq!(t.snapshot(), before);
    assert_eq!(
        Journal::load(&spec.journal_dir).unwrap().unwrap().state,
        JournalState::RolledBack
    );
    // Same through apply: roll back first, then apply from the true originals.
    for s in &steps[..2] {
        root.write(&s.path, format!("{}\n", s.desired).as_bytes())
            .unwrap();
    }
    j.save(&spec.journal_dir).unwrap();
    let a = tune::apply(&root, &spec, &ApplyOptions::default()).unwrap();
    assert_eq!(a.recovered.len(), 2);
    assert_eq!(a.exit_code(), 0);
    let j = Journal::load(&spec.journal_dir).unwrap().unwrap();
    assert_eq!(j.entries.len(), 13);
    assert_eq!(j.entries[0].step.original, "f\n");
    tune::revert(&root, &spec).unwrap();
    assert_eq!(t.snapshot(), before);
}

#[test]
fn step_kinds_compare_semantically() {
    let s = Step::new("/x", "0-3\n", "2,3".into(), ValueKind::List);
    assert_eq!(s.restore, "0-3");
    assert_eq!(
        ValueKind::List.normalise("2,3"),
        ValueKind::List.normalise("2-3")
    );
}

/// Unmounts on drop, so a failing assertion does not leave the mount behind.
struct Mount(std::path::PathBuf);

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn real_read_only_proc_sys_fails_with_erofs_and_rolls_back() {
    // rtbench's tuning lock in this process (common::lock).
    let _no_forks = no_forks();
    // As in a container: /proc/sys mounted read-only (a real ro bind mount, not a
    // fault plan). The first sysctl write is the 6th of 13.
    let t = Tree::new("rofs");
    let spec = t.spec("");
    let before = t.snapshot();
    let sys = t.join("root/proc/sys");
    let run = |args: &[&str]| {
        let st = std::process::Command::new("mount")
            .args(args)
            .arg(&sys)
            .arg(&sys)
            .status()
            .unwrap();
        assert!(st.success(), "mount {args:?} failed (needs root)");
    };
    run(&["--bind"]);
    let _m = Mount(sys.clone());
    let st = std::process::Command::new("mount")
        .args(["-o", "remount,ro,bind"])
        .arg(&sys)
        .status()
        .unwrap();
    assert!(st.success());
    let r = tune::apply(&t.root(), &spec, &ApplyOptions::default()).unwrap();
    assert_eq!(r.exit_code(), 3);
    let f: Vec<_> = r
        .items
        .iter()
        .filter(|i| i.status == Status::Failed)
        .collect();
    assert_eq!(f.len(), 1, "{:#?}", r.items);
    assert_eq!(f[0].errno, Some(libc::EROFS));
    assert_eq!(f[0].path.as_deref(), Some("/proc/sys/vm/overcommit_ratio"));
    assert!(f[0].detail.contains("EROFS"), "{}", f[0].detail);
    assert_eq!(r.rolled_back.len(), 5);
    assert_eq!(t.snapshot(), before);
}

#[test]
fn running_irqbalance_refuses_or_warns_before_any_write() {
    // rtbench's tuning lock in this process (common::lock).
    let _no_forks = no_forks();
    let t = Tree::new("irqbalance");
    t.file("proc/4242/comm", "irqbalance\n");
    t.file("proc/1/comm", "init\n");
    let before = t.snapshot();
    let spec = t.spec("");
    let r = tune::apply(&t.root(), &spec, &ApplyOptions::default()).unwrap();
    let ib = r.items.iter().find(|i| i.item == "irq.irqbalance").unwrap();
    assert_eq!(ib.status, Status::Failed);
    assert_eq!(ib.path.as_deref(), Some("/proc/4242"));
    assert!(
        ib.detail.contains("IRQBALANCE_BANNED_CPULIST=2-3"),
        "{}",
        ib.detail
    );
    assert_eq!(r.writes, 0);
    assert_eq!(t.snapshot(), before);
    // Banning the isolated CPUs in its config makes it harmless.
    t.file(
        "etc/default/irqbalance",
        "# x\nIRQBALANCE_BANNED_CPULIST=2-3\n",
    );
    let c = tune::check(&t.root(), &spec);
    let ib = c.items.iter().find(|i| i.item == "irq.irqbalance").unwrap();
    assert_eq!(ib.status, Status::Ok, "{}", ib.detail);
    // The deprecated hex variable wins when set.
    t.file(
        "etc/default/irqbalance",
        "IRQBALANCE_BANNED_CPULIST=2-3\nIRQBALANCE_BANNED_CPUS=4\n",
    );
    let c = tune::check(&t.root(), &spec);
    let ib = c.items.iter().find(|i| i.item == "irq.irqbalance").unwrap();
    assert_eq!(ib.status, Status::Failed, "{}", ib.detail);
    // policy "warn": applied anyway, and said so.
    std::fs::remove_file(t.join("root/etc/default/irqbalance")).unwrap();
    let spec = {
        let text = t.config_text("").replace(
            "default_affinity = true",
            "default_affinity = true\nirqbalance = \"warn\"",
        );
        config::parse(&text, "t", &t.root()).unwrap().tuning
    };
    let r = tune::apply(&t.root(), &spec, &ApplyOptions::default()).unwrap();
    assert_eq!(r.exit_code(), 0);
    let ib = r.items.iter().find(|i| i.item == "irq.irqbalance").unwrap();
    assert!(
        ib.detail.starts_with("warning: irqbalance (pid 4242)"),
        "{}",
        ib.detail
    );
    assert_eq!(r.writes, 13);
}

/// irqbalance's environment file is read as the shell sources it
/// (export, quotes, comments, line continuations); a value rtbench cannot read — an
/// expansion, a command, not a mask or list — is "unreadable", never "bans nothing".
#[test]
fn irqbalance_files_are_read_as_the_shell_sources_them() {
    let t = Tree::new("irqbalance-shell");
    t.file("proc/4242/comm", "irqbalance\n");
    let spec = t.spec("");
    let item = |text: &str| {
        t.file("etc/default/irqbalance", text);
        let c = tune::check(&t.root(), &spec);
        let ib = c.items.iter().find(|i| i.item == "irq.irqbalance").unwrap();
        (ib.status, ib.detail.clone())
    };
    let (status, detail) = item(
        "# irqbalance\n#IRQBALANCE_BANNED_CPULIST=\nexport IRQBALANCE_BANNED_CPULIST=\"2-\\\n3\"  # isolated\n",
    );
    assert_eq!(status, Status::Ok, "{detail}");
    assert!(
        detail.ends_with("bans 2-3 (/etc/default/irqbalance line 3 IRQBALANCE_BANNED_CPULIST)"),
        "{detail}"
    );
    for (text, why) in [
        (
            "ISOL=2-3\nIRQBALANCE_BANNED_CPULIST=$ISOL\n",
            "/etc/default/irqbalance line 2: IRQBALANCE_BANNED_CPULIST is unreadable: IRQBALANCE_BANNED_CPULIST=\"$ISOL\": a shell expansion rtbench does not perform",
        ),
        (
            "IRQBALANCE_BANNED_CPUS=zz\n",
            "/etc/default/irqbalance line 1: IRQBALANCE_BANNED_CPUS=\"zz\" is unreadable: not a CPU mask",
        ),
        (
            "IRQBALANCE_BANNED_CPULIST=2-3\n. /etc/irqbalance.local\n",
            "line 2: IRQBALANCE_BANNED_CPUS is unreadable: a command ('.') rtbench does not run",
        ),
    ] {
        let (status, detail) = item(text);
        assert_eq!(status, Status::Failed, "{text}: {detail}");
        assert!(
            detail.starts_with("refused: irqbalance (pid 4242) runs and ") && detail.contains(why),
            "{text}: {detail}"
        );
        assert!(!detail.contains("bans only"), "{detail}");
    }
}

#[test]
fn applying_a_changed_config_on_top_then_revert_restores_the_first_originals() {
    // rtbench's tuning lock in this process (common::lock).
    let _no_forks = no_forks();
    let t = Tree::new("stack");
    let before = t.snapshot();
    let spec_for = |level: u8| {
        let text = format!(
            "[tuning]\njournal_dir = \"{}\"\n[tuning.sysctl]\nprintk = {level}\n",
            t.journal_dir().display()
        );
        config::parse(&text, "t", &t.root()).unwrap().tuning
    };
    let a = tune::apply(&t.root(), &spec_for(1), &ApplyOptions::default()).unwrap();
    assert_eq!(a.writes, 1);
    let b = tune::apply(&t.root(), &spec_for(3), &ApplyOptions::default()).unwrap();
    assert_eq!(b.writes, 1);
    assert_eq!(
        t.root().read("/proc/sys/kernel/printk").unwrap(),
        "3\t4\t1\t7\n"
    );
    let j = Journal::load(&t.journal_dir()).unwrap().unwrap();
    assert_eq!(j.entries.len(), 2);
    assert_eq!(j.entries[1].step.original, "1\t4\t1\t7\n");
    let r = tune::revert(&t.root(), &spec_for(3)).unwrap();
    assert_eq!(r.writes, 2);
    assert_eq!(t.snapshot(), before);
}

#[test]
fn check_only_items_are_reported_after_the_writes_of_apply() {
    // rtbench's tuning lock in this process (common::lock).
    let _no_forks = no_forks();
    let t = Tree::new("final");
    let text = format!(
        "[tuning]\nisolated = \"2-3\"\njournal_dir = \"{}\"\n[tuning.boot]\nirqaffinity = true\n\
         [tuning.irq]\ndefault_affinity = true\n",
        t.journal_dir().display()
    );
    let spec = config::parse(&text, "t", &t.root()).unwrap().tuning;
    let c = tune::check(&t.root(), &spec);
    assert_eq!(c.items[0].status, Status::Deviation, "{:#?}", c.items);
    let a = tune::apply(&t.root(), &spec, &ApplyOptions::default()).unwrap();
    assert_eq!(a.items[0].item, "boot.irqaffinity");
    assert_eq!(a.items[0].status, Status::Ok, "{:#?}", a.items);
    assert_eq!(a.exit_code(), 0);
    assert_eq!(a.bootargs.as_deref(), Some("irqaffinity=0-1"));
}

/// `rtbench tune --help` states the exit code a failed apply has: 3 (the system
/// refused; what this run changed is rolled back), not 1, which is a deviation.
#[test]
fn help_states_the_exit_code_of_a_failed_apply() {
    let _no_forks = no_forks();
    let t = Tree::new("help-exit");
    let cfg = t.journal_dir().with_file_name("rtbench.toml");
    std::fs::write(
        &cfg,
        format!(
            "[tuning]\njournal_dir = \"{}\"\n[tuning.power]\ngovernor = \"userspace\"\n",
            t.journal_dir().display()
        ),
    )
    .unwrap();
    let root = t.journal_dir().with_file_name("root").display().to_string();
    let o = crate::common::run(
        &[
            "tune",
            "apply",
            "--config",
            cfg.to_str().unwrap(),
            "--sysroot",
            &root,
        ][..],
    );
    let failed_apply = o.status.code().unwrap();
    assert_eq!(failed_apply, 3, "{o:?}");
    let help = String::from_utf8(crate::common::run("tune --help").stdout).unwrap();
    let codes = help
        .split("Exit codes: ")
        .nth(1)
        .unwrap_or_else(|| panic!("{help}"))
        .replace('\n', " ");
    // "N meaning" items separated by ", " before the next code.
    let said = |code: i32| -> String {
        let start = codes.find(&format!("{code} ")).unwrap();
        let rest = &codes[start..];
        let end = (code + 1..10)
            .filter_map(|n| rest.find(&format!(", {n} ")))
            .min()
            .unwrap_or(rest.len());
        rest[..end].to_string()
    };
    assert!(said(failed_apply).contains("apply"), "{codes}");
    assert!(!said(1).contains("fail"), "{codes}");
}

/// Without a configuration file, `tune check` audits the generic real-time settings
/// (src/config/audit.toml), as `tuned-adm verify` checks a profile, and says so; `tune
/// apply` refuses (exit 2) and writes nothing: changing the system needs a file. The
/// tests' mount namespace hides the host's /etc/rtbench.
#[test]
fn without_a_configuration_check_audits_and_apply_refuses() {
    let _no_forks = no_forks();
    let t = Tree::new("audit");
    t.file("sys/kernel/realtime", "1\n");
    t.file("proc/sys/kernel/sched_rt_runtime_us", "950000\n");
    t.file(
        "sys/kernel/mm/transparent_hugepage/enabled",
        "always madvise [never]\n",
    );
    let root = t.journal_dir().with_file_name("root").display().to_string();
    let before = t.snapshot();
    let o = crate::common::run(&["tune", "check", "--sysroot", &root][..]);
    let out = String::from_utf8(o.stdout.clone()).unwrap();
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "rtbench tune check (no /etc/rtbench/rtbench.toml: the generic real-time audit)"
    );
    for (status, item) in [
        ("ok", "kernel.preempt_rt"),
        ("ok", "sysctl.kernel.printk"),
        ("ok", "sysctl.kernel.sched_rt_runtime_us"),
        ("deviation", "sysctl.kernel.timer_migration"),
        ("deviation", "sysctl.vm.stat_interval"),
        ("ok", "memory.thp"),
    ] {
        assert!(
            lines
                .iter()
                .any(|l| l.split_whitespace().take(2).eq([status, item])),
            "{status} {item}: {out}"
        );
    }
    assert_eq!(lines.len(), 8, "the audit's six items: {out}");
    let o = crate::common::run(&["tune", "apply", "--sysroot", &root][..]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        err.starts_with("rtbench: /etc/rtbench/rtbench.toml: cannot read the configuration: ")
            && err.contains(
                "tune apply changes the system only as a configuration file's [tuning] says"
            ),
        "{err}"
    );
    assert_eq!(t.snapshot(), before);
}

/// A check whose every item's knob is absent here (no transparent hugepages in the
/// tree) compared nothing: "nothing checked", exit 1, not a clean exit 0.
#[test]
fn a_check_whose_every_knob_is_absent_checked_nothing() {
    let t = Tree::new("all-na");
    let cfg = t.journal_dir().with_file_name("rtbench.toml");
    std::fs::write(
        &cfg,
        format!(
            "[tuning]\njournal_dir = \"{}\"\n[tuning.memory]\nthp = \"never\"\n",
            t.journal_dir().display()
        ),
    )
    .unwrap();
    let root = t.journal_dir().with_file_name("root").display().to_string();
    let args = [
        "tune",
        "check",
        "--config",
        cfg.to_str().unwrap(),
        "--sysroot",
        &root,
    ];
    let o = crate::common::run(&args[..]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("not-applicable  memory.thp"), "{out}");
    assert!(
        out.contains("nothing checked: no configured knob exists on this system"),
        "{out}"
    );
}
