//! A cgroup cpuset made for one test, allowing only the last online CPU (so CPU 0, where
//! rtbench's main thread used to go, is outside it): a child of the root of the cgroup
//! v1 cpuset hierarchy, or of cgroup v2 when the cpuset controller is there. A command
//! joins it before it execs (`sh -c 'echo $$ > cgroup.procs; exec …'`). Removed on drop,
//! also when an assertion fails; leftover tasks are moved back to the parent first.
//! Used by tests/cli/cpuset_cgroup.rs and tests/cli/every_command.rs.

use super::{lock, online_cpus, tempdir::unique, ArgList};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A child cpuset of the hierarchy's root, removed on drop.
pub struct Cpuset {
    dir: PathBuf,
    parent: PathBuf,
    /// `v1` or `v2`.
    pub version: &'static str,
    /// The CPU it allows: the last online one.
    pub cpu: usize,
    /// v2: `+cpuset` was written to the root's subtree_control and must be undone.
    enabled_controller: bool,
    /// v2: the root's subtree_control to this test until it is undone (common::lock).
    _root: Option<lock::Serial>,
}

/// Where a cgroup file system of type `fstype` (with mount option `option`, such as the
/// v1 controller `cpuset`) has its root mounted (/proc/self/mountinfo).
fn mount_point(fstype: &str, option: Option<&str>) -> Option<PathBuf> {
    let mi = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    mi.lines().find_map(|l| {
        let (pre, post) = l.split_once(" - ")?;
        let mut post = post.split(' ');
        let (fs, _src, opts) = (post.next()?, post.next()?, post.next()?);
        let fields: Vec<&str> = pre.split(' ').collect();
        (fs == fstype
            && fields.get(3) == Some(&"/")
            && option.map_or(true, |o| opts.split(',').any(|x| x == o)))
        .then(|| PathBuf::from(fields[4]))
    })
}

/// Writes `v` to the cgroup file `p`, failing the test with both when it cannot.
fn write(p: &Path, v: &str) {
    std::fs::write(p, v).unwrap_or_else(|e| panic!("write {v:?} to {}: {e}", p.display()))
}

impl Cpuset {
    /// Makes `rtbench-test-TAG-PID-N` allowing the last online CPU (and, on v1, the
    /// root's memory nodes). Fails the test without root, with fewer than 2 online CPUs
    /// or with neither a v1 cpuset hierarchy nor the v2 cpuset controller.
    pub fn new(tag: &str) -> Cpuset {
        assert!(
            nix::unistd::geteuid().is_root(),
            "creating a cgroup cpuset needs root"
        );
        assert!(online_cpus() >= 2, "needs 2 online CPUs to leave CPU 0 out");
        let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
        let cpu = rtbench::cpuset::CpuSet::parse_list(&online, 1 << 12)
            .unwrap()
            .last()
            .unwrap();
        let name = format!("rtbench-test-{tag}-{}-{}", std::process::id(), unique());
        let (parent, version, enabled_controller, held) = match mount_point(
            "cgroup",
            Some("cpuset"),
        ) {
            Some(root) => (root, "v1", false, None),
            None => {
                let root =
                    mount_point("cgroup2", None).expect("no cgroup v1 cpuset nor cgroup2 mount");
                let controllers = std::fs::read_to_string(root.join("cgroup.controllers")).unwrap();
                assert!(
                        controllers.split_whitespace().any(|c| c == "cpuset"),
                        "neither a cgroup v1 cpuset hierarchy nor the v2 cpuset controller on this machine"
                    );
                let held = lock::serial(lock::Resource::CgroupRoot);
                let subtree = std::fs::read_to_string(root.join("cgroup.subtree_control")).unwrap();
                let enable = !subtree.split_whitespace().any(|c| c == "cpuset");
                if enable {
                    write(&root.join("cgroup.subtree_control"), "+cpuset");
                }
                (root, "v2", enable, Some(held))
            }
        };
        let dir = parent.join(&name);
        let _ = std::fs::remove_dir(&dir);
        std::fs::create_dir(&dir).unwrap();
        let cs = Cpuset {
            dir: dir.clone(),
            parent: parent.clone(),
            version,
            cpu,
            enabled_controller,
            _root: held,
        };
        write(&dir.join("cpuset.cpus"), &cpu.to_string());
        if version == "v1" {
            // A v1 cpuset takes no task until its memory nodes are set too.
            let mems = std::fs::read_to_string(parent.join("cpuset.mems")).unwrap();
            write(&dir.join("cpuset.mems"), mems.trim());
        }
        cs
    }

    /// The file rtbench names as the cpuset's CPUs (`cpuset.effective_cpus` on v1,
    /// `cpuset.cpus.effective` on v2).
    pub fn cpus_file(&self) -> String {
        let f = if self.version == "v1" {
            "cpuset.effective_cpus"
        } else {
            "cpuset.cpus.effective"
        };
        self.dir.join(f).display().to_string()
    }

    /// `program args…` run inside the cpuset: a shell joins it, then execs `program`.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>, args: &[&str]) -> Command {
        let mut c = Command::new("sh");
        c.arg("-c")
            .arg(format!(
                "echo $$ > {}/cgroup.procs && exec \"$@\"",
                self.dir.display()
            ))
            .arg("sh")
            .arg(program)
            .args(args);
        c
    }

    /// rtbench `args` run inside the cpuset with the environment [`super::rtbench`]
    /// gives it, to its end.
    pub fn rtbench<A: ArgList + ?Sized>(&self, args: &A) -> Output {
        let plain = super::rtbench();
        let words = args.words();
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        let mut sh = self.command(plain.get_program(), &words);
        for (k, v) in plain.get_envs() {
            match v {
                Some(v) => sh.env(k, v),
                None => sh.env_remove(k),
            };
        }
        sh.output().unwrap()
    }
}

impl Drop for Cpuset {
    fn drop(&mut self) {
        if let Ok(procs) = std::fs::read_to_string(self.dir.join("cgroup.procs")) {
            for pid in procs.lines() {
                let _ = std::fs::write(self.parent.join("cgroup.procs"), pid);
            }
        }
        if let Err(e) = std::fs::remove_dir(&self.dir) {
            eprintln!("teardown: rmdir {}: {e}", self.dir.display());
        }
        if self.enabled_controller {
            let _ = std::fs::write(self.parent.join("cgroup.subtree_control"), "-cpuset");
        }
    }
}
