//! IRQ items: every movable IRQ to housekeeping CPUs, its `irq/N-name` handler
//! threads after it, `default_smp_affinity`, and irqbalance (which rewrites affinities
//! every 10 s and would undo the move).
//!
//! Semantics (the kernel's kernel/irq/proc.c `write_irq_affinity()`, kernel/irq/manage.c,
//! Documentation/core-api/irq/irq-affinity.rst): a write to `smp_affinity_list` of a per-CPU,
//! chained or managed IRQ fails by design with EIO before Linux 6.12 and EPERM from
//! 6.12 (`unsupported`); since 6.x such files are also created mode 0444, which `plan`
//! takes as the same verdict without writing. EINVAL (no online CPU in the mask) and
//! ENOSPC (vector space exhausted) are real failures. Effective routing is checked in
//! `effective_affinity_list` where the kernel has it. Masks are compared over the
//! online CPUs: an offline CPU in a mask routes nothing.
//!
//! IRQ threads: a threaded handler (every IRQ on PREEMPT_RT and with `threadirqs`, a
//! driver's `request_threaded_irq()` anywhere) runs in a kernel thread `irq/N-name`.
//! When the IRQ's affinity changes the kernel only flags the thread
//! (`irq_set_thread_affinity()`); the thread moves itself at its next interrupt
//! (`irq_thread_check_affinity()` in kernel/irq/manage.c), so an IRQ that rarely fires
//! leaves its thread allowed on the isolated CPUs. Each thread is an item of its own
//! (`irq-thread.irq/N-name`) after its IRQ: its `Cpus_allowed_list` must lie within
//! the IRQ's (new) affinity — for an IRQ that cannot move, within the housekeeping CPUs
//! it would have gone to; `apply` moves it with `sched_setaffinity(2)`, journalled for
//! revert, and the kernel's refusal (EINVAL for a thread it pins) is `unsupported`.

use super::spec::{IrqbalancePolicy, TuningSpec};
use super::{read_knob, Decision, Item, ItemReport, Status, Step, ValueKind};
use crate::cpuset::CpuSet;
use crate::sys::envfile::{EnvFile, Value};
use crate::sys::SysRoot;
use std::os::unix::fs::PermissionsExt;

const DEFAULT_AFFINITY: &str = "/proc/irq/default_smp_affinity";

/// Adds the IRQ items `spec` asks for: irqbalance first (it can refuse before any
/// write), then the default affinity, then one item per IRQ in `/proc/irq`, each
/// followed by one item per handler thread of that IRQ.
pub fn items(root: &SysRoot, spec: &TuningSpec, out: &mut Vec<Box<dyn Item>>) {
    if spec.irq_affinity {
        out.push(Box::new(Irqbalance {
            policy: spec.irqbalance,
            isolated: spec.isolated.clone(),
            nr: spec.nr_cpu_ids,
        }));
    }
    if spec.irq_default_affinity {
        out.push(Box::new(DefaultAffinity {
            housekeeping: spec.housekeeping.clone(),
            online: spec.online.clone(),
            nr: spec.nr_cpu_ids,
        }));
    }
    if spec.irq_affinity {
        let mut irqs: Vec<u32> = root
            .list_dir("/proc/irq")
            .unwrap_or_default()
            .iter()
            .filter_map(|n| n.parse().ok())
            .filter(|n| !spec.irq_exclude.contains(n))
            .collect();
        irqs.sort_unstable();
        let threads = irq_threads(root);
        for irq in irqs {
            out.push(Box::new(IrqAffinity {
                irq,
                housekeeping: spec.housekeeping.clone(),
                online: spec.online.clone(),
            }));
            for t in threads.iter().filter(|t| t.irq == irq) {
                out.push(Box::new(IrqThreadAffinity {
                    thread: t.clone(),
                    housekeeping: spec.housekeeping.clone(),
                    online: spec.online.clone(),
                }));
            }
        }
    }
}

/// Where IRQ `now` goes: its CPUs that are housekeeping (so an IRQ already confined to
/// some housekeeping CPUs keeps them), or all housekeeping CPUs when none of its online
/// CPUs is.
pub fn irq_target(now: &CpuSet, housekeeping: &CpuSet, online: &CpuSet) -> CpuSet {
    let want = now.intersection(housekeeping);
    if want.intersection(online).is_empty() {
        housekeeping.clone()
    } else {
        want
    }
}

/// Whether `a` and `b` route to the same CPUs (equal over the online CPUs).
fn same_online(a: &CpuSet, b: &CpuSet, online: &CpuSet) -> bool {
    a.intersection(online) == b.intersection(online)
}

/// A threaded IRQ handler's kernel thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IrqThread {
    /// Its pid.
    pub pid: u32,
    /// Its name, `irq/N-name` (`/proc/PID/comm`, at most 15 characters).
    pub comm: String,
    /// The IRQ number N.
    pub irq: u32,
}

/// The IRQ handler threads below `root`: kernel threads (parent kthreadd, pid 2)
/// named `irq/N-…`, by pid.
pub fn irq_threads(root: &SysRoot) -> Vec<IrqThread> {
    let mut v: Vec<IrqThread> = root
        .list_dir("/proc")
        .unwrap_or_default()
        .iter()
        .filter_map(|d| d.parse::<u32>().ok())
        .filter_map(|pid| {
            let comm = root.read_trim(&format!("/proc/{pid}/comm")).ok()?;
            let rest = comm.strip_prefix("irq/")?;
            let (num, _) = rest.split_once('-')?;
            let irq = num.parse().ok()?;
            let status = root.read(&format!("/proc/{pid}/status")).ok()?;
            let kthread = status
                .lines()
                .any(|l| l.strip_prefix("PPid:").is_some_and(|p| p.trim() == "2"));
            kthread.then_some(IrqThread { pid, comm, irq })
        })
        .collect();
    v.sort_by_key(|t| t.pid);
    v
}

/// The `Cpus_allowed_list` of task `pid`, `None` when gone or unreadable.
fn task_allowed(root: &SysRoot, pid: u32) -> Option<(String, CpuSet)> {
    let status = root.read(&format!("/proc/{pid}/status")).ok()?;
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?
        .trim()
        .to_string();
    let set = CpuSet::parse_list(&list, 1 << 16).ok()?;
    Some((list, set))
}

/// Whether `/proc/irq/N/smp_affinity_list` is created read-only (a per-CPU, chained
/// or managed IRQ that user space cannot move).
fn read_only(root: &SysRoot, path: &str) -> bool {
    std::fs::metadata(root.path(path))
        .map(|m| m.permissions().mode() & 0o222 == 0)
        .unwrap_or(false)
}

/// `irq.N`: `/proc/irq/N/smp_affinity_list` becomes [`irq_target`] of its value.
pub struct IrqAffinity {
    /// IRQ number.
    pub irq: u32,
    /// Where it may run.
    pub housekeeping: CpuSet,
    /// The online CPUs (masks are compared over them).
    pub online: CpuSet,
}

impl IrqAffinity {
    fn list_path(&self) -> String {
        format!("/proc/irq/{}/smp_affinity_list", self.irq)
    }

    /// The effective affinity when the kernel reports one.
    fn effective(&self, root: &SysRoot) -> Option<CpuSet> {
        let s = root
            .read(&format!("/proc/irq/{}/effective_affinity_list", self.irq))
            .ok()?;
        CpuSet::parse_list(&s, crate::cpuset::MAX_CPU_IDS).ok()
    }

    fn effective_note(&self, root: &SysRoot, want: &CpuSet) -> String {
        match self.effective(root) {
            Some(e) if e.is_empty() || e.intersection(&self.online).is_subset(want) => {
                format!("effective {}", e.to_list())
            }
            Some(e) => format!(
                "effective still {} (moves at the next interrupt)",
                e.to_list()
            ),
            None => String::new(),
        }
    }
}

impl Item for IrqAffinity {
    fn name(&self) -> String {
        format!("irq.{}", self.irq)
    }

    fn plan(&self, root: &SysRoot) -> Decision {
        let path = self.list_path();
        let text = match root.read(&path) {
            Ok(t) => t,
            Err(_) => {
                return Decision::Done(
                    ItemReport::new(self.name(), Status::NotApplicable, "no smp_affinity_list")
                        .at(path),
                )
            }
        };
        let Ok(now) = CpuSet::parse_list(&text, crate::cpuset::MAX_CPU_IDS) else {
            return Decision::Done(
                ItemReport::new(
                    self.name(),
                    Status::Failed,
                    format!("unreadable affinity {:?}", text.trim()),
                )
                .at(path),
            );
        };
        let want = irq_target(&now, &self.housekeeping, &self.online);
        if same_online(&want, &now, &self.online) {
            let note = self.effective_note(root, &want);
            let detail = if note.is_empty() {
                format!("on {}", now.to_list())
            } else {
                format!("on {}, {note}", now.to_list())
            };
            return Decision::Done(ItemReport::new(self.name(), Status::Ok, detail).at(path));
        }
        if read_only(root, &path) {
            return Decision::Done(
                ItemReport::new(
                    self.name(),
                    Status::Unsupported,
                    format!(
                        "on {}: smp_affinity_list is read-only (per-CPU, chained or managed IRQ)",
                        now.to_list()
                    ),
                )
                .at(path),
            );
        }
        Decision::Change {
            detail: format!("{} -> {}", now.to_list(), want.to_list()),
            steps: vec![Step::new(&path, &text, want.to_list(), ValueKind::List)],
        }
    }

    fn refused(&self, errno: i32) -> Status {
        match errno {
            libc::EIO | libc::EPERM => Status::Unsupported,
            _ => Status::Failed,
        }
    }

    fn verify(&self, root: &SysRoot, steps: &[Step]) -> Result<String, (String, String)> {
        super::verify_steps(root, steps)?;
        let want =
            CpuSet::parse_list(&steps[0].desired, crate::cpuset::MAX_CPU_IDS).unwrap_or_default();
        Ok(self.effective_note(root, &want))
    }
}

/// `irq-thread.irq/N-name`: the handler thread of IRQ N may run only where its IRQ
/// goes ([`irq_target`] of the IRQ's affinity). For an IRQ user space cannot move (a
/// managed queue IRQ of an isolated CPU) the thread is still kept on housekeeping CPUs
/// where the kernel allows: its handler then runs there, woken from the isolated CPU —
/// seen on Debian's 6.1 PREEMPT_RT guest (tests/vm), where `irq/26-virtio0-req.1` moved
/// 1 -> 0 while IRQ 26 stayed on 1 (EIO).
pub struct IrqThreadAffinity {
    /// The thread.
    pub thread: IrqThread,
    /// Where its IRQ may run.
    pub housekeeping: CpuSet,
    /// The online CPUs (sets are compared over them).
    pub online: CpuSet,
}

impl Item for IrqThreadAffinity {
    fn name(&self) -> String {
        format!("irq-thread.{}", self.thread.comm)
    }

    fn plan(&self, root: &SysRoot) -> Decision {
        let t = &self.thread;
        let status = format!("/proc/{}/status", t.pid);
        let irq_path = format!("/proc/irq/{}/smp_affinity_list", t.irq);
        let Some(irq_now) = root
            .read(&irq_path)
            .ok()
            .and_then(|s| CpuSet::parse_list(&s, 1 << 16).ok())
        else {
            return super::not_applicable(
                self.name(),
                &irq_path,
                "its IRQ has no smp_affinity_list",
            );
        };
        // Where the IRQ goes — or, for one user space cannot move (managed, per-CPU),
        // where it would go: the thread's work stays on housekeeping CPUs either way
        // (the kernel re-pins the thread only when the IRQ's affinity changes).
        let target = irq_target(&irq_now, &self.housekeeping, &self.online);
        let Some((list, allowed)) = task_allowed(root, t.pid) else {
            return super::not_applicable(self.name(), &status, "the thread has exited");
        };
        let who = format!("{} (pid {})", t.comm, t.pid);
        if allowed
            .intersection(&self.online)
            .is_subset(&target.intersection(&self.online))
        {
            return super::already(
                self.name(),
                &status,
                format!(
                    "{who} on {}, within IRQ {}'s {}",
                    allowed.to_list(),
                    t.irq,
                    target.to_list()
                ),
            );
        }
        Decision::Change {
            detail: format!(
                "{who} allowed on {} -> {} (IRQ {} belongs on {})",
                allowed.to_list(),
                target.to_list(),
                t.irq,
                target.to_list()
            ),
            steps: vec![Step::task_affinity(t.pid, &t.comm, &list, target.to_list())],
        }
    }

    fn refused(&self, errno: i32) -> Status {
        match errno {
            // A thread the kernel keeps where it is (PF_NO_SETAFFINITY), or one that left.
            libc::EINVAL => Status::Unsupported,
            libc::ENOENT | libc::ESRCH => Status::NotApplicable,
            _ => Status::Failed,
        }
    }
}

/// `irq.default_affinity`: `/proc/irq/default_smp_affinity` (hex) = housekeeping, for
/// IRQs activated later (it does not move existing ones).
pub struct DefaultAffinity {
    /// Where new IRQs may run.
    pub housekeeping: CpuSet,
    /// The online CPUs (the mask is compared over them).
    pub online: CpuSet,
    /// Mask width.
    pub nr: usize,
}

impl Item for DefaultAffinity {
    fn name(&self) -> String {
        "irq.default_affinity".into()
    }

    fn plan(&self, root: &SysRoot) -> Decision {
        let text = match read_knob(
            root,
            &self.name(),
            DEFAULT_AFFINITY,
            "no default_smp_affinity",
        ) {
            Ok(t) => t,
            Err(d) => return *d,
        };
        let now = CpuSet::parse_mask(&text).unwrap_or_default();
        if same_online(&now, &self.housekeeping, &self.online) {
            return Decision::Done(
                ItemReport::new(self.name(), Status::Ok, now.to_list()).at(DEFAULT_AFFINITY),
            );
        }
        Decision::Change {
            detail: format!("{} -> {}", now.to_list(), self.housekeeping.to_list()),
            steps: vec![Step::new(
                DEFAULT_AFFINITY,
                &text,
                self.housekeeping.to_mask(self.nr),
                ValueKind::Mask,
            )],
        }
    }
}

/// `irq.irqbalance`: a running irqbalance that does not ban the isolated CPUs would
/// move IRQs back onto them. Banned CPUs: `IRQBALANCE_BANNED_CPUS` (hex, wins when
/// set), else `IRQBALANCE_BANNED_CPULIST`, else its automatic ban of isolated ∪
/// nohz_full CPUs (irqbalance `cputree.c`), from `/etc/default/irqbalance` or
/// `/etc/sysconfig/irqbalance` read as the shell sources them. A value rtbench cannot
/// read is reported as unreadable (failed or a warning, as `irqbalance` says), never
/// as banning nothing.
pub struct Irqbalance {
    /// What to do when it would interfere.
    pub policy: IrqbalancePolicy,
    /// CPUs that must stay free of IRQs.
    pub isolated: CpuSet,
    /// Possible CPUs.
    pub nr: usize,
}

/// The pid of a running process named `comm`, scanning `/proc/*/comm`.
pub fn find_process(root: &SysRoot, comm: &str) -> Option<u32> {
    root.list_dir("/proc")
        .ok()?
        .iter()
        .filter_map(|d| d.parse::<u32>().ok())
        .find(|pid| {
            root.read(&format!("/proc/{pid}/comm"))
                .is_ok_and(|c| c.trim() == comm)
        })
}

impl Irqbalance {
    /// The CPUs irqbalance bans and where that comes from, or why rtbench cannot tell
    /// (a value it cannot read: an expansion, a command, not a mask or list). The
    /// files are read as the shell sources them ([`crate::sys::envfile`]).
    fn banned(&self, root: &SysRoot) -> Result<(CpuSet, String), String> {
        for file in ["/etc/default/irqbalance", "/etc/sysconfig/irqbalance"] {
            // A regular file, bounded, never waited on (SysRoot::read); one that is
            // there but cannot be read (a FIFO, a device) is unreadable, not absent.
            let text = match root.read(file) {
                Ok(t) => t,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(format!("{file} is unreadable: {e}")),
            };
            let env = EnvFile::parse(&text);
            for (name, mask) in [
                ("IRQBALANCE_BANNED_CPUS", true),
                ("IRQBALANCE_BANNED_CPULIST", false),
            ] {
                let (value, line) = match env.get(name) {
                    Value::Unset => continue,
                    Value::Set { value, .. } if value.trim().is_empty() => continue,
                    Value::Set { value, line } => (value, line),
                    Value::Unreadable { line, why } => {
                        return Err(format!("{file} line {line}: {name} is unreadable: {why}"))
                    }
                };
                let parsed = if mask {
                    CpuSet::parse_mask(&value).map_err(|e| e.to_string())
                } else {
                    CpuSet::parse_list(&value, self.nr).map_err(|e| e.to_string())
                };
                return match parsed {
                    Ok(set) => Ok((set, format!("{file} line {line} {name}"))),
                    Err(e) => Err(format!(
                        "{file} line {line}: {name}={value:?} is unreadable: not a CPU {} ({e})",
                        if mask { "mask" } else { "list" }
                    )),
                };
            }
        }
        let read = |p: &str| {
            root.read(p)
                .ok()
                .and_then(|s| CpuSet::parse_list(&s, self.nr).ok())
                .unwrap_or_default()
        };
        let auto = read("/sys/devices/system/cpu/isolated")
            .union(&read("/sys/devices/system/cpu/nohz_full"));
        Ok((auto, "automatic ban of isolated and nohz_full CPUs".into()))
    }
}

impl Item for Irqbalance {
    fn name(&self) -> String {
        "irq.irqbalance".into()
    }

    fn plan(&self, root: &SysRoot) -> Decision {
        let Some(pid) = find_process(root, "irqbalance") else {
            return Decision::Done(ItemReport::new(self.name(), Status::Ok, "not running"));
        };
        let path = format!("/proc/{pid}");
        let verdict = |what: String| {
            let (status, detail) = match self.policy {
                IrqbalancePolicy::Fail => (Status::Failed, format!("refused: {what}")),
                IrqbalancePolicy::Warn => (Status::Ok, format!("warning: {what}")),
            };
            Decision::Done(ItemReport::new(self.name(), status, detail).at(&path))
        };
        let (banned, source) = match self.banned(root) {
            Ok(b) => b,
            Err(why) => {
                return verdict(format!(
                    "irqbalance (pid {pid}) runs and {why}: rtbench cannot tell whether it keeps IRQs off CPUs {}; stop it or write IRQBALANCE_BANNED_CPULIST={} plainly",
                    self.isolated.to_list(),
                    self.isolated.to_list()
                ))
            }
        };
        if self.isolated.is_subset(&banned) {
            return Decision::Done(
                ItemReport::new(
                    self.name(),
                    Status::Ok,
                    format!("running (pid {pid}), bans {} ({source})", banned.to_list()),
                )
                .at(path),
            );
        }
        let what = format!(
            "irqbalance (pid {pid}) runs and bans only {:?} ({source}): it would move IRQs back onto {}; stop it or set IRQBALANCE_BANNED_CPULIST={}",
            banned.to_list(),
            self.isolated.difference(&banned).to_list(),
            self.isolated.to_list()
        );
        verdict(what)
    }
}
