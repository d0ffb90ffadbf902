//! The self-test flow, start to exit code: tuning, READY, the pair tests' channels
//! and the load, each test measured, the verdict, the outputs. Each stage before the
//! verdict returns a `Result`; its error (an `Abort`) takes the one way out of
//! [`execute`]: the `aborted` journal entry, a `STATUS=` line and the error's exit
//! code. From the verdict on, nothing stops the run: an output that cannot be written
//! is said in the journal, and the exit code is the verdict's.

use super::ConditionPlan;
use super::SelftestPlan;
use super::TestPlan;
use crate::config::TuningMode;
use crate::error::{exit, Error};
use crate::explain::hardware::{run_hwlat, smi_count, smi_delta, HardwareCheck, Hwlat};
use crate::measure::cyclic::{self, CyclicSpec};
use crate::measure::harness::{Progress, StopCause};
use crate::measure::pair::{self, Channels, PairSpec};
use crate::measure::stats::LiveSnapshot;
use crate::measure::ThreadSpec;
use crate::report::journal::{self as entries, Journal};
use crate::report::output::Output;
use crate::report::table::Table;
use crate::report::text::LiveLines;
use crate::report::Live;
use crate::results::outcome::RunOutcome;
use crate::results::store::{ConditionRecord, Origin, StoredRun};
use crate::results::summary::{TestSummary, ThreadSummary, Verdict};
use crate::results::verdict::{self, Problem, RunFacts};
use crate::sys::clock::Clock;
use crate::sys::info::SysInfo;
use crate::sys::notify::Notifier;
use crate::sys::SysRoot;
use crate::tune::{self, TuningReport};
use std::time::{Duration, Instant};

/// sd_notify for the whole run: sends when a service manager listens, and logs the
/// first notification that cannot be delivered (one line on standard error, which a
/// unit's journal receives).
struct Notify {
    notifier: Option<Notifier>,
    out: Output,
    /// Setup notices already printed: the tests share one PM QoS request, so its line
    /// (`# /dev/cpu_dma_latency set to 0us`) is said once, not once per test.
    noticed: Vec<String>,
}

impl Notify {
    fn send(&mut self, lines: &[&str]) {
        if let Some(line) = self.notifier.as_mut().and_then(|n| n.send(lines)) {
            self.out.warn(&format!("rtbench: warning: {line}"));
        }
    }

    /// The last notification of the run, and how many could not be sent as they were.
    fn last(&mut self, lines: &[&str]) {
        self.send(lines);
        if let Some(line) = self.notifier.as_ref().and_then(Notifier::dropped_line) {
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
            crate::duration::us(max_ns, crate::duration::UsStyle::Text)
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
        if !self.notify.noticed.iter().any(|l| l == line) {
            self.notify.noticed.push(line.to_string());
            self.out.line(line);
        }
    }

    fn warning(&mut self, line: &str) {
        self.out.warn(line);
    }
}

/// Runs the self-test `plan` (already validated), its attempt's `record` already
/// written, and returns the exit code by the one rule of
/// [`crate::results::outcome`]: 0 pass (or unjudged with `allow_unjudged`) with every
/// requested output written, 1 fail, unjudged, or an output not written, 3
/// environment refused (a tuning write or guard, the load, the measurement's
/// scheduling, locking or threads — also after READY), 4 invalid (only samples that
/// are not the system's latency exceeded a limit), 130/143 interrupted. Stopped
/// before a verdict, the record is marked stopped with the stage and the reason.
pub fn execute(
    plan: &SelftestPlan,
    root: &SysRoot,
    journal: &mut Journal,
    record: &mut super::record::Record,
) -> i32 {
    let sysinfo = SysInfo::read(root);
    let origin = Origin::current();
    let out = Output::new(None);
    let mut notify = Notify {
        notifier: Notifier::from_env(),
        out,
        noticed: Vec::new(),
    };
    for s in plan.conditions.iter().flat_map(|c| &c.sharing) {
        journal.send(&entries::placement(s));
    }
    let stages = tuning(plan, root, journal).and_then(|tuned| {
        // The hardware gate before READY: nothing else may run while it holds the
        // CPUs with interrupts off.
        let hwlat = hwlat_gate(plan, root, &mut notify, record);
        ready(plan, &tuned, journal, &mut notify);
        let before = smi_count(root, &plan.measured_cpus);
        let mut measured = measure(plan, root, &mut notify)?;
        measured.hardware = HardwareCheck {
            hwlat,
            hwlat_limit_us: plan.hwlat.map(|_| plan.hwlat_limit_us),
            smis: Some(smi_delta(&before, &smi_count(root, &plan.measured_cpus))),
        };
        Ok((tuned, measured))
    });
    let (tuned, measured) = match stages {
        Ok(done) => done,
        // The one way out before a verdict.
        Err(a) => {
            journal.send(&aborted(&a.stage, &a.error));
            notify.last(&[&format!("STATUS=self-test stopped: {}", a.what)]);
            record.stop(&a.stage, &a.error.to_string(), a.error.exit_code());
            return a.error.exit_code();
        }
    };
    let stop = measured.stop;
    let (verdict, outcome) = judge(plan, &tuned, &measured, &sysinfo);
    let run = StoredRun {
        rtbench_version: env!("CARGO_PKG_VERSION").into(),
        start_s: measured.start_s,
        duration_s: measured.duration_s,
        sysinfo,
        config: serde_json::json!({ "path": plan.config_path, "text": plan.config_text }),
        tuning: tuned.report.as_ref().map_or(serde_json::Value::Null, |r| {
            serde_json::to_value(r).unwrap_or_default()
        }),
        load: plan.load_label(),
        tests: measured.tests,
        verdict,
        interrupted: stop.interrupted(),
        origin,
        exit_code: Some(outcome.exit_code()),
        store_error: None,
        results_dir: None,
        hardware: Some(measured.hardware),
        conditions: plan
            .conditions
            .iter()
            .filter_map(|c| {
                c.name.as_ref().map(|name| ConditionRecord {
                    name: name.clone(),
                    load: c.load_label.clone(),
                })
            })
            .collect(),
        unit: crate::results::unit::UnitRecord::gather(root, &plan.unit),
        attempt: None,
        unwritten: Vec::new(),
    };
    let (run, code) = super::outputs::write(plan, run, outcome, stop, journal, record);
    let _ = out.text(&Table, &run);
    notify.last(&[&format!("STATUS=self-test {}", run.verdict.word())]);
    code
}

/// Why the self-test stopped before a verdict: the stage, the error, and what the
/// `STATUS=self-test stopped: …` line says.
struct Abort {
    /// `tuning`, `load`, a test's name, or `measurement`.
    stage: String,
    /// What refused.
    error: Box<Error>,
    /// `tuning not applied`, `load not started`, …
    what: &'static str,
}

impl Abort {
    /// The abort at `stage` that `error` makes (for `map_err`).
    fn at(stage: &str, what: &'static str) -> impl FnOnce(Error) -> Abort {
        let stage = stage.to_string();
        move |error| Abort {
            stage,
            error: Box::new(error),
            what,
        }
    }
}

/// The tuning as found or left by stage 1: its report, `None` with `mode = "off"`
/// (the verdict's tuning findings are read from it by [`judge`]).
struct Tuned {
    report: Option<TuningReport>,
}

impl Tuned {
    /// Knobs changed by `apply` and still in place.
    fn changed(&self) -> usize {
        self.report
            .as_ref()
            .map_or(0, |r| r.items.iter().filter(|i| i.changed).count())
    }

    /// The kernel refused a tuning write (or a guard refused an item): the run goes
    /// on, to measure the untuned system, but cannot pass and exits 3.
    fn refused(&self) -> bool {
        self.report
            .as_ref()
            .is_some_and(|r| r.exit_code() == exit::ENV)
    }
}

/// Stage 1, tuning: check or apply `[tuning]` (`[selftest] mode`), one journal entry per
/// item. Stops the self-test when `apply` cannot start (lock, journal, not root).
fn tuning(plan: &SelftestPlan, root: &SysRoot, journal: &mut Journal) -> Result<Tuned, Abort> {
    let report = match plan.mode {
        TuningMode::Off => None,
        TuningMode::Check => Some(tune::check(root, &plan.tuning)),
        TuningMode::Apply => Some(
            tune::apply(root, &plan.tuning, &tune::ApplyOptions::default())
                .map_err(Abort::at("tuning", "tuning not applied"))?,
        ),
    };
    if let Some(r) = &report {
        for i in r.recovered.iter().chain(&r.items).chain(&r.rolled_back) {
            journal.send(&entries::tuning_item(i));
        }
    }
    Ok(Tuned { report })
}

/// The hwlat gate (`[selftest] hwlat`), if configured: the kernel's hwlat tracer on the
/// measured CPUs, in an instance of rtbench's own. SIGINT, SIGTERM and SIGHUP are held
/// while it runs and end it early; the instance is removed and the signal then has its
/// usual effect (the process ends, as it would have before the measurement), the
/// attempt's record marked stopped first.
fn hwlat_gate(
    plan: &SelftestPlan,
    root: &SysRoot,
    notify: &mut Notify,
    record: &mut super::record::Record,
) -> Option<Hwlat> {
    let d = plan.hwlat?;
    // The gate runs before READY: tell systemd the start takes that much longer than
    // TimeoutStartSec= (sd_notify(3), EXTEND_TIMEOUT_USEC=).
    notify.send(&[
        &format!(
            "STATUS=hwlat gate on CPUs {} for {}",
            plan.measured_cpus,
            crate::duration::format(d)
        ),
        &format!(
            "EXTEND_TIMEOUT_USEC={}",
            (d + Duration::from_secs(30)).as_micros()
        ),
    ]);
    let signals = crate::sys::signals::Signals::block();
    let caught = std::cell::Cell::new(None);
    let h = run_hwlat(root, &plan.measured_cpus, d, plan.hwlat_limit_us, &|| {
        if let Some(s) = signals
            .wait(Duration::ZERO)
            .filter(|s| [libc::SIGINT, libc::SIGTERM, libc::SIGHUP].contains(s))
        {
            caught.set(Some(s));
        }
        caught.get().is_some()
    });
    if let Some(sig) = caught.get() {
        let code = crate::error::exit::SIGNAL_BASE + sig;
        record.stop("hwlat gate", &format!("stopped by signal {sig}"), code);
        // SAFETY: restores the default action and sends the signal to this process.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, sig);
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            libc::raise(sig);
        }
    }
    Some(h)
}

/// Stage 2, READY: units ordered After=rtbench.service start on a tuned system now.
fn ready(plan: &SelftestPlan, tuned: &Tuned, journal: &mut Journal, notify: &mut Notify) {
    let measuring = if plan.tests().next().is_none() {
        "measuring nothing: every test is disabled".to_string()
    } else {
        format!(
            "measuring {}",
            plan.conditions
                .iter()
                .map(|c| format!(
                    "{}{}",
                    c.prefix(),
                    c.tests
                        .iter()
                        .map(super::TestPlan::describe)
                        .collect::<Vec<_>>()
                        .join(", then ")
                ))
                .collect::<Vec<_>>()
                .join("; then ")
        )
    };
    let changed = tuned.changed();
    let tuned_text = match &tuned.report {
        None => "tuning off".to_string(),
        Some(r) if r.items.is_empty() => "no tuning item checked".to_string(),
        Some(r) if r.action == crate::tune::Action::Check => {
            let n = r.items.len();
            format!("tuning checked ({n} item{})", if n == 1 { "" } else { "s" })
        }
        Some(_) => format!("tuned ({changed} changes)"),
    };
    let ready_status = format!("{tuned_text}; {measuring}");
    notify.send(&["READY=1", &format!("STATUS={ready_status}")]);
    journal.send(&entries::ready(plan.mode.as_str(), changed, &ready_status));
}

/// What the measurement produced.
struct Measured {
    /// The tests that ran, in order.
    tests: Vec<TestSummary>,
    /// How the last test that ran ended.
    stop: StopCause,
    /// Wall-clock start, seconds since the epoch.
    start_s: i64,
    /// Seconds from the first test's start to the load's end.
    duration_s: f64,
    /// The exit code of the first test the system refused (the others still ran).
    refused: Option<i32>,
    /// Tests that did not run, load problems.
    problems: Vec<Problem>,
    /// The hwlat gate and the SMIs of the run.
    hardware: HardwareCheck,
}

/// Stage 3, measuring: the pair tests' queues and pipes of every condition, then each
/// condition in turn: its load, every test one after the other under it, the load
/// stopped. A test the system refuses is a problem and the others still run; the
/// self-test stops when a channel or a load is refused, or when no test could measure
/// at all.
fn measure(plan: &SelftestPlan, root: &SysRoot, notify: &mut Notify) -> Result<Measured, Abort> {
    let usec = crate::sys::notify::watchdog_interval().map_or(0, |w| w.as_micros() as u64);
    let watchdog = usec > 0;
    let mut conditions = plan.conditions.clone();
    if watchdog {
        report_for_watchdog(&mut conditions, usec);
    }
    // Queues and pipes of the pair tests first: one the kernel refuses stops the
    // self-test before any load runs.
    let armed = arm(&conditions)?;
    let start_s = Clock::wall_secs();
    let t0 = Instant::now();
    let mut m = Measured {
        tests: Vec::new(),
        stop: StopCause::Completed,
        start_s,
        duration_s: 0.0,
        refused: None,
        problems: Vec::new(),
        hardware: HardwareCheck::default(),
    };
    // The first test the system refused, if any.
    let mut refused: Option<(String, Error)> = None;
    for (c, armed) in conditions.iter().zip(armed) {
        let in_condition = |p: Problem| match &c.name {
            Some(name) => Problem::InCondition {
                condition: name.clone(),
                problem: Box::new(p),
            },
            None => p,
        };
        if m.stop.interrupted() {
            for t in &c.tests {
                m.problems.push(in_condition(Problem::Skipped {
                    test: t.name().into(),
                }));
            }
            continue;
        }
        let mut load = match &c.load {
            Some(l) => Some(crate::load::start(l).map_err(Abort::at(
                &format!("{}load", c.prefix()),
                "load not started",
            ))?),
            None => None,
        };
        for (t, a) in c.tests.iter().zip(armed) {
            if m.stop.interrupted() {
                m.problems.push(in_condition(Problem::Skipped {
                    test: t.name().into(),
                }));
                continue;
            }
            match measure_test(t, a, root, notify, watchdog) {
                Ok((mut summary, stop)) => {
                    summary.histogram_us = plan.histogram_us;
                    summary.condition = c.name.clone();
                    m.stop = stop;
                    m.tests.push(summary);
                }
                Err(e) => {
                    // A test that could not run is not a pass; the others still run.
                    m.problems.push(in_condition(Problem::NotRun {
                        test: t.name().into(),
                        why: e.to_string(),
                    }));
                    refused.get_or_insert((format!("{}{}", c.prefix(), t.name()), e));
                }
            }
        }
        if let Some(l) = load.as_mut() {
            m.problems
                .extend(l.stop().into_iter().map(|l| in_condition(Problem::Load(l))));
        }
    }
    if let Some((name, e)) = refused {
        if m.tests.is_empty() {
            // Nothing measured at all: stopped before a verdict, as before any test ran.
            let stage = if plan.tests().count() == 1 {
                "measurement".to_string()
            } else {
                name
            };
            return Err(Abort::at(&stage, "measurement refused")(e));
        }
        m.refused = Some(e.exit_code());
    }
    m.duration_s = t0.elapsed().as_secs_f64();
    Ok(m)
}

/// Runs test `t` (its channels `a` armed), its progress to `notify` (pinging the
/// watchdog when `watchdog`); its summary's `duration_s` is its measuring time: the
/// configured duration when it ran to the end (the elapsed time adds thread setup and
/// the explanation), else the time until it was stopped, seconds.
fn measure_test(
    t: &TestPlan,
    a: Armed<'_>,
    root: &SysRoot,
    notify: &mut Notify,
    watchdog: bool,
) -> crate::error::Result<(TestSummary, StopCause)> {
    let mut progress = NotifyProgress {
        test: t.name(),
        out: notify.out,
        started: Instant::now(),
        duration: t.duration(),
        watchdog,
        notify,
    };
    let started = Instant::now();
    let (mut summary, stop) = measure_one(t.name(), a, root, &mut progress)?;
    summary.duration_s = Some(if stop.interrupted() {
        started.elapsed().as_secs_f64()
    } else {
        t.duration().as_secs_f64()
    });
    Ok((summary, stop))
}

/// Every test of `conditions` reports its progress at least every half of the
/// systemd watchdog's interval `usec` (µs; at least every 100 ms), so that each
/// report can ping the watchdog in time.
fn report_for_watchdog(conditions: &mut [ConditionPlan], usec: u64) {
    let half = Duration::from_micros(usec / 2).max(Duration::from_millis(100));
    for t in conditions.iter_mut().flat_map(|c| c.tests.iter_mut()) {
        let c = t.control_mut();
        c.report_every = Some(c.report_every.map_or(half, |r| r.min(half)));
    }
}

/// The tests of every condition, in order, ready to run: each pair test with its
/// queues or pipes opened. A channel the kernel refuses aborts the self-test, named
/// by its condition and test.
fn arm(conditions: &[ConditionPlan]) -> Result<Vec<Vec<Armed<'_>>>, Abort> {
    let mut armed = Vec::new();
    for c in conditions {
        let mut tests = Vec::new();
        for t in &c.tests {
            tests.push(match t {
                TestPlan::Pair(p) => Armed::Pair(
                    p,
                    pair::open_channels(p).map_err(Abort::at(
                        &format!("{}{}", c.prefix(), t.name()),
                        "message queue or pipe refused",
                    ))?,
                ),
                TestPlan::Cyclic(c) => Armed::Cyclic(c),
                TestPlan::Poll(p) => Armed::Poll(p),
            });
        }
        armed.push(tests);
    }
    Ok(armed)
}

/// A test ready to run: a pair test with its queues or pipes open.
enum Armed<'a> {
    Cyclic(&'a CyclicSpec),
    Pair(&'a PairSpec, Vec<Channels>),
    Poll(&'a crate::measure::poll::PollSpec),
}

/// One test (named `name` in the results) through its command's measuring code,
/// summarised; with how it ended.
fn measure_one(
    name: &str,
    test: Armed<'_>,
    root: &SysRoot,
    progress: &mut dyn Progress,
) -> crate::error::Result<(TestSummary, StopCause)> {
    Ok(match test {
        Armed::Cyclic(c) => {
            let r = cyclic::run(c, root, progress)?;
            let summary = TestSummary {
                condition: None,
                test: name.into(),
                msg_size: None,
                duration_s: None,
                histogram_us: None,
                threads: r.threads.iter().map(ThreadSummary::from_cyclic).collect(),
                explain: r.end.explain_summary(),
            };
            (summary, r.end.stop)
        }
        Armed::Pair(p, channels) => {
            let r = pair::run(p, channels, root, progress)?;
            let summary = TestSummary {
                condition: None,
                test: name.into(),
                msg_size: Some(r.msg_size),
                duration_s: None,
                histogram_us: None,
                threads: r.pairs.iter().map(ThreadSummary::from_pair).collect(),
                explain: r.end.explain_summary(),
            };
            (summary, r.end.stop)
        }
        Armed::Poll(p) => {
            let counter = crate::sys::counter::Counter::detect(root);
            let r = crate::measure::poll::run(p, counter, root, progress)?;
            let summary = TestSummary {
                condition: None,
                test: name.into(),
                msg_size: None,
                duration_s: None,
                histogram_us: None,
                threads: r.threads.iter().map(ThreadSummary::from_poll).collect(),
                explain: r.end.explained.clone(),
            };
            (summary, r.end.stop)
        }
    })
}

/// Stage 4, judging: the verdict from the figures and the facts of the run, and what
/// decides the exit code (every output written so far).
fn judge(plan: &SelftestPlan, tuned: &Tuned, m: &Measured, si: &SysInfo) -> (Verdict, RunOutcome) {
    let not_rt = (plan.require_preempt_rt && !si.realtime).then(|| Problem::NotRealtime {
        release: si.release.clone(),
        model: si.preempt_model.clone(),
    });
    let findings = tuned
        .report
        .as_ref()
        .map_or_else(Vec::new, verdict::tuning_findings);
    let untuned = tuned
        .report
        .as_ref()
        .is_some_and(|r| r.exit_code() != exit::OK && findings.is_empty());
    let hardware = m.hardware.hwlat.as_ref().and_then(|h| {
        h.worst_us()
            .filter(|(_, us)| *us > plan.hwlat_limit_us)
            .map(|(cpu, us)| Problem::Hardware {
                cpu,
                us,
                limit_us: plan.hwlat_limit_us,
            })
    });
    let facts = RunFacts {
        problems: not_rt
            .into_iter()
            .chain(untuned.then(|| Problem::Tuning {
                mode: plan.mode.as_str(),
            }))
            .chain(hardware)
            .chain(m.problems.iter().cloned())
            .collect(),
        tuning: findings,
        no_test_enabled: plan.tests().next().is_none(),
        config_missing_at: plan
            .config_path
            .is_empty()
            .then(|| plan.config_shown.clone()),
        interrupted: m.stop.interrupted().then_some(Problem::Interrupted {
            stop: m.stop,
            after_s: m.duration_s,
        }),
        hwlat_not_run: m
            .hardware
            .hwlat
            .as_ref()
            .and_then(|h| h.unsupported.clone()),
        tuning_not_checked: super::unchecked::tuning(
            &plan.config_text,
            plan.mode,
            tuned.report.as_ref(),
        ),
    };
    // Each condition's tests against its own limits.
    let groups: Vec<(
        Option<&str>,
        Vec<TestSummary>,
        &crate::config::limits::LimitSet,
    )> = plan
        .conditions
        .iter()
        .map(|c| {
            let tests = m
                .tests
                .iter()
                .filter(|t| t.condition == c.name)
                .cloned()
                .collect();
            (c.name.as_deref(), tests, &c.limits)
        })
        .collect();
    let judged: Vec<verdict::Judged<'_>> = groups
        .iter()
        .map(|(condition, tests, limits)| verdict::Judged {
            condition: *condition,
            tests,
            limits,
        })
        .collect();
    let verdict = verdict::verdict_of(&judged, facts);
    let refused = m.refused.or(tuned.refused().then_some(exit::ENV));
    let outcome = RunOutcome {
        verdict: verdict.outcome,
        interrupted: m.stop.interrupted().then(|| m.stop.exit_code()),
        refused,
        allow_unjudged: plan.allow_unjudged,
        unwritten: 0,
    };
    (verdict, outcome)
}

/// The entry of a self-test stopped before a verdict by `e` at `stage`, with the
/// errno the call returned and what refused as fields (`RTBENCH_ERRNO`,
/// `RTBENCH_CAUSE`, when known).
fn aborted(stage: &str, e: &Error) -> crate::report::journal::Entry {
    let mut entry = entries::aborted(stage, &e.to_string(), e.exit_code());
    if let Some(n) = e.errno() {
        entry = entry.field("RTBENCH_ERRNO", n);
    }
    if let Some(c) = e.cause_name() {
        entry = entry.field("RTBENCH_CAUSE", c);
    }
    entry
}
