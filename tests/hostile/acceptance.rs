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

use crate::common::cgroup::Cgroup;
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
    // The same when the older file is readable: a summary without the newest
    // windows would judge only the rest of the period.
    std::fs::write(d.join("windows.1.jsonl"), "").unwrap();
    let o = run_bounded(&["report", "--since", "1h", "--dir", s(&d)]);
    refused(&o, &["--since", "FIFO", "windows.jsonl"]);
    // A link, dangling or not, is not followed (and, alone, is still found as the
    // store it stands for).
    let l = TempDir::new("accept-link-store");
    std::os::unix::fs::symlink(l.join("gone"), l.join("windows.1.jsonl")).unwrap();
    let o = run_bounded(&["report", "--since", "1h", "--dir", s(&l)]);
    refused(&o, &["--since", "symbolic link", "windows.1.jsonl"]);
}

// ---- 3. Refusals name the limit that refused ----

/// A pids cgroup of this machine's pids controller with `pids.max` = `max`: cgroup
/// v1's `pids` hierarchy, or a child of this process's own cgroup v2 where that
/// delegates `pids`; `None` where neither is there.
fn pids_cgroup(tag: &str, max: u32) -> Option<Cgroup> {
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
    let g = Cgroup::new(&parent, tag)?;
    std::fs::write(g.path().join("pids.max"), max.to_string()).unwrap();
    Some(g)
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
    let Some(g) = pids_cgroup("accept-pids", 4) else {
        crate::common::skip("no pids cgroup controller to make a child of");
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
    // Wherever the descriptors run out first (the PM QoS file, a pipe, a queue),
    // every line that reports EMFILE names the limit.
    for n in 5..=9 {
        for cmd in ["cyclic", "pipe", "pmq"] {
            let o = std::process::Command::new("prlimit")
                .arg(format!("--nofile={n}"))
                .arg(crate::common::exe())
                .args([cmd, "-t", "2", "-l", "5", "-q"])
                .output()
                .unwrap();
            for l in stderr(&o).lines().filter(|l| l.contains("(os error 24)")) {
                assert!(
                    l.contains(&format!("RLIMIT_NOFILE is {n} descriptors")),
                    "{cmd} with {n} descriptors: {l}"
                );
            }
        }
    }
}

// ---- 4. Messages stay one short line ----

/// The longest a refusal line may be besides a file name it names.
const LINE_BOUND: usize = 240;

/// Asserts `line` is short and shows no raw control or bidi character.
fn short_and_visible(line: &str, besides: &str) {
    let n = line.chars().count() - besides.chars().count();
    assert!(n <= LINE_BOUND, "{n} characters: {line}");
    let hidden = |c: char| {
        (c != '\t' && c.is_control())
            || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    assert!(
        !line.contains(hidden),
        "raw control or bidi character: {line:?}"
    );
}

#[test]
fn a4_long_values_are_shortened_wherever_they_are_echoed() {
    let d = TempDir::new("accept-long");
    // 200 KB from the configuration, as a value the parser types and as one it checks.
    let big = "7".repeat(200_000);
    for text in [
        format!("[cyclic]\npriority = \"{big}\"\n"),
        format!("[cyclic]\ncpus = \"{big}\"\n"),
        format!("[monitor]\nwindow = \"{big}x\"\n"),
        format!("[load]\nspec = \"vm:1:{big}\"\n"),
    ] {
        let cfg = d.join("c.toml");
        std::fs::write(&cfg, &text).unwrap();
        let o = run_bounded(&["config", "check", s(&cfg)]);
        let line = refused(&o, &[]);
        short_and_visible(&line, s(&cfg));
    }
    // 1 MB from a dump token.
    let token = "9".repeat(1 << 20);
    let dump = d.join("h.txt");
    std::fs::write(
        &dump,
        format!(
            "# Histogram\n000001 {token}x\n# Min Latencies: 00001\n# Avg Latencies: 00001\n\
             # Max Latencies: 00001\n# Histogram Overflows: 00000\n\
             # Histogram Overflow at cycle number:\n# Thread 0:\n"
        ),
    )
    .unwrap();
    let o = run_bounded(&["plot", s(&dump), "-o", s(&d.join("p.svg"))]);
    short_and_visible(&refused(&o, &["bytes)"]), s(&dump));
    // 100 KB from the command line: a value, a stray word, clap's own echo.
    let arg = "5".repeat(100_000);
    let bad = format!("{arg}x");
    for args in [
        vec!["cyclic", "-a", bad.as_str(), "-l", "1"],
        vec!["cyclic", "-l", "1", bad.as_str()],
        vec!["cyclic", "-i", arg.as_str(), "-l", "1"],
        vec!["load", "--load", bad.as_str(), "-D", "1"],
        vec!["report", "--since", bad.as_str()],
    ] {
        let o = run_bounded(&args);
        short_and_visible(&refused(&o, &["bytes)"]), "");
    }
}

#[test]
fn a4_bidi_and_control_characters_are_shown_escaped() {
    let d = TempDir::new("accept-bidi");
    for v in ["1\u{202e}0", "0\u{2066}1", "\u{200f}2", "3\u{9b}1"] {
        let o = run_bounded(&["cyclic", "-a", v, "-l", "1"]);
        let line = refused(&o, &["-a "]);
        short_and_visible(&line, "");
        let code = format!(
            "\\u{{{:x}}}",
            v.chars().find(|c| !c.is_ascii_digit()).unwrap() as u32
        );
        assert!(line.contains(&code), "{code} not in {line}");
    }
    let cfg = d.join("c.toml");
    std::fs::write(&cfg, "[cyclic]\ncpus = \"0\u{202e}1\"\n").unwrap();
    let o = run_bounded(&["config", "check", s(&cfg)]);
    let line = refused(&o, &["cyclic.cpus", "\\u{202e}"]);
    short_and_visible(&line, s(&cfg));
}

#[test]
fn a4_a_value_that_is_not_utf8_names_its_option() {
    use std::os::unix::ffi::OsStrExt;
    let bad = std::ffi::OsStr::from_bytes(b"\xff1h");
    for (args, flag) in [
        (vec!["report", "--since"], "--since \\xff1h"),
        (vec!["monitor", "--window"], "--window \\xff1h"),
        (vec!["cyclic", "-D"], "--duration \\xff1h"),
        (
            vec!["diagnose", "-o", "/tmp/x.tar.gz", "--since"],
            "--since \\xff1h",
        ),
    ] {
        let o = Running::spawn(rtbench().args(&args).arg(bad)).finish();
        let line = refused(&o, &[flag, "not valid UTF-8"]);
        short_and_visible(&line, "");
    }
    let mut joined = b"--window=".to_vec();
    joined.extend_from_slice(b"\xfe");
    let o = Running::spawn(
        rtbench()
            .arg("monitor")
            .arg(std::ffi::OsStr::from_bytes(&joined)),
    )
    .finish();
    refused(&o, &["--window \\xfe: not valid UTF-8"]);
}

#[test]
fn a4_negative_values_are_taken_as_the_value_and_refused_by_name() {
    let d = TempDir::new("accept-negative");
    let out = d.join("p.svg");
    for (args, needle) in [
        (vec!["report", "--since", "-1d"], "--since -1d: is negative"),
        (
            vec!["monitor", "-i", "-1"],
            "'--interval <US>': is negative",
        ),
        (
            vec!["monitor", "--window", "-5m"],
            "--window -5m: is negative",
        ),
        (vec!["monitor", "-D", "-1"], "-D -1: is negative"),
        (
            vec!["load", "-D", "-3s", "--load", "cpu:1"],
            "-D -3s: is negative",
        ),
        (
            vec!["diagnose", "-o", s(&d.join("x.tgz")), "--since", "-1d"],
            "--since -1d: is negative",
        ),
        (vec!["cyclic", "-D", "-1", "-l", "1"], "-D -1: is negative"),
        (vec!["cyclic", "--explain", "-5", "-l", "1"], "is negative"),
        (
            vec!["plot", "-", "-o", s(&out), "--x-max", "-inf"],
            "--x-max -inf: not a finite number",
        ),
        (
            vec!["plot", "-", "-o", s(&out), "--x-max=-5"],
            "--x-max -5: not a finite number",
        ),
    ] {
        let o = run_bounded(&args);
        let line = refused(&o, &[needle]);
        assert!(!line.contains("unexpected argument"), "{line}");
    }
}

#[test]
fn a4_an_empty_histogram_is_not_said_to_end_at_0_us() {
    let d = TempDir::new("accept-empty-hist");
    let dump = d.join("h.txt");
    std::fs::write(
        &dump,
        "# Histogram\n# Min Latencies: 00001\n# Avg Latencies: 00001\n\
         # Max Latencies: 00001\n# Histogram Overflows: 00005\n\
         # Histogram Overflow at cycle number:\n# Thread 0:\n",
    )
    .unwrap();
    let o = run_bounded(&["plot", s(&dump), "-o", s(&d.join("p.svg"))]);
    let line = refused(&o, &["all 5 samples are histogram overflows"]);
    assert!(!line.contains(" 0 µs"), "{line}");
}

#[test]
fn a4_the_since_table_keeps_its_columns_apart_for_huge_values() {
    let d = TempDir::new("accept-since-table");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let m = u64::MAX;
    let line = format!(
        "{{\"seq\":1,\"start_s\":{},\"end_s\":{},\"duration_s\":300.0,\"cpus\":[{{\"cpu\":4095,\
         \"samples\":{m},\"min_ns\":1,\"avg_ns\":{m},\"p99_ns\":{m},\"p999_ns\":{m},\"max_ns\":{m},\
         \"overruns\":{m},\"missed_periods\":0,\"max_at_ms\":{}}}]}}\n",
        now - 300,
        now - 1,
        (now - 2) * 1000
    );
    std::fs::write(d.join("windows.jsonl"), line).unwrap();
    let o = run_bounded(&["report", "--since", "1h", "--dir", s(&d)]);
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    let head = lines
        .iter()
        .position(|l| l.trim_start().starts_with("cpu "))
        .unwrap_or_else(|| panic!("no table: {text}{}", stderr(&o)));
    assert_eq!(lines[head].split_whitespace().count(), 10, "{text}");
    assert_eq!(lines[head + 1].split_whitespace().count(), 9, "{text}");
}
