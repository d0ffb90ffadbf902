//! Acceptance: exit codes that say what happened, refusals that name the real limit,
//! and messages that stay one short line. Each test runs the real binary and checks one
//! kind of fault, every place it has:
//!
//! 1. a path that cannot name a file (a NUL byte, empty, a component or the whole too
//!    long) is refused at load or plan, exit 2, one line naming the key or option;
//! 2. `report --since` with a window store that cannot be read (a FIFO) is bad input,
//!    exit 2, not a limit exceeded (1);
//! 3. a refusal of the kernel names the limit that refused it (`pids.max` of the
//!    cgroup, `RLIMIT_NOFILE`), for every measuring command;
//! 4. messages are one line of bounded length that shows control and bidi characters
//!    escaped, names the option of a non-UTF-8 or negative value, and keeps table
//!    columns apart.
//!
//! cyclictest's `-a '!0'` and `-h N -H N` are compared with the real cyclictest in
//! `tests/cli/harness_compat.rs`.

use crate::common::{rtbench, stderr, stdout, Running, TempDir};
use std::path::Path;
use std::process::Output;

/// Runs rtbench with `args`, killed (and the test failed) after common::BOUND.
fn run_bounded(args: &[&str]) -> Output {
    Running::spawn(rtbench().args(args)).finish()
}

/// The one line of standard error, asserting there is exactly one.
fn one_line(o: &Output) -> String {
    let e = stderr(o);
    let lines: Vec<&str> = e.lines().filter(|l| !l.starts_with("# ")).collect();
    assert_eq!(lines.len(), 1, "expected one line on stderr, got {e:?}");
    lines[0].to_string()
}

/// Asserts exit 2, nothing measured, one line containing every needle.
fn refused(o: &Output, needles: &[&str]) -> String {
    let line = one_line(o);
    assert_eq!(o.status.code(), Some(2), "{line}");
    assert!(!stdout(o).contains("T:"), "measured anyway: {}", stdout(o));
    for n in needles {
        assert!(line.contains(n), "{n:?} not in {line:?}");
    }
    line
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

// ---- 1. Paths that cannot name a file ----

#[test]
fn a1_config_paths_that_cannot_name_a_file_are_refused_at_load() {
    let d = TempDir::new("accept-paths");
    let long = format!("/tmp/{}", "x".repeat(300));
    let keys = [
        ("monitor", "prometheus", "/tmp/a\\u0000b.prom"),
        ("monitor", "dir", "/tmp/a\\u0000b"),
        ("output", "results_dir", "/tmp/a\\u0000b"),
        ("output", "fallback_dir", "/tmp/a\\u0000b"),
        ("output", "prometheus", "/tmp/a\\u0000b.prom"),
        ("tuning", "journal_dir", "/tmp/a\\u0000b"),
        ("monitor", "prometheus", ""),
        ("output", "results_dir", long.as_str()),
        ("monitor", "dir", long.as_str()),
    ];
    for (section, key, value) in keys {
        let cfg = d.join("c.toml");
        std::fs::write(&cfg, format!("[{section}]\n{key} = \"{value}\"\n")).unwrap();
        let o = run_bounded(&["config", "check", s(&cfg)]);
        let line = refused(&o, &[&format!("{section}.{key}"), "path "]);
        let shown = line.len() - s(&cfg).len();
        assert!(
            shown <= 200,
            "{shown} bytes besides the file's name: {line}"
        );
    }
}

#[test]
fn a1_command_line_paths_that_cannot_name_a_file_are_refused_before_the_run() {
    let d = TempDir::new("accept-cli-paths");
    let long = d.join(format!("{}.prom", "y".repeat(300)));
    let deep = d.join("y".repeat(300)).join("out.json");
    let o = run_bounded(&[
        "monitor",
        "--dir",
        s(&d),
        "--prometheus",
        s(&long),
        "-D",
        "1",
    ]);
    refused(&o, &["--prometheus", "component of 305 bytes"]);
    let o = run_bounded(&["monitor", "--dir", s(&deep), "-D", "1"]);
    refused(&o, &["--dir", "component of 300 bytes"]);
    let o = run_bounded(&["cyclic", "-l", "3", "-q", "--json", s(&deep)]);
    refused(&o, &["--json", "component of 300 bytes"]);
}

// ---- 2. A window store that cannot be read ----

#[test]
fn a2_report_since_with_a_fifo_store_is_bad_input() {
    let d = TempDir::new("accept-fifo-store");
    let fifo = d.join("windows.jsonl");
    let c = std::ffi::CString::new(s(&fifo)).unwrap();
    // SAFETY: a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    for json in [false, true] {
        let mut args = vec!["report", "--since", "1h", "--dir", s(&d)];
        if json {
            args.push("--json");
        }
        let o = run_bounded(&args);
        refused(&o, &["--since", "FIFO", "windows.jsonl"]);
        assert!(stdout(&o).is_empty(), "{}", stdout(&o));
    }
}

// ---- 3. Refusals name the limit that refused ----

/// A pids cgroup of this machine's pids controller, removed on drop (after its
/// processes ended), also when an assertion fails: cgroup v1's `pids` hierarchy, or a
/// child of this process's own cgroup v2 where that delegates `pids`.
struct PidsCgroup(std::path::PathBuf);

impl PidsCgroup {
    fn new(tag: &str, max: u32) -> Option<PidsCgroup> {
        let v1 = Path::new("/sys/fs/cgroup/pids");
        let parent = if v1.join("cgroup.procs").exists() {
            v1.to_path_buf()
        } else {
            let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
            let rel = own.lines().find_map(|l| l.strip_prefix("0::"))?;
            let dir = Path::new("/sys/fs/cgroup").join(rel.trim_start_matches('/'));
            let delegated = std::fs::read_to_string(dir.join("cgroup.subtree_control")).ok()?;
            if !delegated.split_whitespace().any(|c| c == "pids") {
                return None;
            }
            dir
        };
        let d = parent.join(format!("rtbench-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir(&d);
        std::fs::create_dir(&d).ok()?;
        let g = PidsCgroup(d);
        std::fs::write(g.0.join("pids.max"), max.to_string()).unwrap();
        Some(g)
    }

    /// `rtbench ARGS` started inside this cgroup.
    fn run(&self, args: &[&str]) -> Output {
        std::process::Command::new("sh")
            .arg("-c")
            .arg(format!(
                "echo $$ > {}/cgroup.procs && exec \"$0\" \"$@\"",
                self.0.display()
            ))
            .arg(crate::common::exe())
            .args(args)
            .output()
            .unwrap()
    }
}

impl Drop for PidsCgroup {
    fn drop(&mut self) {
        for _ in 0..100 {
            if std::fs::remove_dir(&self.0).is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        eprintln!("could not remove {}", self.0.display());
    }
}

/// The one `rtbench: ` line of a refused run, asserting exit 3.
fn refusal_line(o: &Output) -> String {
    let err = stderr(o);
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("rtbench: ")).collect();
    assert_eq!(lines.len(), 1, "one error line: {err}");
    assert_eq!(o.status.code(), Some(3), "{err}");
    lines[0].to_string()
}

/// Every measuring command refused a thread or a fork by a full pids cgroup names
/// pids.max — also `pipe`, whose other threads of the failed start have ended by the
/// time the cause is looked for (pids.current is below the limit again; pids.events
/// counts the refusal).
#[test]
fn a3_a_full_pids_cgroup_is_named_by_every_measuring_command() {
    let Some(g) = PidsCgroup::new("accept-pids", 4) else {
        eprintln!("skipped: no pids cgroup controller to make a child of");
        return;
    };
    for args in [
        ["pipe", "-t", "2", "-l", "10", "-q"].as_slice(),
        &["pipe", "-t", "2", "--fork", "-l", "10", "-q"],
        &["pipe", "-t", "3", "-l", "10", "-q"],
        &["pmq", "-t", "2", "-l", "10", "-q"],
        &["cyclic", "-t", "4", "-l", "10", "-q"],
    ] {
        let line = refusal_line(&g.run(args));
        assert!(
            line.contains("(os error 11)") && line.contains("has pids.max = 4"),
            "{args:?}: {line}"
        );
        assert!(!line.contains("no task limit"), "{args:?}: {line}");
    }
}

/// Too small an open-file limit (`ulimit -n`, set with prlimit) is named as
/// RLIMIT_NOFILE for a pipe and a message queue alike, never as RLIMIT_MSGQUEUE.
#[test]
fn a3_too_few_descriptors_name_rlimit_nofile() {
    for (args, needle) in [
        (["pipe", "-t", "2", "-l", "5", "-q"], "pipe2: "),
        (["pmq", "-t", "2", "-l", "5", "-q"], "mq_open: "),
    ] {
        let o = std::process::Command::new("prlimit")
            .arg("--nofile=5")
            .arg(crate::common::exe())
            .args(args)
            .output()
            .unwrap();
        let line = refusal_line(&o);
        assert!(
            line.contains(needle)
                && line.contains("(os error 24); RLIMIT_NOFILE is 5 descriptors (ulimit -n)"),
            "{args:?}: {line}"
        );
        assert!(!line.contains("RLIMIT_MSGQUEUE"), "{args:?}: {line}");
    }
}
