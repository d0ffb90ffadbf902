//! The write-ahead journal of tuning changes and the lock that serialises `apply`
//! and `revert`.
//!
//! `DIR/journal.json` (DIR is `[tuning] journal_dir`, default `/run/rtbench`: runtime
//! knobs do not survive a reboot, so neither should their journal) is rewritten
//! atomically (temp file, fsync, rename, directory fsync) *before* each kernel write,
//! holding the value to restore. A crash leaves it in state `applying`; the next
//! `apply` or `revert` rolls those entries back first. `DIR/lock` is held with
//! `flock(LOCK_EX)` for the whole command.

use super::Step;
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

/// Where the journal stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum JournalState {
    /// An `apply` is writing (or crashed while writing) the entries past `committed_len`.
    Applying,
    /// Every entry is in place; `revert` restores them.
    Committed,
    /// The last `apply` failed or was interrupted and its entries were restored.
    RolledBack,
    /// `revert` restored everything.
    Reverted,
}

impl JournalState {
    /// The name used in output.
    pub fn as_str(self) -> &'static str {
        match self {
            JournalState::Applying => "applying",
            JournalState::Committed => "committed",
            JournalState::RolledBack => "rolled-back",
            JournalState::Reverted => "reverted",
        }
    }
}

/// One recorded change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The item that made it.
    pub item: String,
    /// The file, its original text and the values written.
    #[serde(flatten)]
    pub step: Step,
}

/// The journal file's content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Journal {
    /// Format version (1).
    pub version: u32,
    /// Where it stands.
    pub state: JournalState,
    /// Entries `[..committed_len]` belong to earlier, committed applies; the rest to
    /// the apply in progress.
    pub committed_len: usize,
    /// Process that wrote it last.
    pub pid: u32,
    /// When it was written last, seconds since the epoch.
    pub updated_unix_s: u64,
    /// Changes in the order they were made.
    pub entries: Vec<Entry>,
}

impl Default for Journal {
    fn default() -> Self {
        Journal {
            version: 1,
            state: JournalState::Committed,
            committed_len: 0,
            pid: std::process::id(),
            updated_unix_s: 0,
            entries: Vec::new(),
        }
    }
}

/// `DIR/journal.json`.
pub fn path(dir: &Path) -> PathBuf {
    dir.join("journal.json")
}

impl Journal {
    /// Reads the journal in `dir`; `None` when there is none.
    /// Errors: unreadable or not a journal (exit 3, with the path).
    pub fn load(dir: &Path) -> Result<Option<Journal>> {
        let p = path(dir);
        // A kept file (crate::sys::kept): a regular file of sane size only, no link
        // followed; a FIFO here must not stall the boot.
        let max = crate::sys::input::MAX_INPUT_BYTES;
        match crate::sys::kept::read(&p, max).map_err(|e| e.into_io()) {
            // Damaged (a torn write outside rtbench, an edit): say what it is and what to
            // do, since apply, revert and status all stop here until someone acts.
            Ok(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|e| {
                Error::io(
                    &p,
                    std::io::Error::other(format!(
                        "damaged tuning journal ({e}); it lists the values to restore: \
                         put those back by hand, then remove the file"
                    )),
                )
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io(&p, e)),
        }
    }

    /// Writes the journal to `dir` durably (temp + fsync + rename + dir fsync).
    pub fn save(&mut self, dir: &Path) -> Result<()> {
        self.pid = std::process::id();
        self.updated_unix_s = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let p = path(dir);
        let mut bytes = serde_json::to_vec_pretty(self).map_err(|e| Error::io(&p, e.into()))?;
        bytes.push(b'\n');
        crate::sys::kept::replace(&p, &bytes).map_err(|e| Error::io(&p, e))
    }

    /// The entries of the apply in progress (past `committed_len`).
    pub fn pending(&self) -> &[Entry] {
        &self.entries[self.committed_len.min(self.entries.len())..]
    }
}

/// The held `DIR/lock`; released when dropped (or when the process dies).
#[derive(Debug)]
pub struct Lock {
    _file: File,
}

impl Lock {
    /// Creates `dir` (mode 0700) if needed and takes `DIR/lock` without waiting.
    /// Errors (exit 3): the directory cannot be created, or another rtbench holds it.
    pub fn acquire(dir: &Path) -> Result<Lock> {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| Error::io(dir, e))?;
        let p = dir.join("lock");
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&p)
            .map_err(|e| Error::io(&p, e))?;
        // SAFETY: flock on a file descriptor we own.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            let e = std::io::Error::last_os_error();
            return Err(Error::refused(
                format!("lock {} (another rtbench tune is running)", p.display()),
                e,
                None,
            ));
        }
        Ok(Lock { _file: file })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tune::ValueKind;

    #[test]
    fn a_damaged_journal_says_so_and_what_to_do() {
        let dir = crate::config::tempdir::Dir::new("journal-bad");
        std::fs::write(path(dir.path()), "{bad").unwrap();
        let e = Journal::load(dir.path()).unwrap_err();
        assert_eq!(e.exit_code(), 3);
        let m = e.to_string();
        assert!(
            m.contains("damaged tuning journal (") && m.contains("remove the file"),
            "{m}"
        );
        assert_eq!(m.lines().count(), 1, "{m}");
    }

    #[test]
    fn round_trip_and_second_lock_refused() {
        let dir = crate::config::tempdir::Dir::new("journal");
        let d = dir.path().join("run");
        assert_eq!(Journal::load(&d).unwrap(), None);
        let lock = Lock::acquire(&d).unwrap();
        let e = Lock::acquire(&d).unwrap_err();
        assert_eq!(e.exit_code(), 3);
        assert!(e.to_string().contains("another rtbench tune"), "{e}");
        let mut j = Journal {
            state: JournalState::Applying,
            ..Journal::default()
        };
        j.entries.push(Entry {
            item: "sysctl.kernel.printk".into(),
            step: Step::new(
                "/proc/sys/kernel/printk",
                "4\t4\t1\t7\n",
                "1\t4\t1\t7".into(),
                ValueKind::Words,
            ),
        });
        j.save(&d).unwrap();
        let back = Journal::load(&d).unwrap().unwrap();
        assert_eq!(back.entries, j.entries);
        assert_eq!(back.state, JournalState::Applying);
        assert_eq!(back.pending().len(), 1);
        drop(lock);
        Lock::acquire(&d).unwrap();
    }
}
