//! A cgroup made for one test, under a controller's directory the test chose (cgroup
//! v1 `cpu` or `pids`, or a child of the test's own cgroup v2): rtbench runs inside it
//! by a shell that joins it before it execs; removed on drop, after its processes
//! ended, also when an assertion fails. Used by tests/cli/refusals.rs and
//! tests/hostile/acceptance.rs ([`super::cpuset`] is the cpuset with its own set-up).

use std::path::{Path, PathBuf};
use std::process::Output;

/// A child cgroup, removed on drop.
pub struct Cgroup(PathBuf);

impl Cgroup {
    /// Makes `parent/rtbench-TAG-PID-N` (a leftover of that name removed first);
    /// `None` when it cannot be made.
    pub fn new(parent: &Path, tag: &str) -> Option<Cgroup> {
        let d = parent.join(format!(
            "rtbench-{tag}-{}-{}",
            std::process::id(),
            super::unique()
        ));
        let _ = std::fs::remove_dir(&d);
        std::fs::create_dir(&d).ok()?;
        Some(Cgroup(d))
    }

    /// Its directory.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// `rtbench ARGS` started inside this cgroup, to its end.
    pub fn run(&self, args: &[&str]) -> Output {
        std::process::Command::new("sh")
            .arg("-c")
            .arg(format!(
                "echo $$ > {}/cgroup.procs && exec \"$0\" \"$@\"",
                self.0.display()
            ))
            .arg(super::exe())
            .args(args)
            .output()
            .unwrap()
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        // Its processes may still be exiting: rmdir fails with EBUSY until they are gone.
        for _ in 0..100 {
            if std::fs::remove_dir(&self.0).is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        eprintln!("could not remove {}", self.0.display());
    }
}
