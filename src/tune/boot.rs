//! Check-only items: PREEMPT_RT and the boot parameters `isolcpus=`, `nohz_full=`,
//! `rcu_nocbs=`, `irqaffinity=`, compared with the kernel's *effective* state.
//!
//! Why effective: a bad list makes the kernel ignore the parameter with only a
//! `pr_warn` (`housekeeping_setup()` in the kernel's kernel/sched/isolation.c), and
//! `/sys/devices/system/cpu/isolated` shows only `domain` isolation
//! (`print_cpus_isolated()` in drivers/base/cpu.c;
//! Documentation/ABI/testing/sysfs-devices-system-cpu). rtbench never edits a bootloader; it prints the
//! bootargs fragment that would satisfy the configuration ([`bootargs`]).

use super::{Decision, Item, ItemReport, Status};
use crate::config::tuning::TuningSpec;
use crate::cpuset::CpuSet;
use crate::sys::info::SysInfo;
use crate::sys::SysRoot;

const ISOLATED: &str = "/sys/devices/system/cpu/isolated";
const NOHZ_FULL: &str = "/sys/devices/system/cpu/nohz_full";
const DEFAULT_AFFINITY: &str = "/proc/irq/default_smp_affinity";

/// The kernel command line fragment that satisfies the boot items of `spec`, e.g.
/// `isolcpus=managed_irq,domain,2-3 nohz_full=2-3 rcu_nocbs=2-3 irqaffinity=0-1`;
/// `None` when no boot item is configured.
pub fn bootargs(spec: &TuningSpec) -> Option<String> {
    let iso = spec.isolated.to_list();
    let mut parts = Vec::new();
    if let Some(flags) = &spec.boot_isolcpus {
        let mut s = String::from("isolcpus=");
        for f in flags {
            s.push_str(f);
            s.push(',');
        }
        s.push_str(&iso);
        parts.push(s);
    }
    if spec.boot_nohz_full {
        parts.push(format!("nohz_full={iso}"));
    }
    if spec.boot_rcu_nocbs {
        parts.push(format!("rcu_nocbs={iso}"));
    }
    if spec.boot_irqaffinity {
        parts.push(format!("irqaffinity={}", spec.housekeeping.to_list()));
    }
    (!parts.is_empty()).then(|| parts.join(" "))
}

/// Adds the check-only items `spec` asks for.
pub fn items(spec: &TuningSpec, out: &mut Vec<Box<dyn Item>>) {
    if spec.require_preempt_rt {
        out.push(Box::new(PreemptRt));
    }
    let cpus = || (spec.isolated.clone(), spec.nr_cpu_ids);
    if let Some(flags) = &spec.boot_isolcpus {
        let (isolated, nr) = cpus();
        out.push(Box::new(Isolcpus {
            flags: flags.clone(),
            isolated,
            nr,
        }));
    }
    if spec.boot_nohz_full {
        let (isolated, nr) = cpus();
        out.push(Box::new(NohzFull { isolated, nr }));
    }
    if spec.boot_rcu_nocbs {
        let (isolated, nr) = cpus();
        out.push(Box::new(RcuNocbs { isolated, nr }));
    }
    if spec.boot_irqaffinity {
        out.push(Box::new(IrqAffinityBoot {
            housekeeping: spec.housekeeping.clone(),
        }));
    }
}

/// The value of the last `key=` on the kernel command line (before `--`, after which
/// arguments belong to init).
pub fn cmdline_param(cmdline: &str, key: &str) -> Option<String> {
    let prefix = format!("{key}=");
    cmdline
        .split_whitespace()
        .take_while(|t| *t != "--")
        .filter_map(|t| t.strip_prefix(&prefix))
        .last()
        .map(str::to_string)
}

fn read_set(root: &SysRoot, p: &str, nr: usize) -> Option<CpuSet> {
    let s = root.read(p).ok()?;
    let s = s.trim();
    if s == "(null)" {
        return Some(CpuSet::new());
    }
    CpuSet::parse_list(s, nr).ok()
}

/// The item's report: `ok`, or a deviation naming what was `expected` and `found`.
fn done(
    name: &str,
    ok: bool,
    detail: String,
    path: &str,
    expected: String,
    found: String,
) -> Decision {
    let r = ItemReport::new(
        name,
        if ok { Status::Ok } else { Status::Deviation },
        detail,
    )
    .at(path);
    Decision::Done(if ok { r } else { r.values(expected, found) })
}

/// `kernel.preempt_rt`: the kernel must be PREEMPT_RT (uname `PREEMPT_RT`,
/// `/sys/kernel/realtime`, or `CONFIG_PREEMPT_RT=y`; see `sys::info`).
struct PreemptRt;

impl Item for PreemptRt {
    fn name(&self) -> String {
        "kernel.preempt_rt".into()
    }

    fn plan(&self, root: &SysRoot) -> Decision {
        let info = SysInfo::read(root);
        if info.realtime {
            done(
                &self.name(),
                true,
                format!("PREEMPT_RT ({})", info.realtime_evidence.join(", ")),
                "/proc/version",
                String::new(),
                String::new(),
            )
        } else {
            done(
                &self.name(),
                false,
                format!(
                    "kernel {} is {}, PREEMPT_RT required",
                    info.release, info.preempt_model
                ),
                "/proc/version",
                "PREEMPT_RT".into(),
                format!("{} ({})", info.preempt_model, info.release),
            )
        }
    }
}

/// `boot.isolcpus`: `isolcpus=[flags,]LIST`. `domain` is checked in
/// `/sys/devices/system/cpu/isolated`, `nohz` in `.../nohz_full`; `managed_irq` has no
/// sysfs trace, so it is checked on the parsed command line.
struct Isolcpus {
    flags: Vec<String>,
    isolated: CpuSet,
    nr: usize,
}

/// Splits an `isolcpus=` value into its flags (leading alphabetic tokens, as
/// `housekeeping_isolcpus_setup()` consumes them) and its cpu-list.
pub fn split_isolcpus(value: &str) -> (Vec<String>, String) {
    let mut flags = Vec::new();
    let mut rest = value;
    while let Some((tok, after)) = rest.split_once(',') {
        if !tok.is_empty() && tok.chars().all(|c| c.is_ascii_alphabetic() || c == '_') {
            flags.push(tok.to_string());
            rest = after;
        } else {
            break;
        }
    }
    if flags.is_empty() {
        flags.push("domain".into());
    }
    (flags, rest.to_string())
}

impl Item for Isolcpus {
    fn name(&self) -> String {
        "boot.isolcpus".into()
    }

    fn plan(&self, root: &SysRoot) -> Decision {
        let want = self.isolated.to_list();
        let mut problems = Vec::new();
        if self.flags.iter().any(|f| f == "domain") {
            let eff = read_set(root, ISOLATED, self.nr).unwrap_or_default();
            if !self.isolated.is_subset(&eff) {
                problems.push(format!(
                    "isolated CPUs are {:?}, want {want}",
                    eff.to_list()
                ));
            }
        }
        if self.flags.iter().any(|f| f == "nohz") {
            let eff = read_set(root, NOHZ_FULL, self.nr).unwrap_or_default();
            if !self.isolated.is_subset(&eff) {
                problems.push(format!(
                    "nohz_full CPUs are {:?}, want {want}",
                    eff.to_list()
                ));
            }
        }
        if self.flags.iter().any(|f| f == "managed_irq") {
            let cmdline = root.read("/proc/cmdline").unwrap_or_default();
            let (flags, list) = cmdline_param(&cmdline, "isolcpus")
                .map(|v| split_isolcpus(&v))
                .unwrap_or_default();
            let set = CpuSet::parse_list(&list, self.nr).unwrap_or_default();
            if !flags.iter().any(|f| f == "managed_irq") || !self.isolated.is_subset(&set) {
                problems.push(format!(
                    "no isolcpus=managed_irq,… covering {want} on the command line"
                ));
            }
        }
        let ok = problems.is_empty();
        let expected = format!("{want} isolated ({})", self.flags.join(","));
        let found = problems.join("; ");
        let detail = if ok { expected.clone() } else { found.clone() };
        done(&self.name(), ok, detail, ISOLATED, expected, found)
    }
}

/// `boot.nohz_full`: `/sys/devices/system/cpu/nohz_full` ⊇ isolated; the file is absent
/// without CONFIG_NO_HZ_FULL.
struct NohzFull {
    isolated: CpuSet,
    nr: usize,
}

impl Item for NohzFull {
    fn name(&self) -> String {
        "boot.nohz_full".into()
    }

    fn plan(&self, root: &SysRoot) -> Decision {
        let Some(eff) = read_set(root, NOHZ_FULL, self.nr) else {
            return Decision::Done(
                ItemReport::new(
                    self.name(),
                    Status::NotApplicable,
                    "no nohz_full file: kernel built without CONFIG_NO_HZ_FULL",
                )
                .at(NOHZ_FULL),
            );
        };
        let ok = self.isolated.is_subset(&eff);
        done(
            &self.name(),
            ok,
            format!(
                "nohz_full CPUs {:?}, want {}",
                eff.to_list(),
                self.isolated.to_list()
            ),
            NOHZ_FULL,
            format!("nohz_full {}", self.isolated.to_list()),
            format!("nohz_full {:?}", eff.to_list()),
        )
    }
}

/// `boot.rcu_nocbs`: RCU callbacks offloaded from the isolated CPUs. `nohz_full=`
/// implies it (effective in `nohz_full`); otherwise the parsed `rcu_nocbs=` list.
struct RcuNocbs {
    isolated: CpuSet,
    nr: usize,
}

impl Item for RcuNocbs {
    fn name(&self) -> String {
        "boot.rcu_nocbs".into()
    }

    fn plan(&self, root: &SysRoot) -> Decision {
        let nohz = read_set(root, NOHZ_FULL, self.nr).unwrap_or_default();
        let cmdline = root.read("/proc/cmdline").unwrap_or_default();
        let listed = cmdline_param(&cmdline, "rcu_nocbs")
            .and_then(|v| CpuSet::parse_list(&v, self.nr).ok())
            .unwrap_or_default();
        let covered = nohz.union(&listed);
        let ok = self.isolated.is_subset(&covered);
        done(
            &self.name(),
            ok,
            format!(
                "RCU callbacks offloaded from {:?} (nohz_full ∪ rcu_nocbs=), want {}",
                covered.to_list(),
                self.isolated.to_list()
            ),
            "/proc/cmdline",
            format!("RCU callbacks offloaded from {}", self.isolated.to_list()),
            format!("offloaded from {:?}", covered.to_list()),
        )
    }
}

/// `boot.irqaffinity`: the default IRQ affinity (`irqaffinity=` at boot, the runtime
/// value in `/proc/irq/default_smp_affinity`) must stay within housekeeping CPUs.
struct IrqAffinityBoot {
    housekeeping: CpuSet,
}

impl Item for IrqAffinityBoot {
    fn name(&self) -> String {
        "boot.irqaffinity".into()
    }

    fn plan(&self, root: &SysRoot) -> Decision {
        let Some(eff) = root
            .read(DEFAULT_AFFINITY)
            .ok()
            .and_then(|s| CpuSet::parse_mask(&s).ok())
        else {
            return Decision::Done(
                ItemReport::new(
                    self.name(),
                    Status::NotApplicable,
                    "no /proc/irq/default_smp_affinity",
                )
                .at(DEFAULT_AFFINITY),
            );
        };
        let ok = eff.is_subset(&self.housekeeping);
        done(
            &self.name(),
            ok,
            format!(
                "default IRQ affinity {:?}, want within {}",
                eff.to_list(),
                self.housekeeping.to_list()
            ),
            DEFAULT_AFFINITY,
            format!(
                "default IRQ affinity within {}",
                self.housekeeping.to_list()
            ),
            format!("{:?}", eff.to_list()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cmdline_and_isolcpus_parsing() {
        let c = "console=ttyS0 isolcpus=1 isolcpus=managed_irq,domain,2-3 quiet -- isolcpus=0";
        assert_eq!(
            cmdline_param(c, "isolcpus").as_deref(),
            Some("managed_irq,domain,2-3")
        );
        assert_eq!(cmdline_param(c, "nohz_full"), None);
        let (f, l) = split_isolcpus("managed_irq,domain,2-3");
        assert_eq!(
            (f, l.as_str()),
            (vec!["managed_irq".to_string(), "domain".into()], "2-3")
        );
        let (f, l) = split_isolcpus("1,3");
        assert_eq!((f, l.as_str()), (vec!["domain".to_string()], "1,3"));
    }

    fn spec(root: &SysRoot, extra: &str) -> TuningSpec {
        let text = format!("[tuning]\nisolated = \"2-3\"\n{extra}[tuning.boot]\nisolcpus = [\"domain\", \"managed_irq\"]\nnohz_full = true\nrcu_nocbs = true\nirqaffinity = true\n");
        crate::config::parse(&text, "t", root).unwrap().tuning
    }

    fn statuses(root: &SysRoot, spec: &TuningSpec) -> Vec<(String, Status)> {
        let mut v = Vec::new();
        items(spec, &mut v);
        v.iter()
            .map(|i| match i.plan(root) {
                Decision::Done(r) => (r.item, r.status),
                Decision::Change { .. } => panic!("check-only item wants to write"),
            })
            .collect()
    }

    #[test]
    fn effective_state_decides_not_the_command_line_text() {
        let d = crate::config::tempdir::Dir::new("boot");
        d.file("sys/devices/system/cpu/possible", "0-3\n");
        d.file("sys/devices/system/cpu/online", "0-3\n");
        d.file("sys/devices/system/cpu/isolated", "2-3\n");
        d.file("sys/devices/system/cpu/nohz_full", "2-3\n");
        d.file("proc/irq/default_smp_affinity", "3\n");
        d.file(
            "proc/cmdline",
            "quiet isolcpus=managed_irq,domain,2,3 nohz_full=2-3\n",
        );
        d.file("sys/kernel/realtime", "1\n");
        let root = SysRoot::at(d.path());
        let spec = spec(&root, "require_preempt_rt = true\n");
        let all_ok = statuses(&root, &spec);
        assert_eq!(all_ok.len(), 5);
        assert!(all_ok.iter().all(|(_, s)| *s == Status::Ok), "{all_ok:?}");
        assert_eq!(
            bootargs(&spec).as_deref(),
            Some("isolcpus=domain,managed_irq,2-3 nohz_full=2-3 rcu_nocbs=2-3 irqaffinity=0-1")
        );
        // The kernel ignored the parameters (e.g. a bad list): same text, no effect.
        d.file("sys/devices/system/cpu/isolated", "\n");
        d.file("sys/devices/system/cpu/nohz_full", "(null)\n");
        d.file("proc/irq/default_smp_affinity", "f\n");
        let bad = statuses(&root, &spec);
        for (name, want) in [
            ("boot.isolcpus", Status::Deviation),
            ("boot.nohz_full", Status::Deviation),
            ("boot.rcu_nocbs", Status::Deviation),
            ("boot.irqaffinity", Status::Deviation),
        ] {
            assert!(bad.contains(&(name.to_string(), want)), "{name}: {bad:?}");
        }
        // rcu_nocbs= alone covers RCU; no nohz_full file means CONFIG_NO_HZ_FULL is off.
        std::fs::remove_file(d.path().join("sys/devices/system/cpu/nohz_full")).unwrap();
        d.file("proc/cmdline", "rcu_nocbs=1-3\n");
        let s = statuses(&root, &spec);
        assert!(
            s.contains(&("boot.nohz_full".to_string(), Status::NotApplicable)),
            "{s:?}"
        );
        assert!(
            s.contains(&("boot.rcu_nocbs".to_string(), Status::Ok)),
            "{s:?}"
        );
    }
}
