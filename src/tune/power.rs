//! Power items: the cpufreq governor per policy and cpuidle states per CPU.
//! Semantics: the kernel's Documentation/admin-guide/pm/cpuidle.rst (per-state
//! `disable`, exit `latency` in µs) and Documentation/admin-guide/pm/cpufreq.rst
//! (`scaling_governor`, `scaling_available_governors` per policy).

use super::spec::TuningSpec;
use super::{
    already, not_applicable, plan_value, Absent, Decision, Item, ItemReport, Status, Step,
    ValueKind,
};
use crate::sys::SysRoot;

const CPUFREQ: &str = "/sys/devices/system/cpu/cpufreq";

/// Adds one governor item per cpufreq policy and one cpuidle item per CPU.
pub fn items(root: &SysRoot, spec: &TuningSpec, out: &mut Vec<Box<dyn Item>>) {
    if let Some(g) = &spec.governor {
        let mut policies: Vec<String> = root
            .list_dir(CPUFREQ)
            .unwrap_or_default()
            .into_iter()
            .filter(|n| n.starts_with("policy"))
            .collect();
        policies.sort_by_key(|p| p[6..].parse::<usize>().unwrap_or(usize::MAX));
        if policies.is_empty() {
            out.push(Box::new(Absent {
                name: "cpufreq.governor".into(),
                why: "no cpufreq policies (no cpufreq driver)".into(),
                path: CPUFREQ.into(),
            }));
        }
        for policy in policies {
            out.push(Box::new(Governor {
                policy,
                want: g.clone(),
            }));
        }
    }
    if let Some(max) = spec.cpuidle_max_latency_us {
        for cpu in spec.cpuidle_cpus.iter() {
            out.push(Box::new(Cpuidle {
                cpu,
                max_latency_us: max,
            }));
        }
    }
}

/// `cpufreq.policyN`: the governor, which must be in `scaling_available_governors`.
struct Governor {
    policy: String,
    want: String,
}

impl Item for Governor {
    fn name(&self) -> String {
        format!("cpufreq.{}", self.policy)
    }

    fn plan(&self, root: &SysRoot) -> Decision {
        let dir = format!("{CPUFREQ}/{}", self.policy);
        let path = format!("{dir}/scaling_governor");
        if let Ok(avail) = root.read(&format!("{dir}/scaling_available_governors")) {
            if !avail.split_whitespace().any(|g| g == self.want) {
                return Decision::Done(
                    ItemReport::new(
                        self.name(),
                        Status::Failed,
                        format!(
                            "refused: governor {:?} not available (available: {})",
                            self.want,
                            avail.trim()
                        ),
                    )
                    .at(path),
                );
            }
        }
        plan_value(self.name(), &path, &self.want, ValueKind::Words, root)
    }
}

/// `cpuidle.cpuN`: disable (`stateK/disable` = 1) every idle state whose exit latency
/// is above the limit; states already within it are left alone.
struct Cpuidle {
    cpu: usize,
    max_latency_us: u32,
}

impl Item for Cpuidle {
    fn name(&self) -> String {
        format!("cpuidle.cpu{}", self.cpu)
    }

    fn plan(&self, root: &SysRoot) -> Decision {
        let dir = format!("/sys/devices/system/cpu/cpu{}/cpuidle", self.cpu);
        let Ok(mut states) = root.list_dir(&dir) else {
            return not_applicable(self.name(), &dir, "no cpuidle states (no cpuidle driver)");
        };
        states.retain(|s| s.starts_with("state"));
        states.sort_by_key(|s| s[5..].parse::<usize>().unwrap_or(usize::MAX));
        let mut steps = Vec::new();
        let mut names = Vec::new();
        for st in &states {
            let latency: u64 = root
                .read_trim(&format!("{dir}/{st}/latency"))
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(0);
            let path = format!("{dir}/{st}/disable");
            let Ok(text) = root.read(&path) else { continue };
            if latency > self.max_latency_us as u64 && text.trim() != "1" {
                let name = root
                    .read_trim(&format!("{dir}/{st}/name"))
                    .unwrap_or_default();
                names.push(format!("{st} {name} ({latency} µs)"));
                steps.push(Step::new(&path, &text, "1".into(), ValueKind::Words));
            }
        }
        if steps.is_empty() {
            return already(
                self.name(),
                &dir,
                format!("no enabled state above {} µs", self.max_latency_us),
            );
        }
        Decision::Change {
            steps,
            detail: format!("disable {}", names.join(", ")),
        }
    }
}
