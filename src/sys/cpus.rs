//! The one CPU topology model every command uses: the sets the kernel names —
//! possible, present, online, isolated (`isolcpus=` domain), `nohz_full` —, the CPUs
//! this process may use (its cgroup cpuset, v1 or v2), its affinity, the housekeeping
//! CPUs, and the SMT sibling groups (cores).
//!
//! Which set a CPU list is read against depends on what it means:
//! - where something runs (`-a`, `--mainaffinity`, `--load-cpus`, `[cyclic] cpus`,
//!   `[load] cpus`, `[[limits.cpus]]`): [`CpuTopology::where_to_run`], against
//!   online ∩ allowed, with `all` and `N` meaning those CPUs;
//! - boot parameters (`isolcpus=`, `nohz_full=`, `irqaffinity=`, `[tuning] isolated`):
//!   [`CpuTopology::boot_list`], against the possible CPUs as the kernel parses them,
//!   `N` being the last possible CPU;
//! - effective masks (`/proc/irq/*/smp_affinity`, `default_smp_affinity`): compared
//!   over the online CPUs (offline bits do not route anything).
//!
//! Sources: Documentation/ABI/testing/sysfs-devices-system-cpu
//! (`/sys/devices/system/cpu/{possible,present,online,isolated,nohz_full}`,
//! `cpuN/topology/{core_cpus_list,thread_siblings_list}`, `smt/control`);
//! Documentation/admin-guide/cputopology.rst; [`super::cgroup`] for the cpuset.

use super::cgroup::{self, Cpuset};
use super::SysRoot;
use crate::cpuset::{CpuSet, Keywords};

const CPU_DIR: &str = "/sys/devices/system/cpu";

/// The machine's CPU sets as the kernel reports them, and what this process may use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuTopology {
    /// Number of possible CPU ids (`possible` max + 1); `N` in boot cpu-lists is this − 1.
    pub nr_cpu_ids: usize,
    /// CPUs that could ever be brought online in this boot (`possible`).
    pub possible: CpuSet,
    /// CPUs present in the hardware (`present`; hot-pluggable boards may have fewer).
    pub present: CpuSet,
    /// CPUs that are online now (not `nosmt`, `maxcpus=` or hotplug-removed).
    pub online: CpuSet,
    /// CPUs removed from the scheduler domains by `isolcpus=` (empty when none).
    pub isolated: CpuSet,
    /// CPUs running adaptive-tick (`nohz_full=`) (empty when none or not built in).
    pub nohz_full: CpuSet,
    /// This process's cgroup cpuset, `None` in the top cpuset (or without cpusets).
    pub cpuset: Option<Cpuset>,
    /// Online CPUs this process may run on: online ∩ the cpuset's CPUs (all online
    /// CPUs in the top cpuset). Isolated CPUs are included: `isolcpus=` narrows the
    /// affinity tasks inherit, not what they may ask for.
    pub allowed: CpuSet,
    /// This process's affinity when it started (`Cpus_allowed_list` of
    /// `/proc/self/status`), `None` when unknown.
    pub affinity: Option<CpuSet>,
    /// SMT sibling groups (cores) of the online CPUs, ascending; every online CPU is
    /// in exactly one. One CPU per group without SMT.
    pub cores: Vec<CpuSet>,
    /// `/sys/devices/system/cpu/smt/control` (`on`, `off`, `forceoff`,
    /// `notsupported`, `notimplemented`), `None` when absent.
    pub smt_control: Option<String>,
}

/// The CPUs the main thread or the load run on, beside the measured CPUs, and why
/// they share a core with a measured CPU when they must.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Beside {
    /// The CPUs.
    pub cpus: CpuSet,
    /// Set when `cpus` shares a core with a measured CPU, or is one.
    pub shares: Option<Sharing>,
}

/// A companion (the main thread or the load) that must share a core with measured
/// CPUs: which CPUs, with which measured ones, and the warning naming both.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sharing {
    /// `main thread` or `load` (empty from [`CpuTopology::beside`]).
    pub who: &'static str,
    /// Where it runs.
    pub cpus: CpuSet,
    /// The measured CPUs on the same cores (or the same CPUs).
    pub measured: CpuSet,
    /// The warning after the subject, e.g. `on CPU 56 shares a core with measured CPU 0
    /// (SMT siblings; …)`.
    pub text: String,
}

impl Sharing {
    /// The warning line as commands print it: `# main thread on CPU 56 shares …`.
    pub fn line(&self) -> String {
        format!("# {} {}", self.who, self.text)
    }
}

impl CpuTopology {
    /// Reads the topology below `root`. Missing `isolated`/`nohz_full` files mean empty
    /// sets; a missing `online` or `present` falls back to `possible`; a missing
    /// `possible` to the number of CPUs `sysconf(_SC_NPROCESSORS_CONF)` reports; missing
    /// topology files to one CPU per core.
    pub fn read(root: &SysRoot) -> CpuTopology {
        // SAFETY: sysconf has no memory-safety preconditions.
        let conf = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) };
        let fallback = if conf > 0 { conf as usize } else { 1 };
        let big = crate::cpuset::MAX_CPU_IDS;
        let possible = root
            .read(&format!("{CPU_DIR}/possible"))
            .ok()
            .and_then(|s| CpuSet::parse_list(&s, big).ok())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| CpuSet::first_n(fallback));
        let nr_cpu_ids = possible.last().map_or(fallback, |l| l + 1);
        let read_set = |name: &str| {
            root.read(&format!("{CPU_DIR}/{name}"))
                .ok()
                .and_then(|s| CpuSet::parse_list(&s, nr_cpu_ids).ok())
        };
        let online = read_set("online")
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| possible.clone());
        let present = read_set("present")
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| possible.clone());
        let cpuset = cgroup::cpuset(root, nr_cpu_ids);
        let mut allowed = match &cpuset {
            Some(c) => online.intersection(&c.cpus),
            None => online.clone(),
        };
        if allowed.is_empty() {
            // A cpuset of offline CPUs only: the kernel falls back to its parent's.
            allowed = online.clone();
        }
        let affinity = root
            .read("/proc/self/status")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                    .map(str::to_string)
            })
            .and_then(|l| CpuSet::parse_list(&l, nr_cpu_ids).ok())
            .filter(|s| !s.is_empty());
        CpuTopology {
            nr_cpu_ids,
            cores: read_cores(root, &online, nr_cpu_ids),
            possible,
            present,
            isolated: read_set("isolated").unwrap_or_default(),
            nohz_full: read_set("nohz_full").unwrap_or_default(),
            cpuset,
            allowed,
            affinity,
            smt_control: root
                .read_trim(&format!("{CPU_DIR}/smt/control"))
                .ok()
                .filter(|s| !s.is_empty()),
            online,
        }
    }

    /// A topology of `n` possible CPUs, all online, one per core, no cpuset, with
    /// `isolated` isolated: the shape unit tests of planning start from.
    pub fn uniform(n: usize, isolated: &str) -> CpuTopology {
        let all = CpuSet::first_n(n);
        CpuTopology {
            nr_cpu_ids: n,
            possible: all.clone(),
            present: all.clone(),
            isolated: CpuSet::parse_list(isolated, n).unwrap_or_default(),
            nohz_full: CpuSet::new(),
            cpuset: None,
            allowed: all.clone(),
            affinity: None,
            cores: all.iter().map(|c| [c].into_iter().collect()).collect(),
            smt_control: None,
            online: all,
        }
    }

    /// Online CPUs that are neither isolated nor nohz_full: where housekeeping (IRQs,
    /// unbound work, the main thread) belongs, system-wide. Falls back to all online
    /// CPUs when isolation covers all of them.
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

    /// The CPUs to measure on when no list is given (`-S`, `-t`, `-a` without a list,
    /// the self-test): the allowed CPUs, isolated ones included — unless this
    /// process's affinity was narrowed on purpose (`taskset`, systemd
    /// `CPUAffinity=`), which is then followed, as cyclictest follows it. An affinity
    /// that only lacks the isolated CPUs is what every task inherits under
    /// `isolcpus=`, not a choice, and is not followed.
    pub fn run_default(&self) -> CpuSet {
        let Some(aff) = &self.affinity else {
            return self.allowed.clone();
        };
        let aff = aff.intersection(&self.allowed);
        if aff.is_empty() || aff == self.allowed.difference(&self.isolated) {
            self.allowed.clone()
        } else {
            aff
        }
    }

    /// The core (SMT sibling group) of `cpu`, `cpu` included; just `cpu` when the
    /// topology does not list it.
    pub fn siblings(&self, cpu: usize) -> CpuSet {
        self.cores
            .iter()
            .find(|c| c.contains(cpu))
            .cloned()
            .unwrap_or_else(|| [cpu].into_iter().collect())
    }

    /// Every CPU that shares a core with a CPU of `cpus` (`cpus` included).
    pub fn cores_of(&self, cpus: &CpuSet) -> CpuSet {
        let listed = self
            .cores
            .iter()
            .filter(|core| core.intersects(cpus))
            .fold(CpuSet::new(), |acc, core| acc.union(core));
        // CPUs the topology does not list (offline) stand for themselves.
        listed.union(cpus)
    }

    /// Whether some core has more than one online CPU.
    pub fn smt_active(&self) -> bool {
        self.cores.iter().any(|c| c.len() > 1)
    }

    /// Parses a CPU list that says where something runs (see the module doc): every
    /// CPU must be online and allowed by this process's cpuset; `all` is every allowed
    /// online CPU and `N` the last of them.
    ///
    /// The prefixes of cyclictest's `-a` (rt-tests' `parse_cpumask`, libnuma's
    /// `numa_parse_cpustring_all`) are read as there: `!LIST` is every allowed online
    /// CPU except those of `LIST` (`!0`, `!0-1`; libnuma inverts over the configured
    /// CPUs and cyclictest's `use_current_cpuset` then keeps the allowed ones), and
    /// `+LIST` numbers CPUs relative to the possible CPUs, which Linux numbers from 0
    /// without gaps, so `+1-2` is `1-2`. `!` comes before `+` (`!+0`), as in libnuma.
    pub fn where_to_run(&self, s: &str) -> Result<CpuSet, CpuListError> {
        let t = s.trim();
        let (invert, t) = match t.strip_prefix('!') {
            Some(rest) => (true, rest.trim_start()),
            None => (false, t),
        };
        let t = t.strip_prefix('+').map_or(t, str::trim_start);
        if invert && t.is_empty() {
            return Err(CpuListError::Parse(
                "'!' needs the CPUs to leave out after it, e.g. !0".into(),
            ));
        }
        let set = if t.starts_with("0x") || t.starts_with("0X") {
            CpuSet::parse(t, self.nr_cpu_ids)
        } else {
            CpuSet::parse_list_with(t, self.nr_cpu_ids, Keywords::Within(&self.allowed))
        }
        .map_err(|e| CpuListError::Parse(e.to_string()))?;
        let set = if invert {
            self.allowed.intersection(&self.online).difference(&set)
        } else {
            set
        };
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
        let outside = set.difference(&self.allowed);
        if !outside.is_empty() {
            return Err(CpuListError::NotAllowed {
                cpus: outside,
                cpuset: self.cpuset.clone(),
            });
        }
        Ok(set)
    }

    /// Parses a boot-parameter CPU list (`isolcpus=`, `nohz_full=`, `irqaffinity=`,
    /// `[tuning] isolated`) as the kernel does: against the possible CPUs, `N` being
    /// the last possible CPU and `all` every possible CPU. Offline CPUs are fine.
    pub fn boot_list(&self, s: &str) -> Result<CpuSet, crate::cpuset::ParseError> {
        let set = CpuSet::parse_list(s, self.nr_cpu_ids)?;
        let impossible = set.difference(&self.possible);
        if let Some(c) = impossible.first() {
            return Err(crate::cpuset::ParseError(format!(
                "CPU {c} is not a possible CPU (possible CPUs: {})",
                self.possible.to_list()
            )));
        }
        Ok(set)
    }

    /// Where the main thread (`main == true`) or the load goes beside the `measured`
    /// CPUs, from [`CpuTopology::run_default`]: CPUs on cores without a measured CPU
    /// (the main thread: the first, housekeeping preferred); else CPUs that are not
    /// measured but share a core with one; else, with a warning, the measured CPUs
    /// themselves.
    pub fn beside(&self, measured: &CpuSet, main: bool) -> Beside {
        let base = self.run_default();
        let hk = self.housekeeping();
        let pick = |set: CpuSet| -> CpuSet {
            if !main {
                return set;
            }
            let prefer = set.intersection(&hk);
            let from = if prefer.is_empty() { &set } else { &prefer };
            from.first().into_iter().collect()
        };
        let free_cores = base.difference(&self.cores_of(measured));
        if !free_cores.is_empty() {
            return Beside {
                cpus: pick(free_cores),
                shares: None,
            };
        }
        let free_cpus = base.difference(measured);
        if !free_cpus.is_empty() {
            let cpus = pick(free_cpus);
            let partners = self.cores_of(&cpus).intersection(measured);
            return Beside {
                shares: Some(Sharing {
                    who: "",
                    text: format!(
                        "on CPU {} shares a core with measured CPU {} (SMT siblings; no core without a measured CPU is allowed)",
                        cpus.to_list(),
                        partners.to_list()
                    ),
                    cpus: cpus.clone(),
                    measured: partners,
                }),
                cpus,
            };
        }
        let cpus = pick(base.clone());
        Beside {
            shares: Some(Sharing {
                who: "",
                text: format!(
                    "runs on measured CPU {} (every allowed CPU, {}, is measured)",
                    cpus.to_list(),
                    base.to_list()
                ),
                cpus: cpus.clone(),
                measured: cpus.intersection(measured),
            }),
            cpus,
        }
    }
}

/// Default places of the main thread and the load for a measurement
/// ([`CpuTopology::companions`]), with the warnings to print.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Companions {
    /// The main thread's CPU (`None`: not pinned, because a measuring thread is not).
    pub main: Option<CpuSet>,
    /// The load's CPUs.
    pub load: CpuSet,
    /// Set when the main thread shares a core with a measured CPU.
    pub main_shares: Option<Sharing>,
    /// Set when the load shares a core with a measured CPU.
    pub load_shares: Option<Sharing>,
}

impl CpuTopology {
    /// Where the main thread and the load go by default beside measuring threads on
    /// `measured` (`None` when a measuring thread is not pinned and may run on any
    /// default CPU): [`CpuTopology::beside`]. With an unpinned measuring thread the
    /// main thread stays unpinned (the measuring threads inherit its affinity, and
    /// pinning it would crowd them onto one CPU) and the load runs on the default CPUs,
    /// without a warning (the threads go where the scheduler puts them, as with
    /// cyclictest `-t N`).
    pub fn companions(&self, measured: Option<&CpuSet>) -> Companions {
        let Some(measured) = measured else {
            // Unpinned threads may run anywhere: no CPU to name, nothing to warn.
            return Companions {
                main: None,
                load: self.run_default(),
                main_shares: None,
                load_shares: None,
            };
        };
        let main = self.beside(measured, true);
        let load = self.beside(measured, false);
        Companions {
            main: Some(main.cpus),
            load: load.cpus,
            main_shares: main.shares.map(|s| Sharing {
                who: "main thread",
                ..s
            }),
            load_shares: load.shares.map(|s| Sharing { who: "load", ..s }),
        }
    }
}

/// Reads the SMT sibling groups of the online CPUs: `core_cpus_list` (Linux 5.7+),
/// else `thread_siblings_list`, one file per core.
fn read_cores(root: &SysRoot, online: &CpuSet, nr_cpu_ids: usize) -> Vec<CpuSet> {
    let mut seen = CpuSet::new();
    let mut cores = Vec::new();
    for cpu in online.iter() {
        if seen.contains(cpu) {
            continue;
        }
        let group = ["core_cpus_list", "thread_siblings_list"]
            .iter()
            .find_map(|f| {
                root.read(&format!("{CPU_DIR}/cpu{cpu}/topology/{f}"))
                    .ok()
                    .and_then(|s| CpuSet::parse_list(&s, nr_cpu_ids).ok())
            })
            .unwrap_or_default();
        let mut group = group.intersection(online).difference(&seen);
        group.insert(cpu);
        seen = seen.union(&group);
        cores.push(group);
    }
    cores
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
    /// Some CPUs are online but this process's cpuset does not allow them.
    NotAllowed {
        /// The CPUs outside the cpuset.
        cpus: CpuSet,
        /// The cpuset (always set: without one every online CPU is allowed).
        cpuset: Option<Cpuset>,
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
            CpuListError::NotAllowed { cpus, cpuset } => match cpuset {
                Some(c) => format!(
                    "CPU {} is not allowed by this process's {}; expected CPUs within {}",
                    cpus.to_list(),
                    c.describe(),
                    c.cpus.to_list()
                ),
                None => format!("CPU {} is not allowed for this process", cpus.to_list()),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::tempdir::Dir;

    #[test]
    fn host_topology_is_consistent() {
        let t = CpuTopology::read(&SysRoot::host());
        assert!(!t.online.is_empty());
        assert!(t.online.last().unwrap() < t.nr_cpu_ids);
        assert!(t.online.is_subset(&t.possible));
        assert!(t.allowed.is_subset(&t.online));
        assert!(t.housekeeping().is_subset(&t.online));
        let in_cores: usize = t.cores.iter().map(CpuSet::len).sum();
        assert_eq!(in_cores, t.online.len());
        // The kernel agrees: this thread's affinity lies within the allowed CPUs.
        let aff = crate::sys::sched::get_affinity().unwrap();
        assert!(aff.intersection(&t.online).is_subset(&t.allowed));
    }

    fn tree(d: &Dir, possible: &str, online: &str) {
        d.file("sys/devices/system/cpu/possible", &format!("{possible}\n"));
        d.file("sys/devices/system/cpu/present", &format!("{possible}\n"));
        d.file("sys/devices/system/cpu/online", &format!("{online}\n"));
    }

    #[test]
    fn isolation_from_a_tree() {
        let d = Dir::new("cpus-iso");
        tree(&d, "0-3", "0-3");
        d.file("sys/devices/system/cpu/isolated", "2-3\n");
        d.file("sys/devices/system/cpu/nohz_full", "\n");
        let t = CpuTopology::read(&SysRoot::at(d.path()));
        assert_eq!(t.nr_cpu_ids, 4);
        assert_eq!(t.isolated.to_list(), "2-3");
        assert_eq!(t.housekeeping().to_list(), "0-1");
        assert_eq!(t.allowed.to_list(), "0-3");
        // The affinity init hands down under isolcpus= is not a choice: all allowed.
        d.file("proc/self/status", "Name:\tx\nCpus_allowed_list:\t0-1\n");
        let t = CpuTopology::read(&SysRoot::at(d.path()));
        assert_eq!(t.run_default().to_list(), "0-3");
        // taskset -c 1 is.
        d.file("proc/self/status", "Cpus_allowed_list:\t1\n");
        let t = CpuTopology::read(&SysRoot::at(d.path()));
        assert_eq!(t.run_default().to_list(), "1");
        // An explicit list may still name any allowed CPU, as cyclictest's -a does.
        assert_eq!(t.where_to_run("3").unwrap().to_list(), "3");
    }

    #[test]
    fn smt_siblings_and_beside() {
        // 4 cores × 2 threads, siblings n and n+4 (x86 numbering).
        let d = Dir::new("cpus-smt");
        tree(&d, "0-7", "0-7");
        for c in 0..8 {
            d.file(
                &format!("sys/devices/system/cpu/cpu{c}/topology/core_cpus_list"),
                &format!("{},{}\n", c % 4, c % 4 + 4),
            );
        }
        d.file("sys/devices/system/cpu/smt/control", "on\n");
        let t = CpuTopology::read(&SysRoot::at(d.path()));
        assert_eq!(t.cores.len(), 4);
        assert_eq!(t.siblings(5).to_list(), "1,5");
        assert!(t.smt_active());
        assert_eq!(t.smt_control.as_deref(), Some("on"));
        let m = |s: &str| CpuSet::parse_list(s, 8).unwrap();
        // Measuring 1-3: main and load avoid 1-3 and 5-7.
        let b = t.beside(&m("1-3"), true);
        assert_eq!((b.cpus.to_list(), b.shares), ("0".into(), None));
        assert_eq!(t.beside(&m("1-3"), false).cpus.to_list(), "0,4");
        // Measuring 0-3: only siblings are left; the warning names both CPUs.
        let b = t.beside(&m("0-3"), true);
        assert_eq!(b.cpus.to_list(), "4");
        let sh = b.shares.unwrap();
        assert!(
            sh.text.contains("CPU 4 shares a core with measured CPU 0"),
            "{sh:?}"
        );
        assert_eq!(
            (sh.cpus.to_list(), sh.measured.to_list()),
            ("4".into(), "0".into())
        );
        // Measuring everything: on a measured CPU, said so.
        let b = t.beside(&m("0-7"), false);
        assert_eq!(b.cpus.to_list(), "0-7");
        assert!(b
            .shares
            .unwrap()
            .text
            .contains("every allowed CPU, 0-7, is measured"));
    }

    #[test]
    fn nosmt_offline_holes_and_a_cpuset() {
        // 8 possible, nosmt: the odd siblings offline; a v1 cpuset of 2-5.
        let d = Dir::new("cpus-nosmt");
        tree(&d, "0-7", "0,2,4,6");
        d.file("sys/devices/system/cpu/smt/control", "off\n");
        d.file(
            "proc/self/mountinfo",
            "34 31 0:31 / /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset\n",
        );
        d.file("proc/self/cgroup", "3:cpuset:/rt\n");
        d.file("sys/fs/cgroup/cpuset/rt/cpuset.effective_cpus", "2-5\n");
        let t = CpuTopology::read(&SysRoot::at(d.path()));
        assert_eq!(t.allowed.to_list(), "2,4");
        assert_eq!(t.run_default().to_list(), "2,4");
        assert!(!t.smt_active());
        assert_eq!(t.where_to_run("all").unwrap().to_list(), "2,4");
        assert_eq!(t.where_to_run("N").unwrap().to_list(), "4");
        // cyclictest's -a prefixes: `!` leaves CPUs out of the allowed online ones.
        assert_eq!(t.where_to_run("!2").unwrap().to_list(), "4");
        assert_eq!(t.where_to_run("!0-3").unwrap().to_list(), "4");
        assert_eq!(t.where_to_run("!+0-2").unwrap().to_list(), "4");
        assert_eq!(t.where_to_run("+2").unwrap().to_list(), "2");
        assert!(matches!(t.where_to_run("!2,4"), Err(CpuListError::Empty)));
        assert!(matches!(t.where_to_run("!"), Err(CpuListError::Parse(_))));
        assert!(matches!(t.where_to_run("!9"), Err(CpuListError::Parse(_))));
        let e = t.where_to_run("3").unwrap_err();
        assert!(
            e.message()
                .contains("CPU 3 is not online (online CPUs: 0,2,4,6)"),
            "{}",
            e.message()
        );
        let e = t.where_to_run("0").unwrap_err().message();
        assert_eq!(
            e,
            "CPU 0 is not allowed by this process's cgroup v1 cpuset /sys/fs/cgroup/cpuset/rt/cpuset.effective_cpus = 2-5; expected CPUs within 2-5"
        );
        // Boot parameters are read against the possible CPUs: offline 7 is fine, N is 7.
        assert_eq!(t.boot_list("3-N").unwrap().to_list(), "3-7");
        assert!(t.boot_list("8").is_err());
    }
}
