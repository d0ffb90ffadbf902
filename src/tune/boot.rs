//! Check-only items: PREEMPT_RT and the boot parameters `isolcpus=`, `nohz_full=`,
//! `rcu_nocbs=`, `irqaffinity=`, compared with the kernel's *effective* state.
//!
//! Why effective: a bad list makes the kernel ignore the parameter with only a
//! `pr_warn` (`housekeeping_setup()` in the kernel's kernel/sched/isolation.c), and
//! `/sys/devices/system/cpu/isolated` shows only `domain` isolation
//! (`print_cpus_isolated()` in drivers/base/cpu.c;
//! Documentation/ABI/testing/sysfs-devices-system-cpu). rtbench never edits a bootloader; it prints the
//! bootargs fragment that would satisfy the configuration ([`bootargs`]).

use super::spec::TuningSpec;
use super::{Decision, Item, ItemReport, Status};
use crate::cpuset::CpuSet;
use crate::sys::info::SysInfo;
use crate::sys::SysRoot;

const ISOLATED: &str = "/sys/devices/system/cpu/isolated";
const NOHZ_FULL: &str = "/sys/devices/system/cpu/nohz_full";
const DEFAULT_AFFINITY: &str = "/proc/irq/default_smp_affinity";

/// What decides which boot parameters this kernel honours and how long its command
/// line may be.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BootFacts {
    /// `uname -m` (`aarch64`, `armv7l`, `x86_64`, …).
    pub machine: String,
    /// `uname -r`.
    pub release: String,
    /// `/proc/cmdline`, trimmed.
    pub cmdline: String,
    /// The kernel configuration and its source, when readable.
    pub config: Option<(String, String)>,
    /// Whether `/sys/devices/system/cpu/nohz_full` exists (only with CONFIG_NO_HZ_FULL).
    pub nohz_full_file: bool,
}

impl BootFacts {
    /// Reads the facts below `root` (see [`SysInfo::read`] for uname in test trees).
    pub fn read(root: &SysRoot) -> BootFacts {
        let info = SysInfo::read(root);
        BootFacts {
            config: crate::sys::info::kernel_config(root, &info.release),
            machine: info.machine,
            release: info.release,
            cmdline: info.cmdline,
            nohz_full_file: root.exists(NOHZ_FULL),
        }
    }

    /// `(major, minor)` of the release, e.g. `(6, 1)` for `6.1.0-rt-arm64`.
    fn version(&self) -> Option<(u32, u32)> {
        let mut it = self.release.split(|c: char| !c.is_ascii_digit());
        Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
    }

    /// Whether the kernel has `CONFIG_<key>`: `Some` from the configuration, else
    /// `None` (unknown).
    fn config_says(&self, key: &str) -> Option<bool> {
        self.config
            .as_ref()
            .map(|(c, _)| crate::sys::info::config_has(c, key))
    }

    /// Whether `nohz_full=` (and the `nohz` isolcpus flag) works: CONFIG_NO_HZ_FULL,
    /// from the configuration or, without one, from the sysfs file it creates.
    fn has_nohz_full(&self) -> (bool, String) {
        match self.config_says("CONFIG_NO_HZ_FULL") {
            Some(yes) => (
                yes,
                format!(
                    "CONFIG_NO_HZ_FULL {} in {}",
                    if yes { "=y" } else { "is not set" },
                    self.config_source()
                ),
            ),
            None => (
                self.nohz_full_file,
                format!(
                    "{NOHZ_FULL} {}",
                    if self.nohz_full_file {
                        "exists"
                    } else {
                        "does not exist"
                    }
                ),
            ),
        }
    }

    fn config_source(&self) -> &str {
        self.config.as_ref().map_or("", |(_, s)| s.as_str())
    }
}

/// `COMMAND_LINE_SIZE` of the kernel's architecture (`arch/*/include/uapi/asm/setup.h`):
/// the command line's size including its terminating NUL; the kernel cuts what does
/// not fit. `None` for architectures rtbench does not know.
pub fn command_line_size(machine: &str) -> Option<usize> {
    Some(match machine {
        "x86_64" | "i386" | "i486" | "i586" | "i686" => 2048,
        "aarch64" | "arm64" | "aarch64_be" => 2048,
        m if m.starts_with("arm") => 1024,
        m if m.starts_with("riscv") => 1024,
        _ => return None,
    })
}

/// The suggested boot parameters and what the suggestion had to leave out or warn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bootargs {
    /// E.g. `isolcpus=managed_irq,domain,2-3 nohz_full=2-3 rcu_nocbs=2-3 irqaffinity=0-1`.
    pub args: String,
    /// Parameters left out (the kernel cannot honour them) and a command line that
    /// would be too long, one sentence each.
    pub notes: Vec<String>,
}

/// The kernel command line fragment that satisfies the boot items of `spec` on the
/// kernel `facts` describe; `None` when no boot item is configured. CPU lists are the
/// kernel's shortest form ([`CpuSet::to_compact_list`]; plain lists before Linux 4.9).
/// A parameter the kernel cannot honour is left out with a note: `nohz_full=` and the
/// `nohz` flag without CONFIG_NO_HZ_FULL, `rcu_nocbs=` without CONFIG_RCU_NOCB_CPU,
/// the `managed_irq` flag before Linux 5.6. A note also warns when the command line
/// with these parameters (replacing any of the same name) would not fit the
/// architecture's `COMMAND_LINE_SIZE`.
pub fn bootargs(spec: &TuningSpec, facts: &BootFacts) -> Option<Bootargs> {
    let configured = spec.boot_isolcpus.is_some()
        || spec.boot_nohz_full
        || spec.boot_rcu_nocbs
        || spec.boot_irqaffinity;
    if !configured {
        return None;
    }
    let version = facts.version();
    let list = |set: &CpuSet| {
        if version.is_some_and(|v| v < (4, 9)) {
            set.to_list()
        } else {
            set.to_compact_list()
        }
    };
    let iso = list(&spec.isolated);
    let (nohz_ok, nohz_why) = facts.has_nohz_full();
    let mut parts = Vec::new();
    let mut notes = Vec::new();
    if let Some(flags) = &spec.boot_isolcpus {
        let mut kept = Vec::new();
        for f in flags {
            if f == "nohz" && !nohz_ok {
                notes.push(format!(
                    "isolcpus flag nohz left out: the kernel lacks CONFIG_NO_HZ_FULL ({nohz_why})"
                ));
            } else if f == "managed_irq" && version.is_some_and(|v| v < (5, 6)) {
                notes.push(format!(
                    "isolcpus flag managed_irq left out: Linux {} predates it (5.6)",
                    facts.release
                ));
            } else {
                kept.push(f.as_str());
            }
        }
        if kept.is_empty() {
            notes.push(
                "isolcpus= left out: none of its flags works on this kernel (without a flag it would mean domain)".into(),
            );
        } else {
            parts.push(format!("isolcpus={},{iso}", kept.join(",")));
        }
    }
    if spec.boot_nohz_full {
        if nohz_ok {
            parts.push(format!("nohz_full={iso}"));
        } else {
            notes.push(format!(
                "nohz_full= left out: the kernel lacks CONFIG_NO_HZ_FULL ({nohz_why})"
            ));
        }
    }
    if spec.boot_rcu_nocbs {
        // NO_HZ_FULL selects RCU_NOCB_CPU, so the nohz_full file answers too.
        match facts.config_says("CONFIG_RCU_NOCB_CPU") {
            Some(false) => notes.push(format!(
                "rcu_nocbs= left out: CONFIG_RCU_NOCB_CPU is not set in {}",
                facts.config_source()
            )),
            Some(true) => parts.push(format!("rcu_nocbs={iso}")),
            None => {
                parts.push(format!("rcu_nocbs={iso}"));
                if !facts.nohz_full_file {
                    notes.push(
                        "rcu_nocbs= needs CONFIG_RCU_NOCB_CPU, which could not be checked (no kernel configuration readable)".into(),
                    );
                }
            }
        }
    }
    if spec.boot_irqaffinity {
        parts.push(format!("irqaffinity={}", list(&spec.housekeeping)));
    }
    let args = parts.join(" ");
    if let Some(size) = command_line_size(&facts.machine) {
        let names: Vec<&str> = parts
            .iter()
            .filter_map(|p| p.split_once('=').map(|(k, _)| k))
            .collect();
        let mut words: Vec<&str> = facts
            .cmdline
            .split_whitespace()
            .filter(|w| !names.contains(&w.split_once('=').map_or(*w, |(k, _)| k)))
            .collect();
        words.extend(parts.iter().map(String::as_str));
        let len = words.join(" ").len();
        if len > size - 1 {
            notes.push(format!(
                "the command line would be {len} bytes with these parameters; a {} kernel keeps at most {} (COMMAND_LINE_SIZE {size}) and drops the rest",
                facts.machine,
                size - 1
            ));
        }
    }
    (!parts.is_empty() || !notes.is_empty()).then_some(Bootargs { args, notes })
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
            online: spec.online.clone(),
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
/// A CPU set as a value in a report: its cpu-list, or `none` (not `""`).
fn shown_set(set: &CpuSet) -> String {
    if set.is_empty() {
        "none".to_string()
    } else {
        set.to_list()
    }
}

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
        // No flag means `domain`, as on the kernel command line: this item never
        // reports "ok" without having compared something.
        let domain = String::from("domain");
        let flags: Vec<&String> = if self.flags.is_empty() {
            vec![&domain]
        } else {
            self.flags.iter().collect()
        };
        let mut problems = Vec::new();
        let mut found = Vec::new();
        for flag in &flags {
            match flag.as_str() {
                "domain" | "nohz" => {
                    let (file, what) = if *flag == "domain" {
                        (ISOLATED, "isolated")
                    } else {
                        (NOHZ_FULL, "nohz_full")
                    };
                    let eff = read_set(root, file, self.nr).unwrap_or_default();
                    if !self.isolated.is_subset(&eff) {
                        problems.push(format!("{what} CPUs are {}, want {want}", shown_set(&eff)));
                        found.push(format!("{what} {}", shown_set(&eff)));
                    }
                }
                _ => {
                    let cmdline = root.read("/proc/cmdline").unwrap_or_default();
                    let (kflags, list) = cmdline_param(&cmdline, "isolcpus")
                        .map(|v| split_isolcpus(&v))
                        .unwrap_or_default();
                    let set = CpuSet::parse_list(&list, self.nr).unwrap_or_default();
                    if !kflags.iter().any(|f| f == "managed_irq") || !self.isolated.is_subset(&set)
                    {
                        problems.push(format!(
                            "no isolcpus=managed_irq,… covering {want} on the command line"
                        ));
                        found.push(match cmdline_param(&cmdline, "isolcpus") {
                            Some(v) => format!("isolcpus={v}"),
                            None => "no isolcpus=".to_string(),
                        });
                    }
                }
            }
        }
        let flags: Vec<&str> = flags.iter().map(|f| f.as_str()).collect();
        let ok = problems.is_empty();
        let expected = format!("{want} isolated ({})", flags.join(","));
        let detail = if ok {
            expected.clone()
        } else {
            problems.join("; ")
        };
        done(
            &self.name(),
            ok,
            detail,
            ISOLATED,
            expected,
            found.join("; "),
        )
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
                "nohz_full CPUs {}, want {}",
                shown_set(&eff),
                self.isolated.to_list()
            ),
            NOHZ_FULL,
            format!("nohz_full {}", self.isolated.to_list()),
            format!("nohz_full {}", shown_set(&eff)),
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
                "RCU callbacks offloaded from {} (nohz_full ∪ rcu_nocbs=), want {}",
                shown_set(&covered),
                self.isolated.to_list()
            ),
            "/proc/cmdline",
            format!("RCU callbacks offloaded from {}", self.isolated.to_list()),
            format!("offloaded from {}", shown_set(&covered)),
        )
    }
}

/// `boot.irqaffinity`: the default IRQ affinity (`irqaffinity=` at boot, the runtime
/// value in `/proc/irq/default_smp_affinity`) must stay within housekeeping CPUs,
/// compared over the online CPUs.
struct IrqAffinityBoot {
    housekeeping: CpuSet,
    online: CpuSet,
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
        // Offline CPUs in the mask route nothing (and are in it by default).
        let ok = eff.intersection(&self.online).is_subset(&self.housekeeping);
        done(
            &self.name(),
            ok,
            format!(
                "default IRQ affinity {}, want within {}",
                shown_set(&eff),
                self.housekeeping.to_list()
            ),
            DEFAULT_AFFINITY,
            format!(
                "default IRQ affinity within {}",
                self.housekeeping.to_list()
            ),
            shown_set(&eff),
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
    fn isolcpus_without_flags_checks_domain_as_the_kernel_reads_it() {
        let d = crate::config::tempdir::Dir::new("boot-noflag");
        d.file("sys/devices/system/cpu/possible", "0-1\n");
        d.file("sys/devices/system/cpu/online", "0-1\n");
        d.file("sys/devices/system/cpu/isolated", "\n");
        let root = SysRoot::at(d.path());
        let text = "[tuning]\nisolated = \"1\"\n[tuning.boot]\nisolcpus = []\n";
        let spec = crate::config::parse(text, "t", &root).unwrap().tuning;
        assert_eq!(spec.boot_isolcpus, Some(vec!["domain".to_string()]));
        let mut v = Vec::new();
        items(&spec, &mut v);
        let Decision::Done(r) = v[0].plan(&root) else {
            panic!("check-only item wants to write")
        };
        assert_eq!(r.status, Status::Deviation, "{r:?}");
        assert_eq!(r.expected.as_deref(), Some("1 isolated (domain)"));
        // A value found, not a sentence.
        assert_eq!(r.found.as_deref(), Some("isolated none"));
        d.file("sys/devices/system/cpu/isolated", "1\n");
        let Decision::Done(r) = v[0].plan(&root) else {
            panic!("check-only item wants to write")
        };
        assert_eq!(
            (r.status, r.detail.as_str()),
            (Status::Ok, "1 isolated (domain)")
        );
        // No flag at all (a spec built elsewhere) still compares `domain`.
        let bare = Isolcpus {
            flags: vec![],
            isolated: [1].into_iter().collect(),
            nr: 2,
        };
        d.file("sys/devices/system/cpu/isolated", "\n");
        let Decision::Done(r) = bare.plan(&root) else {
            panic!("check-only item wants to write")
        };
        assert_eq!(r.status, Status::Deviation);
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
        let b = bootargs(&spec, &BootFacts::read(&root)).unwrap();
        assert_eq!(
            b.args,
            "isolcpus=domain,managed_irq,2-3 nohz_full=2-3 rcu_nocbs=2-3 irqaffinity=0-1"
        );
        assert_eq!(b.notes, Vec::<String>::new());
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

    fn big_spec(n: usize, isolated: &str, boot: &str) -> TuningSpec {
        let d = crate::config::tempdir::Dir::new("boot-big");
        d.file("sys/devices/system/cpu/possible", &format!("0-{}\n", n - 1));
        d.file("sys/devices/system/cpu/online", &format!("0-{}\n", n - 1));
        let text = format!("[tuning]\nisolated = \"{isolated}\"\n[tuning.boot]\n{boot}");
        crate::config::parse(&text, "t", &SysRoot::at(d.path()))
            .unwrap()
            .tuning
    }

    fn facts(machine: &str, release: &str, config: Option<&str>, nohz_file: bool) -> BootFacts {
        BootFacts {
            machine: machine.into(),
            release: release.into(),
            cmdline: "console=ttyS0,115200 root=/dev/mmcblk0p2 rootwait isolcpus=1".into(),
            config: config.map(|c| (c.to_string(), "/proc/config.gz".to_string())),
            nohz_full_file: nohz_file,
        }
    }

    #[test]
    fn shortest_lists_and_the_command_line_limit() {
        // Every odd CPU of 1024 (one SMT sibling of each core isolated).
        let spec = big_spec(
            1024,
            "1-1023:1/2",
            "isolcpus = [\"domain\", \"managed_irq\"]\nnohz_full = true\nrcu_nocbs = true\nirqaffinity = true\n",
        );
        let f = facts(
            "aarch64",
            "6.6.30-rt30",
            Some("CONFIG_NO_HZ_FULL=y\nCONFIG_RCU_NOCB_CPU=y\n"),
            true,
        );
        let b = bootargs(&spec, &f).unwrap();
        assert_eq!(
            b.args,
            "isolcpus=domain,managed_irq,1-1023:1/2 nohz_full=1-1023:1/2 rcu_nocbs=1-1023:1/2 irqaffinity=0-1022:1/2"
        );
        assert!(b.notes.is_empty(), "{:?}", b.notes);
        // Linux 4.4 has no strides: the plain list, far too long for a 32-bit ARM
        // command line (1024 bytes), which is said.
        let f = facts(
            "armv7l",
            "4.4.302-rt232",
            Some("CONFIG_NO_HZ_FULL=y\nCONFIG_RCU_NOCB_CPU=y\n"),
            true,
        );
        let b = bootargs(&spec, &f).unwrap();
        assert!(b.args.starts_with("isolcpus=domain,1,3,5,"), "{}", b.args);
        assert!(
            b.notes
                .iter()
                .any(|n| n.contains("managed_irq left out: Linux 4.4.302-rt232 predates it")),
            "{:?}",
            b.notes
        );
        let long = b
            .notes
            .iter()
            .find(|n| n.contains("COMMAND_LINE_SIZE"))
            .unwrap();
        assert!(
            long.contains("a armv7l kernel keeps at most 1023 (COMMAND_LINE_SIZE 1024)"),
            "{long}"
        );
        // The same on x86_64 (2048) still does not fit; an unknown architecture is not judged.
        assert!(bootargs(&spec, &facts("mips", "4.4.1", None, true))
            .unwrap()
            .notes
            .iter()
            .all(|n| !n.contains("COMMAND_LINE_SIZE")));
        assert_eq!(command_line_size("x86_64"), Some(2048));
        assert_eq!(command_line_size("riscv64"), Some(1024));
    }

    #[test]
    fn never_suggests_what_the_kernel_cannot_honour() {
        let spec = big_spec(
            4,
            "2-3",
            "isolcpus = [\"nohz\", \"domain\"]\nnohz_full = true\nrcu_nocbs = true\n",
        );
        // CONFIG_NO_HZ_FULL not set (this machine's kernel): no nohz_full=, no nohz flag.
        let cfg = "# CONFIG_NO_HZ_FULL is not set\nCONFIG_RCU_NOCB_CPU=y\n";
        let b = bootargs(&spec, &facts("x86_64", "6.18.4", Some(cfg), false)).unwrap();
        assert_eq!(b.args, "isolcpus=domain,2-3 rcu_nocbs=2-3");
        assert_eq!(b.notes.len(), 2, "{:?}", b.notes);
        assert!(b.notes[0].starts_with("isolcpus flag nohz left out: the kernel lacks CONFIG_NO_HZ_FULL (CONFIG_NO_HZ_FULL is not set in /proc/config.gz)"), "{:?}", b.notes);
        assert!(
            b.notes[1].starts_with("nohz_full= left out"),
            "{:?}",
            b.notes
        );
        // Without a configuration the sysfs file decides; RCU_NOCB_CPU is then unknown.
        let b = bootargs(&spec, &facts("x86_64", "6.18.4", None, false)).unwrap();
        assert_eq!(b.args, "isolcpus=domain,2-3 rcu_nocbs=2-3");
        assert!(
            b.notes.iter().any(|n| n.contains("could not be checked")),
            "{:?}",
            b.notes
        );
        assert!(
            b.notes
                .iter()
                .any(|n| n.contains("/sys/devices/system/cpu/nohz_full does not exist")),
            "{:?}",
            b.notes
        );
        // rcu_nocbs= without CONFIG_RCU_NOCB_CPU; isolcpus with only the nohz flag.
        let spec = big_spec(4, "2-3", "isolcpus = [\"nohz\"]\nrcu_nocbs = true\n");
        let cfg = "# CONFIG_NO_HZ_FULL is not set\n# CONFIG_RCU_NOCB_CPU is not set\n";
        let b = bootargs(&spec, &facts("x86_64", "6.1.0", Some(cfg), false)).unwrap();
        assert_eq!(b.args, "");
        assert!(
            b.notes.iter().any(|n| n.starts_with("isolcpus= left out")),
            "{:?}",
            b.notes
        );
        assert!(
            b.notes
                .iter()
                .any(|n| n.starts_with("rcu_nocbs= left out: CONFIG_RCU_NOCB_CPU is not set")),
            "{:?}",
            b.notes
        );
    }
}
