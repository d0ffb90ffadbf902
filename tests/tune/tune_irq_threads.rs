//! IRQ handler threads (`irq/N-name`) on a temporary /proc + /sys tree: `tune check`
//! names each thread whose `Cpus_allowed_list` is not within its IRQ's (new)
//! affinity, `apply` moves it (journalled), `revert` restores it byte for byte, a
//! thread the kernel pins (EINVAL) is `unsupported`, and a pid reused by another task
//! is left alone. Masks are compared over the online CPUs. The same on this machine's
//! real IRQ threads is in tests/tune/tune_host.rs.

use crate::common::{no_forks, tune_tree};

use rtbench::config;
use rtbench::tune::{self, ApplyOptions, Status, ValueKind};
use tune_tree::Tree;

fn status_file(ppid: u32, allowed: &str) -> String {
    let mask = rtbench::cpuset::CpuSet::parse_list(allowed, 4)
        .unwrap()
        .to_mask(4);
    format!("Name:\tx\nState:\tS (sleeping)\nPPid:\t{ppid}\nCpus_allowed:\t{mask}\nCpus_allowed_list:\t{allowed}\nvoluntary_ctxt_switches:\t7\n")
}

fn thread(t: &Tree, pid: u32, comm: &str, ppid: u32, allowed: &str) {
    t.file(&format!("proc/{pid}/comm"), &format!("{comm}\n"));
    t.file(&format!("proc/{pid}/status"), &status_file(ppid, allowed));
}

fn allowed(t: &Tree, pid: u32) -> String {
    let s = t.root().read(&format!("/proc/{pid}/status")).unwrap();
    s.lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap()
        .trim()
        .to_string()
}

/// The 4-CPU tree (CPUs 2-3 isolated by the configuration) with threads for IRQs
/// 10-12: one allowed everywhere, one on an isolated CPU, one already within
/// housekeeping; and a user process that merely has an IRQ thread's name.
fn tree(tag: &str) -> Tree {
    let t = Tree::new(tag);
    thread(&t, 100, "irq/10-eth0", 2, "0-3");
    thread(&t, 101, "irq/11-mmc0", 2, "2");
    thread(&t, 102, "irq/12-s-eth0", 2, "0-1");
    thread(&t, 500, "irq/12-fake", 1, "0-3");
    t
}

fn config(t: &Tree) -> String {
    // Only the IRQ items, so the counts below are about them.
    format!(
        "[tuning]\nisolated = \"2-3\"\njournal_dir = \"{}\"\n[tuning.irq]\naffinity = true\n",
        t.journal_dir().display()
    )
}

fn item<'a>(r: &'a tune::TuningReport, name: &str) -> &'a tune::ItemReport {
    r.items
        .iter()
        .find(|i| i.item == name)
        .unwrap_or_else(|| panic!("no {name} in {:#?}", r.items))
}

#[test]
fn check_names_each_thread_outside_its_irqs_affinity() {
    let t = tree("irqthr-check");
    let spec = config::parse(&config(&t), "t.toml", &t.root())
        .unwrap()
        .tuning;
    let r = tune::check(&t.root(), &spec);
    let names: Vec<&str> = r.items.iter().map(|i| i.item.as_str()).collect();
    assert_eq!(
        names,
        [
            "irq.irqbalance",
            "irq.10",
            "irq-thread.irq/10-eth0",
            "irq.11",
            "irq-thread.irq/11-mmc0",
            "irq.12",
            "irq-thread.irq/12-s-eth0",
        ]
    );
    let t10 = item(&r, "irq-thread.irq/10-eth0");
    assert_eq!(t10.status, Status::Deviation);
    assert_eq!(
        t10.detail,
        "irq/10-eth0 (pid 100) allowed on 0-3 -> 0-1 (IRQ 10 belongs on 0-1) (apply would write)"
    );
    assert_eq!(t10.path.as_deref(), Some("/proc/100/status"));
    assert_eq!(item(&r, "irq-thread.irq/11-mmc0").status, Status::Deviation);
    let t12 = item(&r, "irq-thread.irq/12-s-eth0");
    assert_eq!(t12.status, Status::Ok, "{t12:?}");
    assert!(t12.detail.contains("within IRQ 12's 0-1"), "{}", t12.detail);
    assert_eq!(r.exit_code(), 1);

    // The IRQ itself is fine but its thread never followed (no interrupt since):
    // the thread alone deviates.
    t.file("proc/irq/11/smp_affinity_list", "0-1\n");
    let r = tune::check(&t.root(), &spec);
    assert_eq!(item(&r, "irq.11").status, Status::Ok);
    assert_eq!(item(&r, "irq-thread.irq/11-mmc0").status, Status::Deviation);
}

#[test]
fn apply_moves_threads_and_revert_restores_them() {
    // rtbench's tuning lock in this process (common::lock).
    let _no_forks = no_forks();
    let t = tree("irqthr-apply");
    let spec = config::parse(&config(&t), "t.toml", &t.root())
        .unwrap()
        .tuning;
    let before = t.snapshot();
    let r = tune::apply(&t.root(), &spec, &ApplyOptions::default()).unwrap();
    assert_eq!(r.exit_code(), 0, "{:#?}", r.items);
    assert_eq!(allowed(&t, 100), "0-1");
    assert_eq!(allowed(&t, 101), "0-1");
    assert_eq!(allowed(&t, 102), "0-1");
    assert_eq!(
        allowed(&t, 500),
        "0-3",
        "a user process is not an IRQ thread"
    );
    assert!(item(&r, "irq-thread.irq/10-eth0").changed);
    // Journalled as task-affinity steps, after their IRQ.
    let j = tune::journal::Journal::load(&spec.journal_dir)
        .unwrap()
        .unwrap();
    let kinds: Vec<(String, ValueKind)> = j
        .entries
        .iter()
        .map(|e| (e.step.path.clone(), e.step.kind))
        .collect();
    assert_eq!(
        kinds,
        [
            (
                "/proc/irq/10/smp_affinity_list".to_string(),
                ValueKind::List
            ),
            ("/proc/100/status".to_string(), ValueKind::TaskAffinity),
            (
                "/proc/irq/11/smp_affinity_list".to_string(),
                ValueKind::List
            ),
            ("/proc/101/status".to_string(), ValueKind::TaskAffinity),
            (
                "/proc/irq/12/smp_affinity_list".to_string(),
                ValueKind::List
            ),
        ]
    );
    // Nothing left to do.
    let again = tune::apply(&t.root(), &spec, &ApplyOptions::default()).unwrap();
    assert_eq!(again.writes, 0, "{:#?}", again.items);
    let r = tune::revert(&t.root(), &spec).unwrap();
    assert_eq!(r.exit_code(), 0, "{:#?}", r.items);
    assert_eq!(t.snapshot(), before);
}

#[test]
fn a_pinned_thread_is_unsupported_and_a_reused_pid_left_alone() {
    // rtbench's tuning lock in this process (common::lock).
    let _no_forks = no_forks();
    let t = tree("irqthr-fault");
    let spec = config::parse(&config(&t), "t.toml", &t.root())
        .unwrap()
        .tuning;
    // The kernel refuses to move pid 100 (PF_NO_SETAFFINITY): EINVAL.
    let root = t
        .root()
        .with_faults([("/proc/100/status".to_string(), libc::EINVAL)]);
    let r = tune::apply(&root, &spec, &ApplyOptions::default()).unwrap();
    let t10 = item(&r, "irq-thread.irq/10-eth0");
    assert_eq!(t10.status, Status::Unsupported, "{t10:?}");
    assert_eq!(t10.errno, Some(libc::EINVAL));
    assert_eq!(allowed(&t, 100), "0-3");
    assert_eq!(allowed(&t, 101), "0-1");
    assert_eq!(r.exit_code(), 0, "{:#?}", r.items);
    // Thread 101 exits and its pid goes to another task: revert leaves that alone.
    thread(&t, 101, "kworker/1:2", 2, "1");
    let r = tune::revert(&t.root(), &spec).unwrap();
    let gone = r
        .items
        .iter()
        .find(|i| i.path.as_deref() == Some("/proc/101/status"))
        .unwrap();
    assert_eq!(gone.status, Status::Ok);
    assert_eq!(gone.detail, "gone (nothing to restore)");
    assert_eq!(allowed(&t, 101), "1");
    assert_eq!(
        t.root()
            .read_trim("/proc/irq/11/smp_affinity_list")
            .unwrap(),
        "0-3"
    );
}

#[test]
fn masks_are_compared_over_online_cpus() {
    // CPUs 2-3 offline (hotplug): an IRQ on 0-1,3 and a thread on 0-3 route only to
    // housekeeping CPUs 0-1; nothing to do. The default affinity likewise.
    let t = Tree::new("irqthr-offline");
    t.file("sys/devices/system/cpu/online", "0-1\n");
    t.file("proc/irq/10/smp_affinity_list", "0-1,3\n");
    t.file("proc/irq/11/smp_affinity_list", "0-1\n");
    t.file("proc/irq/12/smp_affinity_list", "0\n");
    thread(&t, 100, "irq/10-eth0", 2, "0-3");
    t.file("proc/irq/default_smp_affinity", "f\n");
    let cfg = format!(
        "[tuning]\nisolated = \"3\"\njournal_dir = \"{}\"\n[tuning.irq]\naffinity = true\ndefault_affinity = true\n[tuning.boot]\nirqaffinity = true\n",
        t.journal_dir().display()
    );
    let spec = config::parse(&cfg, "t.toml", &t.root()).unwrap().tuning;
    assert_eq!(spec.housekeeping.to_list(), "0-1");
    let r = tune::check(&t.root(), &spec);
    for i in &r.items {
        assert_eq!(i.status, Status::Ok, "{i:?}");
    }
    // An online isolated CPU in the mask still counts.
    t.file("sys/devices/system/cpu/online", "0-3\n");
    let spec = config::parse(&cfg, "t.toml", &t.root()).unwrap().tuning;
    let r = tune::check(&t.root(), &spec);
    assert_eq!(item(&r, "irq.10").status, Status::Deviation);
    assert_eq!(item(&r, "boot.irqaffinity").status, Status::Deviation);
}

#[test]
fn the_thread_of_an_irq_that_cannot_move_stays_on_housekeeping_cpus() {
    // rtbench's tuning lock in this process (common::lock).
    let _no_forks = no_forks();
    // A managed queue IRQ of isolated CPU 2 (smp_affinity_list created 0444, writes
    // refused) and its thread on CPU 2: the thread goes to housekeeping, the IRQ stays.
    use std::os::unix::fs::PermissionsExt;
    let t = tree("irqthr-managed");
    t.file("proc/irq/11/smp_affinity_list", "2\n");
    let p = t.join("root/proc/irq/11/smp_affinity_list");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o444)).unwrap();
    let spec = config::parse(&config(&t), "t.toml", &t.root())
        .unwrap()
        .tuning;
    let root = t
        .root()
        .with_faults([("/proc/irq/11/smp_affinity_list".to_string(), libc::EIO)]);
    let r = tune::check(&root, &spec);
    assert_eq!(item(&r, "irq.11").status, Status::Unsupported);
    let t11 = item(&r, "irq-thread.irq/11-mmc0");
    assert_eq!(t11.status, Status::Deviation, "{t11:?}");
    assert!(t11.detail.contains("allowed on 2 -> 0-1"), "{}", t11.detail);
    let r = tune::apply(&root, &spec, &ApplyOptions::default()).unwrap();
    assert_eq!(r.exit_code(), 0, "{:#?}", r.items);
    assert_eq!(allowed(&t, 101), "0-1");
    assert_eq!(
        t.root()
            .read_trim("/proc/irq/11/smp_affinity_list")
            .unwrap(),
        "2"
    );
}
