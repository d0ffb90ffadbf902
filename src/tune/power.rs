//! Power items: the cpufreq governor per policy and cpuidle states per CPU, read
//! through [`crate::sys::power`]. Semantics: the kernel's
//! Documentation/admin-guide/pm/cpuidle.rst (per-state `disable`, exit `latency` in µs)
//! and Documentation/admin-guide/pm/cpufreq.rst (`scaling_governor`,
//! `scaling_available_governors` per policy).

use super::spec::TuningSpec;
use super::{
    already, not_applicable, plan_value, Absent, Decision, Item, ItemReport, Status, Step,
    ValueKind,
};
use crate::sys::power::{self, CpufreqPolicy, CPUFREQ_DIR};
use crate::sys::SysRoot;

/// Adds one governor item per cpufreq policy and one cpuidle item per CPU.
pub fn items(root: &SysRoot, spec: &TuningSpec, out: &mut Vec<Box<dyn Item>>) {
    if let Some(g) = &spec.governor {
        let policies = power::cpufreq_policies(root);
        if policies.is_empty() {
            out.push(Box::new(Absent {
                name: "cpufreq.governor".into(),
                why: "no cpufreq policies (no cpufreq driver)".into(),
                path: CPUFREQ_DIR.into(),
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
    policy: CpufreqPolicy,
    want: String,
}

impl Item for Governor {
    fn name(&self) -> String {
        format!("cpufreq.{}", self.policy.name)
    }

    fn plan(&self, root: &SysRoot) -> Decision {
        let path = self.policy.path("scaling_governor");
        if let Ok(avail) = self.policy.read(root, "scaling_available_governors") {
            if !avail.split_whitespace().any(|g| g == self.want) {
                return Decision::Done(
                    ItemReport::new(
                        self.name(),
                        Status::Failed,
                        format!(
                            "refused: governor {:?} not available (available: {})",
                            self.want, avail
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
        let dir = power::cpuidle_dir(self.cpu);
        let Ok(states) = power::idle_states(root, self.cpu) else {
            return not_applicable(self.name(), &dir, "no cpuidle states (no cpuidle driver)");
        };
        let mut steps = Vec::new();
        let mut names = Vec::new();
        for st in &states {
            let Some(text) = &st.disable else { continue };
            if st.latency_us > self.max_latency_us as u64 && !st.disabled() {
                names.push(format!("{} {} ({} µs)", st.state, st.name, st.latency_us));
                steps.push(Step::new(
                    &st.disable_path(),
                    text,
                    "1".into(),
                    ValueKind::Words,
                ));
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
