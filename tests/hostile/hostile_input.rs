//! Odd and hostile input: the inputs that a property-based run found, each kept as a
//! regression test on the real binary. Every one of them failed before its fix (the
//! points below say what each did; docs/TESTING.md lists the faults); the property tests
//! that generate such inputs are in `tests/hostile/hostile_props.rs`.
//!
//! 1. an output path that names a device, FIFO or symlink is written into (as a plain
//!    open would), never replaced by a regular file: nodes made with mknod(2) in a
//!    temporary directory, and `/dev/null` itself only inside a private mount
//!    namespace whose `/dev` is a fresh tmpfs — never the host's `/dev`;
//! 2. numbers from input never wrap: out of range is exit 2 naming the value;
//! 3. no input reaches a panic;
//! 4. special files in the results directory are skipped, and said to be;
//! 5. a bad output or input path is exit 2 before anything runs;
//! 6. messages stay on one line and echo the value once.

use crate::common::{rtbench, stderr, stdout, Running, TempDir};
use std::ffi::CString;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs rtbench with `args`, killed (and the test failed) after common::BOUND: an
/// input that makes rtbench block forever is one of the faults tested here.
fn run_bounded(args: &[&str]) -> Output {
    Running::spawn(rtbench().args(args)).finish()
}

fn mknod(path: &Path, major: u32, minor: u32) {
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid C string; mknod has no other preconditions.
    let rc = unsafe {
        libc::mknod(
            c.as_ptr(),
            libc::S_IFCHR | 0o666,
            libc::makedev(major, minor),
        )
    };
    assert_eq!(
        rc,
        0,
        "mknod {}: {}",
        path.display(),
        std::io::Error::last_os_error()
    );
}

fn mkfifo(path: &Path) {
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid C string.
    let rc = unsafe { libc::mkfifo(c.as_ptr(), 0o644) };
    assert_eq!(rc, 0, "mkfifo {}", path.display());
}

fn is_char_device(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_char_device())
}

/// The one line of standard error (asserting there is exactly one).
fn one_line(o: &Output) -> String {
    let e = stderr(o);
    let lines: Vec<&str> = e.lines().filter(|l| !l.starts_with("# ")).collect();
    assert_eq!(lines.len(), 1, "expected one line on stderr, got {e:?}");
    lines[0].to_string()
}

/// Asserts exit 2 before anything ran (no `T:` line), one line naming `needle`.
fn usage_error(o: &Output, needle: &str) -> String {
    let line = one_line(o);
    assert_eq!(o.status.code(), Some(2), "{line}");
    assert!(!stdout(o).contains("T:"), "measured anyway: {}", stdout(o));
    assert!(line.contains(needle), "{needle:?} not in {line:?}");
    line
}

const DUMP_TRAILER: &str = "# Histogram Overflow at cycle number:\n# Thread 0:\n";

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

// ---- 1. Output paths never replace a device, FIFO or symlink ----

#[test]
fn p1_outputs_write_into_devices_never_over_them() {
    let d = TempDir::new("hostile-dev");
    let null = d.join("null");
    let full = d.join("full");
    mknod(&null, 1, 3);
    mknod(&full, 1, 7);
    let dump = write(
        &d,
        "h.txt",
        &format!(
            "# Histogram\n000001 000005\n# Min Latencies: 00001\n# Avg Latencies: 00001\n\
             # Max Latencies: 00001\n# Histogram Overflows: 00000\n{DUMP_TRAILER}"
        ),
    );
    for args in [
        vec!["cyclic", "-l", "3", "-q", "--json", s(&null)],
        vec!["cyclic", "-l", "3", "-q", "-h", "5", "--histfile", s(&null)],
        vec!["plot", s(&dump), "-o", s(&null)],
    ] {
        let o = run_bounded(&args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        assert!(is_char_device(&null), "{args:?} replaced the device node");
    }
    // /dev/full refuses every write: the error is the device's (ENOSPC, exit 3), and
    // the node is still there.
    let o = run_bounded(&["plot", s(&dump), "-o", s(&full)]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(
        one_line(&o).contains("No space left on device"),
        "{}",
        stderr(&o)
    );
    assert!(is_char_device(&full), "plot -o replaced /dev/full's node");
    assert_eq!(d.entries().len(), 3, "left behind: {:?}", d.entries());
}

#[test]
fn p1_prometheus_textfile_on_a_device_node_stays_a_device() {
    let d = TempDir::new("hostile-prom");
    let null = d.join("null");
    mknod(&null, 1, 3);
    let cfg = write(
        &d,
        "c.toml",
        &format!(
            "[selftest]\nmode = \"off\"\nduration = \"1s\"\nallow_unjudged = true\nrequire_preempt_rt = false\n\
             [output]\nresults_dir = \"{0}/results\"\nfallback_dir = \"{0}/run\"\n\
             prometheus = \"{1}\"\n",
            d.display(),
            null.display()
        ),
    );
    // The textfile is a file rtbench keeps: a device at its path is refused (never
    // written into, never replaced); an output asked for and not written is exit 1.
    let o = run_bounded(&["selftest", "--config", s(&cfg)]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains("is a character device"), "{e}");
    assert!(
        is_char_device(&null),
        "[output] prometheus replaced the device node"
    );
}

#[test]
fn p1_fifo_and_symlink_targets_are_written_through() {
    let d = TempDir::new("hostile-fifo");
    // A FIFO with a reader: the reader gets the whole document, the FIFO stays. The
    // test holds the FIFO open read-write (Linux allows it: no open blocks), so a run
    // that never writes into it leaves it empty instead of hanging the test.
    let fifo = d.join("fifo");
    mkfifo(&fifo);
    let mut held = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&fifo)
        .unwrap();
    let o = run_bounded(&["cyclic", "-l", "3", "-q", "--json", s(&fifo)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match held.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            Err(e) => panic!("{e}"),
        }
    }
    let got = String::from_utf8_lossy(&got);
    let v: serde_json::Value = serde_json::from_str(&got)
        .unwrap_or_else(|e| panic!("no JSON through the FIFO ({e}): {got:?}"));
    assert!(v["thread"].is_object(), "{got}");
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());

    // A symlink to a regular file: the file is replaced (atomically), the link stays.
    let target = write(&d, "real.json", "old\n");
    let link = d.join("link.json");
    std::os::unix::fs::symlink("real.json", &link).unwrap();
    let o = run_bounded(&["cyclic", "-l", "3", "-q", "--json", s(&link)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&target).unwrap()).unwrap();
    assert!(v["thread"].is_object());

    // A dangling symlink is refused before anything runs: following it would create a
    // file wherever the link points (the classic symlink attack on a root process).
    let dangling = d.join("dangling.svg");
    std::os::unix::fs::symlink("made.svg", &dangling).unwrap();
    let dump = write(
        &d,
        "h.txt",
        &format!(
            "# Histogram\n000001 000005\n# Min Latencies: 00001\n# Avg Latencies: 00001\n\
             # Max Latencies: 00001\n# Histogram Overflows: 00000\n{DUMP_TRAILER}"
        ),
    );
    let o = run_bounded(&["plot", s(&dump), "-o", s(&dangling)]);
    let line = usage_error(&o, "dangling.svg");
    assert!(line.contains("symbolic link"), "{line}");
    assert!(std::fs::symlink_metadata(&dangling)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(!d.join("made.svg").exists());

    // A symlink to a device node: written into the device.
    let null = d.join("null");
    mknod(&null, 1, 3);
    let to_null = d.join("to-null");
    std::os::unix::fs::symlink(&null, &to_null).unwrap();
    let o = run_bounded(&["plot", s(&dump), "-o", s(&to_null)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(&to_null)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(is_char_device(&null));
}

/// `--json /dev/null` as a user would write it, run as root — inside a private mount
/// namespace whose /dev is a fresh tmpfs holding only a `null` node, so the host's
/// /dev is never at stake. `-` still means standard output.
#[test]
fn p1_dev_null_in_a_private_mount_namespace() {
    let script = r#"
mount -t tmpfs -o size=64k,mode=755 rtbench-test /dev
mknod -m 666 /dev/null c 1 3
"$RTBENCH" cyclic -l 3 -q --default-system --json /dev/null >/dev/null
test -c /dev/null || { echo "/dev/null is no longer a device:"; ls -l /dev; exit 1; }
"$RTBENCH" cyclic -l 3 -q --default-system --json - 2>/dev/null | grep -q '"thread"'
echo ok
"#;
    let o = Command::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-ec", script])
        .env("RTBENCH", crate::common::exe())
        .output()
        .expect("unshare (util-linux)");
    assert!(
        o.status.success() && stdout(&o).trim() == "ok",
        "{}{}",
        stdout(&o),
        stderr(&o)
    );
}

// ---- 2. Integers from input never wrap ----

fn dump_with(rows: &str, trailer: &str) -> String {
    format!("# Histogram\n{rows}{trailer}{DUMP_TRAILER}")
}

#[test]
fn p2_plot_refuses_numbers_that_would_wrap() {
    let d = TempDir::new("hostile-wrap");
    let out = d.join("o.svg");
    let cases = [
        // µs → ns would wrap: drawn as "max 0.38 µs" before.
        (
            dump_with(
                "000001 000005\n",
                "# Min Latencies: 00001\n# Avg Latencies: 00001\n\
                 # Max Latencies: 18446744073709552\n# Histogram Overflows: 00000\n",
            ),
            "18446744073709552",
        ),
        // The counts add up past 2^64 - 1: "0 samples" before.
        (
            dump_with(
                "000001 18446744073709551615\n000002 000001\n",
                "# Min Latencies: 00001\n# Avg Latencies: 00001\n# Max Latencies: 00002\n\
                 # Histogram Overflows: 00000\n",
            ),
            "line 3: count 1 of thread 0",
        ),
        // An -H sum column that only matches after wrapping.
        (
            "# Histogram\n000001 18446744073709551615\t000001\t000000\n\
             # Min Latencies: 00001 00001\n# Avg Latencies: 00001 00001\n\
             # Max Latencies: 00002 00002 00002\n# Histogram Overflows: 00000 00000 00000\n\
             # Histogram Overflow at cycle number:\n# Thread 0:\n# Thread 1:\n"
                .to_string(),
            "line 2",
        ),
        // A bucket whose end is past 2^64 - 1 ns.
        (
            dump_with(
                "18446744073709551 000005\n",
                "# Min Latencies: 00001\n# Avg Latencies: 00001\n# Max Latencies: 00001\n\
                 # Histogram Overflows: 00000\n# Total: 000000005\n",
            ),
            "18446744073709551",
        ),
    ];
    for (text, needle) in cases {
        let input = write(&d, "in.txt", &text);
        let o = run_bounded(&["plot", s(&input), "-o", s(&out)]);
        let line = one_line(&o);
        assert_eq!(o.status.code(), Some(2), "{text}\n{line}");
        assert!(line.contains(needle), "{needle:?} not in {line:?}");
        assert!(
            line.contains("out of range") || line.contains("too large"),
            "{line}"
        );
        assert!(!out.exists());
    }
    // The same in rt-tests JSON: a bucket × the bucket width and a max × 1000.
    for (doc, needle) in [
        (
            r#"{"file_version": 1, "thread": {"0": {"histogram": {"18446744073709552": 1}, "cycles": 1, "max": 1, "cpu": 0}}}"#,
            "18446744073709552",
        ),
        (
            r#"{"file_version": 1, "thread": {"0": {"histogram": {"1": 1}, "cycles": 1, "max": 18446744073709552, "cpu": 0}}}"#,
            "18446744073709552",
        ),
        (
            r#"{"file_version": 1, "thread": {"0": {"histogram": {"1": 18446744073709551615, "2": 1}, "cycles": 1, "max": 2, "cpu": 0}}}"#,
            "histogram entry \"2\": count 1 takes the samples past 2^64 - 1",
        ),
    ] {
        let input = write(&d, "in.json", doc);
        let o = run_bounded(&["plot", s(&input), "-o", s(&out)]);
        let line = one_line(&o);
        assert_eq!(o.status.code(), Some(2), "{doc}\n{line}");
        assert!(line.contains(needle), "{needle:?} not in {line:?}");
    }
}

/// A stored result whose maximum is 2^64 - 1 ns is shown as that (213504 days), not as
/// `0s`.
#[test]
fn p2_report_shows_a_huge_maximum_as_it_is() {
    use rtbench::results::store::{Origin, StoredRun};
    use rtbench::results::summary::{TestSummary, ThreadSummary, Verdict};
    let d = TempDir::new("hostile-report");
    let big = u64::MAX;
    let th = ThreadSummary {
        thread: 0,
        cpu: Some(0),
        priority: 98,
        interval_us: 1000,
        count: 10,
        min_ns: 1000,
        avg_ns: big,
        p50_ns: big,
        p90_ns: big,
        p99_ns: big,
        p999_ns: big,
        p9999_ns: big,
        high_nines_ns: None,
        max_ns: big,
        overruns: 0,
        missed_periods: None,
        histogram: vec![],
    };
    let run = StoredRun {
        rtbench_version: "test".into(),
        start_s: 1_000_000_000,
        duration_s: 1.0,
        sysinfo: rtbench::sys::info::SysInfo::read(&rtbench::sys::SysRoot::host()),
        config: serde_json::json!({}),
        tuning: serde_json::json!([]),
        load: String::new(),
        tests: vec![TestSummary {
            condition: None,
            msg_size: None,
            duration_s: None,
            histogram_us: None,
            test: "cyclic".into(),
            threads: vec![th],
            explain: None,
        }],
        verdict: Verdict::new(vec![], vec![], vec![]),
        interrupted: false,
        origin: Origin::default(),
        exit_code: Some(0),
        store_error: None,
        results_dir: None,
        hardware: None,
        conditions: Vec::new(),
        unit: None,
        attempt: None,
        unwritten: Vec::new(),
    };
    let json = serde_json::to_string_pretty(&run).unwrap();
    write(&d, "run-000001-20010909T014640Z.json", &json);
    let o = run_bounded(&["report", "--dir", s(&d)]);
    let row = stdout(&o)
        .lines()
        .find(|l| l.starts_with("cyclic"))
        .unwrap_or_else(|| panic!("{}{}", stdout(&o), stderr(&o)))
        .to_string();
    assert!(!row.contains(" 0s"), "{row}");
    assert!(row.contains("213504d"), "{row}");
    assert!(row.chars().count() <= 80, "{row}");
}

#[test]
fn p2_cpu_list_strides_of_2_64_minus_1_do_not_wrap() {
    // -a 1:1/18446744073709551615 is CPU 1 alone (once CPUs 0 and 1).
    let o = run_bounded(&[
        "cyclic",
        "-a",
        "1:1/18446744073709551615",
        "-t",
        "2",
        "-l",
        "2",
        "-q",
        "--json",
        "-",
    ]);
    if crate::common::online_cpus() < 2 {
        assert_eq!(o.status.code(), Some(2));
        return;
    }
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    for t in v["thread"].as_object().unwrap().values() {
        assert_eq!(t["cpu"], 1, "{t}");
    }
    // [cyclic] cpus and [tuning] isolated: the same list parses to CPU 1 alone (the
    // configuration is valid), and a stride of 2^64 on CPU 0's range to CPU 0 alone.
    let d = TempDir::new("hostile-stride");
    for body in [
        "[cyclic]\ncpus = \"1:1/18446744073709551615\"\n",
        "[tuning]\nisolated = \"1:1/18446744073709551615\"\n",
        "[tuning]\nisolated = \"1-1:18446744073709551615/18446744073709551615\"\n",
    ] {
        let cfg = write(&d, "c.toml", body);
        let o = run_bounded(&["tune", "check", "--config", s(&cfg), "--json"]);
        assert_ne!(o.status.code(), Some(2), "{body}: {}", stderr(&o));
    }
}

#[test]
fn p2_a_duration_that_would_wrap_the_stop_time_is_refused() {
    // Before: the stop time wrapped and the run ended after one cycle, exit 0.
    for d in ["9223372037", "18446744073709551615s", "106751991167301d"] {
        let o = run_bounded(&["cyclic", "-D", d, "-l", "3", "-q"]);
        usage_error(&o, d);
    }
    let d = TempDir::new("hostile-dur");
    let cfg = write(&d, "c.toml", "[selftest]\nduration = \"9223372037\"\n");
    let o = run_bounded(&["selftest", "--config", s(&cfg)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        one_line(&o).contains("selftest.duration = \"9223372037\""),
        "{}",
        stderr(&o)
    );
}

#[test]
fn p2_sizes_and_thresholds_out_of_range_name_the_value() {
    // -b in ns: 2^64 - 1 µs × 1000 saturated to a different number before.
    let o = run_bounded(&["cyclic", "-b", "18446744073709551615", "-l", "2", "-q"]);
    usage_error(&o, "18446744073709551615");
    // A vm size beyond what a mapping can be.
    let o = run_bounded(&["load", "--load", "vm:1:18014398509481983K", "-D", "1"]);
    usage_error(&o, "18014398509481983K");
}

// ---- 3. No input reaches a panic ----

#[test]
fn p3_no_panics_on_odd_numbers() {
    let d = TempDir::new("hostile-panic");
    let dump = write(
        &d,
        "h.txt",
        &format!(
            "# Histogram\n000001 000005\n# Min Latencies: 00001\n# Avg Latencies: 00001\n\
             # Max Latencies: 00001\n# Histogram Overflows: 00000\n{DUMP_TRAILER}"
        ),
    );
    let out = d.join("o.svg");
    let o = run_bounded(&["plot", s(&dump), "-o", s(&out), "--x-max", "5e-324"]);
    usage_error(&o, "--x-max 5e-324");
    for t in ["576460752303423488", "2147483648", "4097"] {
        let o = run_bounded(&["cyclic", "-t", t, "-l", "2", "-q"]);
        usage_error(&o, t);
    }
    let o = run_bounded(&["load", "--load", "cpu:1", "-D", "9223372036854775807"]);
    usage_error(&o, "9223372036854775807");
    assert!(!stderr(&o).contains("load on CPUs"), "the load started");
}

#[test]
fn p3_a_time_zone_with_a_multibyte_character_is_not_a_date() {
    let d = TempDir::new("hostile-tz");
    let doc = r#"{"file_version": 1, "start_time": "Sun, 29 Nov 2026 22:09:25 +é00",
        "end_time": "Sun, 29 Nov 2026 22:09:25 +0é0",
        "thread": {"0": {"histogram": {"1": 5}, "cycles": 5, "min": 1, "max": 1, "avg": 1.0,
        "cpu": 0, "node": -1}}}"#;
    let input = write(&d, "tz.json", doc);
    let out = d.join("o.svg");
    let o = run_bounded(&["plot", s(&input), "-o", s(&out)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let svg = std::fs::read_to_string(&out).unwrap();
    assert!(svg.contains("duration: not recorded"), "{svg}");
}

// ---- 4. Special files in the results directory ----

#[test]
fn p4_fifos_and_links_in_the_results_directory_are_skipped() {
    let d = TempDir::new("hostile-store");
    mkfifo(&d.join("run-000007-20260101T000000Z.json"));
    std::os::unix::fs::symlink("/dev/zero", d.join("run-000008-20260101T000000Z.json")).unwrap();
    for args in [
        vec!["report", "--dir", s(&d)],
        vec!["report", "--dir", s(&d), "--all", "--json"],
        vec!["plot", s(&d), "-o", "-"],
    ] {
        let o = run_bounded(&args);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert!(e.contains("run-000007-20260101T000000Z.json"), "{e}");
        assert!(e.contains("run-000008-20260101T000000Z.json"), "{e}");
        assert!(e.contains("skipped"), "{e}");
        // The link is not followed (a file of the store), so not read as the device.
        assert!(e.contains("FIFO") && e.contains("symbolic link"), "{e}");
        assert!(!e.contains("character device"), "{e}");
    }
}

// ---- 5. Bad output and input paths: exit 2 before anything runs ----

#[test]
fn p5_bad_output_paths_are_refused_before_measuring() {
    let d = TempDir::new("hostile-path");
    let long = d.join("a".repeat(300));
    let dir_slash = format!("{}/sub/", d.display());
    for (args, needle) in [
        (
            vec!["cyclic", "-l", "3", "-q", "--json", dir_slash.as_str()],
            "--json",
        ),
        (
            vec!["cyclic", "-l", "3", "-q", "--json", s(&long)],
            "--json",
        ),
        (
            vec!["cyclic", "-l", "3", "-q", "-h", "5", "--histfile", s(&long)],
            "--histfile",
        ),
        (
            vec!["pmq", "-l", "3", "-q", "--json", dir_slash.as_str()],
            "--json",
        ),
    ] {
        let o = run_bounded(&args);
        let line = usage_error(&o, needle);
        assert!(
            line.contains("name") || line.contains("directory"),
            "{args:?}: {line}"
        );
    }
    assert!(d.entries().is_empty(), "{:?}", d.entries());

    let dump = write(
        &d,
        "h.txt",
        &format!(
            "# Histogram\n000001 000005\n# Min Latencies: 00001\n# Avg Latencies: 00001\n\
             # Max Latencies: 00001\n# Histogram Overflows: 00000\n{DUMP_TRAILER}"
        ),
    );
    let o = run_bounded(&["plot", s(&dump), "-o", "/nonexistent/x.svg"]);
    usage_error(&o, "/nonexistent");
    let o = run_bounded(&["plot", "/nonexistent/in.json", "-o", "-"]);
    usage_error(&o, "/nonexistent/in.json");
    let o = run_bounded(&["report", "--dir", "/nonexistent"]);
    let line = usage_error(&o, "/nonexistent");
    assert!(line.contains("does not exist"), "{line}");
    let o = run_bounded(&["report", "--dir", s(&dump)]);
    let line = usage_error(&o, "h.txt");
    assert!(line.contains("not a directory"), "{line}");
}

// ---- 6. One-line messages ----

#[test]
fn p6_multi_line_values_are_escaped_and_echoed_once() {
    let d = TempDir::new("hostile-lines");
    for (body, want) in [
        (
            "[output]\nprometheus = \"\"\"a\nb\"\"\"\n",
            r#"output.prometheus = """a\nb""": expected an absolute file path"#,
        ),
        (
            "[load]\nspec = \"\"\"cpu:1,\ndisk:2\"\"\"\n",
            r#"load.spec = """cpu:1,\ndisk:2""": unknown load kind 'disk'"#,
        ),
        (
            "[cyclic]\npriority = 0\n",
            "cyclic.priority = 0: expected a SCHED_FIFO priority of 1..99",
        ),
        (
            "[cyclic]\ncpus = \"x-y\"\n",
            "cyclic.cpus = \"x-y\": 'x' is not a CPU number",
        ),
        (
            "[load]\ncpus = \"0\"\n",
            "load.cpus = \"0\": needs load.spec or load.cmd",
        ),
    ] {
        let cfg = write(&d, "c.toml", body);
        let o = run_bounded(&["selftest", "--config", s(&cfg)]);
        let line = one_line(&o);
        assert_eq!(o.status.code(), Some(2), "{line}");
        assert!(line.contains(want), "{want:?} not in {line:?}");
    }
    // The command line too: a value with a newline stays on one line.
    let o = run_bounded(&["load", "--load", "cpu:1,\ndisk:2", "-D", "1"]);
    let line = usage_error(&o, "disk");
    assert!(line.contains("\\n"), "{line}");
}
