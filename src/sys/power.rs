//! cpufreq policies and cpuidle states as sysfs shows them, read through [`SysRoot`]:
//! the one reader that tuning (`tune/power.rs`: the governor and idle-state items) and
//! the diagnostics snapshot (`diagnose/system.rs`) share.
//!
//! Sources: the kernel's Documentation/admin-guide/pm/cpufreq.rst (one `policyN`
//! directory per policy under `/sys/devices/system/cpu/cpufreq`, with
//! `scaling_governor`, `scaling_available_governors`, `affected_cpus`, frequencies in
//! kHz) and Documentation/admin-guide/pm/cpuidle.rst (`cpuN/cpuidle/stateK/` with
//! `name`, exit `latency` in µs, `disable`, `usage`, `time` in µs; the driver and
//! governor in `/sys/devices/system/cpu/cpuidle`).

use super::SysRoot;

/// Where the cpufreq policies are.
pub const CPUFREQ_DIR: &str = "/sys/devices/system/cpu/cpufreq";

/// Where the per-CPU directories and the cpuidle driver are.
const CPU_DIR: &str = "/sys/devices/system/cpu";

/// One cpufreq policy (`policyN`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpufreqPolicy {
    /// `policyN`.
    pub name: String,
}

impl CpufreqPolicy {
    /// The kernel path of `file` in the policy's directory.
    pub fn path(&self, file: &str) -> String {
        format!("{CPUFREQ_DIR}/{}/{file}", self.name)
    }

    /// `file` of the policy, trimmed. Errors: the read (missing file: the driver has
    /// no such attribute).
    pub fn read(&self, root: &SysRoot, file: &str) -> std::io::Result<String> {
        root.read_trim(&self.path(file))
    }
}

/// The cpufreq policies in number order; empty without a cpufreq driver.
pub fn cpufreq_policies(root: &SysRoot) -> Vec<CpufreqPolicy> {
    let mut names = root.list_dir(CPUFREQ_DIR).unwrap_or_default();
    names.retain(|n| n.starts_with("policy"));
    names.sort_by_key(|n| numbered(n, "policy"));
    names
        .into_iter()
        .map(|name| CpufreqPolicy { name })
        .collect()
}

/// The cpuidle directory of `cpu`.
pub fn cpuidle_dir(cpu: usize) -> String {
    format!("{CPU_DIR}/cpu{cpu}/cpuidle")
}

/// One cpuidle state of one CPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdleState {
    /// The CPU.
    pub cpu: usize,
    /// `stateK`.
    pub state: String,
    /// `name` (empty when unreadable).
    pub name: String,
    /// Exit `latency`, **µs** (0 when unreadable).
    pub latency_us: u64,
    /// `disable` as read (untrimmed: tuning journals the original value), `None` when
    /// it cannot be read.
    pub disable: Option<String>,
    /// `usage`: times entered (empty when unreadable).
    pub usage: String,
    /// `time`: time spent in it, **µs** (empty when unreadable).
    pub time_us: String,
}

impl IdleState {
    /// Whether the state is disabled (`disable` is `1`).
    pub fn disabled(&self) -> bool {
        self.disable.as_deref().map(str::trim) == Some("1")
    }

    /// The kernel path of the state's `disable` file.
    pub fn disable_path(&self) -> String {
        format!("{}/{}/disable", cpuidle_dir(self.cpu), self.state)
    }
}

/// The cpuidle states of `cpu` in number order. Errors: its cpuidle directory cannot
/// be listed (no cpuidle driver, or an offline CPU).
pub fn idle_states(root: &SysRoot, cpu: usize) -> std::io::Result<Vec<IdleState>> {
    let dir = cpuidle_dir(cpu);
    let mut names = root.list_dir(&dir)?;
    names.retain(|n| n.starts_with("state"));
    names.sort_by_key(|n| numbered(n, "state"));
    Ok(names
        .into_iter()
        .map(|state| {
            let read = |f: &str| root.read_trim(&format!("{dir}/{state}/{f}"));
            IdleState {
                cpu,
                name: read("name").unwrap_or_default(),
                latency_us: read("latency")
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(0),
                disable: root.read(&format!("{dir}/{state}/disable")).ok(),
                usage: read("usage").unwrap_or_default(),
                time_us: read("time").unwrap_or_default(),
                state,
            }
        })
        .collect())
}

/// The cpuidle driver and governor (`current_driver`; `current_governor_ro`, or
/// `current_governor` where the governor can be switched), `None` when absent.
pub fn cpuidle_driver(root: &SysRoot) -> (Option<String>, Option<String>) {
    let read = |f: &str| root.read_trim(&format!("{CPU_DIR}/cpuidle/{f}")).ok();
    (
        read("current_driver"),
        read("current_governor_ro").or_else(|| read("current_governor")),
    )
}

/// The number after `prefix` in `name` (`policy12` → 12), for sorting; names without
/// one sort last.
fn numbered(name: &str, prefix: &str) -> usize {
    name[prefix.len()..].parse().unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_and_states_in_number_order_from_a_fake_tree() {
        let dir = crate::config::tempdir::Dir::new("sys-power");
        let w = |p: &str, v: &str| {
            let p = dir.path().join(p.trim_start_matches('/'));
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, v).unwrap();
        };
        for p in ["policy10", "policy2"] {
            w(
                &format!("{CPUFREQ_DIR}/{p}/scaling_governor"),
                "powersave\n",
            );
        }
        w(&format!("{CPUFREQ_DIR}/boost"), "1\n");
        for (s, lat, dis) in [("state10", "200", "0\n"), ("state1", "2", "1\n")] {
            let d = format!("{}/{s}", cpuidle_dir(3));
            w(&format!("{d}/latency"), lat);
            w(&format!("{d}/disable"), dis);
            w(&format!("{d}/name"), "C1\n");
        }
        let root = SysRoot::at(dir.path());
        let p = cpufreq_policies(&root);
        assert_eq!(
            p.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(),
            ["policy2", "policy10"]
        );
        assert_eq!(p[0].read(&root, "scaling_governor").unwrap(), "powersave");
        let s = idle_states(&root, 3).unwrap();
        assert_eq!(
            s.iter()
                .map(|s| (s.state.as_str(), s.latency_us, s.disabled()))
                .collect::<Vec<_>>(),
            [("state1", 2, true), ("state10", 200, false)]
        );
        assert_eq!(s[1].disable.as_deref(), Some("0\n"));
        assert_eq!(
            s[1].disable_path(),
            "/sys/devices/system/cpu/cpu3/cpuidle/state10/disable"
        );
        assert!(idle_states(&root, 4).is_err());
        assert_eq!(cpuidle_driver(&root), (None, None));
    }
}
