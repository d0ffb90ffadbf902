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
//! leaves the file behind, as cyclictest does.

use super::output::write_file;
use super::Sink;
use std::path::PathBuf;

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

impl Drop for ShmSnapshot {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}
