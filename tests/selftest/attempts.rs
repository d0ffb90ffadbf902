//! One record per self-test attempt, and one exit code for every output: a self-test
//! that never reached a verdict (its load exited at once, its configuration refused)
//! is what `rtbench report` shows in every format — never an older green run —, and a
//! pass whose results or textfile could not be written is exit 1 in the exit status,
//! the journal summary, the stored record, the report and the Prometheus textfile alike
//! (src/results/attempt.rs, src/results/outcome.rs).

use crate::common::*;
use std::path::Path;
use std::process::Output;

const SUMMARY: &str = "7b1dd0eea94d4cc4bd8f9e6c91b6465d";

/// A 1 s, tuning-off configuration in `dir` named `name`, storing in `dir/results`
/// and `dir/run`, with `extra` appended.
fn config(dir: &Path, name: &str, extra: &str) -> std::path::PathBuf {
    let text = format!(
        "[selftest]\nmode = \"off\"\nduration = \"1s\"\n[limits]\nmax_us = 10000000\n\
         [output]\nresults_dir = \"{}\"\nfallback_dir = \"{}\"\n{extra}",
        dir.join("results").display(),
        dir.join("run").display(),
    );
    let p = dir.join(name);
    std::fs::write(&p, on_any_kernel(&text)).unwrap();
    p
}

fn selftest(cfg: &Path, label: &str) -> Output {
    rtbench()
        .args(["selftest", "--log-format", "logfmt", "--config"])
        .arg(cfg)
        .env("RTBENCH_UNIT_LABEL", label)
        .output()
        .unwrap()
}

fn report(cfg: &Path, format: &str, label: &str) -> Output {
    rtbench()
        .args(["report", "--format", format, "--config"])
        .arg(cfg)
        .env("RTBENCH_UNIT_LABEL", label)
        .output()
        .unwrap()
}

#[test]
fn an_attempt_without_a_verdict_is_shown_never_an_older_green_run() {
    let dir = TempDir::new("st-attempt");
    let good = config(&dir, "good.toml", "");
    let o = selftest(&good, "UNIT-A");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // The load exits at once: stopped before a verdict, exit 3.
    let broken = config(&dir, "broken.toml", "[load]\ncmd = \"false\"\n");
    let o = selftest(&broken, "UNIT-B");
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let stored = stored_results(&dir);
    assert_eq!(stored.len(), 2, "one record per attempt");
    let last = &stored[1];
    assert_eq!(last["attempt"]["state"], "stopped", "{last}");
    assert_eq!(last["attempt"]["stage"], "load", "{last}");
    assert_eq!(last["exit_code"], 3);
    assert_eq!(last["unit"]["label"], "UNIT-B");
    assert_eq!(stored[0]["attempt"]["state"], "judged");
    // Every format shows the stopped attempt and exits non-zero.
    let j = report(&good, "junit", "UNIT-B");
    assert_eq!(j.status.code(), Some(1), "{}", stderr(&j));
    let xml = stdout(&j);
    roxmltree::Document::parse(&xml).unwrap_or_else(|e| panic!("{e}: {xml}"));
    assert!(
        xml.contains("<property name=\"unit.label\" value=\"UNIT-B\"/>"),
        "{xml}"
    );
    assert!(
        xml.contains("<testcase classname=\"rtbench.run\" name=\"verdict\">\n      <error"),
        "{xml}"
    );
    assert!(xml.contains("stopped before a verdict at load"), "{xml}");
    assert!(!stderr(&j).contains("RTBENCH_UNIT_LABEL"), "{}", stderr(&j));
    let t = report(&good, "table", "UNIT-A");
    assert_eq!(t.status.code(), Some(1), "{}", stderr(&t));
    assert!(
        stdout(&t).contains("rtbench self-test STOPPED at"),
        "{}",
        stdout(&t)
    );
    // The line's label is not the label of the run shown: said.
    assert!(
        stderr(&t).contains("RTBENCH_UNIT_LABEL is \"UNIT-A\" but the run shown"),
        "{}",
        stderr(&t)
    );
    let js = report(&good, "json", "UNIT-B");
    assert_eq!(js.status.code(), Some(1), "{}", stderr(&js));
    let v: serde_json::Value = serde_json::from_str(&stdout(&js)).unwrap();
    assert_eq!(v["attempt"]["state"], "stopped");
    // A configuration found but refused is an attempt too (exit 2), and the newest.
    let invalid = dir.join("invalid.toml");
    let text = std::fs::read_to_string(&good).unwrap();
    std::fs::write(
        &invalid,
        text.replace("max_us = 10000000", "max_us = \"x\""),
    )
    .unwrap();
    let o = selftest(&invalid, "UNIT-C");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let stored = stored_results(&dir);
    assert_eq!(stored.len(), 3);
    assert_eq!(
        stored[2]["attempt"]["stage"], "configuration",
        "{}",
        stored[2]
    );
    assert_eq!(stored[2]["unit"]["label"], "UNIT-C");
    let t = report(&good, "table", "UNIT-C");
    assert_eq!(t.status.code(), Some(1), "{}", stderr(&t));
    assert!(stdout(&t).contains("at configuration"), "{}", stdout(&t));
    // A new green attempt is shown again.
    let o = selftest(&good, "UNIT-C");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(report(&good, "junit", "UNIT-C").status.code(), Some(0));
}

#[test]
fn junit_is_written_also_when_there_is_no_result() {
    let dir = TempDir::new("st-attempt-none");
    let cfg = config(&dir, "rtbench.toml", "");
    let j = report(&cfg, "junit", "");
    assert_eq!(j.status.code(), Some(2), "{}", stderr(&j));
    let xml = stdout(&j);
    let doc = roxmltree::Document::parse(&xml).unwrap_or_else(|e| panic!("{e}: {xml}"));
    let errors: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("error"))
        .collect();
    assert_eq!(errors.len(), 1, "{xml}");
    assert!(
        errors[0]
            .attribute("message")
            .unwrap()
            .contains("no self-test result found"),
        "{xml}"
    );
}

/// The exit code each output shows for the newest run: the exit status, the journal
/// summary's, the stored record's (or its fallback copy's), `report`'s.
fn codes(o: &Output, dir: &Path, cfg: &Path) -> (i32, String, i64, i32) {
    let e = entries(o);
    let s = with_id(&e, SUMMARY);
    let summary = s
        .last()
        .map(|m| m["RTBENCH_EXIT_STATUS"].clone())
        .unwrap_or_default();
    let kept = stored_results(dir).pop().unwrap_or_else(|| {
        let f = dir.join("run/unstored-run.json");
        serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap()
    });
    let r = report(cfg, "table", "");
    (
        o.status.code().unwrap(),
        summary,
        kept["exit_code"].as_i64().unwrap(),
        r.status.code().unwrap(),
    )
}

#[test]
fn a_pass_whose_output_was_not_written_is_exit_1_in_every_output() {
    let dir = TempDir::new("st-attempt-outputs");
    // The results store under a file: not stored, kept in the fallback copy.
    std::fs::write(dir.join("afile"), "").unwrap();
    let text = std::fs::read_to_string(config(&dir, "x.toml", "")).unwrap();
    let ro = dir.join("ro.toml");
    let prom = dir.join("rtbench.prom");
    std::fs::write(
        &ro,
        text.replace(
            &format!("results_dir = \"{}\"", dir.join("results").display()),
            &format!(
                "results_dir = \"{}\"\nprometheus = \"{}\"",
                dir.join("afile/r").display(),
                prom.display()
            ),
        ),
    )
    .unwrap();
    let o = selftest(&ro, "U");
    assert_eq!(
        codes(&o, &dir, &ro),
        (1, "1".into(), 1, 1),
        "{}",
        stderr(&o)
    );
    let p = std::fs::read_to_string(&prom).unwrap();
    assert!(p.contains("\nrtbench_selftest_exit_code 1\n"), "{p}");
    assert!(p.contains("\nrtbench_selftest_pass 0\n"), "{p}");
    assert!(p.contains("\nrtbench_selftest_stored 0\n"), "{p}");
    let j = report(&ro, "junit", "");
    assert_eq!(j.status.code(), Some(1));
    assert!(stdout(&j).contains("failures=\"1\""), "{}", stdout(&j));
    // The textfile's path names a directory: not written, exit 1 everywhere.
    std::fs::create_dir(dir.join("promdir")).unwrap();
    let pd = config(
        &dir,
        "pd.toml",
        &format!("prometheus = \"{}\"\n", dir.join("promdir").display()),
    );
    let o = selftest(&pd, "U");
    assert_eq!(
        codes(&o, &dir, &pd),
        (1, "1".into(), 1, 1),
        "{}",
        stderr(&o)
    );
    let s = with_id(&entries(&o), SUMMARY)[0].clone();
    assert!(s["MESSAGE"].contains("not written: prometheus"), "{s:?}");
    let kept = stored_results(&dir).pop().unwrap();
    assert!(
        kept["unwritten"][0]
            .as_str()
            .unwrap()
            .starts_with("prometheus:"),
        "{kept}"
    );
    let j = report(&pd, "junit", "");
    assert_eq!(j.status.code(), Some(1));
    assert!(
        stdout(&j).contains("classname=\"rtbench.output\""),
        "{}",
        stdout(&j)
    );
}

/// A self-test killed before its verdict (SIGKILL, as a power loss or the OOM killer
/// ends it) leaves its started record and a textfile that is not a pass: the fleet
/// never reads an older run's pass for this attempt.
#[test]
fn a_killed_attempt_leaves_no_older_pass_in_the_textfile_or_the_report() {
    let dir = TempDir::new("st-attempt-killed");
    let prom = dir.join("rtbench.prom");
    let extra = format!("prometheus = \"{}\"\n", prom.display());
    let good = config(&dir, "good.toml", &extra);
    let o = selftest(&good, "UNIT-A");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = std::fs::read_to_string(&prom).unwrap();
    assert!(text.contains("\nrtbench_selftest_pass 1\n"), "{text}");
    // A long attempt, killed once its record is stored (the second run file).
    let long = config(&dir, "long.toml", &extra);
    let body = std::fs::read_to_string(&long)
        .unwrap()
        .replace("duration = \"1s\"", "duration = \"60s\"");
    std::fs::write(&long, body).unwrap();
    let mut child = rtbench()
        .args(["selftest", "--log-format", "logfmt", "--config"])
        .arg(&long)
        .env("RTBENCH_UNIT_LABEL", "UNIT-A")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_until("the attempt's started record", || {
        (stored_results(&dir).len() == 2).then_some(())
    });
    let text = wait_until("the textfile of the started attempt", || {
        std::fs::read_to_string(&prom)
            .ok()
            .filter(|t| t.contains("\nrtbench_selftest_pass 0\n"))
    });
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(!text.contains("\nrtbench_selftest_exit_code 0\n"), "{text}");
    let t = report(&good, "table", "UNIT-A");
    assert_eq!(t.status.code(), Some(1), "{}", stderr(&t));
    assert!(stdout(&t).contains("STARTED"), "{}", stdout(&t));
}

/// An environment the run refuses (a unit label with a control character) is an
/// attempt too: stopped at `environment`, exit 2, and the report shows it, not the
/// older green run.
#[test]
fn a_refused_environment_is_an_attempt_shown_instead_of_the_older_pass() {
    let dir = TempDir::new("st-attempt-env");
    let good = config(&dir, "good.toml", "");
    let o = selftest(&good, "UNIT-A");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = selftest(&good, "A\u{1b}[2J7");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let stored = stored_results(&dir);
    assert_eq!(stored.len(), 2, "one record per attempt");
    assert_eq!(stored[1]["attempt"]["state"], "stopped", "{}", stored[1]);
    assert_eq!(
        stored[1]["attempt"]["stage"], "environment",
        "{}",
        stored[1]
    );
    for format in ["table", "json", "junit"] {
        let r = report(&good, format, "UNIT-A");
        assert_eq!(r.status.code(), Some(1), "{format}: {}", stderr(&r));
        assert!(!stdout(&r).contains('\u{1b}'), "{format}: {}", stdout(&r));
    }
}

/// When neither the store nor the fallback directory takes the record (both
/// read-only), the attempt says so on standard error: `report` cannot show it.
#[test]
fn a_record_written_nowhere_is_said() {
    let dir = TempDir::new("st-attempt-nowhere");
    std::fs::create_dir_all(dir.join("ro")).unwrap();
    let cfg = dir.join("bad.toml");
    std::fs::write(
        &cfg,
        on_any_kernel(&format!(
            "[selftest]\nmode = \"off\"\nduration = \"1s\"\n[limits]\nmax_us = 10000000\n\
             [load]\ncmd = \"false\"\n[output]\nresults_dir = \"{0}/ro/results\"\n\
             fallback_dir = \"{0}/ro/run\"\n",
            dir.path().display()
        )),
    )
    .unwrap();
    let o = std::process::Command::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-ec"])
        .arg("mount -t tmpfs -o ro rtbench-test \"$D/ro\"; exec \"$RTBENCH\" selftest --log-format logfmt --config \"$D/bad.toml\"")
        .env("RTBENCH", exe())
        .env("D", dir.path())
        .env_remove("INVOCATION_ID")
        .env_remove("RTBENCH_TRIGGER")
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(
        err.contains("this attempt's record was written nowhere"),
        "{err}"
    );
}

/// The textfile is a file rtbench keeps and rewrites at every boot: a link at its path
/// (here to /dev/null) is never followed or written through; the output is not
/// written and the run is exit 1, the link left as it was.
#[test]
fn a_link_at_the_textfile_is_not_written_through() {
    let dir = TempDir::new("st-attempt-link");
    let prom = dir.join("rtbench.prom");
    std::os::unix::fs::symlink("/dev/null", &prom).unwrap();
    let cfg = config(
        &dir,
        "link.toml",
        &format!("prometheus = \"{}\"\n", prom.display()),
    );
    let o = selftest(&cfg, "UNIT-A");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_link(&prom).unwrap(),
        std::path::Path::new("/dev/null")
    );
    let t = report(&cfg, "table", "UNIT-A");
    assert_eq!(t.status.code(), Some(1), "{}", stderr(&t));
    assert!(
        stdout(&t).contains("NOT WRITTEN: prometheus: is a symbolic link"),
        "{}",
        stdout(&t)
    );
}
