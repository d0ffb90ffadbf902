//! Stored self-test runs as JUnit XML (`rtbench report --format junit`), the format
//! factory stations, Jenkins (the JUnit plugin) and GitLab (`artifacts:reports:junit`)
//! read: one `<testsuite>` per run inside `<testsuites>`, and in it one `<testcase>` per
//! test × CPU (or pair) × limit (`<failure>` when exceeded, `<error>` when the sample
//! is not the system's latency — invalid, measure again —, `<skipped>` for a thread no
//! limit applies to), one per tuning item (`<failure>` for a deviation or a failed
//! item, `<skipped>` when it does not apply here), one per problem of the run
//! (`<error>`) and one for the run's verdict (`<failure>` when unjudged, unless the
//! run was accepted with `allow_unjudged`: nothing judged is not a pass). The unit
//! (serial number, label, station, order), the kernel and the conditions' loads are
//! `<properties>`.
//!
//! The element and attribute names are those of the JUnit XML schema the Jenkins JUnit
//! plugin reads (jenkinsci/junit-plugin, `src/main/resources/hudson/tasks/junit/`
//! `JUnit.xsd`: `testsuites`, `testsuite` with `name`, `tests`, `failures`, `errors`,
//! `skipped`, `time`, `timestamp`, `hostname`; `properties`/`property`; `testcase` with
//! `classname`, `name`; `failure`/`error`/`skipped` with `message` and `type`).
//!
//! Values a stored file may hold out of the schema's range are left out rather than
//! written wrong: `time` (xs:decimal, seconds) only for a finite, non-negative duration
//! ([`seconds`]; the `<testsuites>` total sums those), `timestamp` (xs:dateTime) only for
//! a start in years 0001–9999 ([`timestamp`]). Both attributes are optional in the
//! schema; a reader takes a missing one as unknown, never `inf` or year 10000 as a value.

use super::xml::escape as esc;
use super::Sink;
use crate::results::store::StoredRun;
use crate::results::summary::{condition_prefix, thread_label, Check, TestSummary};
use std::fmt::Write as _;

/// The XML document of the runs (a sink over the runs shown by `report`).
pub struct Junit;

impl Sink<[&StoredRun]> for Junit {
    fn write(&self, runs: &[&StoredRun], out: &mut dyn std::io::Write) -> std::io::Result<()> {
        out.write_all(render(runs).as_bytes())
    }
}

/// What a test case found.
enum Outcome {
    Pass,
    Failure(String),
    Error(String),
    Skipped(String),
}

/// One `<testcase>`.
struct Case {
    classname: String,
    name: String,
    outcome: Outcome,
    /// The body of a failure or error: the figures.
    detail: String,
}

/// `duration_s` as the schema's `time` (seconds, three decimals), `None` when it is
/// not a finite, non-negative number (a damaged or hostile stored file).
pub fn seconds(duration_s: f64) -> Option<String> {
    (duration_s.is_finite() && duration_s >= 0.0).then(|| format!("{duration_s:.3}"))
}

/// `start_s` (seconds since the epoch) as the schema's `timestamp` (xs:dateTime, UTC,
/// no zone designator), `None` outside 0001-01-01T00:00:00 … 9999-12-31T23:59:59.
pub fn timestamp(start_s: i64) -> Option<String> {
    const FIRST: i64 = -62_135_596_800; // 0001-01-01T00:00:00Z
    const LAST: i64 = 253_402_300_799; // 9999-12-31T23:59:59Z
    (FIRST..=LAST).contains(&start_s).then(|| {
        crate::date::iso_s(start_s)
            .trim_end_matches('Z')
            .to_string()
    })
}

/// ` NAME="VALUE"`, or nothing for `None`.
fn attr(name: &str, v: Option<String>) -> String {
    v.map_or_else(String::new, |v| format!(" {name}=\"{v}\""))
}

/// The document of `runs`.
pub fn render(runs: &[&StoredRun]) -> String {
    let suites: Vec<(Vec<Case>, &StoredRun)> = runs.iter().map(|r| (cases(r), *r)).collect();
    let count = |f: &dyn Fn(&Case) -> bool| -> usize {
        suites
            .iter()
            .map(|(c, _)| c.iter().filter(|c| f(c)).count())
            .sum()
    };
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        s,
        "<testsuites name=\"rtbench self-test\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\"{}>",
        count(&|_| true),
        count(&|c| matches!(c.outcome, Outcome::Failure(_))),
        count(&|c| matches!(c.outcome, Outcome::Error(_))),
        count(&|c| matches!(c.outcome, Outcome::Skipped(_))),
        attr(
            "time",
            seconds(
                suites
                    .iter()
                    .filter_map(|(_, r)| seconds(r.duration_s).map(|_| r.duration_s))
                    .fold(0.0, |a, b| a + b)
            )
        ),
    );
    for (cases, run) in &suites {
        suite(&mut s, run, cases);
    }
    s.push_str("</testsuites>\n");
    s
}

/// One run's `<testsuite>`.
fn suite(s: &mut String, run: &StoredRun, cases: &[Case]) {
    let n = |f: &dyn Fn(&Outcome) -> bool| cases.iter().filter(|c| f(&c.outcome)).count();
    let mut name = String::from("rtbench self-test");
    if let Some(u) = &run.unit {
        let _ = write!(name, " {}", u.text());
    }
    let _ = write!(name, " {}", crate::date::iso_s(run.start_s));
    let _ = writeln!(
        s,
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\"{}{} hostname=\"{}\">",
        esc(&name),
        cases.len(),
        n(&|o| matches!(o, Outcome::Failure(_))),
        n(&|o| matches!(o, Outcome::Error(_))),
        n(&|o| matches!(o, Outcome::Skipped(_))),
        attr("time", seconds(run.duration_s)),
        attr("timestamp", timestamp(run.start_s)),
        esc(&run.sysinfo.nodename),
    );
    s.push_str("    <properties>\n");
    let mut props: Vec<(String, String)> = Vec::new();
    if let Some(u) = &run.unit {
        for (k, v) in u.parts() {
            props.push((format!("unit.{k}"), v.to_string()));
        }
        if let Some(src) = &u.serial_source {
            props.push(("unit.serial_source".into(), src.clone()));
        }
    }
    props.push(("verdict".into(), run.shown_word().into()));
    props.push(("rtbench.version".into(), run.rtbench_version.clone()));
    props.push(("kernel.release".into(), run.sysinfo.release.clone()));
    props.push((
        "kernel.preempt_model".into(),
        run.sysinfo.preempt_model.clone(),
    ));
    props.push(("boot_id".into(), run.origin.boot_id.clone()));
    props.push(("load".into(), run.load.clone()));
    for c in &run.conditions {
        props.push((format!("condition.{}.load", c.name), c.load.clone()));
    }
    for (k, v) in props {
        let _ = writeln!(
            s,
            "      <property name=\"{}\" value=\"{}\"/>",
            esc(&k),
            esc(&v)
        );
    }
    s.push_str("    </properties>\n");
    for c in cases {
        let head = format!(
            "    <testcase classname=\"{}\" name=\"{}\"",
            esc(&c.classname),
            esc(&c.name)
        );
        let (tag, kind, message) = match &c.outcome {
            Outcome::Pass => {
                let _ = writeln!(s, "{head}/>");
                continue;
            }
            Outcome::Failure(m) => ("failure", "limit", m),
            Outcome::Error(m) => ("error", "error", m),
            Outcome::Skipped(m) => {
                let _ = writeln!(
                    s,
                    "{head}>\n      <skipped message=\"{}\"/>\n    </testcase>",
                    esc(m)
                );
                continue;
            }
        };
        let _ = writeln!(
            s,
            "{head}>\n      <{tag} message=\"{}\" type=\"{kind}\">{}</{tag}>\n    </testcase>",
            esc(message),
            esc(&c.detail)
        );
    }
    s.push_str("  </testsuite>\n");
}

/// `rtbench.cyclic`, `rtbench.stress.cyclic`: a test's class in the report.
fn class_of(t: &TestSummary) -> String {
    match &t.condition {
        Some(c) => format!("rtbench.{c}.{}", t.test),
        None => format!("rtbench.{}", t.test),
    }
}

/// Every test case of `run`, in the order of its tests, threads and checks, then the
/// tuning items, the problems and the verdict.
fn cases(run: &StoredRun) -> Vec<Case> {
    let mut v = check_cases(run);
    v.extend(tuning_cases(run));
    for (i, p) in run.verdict.problems.iter().enumerate() {
        v.push(Case {
            classname: "rtbench.run".into(),
            name: format!("problem {}", i + 1),
            outcome: Outcome::Error(p.clone()),
            detail: p.clone(),
        });
    }
    v.extend(unwritten_cases(run));
    v.push(verdict_case(run));
    v
}

/// One case per check of each test's thread (or pair), or a skipped one where no limit
/// applies.
fn check_cases(run: &StoredRun) -> Vec<Case> {
    let mut v = Vec::new();
    for t in &run.tests {
        for th in &t.threads {
            let who = format!(
                "{}{}",
                condition_prefix(t.condition.as_deref()),
                thread_label(&t.test, th.thread, th.cpu)
            );
            let checks: Vec<&Check> = run.verdict.checks_for(t, th.thread).collect();
            if checks.is_empty() {
                v.push(Case {
                    classname: class_of(t),
                    name: format!("{who} judged"),
                    outcome: Outcome::Skipped("no limit applies: measured, not judged".into()),
                    detail: String::new(),
                });
            }
            for c in checks {
                let detail = format!(
                    "{} {}, limit {} ({} samples, max {}, p99.9 {})",
                    c.statistic(),
                    c.value_text(),
                    c.limit_text(),
                    th.count,
                    crate::duration::us(th.max_ns, crate::duration::UsStyle::Text),
                    crate::duration::us(th.p999_ns, crate::duration::UsStyle::Text),
                );
                v.push(Case {
                    classname: class_of(t),
                    name: format!("{who} {} <= {}", c.statistic(), c.limit_text()),
                    outcome: match (c.pass, c.invalid) {
                        (true, _) => Outcome::Pass,
                        (false, false) => Outcome::Failure(c.failure_text()),
                        (false, true) => Outcome::Error(format!(
                            "not the system's latency (measure again): {}",
                            c.failure_text()
                        )),
                    },
                    detail,
                });
            }
        }
    }
    v
}

/// One case per tuning item: deviations and failures fail, items that do not apply
/// are skipped.
fn tuning_cases(run: &StoredRun) -> Vec<Case> {
    let mut v = Vec::new();
    let items = ["recovered", "items", "rolled_back"]
        .into_iter()
        .filter_map(|k| run.tuning.get(k).and_then(|i| i.as_array()))
        .flatten();
    for i in items {
        let field = |k: &str| i.get(k).and_then(|x| x.as_str()).unwrap_or_default();
        let detail = field("detail").to_string();
        let outcome = match field("status") {
            "deviation" | "failed" => Outcome::Failure(format!(
                "tuning {} {}: {detail}",
                field("item"),
                field("status")
            )),
            "not-applicable" | "unsupported" => {
                Outcome::Skipped(format!("{}: {detail}", field("status")))
            }
            _ => Outcome::Pass,
        };
        v.push(Case {
            classname: "rtbench.tuning".into(),
            name: field("item").to_string(),
            outcome,
            detail,
        });
    }
    v
}

/// The verdict's case: an attempt without a verdict is an error; unjudged is not a pass
/// unless the run was accepted that way.
fn verdict_case(run: &StoredRun) -> Case {
    let failures = run.verdict.failures().join("; ");
    Case {
        classname: "rtbench.run".into(),
        name: "verdict".into(),
        outcome: match run.verdict.word() {
            // An attempt without a verdict is an error, whatever it holds.
            _ if !run.judged() => Outcome::Error(no_verdict(run)),
            "pass" => Outcome::Pass,
            "fail" => Outcome::Failure(format!("FAIL: {failures}")),
            "invalid" => Outcome::Error(format!("INVALID: {failures}")),
            // Nothing judged is not a pass (fails closed), unless the run was accepted
            // that way (`[selftest] allow_unjudged`: exit 0).
            _ if run.accepted() => {
                Outcome::Skipped(format!("UNJUDGED: {}", run.verdict.unjudged_reason()))
            }
            _ => Outcome::Failure(format!(
                "UNJUDGED, not a pass: {}",
                run.verdict.unjudged_reason()
            )),
        },
        detail: failures,
    }
}

/// Why `run` has no verdict, from its attempt.
fn no_verdict(run: &StoredRun) -> String {
    run.attempt
        .as_ref()
        .and_then(|a| a.no_verdict_line(run.exit_code))
        .unwrap_or_else(|| "no verdict".into())
}

/// One `<failure>` per output the run was asked for and could not write: a pass
/// that was not stored is not a pass (exit 1, [`crate::results::outcome`]).
fn unwritten_cases(run: &StoredRun) -> Vec<Case> {
    run.unwritten
        .iter()
        .map(|u| Case {
            classname: "rtbench.output".into(),
            name: u.split(':').next().unwrap_or("output").to_string(),
            outcome: Outcome::Failure(format!("not written: {u}")),
            detail: u.clone(),
        })
        .collect()
}

/// The document `rtbench report --format junit` writes when there is no result to
/// show: one suite with one `<error>` case saying so and `why`, so that a station
/// reading the file never takes a missing result for a pass.
pub fn none_found(why: &str) -> String {
    let why = esc(why);
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <testsuites name=\"rtbench self-test\" tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\">\n\
         <testsuite name=\"rtbench self-test\" tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\">\n\
         <testcase classname=\"rtbench.run\" name=\"result\">\n\
         <error message=\"no self-test result found: {why}\" type=\"error\">no self-test result found: {why}</error>\n\
         </testcase>\n\
         </testsuite>\n\
         </testsuites>\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_case_per_check_tuning_item_problem_and_the_verdict() {
        let mut run = crate::results::store::sample_run(0);
        run.tuning = serde_json::json!({"action": "check", "items": [
            {"item": "sysctl.kernel.printk", "status": "deviation", "detail": "found 7", "changed": false},
            {"item": "boot.nohz_full", "status": "not-applicable", "detail": "no such knob", "changed": false},
            {"item": "irq.affinity", "status": "ok", "detail": "", "changed": false}
        ]});
        let x = render(&[&run]);
        let cases = x.matches("<testcase ").count();
        let checks = run.verdict.checks.len();
        assert_eq!(cases, checks + 3 + run.verdict.problems.len() + 1, "{x}");
        assert!(x.contains("name=\"sysctl.kernel.printk\""), "{x}");
        assert!(
            x.contains("<skipped message=\"not-applicable: no such knob\"/>"),
            "{x}"
        );
    }

    /// Out-of-range stored values never reach the document: a duration that is not a
    /// finite non-negative number and a start outside years 0001–9999 are left out; the
    /// document still parses as XML.
    #[test]
    fn out_of_range_durations_and_starts_are_left_out() {
        for (d, start) in [
            (f64::INFINITY, 253_402_300_800),
            (f64::NAN, -62_135_596_801),
            (-1.0, i64::MAX),
            (f64::NEG_INFINITY, i64::MIN),
        ] {
            let mut run = crate::results::store::sample_run(0);
            run.duration_s = d;
            run.start_s = start;
            let x = render(&[&run]);
            assert!(x.contains("<testsuites name=\"rtbench self-test\" tests=\"1\" failures=\"0\" errors=\"0\" skipped=\"1\" time=\"0.000\">"), "{x}");
            assert_eq!(x.matches("time=").count(), 1, "{d}: {x}");
            assert!(!x.contains("timestamp="), "{start}: {x}");
            assert!(
                !x.to_lowercase().contains("inf") && !x.contains("NaN"),
                "{x}"
            );
            roxmltree::Document::parse(&x).unwrap_or_else(|e| panic!("{e}: {x}"));
        }
        assert_eq!(seconds(1.5).as_deref(), Some("1.500"));
        assert_eq!(timestamp(0).as_deref(), Some("1970-01-01T00:00:00"));
        assert_eq!(
            timestamp(253_402_300_799).as_deref(),
            Some("9999-12-31T23:59:59")
        );
        assert_eq!(timestamp(253_402_300_800), None);
    }
}
