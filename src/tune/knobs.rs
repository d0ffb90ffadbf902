//! Single-file knobs: sysctls (printk, overcommit with its CommitLimit guard, RT
//! throttling, timer_migration, stat_interval), workqueue cpumask, THP. Semantics: the
//! kernel's Documentation/admin-guide/sysctl/kernel.rst (printk, sched_rt_runtime_us,
//! timer_migration), Documentation/admin-guide/sysctl/vm.rst and
//! Documentation/mm/overcommit-accounting.rst (overcommit, stat_interval),
//! Documentation/scheduler/sched-rt-group.rst (RT throttling),
//! Documentation/admin-guide/mm/transhuge.rst (THP) and the workqueue `cpumask`
//! attribute (Documentation/core-api/workqueue.rst).

use super::commit::Need;
use super::spec::{CommitReserve, TuningSpec};
use super::{
    already, not_applicable, plan_value, read_knob, Decision, Item, ItemReport, Status, Step,
    ValueKind,
};
use crate::cpuset::CpuSet;
use crate::error::Cause;
use crate::sys::refusal::memory::meminfo_kb;
use crate::sys::refusal::rtgroup;
use crate::sys::SysRoot;

const WQ_DIR: &str = "/sys/devices/virtual/workqueue";
const THP: &str = "/sys/kernel/mm/transparent_hugepage/enabled";

/// Adds the knob items `spec` asks for, jitter-producing writes (workqueue, overcommit)
/// first so they happen before any measurement.
pub fn items(root: &SysRoot, spec: &TuningSpec, out: &mut Vec<Box<dyn Item>>) {
    if spec.workqueue_cpumask {
        let mut files = vec![format!("{WQ_DIR}/cpumask")];
        let mut wqs = root.list_dir(WQ_DIR).unwrap_or_default();
        wqs.sort();
        for wq in wqs {
            let p = format!("{WQ_DIR}/{wq}/cpumask");
            if root.exists(&p) {
                files.push(p);
            }
        }
        for path in files {
            out.push(Box::new(Workqueue {
                path,
                housekeeping: spec.housekeeping.clone(),
                nr: spec.nr_cpu_ids,
            }));
        }
    }
    if spec.overcommit_memory.is_some() || spec.overcommit_ratio.is_some() {
        out.push(Box::new(Overcommit {
            mode: spec.overcommit_memory,
            ratio: spec.overcommit_ratio,
            headroom_pct: spec.commit_headroom_pct,
            reserve: spec.commit_reserve.clone(),
        }));
    }
    if let Some(level) = spec.printk {
        out.push(Box::new(Printk { level }));
    }
    if let Some(v) = spec.sched_rt_runtime_us {
        out.push(Box::new(RtRuntime { runtime_us: v }));
    }
    if let Some(v) = spec.timer_migration {
        out.push(Box::new(Sysctl::new("kernel.timer_migration", v)));
    }
    if let Some(v) = spec.stat_interval_s {
        out.push(Box::new(Sysctl::new("vm.stat_interval", v)));
    }
    if let Some(mode) = spec.thp {
        out.push(Box::new(Thp {
            want: mode.as_str(),
        }));
    }
}

/// A one-integer sysctl, `/proc/sys/<dots as slashes>`.
struct Sysctl {
    key: &'static str,
    want: String,
}

impl Sysctl {
    fn new(key: &'static str, want: impl ToString) -> Self {
        Sysctl {
            key,
            want: want.to_string(),
        }
    }
}

/// `/proc/sys/` path of sysctl `key` (`kernel.printk` → `/proc/sys/kernel/printk`).
pub fn sysctl_path(key: &str) -> String {
    format!("/proc/sys/{}", key.replace('.', "/"))
}

impl Item for Sysctl {
    fn name(&self) -> String {
        format!("sysctl.{}", self.key)
    }

    fn plan(&self, root: &SysRoot) -> Decision {
        plan_value(
            self.name(),
            &sysctl_path(self.key),
            &self.want,
            ValueKind::Words,
            root,
        )
    }
}

/// `sysctl.kernel.printk`: only console_loglevel (the first of four values) changes;
/// the other three are written back as they are, and revert writes all four originals.
struct Printk {
    level: u8,
}

impl Item for Printk {
    fn name(&self) -> String {
        "sysctl.kernel.printk".into()
    }

    fn plan(&self, root: &SysRoot) -> Decision {
        let path = sysctl_path("kernel.printk");
        let text = match read_knob(root, &self.name(), &path, "not present in this kernel") {
            Ok(t) => t,
            Err(d) => return *d,
        };
        let mut fields: Vec<String> = text.split_whitespace().map(str::to_string).collect();
        if fields.is_empty() {
            return Decision::Done(
                ItemReport::new(self.name(), Status::Failed, "empty printk file").at(path),
            );
        }
        if fields[0] == self.level.to_string() {
            return already(
                self.name(),
                &path,
                format!("console_loglevel {}", fields[0]),
            );
        }
        let detail = format!("console_loglevel {} -> {}", fields[0], self.level);
        fields[0] = self.level.to_string();
        Decision::Change {
            detail,
            steps: vec![Step::new(&path, &text, fields.join("\t"), ValueKind::Words)],
        }
    }
}

/// `sysctl.kernel.sched_rt_runtime_us`: must not exceed `sched_rt_period_us` (the
/// kernel says EINVAL); −1 was allowed by the config opt-in. Refused before any write
/// when the kernel would refuse it (src/sys/refusal/rtgroup.rs): under RT group scheduling a
/// cgroup holding a larger share (EINVAL), and SCHED_DEADLINE bandwidth the debug file
/// shows admitted (EBUSY).
struct RtRuntime {
    runtime_us: i64,
}

impl Item for RtRuntime {
    fn name(&self) -> String {
        "sysctl.kernel.sched_rt_runtime_us".into()
    }

    fn plan(&self, root: &SysRoot) -> Decision {
        let path = sysctl_path("kernel.sched_rt_runtime_us");
        let period = root
            .read_trim(&sysctl_path("kernel.sched_rt_period_us"))
            .ok()
            .and_then(|s| s.parse::<i64>().ok());
        let refused = |why: String| {
            Decision::Done(
                ItemReport::new(self.name(), Status::Failed, format!("refused: {why}")).at(&path),
            )
        };
        if let Some(p) = period.filter(|&p| self.runtime_us > p) {
            return refused(format!(
                "{} µs is above sched_rt_period_us {p} µs",
                self.runtime_us
            ));
        }
        let decision = plan_value(
            self.name(),
            &path,
            &self.runtime_us.to_string(),
            ValueKind::Words,
            root,
        );
        if let (Decision::Change { .. }, Some(p)) = (&decision, period) {
            let p = p as u64;
            if let Some(c) = rtgroup::global_refused_by_group(root, self.runtime_us, p) {
                return refused(c.text);
            }
            let cpus = rtgroup::online_cpus(root);
            if let Some((c, true)) =
                rtgroup::global_refused_by_deadline(root, self.runtime_us, p, cpus)
            {
                return refused(c.text);
            }
        }
        decision
    }

    fn explain(&self, root: &SysRoot, errno: i32) -> Option<Cause> {
        let (_, period) = rtgroup::global(root)?;
        match errno {
            libc::EINVAL => rtgroup::global_refused_by_group(root, self.runtime_us, period),
            libc::EBUSY => rtgroup::global_refused_by_deadline(
                root,
                self.runtime_us,
                period,
                rtgroup::online_cpus(root),
            )
            .map(|(c, _)| c),
            _ => None,
        }
    }
}

/// `sysctl.vm.overcommit`: `overcommit_ratio` first, then `overcommit_memory` (so mode
/// 2 never runs with the old ratio). Mode 2 is refused before any write when the
/// resulting CommitLimit = (MemTotal − hugetlb) × ratio / 100 + SwapTotal would not
/// cover Committed_AS plus the largest process that may fork and the self-test's own
/// commitments ([`super::commit::Need`]; mm/util.c, overcommit-accounting.rst).
/// Writing the ratio zeroes `overcommit_kbytes`; a non-zero kbytes is journalled first
/// so revert restores it last.
struct Overcommit {
    mode: Option<u8>,
    ratio: Option<u32>,
    headroom_pct: u32,
    reserve: CommitReserve,
}

impl Item for Overcommit {
    fn name(&self) -> String {
        "sysctl.vm.overcommit".into()
    }

    fn plan(&self, root: &SysRoot) -> Decision {
        let mode_path = sysctl_path("vm.overcommit_memory");
        let ratio_path = sysctl_path("vm.overcommit_ratio");
        let kbytes_path = sysctl_path("vm.overcommit_kbytes");
        let (Ok(mode_text), Ok(ratio_text)) = (root.read(&mode_path), root.read(&ratio_path))
        else {
            return not_applicable(self.name(), &mode_path, "no overcommit sysctls");
        };
        let kbytes_text = root.read(&kbytes_path).unwrap_or_else(|_| "0\n".into());
        let kbytes: u64 = kbytes_text.trim().parse().unwrap_or(0);
        let mode_now = mode_text.trim();
        let ratio_now: u32 = ratio_text.trim().parse().unwrap_or(0);
        let mut steps = Vec::new();
        let mut changes = Vec::new();
        if let Some(r) = self.ratio.filter(|&r| r != ratio_now || kbytes != 0) {
            if kbytes != 0 {
                steps.push(Step::new(
                    &kbytes_path,
                    &kbytes_text,
                    "0".into(),
                    ValueKind::Words,
                ));
            }
            steps.push(Step::new(
                &ratio_path,
                &ratio_text,
                r.to_string(),
                ValueKind::Words,
            ));
            changes.push(format!("overcommit_ratio {ratio_now} -> {r}"));
        }
        if let Some(m) = self.mode.filter(|m| m.to_string() != mode_now) {
            steps.push(Step::new(
                &mode_path,
                &mode_text,
                m.to_string(),
                ValueKind::Words,
            ));
            changes.push(format!("overcommit_memory {mode_now} -> {m}"));
        }
        if steps.is_empty() {
            return already(
                self.name(),
                &mode_path,
                format!("overcommit_memory {mode_now}, ratio {ratio_now}"),
            );
        }
        let final_mode = self.mode.map_or(mode_now.to_string(), |m| m.to_string());
        let mut detail = changes.join(", ");
        if final_mode == "2" {
            let mem = root.read("/proc/meminfo").unwrap_or_default();
            let total = meminfo_kb(&mem, "MemTotal").unwrap_or(0);
            let huge = meminfo_kb(&mem, "Hugetlb").unwrap_or(0);
            let swap = meminfo_kb(&mem, "SwapTotal").unwrap_or(0);
            let limit = if self.ratio.is_none() && kbytes != 0 {
                kbytes + swap
            } else {
                let ratio = self.ratio.unwrap_or(ratio_now) as u64;
                total.saturating_sub(huge) * ratio / 100 + swap
            };
            let need = Need::read(root, &self.reserve, self.headroom_pct);
            let want = need.total_kb();
            if want > limit {
                let ratio = want
                    .saturating_sub(swap)
                    .saturating_mul(100)
                    .div_ceil(total.saturating_sub(huge).max(1));
                return Decision::Done(
                    ItemReport::new(
                        self.name(),
                        Status::Failed,
                        format!(
                            "refused: CommitLimit would be {limit} kB, below {} (fork and mmap would fail); raise overcommit_ratio to {ratio} or more, or add swap",
                            need.describe()
                        ),
                    )
                    .at(mode_path),
                );
            }
            detail += &format!("; {}", need.summary(limit));
        }
        Decision::Change { steps, detail }
    }
}

/// `workqueue.*`: an unbound workqueue cpumask (hex) = housekeeping.
struct Workqueue {
    path: String,
    housekeeping: CpuSet,
    nr: usize,
}

impl Item for Workqueue {
    fn name(&self) -> String {
        match self
            .path
            .strip_prefix(WQ_DIR)
            .and_then(|r| r.strip_suffix("/cpumask"))
        {
            Some(wq) if !wq.is_empty() => format!("workqueue.{}", wq.trim_start_matches('/')),
            _ => "workqueue.cpumask".into(),
        }
    }

    fn plan(&self, root: &SysRoot) -> Decision {
        plan_value(
            self.name(),
            &self.path,
            &self.housekeeping.to_mask(self.nr),
            ValueKind::Mask,
            root,
        )
    }
}

/// `memory.thp`: the bracketed word of `transparent_hugepage/enabled`.
struct Thp {
    want: &'static str,
}

impl Item for Thp {
    fn name(&self) -> String {
        "memory.thp".into()
    }

    fn plan(&self, root: &SysRoot) -> Decision {
        let text = match read_knob(
            root,
            &self.name(),
            THP,
            "no transparent hugepages in this kernel",
        ) {
            Ok(t) => t,
            Err(d) => return *d,
        };
        let now = ValueKind::Bracketed.normalise(&text);
        if now == self.want {
            return already(self.name(), THP, now);
        }
        let mut step = Step::new(THP, &text, self.want.to_string(), ValueKind::Bracketed);
        step.restore = now.clone();
        Decision::Change {
            detail: format!("{now} -> {}", self.want),
            steps: vec![step],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_meminfo() {
        assert_eq!(
            sysctl_path("vm.stat_interval"),
            "/proc/sys/vm/stat_interval"
        );
        let wq = |p: &str| {
            Workqueue {
                path: p.into(),
                housekeeping: CpuSet::new(),
                nr: 2,
            }
            .name()
        };
        assert_eq!(
            wq("/sys/devices/virtual/workqueue/cpumask"),
            "workqueue.cpumask"
        );
        assert_eq!(
            wq("/sys/devices/virtual/workqueue/writeback/cpumask"),
            "workqueue.writeback"
        );
    }
}
