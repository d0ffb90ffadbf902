//! The cyclic test's snapshot file, `/dev/shm/cyclictestPID`, where rt-tests' snapshot
//! tool looks: `get_cyclictest_snapshot` (rt-tests 2.x, `/usr/sbin`) finds running
//! instances by the files `/dev/shm/cyclictest*` (the PID is the name's trailing
//! digits, not the process name), sends each SIGUSR2 and prints the file. cyclictest
//! creates the file when it starts, writes its status into it on SIGUSR2 and removes it
//! when it ends; [`ShmSnapshot`] does the same for `rtbench cyclic` (by either name),
//! with rtbench's status text (`# rtbench current status:` and the live `T:` lines).
//!
//! Each snapshot replaces the file atomically ([`crate::sys::atomic::write`]; its
//! temporary file starts with a dot, which the tool's glob does not match), so a reader
//! sees a whole snapshot, never a half-written one. A process that is killed (SIGKILL)
//! leaves the file behind, as cyclictest does; the next `rtbench cyclic` removes the
//! files of rtbench processes that are gone (those that begin with `# rtbench`; a
//! cyclictest's is left to it), as [`crate::sys::tracefs`] reclaims instances.

use super::output::write_file;
use super::Sink;
use std::path::{Path, PathBuf};

/// Where rt-tests' snapshot tool looks.
pub const SHM_DIR: &str = "/dev/shm";

/// What the file says before the first SIGUSR2.
const NONE_YET: &str = "# rtbench: no snapshot taken yet (SIGUSR2 takes one)\n";

/// `/dev/shm/cyclictestPID` of this process, removed when dropped.
#[derive(Debug)]
pub struct ShmSnapshot {
    path: PathBuf,
}

impl ShmSnapshot {
    /// Creates the file of this process (holding a line that says no snapshot was
    /// taken yet). Errors: the directory is missing or not writable (the run goes on
    /// without it, and SIGUSR2 is a status on standard error).
    pub fn create() -> std::io::Result<ShmSnapshot> {
        reclaim(Path::new(SHM_DIR));
        let path = PathBuf::from(SHM_DIR).join(format!("cyclictest{}", std::process::id()));
        crate::sys::atomic::write(&path, NONE_YET.as_bytes())?;
        Ok(ShmSnapshot { path })
    }

    /// The file's path.
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// Replaces the file with `value` in `sink`'s format.
    pub fn write<T: ?Sized>(&self, sink: &dyn Sink<T>, value: &T) -> std::io::Result<()> {
        write_file(&self.path, sink, value)
    }
}

/// Removes the snapshot files in `dir` of rtbench processes that are gone: named
/// `cyclictestPID`, `PID` not alive, the text rtbench writes (`# rtbench`).
fn reclaim(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("cyclictest"))
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        if pid <= 0 || crate::sys::signals::pid_alive(pid) {
            continue;
        }
        let mut head = [0u8; 9];
        let ours = std::fs::File::open(e.path())
            .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head))
            .is_ok_and(|()| &head == b"# rtbench");
        if ours {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

impl Drop for ShmSnapshot {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_files_of_rtbench_processes_that_are_gone_are_reclaimed() {
        let d = std::env::temp_dir().join(format!("rtbench-shm-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        // A pid above pid_max (2^22) exists nowhere.
        let gone = "cyclictest4194305";
        let me = format!("cyclictest{}", std::process::id());
        std::fs::write(d.join(gone), NONE_YET).unwrap();
        std::fs::write(d.join(&me), NONE_YET).unwrap();
        std::fs::write(d.join("cyclictest4194306"), b"#-----\n# cyclictest").unwrap();
        reclaim(&d);
        let mut left: Vec<String> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        let mut want = vec!["cyclictest4194306".to_string(), me];
        want.sort();
        assert_eq!(left, want);
        std::fs::remove_dir_all(&d).unwrap();
    }
}
