//! The self-test flow, start to exit code.

use super::verdict::judge;
use super::SelftestPlan;
use crate::config::TuningMode;
use crate::error::exit;
use crate::measure::cyclic::{self, CyclicResult};
use crate::measure::harness::Progress;
use crate::measure::stats::LiveSnapshot;
use crate::measure::ThreadSpec;
use crate::report::journal::{self as entries, Journal, OutputKind, Storage};
use crate::report::output::{self, Output};
use crate::report::prometheus::Prometheus;
use crate::report::store::{self, Origin, Store, StoredRun};
use crate::report::summary::{Outcome, TestSummary, ThreadSummary, TuningFinding, Verdict};
use crate::report::table::Table;
use crate::report::text::LiveLines;
use crate::report::Live;
use crate::sys::clock::Clock;
use crate::sys::info::SysInfo;
use crate::sys::notify::Notifier;
use crate::sys::SysRoot;
use crate::tune::{self, Status, TuningReport};
use std::time::{Duration, Instant};

/// sd_notify for the whole run: sends when a service manager listens, and logs the
/// first notification that cannot be delivered (one line on standard error, which a
/// unit's journal receives).
struct Notify {
    notifier: Option<Notifier>,
    out: Output,
}

impl Notify {
    fn send(&mut self, lines: &[&str]) {
        if let Some(line) = self.notifier.as_mut().and_then(|n| n.send(lines)) {
            self.out.warn(&format!("rtbench: warning: {line}"));
        }
    }
}

/// Sends `STATUS=` progress and `WATCHDOG=1` to systemd while measuring; notices,
/// warnings and the `SIGUSR1` status (`T:` lines) go to `out`.
struct NotifyProgress<'a> {
    started: Instant,
    duration: Duration,
    watchdog: bool,
    notify: &'a mut Notify,
    out: Output,
}

impl Progress for NotifyProgress<'_> {
    fn report(&mut self, _threads: &[ThreadSpec], live: &[LiveSnapshot]) {
        let max_ns = live.iter().map(|l| l.max_ns).max().unwrap_or(0);
        let status = format!(
            "STATUS=measuring: {}/{} s, max {} so far",
            self.started.elapsed().as_secs(),
            self.duration.as_secs(),
            crate::report::summary::us(max_ns)
        );
        let mut lines = vec![status.as_str()];
        if self.watchdog {
            lines.push("WATCHDOG=1");
        }
        self.notify.send(&lines);
    }

    fn status(&mut self, threads: &[ThreadSpec], live: &[LiveSnapshot]) {
        let l = Live {
            threads,
            live,
            nsecs: false,
        };
        let _ = self.out.to_stderr(&LiveLines, &l);
    }

    fn notice(&mut self, line: &str) {
        self.out.line(line);
    }

    fn warning(&mut self, line: &str) {
        self.out.warn(line);
    }
}

/// The deviations and failures of a tuning report, by item.
fn findings(r: &TuningReport) -> Vec<TuningFinding> {
    r.recovered
        .iter()
        .chain(&r.items)
        .chain(&r.rolled_back)
        .filter(|i| matches!(i.status, Status::Deviation | Status::Failed))
        .map(|i| TuningFinding {
            item: i.item.clone(),
            status: i.status.as_str().to_string(),
            expected: i.expected.clone(),
            found: i.found.clone(),
            detail: i.detail.clone(),
        })
        .collect()
}

/// The exit code of a finished run: the signal's for an interrupted one, 3 when the
/// system refused a tuning write or guard (the run measured the untuned system), 0 for
/// a pass (and for an unjudged run when `allow_unjudged`), else 1.
fn exit_code(
    verdict: &Verdict,
    interrupted: Option<i32>,
    allow_unjudged: bool,
    tuning_refused: bool,
) -> i32 {
    match (interrupted, verdict.outcome) {
        (Some(code), _) => code,
        _ if tuning_refused => exit::ENV,
        (None, Outcome::Pass) => exit::OK,
        (None, Outcome::Unjudged) if allow_unjudged => exit::OK,
        _ => exit::FAIL,
    }
}

/// Runs the self-test `plan` (already validated) and returns the exit code: 0 pass
/// (or unjudged with `allow_unjudged`), 1 fail or unjudged, 3 environment refused (a
/// tuning write or guard, the load, the measurement's scheduling, locking or threads —
/// also after READY), 130/143 interrupted.
pub fn execute(plan: &SelftestPlan, root: &SysRoot, journal: &mut Journal) -> i32 {
    let sysinfo = SysInfo::read(root);
    let origin = Origin::current();
    let out = Output::new(None);
    let mut notify = Notify {
        notifier: Notifier::from_env(),
        out,
    };
    let mut problems = Vec::new();
    for s in &plan.sharing {
        journal.send(&entries::placement(s));
    }

    // 1. Tuning.
    let tuning = match plan.mode {
        TuningMode::Off => None,
        TuningMode::Check => Some(tune::check(root, &plan.tuning)),
        TuningMode::Apply => {
            match tune::apply(root, &plan.tuning, &tune::ApplyOptions::default()) {
                Ok(r) => Some(r),
                Err(e) => {
                    let code = e.exit_code();
                    journal.send(&aborted("tuning", &e));
                    notify.send(&["STATUS=self-test stopped: tuning not applied"]);
                    return code;
                }
            }
        }
    };
    let mut tuning_findings = Vec::new();
    // The kernel refused a tuning write (or a guard refused an item): the run goes on,
    // to measure the untuned system, but cannot pass and exits 3.
    let tuning_refused = tuning.as_ref().is_some_and(|r| r.exit_code() == exit::ENV);
    if let Some(r) = &tuning {
        for i in r.recovered.iter().chain(&r.items).chain(&r.rolled_back) {
            journal.send(&entries::tuning_item(i));
        }
        tuning_findings = findings(r);
        if r.exit_code() != exit::OK && tuning_findings.is_empty() {
            problems.push(format!("tuning {}: not as configured", plan.mode.as_str()));
        }
    }

    // 2. READY: units ordered After=rtbench.service start on a tuned system now.
    let cpus = plan
        .cyclic
        .threads
        .iter()
        .filter_map(|t| t.cpu)
        .collect::<crate::cpuset::CpuSet>();
    let measuring = format!(
        "measuring cyclic on CPUs {} for {}",
        cpus,
        crate::duration::format(plan.duration)
    );
    let changed = tuning
        .as_ref()
        .map_or(0, |r| r.items.iter().filter(|i| i.changed).count());
    let ready_status = format!("tuned ({changed} changes); {measuring}");
    notify.send(&["READY=1", &format!("STATUS={ready_status}")]);
    journal.send(&entries::ready(plan.mode.as_str(), changed, &ready_status));

    // 3. Measure.
    let mut usec = 0u64;
    let watchdog = sd_notify::watchdog_enabled(false, &mut usec);
    let mut spec = plan.cyclic.clone();
    if watchdog && usec > 0 {
        let half = Duration::from_micros(usec / 2).max(Duration::from_millis(100));
        spec.control.report_every = Some(spec.control.report_every.map_or(half, |r| r.min(half)));
    }
    let mut load = match &plan.load {
        Some(l) => match crate::load::start(l) {
            Ok(r) => Some(r),
            Err(e) => {
                let code = e.exit_code();
                journal.send(&aborted("load", &e));
                notify.send(&["STATUS=self-test stopped: load not started"]);
                return code;
            }
        },
        None => None,
    };
    let start_s = Clock::wall_secs();
    let t0 = Instant::now();
    let measured = {
        let mut progress = NotifyProgress {
            out,
            started: Instant::now(),
            duration: plan.duration,
            watchdog,
            notify: &mut notify,
        };
        cyclic::run(&spec, root, &mut progress)
    };
    if let Some(l) = load.as_mut() {
        for problem in l.stop() {
            problems.push(format!("load: {}", problem.trim_start_matches("# ")));
        }
    }
    let result: CyclicResult = match measured {
        Ok(r) => r,
        Err(e) => {
            let code = e.exit_code();
            journal.send(&aborted("measurement", &e));
            notify.send(&["STATUS=self-test stopped: measurement refused"]);
            return code;
        }
    };
    let duration_s = t0.elapsed().as_secs_f64();

    // 4. Judge.
    let tests = vec![TestSummary {
        test: "cyclic".into(),
        threads: result
            .threads
            .iter()
            .map(ThreadSummary::from_cyclic)
            .collect(),
    }];
    let mut verdict = judge(&tests, &plan.limits);
    verdict.problems.extend(problems);
    verdict.tuning = tuning_findings;
    let interrupted = result.end.stop.interrupted();
    if interrupted {
        // A cut-short run proves nothing: it cannot pass.
        verdict.problems.push(
            format!(
                "interrupted ({:?}) after {duration_s:.1} s",
                result.end.stop
            )
            .to_lowercase(),
        );
    }
    if plan.config_path.is_empty() {
        for u in verdict.unjudged.iter_mut() {
            if u.starts_with("no [limits]") {
                *u = format!("no configuration file at {}: {u}", plan.config_shown);
            }
        }
    }
    verdict.settle();
    let code = exit_code(
        &verdict,
        interrupted.then(|| result.end.stop.exit_code()),
        plan.allow_unjudged,
        tuning_refused,
    );

    // 5. Outputs: journal first (it must reach the operator even if the disk is full).
    let mut run = StoredRun {
        rtbench_version: env!("CARGO_PKG_VERSION").into(),
        start_s,
        duration_s,
        sysinfo,
        config: serde_json::json!({ "path": plan.config_path, "text": plan.config_text }),
        tuning: tuning.as_ref().map_or(serde_json::Value::Null, |r| {
            serde_json::to_value(r).unwrap_or_default()
        }),
        load: plan.load_label.clone(),
        tests,
        verdict,
        interrupted,
        origin,
        exit_code: Some(code),
        store_error: None,
    };
    for t in &run.tests {
        for th in &t.threads {
            journal.send(&entries::thread_result(&t.test, th, &run.verdict));
        }
    }
    let stored = Store::new(&plan.results_dir, plan.keep).save(&run);
    let fallback = match &stored {
        Ok(_) => {
            store::clear_fallback(&plan.fallback_dir);
            None
        }
        Err(e) => {
            let why = e.to_string();
            journal.send(&entries::output_not_written(
                OutputKind::Results,
                &plan.results_dir,
                &why,
            ));
            run.store_error = Some(format!("{}: {why}", plan.results_dir.display()));
            match store::save_fallback(&plan.fallback_dir, &run) {
                Ok(p) => Some(p),
                Err(e2) => {
                    journal.send(&entries::output_not_written(
                        OutputKind::Fallback,
                        &plan.fallback_dir,
                        &e2.to_string(),
                    ));
                    None
                }
            }
        }
    };
    if let Some(p) = &plan.prometheus {
        let dir = p.parent().unwrap_or(std::path::Path::new("/"));
        let written = if dir.is_dir() {
            output::write_file(p, &Prometheus, &run).map_err(|e| e.to_string())
        } else {
            Err(format!(
                "directory {} does not exist (is node_exporter's textfile collector installed?)",
                dir.display()
            ))
        };
        if let Err(why) = written {
            journal.send(&entries::output_not_written(
                OutputKind::Prometheus,
                p,
                &why,
            ));
        }
    }
    let storage = match &stored {
        Ok(p) => Storage::Stored(p),
        Err(_) => Storage::NotStored(fallback.as_deref()),
    };
    journal.send(&entries::summary(&run, result.end.stop, storage));
    let _ = out.text(&Table, &run);
    notify.send(&[&format!("STATUS=self-test {}", run.verdict.word())]);
    code
}

/// The entry of a self-test stopped before a verdict by `e` at `stage`, with the
/// errno the call returned and what refused as fields (`RTBENCH_ERRNO`,
/// `RTBENCH_CAUSE`, when known).
fn aborted(stage: &str, e: &crate::error::Error) -> crate::report::journal::Entry {
    let mut entry = entries::aborted(stage, &e.to_string(), e.exit_code());
    if let Some(n) = e.errno() {
        entry = entry.field("RTBENCH_ERRNO", n);
    }
    if let Some(c) = e.cause_name() {
        entry = entry.field("RTBENCH_CAUSE", c);
    }
    entry
}
