//! The output contracts every command keeps (report/output.rs):
//!
//! - with a document on standard output (`--json -`, `sysinfo --json`, ...) standard
//!   output holds exactly that document, and the human text goes to standard error;
//! - files are written with mode 0644 whatever the umask (a collector or a support
//!   engineer reads them as another user).

use crate::common::tune_tree;

use crate::common::*;
use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output};

/// Standard output parses as one JSON document (serde_json rejects trailing text).
fn only_json(what: &str, o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "{what}: standard output is not exactly one JSON document ({e}):\n{}\n--- stderr\n{}",
            stdout(o),
            stderr(o)
        )
    })
}

#[test]
fn json_to_stdout_keeps_stdout_for_json_in_every_command() {
    // Measuring commands, with live progress, a histogram and the setup notice: all of
    // it is text that must go to standard error.
    for (args, text) in [
        (
            "cyclic -a 0 -t 2 -l 300 -i 500 --report-interval 0.05 -h 50 --json -",
            "T: 0 (",
        ),
        (
            "pmq -a 0 -t 2 -l 300 -i 500 --report-interval 0.05 -h 50 --json -",
            "#0: ID",
        ),
        (
            "pipe -a 0 -l 300 -i 500 --report-interval 0.05 -h 50 --json -",
            "#1 -> #0 -> #1",
        ),
        ("pipe --fork -a 0 -l 100 -q --json -", "# pair 0:"),
    ] {
        let o = run(args);
        assert_eq!(o.status.code(), Some(0), "{args}: {}", stderr(&o));
        let v = only_json(args, &o);
        assert_eq!(v["file_version"], 1, "{args}");
        assert!(stderr(&o).contains(text), "{args}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("# Histogram") || args.contains("-q"),
            "{args}"
        );
    }
    let o = run("sysinfo --json");
    assert!(only_json("sysinfo", &o)["release"].is_string());

    // tune --json on a fake tree, check and status.
    let t = tune_tree::Tree::new("contract");
    let cfg = t.join("rtbench.toml");
    std::fs::write(&cfg, t.config_text("")).unwrap();
    for action in ["check", "status"] {
        let o = rtbench()
            .args(["tune", action, "--json", "--config"])
            .arg(&cfg)
            .arg("--sysroot")
            .arg(t.join("root"))
            .output()
            .unwrap();
        only_json(&format!("tune {action} --json"), &o);
    }

    // report --json over a store with a damaged file: the skip notice goes to stderr.
    let dir = TempDir::new("contract-report");
    let st = rtbench()
        .args(["selftest", "--config"])
        .arg(selftest_config(&dir))
        .output()
        .unwrap();
    assert_eq!(st.status.code(), Some(0), "{}", stderr(&st));
    std::fs::write(dir.join("results/run-999999-x.json"), "not json").unwrap();
    for extra in [&[][..], &["--all"]] {
        let o = rtbench()
            .args(["report", "--json", "--dir"])
            .arg(dir.join("results"))
            .args(extra)
            .output()
            .unwrap();
        only_json("report --json", &o);
        assert!(stderr(&o).contains("skipped"), "{}", stderr(&o));
    }
}

fn selftest_config(dir: &Path) -> std::path::PathBuf {
    let p = dir.join("rtbench.toml");
    std::fs::write(&p, crate::common::on_any_kernel(&format!(
            "[selftest]\nmode = \"off\"\nduration = \"1s\"\n[cyclic]\ncpus = \"0\"\n\
             [limits]\nmax_us = 60000000\n[output]\nresults_dir = \"{0}/results\"\nprometheus = \"{0}/rtbench.prom\"\n",
            dir.display()
        )))
    .unwrap();
    p
}

/// rtbench with umask 077, as a hardened service or a careful admin runs it.
fn with_umask_077(args: &[&str]) -> Command {
    let mut c = rtbench();
    c.args(args);
    // SAFETY: umask is async-signal-safe and only changes the child's mask.
    unsafe {
        c.pre_exec(|| {
            libc::umask(0o077);
            Ok(())
        });
    }
    c
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .permissions()
        .mode()
        & 0o7777
}

#[test]
fn files_are_0644_whatever_the_umask() {
    let dir = TempDir::new("contract-mode");
    let d = |n: &str| dir.join(n).display().to_string();
    let (json, hist, svg) = (d("run.json"), d("run.hist"), d("plot.svg"));
    let o = with_umask_077(&[
        "cyclic",
        "-a",
        "0",
        "-l",
        "200",
        "-i",
        "500",
        "-q",
        "-h",
        "100",
        "--histfile",
        &hist,
        "--json",
        &json,
    ])
    .output()
    .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = with_umask_077(&["plot", &json, "-o", &svg])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = with_umask_077(&["selftest", "--config"])
        .arg(selftest_config(&dir))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let stored: Vec<_> = std::fs::read_dir(dir.join("results"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(stored.len(), 1);
    for p in [
        Path::new(&json),
        Path::new(&hist),
        Path::new(&svg),
        &stored[0],
        &dir.join("rtbench.prom"),
    ] {
        assert_eq!(mode(p), 0o644, "{}: mode {:o}", p.display(), mode(p));
    }
    // tune's journal in /run/rtbench (here: the fake tree's journal_dir).
    let t = tune_tree::Tree::new("contract-mode");
    let cfg = t.join("rtbench.toml");
    std::fs::write(&cfg, t.config_text("")).unwrap();
    let o = with_umask_077(&["tune", "apply", "--config"])
        .arg(&cfg)
        .arg("--sysroot")
        .arg(t.join("root"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let journal = rtbench::tune::journal::path(&t.journal_dir());
    assert_eq!(mode(&journal), 0o644, "{}", journal.display());
}
