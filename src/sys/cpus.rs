//! CPU topology facts from sysfs: possible, online, isolated and nohz_full CPUs, and
//! the housekeeping set derived from them.
//!
//! Source: Documentation/ABI/testing/sysfs-devices-system-cpu
//! (`/sys/devices/system/cpu/{possible,online,isolated,nohz_full}`).

use super::SysRoot;
use crate::cpuset::CpuSet;

/// The machine's CPU sets as the kernel reports them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuTopology {
    /// Number of possible CPU ids (`possible` max + 1); `N` in cpu-lists is this − 1.
    pub nr_cpu_ids: usize,
    /// CPUs that are online now.
    pub online: CpuSet,
    /// CPUs removed from the scheduler domains by `isolcpus=` (empty when none).
    pub isolated: CpuSet,
    /// CPUs running adaptive-tick (`nohz_full=`) (empty when none or not built in).
    pub nohz_full: CpuSet,
}

impl CpuTopology {
    /// Reads the topology below `root`. Missing `isolated`/`nohz_full` files mean empty
    /// sets; a missing `online` falls back to `possible`; a missing `possible` falls back
    /// to the number of CPUs `sysconf(_SC_NPROCESSORS_CONF)` reports.
    pub fn read(root: &SysRoot) -> CpuTopology {
        let conf = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) };
        let fallback = if conf > 0 { conf as usize } else { 1 };
        let big = crate::cpuset::MAX_CPU_IDS;
        let possible = root
            .read("/sys/devices/system/cpu/possible")
            .ok()
            .and_then(|s| CpuSet::parse_list(&s, big).ok())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| CpuSet::first_n(fallback));
        let nr_cpu_ids = possible.last().map_or(fallback, |l| l + 1);
        let read_set = |p: &str| {
            root.read(p)
                .ok()
                .and_then(|s| CpuSet::parse_list(&s, nr_cpu_ids).ok())
        };
        let online = read_set("/sys/devices/system/cpu/online").unwrap_or_else(|| possible.clone());
        CpuTopology {
            nr_cpu_ids,
            online,
            isolated: read_set("/sys/devices/system/cpu/isolated").unwrap_or_default(),
            nohz_full: read_set("/sys/devices/system/cpu/nohz_full").unwrap_or_default(),
        }
    }

    /// Online CPUs that are neither isolated nor nohz_full: where housekeeping (the
    /// main thread, load you do not want on measured CPUs) belongs. Falls back to all
    /// online CPUs when isolation covers all of them.
    pub fn housekeeping(&self) -> CpuSet {
        let hk = self
            .online
            .difference(&self.isolated.union(&self.nohz_full));
        if hk.is_empty() {
            self.online.clone()
        } else {
            hk
        }
    }
}

/// Why a CPU list that says where something runs is not usable here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CpuListError {
    /// Not a cpu-list or mask (the parser's reason).
    Parse(String),
    /// The list names no CPU.
    Empty,
    /// Some CPUs are not online.
    Offline {
        /// The CPUs that are not online.
        offline: CpuSet,
        /// The online CPUs.
        online: CpuSet,
    },
}

impl CpuListError {
    /// The reason as the command line words it (also used for `[load] cpus`).
    pub fn message(&self) -> String {
        match self {
            CpuListError::Parse(e) => format!("{e}; expected a cpu-list like 0-3,5 or a 0x mask"),
            CpuListError::Empty => "empty CPU set".into(),
            CpuListError::Offline { offline, online } => format!(
                "CPU {} is not online (online CPUs: {})",
                offline.to_list(),
                online.to_list()
            ),
        }
    }
}

impl CpuTopology {
    /// Parses `s` (cpu-list like `0-3,5`, `1-7:2/4`, `N`, `all`, or a `0x` mask) as CPUs
    /// to run on: not empty, every CPU online.
    pub fn online_subset(&self, s: &str) -> Result<CpuSet, CpuListError> {
        let set =
            CpuSet::parse(s, self.nr_cpu_ids).map_err(|e| CpuListError::Parse(e.to_string()))?;
        if set.is_empty() {
            return Err(CpuListError::Empty);
        }
        let offline = set.difference(&self.online);
        if !offline.is_empty() {
            return Err(CpuListError::Offline {
                offline,
                online: self.online.clone(),
            });
        }
        Ok(set)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_topology_is_consistent() {
        let t = CpuTopology::read(&SysRoot::host());
        assert!(!t.online.is_empty());
        assert!(t.online.last().unwrap() < t.nr_cpu_ids);
        assert!(t.housekeeping().is_subset(&t.online));
        let n = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert!(t.online.len() >= n.min(t.online.len()));
    }

    #[test]
    fn isolation_from_a_tree() {
        let dir = std::env::temp_dir().join(format!("rtbench-cpus-{}", std::process::id()));
        let cpu = dir.join("sys/devices/system/cpu");
        std::fs::create_dir_all(&cpu).unwrap();
        std::fs::write(cpu.join("possible"), "0-3\n").unwrap();
        std::fs::write(cpu.join("online"), "0-3\n").unwrap();
        std::fs::write(cpu.join("isolated"), "2-3\n").unwrap();
        std::fs::write(cpu.join("nohz_full"), "\n").unwrap();
        let t = CpuTopology::read(&SysRoot::at(&dir));
        assert_eq!(t.nr_cpu_ids, 4);
        assert_eq!(t.isolated.to_list(), "2-3");
        assert_eq!(t.housekeeping().to_list(), "0-1");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
