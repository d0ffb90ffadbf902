//! The results store: one JSON file per self-test run under `/var/lib/rtbench/`
//! (configurable), written atomically, the newest N kept.
//!
//! A full or read-only directory makes [`Store::save`] fail without touching the
//! files already there; the caller still reports the verdict (journal, exit code).

use super::summary::TestSummary;
use super::summary::Verdict;
use crate::sys::atomic;
use crate::sys::info::SysInfo;
use serde::{Deserialize, Serialize};
use std::io;
use std::path::{Path, PathBuf};

/// Default directory of the store (`[output] results_dir`).
pub const DEFAULT_DIR: &str = crate::config::selftest::DEFAULT_RESULTS_DIR;
/// File name prefix of stored runs: `run-<sequence>-<UTC time>.json`. Runs are ordered
/// by the sequence number (one more than the highest stored), not by the time: boards
/// without an RTC boot with a wrong clock, and the newest run must still be the last.
pub const PREFIX: &str = "run-";

/// The sequence number of a stored run's file name, if it is one.
pub fn sequence(p: &Path) -> Option<u64> {
    let name = p.file_name()?.to_str()?;
    let rest = name.strip_prefix(PREFIX)?.strip_suffix(".json")?;
    rest.split('-').next()?.parse().ok()
}

/// Everything one self-test run produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredRun {
    /// rtbench version that wrote it.
    pub rtbench_version: String,
    /// Start of the measurement, seconds since the epoch (UTC).
    pub start_s: i64,
    /// Measured duration in seconds.
    pub duration_s: f64,
    /// The system snapshot.
    pub sysinfo: SysInfo,
    /// The configuration as loaded (after defaults).
    pub config: serde_json::Value,
    /// The tuning report (items and outcomes).
    pub tuning: serde_json::Value,
    /// The load that ran beside the tests, as configured (empty: none).
    pub load: String,
    /// Per-test, per-thread figures with histograms.
    pub tests: Vec<TestSummary>,
    /// The verdict.
    pub verdict: Verdict,
    /// True when the run was cut short by a signal.
    pub interrupted: bool,
}

/// A directory of stored runs.
#[derive(Debug, Clone)]
pub struct Store {
    /// The directory.
    pub dir: PathBuf,
    /// How many runs to keep (at least 1).
    pub keep: usize,
}

/// `YYYYmmddTHHMMSSZ` for `secs` (UTC), sortable as text.
pub fn utc_stamp(secs: i64) -> String {
    super::date::utc_stamp(secs)
}

impl Store {
    /// A store in `dir` keeping `keep` runs.
    pub fn new(dir: impl Into<PathBuf>, keep: usize) -> Store {
        Store {
            dir: dir.into(),
            keep: keep.max(1),
        }
    }

    /// Stored run files, oldest first (by sequence number).
    pub fn list(&self) -> io::Result<Vec<PathBuf>> {
        let mut v: Vec<(u64, PathBuf)> = std::fs::read_dir(&self.dir)?
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter_map(|p| sequence(&p).map(|n| (n, p)))
            .collect();
        v.sort();
        Ok(v.into_iter().map(|(_, p)| p).collect())
    }

    /// Writes `run` atomically (creating the directory if needed), then deletes the
    /// oldest runs beyond `keep`. Returns the new file's path.
    pub fn save(&self, run: &StoredRun) -> io::Result<PathBuf> {
        std::fs::create_dir_all(&self.dir)?;
        self.remove_stale_temps();
        let next = self
            .list()?
            .last()
            .and_then(|p| sequence(p))
            .map_or(1, |n| n + 1);
        let name = format!("{PREFIX}{next:06}-{}.json", utc_stamp(run.start_s));
        let path = self.dir.join(name);
        let mut bytes = serde_json::to_vec_pretty(run)?;
        bytes.push(b'\n');
        atomic::write(&path, &bytes)?;
        let files = self.list()?;
        if files.len() > self.keep {
            for old in &files[..files.len() - self.keep] {
                let _ = std::fs::remove_file(old);
            }
        }
        Ok(path)
    }

    /// Removes temporary files left by a writer that was killed mid-write
    /// (`.run-….json.tmp.<pid>` whose process no longer exists).
    fn remove_stale_temps(&self) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(pid) = name
                .strip_prefix(&format!(".{PREFIX}"))
                .and_then(|rest| rest.rsplit_once(".tmp."))
                .and_then(|(_, pid)| pid.parse::<i32>().ok())
            else {
                continue;
            };
            // SAFETY: kill with signal 0 only checks whether the process exists.
            let gone = unsafe { libc::kill(pid, 0) } != 0
                && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
            if gone {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }

    /// Reads one stored run.
    pub fn load(path: &Path) -> io::Result<StoredRun> {
        let text = std::fs::read_to_string(path)?;
        serde_json::from_str(&text).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::summary::Verdict;
    use crate::sys::SysRoot;

    pub(crate) fn sample_run(start_s: i64) -> StoredRun {
        StoredRun {
            rtbench_version: "test".into(),
            start_s,
            duration_s: 1.0,
            sysinfo: SysInfo::read(&SysRoot::host()),
            config: serde_json::json!({}),
            tuning: serde_json::json!([]),
            load: String::new(),
            tests: vec![],
            verdict: Verdict {
                pass: true,
                checks: vec![],
                problems: vec![],
            },
            interrupted: false,
        }
    }

    #[test]
    fn order_follows_the_sequence_not_the_clock() {
        let dir = std::env::temp_dir().join(format!("rtbench-store-seq-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let store = Store::new(&dir, 2);
        // A board whose clock jumped back: the later runs have earlier timestamps.
        let a = store.save(&sample_run(2_000_000_000)).unwrap();
        let b = store.save(&sample_run(1_000_000_000)).unwrap();
        let c = store.save(&sample_run(1_000_000_001)).unwrap();
        assert_eq!(store.list().unwrap(), vec![b, c.clone()]);
        assert!(!a.exists());
        assert_eq!(sequence(&c), Some(3));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn keeps_the_newest_n_and_round_trips() {
        let dir = std::env::temp_dir().join(format!("rtbench-store-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let store = Store::new(&dir, 2);
        let mut paths = vec![];
        for t in [1_000_000_000, 1_000_000_100, 1_000_000_200] {
            paths.push(store.save(&sample_run(t)).unwrap());
        }
        let left = store.list().unwrap();
        assert_eq!(left, paths[1..].to_vec());
        assert_eq!(Store::load(&left[1]).unwrap(), sample_run(1_000_000_200));
        assert_eq!(utc_stamp(0), "19700101T000000Z");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn read_only_directory_keeps_previous_results() {
        let dir = std::env::temp_dir().join(format!("rtbench-store-ro-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let store = Store::new(&dir, 5);
        let first = store.save(&sample_run(1_000_000_000)).unwrap();
        let before = std::fs::read(&first).unwrap();
        // A file where the store's directory should be makes every write fail (works
        // as root too, unlike permission bits).
        let blocked = Store::new(first.join("sub"), 5);
        assert!(blocked.save(&sample_run(1_000_000_100)).is_err());
        assert_eq!(std::fs::read(&first).unwrap(), before);
        assert_eq!(store.list().unwrap().len(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
