//! The cgroup cpuset this process runs in, v1 or v2: which CPUs it allows, and where
//! its files are (named in errors, so a refusal says which cpuset refused).
//!
//! The kernel lets a task run only on the CPUs of its cpuset
//! (`cpuset_cpus_allowed()` in kernel/cgroup/cpuset.c): `sched_setaffinity(2)` with no
//! such CPU fails with EINVAL. Tasks in the *top* cpuset may use every possible CPU,
//! even those the root's `cpuset.cpus.effective` leaves out. `sched_getaffinity(2)` is
//! not the same thing: `isolcpus=` narrows the affinity every task inherits from init,
//! while the cpuset still allows the isolated CPUs.
//!
//! Sources: Documentation/admin-guide/cgroup-v1/cpusets.rst (`cpuset.cpus`,
//! `cpuset.effective_cpus`), Documentation/admin-guide/cgroup-v2.rst ("Cpuset",
//! `cpuset.cpus.effective`, which exists only where the controller is enabled, the
//! root cgroup having no `cpuset.cpus`), proc(5) for `/proc/self/cgroup` and
//! `/proc/self/mountinfo`.

use super::SysRoot;
use crate::cpuset::CpuSet;

/// Which cgroup hierarchy holds the cpuset controller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CgroupVersion {
    /// A legacy hierarchy with the `cpuset` controller (`cpuset.effective_cpus`).
    V1,
    /// The unified hierarchy (`cpuset.cpus.effective`; systemd's `AllowedCPUs=`,
    /// `docker --cpuset-cpus` on cgroup v2 hosts).
    V2,
}

impl CgroupVersion {
    /// `v1` or `v2`.
    pub fn as_str(self) -> &'static str {
        match self {
            CgroupVersion::V1 => "v1",
            CgroupVersion::V2 => "v2",
        }
    }
}

/// A cpuset below the top one: the CPUs it lets this process use.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Cpuset {
    /// The hierarchy.
    pub version: CgroupVersion,
    /// The file whose CPUs apply, e.g. `/sys/fs/cgroup/cpuset/rt/cpuset.effective_cpus`
    /// or `/sys/fs/cgroup/system.slice/rtbench.service/cpuset.cpus.effective`.
    pub file: String,
    /// Its CPUs (cpu-list form when serialised).
    #[serde(with = "as_list")]
    pub cpus: CpuSet,
}

mod as_list {
    use crate::cpuset::CpuSet;
    pub fn serialize<S: serde::Serializer>(c: &CpuSet, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&c.to_list())
    }
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<CpuSet, D::Error> {
        let text = <String as serde::Deserialize>::deserialize(d)?;
        CpuSet::parse_list(&text, 1 << 16).map_err(serde::de::Error::custom)
    }
}

impl Cpuset {
    /// `cgroup v1 cpuset /sys/fs/cgroup/cpuset/rt/cpuset.effective_cpus = 1`.
    pub fn describe(&self) -> String {
        format!(
            "cgroup {} cpuset {} = {}",
            self.version.as_str(),
            self.file,
            self.cpus.to_list()
        )
    }
}

/// One line of `/proc/self/mountinfo` that mounts a cgroup hierarchy. The one parser of
/// cgroup mounts: the cpuset here and the refusal diagnosis (`sys/refusal`) both use it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct CgroupMount {
    /// The directory of the hierarchy that is mounted (field 4, `/` unless a subtree
    /// is bind-mounted, as container runtimes do without a cgroup namespace).
    root: String,
    /// Where it is mounted (field 5), octal escapes decoded.
    mount_point: String,
    /// `cgroup` or `cgroup2`.
    fstype: String,
    /// Super options (the last field): the v1 controllers, e.g. `rw,cpuset`.
    options: String,
}

fn unescape(field: &str) -> String {
    // mountinfo escapes space, tab, newline and backslash as \ooo.
    let b = field.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = |j: usize| {
            b.get(j)
                .filter(|c| (b'0'..=b'7').contains(c))
                .map(|c| (c - b'0') as u32)
        };
        if let (b'\\', Some(x), Some(y), Some(z)) = (b[i], octal(i + 1), octal(i + 2), octal(i + 3))
        {
            let v = x * 64 + y * 8 + z;
            out.push(v as u8);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl CgroupMount {
    /// A cgroup v1 hierarchy that holds `controller` (e.g. `cpu`, `cpuset`).
    fn is_v1_with(&self, controller: &str) -> bool {
        self.fstype == "cgroup" && self.options.split(',').any(|o| o == controller)
    }
}

fn cgroup_mounts(mountinfo: &str) -> Vec<CgroupMount> {
    let mut v = Vec::new();
    for line in mountinfo.lines() {
        let Some((pre, post)) = line.split_once(" - ") else {
            continue;
        };
        let pre: Vec<&str> = pre.split(' ').collect();
        let post: Vec<&str> = post.split(' ').collect();
        if pre.len() < 5 || post.len() < 3 {
            continue;
        }
        if post[0] != "cgroup" && post[0] != "cgroup2" {
            continue;
        }
        v.push(CgroupMount {
            root: unescape(pre[3]),
            mount_point: unescape(pre[4]),
            fstype: post[0].to_string(),
            options: post[2].to_string(),
        });
    }
    v
}

/// The directory of cgroup `path` (as `/proc/self/cgroup` names it) in `mount`.
fn mount_dir(mount: &CgroupMount, path: &str) -> String {
    let rel = if mount.root == "/" {
        path
    } else {
        // A bind-mounted subtree: the process's path starts with the mount's root.
        path.strip_prefix(mount.root.as_str()).unwrap_or(path)
    };
    let rel = rel.trim_start_matches('/');
    if rel.is_empty() {
        mount.mount_point.clone()
    } else {
        format!("{}/{rel}", mount.mount_point.trim_end_matches('/'))
    }
}

/// The directory of the calling thread's cgroup in the cgroup v1 hierarchy that holds
/// `controller` (e.g. `cpu`, `pids`), or in the unified (v2) hierarchy when no v1
/// hierarchy has it and `v2` is set, from `/proc/thread-self/cgroup` and
/// `/proc/self/mountinfo` (proc(5), cgroups(7)). A bind-mounted subtree (a container
/// without a cgroup namespace) is followed. `None` when neither is found.
pub fn cgroup_dir(root: &SysRoot, controller: &str, v2: bool) -> Option<String> {
    let cgroups = root
        .read("/proc/thread-self/cgroup")
        .or_else(|_| root.read("/proc/self/cgroup"))
        .ok()?;
    let mounts = cgroup_mounts(&root.read("/proc/self/mountinfo").ok()?);
    let v1 = cgroups.lines().find_map(|l| {
        let mut f = l.splitn(3, ':');
        let (_, ctrl, path) = (f.next()?, f.next()?, f.next()?);
        ctrl.split(',').any(|c| c == controller).then_some(path)
    });
    if let Some(path) = v1 {
        let m = mounts.iter().find(|m| m.is_v1_with(controller))?;
        return Some(mount_dir(m, path));
    }
    if !v2 {
        return None;
    }
    let path = cgroups.lines().find_map(|l| l.strip_prefix("0::"))?;
    let m = mounts.iter().find(|m| m.fstype == "cgroup2")?;
    Some(mount_dir(m, path))
}

/// Where the cgroup v1 hierarchy holding `controller` is mounted (its top directory
/// as this process sees it), from `/proc/self/mountinfo`.
pub fn v1_mount_point(root: &SysRoot, controller: &str) -> Option<String> {
    cgroup_mounts(&root.read("/proc/self/mountinfo").ok()?)
        .into_iter()
        .find(|m| m.is_v1_with(controller))
        .map(|m| m.mount_point)
}

fn read_cpus(root: &SysRoot, file: &str, nr_cpu_ids: usize) -> Option<CpuSet> {
    let text = root.read(file).ok()?;
    CpuSet::parse_list(&text, nr_cpu_ids).ok()
}

/// The cpuset of this process below `root` (`/proc/self/cgroup`, `/proc/self/mountinfo`
/// and the cgroup files). `None` when the process is in the top cpuset (it may use
/// every CPU), when no hierarchy has the cpuset controller, or when its files cannot
/// be read or name no CPU.
pub fn cpuset(root: &SysRoot, nr_cpu_ids: usize) -> Option<Cpuset> {
    let cgroups = root.read("/proc/self/cgroup").ok()?;
    let mounts = cgroup_mounts(&root.read("/proc/self/mountinfo").ok()?);
    // A v1 hierarchy holding the cpuset controller takes precedence: then the unified
    // hierarchy cannot have it (a controller is bound to one hierarchy at a time).
    let v1 = cgroups.lines().find_map(|l| {
        let mut f = l.splitn(3, ':');
        let (_, controllers, path) = (f.next()?, f.next()?, f.next()?);
        controllers
            .split(',')
            .any(|c| c == "cpuset")
            .then(|| path.to_string())
    });
    if let Some(path) = v1 {
        let mount = mounts.iter().find(|m| m.is_v1_with("cpuset"))?;
        if path == "/" && mount.root == "/" {
            return None;
        }
        let dir = mount_dir(mount, &path);
        // cpuset.effective_cpus since Linux 4.x; older kernels only have cpuset.cpus.
        for name in ["cpuset.effective_cpus", "cpuset.cpus"] {
            let file = format!("{dir}/{name}");
            if let Some(cpus) = read_cpus(root, &file, nr_cpu_ids).filter(|c| !c.is_empty()) {
                return Some(Cpuset {
                    version: CgroupVersion::V1,
                    file,
                    cpus,
                });
            }
        }
        return None;
    }
    let path = cgroups
        .lines()
        .find_map(|l| l.strip_prefix("0::"))?
        .to_string();
    let mount = mounts.iter().find(|m| m.fstype == "cgroup2")?;
    // Where the controller is not enabled, the nearest ancestor's cpuset applies:
    // try the process's cgroup, then each parent up to the mount point.
    let top = mount.mount_point.trim_end_matches('/').to_string();
    let mut dir = mount_dir(mount, &path);
    loop {
        let file = format!("{dir}/cpuset.cpus.effective");
        if root.exists(&file) {
            // The root cgroup (no cpuset.cpus of its own) is the top cpuset.
            if !root.exists(&format!("{dir}/cpuset.cpus")) {
                return None;
            }
            return read_cpus(root, &file, nr_cpu_ids)
                .filter(|c| !c.is_empty())
                .map(|cpus| Cpuset {
                    version: CgroupVersion::V2,
                    file,
                    cpus,
                });
        }
        match dir.rfind('/') {
            Some(i) if dir.len() > top.len() && i >= top.len() => dir.truncate(i),
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::tempdir::Dir;

    const V1_MOUNTS: &str = "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n\
        34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n\
        41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
    const V2_MOUNTS: &str =
        "30 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate\n";

    #[test]
    fn v1_child_cpuset() {
        let d = Dir::new("cg-v1");
        d.file("proc/self/mountinfo", V1_MOUNTS);
        d.file("proc/self/cgroup", "4:memory:/x\n3:cpuset:/rt\n0::/\n");
        d.file("sys/fs/cgroup/cpuset/rt/cpuset.cpus", "1\n");
        d.file("sys/fs/cgroup/cpuset/rt/cpuset.effective_cpus", "1\n");
        let c = cpuset(&SysRoot::at(d.path()), 4).unwrap();
        assert_eq!(c.version, CgroupVersion::V1);
        assert_eq!(c.file, "/sys/fs/cgroup/cpuset/rt/cpuset.effective_cpus");
        assert_eq!(c.cpus.to_list(), "1");
        assert_eq!(
            c.describe(),
            "cgroup v1 cpuset /sys/fs/cgroup/cpuset/rt/cpuset.effective_cpus = 1"
        );
        // The top cpuset allows everything.
        d.file("proc/self/cgroup", "3:cpuset:/\n0::/\n");
        assert_eq!(cpuset(&SysRoot::at(d.path()), 4), None);
    }

    #[test]
    fn v2_nearest_ancestor_with_the_controller() {
        let d = Dir::new("cg-v2");
        d.file("proc/self/mountinfo", V2_MOUNTS);
        d.file("proc/self/cgroup", "0::/system.slice/rtbench.service\n");
        // The controller is enabled for system.slice's children? No: only the slice
        // has it, so the service is in the slice's cpuset.
        d.file("sys/fs/cgroup/cpuset.cpus.effective", "0-7\n");
        d.file("sys/fs/cgroup/system.slice/cpuset.cpus", "2-3\n");
        d.file("sys/fs/cgroup/system.slice/cpuset.cpus.effective", "2-3\n");
        d.file(
            "sys/fs/cgroup/system.slice/rtbench.service/cgroup.procs",
            "1\n",
        );
        let c = cpuset(&SysRoot::at(d.path()), 8).unwrap();
        assert_eq!(c.version, CgroupVersion::V2);
        assert_eq!(c.file, "/sys/fs/cgroup/system.slice/cpuset.cpus.effective");
        assert_eq!(c.cpus.to_list(), "2-3");
        // The service's own cpuset once the controller is enabled for it.
        d.file(
            "sys/fs/cgroup/system.slice/rtbench.service/cpuset.cpus",
            "3\n",
        );
        d.file(
            "sys/fs/cgroup/system.slice/rtbench.service/cpuset.cpus.effective",
            "3\n",
        );
        let c = cpuset(&SysRoot::at(d.path()), 8).unwrap();
        assert_eq!(c.cpus.to_list(), "3");
        // In the root cgroup: the top cpuset.
        d.file("proc/self/cgroup", "0::/\n");
        assert_eq!(cpuset(&SysRoot::at(d.path()), 8), None);
    }

    #[test]
    fn v2_without_the_controller_anywhere_and_missing_files() {
        let d = Dir::new("cg-none");
        d.file("proc/self/mountinfo", V2_MOUNTS);
        d.file("proc/self/cgroup", "0::/user.slice\n");
        d.file("sys/fs/cgroup/user.slice/cgroup.procs", "");
        assert_eq!(cpuset(&SysRoot::at(d.path()), 8), None);
        let empty = Dir::new("cg-empty");
        assert_eq!(cpuset(&SysRoot::at(empty.path()), 8), None);
    }

    #[test]
    fn container_bind_mount_and_escapes() {
        // A v1 container without a cgroup namespace: the host path is bind-mounted.
        let d = Dir::new("cg-bind");
        d.file(
            "proc/self/mountinfo",
            "700 690 0:31 /docker/abc /sys/fs/cgroup/cpu\\040set ro,nosuid - cgroup cgroup rw,cpuset\n",
        );
        d.file("proc/self/cgroup", "3:cpuset:/docker/abc\n");
        d.file("sys/fs/cgroup/cpu set/cpuset.effective_cpus", "1\n");
        let c = cpuset(&SysRoot::at(d.path()), 2).unwrap();
        assert_eq!(c.file, "/sys/fs/cgroup/cpu set/cpuset.effective_cpus");
        assert_eq!(c.cpus.to_list(), "1");
    }

    #[test]
    fn this_process() {
        // Whatever the host's layout, a cpuset found here names CPUs this process can
        // use, and the kernel agrees: the affinity lies within it.
        let root = SysRoot::host();
        if let Some(c) = cpuset(&root, 1 << 12) {
            let aff = crate::sys::sched::get_affinity().unwrap();
            assert!(
                aff.is_subset(&c.cpus),
                "{aff:?} not within {}",
                c.describe()
            );
        }
    }
}
