//! The self-test flow, start to exit code.

use super::SelftestPlan;
use super::TestPlan;
use crate::config::TuningMode;
use crate::error::exit;
use crate::measure::cyclic;
use crate::measure::harness::{Progress, StopCause};
use crate::measure::pair;
use crate::measure::stats::LiveSnapshot;
use crate::measure::ThreadSpec;
use crate::report::journal::{self as entries, Journal, OutputKind, Storage};
use crate::report::output::{self, Output};
use crate::report::prometheus::Prometheus;
use crate::report::table::Table;
use crate::report::text::LiveLines;
use crate::report::Live;
use crate::results::store::{self, Origin, Store, StoredRun};
use crate::results::summary::{Outcome, TestSummary, ThreadSummary, TuningFinding, Verdict};
use crate::results::verdict::judge;
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
    test: &'static str,
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
            "STATUS=measuring {}: {}/{} s, max {} so far",
            self.test,
            self.started.elapsed().as_secs(),
            self.duration.as_secs(),
            crate::results::summary::us(max_ns)
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

/// The exit code of a finished run: the signal's for an interrupted one, `refused`'s
/// when the system refused a tuning write or guard (the run measured the untuned
/// system) or a test (the others still ran), 0 for a pass (and for an unjudged run
/// when `allow_unjudged`), else 1.
fn exit_code(
    verdict: &Verdict,
    interrupted: Option<i32>,
    allow_unjudged: bool,
    refused: Option<i32>,
) -> i32 {
    match (interrupted, verdict.outcome) {
        (Some(code), _) => code,
        _ if refused.is_some() => refused.unwrap_or(exit::ENV),
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
    let measuring = if plan.tests.is_empty() {
        "measuring nothing: every test is disabled".to_string()
    } else {
        format!(
            "measuring {}",
            plan.tests
                .iter()
                .map(super::TestPlan::describe)
                .collect::<Vec<_>>()
                .join(", then ")
        )
    };
    let changed = tuning
        .as_ref()
        .map_or(0, |r| r.items.iter().filter(|i| i.changed).count());
    let ready_status = format!("tuned ({changed} changes); {measuring}");
    notify.send(&["READY=1", &format!("STATUS={ready_status}")]);
    journal.send(&entries::ready(plan.mode.as_str(), changed, &ready_status));

    // 3. Measure: every test, one after the other, under the same load.
    let mut usec = 0u64;
    let watchdog = sd_notify::watchdog_enabled(false, &mut usec);
    let mut specs = plan.tests.clone();
    if watchdog && usec > 0 {
        let half = Duration::from_micros(usec / 2).max(Duration::from_millis(100));
        for t in &mut specs {
            let c = t.control_mut();
            c.report_every = Some(c.report_every.map_or(half, |r| r.min(half)));
        }
    }
    // Queues and pipes of the pair tests first: one the kernel refuses stops the
    // self-test before any load runs.
    let mut channels = Vec::new();
    for t in &specs {
        channels.push(match t {
            TestPlan::Pair(p) => match pair::open_channels(p) {
                Ok(c) => Some(c),
                Err(e) => {
                    let code = e.exit_code();
                    journal.send(&aborted(t.name(), &e));
                    notify.send(&["STATUS=self-test stopped: message queue or pipe refused"]);
                    return code;
                }
            },
            TestPlan::Cyclic(_) => None,
        });
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
    let mut tests = Vec::new();
    let mut stop = StopCause::Completed;
    // The first test the system refused (its error, exit code), if any.
    let mut refused: Option<(String, crate::error::Error)> = None;
    for (t, ch) in specs.iter().zip(channels) {
        if stop.interrupted() {
            problems.push(format!("{}: not run (interrupted before it)", t.name()));
            continue;
        }
        let mut progress = NotifyProgress {
            test: t.name(),
            out,
            started: Instant::now(),
            duration: t.duration(),
            watchdog,
            notify: &mut notify,
        };
        let measured = match (t, ch) {
            (TestPlan::Cyclic(c), _) => cyclic::run(c, root, &mut progress).map(|r| {
                let threads = r.threads.iter().map(ThreadSummary::from_cyclic).collect();
                (threads, r.end, None)
            }),
            (TestPlan::Pair(p), Some(ch)) => pair::run(p, ch, root, &mut progress).map(|r| {
                let threads = r.pairs.iter().map(ThreadSummary::from_pair).collect();
                (threads, r.end, Some(r.msg_size))
            }),
            (TestPlan::Pair(_), None) => continue,
        };
        match measured {
            Ok((threads, end, msg_size)) => {
                stop = end.stop;
                tests.push(TestSummary {
                    test: t.name().into(),
                    msg_size,
                    threads,
                });
            }
            Err(e) => {
                // A test that could not run is not a pass; the others still run.
                problems.push(format!("{}: not run: {e}", t.name()));
                if refused.is_none() {
                    refused = Some((t.name().to_string(), e));
                }
            }
        }
    }
    if let Some(l) = load.as_mut() {
        for problem in l.stop() {
            problems.push(format!("load: {}", problem.trim_start_matches("# ")));
        }
    }
    if let (Some((name, e)), true) = (&refused, tests.is_empty()) {
        // Nothing measured at all: stopped before a verdict, as before any test ran.
        let code = e.exit_code();
        let stage = if specs.len() == 1 {
            "measurement"
        } else {
            name
        };
        journal.send(&aborted(stage, e));
        notify.send(&["STATUS=self-test stopped: measurement refused"]);
        return code;
    }
    let duration_s = t0.elapsed().as_secs_f64();

    // 4. Judge.
    let mut verdict = judge(&tests, &plan.limits);
    if plan.tests.is_empty() {
        verdict
            .unjudged
            .push("no test enabled ([cyclic], [pmq] and [pipe] are all disabled)".into());
    }
    verdict.problems.extend(problems);
    verdict.tuning = tuning_findings;
    let interrupted = stop.interrupted();
    if interrupted {
        // A cut-short run proves nothing: it cannot pass.
        verdict
            .problems
            .push(format!("interrupted ({stop:?}) after {duration_s:.1} s").to_lowercase());
    }
    if plan.config_path.is_empty() {
        for u in verdict.unjudged.iter_mut() {
            if u.starts_with("no [limits]") {
                *u = format!("no configuration file at {}: {u}", plan.config_shown);
            }
        }
    }
    verdict.settle();
    let refused_code = match &refused {
        Some((_, e)) => Some(e.exit_code()),
        None => tuning_refused.then_some(exit::ENV),
    };
    let code = exit_code(
        &verdict,
        interrupted.then(|| stop.exit_code()),
        plan.allow_unjudged,
        refused_code,
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
    journal.send(&entries::summary(&run, stop, storage));
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
