//! `rtbench monitor`'s log read by a person (`--log-format text`, the default without
//! journald): the first line says what is monitored, the window and where the figures
//! go, before any window ends; a missing configuration is said as the self-test says
//! it; every line carries its time.
#![cfg(feature = "monitor")]

use crate::common::*;

/// `2026-12-01T20:10:00Z ` at the start of `line`: ISO 8601 UTC, the one date format
/// of rtbench's texts (src/date.rs).
fn stamped(line: &str) -> bool {
    let b = line.as_bytes();
    line.len() > 21
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[13] == b':'
        && b[16] == b':'
        && b[19] == b'Z'
        && b[20] == b' '
        && line[..4].bytes().all(|c| c.is_ascii_digit())
}

#[test]
fn the_text_log_starts_at_once_says_the_defaults_and_stamps_every_line() {
    // No --config: /etc/rtbench/rtbench.toml, which this test binary sees empty
    // (tests/common/isolate.rs), so the documented defaults apply.
    assert!(!std::path::Path::new("/etc/rtbench/rtbench.toml").exists());
    let t = TempDir::new("monitor-text");
    let dir = t.join("mon");
    let prom = t.join("monitor.prom");
    let mut c = rtbench();
    c.args(["monitor", "--log-format", "text", "-a", "0"])
        .args(["--window", "1h", "--dir"])
        .arg(&dir)
        .arg("--prometheus")
        .arg(&prom);
    let r = Running::spawn(&mut c);
    // Said at the start, an hour before the first window's figures.
    let started = r.wait_stderr(0, "the start line", |l| l.contains("monitor started on"));
    let lines = r.stderr_lines();
    let start = &lines[started];
    assert!(
        start.contains("window 3600 s (first figures at 20"),
        "{start}"
    );
    assert!(
        start.contains(&format!(
            "windows to {}, Prometheus textfile {}",
            dir.join("windows.jsonl").display(),
            prom.display()
        )),
        "{start}"
    );
    let defaults = lines[..started]
        .iter()
        .find(|l| l.contains("no configuration at /etc/rtbench/rtbench.toml"))
        .unwrap_or_else(|| panic!("no defaults line before the start: {lines:#?}"));
    assert!(
        defaults.contains("rtbench: warning: no configuration at")
            && defaults.contains("using the documented defaults (no [monitor.limits]"),
        "{defaults}"
    );
    wait_samples(r.pid(), "rtbench-M", 1, 20);
    r.signal(libc::SIGTERM);
    let o = r.finish();
    assert_eq!(o.status.code(), Some(143), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("monitor CPU 0: max "), "{err}");
    assert!(err.contains("monitor stopped (SIGTERM)"), "{err}");
    for l in err.lines().chain(stdout(&o).lines()) {
        assert!(stamped(l), "a line without its time: {l:?}");
    }
}
