//! The cyclic test's snapshot file, `/dev/shm/cyclictestPID`, where rt-tests' snapshot
//! tool looks: `get_cyclictest_snapshot` (rt-tests 2.x, `/usr/sbin`) finds running
//! instances by the files `/dev/shm/cyclictest*` (the PID is the name's trailing
//! digits, not the process name), sends each SIGUSR2 and prints the file. cyclictest
//! creates the file when it starts, writes its status into it on SIGUSR2 and removes it
//! when it ends; [`ShmSnapshot`] does the same for `rtbench cyclic` (by either name),
//! with rtbench's status text (`# rtbench current status:` and the live `T:` lines).
//!
//! Each snapshot replaces the file atomically ([`crate::sys::kept::replace`]; its
//! temporary file starts with a dot, which the tool's glob does not match), so a reader
//! sees a whole snapshot, never a half-written one. `/dev/shm` is writable by everyone:
//! a link, FIFO or device put there under the name is refused (the run goes on without
//! the file), never written through or waited on, and the reclaim below reads only
//! regular files, without following links or waiting. A process that is killed (SIGKILL)
//! leaves the file behind, as cyclictest does; the next `rtbench cyclic` removes the
//! files of rtbench processes that are gone (those that begin with `# rtbench`; a
//! cyclictest's is left to it), as [`crate::sys::tracefs`] reclaims instances.

use super::output::keep_file;
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
        crate::sys::kept::replace(&path, NONE_YET.as_bytes())
            .map_err(|e| std::io::Error::new(e.kind(), format!("{} {e}", path.display())))?;
        Ok(ShmSnapshot { path })
    }

    /// The file's path.
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// Replaces the file with `value` in `sink`'s format.
    pub fn write<T: ?Sized>(&self, sink: &dyn Sink<T>, value: &T) -> std::io::Result<()> {
        keep_file(&self.path, sink, value)
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
        // A snapshot is a few KiB of status lines; anything else is not ours.
        let ours = crate::sys::kept::read(&e.path(), 1 << 20)
            .is_ok_and(|text| text.starts_with(b"# rtbench"));
        if ours {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

impl Drop for ShmSnapshot {
    /// Removes the file, if it is still a regular file: a link or node someone put
    /// under the name since is left (and was never written through).
    fn drop(&mut self) {
        if std::fs::symlink_metadata(&self.path).is_ok_and(|m| m.is_file()) {
            let _ = std::fs::remove_file(&self.path);
        }
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
        // A FIFO is neither waited on nor removed; a link is not followed.
        let fifo = d.join("cyclictest4194307");
        let fifo = std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(fifo.as_os_str()))
            .unwrap();
        // SAFETY: a valid C string naming a path in this test's directory.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        std::os::unix::fs::symlink(d.join(gone), d.join("cyclictest4194308")).unwrap();
        reclaim(&d);
        let mut left: Vec<String> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        let mut want = vec![
            "cyclictest4194306".to_string(),
            "cyclictest4194307".to_string(),
            "cyclictest4194308".to_string(),
            me,
        ];
        want.sort();
        assert_eq!(left, want);
        std::fs::remove_dir_all(&d).unwrap();
    }
}
