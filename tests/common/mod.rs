//! Helpers for the integration tests: run the real binary ([`rtbench`], [`exe`]) in the
//! binary's private mount namespace ([`isolate`]) under the machine lock ([`lock`]),
//! one temporary directory per test ([`TempDir`]), wait for states, not times
//! ([`proc`], [`running`]); a cgroup cpuset ([`cpuset`]) and runs with the flight
//! recorder ([`explain`]) for the tests of more than one file.
#![allow(dead_code, unused_imports)]

pub mod cgroup;
pub mod cpuset;
pub mod explain;
pub mod generated;
pub mod isolate;
pub mod lock;
pub mod proc;
pub mod running;
pub mod tempdir;
pub mod tune_tree;

pub use lock::{exclusive, no_forks, serial, shared, Resource, Serial};
pub use proc::*;
pub use running::Running;
pub use tempdir::{unique, TempDir};

use std::process::{Command, Output};

/// The path of the rtbench binary cargo built for these tests, for a test that starts
/// it through another program (`sh`, `setpriv`, `prlimit`, `strace`, a link). The
/// calling test holds the machine shared and counts as starting processes from now on
/// ([`lock::shared`], [`lock::spawning`]), and the binary's mount namespace hides the
/// host's rtbench files ([`isolate::ensure`]).
pub fn exe() -> &'static str {
    isolate::ensure();
    lock::shared();
    lock::spawning();
    env!("CARGO_BIN_EXE_rtbench")
}

/// `c`, whose process gets SIGKILL when the thread that starts it — the test's —
/// ends (prctl(2) `PR_SET_PDEATHSIG`): a test that panics half-way leaves no
/// measuring process behind at real-time priority to load the tests after it.
pub fn dies_with_test(c: &mut Command) -> &mut Command {
    // SAFETY: prctl(2) between fork and exec only changes the child's own settings.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(c, || {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    c
}

/// The rtbench binary cargo built for these tests ([`exe`]), run as by hand even when
/// the test runner itself is a systemd service: no `INVOCATION_ID` (which would make
/// the stored trigger "systemd"), `RTBENCH_TRIGGER`, `NOTIFY_SOCKET` or
/// `JOURNAL_STREAM`.
/// It dies with the test's thread ([`dies_with_test`]).
pub fn rtbench() -> Command {
    let mut c = Command::new(exe());
    dies_with_test(&mut c);
    // SIGHUP at its default action, whatever the test runner inherited (a CI job
    // started under nohup ignores it, and rtbench keeps an inherited ignored SIGHUP):
    // the tests that send SIGHUP test rtbench, not how the suite was started. A test
    // may ignore it again in a pre_exec of its own (they run in order).
    // SAFETY: signal(2) between fork and exec only changes the child's disposition.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut c, || {
            libc::signal(libc::SIGHUP, libc::SIG_DFL);
            Ok(())
        });
    }
    for v in [
        "INVOCATION_ID",
        "RTBENCH_TRIGGER",
        "NOTIFY_SOCKET",
        "JOURNAL_STREAM",
    ] {
        c.env_remove(v);
    }
    c
}

/// Argument lists `run` accepts: a string split on white space, or a slice of words.
pub trait ArgList {
    /// The words.
    fn words(&self) -> Vec<String>;
}
impl ArgList for str {
    fn words(&self) -> Vec<String> {
        self.split_whitespace().map(String::from).collect()
    }
}
impl ArgList for String {
    fn words(&self) -> Vec<String> {
        self.as_str().words()
    }
}
impl ArgList for [&str] {
    fn words(&self) -> Vec<String> {
        self.iter().map(|s| s.to_string()).collect()
    }
}
impl ArgList for Vec<&str> {
    fn words(&self) -> Vec<String> {
        self[..].words()
    }
}
impl ArgList for [String] {
    fn words(&self) -> Vec<String> {
        self.to_vec()
    }
}
impl ArgList for Vec<String> {
    fn words(&self) -> Vec<String> {
        self.clone()
    }
}
impl<const N: usize> ArgList for [&str; N] {
    fn words(&self) -> Vec<String> {
        self[..].words()
    }
}

/// Runs rtbench with `args` and waits for it.
pub fn run<A: ArgList + ?Sized>(args: &A) -> Output {
    rtbench().args(args.words()).output().expect("run rtbench")
}

/// Runs `rtbench selftest --log-format logfmt --config CFG` ([`rtbench`]) and waits
/// for it: its journal entries come as logfmt lines on standard error ([`entries`]).
pub fn selftest_logfmt(cfg: &std::path::Path) -> Output {
    rtbench()
        .args(["selftest", "--log-format", "logfmt", "--config"])
        .arg(cfg)
        .output()
        .expect("run rtbench")
}

/// The stored results of the runs whose `results_dir` is `dir/results`: every
/// `*.json` there (`run-SEQUENCE-TIME.json`, src/results/store.rs), parsed, in the
/// order of the file names; none when the directory does not exist.
pub fn stored_results(dir: &std::path::Path) -> Vec<serde_json::Value> {
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(dir.join("results"))
        .map(|r| r.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == "json"));
    files.sort();
    files
        .iter()
        .map(|f| serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap())
        .collect()
}

/// Spawns rtbench with TMPDIR set to `tmp`, output captured.
pub fn spawn_with_tmp(args: &[&str], tmp: &std::path::Path) -> std::process::Child {
    rtbench()
        .args(args)
        .env("TMPDIR", tmp)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("rtbench starts")
}

/// Runs Debian's cyclictest with `args`. Panics with an install hint when missing: the
/// comparison tests are the point, so they must not pass silently without it.
pub fn cyclictest(args: &str) -> Output {
    isolate::ensure();
    lock::shared();
    lock::spawning();
    Command::new("cyclictest")
        .args(args.split_whitespace())
        .output()
        .expect("cyclictest (Debian package rt-tests) must be installed: apt-get install rt-tests")
}

/// Standard output as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Standard error as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Number of online CPUs (`/sys/devices/system/cpu/online`).
pub fn online_cpus() -> usize {
    let s = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    rtbench::cpuset::CpuSet::parse_list(&s, 4096).unwrap().len()
}

/// Reads and restores the kernel's top-level `tracing_on` (which `-b` turns off)
/// whether or not tracefs is mounted where rtbench looks, and holds it alone until
/// dropped: a parallel `-b` test must neither see this test's value nor restore its own
/// in the middle of this one.
///
/// `tracing_on` is one switch per kernel, whatever mount shows it; the guard reads it
/// through a tracefs mount of its own on a temporary directory of this binary's private
/// mount namespace ([`isolate`]), so `/sys/kernel/tracing` stays as the host had it
/// (mounted or not) for the rtbench under test, and nothing leaks to the host's mounts.
pub struct TracingOnGuard {
    mount: Option<(TempDir, String)>,
    _held: lock::Serial,
}

impl TracingOnGuard {
    /// Waits until no other test uses the switch, mounts a private tracefs and saves
    /// the switch's value. Without tracefs (no CONFIG_TRACING, no permission) there is
    /// nothing to save or check: [`TracingOnGuard::read`] is `None`, and the test says so.
    pub fn save() -> Self {
        isolate::ensure();
        let held = lock::serial(Resource::Tracing);
        let dir = TempDir::new("tracefs");
        let mounted = Command::new("mount")
            .args(["-t", "tracefs", "nodev"])
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        let mount = mounted
            .then(|| std::fs::read_to_string(dir.path().join("tracing_on")).ok())
            .flatten()
            .map(|v| (dir, v.trim().to_string()));
        if mount.is_none() {
            skip("the tracing_on check (tracefs cannot be mounted here)");
        }
        TracingOnGuard { mount, _held: held }
    }

    /// The kernel's `tracing_on` now ("0" or "1"), or `None` without tracefs.
    pub fn read(&self) -> Option<String> {
        let (dir, _) = self.mount.as_ref()?;
        std::fs::read_to_string(dir.path().join("tracing_on"))
            .ok()
            .map(|v| v.trim().to_string())
    }
}

impl Drop for TracingOnGuard {
    fn drop(&mut self) {
        if let Some((dir, v)) = &self.mount {
            let _ = std::fs::write(dir.path().join("tracing_on"), v);
            let _ = Command::new("umount").arg(dir.path()).status();
        }
    }
}

/// Parses one logfmt line (`rtbench selftest --log-format logfmt`) into fields (quoted values unescaped).
pub fn logfmt(line: &str) -> std::collections::HashMap<String, String> {
    let mut m = std::collections::HashMap::new();
    let mut rest = line.trim();
    while !rest.is_empty() {
        let (k, after) = rest.split_once('=').expect("key=value");
        let (v, tail) = if let Some(q) = after.strip_prefix('"') {
            let mut out = String::new();
            let mut chars = q.char_indices();
            let mut end = q.len();
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => {
                        if let Some((_, n)) = chars.next() {
                            out.push(if n == 'n' { '\n' } else { n });
                        }
                    }
                    '"' => {
                        end = i + 1;
                        break;
                    }
                    c => out.push(c),
                }
            }
            (out, &q[end..])
        } else {
            let end = after.find(' ').unwrap_or(after.len());
            (after[..end].to_string(), &after[end..])
        };
        m.insert(k.to_string(), v);
        rest = tail.trim_start();
    }
    m
}

pub fn entries(o: &Output) -> Vec<std::collections::HashMap<String, String>> {
    stderr(o)
        .lines()
        .filter(|l| l.starts_with("MESSAGE_ID="))
        .map(logfmt)
        .collect()
}

pub fn with_id<'a>(
    e: &'a [std::collections::HashMap<String, String>],
    id: &str,
) -> Vec<&'a std::collections::HashMap<String, String>> {
    e.iter().filter(|m| m["MESSAGE_ID"] == id).collect()
}

/// `@FIELD@` placeholders of the catalog, per MESSAGE_ID.
pub fn catalog() -> std::collections::HashMap<String, std::collections::HashSet<String>> {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("systemd/rtbench.catalog"),
    )
    .unwrap();
    let mut m: std::collections::HashMap<String, std::collections::HashSet<String>> =
        std::collections::HashMap::new();
    let mut id = String::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("-- ") {
            id = rest.trim().to_string();
            m.entry(id.clone()).or_default();
            continue;
        }
        if id.is_empty() {
            continue;
        }
        let mut rest = line;
        while let Some(a) = rest.find('@') {
            let after = &rest[a + 1..];
            match after.find('@') {
                Some(b)
                    if after[..b]
                        .chars()
                        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
                        && b > 0 =>
                {
                    m.get_mut(&id).unwrap().insert(after[..b].to_string());
                    rest = &after[b + 1..];
                }
                _ => rest = after,
            }
        }
    }
    m
}

/// `text`, a self-test configuration, with `[selftest] require_preempt_rt = false`:
/// the tests judge what they measure on this machine's kernel, PREEMPT_DYNAMIC on the
/// development VM and PREEMPT_RT in the boot tests' guests alike (the requirement
/// itself is tested on its own).
pub fn on_any_kernel(text: &str) -> String {
    const KEY: &str = "require_preempt_rt = false\n";
    match text.find("[selftest]\n") {
        Some(i) => {
            let at = i + "[selftest]\n".len();
            format!("{}{KEY}{}", &text[..at], &text[at..])
        }
        None => format!("{text}\n[selftest]\n{KEY}"),
    }
}

/// Fails the test unless `promtool check metrics` (Debian package prometheus, the
/// parser node_exporter's users run) accepts the textfile at `path`; its complaint and
/// the file in the message.
pub fn promtool_accepts(path: &std::path::Path) {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let check = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::fs::File::open(path).unwrap())
        .output()
        .expect("promtool (Debian package prometheus) must be installed");
    assert!(
        check.status.success(),
        "promtool: {}{}\n{text}",
        stdout(&check),
        stderr(&check)
    );
}

/// Says that the calling test cannot run its check here, and why: one line
/// `skipped: TEST: REASON` on standard error and, when `RTBENCH_IT_SKIPS` names a file
/// (as `.ci/run` does), the same line appended to it, so the run counts and lists its
/// skipped tests instead of reading them as passed. The test then returns.
pub fn skip(reason: &str) {
    use std::io::Write;
    let name = std::thread::current()
        .name()
        .unwrap_or("(unnamed test)")
        .to_string();
    let line = format!("skipped: {name}: {reason}\n");
    eprint!("{line}");
    if let Some(path) = std::env::var_os("RTBENCH_IT_SKIPS") {
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            let _ = f.write_all(line.as_bytes());
        }
    }
}
