//! Helpers for the integration tests: run the real binary, look at /proc.
#![allow(dead_code)]

pub mod tune_tree;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The rtbench binary cargo built for these tests, run as by hand even when the test
/// runner itself is a systemd service: no `INVOCATION_ID` (which would make the stored
/// trigger "systemd"), `RTBENCH_TRIGGER`, `NOTIFY_SOCKET` or `JOURNAL_STREAM`.
pub fn rtbench() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rtbench"));
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
impl<const N: usize> ArgList for [&str; N] {
    fn words(&self) -> Vec<String> {
        self[..].words()
    }
}

/// Runs rtbench with `args` and waits for it.
pub fn run<A: ArgList + ?Sized>(args: &A) -> Output {
    rtbench().args(args.words()).output().expect("run rtbench")
}

/// A path in the temporary directory no other test of this run uses: tests of one
/// binary run in parallel threads of one process.
fn unique_temp_path(tag: &str) -> PathBuf {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    std::env::temp_dir().join(format!("rtbench-it-{tag}-{}-{n}", std::process::id()))
}

/// A fresh empty directory, removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        let d = unique_temp_path(tag);
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        TempDir(d)
    }
    pub fn entries(&self) -> Vec<String> {
        std::fs::read_dir(&self.0)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// One process as /proc/PID/stat shows it.
#[derive(Debug, Clone)]
pub struct Proc {
    pub pid: i32,
    pub state: char,
    pub ppid: i32,
    pub pgid: i32,
    pub cmdline: String,
}

pub fn proc_info(pid: i32) -> Option<Proc> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // comm may contain spaces: fields start after the last ')'.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
        .unwrap_or_default();
    Some(Proc {
        pid,
        state: f[0].chars().next()?,
        ppid: f[1].parse().ok()?,
        pgid: f[2].parse().ok()?,
        cmdline,
    })
}

/// Every process on the machine.
pub fn all_procs() -> Vec<Proc> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(proc_info)
        .collect()
}

/// Live (not zombie) processes among `pids` or in process group `pgid`.
pub fn alive(pids: &[i32], pgid: Option<i32>) -> Vec<Proc> {
    all_procs()
        .into_iter()
        .filter(|p| p.state != 'Z' && p.state != 'X')
        .filter(|p| pids.contains(&p.pid) || Some(p.pgid) == pgid)
        .collect()
}

/// Polls `f` every 20 ms until it returns Some or `timeout` passes.
pub fn wait_for<T>(timeout: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let end = Instant::now() + timeout;
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        if Instant::now() >= end {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Spawns rtbench with TMPDIR set to `tmp`, output captured.
pub fn spawn_with_tmp(args: &[&str], tmp: &Path) -> Child {
    rtbench()
        .args(args)
        .env("TMPDIR", tmp)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rtbench starts")
}

pub fn signal(pid: u32, sig: i32) {
    // SAFETY: sending a signal to a child we spawned.
    unsafe { libc::kill(pid as i32, sig) };
}

/// Runs Debian's cyclictest with `args`. Panics with an install hint when missing: the
/// comparison tests are the point, so they must not pass silently without it.
pub fn cyclictest(args: &str) -> Output {
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

/// A fresh temporary directory for one test.
pub fn tempdir(name: &str) -> PathBuf {
    let d = unique_temp_path(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Number of online CPUs (`/sys/devices/system/cpu/online`).
pub fn online_cpus() -> usize {
    let s = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    rtbench::cpuset::CpuSet::parse_list(&s, 4096).unwrap().len()
}

/// Restores /sys/kernel/tracing/tracing_on (which -b turns off) when dropped.
pub struct TracingOnGuard(Option<String>);

impl TracingOnGuard {
    /// The tracefs switch.
    pub const PATH: &'static str = "/sys/kernel/tracing/tracing_on";
    /// Saves the current value.
    pub fn save() -> Self {
        TracingOnGuard(std::fs::read_to_string(Self::PATH).ok())
    }
}

impl Drop for TracingOnGuard {
    fn drop(&mut self) {
        if let Some(v) = &self.0 {
            let _ = std::fs::write(Self::PATH, v.trim());
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
