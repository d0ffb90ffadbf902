//! The results store: one JSON file per self-test run under `/var/lib/rtbench/`
//! (configurable), written atomically, the newest N kept.
//!
//! A full or read-only directory makes [`Store::save`] fail without touching the
//! files already there; the caller still reports the verdict (journal, exit code) and
//! keeps this boot's result in the fallback directory ([`save_fallback`], `/run/rtbench`
//! by default), so that `rtbench report` never shows an older run as this boot's: every
//! run records the boot it belongs to ([`Origin`]).

use super::summary::TestSummary;
use super::summary::Verdict;
use crate::sys::info::SysInfo;
use crate::sys::kept;
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

/// The kernel's ID of the running boot (random at every boot).
/// Source: random(4), `/proc/sys/kernel/random/boot_id`.
pub const BOOT_ID: &str = "/proc/sys/kernel/random/boot_id";
/// The machine ID (machine-id(5)); may be absent on images without systemd.
pub const MACHINE_ID: &str = "/etc/machine-id";
/// File name of this boot's result in the fallback directory.
pub const FALLBACK_FILE: &str = "unstored-run.json";

/// Which boot and machine a run belongs to, and what started it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Origin {
    /// `/proc/sys/kernel/random/boot_id` at the run (empty: unknown, e.g. a file
    /// written by an older rtbench).
    #[serde(default)]
    pub boot_id: String,
    /// `/etc/machine-id` (empty when the image has none).
    #[serde(default)]
    pub machine_id: String,
    /// `systemd` (a unit: see `unit`), `boot` (an init script, which sets
    /// `RTBENCH_TRIGGER=boot`), or `manual` (by hand).
    #[serde(default)]
    pub trigger: String,
    /// The systemd unit that ran it (from `/proc/self/cgroup`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    /// systemd's `INVOCATION_ID` of that unit run, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invocation_id: Option<String>,
}

fn read_id(path: &str) -> String {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// The ID of the running boot (empty when `/proc` does not say).
pub fn current_boot_id() -> String {
    read_id(BOOT_ID)
}

impl Origin {
    /// This process: the running boot and machine, and the trigger from the
    /// environment (`INVOCATION_ID` is set by systemd for every unit it starts,
    /// systemd.exec(5); `RTBENCH_TRIGGER` by the SysV init script).
    pub fn current() -> Origin {
        let invocation_id = std::env::var("INVOCATION_ID")
            .ok()
            .filter(|s| !s.is_empty());
        let unit = std::fs::read_to_string("/proc/self/cgroup")
            .ok()
            .and_then(|c| unit_of_cgroup(&c));
        let trigger = match std::env::var("RTBENCH_TRIGGER") {
            Ok(t) if !t.is_empty() => t,
            _ if invocation_id.is_some() => "systemd".into(),
            _ => "manual".into(),
        };
        Origin {
            boot_id: current_boot_id(),
            machine_id: read_id(MACHINE_ID),
            trigger,
            unit: if invocation_id.is_some() { unit } else { None },
            invocation_id,
        }
    }

    /// `by systemd (rtbench.service)`, `at boot`, `by hand`: how it was started.
    pub fn trigger_text(&self) -> String {
        match (self.trigger.as_str(), &self.unit) {
            ("systemd", Some(u)) => format!("by systemd ({u})"),
            ("systemd", None) => "by systemd".into(),
            ("boot", _) => "at boot (init script)".into(),
            ("manual", _) => "by hand".into(),
            ("", _) => "trigger not recorded".into(),
            (t, _) => t.to_string(),
        }
    }

    /// The boot ID shortened for tables (first 8 hex digits), `unknown` when empty.
    pub fn short_boot(&self) -> String {
        if self.boot_id.is_empty() {
            "not recorded".into()
        } else {
            self.boot_id.chars().filter(|c| *c != '-').take(8).collect()
        }
    }
}

/// The unit name (`*.service`) in a `/proc/self/cgroup` text, if any (cgroup v2
/// `0::/system.slice/rtbench.service`, or v1 `1:name=systemd:/...`).
pub fn unit_of_cgroup(cgroup: &str) -> Option<String> {
    cgroup.lines().find_map(|l| {
        let path = l.splitn(3, ':').nth(2)?;
        path.rsplit('/')
            .find(|c| c.ends_with(".service") || c.ends_with(".scope"))
            .map(str::to_string)
    })
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
    /// The boot, machine and trigger of the run.
    #[serde(default)]
    pub origin: Origin,
    /// The self-test's exit code (`None` in files of older rtbench versions).
    #[serde(default)]
    pub exit_code: Option<i32>,
    /// Set only in the fallback copy: why the results store did not take this run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store_error: Option<String>,
    /// Set only in the fallback copy: the results store (`[output] results_dir`) the
    /// run was meant for, so that `report` reading another configuration's store never
    /// shows it as this boot's run (absent in copies of older versions: shown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub results_dir: Option<String>,
    /// The hwlat gate and the SMIs of the run (absent in files of older versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hardware: Option<crate::explain::hardware::HardwareCheck>,
    /// The `[[condition]]`s the run measured, in order, each with its load (its tests
    /// are the [`TestSummary`]s naming it); absent when the configuration has none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<ConditionRecord>,
    /// The unit measured: its serial number and the factory line's names for it;
    /// absent when none is known (and in files of older versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<crate::results::unit::UnitRecord>,
    /// The attempt this record stands for ([`super::attempt`]): written when the
    /// self-test starts, rewritten when it ends; absent in files of older versions
    /// (judged runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<super::attempt::Attempt>,
    /// The outputs the run was asked for and could not write (`results: WHY`,
    /// `prometheus: WHY`); one makes a pass exit 1 ([`super::outcome`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unwritten: Vec<String>,
}

/// One condition of a run: its name and the load that ran beside its tests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConditionRecord {
    /// `[[condition]] name`.
    pub name: String,
    /// Its load as configured (empty: none).
    pub load: String,
}

impl StoredRun {
    /// The kernel the run measured, as the verdict line names it: `PREEMPT_RT kernel
    /// 6.1.0-rt` or `PREEMPT_DYNAMIC kernel 6.18.4 (not PREEMPT_RT)`.
    pub fn kernel_state(&self) -> String {
        let si = &self.sysinfo;
        if si.realtime {
            format!("PREEMPT_RT kernel {}", si.release)
        } else {
            format!(
                "{} kernel {} (not PREEMPT_RT)",
                si.preempt_model, si.release
            )
        }
    }

    /// Knobs this run's `apply` changed (and left in place: the tuning stays
    /// applied after the self-test, `rtbench tune revert` undoes it); 0 for `check`,
    /// mode `off` and older files.
    pub fn tuning_changed(&self) -> usize {
        let items = self.tuning.get("items").and_then(|i| i.as_array());
        items.map_or(0, |v| {
            v.iter()
                .filter(|i| i.get("changed").and_then(|c| c.as_bool()) == Some(true))
                .count()
        })
    }

    /// The tuning the run was measured on, from its tuning report: `tuning off (not
    /// checked)`, `tuning check: no item checked`, `tuning apply: 7 items, 3
    /// changed, 7 ok` or `tuning check: 7 items, 6 ok, 1 deviation`. Never reads as
    /// checked when no item was compared.
    pub fn tuning_state(&self) -> String {
        let t = &self.tuning;
        let Some(action) = t.get("action").and_then(|a| a.as_str()) else {
            return "tuning off (not checked)".into();
        };
        let items = t.get("items").and_then(|i| i.as_array());
        let items = items.map_or(&[][..], |v| v.as_slice());
        if items.is_empty() {
            return format!("tuning {action}: no item checked");
        }
        let mut counts: Vec<(String, usize)> = Vec::new();
        for i in items {
            let status = i
                .get("status")
                .and_then(|s| s.as_str())
                .unwrap_or("unknown");
            match counts.iter_mut().find(|(s, _)| s == status) {
                Some((_, n)) => *n += 1,
                None => counts.push((status.to_string(), 1)),
            }
        }
        let n = items.len();
        let mut parts = vec![format!("{n} item{}", if n == 1 { "" } else { "s" })];
        if action == "apply" {
            parts.push(format!("{} changed", self.tuning_changed()));
        }
        use crate::tune::Status;
        let order = [
            Status::Ok,
            Status::NotApplicable,
            Status::Unsupported,
            Status::Deviation,
            Status::Failed,
        ];
        for status in order.map(Status::as_str) {
            if let Some((_, n)) = counts.iter().find(|(s, _)| s == status) {
                let plural = if *n > 1 && status == "deviation" {
                    "s"
                } else {
                    ""
                };
                parts.push(format!("{n} {status}{plural}"));
            }
        }
        format!("tuning {action}: {}", parts.join(", "))
    }

    /// The word outputs show for the run: its verdict's (`pass`, `fail`, `unjudged`,
    /// `invalid`) once judged, else the attempt's state (`stopped`, `started`).
    pub fn shown_word(&self) -> &'static str {
        match &self.attempt {
            Some(a) if !a.judged() => a.state.as_str(),
            _ => self.verdict.word(),
        }
    }

    /// Whether the attempt reached a verdict (older files without an attempt: yes).
    pub fn judged(&self) -> bool {
        self.attempt
            .as_ref()
            .map_or(true, super::attempt::Attempt::judged)
    }

    /// The exit code every output shows: the one the self-test exited with, made by
    /// [`super::outcome::RunOutcome::exit_code`] and stored. Older files without one:
    /// 0 for a pass, else 1; an attempt without a verdict and without a code: 1.
    pub fn exit_status(&self) -> i32 {
        use crate::error::exit;
        match self.exit_code {
            Some(c) => c,
            None if self.judged() && self.verdict.pass => exit::OK,
            None => exit::FAIL,
        }
    }

    /// Whether the run was accepted: it reached a verdict and its exit code was 0 (a
    /// pass, or an unjudged run with `allow_unjudged`, every requested output written).
    pub fn accepted(&self) -> bool {
        self.judged() && self.exit_status() == crate::error::exit::OK
    }

    /// Whether the run passed, for the outputs that say pass or not (the Prometheus
    /// `rtbench_selftest_pass`, the journal's priority): accepted and its verdict a pass.
    pub fn passed(&self) -> bool {
        self.accepted() && self.verdict.pass
    }
}

/// The fallback copy of this boot's result in `dir` ([`FALLBACK_FILE`]).
pub fn fallback_path(dir: &Path) -> PathBuf {
    dir.join(FALLBACK_FILE)
}

/// Keeps `run` (with its `store_error`) in `dir` when the store failed: written
/// atomically, mode 0644; the directory is created (0755) if needed.
pub fn save_fallback(dir: &Path, run: &StoredRun) -> io::Result<PathBuf> {
    create_dir(dir)?;
    let path = fallback_path(dir);
    let mut bytes = serde_json::to_vec_pretty(run)?;
    bytes.push(b'\n');
    kept::replace(&path, &bytes)?;
    Ok(path)
}

/// Removes the fallback copy once a later run of this boot was stored, so that it
/// never stands for a newer stored run. A missing file is fine.
pub fn clear_fallback(dir: &Path) {
    let _ = std::fs::remove_file(fallback_path(dir));
}

/// Reads the fallback copy in `dir`, if there is one.
pub fn load_fallback(dir: &Path) -> Option<io::Result<StoredRun>> {
    let p = fallback_path(dir);
    p.exists().then(|| Store::load(&p))
}

/// `mkdir -p` with mode 0755 whatever the umask: the files in it are read by other
/// users (node_exporter, a field engineer's shell).
fn create_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    if dir.is_dir() {
        return Ok(());
    }
    // mkdir(2) says EEXIST for a file (or a link to one) where the directory should be:
    // name that instead of "File exists".
    if let Some(what) = dir
        .ancestors()
        .find(|a| a.symlink_metadata().is_ok())
        .filter(|a| !a.is_dir())
    {
        return Err(io::Error::other(if what == dir {
            "not a directory".to_string()
        } else {
            format!("{} is not a directory", what.display())
        }));
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o755)
        .create(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755))
}

/// A directory of stored runs.
#[derive(Debug, Clone)]
pub struct Store {
    /// The directory.
    pub dir: PathBuf,
    /// How many runs to keep (at least 1).
    pub keep: usize,
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

    /// Deletes the oldest runs beyond `keep - 1`, then writes `run` atomically
    /// (creating the directory if needed): the store never holds more than `keep` runs,
    /// also when the writer is killed between the two steps, and a write that fails
    /// never costs more than the runs beyond `keep - 1` (the newest `keep - 1` stay
    /// however often it fails). Returns the new file's path. Errors: the write, or
    /// the sequence numbers used up (a file named `run-18446744073709551615-….json`):
    /// a number that wrapped to 0 would sort first and be deleted as the oldest.
    pub fn save(&self, run: &StoredRun) -> io::Result<PathBuf> {
        create_dir(&self.dir)?;
        self.remove_stale_temps();
        let next = match self.list()?.last().and_then(|p| sequence(p)) {
            None => 1,
            Some(n) => n.checked_add(1).ok_or_else(|| {
                io::Error::other(format!(
                    "run sequence numbers are used up at {n}: move the {PREFIX}*.json \
                     files aside"
                ))
            })?,
        };
        let name = format!(
            "{PREFIX}{next:06}-{}.json",
            crate::date::utc_stamp(run.start_s)
        );
        let path = self.dir.join(name);
        let mut bytes = serde_json::to_vec_pretty(run)?;
        bytes.push(b'\n');
        for old in self.to_prune()? {
            let _ = std::fs::remove_file(old);
        }
        kept::replace(&path, &bytes)?;
        Ok(path)
    }

    /// The runs to delete before a new one is written, so that `keep` remain with it:
    /// attempts that never reached a verdict (stopped, or started and killed) go first,
    /// oldest first, then the oldest judged runs — ten retries of a broken configuration
    /// never rotate every measured run out of the store. A file that cannot be read
    /// counts as judged (it is never preferred for deletion over a readable one).
    fn to_prune(&self) -> io::Result<Vec<PathBuf>> {
        let files = self.list()?;
        let excess = (files.len() + 1).saturating_sub(self.keep);
        let (mut unjudged, judged): (Vec<PathBuf>, Vec<PathBuf>) = files
            .into_iter()
            .partition(|p| Store::load(p).is_ok_and(|r| !r.judged()));
        unjudged.extend(judged);
        unjudged.truncate(excess);
        Ok(unjudged)
    }

    /// Removes temporary files left by a writer that was killed mid-write
    /// (`.run-….json.tmp.<pid>` whose process no longer exists).
    fn remove_stale_temps(&self) {
        crate::sys::kept::remove_stale_temps(&self.dir, &[PREFIX]);
    }

    /// Reads one stored run: a regular file of at most
    /// [`crate::sys::input::MAX_INPUT_BYTES`]. Anything else named like a run (a FIFO,
    /// a symbolic link — never followed, as for every file of the store) is an error
    /// without waiting or reading ([`crate::sys::kept::read`]), so the caller can skip
    /// it and say so.
    pub fn load(path: &Path) -> io::Result<StoredRun> {
        use crate::sys::input;
        let text = crate::sys::kept::read_text(path, input::MAX_INPUT_BYTES)
            .map_err(input::InputError::into_io)?;
        serde_json::from_str(&text).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
    }
}

/// A run of this process, started at `start_s`, that passed with nothing in it.
#[cfg(test)]
pub(crate) fn sample_run(start_s: i64) -> StoredRun {
    StoredRun {
        rtbench_version: "test".into(),
        start_s,
        duration_s: 1.0,
        sysinfo: SysInfo::read(&crate::sys::SysRoot::host()),
        config: serde_json::json!({}),
        tuning: serde_json::json!([]),
        load: String::new(),
        tests: vec![],
        verdict: Verdict::new(vec![], vec![], vec![]),
        interrupted: false,
        origin: Origin::current(),
        exit_code: Some(0),
        store_error: None,
        results_dir: None,
        hardware: None,
        conditions: Vec::new(),
        unit: None,
        attempt: None,
        unwritten: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fallback_copy_that_is_a_link_is_refused_not_written_through() {
        let d = crate::config::tempdir::Dir::new("fallback-link");
        d.file("victim", "precious\n");
        std::os::unix::fs::symlink(d.path().join("victim"), fallback_path(d.path())).unwrap();
        let e = save_fallback(d.path(), &sample_run(0)).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        assert_eq!(
            std::fs::read_to_string(d.path().join("victim")).unwrap(),
            "precious\n"
        );
    }

    #[test]
    fn used_up_sequence_numbers_are_an_error_never_a_wrap() {
        let d = crate::config::tempdir::Dir::new("store-seq-max");
        let last = format!("{PREFIX}{}-20261201T000000Z.json", u64::MAX);
        d.file(&last, "{}\n");
        let store = Store::new(d.path(), 10);
        let e = store.save(&sample_run(0)).unwrap_err();
        assert!(e.to_string().contains("used up"), "{e}");
        assert_eq!(store.list().unwrap(), vec![d.path().join(&last)]);
    }

    #[test]
    fn unit_from_cgroup_v2_and_v1() {
        assert_eq!(
            unit_of_cgroup("0::/system.slice/rtbench.service\n").as_deref(),
            Some("rtbench.service")
        );
        assert_eq!(
            unit_of_cgroup("12:pids:/\n1:name=systemd:/system.slice/rtbench.service\n").as_deref(),
            Some("rtbench.service")
        );
        assert_eq!(unit_of_cgroup("0::/\n"), None);
    }

    #[test]
    fn older_files_without_origin_or_outcome_still_load() {
        let mut v = serde_json::to_value(sample_run(0)).unwrap();
        let o = v.as_object_mut().unwrap();
        o.remove("origin");
        o.remove("exit_code");
        o["verdict"] = serde_json::json!({"pass": false, "checks": [], "problems": []});
        let run: StoredRun = serde_json::from_value(v).unwrap();
        assert_eq!(run.verdict.word(), "fail");
        assert_eq!(run.origin.boot_id, "");
        assert!(!run.accepted());
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
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn attempts_without_a_verdict_are_pruned_before_measured_runs() {
        let dir = std::env::temp_dir().join(format!("rtbench-store-st-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let store = Store::new(&dir, 3);
        let judged = store.save(&sample_run(1_000_000_000)).unwrap();
        // Ten stopped attempts (a broken configuration retried): the measured run stays.
        for i in 0..10 {
            let mut r = sample_run(1_000_000_100 + i);
            r.attempt = Some(crate::results::attempt::Attempt {
                state: crate::results::attempt::AttemptState::Stopped,
                ..crate::results::attempt::Attempt::started(1_000_000_100 + i)
            });
            store.save(&r).unwrap();
        }
        let left = store.list().unwrap();
        assert_eq!(left.len(), 3);
        assert_eq!(left[0], judged);
        // Judged runs rotate as before once nothing unjudged is left to go.
        for t in 0..3 {
            store.save(&sample_run(1_000_001_000 + t)).unwrap();
        }
        let left = store.list().unwrap();
        assert_eq!(left.len(), 3);
        assert!(left.iter().all(|p| Store::load(p).unwrap().judged()));
        assert!(!left.contains(&judged));
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
