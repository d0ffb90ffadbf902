//! Files rtbench keeps for weeks (`src/sys/kept.rs`) and files it reads that it does not
//! control, on the real binary. Each test failed before its fix (what it did is said
//! at each); the property tests that generate such trees are in
//! `tests/hostile/hostile_props.rs`.
//!
//! 1. a kept file never follows a link: a `windows.jsonl`, `state.json` or Prometheus
//!    textfile that is a link, and a `--dir` that is a dangling link or a loop, are
//!    exit 2 at start, one line naming the path; the diagnostics bundle does not copy a
//!    `run-*.json` link;
//! 2. a kept file never blocks: a FIFO as the monitor's Prometheus textfile is exit 2,
//!    one that appears later is a warning, and the run does not end with 0;
//! 3. a kept file never loses data: a `state.json` that is not UTF-8 is kept as
//!    `state.json.bad.*`; the window sequence numbers do not wrap;
//! 4. a file rtbench reads is bounded and never waited on: a FIFO or a link to
//!    `/dev/zero` as `/etc/default/irqbalance` of a fake tree;
//! 5. `report --since --json` does not hold the store in memory.

use crate::common::tune_tree::Tree;
use crate::common::{rtbench, stderr, stdout, Running, TempDir};
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const START: &str = "c235ff9bebdd447a895829d54b7b1aa9";
const STOP: &str = "d4afd97974874b9781398c86865fe1c7";
const OUTPUT: &str = "37e4093074a449328d450b9a6e3f66f8";

/// Runs `cmd`, killed (and the test failed) after common::BOUND: blocking for ever is
/// one of the faults tested here.
fn bounded(cmd: &mut Command) -> Output {
    Running::spawn(cmd).finish()
}

fn mkfifo(path: &Path) {
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid C string.
    let rc = unsafe { libc::mkfifo(c.as_ptr(), 0o644) };
    assert_eq!(rc, 0, "mkfifo {}", path.display());
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `rtbench monitor` on CPU 0 in 1-s windows with an empty configuration, entries as
/// logfmt lines, its state in `dir`, and `extra`.
fn monitor(t: &Path, dir: &Path, extra: &[&str]) -> Command {
    let cfg = t.join("rtbench.toml");
    std::fs::write(&cfg, "").unwrap();
    let mut c = rtbench();
    c.args(["monitor", "--config", s(&cfg), "--log-format", "logfmt"])
        .args(["-a", "0", "--window", "1s", "--dir", s(dir)])
        .args(extra);
    c
}

/// Asserts exit 2 before anything started: one line on standard error, naming
/// `path` and containing `why`; nothing measured.
fn refused_at_start(o: &Output, path: &Path, why: &str) {
    let e = stderr(o);
    let lines: Vec<&str> = e.lines().collect();
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert_eq!(lines.len(), 1, "expected one line: {e}");
    assert!(
        lines[0].contains(s(path)),
        "{} not named: {e}",
        path.display()
    );
    assert!(lines[0].contains(why), "{why:?} not in {e}");
    assert!(!e.contains("MESSAGE_ID="), "started anyway: {e}");
}

// ---- 1. Never follow a link ----

/// Before: the window was appended to the file the link points to, the state written
/// through its link (exit 0).
#[test]
fn k1_store_and_state_links_are_refused_at_start_never_written_through() {
    let t = TempDir::new("kept-links");
    let victim = t.join("victim");
    std::fs::write(&victim, "precious\n").unwrap();
    for name in ["windows.jsonl", "state.json", "windows.1.jsonl"] {
        let dir = t.join(format!("mon-{name}"));
        std::fs::create_dir_all(&dir).unwrap();
        symlink(&victim, dir.join(name)).unwrap();
        let o = bounded(&mut monitor(&t, &dir, &["-D", "1"]));
        refused_at_start(&o, &dir.join(name), "symbolic link");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
        assert!(std::fs::symlink_metadata(dir.join(name))
            .unwrap()
            .file_type()
            .is_symlink());
    }
}

/// Before: a dangling or looping state link, or a dangling `--dir`, ran the monitor
/// without ever saving (exit 0, "state NOT saved" at the end at best).
#[test]
fn k1_dangling_and_looping_links_are_refused_at_start() {
    let t = TempDir::new("kept-dangling");
    let dir = t.join("mon");
    std::fs::create_dir_all(&dir).unwrap();
    let state = dir.join("state.json");
    symlink(t.join("nowhere"), &state).unwrap();
    let o = bounded(&mut monitor(&t, &dir, &["-D", "1"]));
    refused_at_start(&o, &state, "symbolic link");
    assert!(!t.join("nowhere").exists());
    std::fs::remove_file(&state).unwrap();
    symlink("state.json", &state).unwrap();
    let o = bounded(&mut monitor(&t, &dir, &["-D", "1"]));
    refused_at_start(&o, &state, "symbolic link");
    // The directory itself: dangling, a loop, and below a dangling link.
    let gone = t.join("gone-dir");
    symlink(t.join("no-such-dir"), &gone).unwrap();
    let o = bounded(&mut monitor(&t, &gone, &["-D", "1"]));
    refused_at_start(&o, &gone, "does not exist");
    let o = bounded(&mut monitor(&t, &gone.join("monitor"), &["-D", "1"]));
    refused_at_start(&o, &gone, "does not exist");
    let looped = t.join("loop-dir");
    symlink("loop-dir", &looped).unwrap();
    let o = bounded(&mut monitor(&t, &looped, &["-D", "1"]));
    refused_at_start(&o, &looped, "loop");
    assert!(!t.join("no-such-dir").exists());
}

/// Before: `diagnose` copied the file a `run-*.json` link points to into the bundle.
#[test]
fn k1_diagnose_does_not_copy_a_run_link_into_the_bundle() {
    let t = TempDir::new("kept-diagnose");
    let results = t.join("results");
    std::fs::create_dir_all(&results).unwrap();
    let secret = t.join("secret");
    std::fs::write(&secret, "{\"not\": \"a run\", \"secret\": \"hunter2\"}\n").unwrap();
    let link = results.join("run-000001-20260101T000000Z.json");
    symlink(&secret, &link).unwrap();
    let cfg = t.join("rtbench.toml");
    std::fs::write(
        &cfg,
        format!(
            "[output]\nresults_dir = \"{}\"\nfallback_dir = \"{}\"\n",
            results.display(),
            t.join("run").display()
        ),
    )
    .unwrap();
    let bundle = t.join("b.tar.gz");
    let o = bounded(rtbench().args(["diagnose", "--config", s(&cfg), "-o", s(&bundle)]));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let all = Command::new("tar")
        .arg("-xzOf")
        .arg(&bundle)
        .output()
        .unwrap();
    assert!(all.status.success());
    let text = String::from_utf8_lossy(&all.stdout);
    assert!(!text.contains("hunter2"), "the link's target was copied");
    // Said, as other things not collected are.
    assert!(
        text.contains(&format!("{}: a symbolic link", link.display())),
        "{text}"
    );
}

// ---- 2. Never block ----

/// Before: the monitor blocked at its first window opening the FIFO for good (no
/// entries, `-D` and SIGTERM ignored); a link was written through.
#[test]
fn k2_a_prometheus_fifo_or_link_is_refused_at_start() {
    let t = TempDir::new("kept-prom");
    let dir = t.join("mon");
    let fifo = t.join("monitor.prom");
    mkfifo(&fifo);
    let o = bounded(&mut monitor(
        &t,
        &dir,
        &["-D", "1", "--prometheus", s(&fifo)],
    ));
    refused_at_start(&o, &fifo, "FIFO");
    let victim = t.join("victim");
    std::fs::write(&victim, "precious\n").unwrap();
    let link = t.join("link.prom");
    symlink(&victim, &link).unwrap();
    let o = bounded(&mut monitor(
        &t,
        &dir,
        &["-D", "1", "--prometheus", s(&link)],
    ));
    refused_at_start(&o, &link, "symbolic link");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
}

/// Before: a store that could not be written (here a FIFO put in place of
/// `windows.jsonl` after the start) was a warning, and the run still exited 0.
#[test]
fn k2_a_store_that_fails_mid_run_is_said_and_the_exit_is_not_0() {
    let t = TempDir::new("kept-midrun");
    let dir = t.join("mon");
    let r = Running::spawn(&mut monitor(&t, &dir, &["-D", "3"]));
    r.wait_stderr(0, "the start entry", |l| l.contains(START));
    // The start entry comes before the first window closes (1 s) or anything is
    // appended; the directory is there once the plan checked it or the run made it.
    std::fs::create_dir_all(&dir).unwrap();
    mkfifo(&dir.join("windows.jsonl"));
    let o = r.finish();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{e}");
    let warning = e
        .lines()
        .find(|l| l.contains(OUTPUT) && l.contains("window store"))
        .unwrap_or_else(|| panic!("no warning entry: {e}"));
    assert!(warning.contains("FIFO"), "{warning}");
    assert!(e.lines().any(|l| l.contains(STOP)), "{e}");
}

// ---- 3. Never lose data ----

/// Before: a state file with one byte that is not UTF-8 was "unreadable; starting
/// afresh" and replaced at the first save, with no copy kept.
#[test]
fn k3_a_state_file_that_is_not_utf8_is_kept_before_it_is_replaced() {
    let t = TempDir::new("kept-utf8");
    let dir = t.join("mon");
    let o = bounded(&mut monitor(&t, &dir, &["-D", "1"]));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let state = dir.join("state.json");
    let mut bytes = std::fs::read(&state).unwrap();
    // A bit flip on flash: one byte of the version string becomes 0xff.
    let i = bytes.iter().position(|&b| b == b'.').unwrap();
    bytes[i] = 0xff;
    std::fs::write(&state, &bytes).unwrap();
    let o = bounded(&mut monitor(&t, &dir, &["-D", "1"]));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let start = stderr(&o)
        .lines()
        .find(|l| l.contains(START))
        .unwrap()
        .to_string();
    assert!(
        start.contains("not UTF-8") && start.contains("kept as"),
        "{start}"
    );
    let bad: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| s(p).contains("state.json.bad"))
        .collect();
    assert_eq!(bad.len(), 1, "{bad:?}");
    assert_eq!(std::fs::read(&bad[0]).unwrap(), bytes);
}

/// Before: a state at window 2^64 − 1 made the next window's number overflow (a panic
/// in a debug build, window 0 in a release build).
#[test]
fn k3_window_sequence_numbers_do_not_wrap() {
    let t = TempDir::new("kept-seq");
    let dir = t.join("mon");
    let o = bounded(&mut monitor(&t, &dir, &["-D", "1"]));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let state = dir.join("state.json");
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&state).unwrap()).unwrap();
    v["last_window"] = serde_json::json!(u64::MAX);
    std::fs::write(&state, serde_json::to_vec(&v).unwrap()).unwrap();
    let before = std::fs::read(dir.join("windows.jsonl")).unwrap();
    let o = bounded(&mut monitor(&t, &dir, &["-D", "3"]));
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{e}");
    assert!(!e.contains("panicked"), "{e}");
    let stop = e.lines().find(|l| l.contains(STOP)).unwrap();
    assert!(stop.contains("window sequence numbers used up"), "{stop}");
    // Nothing stored after the last number, and the state left as it was.
    assert_eq!(std::fs::read(dir.join("windows.jsonl")).unwrap(), before);
    assert_eq!(
        std::fs::read(&state).unwrap(),
        serde_json::to_vec(&v).unwrap()
    );
}

// ---- 4. Reads are bounded and never wait ----

/// Before: `tune check` blocked for ever opening the FIFO, and read about 2 GB of
/// `/dev/zero` through the link before giving up.
#[test]
fn k4_irqbalance_environment_file_fifo_or_device_is_unreadable_not_waited_on() {
    let t = Tree::new("kept-irqbalance");
    t.file("proc/4242/comm", "irqbalance\n");
    let cfg = t.join("rtbench.toml");
    std::fs::write(&cfg, t.config_text("")).unwrap();
    let root = t.join("root");
    let env = root.join("etc/default/irqbalance");
    std::fs::create_dir_all(env.parent().unwrap()).unwrap();
    mkfifo(&env);
    let check =
        || bounded(rtbench().args(["tune", "check", "--config", s(&cfg), "--sysroot", s(&root)]));
    for kind in ["FIFO", "character device"] {
        let o = check();
        assert_eq!(o.status.code(), Some(1), "{kind}: {}", stderr(&o));
        let out = stdout(&o);
        let line = out
            .lines()
            .find(|l| l.contains("irq.irqbalance"))
            .unwrap_or_else(|| panic!("{out}"));
        assert!(
            line.contains("/etc/default/irqbalance is unreadable") && line.contains(kind),
            "{line}"
        );
        std::fs::remove_file(&env).unwrap();
        symlink("/dev/zero", &env).unwrap();
    }
}

// ---- 5. report --since does not hold the store ----

/// A window store of `n` one-CPU windows, 10 s each, the last ending now; its size.
fn store_of(dir: &Path, n: i64) -> u64 {
    std::fs::create_dir_all(dir).unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let mut f = std::io::BufWriter::new(std::fs::File::create(dir.join("windows.jsonl")).unwrap());
    for i in 0..n {
        let end = now - (n - i) * 10;
        std::io::Write::write_all(
            &mut f,
            format!(
                "{{\"seq\":{},\"start_s\":{},\"end_s\":{end},\"duration_s\":10.0,\"cpus\":[\
                 {{\"cpu\":0,\"samples\":10000,\"min_ns\":1000,\"avg_ns\":2000,\"p99_ns\":5000,\
                 \"p999_ns\":8000,\"max_ns\":{},\"overruns\":0,\"missed_periods\":0,\
                 \"cause\":\"irq 42 (eth0) on CPU 0, a cause long enough to take room\"}}]}}\n",
                i + 1,
                end - 10,
                10_000 + i % 977
            )
            .as_bytes(),
        )
        .unwrap();
    }
    std::io::Write::flush(&mut f).unwrap();
    drop(f);
    std::fs::metadata(dir.join("windows.jsonl")).unwrap().len()
}

/// Before: `report --since --json` held every window of the store (a 64 MB store: 190
/// MB resident, about three times the store). The windows are now written as they
/// are read, and the peak memory does not depend on the store (about 11 MB). The peak
/// (`VmHWM`) is read while the report is still writing, near its end: with more than
/// a pipe's worth of its output unread, it cannot have exited. (`wait4`'s
/// `ru_maxrss` would not do: a child inherits the peak of the test process it was
/// forked from.)
#[test]
fn k5_report_since_json_memory_does_not_grow_with_the_store() {
    use std::io::BufRead;
    let t = TempDir::new("kept-since");
    let n = 100_000;
    let size = store_of(&t.join("monitor"), n);
    let mut child = rtbench()
        .args(["report", "--since", "30d", "--json", "--dir", s(&t)])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let status = format!("/proc/{}/status", child.id());
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    // About 1 MB of output after this line, far more than a pipe holds (64 KiB).
    let mark = format!("\"seq\": {},", n - 2_000);
    let (mut seqs, mut peak_kib, mut line) = (0, None, String::new());
    while out.read_line(&mut line).unwrap() > 0 {
        if line.trim_start().starts_with("\"seq\": ") {
            seqs += 1;
        }
        if peak_kib.is_none() && line.contains(&mark) {
            let st = std::fs::read_to_string(&status).unwrap();
            peak_kib = st
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
        }
        line.clear();
    }
    assert!(child.wait().unwrap().success());
    assert_eq!(seqs, n);
    let peak = peak_kib.expect("VmHWM read while the report ran") * 1024;
    eprintln!("report --since --json: peak {peak} bytes, store {size} bytes");
    // Holding the windows took about three times the store; streamed, a fraction.
    assert!(peak < size, "peak {peak} bytes for a store of {size} bytes");
}

/// A 1-s self-test configuration in `d` (`d/c.toml`; results and fallback below `d`,
/// any kernel, unjudged accepted) writing its Prometheus textfile to `prometheus`.
fn selftest_config(d: &Path, prometheus: &Path) -> PathBuf {
    let cfg = d.join("c.toml");
    std::fs::write(
        &cfg,
        format!(
            "[selftest]\nmode = \"off\"\nduration = \"1s\"\nallow_unjudged = true\n\
             require_preempt_rt = false\n[output]\nresults_dir = \"{0}/results\"\n\
             fallback_dir = \"{0}/run\"\nprometheus = \"{1}\"\n",
            d.display(),
            prometheus.display()
        ),
    )
    .unwrap();
    cfg
}

/// Outputs written through a FIFO (`--json`, the self-test's `[output] prometheus`)
/// are an error at once when nobody reads the FIFO — at boot there may never be a
/// reader. Before: both waited for a reader for ever (the bound killed them).
#[test]
fn k2_a_fifo_nobody_reads_is_an_error_never_a_wait() {
    let d = TempDir::new("kept-fifo-out");
    let fifo = d.join("fifo");
    mkfifo(&fifo);
    let o = bounded(rtbench().args(["cyclic", "-l", "3", "-q", "--json", s(&fifo)]));
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{e}");
    assert!(e.contains(s(&fifo)) && e.contains("nobody reads"), "{e}");
    // The measurement's other output, standard output, is still written.
    assert!(stdout(&o).contains("T: 0"), "{}", stdout(&o));

    let cfg = selftest_config(&d, &fifo);
    let o = bounded(rtbench().args(["selftest", "--config", s(&cfg)]));
    let e = stderr(&o);
    // The textfile is a kept file: a FIFO at its path is refused without opening it.
    assert!(e.contains("nobody reads") || e.contains("is a FIFO"), "{e}");
    // The verdict is the measurement's; the run was stored all the same.
    assert!(
        std::fs::read_dir(d.join("results"))
            .unwrap()
            .flatten()
            .any(|f| f.file_name().to_string_lossy().starts_with("run-")),
        "no stored run: {e}"
    );
}

/// A textfile written at every boot: the temporary files a power loss left in earlier
/// boots are removed, those of live processes and other programs' files are not.
/// Before: they stayed for ever, one more for each write cut short.
#[test]
fn k3_stale_temporary_files_of_the_textfile_are_removed() {
    let d = TempDir::new("kept-stale-prom");
    let prom = d.join("prom");
    std::fs::create_dir_all(&prom).unwrap();
    // A PID above pid_max (2^22) exists nowhere; this test's own PID is alive.
    let stale = prom.join(".rtbench.prom.tmp.4194305");
    let live = prom.join(format!(".rtbench.prom.tmp.{}", std::process::id()));
    let other = prom.join(".node.prom.tmp.4194305");
    for f in [&stale, &live, &other] {
        std::fs::write(f, "x").unwrap();
    }
    let cfg = selftest_config(&d, &prom.join("rtbench.prom"));
    let o = bounded(rtbench().args(["selftest", "--config", s(&cfg)]));
    assert!(prom.join("rtbench.prom").is_file(), "{}", stderr(&o));
    assert!(!stale.exists(), "the stale temporary file stayed");
    assert!(
        live.exists() && other.exists(),
        "removed more than the stale file"
    );
}
