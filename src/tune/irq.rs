//! IRQ items: every movable IRQ to housekeeping CPUs, `default_smp_affinity`, and
//! irqbalance (which rewrites affinities every 10 s and would undo the move).
//!
//! Semantics (the kernel's kernel/irq/proc.c `write_irq_affinity()`, kernel/irq/manage.c,
//! Documentation/core-api/irq/irq-affinity.rst): a write to `smp_affinity_list` of a per-CPU,
//! chained or managed IRQ fails by design with EIO before Linux 6.12 and EPERM from
//! 6.12 (`unsupported`); since 6.x such files are also created mode 0444, which `plan`
//! takes as the same verdict without writing. EINVAL (no online CPU in the mask) and
//! ENOSPC (vector space exhausted) are real failures. Effective routing is checked in
//! `effective_affinity_list` where the kernel has it.

use super::{Decision, Item, ItemReport, Status, Step, ValueKind};
use crate::config::tuning::{IrqbalancePolicy, TuningSpec};
use crate::cpuset::CpuSet;
use crate::sys::SysRoot;
use std::os::unix::fs::PermissionsExt;

const DEFAULT_AFFINITY: &str = "/proc/irq/default_smp_affinity";

/// Adds the IRQ items `spec` asks for: irqbalance first (it can refuse before any
/// write), then the default affinity, then one item per IRQ in `/proc/irq`.
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
        for irq in irqs {
            out.push(Box::new(IrqAffinity {
                irq,
                housekeeping: spec.housekeeping.clone(),
            }));
        }
    }
}

/// `irq.N`: `/proc/irq/N/smp_affinity_list` becomes old ∩ housekeeping (housekeeping
/// when that is empty), so an IRQ already confined to some housekeeping CPUs keeps them.
pub struct IrqAffinity {
    /// IRQ number.
    pub irq: u32,
    /// Where it may run.
    pub housekeeping: CpuSet,
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
            Some(e) if e.is_empty() || e.is_subset(want) => format!("effective {}", e.to_list()),
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
        let mut want = now.intersection(&self.housekeeping);
        if want.is_empty() {
            want = self.housekeeping.clone();
        }
        if want == now {
            let note = self.effective_note(root, &want);
            let detail = if note.is_empty() {
                format!("on {}", now.to_list())
            } else {
                format!("on {}, {note}", now.to_list())
            };
            return Decision::Done(ItemReport::new(self.name(), Status::Ok, detail).at(path));
        }
        let read_only = std::fs::metadata(root.path(&path))
            .map(|m| m.permissions().mode() & 0o222 == 0)
            .unwrap_or(false);
        if read_only {
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

/// `irq.default_affinity`: `/proc/irq/default_smp_affinity` (hex) = housekeeping, for
/// IRQs activated later (it does not move existing ones).
pub struct DefaultAffinity {
    /// Where new IRQs may run.
    pub housekeeping: CpuSet,
    /// Mask width.
    pub nr: usize,
}

impl Item for DefaultAffinity {
    fn name(&self) -> String {
        "irq.default_affinity".into()
    }

    fn plan(&self, root: &SysRoot) -> Decision {
        let Ok(text) = root.read(DEFAULT_AFFINITY) else {
            return Decision::Done(
                ItemReport::new(
                    self.name(),
                    Status::NotApplicable,
                    "no default_smp_affinity",
                )
                .at(DEFAULT_AFFINITY),
            );
        };
        let now = CpuSet::parse_mask(&text).unwrap_or_default();
        if now == self.housekeeping {
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
/// `/etc/sysconfig/irqbalance`.
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
    fn banned(&self, root: &SysRoot) -> (CpuSet, String) {
        for file in ["/etc/default/irqbalance", "/etc/sysconfig/irqbalance"] {
            let Ok(text) = root.read(file) else { continue };
            let var = |name: &str| {
                text.lines()
                    .rev()
                    .find_map(|l| l.trim().strip_prefix(name)?.strip_prefix('='))
                    .map(|v| v.trim().trim_matches('"').to_string())
            };
            if let Some(mask) = var("IRQBALANCE_BANNED_CPUS").filter(|v| !v.is_empty()) {
                return (
                    CpuSet::parse_mask(&mask).unwrap_or_default(),
                    format!("{file} IRQBALANCE_BANNED_CPUS"),
                );
            }
            if let Some(list) = var("IRQBALANCE_BANNED_CPULIST") {
                return (
                    CpuSet::parse_list(&list, self.nr).unwrap_or_default(),
                    format!("{file} IRQBALANCE_BANNED_CPULIST"),
                );
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
        (auto, "automatic ban of isolated and nohz_full CPUs".into())
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
        let (banned, source) = self.banned(root);
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
        let (status, detail) = match self.policy {
            IrqbalancePolicy::Fail => (Status::Failed, format!("refused: {what}")),
            IrqbalancePolicy::Warn => (Status::Ok, format!("warning: {what}")),
        };
        Decision::Done(ItemReport::new(self.name(), status, detail).at(path))
    }
}
