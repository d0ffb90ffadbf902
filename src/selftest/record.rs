//! This self-test attempt's one record ([`crate::results::attempt`]): written to the
//! results store when the attempt starts (or, when the store cannot take it, to this
//! boot's fallback copy, with why — the same rule as every result), and rewritten in
//! the same place when the attempt stops before a verdict ([`Record::stop`]) or ends
//! with one ([`Record::save`]). A record that cannot be written anywhere is not an
//! error here: the attempt goes on, and its outputs say what was not written.

use super::SelftestPlan;
use crate::error::ConfigError;
use crate::results::attempt::{Attempt, AttemptState};
use crate::results::store::{self, Origin, Store, StoredRun};
use crate::results::summary::Verdict;
use crate::sys::clock::Clock;
use crate::sys::info::SysInfo;
use crate::sys::SysRoot;
use std::io;
use std::path::{Path, PathBuf};

/// Where this attempt's record is kept and what it says so far.
#[derive(Debug)]
pub struct Record {
    store: Store,
    fallback_dir: PathBuf,
    /// The store's file of this attempt, once the store took it.
    file: Option<PathBuf>,
    /// The record as last written.
    run: StoredRun,
    /// `[output] prometheus`: a stopped attempt rewrites it too, so that the textfile
    /// never keeps an older run's pass.
    prometheus: Option<PathBuf>,
}

impl Record {
    /// Writes the started record of the attempt `plan` describes (its unit label
    /// already merged with the environment's), and the Prometheus textfile of it.
    pub fn start(plan: &SelftestPlan, root: &SysRoot) -> Record {
        let run = started_run(
            root,
            serde_json::json!({ "path": plan.config_path, "text": plan.config_text }),
            &plan.unit,
            plan.load_label(),
        );
        let mut r = Record::begin(&plan.results_dir, plan.keep, &plan.fallback_dir, run);
        r.prometheus = plan.prometheus.clone();
        // The textfile says so too: an attempt killed before its verdict (SIGKILL, a
        // power loss) never leaves an older run's pass for the fleet to read.
        if let Some(p) = &r.prometheus {
            let _ = textfile(p, &r.run);
        }
        r
    }

    /// The record of an attempt whose configuration file was found but refused by
    /// validation (`err`): kept in the `[output]` directories the file names, when it
    /// names them as absolute paths in a form TOML can read, else in the defaults; the
    /// unit's label from the environment or the file. `None` when the file could not be
    /// read at all (no attempt: nothing was found).
    pub fn config_refused(
        explicit: Option<&Path>,
        root: &SysRoot,
        err: &ConfigError,
    ) -> Option<Record> {
        if matches!(err.place, crate::error::ConfigPlace::Unreadable) {
            return None;
        }
        let path = explicit.map_or_else(
            || PathBuf::from(crate::config::DEFAULT_PATH),
            Path::to_path_buf,
        );
        let text = crate::sys::input::read_bounded(&path, crate::sys::input::MAX_CONFIG_BYTES)
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .unwrap_or_default();
        let table: toml::Table = toml::from_str(&text).unwrap_or_default();
        let dir = |key: &str, default: &str| -> PathBuf {
            table
                .get("output")
                .and_then(|o| o.get(key))
                .and_then(|v| v.as_str())
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .unwrap_or_else(|| PathBuf::from(default))
        };
        let file_label = table
            .get("unit")
            .and_then(|u| u.get("label"))
            .and_then(|v| v.as_str())
            .filter(|v| crate::config::unit::valid_value(v))
            .map(str::to_string);
        let unit = crate::config::unit::UnitSection {
            label: file_label,
            ..Default::default()
        };
        let unit = unit.with_env(|k| std::env::var(k).ok()).unwrap_or(unit);
        let run = started_run(
            root,
            serde_json::json!({ "path": path.display().to_string(), "text": text }),
            &unit,
            String::new(),
        );
        let mut r = Record::begin(
            &dir("results_dir", crate::config::selftest::DEFAULT_RESULTS_DIR),
            crate::config::selftest::DEFAULT_KEEP,
            &dir(
                "fallback_dir",
                crate::config::selftest::DEFAULT_FALLBACK_DIR,
            ),
            run,
        );
        r.prometheus = Some(dir("prometheus", "")).filter(|p| p.is_absolute());
        r.stop("configuration", &err.to_string(), crate::error::exit::USAGE);
        Some(r)
    }

    fn begin(results_dir: &Path, keep: usize, fallback_dir: &Path, run: StoredRun) -> Record {
        let mut r = Record {
            store: Store::new(results_dir, keep),
            fallback_dir: fallback_dir.to_path_buf(),
            file: None,
            run,
            prometheus: None,
        };
        let run = r.run.clone();
        r.write_or_warn(run);
        r
    }

    /// [`Record::write`], saying on standard error when neither the store nor the
    /// fallback directory took the record: `rtbench report` cannot show this attempt,
    /// and may show an older run in its place.
    fn write_or_warn(&mut self, run: StoredRun) {
        if let Err(e) = self.write(run) {
            crate::report::output::Output::new(None).warn(&format!(
                "rtbench: warning: this attempt's record was written nowhere ({}, then the fallback {}: {e}): rtbench report cannot show it and may show an older run",
                self.store.dir.display(),
                self.fallback_dir.display()
            ));
        }
    }

    /// When the attempt started, seconds since the epoch.
    pub fn started_s(&self) -> i64 {
        self.run.attempt.as_ref().map_or(0, |a| a.started_s)
    }

    /// The attempt of a run that reached its verdict, for [`Record::save`].
    pub fn judged(&self) -> Attempt {
        Attempt {
            state: AttemptState::Judged,
            ..Attempt::started(self.started_s())
        }
    }

    /// Marks the attempt stopped before a verdict at `stage` (`configuration`,
    /// `tuning`, `load`, a test) because of `reason`, exit code `code`; the Prometheus
    /// textfile, when configured, says the same (best effort: the journal's `aborted`
    /// entry is the record of last resort).
    pub fn stop(&mut self, stage: &str, reason: &str, code: i32) {
        let attempt = Attempt {
            state: AttemptState::Stopped,
            stage: Some(stage.to_string()),
            reason: Some(crate::error::one_line(reason).into_owned()),
            ..Attempt::started(self.started_s())
        };
        let mut run = self.run.clone();
        run.exit_code = Some(code);
        run.verdict = Verdict::new(
            vec![],
            attempt.no_verdict_line(Some(code)).into_iter().collect(),
            vec![],
        );
        run.attempt = Some(attempt);
        self.write_or_warn(run.clone());
        if let Some(p) = &self.prometheus {
            let _ = textfile(p, &run);
        }
    }

    /// Replaces the record with the judged `run`: in the store's file of this attempt
    /// (or a new one), the fallback copy cleared. Errors: the store's; the caller keeps
    /// the run in the fallback copy ([`Record::keep_fallback`]).
    pub fn save(&mut self, run: &StoredRun) -> io::Result<PathBuf> {
        let saved = match &self.file {
            Some(f) => replace(f, run).map(|()| f.clone()),
            None => self.store.save(run),
        };
        if let Ok(p) = &saved {
            store::clear_fallback(&self.fallback_dir);
            self.file = Some(p.clone());
        } else if let Some(f) = self.file.take() {
            // The started record must not stand for this attempt beside its copy.
            let _ = std::fs::remove_file(f);
        }
        self.run = run.clone();
        saved
    }

    /// Keeps `run` (its `store_error` set) as this boot's fallback copy.
    pub fn keep_fallback(&mut self, run: &StoredRun) -> io::Result<PathBuf> {
        self.run = run.clone();
        store::save_fallback(&self.fallback_dir, run)
    }

    /// Writes `run` where this attempt's record lives: the store (its file of this
    /// attempt, or a new one), else the fallback copy with why.
    fn write(&mut self, mut run: StoredRun) -> io::Result<PathBuf> {
        match self.save(&run) {
            Ok(p) => Ok(p),
            Err(e) => {
                run.store_error = Some(format!("{}: {e}", self.store.dir.display()));
                run.results_dir = Some(self.store.dir.display().to_string());
                self.keep_fallback(&run)
            }
        }
    }
}

/// Rewrites the stored file `path` with `run` (atomically, never through a link).
fn replace(path: &Path, run: &StoredRun) -> io::Result<()> {
    let mut bytes = serde_json::to_vec_pretty(run)?;
    bytes.push(b'\n');
    crate::sys::kept::replace(path, &bytes)
}

/// The record of an attempt that started now, before anything ran.
fn started_run(
    root: &SysRoot,
    config: serde_json::Value,
    unit: &crate::config::unit::UnitSection,
    load: String,
) -> StoredRun {
    let now = Clock::wall_secs();
    let attempt = Attempt::started(now);
    StoredRun {
        rtbench_version: env!("CARGO_PKG_VERSION").into(),
        start_s: now,
        duration_s: 0.0,
        sysinfo: SysInfo::read(root),
        config,
        tuning: serde_json::Value::Null,
        load,
        tests: Vec::new(),
        verdict: Verdict::new(
            vec![],
            attempt.no_verdict_line(None).into_iter().collect(),
            vec![],
        ),
        interrupted: false,
        origin: Origin::current(),
        exit_code: None,
        store_error: None,
        results_dir: None,
        hardware: None,
        conditions: Vec::new(),
        unit: crate::results::unit::UnitRecord::gather(root, unit),
        attempt: Some(attempt),
        unwritten: Vec::new(),
    }
}

/// Writes the Prometheus textfile `p` of `run`; the error's words when it could not.
pub(super) fn textfile(p: &Path, run: &StoredRun) -> Result<(), String> {
    let dir = p.parent().unwrap_or(Path::new("/"));
    if !dir.is_dir() {
        return Err(format!(
            "directory {} does not exist (is node_exporter's textfile collector installed?)",
            dir.display()
        ));
    }
    if p.is_dir() {
        return Err("it is a directory; expected a file name such as rtbench.prom".into());
    }
    // A textfile written at every boot: the temporary files of writes cut short by
    // a power loss in earlier boots go first (crate::sys::kept).
    if let Some(name) = p.file_name().and_then(|n| n.to_str()) {
        crate::sys::kept::remove_stale_temps(dir, &[name]);
    }
    crate::report::output::keep_file(p, &crate::report::prometheus::Prometheus, run)
        .map_err(|e| e.to_string())
}
