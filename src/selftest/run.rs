//! The self-test flow, start to exit code.

use super::verdict::judge;
use super::SelftestPlan;
use crate::config::TuningMode;
use crate::error::exit;
use crate::measure::cyclic::{self, CyclicResult};
use crate::measure::harness::Progress;
use crate::measure::stats::LiveSnapshot;
use crate::measure::ThreadSpec;
use crate::report::journal::{
    self as entries, Entry, Journal, Priority, MSG_READY, MSG_SUMMARY, MSG_TUNING,
};
use crate::report::output::{self, Output};
use crate::report::prometheus::Prometheus;
use crate::report::store::{Store, StoredRun};
use crate::report::summary::{TestSummary, ThreadSummary};
use crate::report::table::Table;
use crate::report::text::LiveLines;
use crate::report::Live;
use crate::sys::clock::{Clock, NS_PER_US};
use crate::sys::info::SysInfo;
use crate::sys::SysRoot;
use crate::tune::{self, Status};
use std::time::{Duration, Instant};

/// Sends `STATUS=` progress and `WATCHDOG=1` to systemd while measuring; notices,
/// warnings and the `SIGUSR1` status (`T:` lines) go to `out`.
struct NotifyProgress {
    started: Instant,
    duration: Duration,
    watchdog: bool,
    out: Output,
}

impl Progress for NotifyProgress {
    fn report(&mut self, _threads: &[ThreadSpec], live: &[LiveSnapshot]) {
        let max_us = live.iter().map(|l| l.max_ns).max().unwrap_or(0) / NS_PER_US;
        let status = format!(
            "measuring: {}/{} s, max {max_us} us so far",
            self.started.elapsed().as_secs(),
            self.duration.as_secs()
        );
        let mut states = vec![sd_notify::NotifyState::Status(&status)];
        if self.watchdog {
            states.push(sd_notify::NotifyState::Watchdog);
        }
        let _ = sd_notify::notify(false, &states);
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

/// Runs the self-test `plan` (already validated) and returns the exit code: 0 pass,
/// 1 fail, 3 environment refused, 130/143 interrupted.
pub fn execute(plan: &SelftestPlan, root: &SysRoot, journal: &mut Journal) -> i32 {
    let sysinfo = SysInfo::read(root);
    let mut problems = Vec::new();

    // 1. Tuning.
    let tuning = match plan.mode {
        TuningMode::Off => None,
        TuningMode::Check => Some(tune::check(root, &plan.tuning)),
        TuningMode::Apply => {
            match tune::apply(root, &plan.tuning, &tune::ApplyOptions::default()) {
                Ok(r) => Some(r),
                Err(e) => {
                    journal.send(
                        &Entry::new(
                            MSG_TUNING,
                            Priority::Error,
                            format!("tuning not applied: {e}"),
                        )
                        .field("RTBENCH_TUNE_STATUS", "error"),
                    );
                    return e.exit_code();
                }
            }
        }
    };
    if let Some(r) = &tuning {
        for i in r.recovered.iter().chain(&r.items).chain(&r.rolled_back) {
            journal.send(&entries::tuning_item(i));
        }
        if r.exit_code() != exit::OK {
            problems.push(format!(
                "tuning {}: {} failed, {} deviations",
                match plan.mode {
                    TuningMode::Check => "check",
                    _ => "apply",
                },
                r.count(Status::Failed),
                r.count(Status::Deviation)
            ));
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
    let _ = sd_notify::notify(
        false,
        &[
            sd_notify::NotifyState::Ready,
            sd_notify::NotifyState::Status(&ready_status),
        ],
    );
    journal.send(
        &Entry::new(MSG_READY, Priority::Info, format!("READY: {ready_status}"))
            .field(
                "RTBENCH_TUNING_MODE",
                format!("{:?}", plan.mode).to_lowercase(),
            )
            .field("RTBENCH_TUNE_CHANGED", changed),
    );

    // 3. Measure.
    let mut usec = 0u64;
    let watchdog = sd_notify::watchdog_enabled(false, &mut usec);
    let mut spec = plan.cyclic.clone();
    if watchdog && usec > 0 {
        let half = Duration::from_micros(usec / 2).max(Duration::from_millis(100));
        spec.control.report_every = Some(spec.control.report_every.map_or(half, |r| r.min(half)));
    }
    let out = Output::new(None);
    let mut progress = NotifyProgress {
        out,
        started: Instant::now(),
        duration: plan.duration,
        watchdog,
    };
    let mut load = match &plan.load {
        Some(l) => match crate::load::start(l) {
            Ok(r) => Some(r),
            Err(e) => {
                journal.send(
                    &Entry::new(
                        MSG_SUMMARY,
                        Priority::Error,
                        format!("rtbench self-test ERROR: load not started: {e}"),
                    )
                    .field("RTBENCH_VERDICT", "error"),
                );
                return e.exit_code();
            }
        },
        None => None,
    };
    let start_s = Clock::wall_secs();
    let t0 = Instant::now();
    let measured = cyclic::run(&spec, root, &mut progress);
    if let Some(l) = load.as_mut() {
        for problem in l.stop() {
            problems.push(format!("load: {}", problem.trim_start_matches("# ")));
        }
    }
    let result: CyclicResult = match measured {
        Ok(r) => r,
        Err(e) => {
            let msg = format!("rtbench self-test ERROR: measurement refused: {e}");
            journal.send(
                &Entry::new(MSG_SUMMARY, Priority::Error, msg).field("RTBENCH_VERDICT", "error"),
            );
            return e.exit_code();
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
    if result.end.stop.interrupted() {
        // A cut-short run proves nothing: it cannot pass.
        verdict.problems.push(
            format!(
                "interrupted ({:?}) after {duration_s:.1} s",
                result.end.stop
            )
            .to_lowercase(),
        );
    }
    verdict.pass = verdict.pass && verdict.problems.is_empty();

    // 5. Outputs: journal first (it must reach the operator even if the disk is full).
    let run = StoredRun {
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
        interrupted: result.end.stop.interrupted(),
    };
    for t in &run.tests {
        for th in &t.threads {
            journal.send(&entries::thread_result(&t.test, th, &run.verdict));
        }
    }
    let store = Store::new(&plan.results_dir, plan.keep);
    let results_file = match store.save(&run) {
        Ok(p) => p.display().to_string(),
        Err(e) => {
            journal.send(&Entry::new(
                MSG_SUMMARY,
                Priority::Warning,
                format!(
                    "results not stored in {}: {e}; earlier results are untouched",
                    plan.results_dir.display()
                ),
            ));
            String::new()
        }
    };
    if let Some(p) = &plan.prometheus {
        if let Err(e) = output::write_file(p, &Prometheus, &run) {
            journal.send(&Entry::new(
                MSG_SUMMARY,
                Priority::Warning,
                format!("Prometheus textfile {} not written: {e}", p.display()),
            ));
        }
    }
    journal.send(&entries::summary(&run, result.end.stop, &results_file));
    let _ = out.text(&Table, &run);
    let _ = sd_notify::notify(
        false,
        &[sd_notify::NotifyState::Status(&format!(
            "self-test {}",
            run.verdict.word()
        ))],
    );
    match result.end.stop {
        s if s.interrupted() => s.exit_code(),
        _ if run.verdict.pass => exit::OK,
        _ => exit::FAIL,
    }
}
