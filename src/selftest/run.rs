//! The self-test flow, start to exit code.

use super::verdict::judge;
use super::SelftestPlan;
use crate::config::TuningMode;
use crate::error::exit;
use crate::measure::cyclic::{self, CyclicResult, Progress, ThreadSpec};
use crate::measure::runner::StopCause;
use crate::measure::stats::LiveSnapshot;
use crate::report::journal::{
    Entry, Journal, Priority, MSG_READY, MSG_RESULT, MSG_SUMMARY, MSG_TUNING,
};
use crate::report::store::{Store, StoredRun};
use crate::report::summary::Verdict;
use crate::report::summary::{TestSummary, ThreadSummary};
use crate::report::{prometheus, table};
use crate::sys::atomic;
use crate::sys::clock::Clock;
use crate::sys::info::SysInfo;
use crate::sys::SysRoot;
use crate::tune::{self, Status, TuningReport};
use std::time::{Duration, Instant};

/// Sends `STATUS=` progress and `WATCHDOG=1` to systemd while measuring.
struct NotifyProgress {
    started: Instant,
    duration: Duration,
    watchdog: bool,
}

impl Progress for NotifyProgress {
    fn report(&mut self, _threads: &[ThreadSpec], live: &[LiveSnapshot]) {
        let max_us = live.iter().map(|l| l.max_ns).max().unwrap_or(0) / 1000;
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
        for (t, l) in threads.iter().zip(live) {
            eprintln!(
                "{}",
                crate::report::text::TLine::from_live(t, l, 1000).format(false)
            );
        }
    }

    fn notice(&mut self, line: &str) {
        println!("{line}");
    }

    fn warning(&mut self, line: &str) {
        eprintln!("{line}");
    }
}

fn tuning_entries(journal: &mut Journal, report: &TuningReport) {
    for i in report
        .recovered
        .iter()
        .chain(&report.items)
        .chain(&report.rolled_back)
    {
        let priority = match i.status {
            Status::Failed => Priority::Error,
            Status::Deviation | Status::Unsupported => Priority::Warning,
            Status::Ok | Status::NotApplicable => Priority::Info,
        };
        let mut e = Entry::new(
            MSG_TUNING,
            priority,
            format!("tuning {}: {} ({})", i.item, i.status.as_str(), i.detail),
        )
        .field("RTBENCH_TUNE_ITEM", &i.item)
        .field("RTBENCH_TUNE_STATUS", i.status.as_str())
        .field("RTBENCH_TUNE_CHANGED", i.changed as u8);
        if let Some(p) = &i.path {
            e = e.field("RTBENCH_TUNE_PATH", p);
        }
        if let Some(n) = i.errno {
            e = e.field("RTBENCH_TUNE_ERRNO", n);
        }
        journal.send(&e);
    }
}

fn thread_entry(test: &str, th: &ThreadSummary, verdict: &Verdict) -> Entry {
    let checks: Vec<_> = verdict.checks_for(test, th.thread).collect();
    let ok = checks.iter().all(|c| c.pass);
    let word = if checks.is_empty() {
        "none"
    } else if ok {
        "pass"
    } else {
        "fail"
    };
    let cpu = th.cpu.map_or_else(|| "-".to_string(), |c| c.to_string());
    let limit = checks.iter().find(|c| c.what == "max").map(|c| c.limit);
    let mut e = Entry::new(
        MSG_RESULT,
        if ok { Priority::Info } else { Priority::Warning },
        format!(
            "{test} CPU {cpu}: max {} us, p99.9 {} us, p99 {} us, avg {} us, {} overruns, {} samples: {word}",
            th.max_ns / 1000,
            th.p999_ns / 1000,
            th.p99_ns / 1000,
            th.avg_ns / 1000,
            th.overruns,
            th.count
        ),
    )
    .field("RTBENCH_TEST", test)
    .field("RTBENCH_CPU", &cpu)
    .field("RTBENCH_THREAD", th.thread)
    .field("RTBENCH_SAMPLES", th.count)
    .field("RTBENCH_MIN_NS", th.min_ns)
    .field("RTBENCH_AVG_NS", th.avg_ns)
    .field("RTBENCH_P50_NS", th.p50_ns)
    .field("RTBENCH_P99_NS", th.p99_ns)
    .field("RTBENCH_P999_NS", th.p999_ns)
    .field("RTBENCH_P9999_NS", th.p9999_ns)
    .field("RTBENCH_MAX_NS", th.max_ns)
    .field("RTBENCH_OVERRUNS", th.overruns);
    if let Some(l) = limit {
        e = e.field("RTBENCH_LIMIT_NS", l);
    }
    e.field("RTBENCH_VERDICT", word)
}

fn summary_entry(run: &StoredRun, stop: StopCause, results_file: &str) -> Entry {
    let worst = run
        .tests
        .iter()
        .flat_map(|t| t.threads.iter())
        .map(|t| t.max_ns)
        .max()
        .unwrap_or(0);
    let failed: Vec<String> = run
        .verdict
        .checks
        .iter()
        .filter(|c| !c.pass)
        .map(|c| {
            format!(
                "{} cpu {} {} {} > {}",
                c.test,
                c.cpu.map_or_else(|| "-".into(), |x: usize| x.to_string()),
                c.what,
                c.value,
                c.limit
            )
        })
        .chain(run.verdict.problems.iter().cloned())
        .collect();
    let cpus: usize = run.tests.iter().map(|t| t.threads.len()).sum();
    let mut msg = format!(
        "rtbench self-test {}: {} on {cpus} threads for {:.0} s, worst max {} us",
        run.verdict.word().to_uppercase(),
        run.tests
            .iter()
            .map(|t| t.test.as_str())
            .collect::<Vec<_>>()
            .join("+"),
        run.duration_s,
        worst / 1000
    );
    if stop.interrupted() {
        msg.push_str(" (interrupted)");
    }
    if run.verdict.checks.is_empty() {
        msg.push_str(" (no [limits] configured: measured, nothing judged)");
    }
    if !failed.is_empty() {
        msg.push_str(&format!("; failed: {}", failed.join("; ")));
    }
    Entry::new(
        MSG_SUMMARY,
        if run.verdict.pass {
            Priority::Info
        } else {
            Priority::Error
        },
        msg,
    )
    .field("RTBENCH_VERDICT", run.verdict.word())
    .field(
        "RTBENCH_TESTS",
        run.tests
            .iter()
            .map(|t| t.test.as_str())
            .collect::<Vec<_>>()
            .join(","),
    )
    .field("RTBENCH_THREADS", cpus)
    .field("RTBENCH_DURATION_S", format!("{:.1}", run.duration_s))
    .field("RTBENCH_MAX_NS", worst)
    .field("RTBENCH_FAILED_CHECKS", failed.len())
    .field("RTBENCH_INTERRUPTED", stop.interrupted() as u8)
    .field("RTBENCH_KERNEL", &run.sysinfo.release)
    .field("RTBENCH_PREEMPT_RT", run.sysinfo.realtime as u8)
    .field(
        "RTBENCH_LOAD",
        if run.load.is_empty() {
            "none"
        } else {
            &run.load
        },
    )
    .field("RTBENCH_RESULTS_FILE", results_file)
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
        tuning_entries(journal, r);
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
        spec.report_every = Some(spec.report_every.map_or(half, |r| r.min(half)));
    }
    let mut progress = NotifyProgress {
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
    if result.stop.interrupted() {
        // A cut-short run proves nothing: it cannot pass.
        verdict.problems.push(
            format!("interrupted ({:?}) after {duration_s:.1} s", result.stop).to_lowercase(),
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
        interrupted: result.stop.interrupted(),
    };
    for t in &run.tests {
        for th in &t.threads {
            journal.send(&thread_entry(&t.test, th, &run.verdict));
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
        if let Err(e) = atomic::write(p, prometheus::render(&run).as_bytes()) {
            journal.send(&Entry::new(
                MSG_SUMMARY,
                Priority::Warning,
                format!("Prometheus textfile {} not written: {e}", p.display()),
            ));
        }
    }
    journal.send(&summary_entry(&run, result.stop, &results_file));
    print!("{}", table::render(&run));
    let _ = sd_notify::notify(
        false,
        &[sd_notify::NotifyState::Status(&format!(
            "self-test {}",
            run.verdict.word()
        ))],
    );
    match result.stop {
        StopCause::Sigint => exit::INTERRUPTED,
        StopCause::Sigterm => 128 + libc::SIGTERM,
        _ if run.verdict.pass => exit::OK,
        _ => exit::FAIL,
    }
}
