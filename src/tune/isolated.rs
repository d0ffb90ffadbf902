//! `boot.isolated`: `[tuning] isolated` alone — without an item that puts it to use:
//! the `[tuning.boot]` parameters, IRQ or workqueue placement, cpuidle on the isolated
//! CPUs — still says which CPUs the real-time work expects to have to itself, so it is
//! checked: each configured CPU must
//! be isolated by the kernel, in `/sys/devices/system/cpu/isolated` (`isolcpus=` domain
//! isolation) or in `/sys/devices/system/cpu/nohz_full` (`nohz_full=`, or `isolcpus=`
//! with the `nohz` flag). Check-only: rtbench never edits a bootloader.
//!
//! Source of behaviour: Documentation/ABI/testing/sysfs-devices-system-cpu (both files
//! list CPUs as a cpu-list, empty or `(null)` for none); `nohz_full` exists only with
//! CONFIG_NO_HZ_FULL.

use super::spec::TuningSpec;
use super::{Decision, Item, ItemReport, Status};
use crate::cpuset::CpuSet;
use crate::sys::SysRoot;

const ISOLATED: &str = "/sys/devices/system/cpu/isolated";
const NOHZ_FULL: &str = "/sys/devices/system/cpu/nohz_full";

/// Adds `boot.isolated` when `spec` names isolated CPUs and no other item uses them.
pub fn items(spec: &TuningSpec, out: &mut Vec<Box<dyn Item>>) {
    let used = spec.boot_isolcpus.is_some()
        || spec.boot_nohz_full
        || spec.boot_rcu_nocbs
        || spec.boot_irqaffinity
        || spec.irq_affinity
        || spec.irq_default_affinity
        || spec.workqueue_cpumask
        || spec.cpuidle_max_latency_us.is_some();
    if !spec.isolated.is_empty() && !used {
        out.push(Box::new(Isolated {
            isolated: spec.isolated.clone(),
            nr: spec.nr_cpu_ids,
        }));
    }
}

/// The check of `[tuning] isolated` against the kernel's isolated CPUs.
struct Isolated {
    isolated: CpuSet,
    nr: usize,
}

/// A sysfs CPU list below `root`: `None` when the file is absent or unreadable.
fn read_set(root: &SysRoot, p: &str, nr: usize) -> Option<CpuSet> {
    let s = root.read(p).ok()?;
    let s = s.trim();
    if s.is_empty() || s == "(null)" {
        return Some(CpuSet::new());
    }
    CpuSet::parse_list(s, nr).ok()
}

fn shown(set: &Option<CpuSet>) -> String {
    match set {
        None => "no such file".into(),
        Some(s) if s.is_empty() => "none".into(),
        Some(s) => s.to_list(),
    }
}

impl Item for Isolated {
    fn name(&self) -> String {
        "boot.isolated".into()
    }

    fn plan(&self, root: &SysRoot) -> Decision {
        let domain = read_set(root, ISOLATED, self.nr);
        let nohz = read_set(root, NOHZ_FULL, self.nr);
        let name = self.name();
        if domain.is_none() && nohz.is_none() {
            return Decision::Done(
                ItemReport::new(
                    name,
                    Status::NotApplicable,
                    format!("cannot read {ISOLATED} or {NOHZ_FULL}: the isolation is not known"),
                )
                .at(ISOLATED),
            );
        }
        let mut eff = domain.clone().unwrap_or_default();
        if let Some(n) = &nohz {
            eff = eff.union(n);
        }
        let want = self.isolated.to_list();
        let found = format!("isolated {}, nohz_full {}", shown(&domain), shown(&nohz));
        let ok = self.isolated.is_subset(&eff);
        let detail = if ok {
            format!("CPUs {want} isolated by the kernel ({found})")
        } else {
            format!(
                "[tuning] isolated = \"{want}\" but the kernel isolates {} ({found}); boot \
                 with isolcpus= or nohz_full= on them ([tuning.boot] prints the bootargs)",
                if eff.is_empty() {
                    "no CPU".to_string()
                } else {
                    format!("CPUs {}", eff.to_list())
                }
            )
        };
        let r = ItemReport::new(
            name,
            if ok { Status::Ok } else { Status::Deviation },
            detail,
        )
        .at(ISOLATED);
        Decision::Done(if ok {
            r
        } else {
            r.values(format!("isolated {want}"), found)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(isolated: &str, nohz: Option<&str>, want: &str) -> ItemReport {
        let d = crate::config::tempdir::Dir::new("tune-isolated");
        d.file("sys/devices/system/cpu/isolated", isolated);
        if let Some(n) = nohz {
            d.file("sys/devices/system/cpu/nohz_full", n);
        }
        let root = SysRoot::at(d.path());
        let item = Isolated {
            isolated: CpuSet::parse_list(want, 8).unwrap(),
            nr: 8,
        };
        match item.plan(&root) {
            Decision::Done(r) => r,
            _ => panic!("check-only"),
        }
    }

    #[test]
    fn isolated_cpus_must_be_isolated_by_the_kernel() {
        let r = check("\n", None, "1");
        assert_eq!(r.status, Status::Deviation, "{r:?}");
        assert!(r.detail.contains("kernel isolates no CPU"), "{r:?}");
        assert_eq!(check("1\n", None, "1").status, Status::Ok);
        assert_eq!(check("(null)\n", Some("1-2\n"), "1").status, Status::Ok);
        assert_eq!(check("1\n", Some("\n"), "1-2").status, Status::Deviation);
    }
}
