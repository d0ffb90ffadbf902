//! rtbench selftest on this machine (no journald here: entries arrive on standard
//! error as key=value lines, the BusyBox-init path). The journald path and systemd
//! are exercised by tests/vm/ in a qemu guest.

use crate::common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const SUMMARY: &str = "7b1dd0eea94d4cc4bd8f9e6c91b6465d";
const RESULT: &str = "b338a16c561342608e6e5ef41b0a0813";
const READY: &str = "6a9954f26ad8443b8423171c8abd3682";
const CONFIG: &str = "007f10bc07da46b6b3fc256220fca838";
const DEFAULTS: &str = "ccf6df43a9334ab7b3aa20e9f71826dd";
const OUTPUT: &str = "4ac37d680e7a4865822e0b39e581b9e0";

fn write_config(dir: &Path, body: &str) -> PathBuf {
    let p = dir.join("rtbench.toml");
    let text = format!(
        "{body}\n[output]\nresults_dir = \"{}\"\nfallback_dir = \"{}\"\nkeep = 3\nprometheus = \"{}\"\n",
        dir.join("results").display(),
        dir.join("run").display(),
        dir.join("rtbench.prom").display()
    );
    std::fs::write(&p, crate::common::on_any_kernel(&text)).unwrap();
    p
}

fn results(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir.join("results"))
        .map(|r| r.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    v.retain(|p| p.file_name().unwrap().to_string_lossy().starts_with("run-"));
    v.sort();
    v
}

#[test]
fn passing_run_reports_every_cpu_stores_and_exports() {
    let dir = TempDir::new("st-pass");
    let cfg = write_config(
        &dir,
        "[selftest]\nmode = \"check\"\nduration = \"1s\"\n[load]\nspec = \"cpu:1\"\n[limits]\nmax_us = 10000000\n",
    );
    let o = selftest_logfmt(&cfg);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let e = entries(&o);
    let ready = e
        .iter()
        .position(|m| m["MESSAGE_ID"] == READY)
        .expect("READY entry");
    let summary = e
        .iter()
        .position(|m| m["MESSAGE_ID"] == SUMMARY)
        .expect("summary");
    assert!(ready < summary, "READY before the verdict");
    let s = &e[summary];
    assert_eq!(s["RTBENCH_VERDICT"], "pass");
    assert_eq!(s["RTBENCH_LOAD"], "cpu:1");
    let per_cpu = with_id(&e, RESULT);
    assert_eq!(per_cpu.len(), online_cpus(), "one entry per CPU");
    for m in &per_cpu {
        assert_eq!(m["RTBENCH_TEST"], "cyclic");
        let p99: u64 = m["RTBENCH_P99_NS"].parse().unwrap();
        let p999: u64 = m["RTBENCH_P999_NS"].parse().unwrap();
        let max: u64 = m["RTBENCH_MAX_NS"].parse().unwrap();
        assert!(p99 <= p999 && p999 <= max, "{m:?}");
        assert_eq!(m["RTBENCH_LIMIT_MAX_NS"], "10000000000");
        assert_eq!(m["RTBENCH_VERDICT"], "pass");
    }
    let files = results(&dir);
    assert_eq!(files.len(), 1);
    assert_eq!(s["RTBENCH_RESULTS_FILE"], files[0].display().to_string());
    let stored: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
    assert_eq!(stored["verdict"]["pass"], true);
    assert!(
        stored["tests"][0]["threads"][0]["histogram"]
            .as_array()
            .unwrap()
            .len()
            > 1
    );
    assert!(stored["config"]["text"].as_str().unwrap().contains("cpu:1"));
    let prom = std::fs::read_to_string(dir.join("rtbench.prom")).unwrap();
    assert!(prom.contains("rtbench_selftest_pass 1"));
    // The human table on standard output.
    assert!(
        stdout(&o).contains("rtbench self-test PASS"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn impossible_limit_fails_with_exit_1() {
    let dir = TempDir::new("st-fail");
    let cfg = write_config(
        &dir,
        "[selftest]\nmode = \"off\"\nduration = \"1s\"\n[limits]\nmax_us = 1\n",
    );
    let o = selftest_logfmt(&cfg);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = entries(&o);
    let s = with_id(&e, SUMMARY);
    assert_eq!(s.last().unwrap()["RTBENCH_VERDICT"], "fail");
    assert!(with_id(&e, RESULT)
        .iter()
        .all(|m| m["RTBENCH_VERDICT"] == "fail"));
    assert_eq!(results(&dir).len(), 1, "a failed run is stored too");
}

#[test]
fn invalid_configuration_names_file_line_key_and_records_only_the_stopped_attempt() {
    let dir = TempDir::new("st-bad");
    let cases = [
        ("[cyclic]\ncpus = \"9999\"\n", ":2: cyclic.cpus = \"9999\""),
        (
            "[selftest]\nduration = \"5x\"\n",
            ":2: selftest.duration = \"5x\"",
        ),
        ("[limits]\nmax_usec = 5\n", ":2:"),
        ("[cyclic]\npriority = 100\n", ":2: cyclic.priority = 100"),
        ("[load]\nspec = \"disk:2\"\n", ":2: load.spec = \"disk:2\""),
        ("[tuning.sysctl]\nprintk = 12\n", ":2:"),
        ("[limits.pmq]\nmax_us = 5\n", "limits.pmq"),
        (
            "[[limits.cpus]]\ncpus = \"0\"\ntest = \"cyclictest\"\n",
            ":3: limits.cpus[0].test = \"cyclictest\"",
        ),
    ];
    let _printk = serial(Resource::Printk);
    let printk = std::fs::read_to_string("/proc/sys/kernel/printk").unwrap();
    for (body, want) in cases {
        let cfg = write_config(&dir, body);
        // As written: the lines the errors name are the body's.
        let as_written = std::fs::read_to_string(&cfg).unwrap();
        std::fs::write(
            &cfg,
            as_written.replacen("require_preempt_rt = false\n", "", 1),
        )
        .unwrap();
        let o = selftest_logfmt(&cfg);
        assert_eq!(o.status.code(), Some(2), "{body}: {}", stderr(&o));
        let e = entries(&o);
        assert_eq!(e.len(), 1, "{body}: exactly one entry: {}", stderr(&o));
        assert_eq!(e[0]["MESSAGE_ID"], CONFIG);
        assert_eq!(e[0]["PRIORITY"], "3");
        let msg = &e[0]["MESSAGE"];
        assert!(msg.starts_with(&cfg.display().to_string()), "{msg}");
        assert!(msg.contains(want), "{body}: {msg}");
        let line: usize = e[0]["RTBENCH_CONFIG_LINE"].parse().unwrap();
        assert!((1..=3).contains(&line), "{body}: {:?}", e[0]);
        // Nothing tuned or measured; the attempt's one record says where it stopped.
        let kept = stored_results(&dir);
        let last = kept.last().expect("the attempt's record");
        assert_eq!(last["attempt"]["state"], "stopped", "{body}: {last}");
        assert_eq!(last["attempt"]["stage"], "configuration", "{body}: {last}");
        assert_eq!(last["exit_code"], 2, "{body}: {last}");
        assert!(
            last["tests"].as_array().unwrap().is_empty(),
            "{body}: {last}"
        );
        assert!(stdout(&o).is_empty());
    }
    assert_eq!(
        std::fs::read_to_string("/proc/sys/kernel/printk").unwrap(),
        printk
    );
}

#[test]
fn missing_default_config_means_documented_defaults_said_in_the_journal() {
    // Without --config rtbench reads /etc/rtbench/rtbench.toml; when it is absent the
    // defaults apply (30 s) — stop it once it measures. The binary's mount namespace
    // hides the host's /etc/rtbench and /var/lib/rtbench (tests/common/isolate.rs).
    assert!(!Path::new("/etc/rtbench/rtbench.toml").exists());
    let r = Running::spawn(rtbench().args(["selftest", "--log-format", "logfmt"]));
    r.wait_stderr(0, "the defaults entry", |l| l.contains(DEFAULTS));
    wait_measuring(r.pid(), "rtbench-T", online_cpus());
    r.signal(libc::SIGINT);
    let o = r.finish();
    let e = entries(&o);
    // Its own MESSAGE_ID (systemd/rtbench.catalog): a notice is not a configuration error.
    assert!(with_id(&e, CONFIG).is_empty(), "{}", stderr(&o));
    let c = with_id(&e, DEFAULTS);
    assert_eq!(c.len(), 1, "{}", stderr(&o));
    assert!(c[0]["MESSAGE"].contains("using the documented defaults"));
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    let s = with_id(&e, SUMMARY);
    assert_eq!(s.last().unwrap()["RTBENCH_INTERRUPTED"], "1");
    assert_eq!(
        s.last().unwrap()["RTBENCH_VERDICT"],
        "fail",
        "a cut-short run cannot pass"
    );
    // The default results directory, /var/lib/rtbench, is this binary's own tmpfs:
    // remove what this test wrote all the same.
    if let Some(f) = s.last().and_then(|m| m.get("RTBENCH_RESULTS_FILE")) {
        let _ = std::fs::remove_file(f);
    }
}

/// Restores a kernel file's content when dropped (even when the test fails).
struct Restore(&'static str, String);
impl Drop for Restore {
    fn drop(&mut self) {
        let _ = std::fs::write(self.0, self.1.split_whitespace().next().unwrap_or(""));
    }
}

#[test]
fn apply_mode_tunes_before_ready_and_tune_revert_restores() {
    let _printk = serial(Resource::Printk);
    let dir = TempDir::new("st-apply");
    let before = std::fs::read_to_string("/proc/sys/kernel/printk").unwrap();
    let _guard = Restore("/proc/sys/kernel/printk", before.clone());
    let level: u32 = before.split_whitespace().next().unwrap().parse().unwrap();
    let want = if level == 3 { 2 } else { 3 };
    let journal_dir = dir.join("tune-journal");
    let cfg = write_config(
        &dir,
        &format!(
            "[selftest]\nmode = \"apply\"\nduration = \"1s\"\n[limits]\nmax_us = 60000000\n[tuning]\njournal_dir = \"{}\"\n[tuning.sysctl]\nprintk = {want}\n",
            journal_dir.display()
        ),
    );
    let o = selftest_logfmt(&cfg);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let now = std::fs::read_to_string("/proc/sys/kernel/printk").unwrap();
    assert_eq!(now.split_whitespace().next().unwrap(), want.to_string());
    let e = entries(&o);
    let tune = e
        .iter()
        .position(|m| {
            m.get("RTBENCH_TUNE_ITEM").map(String::as_str) == Some("sysctl.kernel.printk")
        })
        .expect("tuning entry");
    let ready = e.iter().position(|m| m["MESSAGE_ID"] == READY).unwrap();
    assert!(tune < ready);
    assert_eq!(e[tune]["RTBENCH_TUNE_CHANGED"], "1");
    assert_eq!(e[ready]["RTBENCH_TUNE_CHANGED"], "1");
    let r = rtbench()
        .args(["tune", "revert", "--config"])
        .arg(&cfg)
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(0), "{}", stderr(&r));
    assert_eq!(
        std::fs::read_to_string("/proc/sys/kernel/printk").unwrap(),
        before
    );
}

/// Watches directory `dir` (inotify): creations, writes, closes, renames, deletions.
struct DirEvents(std::fs::File);

impl DirEvents {
    fn watch(dir: &Path) -> DirEvents {
        use std::os::unix::ffi::OsStrExt;
        use std::os::unix::io::FromRawFd;
        // SAFETY: no pointers.
        let fd = unsafe { libc::inotify_init1(libc::IN_CLOEXEC) };
        assert!(
            fd >= 0,
            "inotify_init1: {}",
            std::io::Error::last_os_error()
        );
        // SAFETY: a descriptor of ours that nothing else owns or closes.
        let f = unsafe { std::fs::File::from_raw_fd(fd) };
        let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).unwrap();
        let mask = libc::IN_CREATE
            | libc::IN_MODIFY
            | libc::IN_CLOSE_WRITE
            | libc::IN_MOVED_FROM
            | libc::IN_MOVED_TO
            | libc::IN_DELETE;
        // SAFETY: a valid descriptor and C string.
        let wd = unsafe { libc::inotify_add_watch(fd, path.as_ptr(), mask) };
        assert!(
            wd >= 0,
            "inotify_add_watch: {}",
            std::io::Error::last_os_error()
        );
        DirEvents(f)
    }

    /// Waits (up to 100 ms) for events and returns how many arrived.
    fn next(&mut self) -> usize {
        use std::io::Read;
        use std::os::unix::io::AsRawFd;
        let mut p = libc::pollfd {
            fd: self.0.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        if unsafe { libc::poll(&mut p, 1, 100) } <= 0 {
            return 0;
        }
        let mut buf = [0u8; 4096];
        let n = self.0.read(&mut buf).unwrap();
        // struct inotify_event: wd, mask, cookie, len (4 bytes each), then len bytes.
        let (mut at, mut events) = (0, 0);
        while at + 16 <= n {
            let len = u32::from_ne_bytes(buf[at + 12..at + 16].try_into().unwrap()) as usize;
            at += 16 + len;
            events += 1;
        }
        events
    }
}

#[test]
fn sigkill_while_writing_results_never_damages_previous_results() {
    let dir = TempDir::new("st-kill");
    let cfg = write_config(
        &dir,
        "[selftest]\nmode = \"off\"\nduration = \"1s\"\n[cyclic]\ninterval_us = 200\n[limits]\nmax_us = 60000000\n",
    );
    // One complete run first, so there is always a previous result to protect.
    assert_eq!(selftest_logfmt(&cfg).status.code(), Some(0));
    let mut killed = 0;
    // Killed right after the k-th change the run makes in the results directory: its
    // temporary file created, written, closed, renamed (from and to), an old result
    // pruned — six in all. The kill lands a little later than the change it follows,
    // as the writer goes on meanwhile.
    for k in 1..=6 {
        let mut events = DirEvents::watch(&dir.join("results"));
        let mut child = rtbench()
            .args(["selftest", "--log-format", "logfmt", "--config"])
            .arg(&cfg)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let (mut seen, end) = (0, std::time::Instant::now() + BOUND);
        let status = loop {
            seen += events.next();
            assert!(std::time::Instant::now() < end, "selftest still running");
            if seen >= k {
                signal(child.id(), libc::SIGKILL);
            }
            if let Some(st) = child.try_wait().unwrap() {
                break st;
            }
        };
        if status.code().is_none() {
            killed += 1;
        }
        let files = results(&dir);
        assert!(!files.is_empty());
        for f in &files {
            let text = std::fs::read_to_string(f).unwrap();
            let v: serde_json::Value = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("{} is damaged (kill {k}): {e}", f.display()));
            assert!(v["verdict"]["pass"].is_boolean());
        }
        assert!(files.len() <= 3, "keep = 3");
    }
    assert!(killed > 0, "no run was killed: nothing was tested");
    // A later run cleans up temporary files left by killed writers.
    assert_eq!(selftest_logfmt(&cfg).status.code(), Some(0));
    let temps = std::fs::read_dir(dir.join("results"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp."))
        .count();
    assert_eq!(temps, 0);
}

/// A read-only bind mount of a directory; unmounted when dropped.
struct ReadOnly(PathBuf);
impl ReadOnly {
    fn mount(dir: &Path) -> ReadOnly {
        let ok = |c: &mut Command| assert!(c.status().unwrap().success(), "{c:?}");
        ok(Command::new("mount").arg("--bind").arg(dir).arg(dir));
        let ro = ReadOnly(dir.to_path_buf());
        ok(Command::new("mount")
            .args(["-o", "remount,ro,bind"])
            .arg(dir));
        ro
    }
}
impl Drop for ReadOnly {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn read_only_results_dir_still_reports_the_verdict() {
    let dir = TempDir::new("st-ro");
    let cfg = write_config(
        &dir,
        "[selftest]\nmode = \"off\"\nduration = \"1s\"\n[limits]\nmax_us = 1\n",
    );
    assert_eq!(selftest_logfmt(&cfg).status.code(), Some(1));
    let before: Vec<(PathBuf, Vec<u8>)> = results(&dir)
        .into_iter()
        .map(|p| {
            let b = std::fs::read(&p).unwrap();
            (p, b)
        })
        .collect();
    let o = {
        let _ro = ReadOnly::mount(&dir.join("results"));
        selftest_logfmt(&cfg)
    };
    assert_eq!(
        o.status.code(),
        Some(1),
        "the verdict still sets the exit code"
    );
    let e = entries(&o);
    let w = with_id(&e, OUTPUT);
    assert!(
        w.iter().any(
            |m| m["MESSAGE"].contains("results not stored") && m["RTBENCH_OUTPUT"] == "results"
        ),
        "{}",
        stderr(&o)
    );
    let s = with_id(&e, SUMMARY);
    assert_eq!(s.last().unwrap()["RTBENCH_VERDICT"], "fail");
    for (p, b) in before {
        assert_eq!(std::fs::read(&p).unwrap(), b, "{} changed", p.display());
    }
    assert_eq!(results(&dir).len(), 1);
}
