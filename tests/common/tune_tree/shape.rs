//! Generated CPU shapes as fake /proc + /sys trees: possible/present/online CPUs
//! (offline holes, `nosmt`), SMT sibling numbering, isolation, a cgroup v1 or v2
//! cpuset (v2 also with the controller enabled only on an ancestor), and the process
//! affinity (`/proc/self/status`).

use rtbench::cpuset::CpuSet;
use std::path::Path;

/// How SMT siblings are numbered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Numbering {
    /// Siblings are `c` and `c + cores` (x86 firmware order).
    Split,
    /// Siblings are consecutive (`0,1`, `2,3`: many ARM and POWER systems).
    Adjacent,
}

/// Where the process's cpuset is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CpusetAt {
    /// The top cpuset.
    Top,
    /// A cgroup v1 child cpuset with these CPUs.
    V1(CpuSet),
    /// A cgroup v2 cgroup with these effective CPUs; `nested`: the process is in a
    /// child cgroup without the controller, so its parent's cpuset applies.
    V2 { cpus: CpuSet, nested: bool },
}

/// One machine shape.
#[derive(Debug, Clone)]
pub struct Shape {
    /// Possible CPUs `0..possible`.
    pub possible: usize,
    /// Online CPUs.
    pub online: CpuSet,
    /// Threads per core (1: no SMT).
    pub threads: usize,
    /// Sibling numbering.
    pub numbering: Numbering,
    /// `smt/control`.
    pub smt_control: &'static str,
    /// `isolated`.
    pub isolated: CpuSet,
    /// The cpuset.
    pub cpuset: CpusetAt,
    /// `Cpus_allowed_list` of `/proc/self/status` (`None`: no status file).
    pub affinity: Option<CpuSet>,
}

impl Shape {
    /// Every possible CPU online, no SMT, no isolation, top cpuset.
    pub fn plain(possible: usize) -> Shape {
        Shape {
            possible,
            online: CpuSet::first_n(possible),
            threads: 1,
            numbering: Numbering::Split,
            smt_control: "notsupported",
            isolated: CpuSet::new(),
            cpuset: CpusetAt::Top,
            affinity: None,
        }
    }

    /// The SMT core of `cpu` among the possible CPUs.
    pub fn core(&self, cpu: usize) -> CpuSet {
        let t = self.threads.max(1);
        let cores = self.possible / t;
        match self.numbering {
            _ if t == 1 || cores == 0 => [cpu].into_iter().collect(),
            Numbering::Split => (0..t).map(|k| cpu % cores + k * cores).collect(),
            Numbering::Adjacent => (0..t).map(|k| cpu - cpu % t + k).collect(),
        }
    }

    /// The cpuset's CPUs (`None` in the top cpuset).
    pub fn cpuset_cpus(&self) -> Option<&CpuSet> {
        match &self.cpuset {
            CpusetAt::Top => None,
            CpusetAt::V1(c) | CpusetAt::V2 { cpus: c, .. } => Some(c),
        }
    }

    /// Writes the tree below `root`.
    pub fn write(&self, root: &Path) {
        let f = |rel: &str, content: &str| {
            let p = root.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, content).unwrap();
        };
        let all = CpuSet::first_n(self.possible);
        let cpu = "sys/devices/system/cpu";
        f(&format!("{cpu}/possible"), &format!("{}\n", all.to_list()));
        f(&format!("{cpu}/present"), &format!("{}\n", all.to_list()));
        f(
            &format!("{cpu}/online"),
            &format!("{}\n", self.online.to_list()),
        );
        f(
            &format!("{cpu}/offline"),
            &format!("{}\n", all.difference(&self.online).to_list()),
        );
        f(
            &format!("{cpu}/isolated"),
            &format!("{}\n", self.isolated.to_list()),
        );
        f(
            &format!("{cpu}/smt/control"),
            &format!("{}\n", self.smt_control),
        );
        for c in self.online.iter() {
            // The kernel lists a CPU's online siblings.
            let sib = self.core(c).intersection(&self.online);
            f(
                &format!("{cpu}/cpu{c}/topology/thread_siblings_list"),
                &format!("{}\n", sib.to_list()),
            );
            f(
                &format!("{cpu}/cpu{c}/topology/core_cpus_list"),
                &format!("{}\n", sib.to_list()),
            );
        }
        f(
            "proc/cmdline",
            "console=ttyAMA0 root=/dev/mmcblk0p2 rootwait\n",
        );
        if let Some(a) = &self.affinity {
            f(
                "proc/self/status",
                &format!("Name:\trtbench\nCpus_allowed_list:\t{}\n", a.to_list()),
            );
        }
        match &self.cpuset {
            CpusetAt::Top => {
                f(
                    "proc/self/mountinfo",
                    "30 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
                );
                f("proc/self/cgroup", "0::/\n");
                f(
                    "sys/fs/cgroup/cpuset.cpus.effective",
                    &format!("{}\n", self.online.to_list()),
                );
            }
            CpusetAt::V1(c) => {
                f(
                    "proc/self/mountinfo",
                    "34 31 0:31 / /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset\n",
                );
                f("proc/self/cgroup", "3:cpuset:/rt\n1:cpu:/\n0::/\n");
                f(
                    "sys/fs/cgroup/cpuset/rt/cpuset.cpus",
                    &format!("{}\n", c.to_list()),
                );
                f(
                    "sys/fs/cgroup/cpuset/rt/cpuset.effective_cpus",
                    &format!("{}\n", c.intersection(&self.online).to_list()),
                );
            }
            CpusetAt::V2 { cpus, nested } => {
                f(
                    "proc/self/mountinfo",
                    "30 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
                );
                let own = if *nested {
                    "/rt.slice/rtbench.service"
                } else {
                    "/rt.slice"
                };
                f("proc/self/cgroup", &format!("0::{own}\n"));
                f(
                    "sys/fs/cgroup/cpuset.cpus.effective",
                    &format!("{}\n", self.online.to_list()),
                );
                f(
                    "sys/fs/cgroup/rt.slice/cpuset.cpus",
                    &format!("{}\n", cpus.to_list()),
                );
                f(
                    "sys/fs/cgroup/rt.slice/cpuset.cpus.effective",
                    &format!("{}\n", cpus.intersection(&self.online).to_list()),
                );
                f("sys/fs/cgroup/rt.slice/rtbench.service/cgroup.procs", "1\n");
            }
        }
    }
}
