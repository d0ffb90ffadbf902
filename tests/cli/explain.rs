//! `rtbench cyclic --explain` on this machine's kernel, with real culprits injected on
//! the measured CPU: each must be named as the cause of the late samples it made.
//! The tests assert the attribution (the culprit's pid, the cause's kind), never a
//! latency value. They need root, tracefs (rtbench mounts it if it is not) and at
//! least 2 online CPUs: CPU 1 is measured, the main thread, the tests and every
//! culprit's killer run on CPU 0. Each holds the machine alone
//! (`common::exclusive`): another test's threads on CPU 1 would be named too.
//!
//! A culprit at real-time priority is ended by `timeout` running on CPU 0 outside its
//! `chrt`/`taskset`, so a stuck test cannot leave a FIFO busy loop behind.

use crate::common::explain::{culprit, instance_of, wait_ready};
use crate::common::{exclusive, rtbench, signal, stop_for, wait_for, wait_samples, TempDir};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// How long a run may take to measure and record ([`wait_ready`]).
const READY: Duration = Duration::from_secs(30);

/// A whole `rtbench cyclic` run of 1 s on CPU 1 at SCHED_FIFO 98 with an explain
/// threshold of 100 ms (`--explain 100000`, µs): it makes a tracefs instance of its own
/// and, as it starts, removes the instances of rtbench processes that are gone.
const SHORT_RUN: [&str; 13] = [
    "cyclic",
    "-m",
    "-a",
    "1",
    "-p",
    "98",
    "-i",
    "1000",
    "-D",
    "1s",
    "-q",
    "--explain",
    "100000",
];

/// `rtbench cyclic` measuring CPU 1 with `--explain US` until SIGINT, JSON to `json`.
fn start(explain_us: u64, extra: &[&str], json: &Path) -> Child {
    let mut args: Vec<String> = [
        "cyclic",
        "-m",
        "-a",
        "1",
        "-i",
        "1000",
        "-q",
        "--mainaffinity",
        "0",
        "-D",
        "120s",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.push("--explain".into());
    args.push(explain_us.to_string());
    args.push("--json".into());
    args.push(json.display().to_string());
    args.extend(extra.iter().map(|s| s.to_string()));
    rtbench()
        .args(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rtbench starts")
}

/// Stops the run with SIGINT and returns its `"explain"` object and stderr.
fn stop(child: Child, json: &Path) -> (Value, String) {
    signal(child.id(), libc::SIGINT);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(130), "stderr: {err}");
    let doc: Value = serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap();
    let x = doc["rtbench"]["explain"].clone();
    assert!(x.is_object(), "no explain object: {err}");
    (x, err)
}

fn explained(x: &Value) -> Vec<Value> {
    x["explained"].as_array().cloned().unwrap_or_default()
}

fn by_kind<'a>(v: &'a [Value], kind: &str) -> Vec<&'a Value> {
    v.iter().filter(|e| e["cause"]["kind"] == kind).collect()
}

fn no_instance_left(pid: u32) {
    assert!(
        !instance_of(pid).exists(),
        "the tracefs instance of rtbench {pid} was left behind"
    );
}

#[test]
fn a_fifo_99_busy_loop_is_named_with_its_pid_and_priority() {
    let _machine = exclusive();
    let d = TempDir::new("busy");
    let json = d.join("r.json");
    let run = start(2000, &["-p", "98"], &json);
    wait_ready(&run, READY);
    let pid = run.id();
    let (mut c, culprit_pid) = culprit(&["-f", "99"], "0.3", "while :; do :; done", &d);
    c.wait().unwrap();
    let (x, err) = stop(run, &json);
    no_instance_left(pid);
    let v = explained(&x);
    let hit = by_kind(&v, "task")
        .into_iter()
        .find(|e| e["cause"]["pid"] == culprit_pid)
        .unwrap_or_else(|| panic!("no explanation names pid {culprit_pid}: {x:#}\n{err}"));
    assert_eq!(hit["cause"]["valid"], true);
    assert!(
        hit["cause"]["text"].as_str().unwrap().contains("99)"),
        "{hit:#}"
    );
    let t = &hit["tasks"][0];
    assert_eq!(t["pid"], culprit_pid);
    assert_eq!(t["prio"], 0, "FIFO 99 is kernel priority 0: {t}");
    assert_eq!(t["outranks"], true);
    assert!(hit["thread_latency_ns"].as_u64().unwrap() > hit["irq_latency_ns"].as_u64().unwrap());
}

#[test]
fn a_higher_priority_periodic_task_is_named() {
    let _machine = exclusive();
    let d = TempDir::new("periodic");
    let json = d.join("r.json");
    let run = start(5000, &["-p", "80"], &json);
    wait_ready(&run, READY);
    // A vendor daemon's shape: 20 ms busy every 200 ms at SCHED_FIFO 90.
    let script = "python3 -c 'import time\nwhile True:\n    e=time.monotonic()+0.02\n    while time.monotonic()<e: pass\n    time.sleep(0.18)'";
    let (mut c, sh_pid) = culprit(&["-f", "90"], "1.5", &format!("exec {script}"), &d);
    c.wait().unwrap();
    let (x, err) = stop(run, &json);
    let v = explained(&x);
    // Named by its pid (its name is "sh" until the exec, "python3" after: the first
    // burst may be its start-up) and its priority (kernel priority 9 = FIFO 90).
    assert!(
        by_kind(&v, "task")
            .iter()
            .any(|e| e["cause"]["pid"] == sh_pid
                && e["cause"]["text"]
                    .as_str()
                    .unwrap()
                    .contains(&format!("(pid {sh_pid}, "))
                && e["tasks"]
                    .as_array()
                    .is_some_and(|t| t.iter().any(|t| t["pid"] == sh_pid && t["prio"] == 9))),
        "the periodic task (pid {sh_pid}) is not named: {x:#}\n{err}"
    );
}

/// The ledger's entries (`rtbench.explain.ledger`) of thread 0 naming `pid`: `(count,
/// worst ns)` summed over them (a task named `sh` before its exec and `python3` after
/// is one pid under two names).
fn ledger_of(x: &Value, pid: i32) -> (u64, u64) {
    let causes = x["ledger"]["threads"][0]["causes"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    causes
        .iter()
        .filter(|c| c["culprit"]["kind"] == "task" && c["culprit"]["pid"] == pid)
        .fold((0, 0), |(n, w), c| {
            (
                n + c["count"].as_u64().unwrap(),
                w.max(c["worst_ns"].as_u64().unwrap()),
            )
        })
}

/// The field's case: after one large one-off (a FIFO 99 busy loop for 0.5 s), a
/// recurring FIFO 90 culprit (15 ms busy every 150 ms) never makes a new maximum; it is
/// still counted, under its own pid, in the ledger and the `# Causes:` block.
#[test]
fn a_recurring_culprit_below_an_earlier_maximum_is_counted_in_the_ledger() {
    let _machine = exclusive();
    let d = TempDir::new("ledger");
    let json = d.join("r.json");
    let run = start(5000, &["-p", "80"], &json);
    wait_ready(&run, READY);
    let (mut c, once) = culprit(&["-f", "99"], "0.5", "while :; do :; done", &d);
    c.wait().unwrap();
    let script = "python3 -c 'import time\nwhile True:\n    e=time.monotonic()+0.015\n    while time.monotonic()<e: pass\n    time.sleep(0.15)'";
    let (mut c, recurring) = culprit(&["-f", "90"], "1.5", &format!("exec {script}"), &d);
    c.wait().unwrap();
    signal(run.id(), libc::SIGINT);
    let out = run.wait_with_output().unwrap();
    // The `# Explained:` and `# Causes:` blocks follow the summary on standard output.
    let err =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let x = doc["rtbench"]["explain"].clone();
    let (n_once, worst_once) = ledger_of(&x, once);
    let (n, worst) = ledger_of(&x, recurring);
    assert!(
        n_once >= 1,
        "the one-off (pid {once}) is not counted: {x:#}\n{err}"
    );
    assert!(
        n >= 2,
        "the recurring culprit (pid {recurring}) is counted {n} times: {:#}\n{err}",
        x["ledger"]
    );
    // The premise: none of its samples was a new maximum.
    assert!(worst < worst_once, "{:#}", x["ledger"]);
    let t = &x["ledger"]["threads"][0];
    assert_eq!(t["threshold_ns"], 5_000_000);
    assert!(
        err.lines()
            .any(|l| l.starts_with("#   ") && l.contains(&format!("(pid {recurring}"))),
        "no # Causes: line names pid {recurring}:\n{err}"
    );
    assert!(
        err.contains("# Causes: T:0 CPU 1, threshold 5000 µs: "),
        "{err}"
    );
}

#[test]
fn sigstop_of_rtbench_is_an_invalid_sample_named_as_a_stop() {
    let _machine = exclusive();
    let d = TempDir::new("stop");
    let json = d.join("r.json");
    let run = start(50_000, &["-p", "98"], &json);
    wait_ready(&run, READY);
    stop_for(run.id(), Duration::from_millis(300));
    // The stop's sample is caught when the thread wakes; the run goes on. Wait until
    // the thread has taken samples after the stop, so that the late one is recorded
    // (and trapped) before SIGINT ends the run.
    wait_samples(run.id(), "rtbench-T", 1, 3);
    let (x, err) = stop(run, &json);
    let v = explained(&x);
    let s = by_kind(&v, "stopped");
    assert!(!s.is_empty(), "no stop named: {x:#}\n{err}");
    assert_eq!(s[0]["cause"]["valid"], false);
}

/// Freezes rtbench's whole process in a cgroup (v2 `cgroup.freeze`, else the v1
/// freezer), thaws it, and moves it back.
#[test]
fn the_cgroup_freezer_is_an_invalid_sample_named_as_a_stop() {
    let _machine = exclusive();
    let d = TempDir::new("freeze");
    let json = d.join("r.json");
    let run = start(50_000, &["-p", "98"], &json);
    wait_ready(&run, READY);
    let pid = run.id();
    let g = Freezer::new(pid);
    g.freeze(true);
    std::thread::sleep(Duration::from_millis(300));
    g.freeze(false);
    drop(g);
    // As above: the late sample is recorded once the thread has woken after the thaw.
    wait_samples(pid, "rtbench-T", 1, 3);
    let (x, err) = stop(run, &json);
    let v = explained(&x);
    assert!(
        !by_kind(&v, "stopped").is_empty(),
        "no freeze named: {x:#}\n{err}"
    );
}

/// A cgroup made for one test; the process is moved back to its old cgroup and the
/// group removed when dropped.
struct Freezer {
    dir: PathBuf,
    v2: bool,
    back: PathBuf,
    pid: u32,
}

fn cgroup_mount(fstype: &str, option: Option<&str>) -> Option<PathBuf> {
    let mi = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    mi.lines().find_map(|l| {
        let (pre, post) = l.split_once(" - ")?;
        let mut post = post.split(' ');
        let fs = post.next()?;
        let opts = post.nth(1)?;
        let mp = pre.split(' ').nth(4)?;
        (fs == fstype && option.map_or(true, |o| opts.split(',').any(|x| x == o)))
            .then(|| PathBuf::from(mp))
    })
}

impl Freezer {
    fn new(pid: u32) -> Freezer {
        let (root, v2) =
            match cgroup_mount("cgroup2", None).filter(|r| r.join("cgroup.controllers").exists()) {
                Some(r) => (r, true),
                None => (
                    cgroup_mount("cgroup", Some("freezer")).expect("no cgroup2 nor v1 freezer"),
                    false,
                ),
            };
        let cg = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap();
        let rel = cg
            .lines()
            .find_map(|l| {
                let mut f = l.splitn(3, ':');
                let (_, ctrl, path) = (f.next()?, f.next()?, f.next()?);
                let hit = if v2 {
                    ctrl.is_empty()
                } else {
                    ctrl.split(',').any(|c| c == "freezer")
                };
                hit.then(|| path.trim_start_matches('/').to_string())
            })
            .unwrap_or_default();
        let back = root.join(&rel);
        let dir = root.join(format!("rtbench-explain-{}", std::process::id()));
        let _ = std::fs::create_dir(&dir);
        std::fs::write(dir.join("cgroup.procs"), pid.to_string()).unwrap();
        Freezer { dir, v2, back, pid }
    }

    fn freeze(&self, on: bool) {
        let (file, v) = match (self.v2, on) {
            (true, true) => ("cgroup.freeze", "1"),
            (true, false) => ("cgroup.freeze", "0"),
            (false, true) => ("freezer.state", "FROZEN"),
            (false, false) => ("freezer.state", "THAWED"),
        };
        std::fs::write(self.dir.join(file), v).unwrap();
    }
}

impl Drop for Freezer {
    fn drop(&mut self) {
        self.freeze(false);
        let _ = std::fs::write(self.back.join("cgroup.procs"), self.pid.to_string());
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// A back-to-back `rtbench pipe` pair at SCHED_FIFO 90 on the measured CPU keeps it
/// 100 % busy at real-time priority; with fair work waiting there (a SCHED_OTHER
/// loop) the kernel's RT bandwidth limit holds every real-time task back for ~50 ms a
/// second, the measuring thread included: not the system's latency.
#[test]
fn rt_throttling_by_a_busy_fifo_pipe_pair_is_an_invalid_sample() {
    let _machine = exclusive();
    let rt = std::fs::read_to_string("/proc/sys/kernel/sched_rt_runtime_us").unwrap();
    assert_ne!(
        rt.trim(),
        "-1",
        "RT throttling is off on this machine: the test needs it on"
    );
    let d = TempDir::new("rtthrottle");
    let json = d.join("r.json");
    let run = start(10_000, &["-p", "98"], &json);
    wait_ready(&run, READY);
    let (mut fair, _) = culprit(&["-o", "0"], "3", "while :; do :; done", &d);
    let mut pipe = Command::new("taskset")
        .args(["-c", "0", "timeout", "-k", "1", "2.5"])
        .arg(crate::common::exe())
        .args([
            "pipe",
            "-a",
            "1",
            "-p",
            "90",
            "-i",
            "0",
            "-q",
            "--mainaffinity",
            "0",
            "-D",
            "2s",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    pipe.wait().unwrap();
    fair.wait().unwrap();
    let (x, err) = stop(run, &json);
    let v = explained(&x);
    let t = by_kind(&v, "rt_throttled");
    assert!(!t.is_empty(), "no RT throttling named: {x:#}\n{err}");
    assert_eq!(t[0]["cause"]["valid"], false);
    assert!(
        t[0]["cause"]["text"].as_str().unwrap().contains("rtbench-"),
        "{:#}",
        t[0]
    );
}

/// TCP over loopback between tasks pinned to the measured CPU (stress-ng's socket
/// stressor): the network stack's receive work holds the thread's wakeup back, either
/// as the NET_RX softirq or, processed in the sender's own context, as a section with
/// bottom halves disabled (`local_bh_disable`) — both are named.
///
/// The effect is about half a millisecond, the size of this VM's own hiccups; only new
/// maxima are explained, so a hiccup before the flood can hide it: up to three runs.
#[test]
fn a_softirq_flood_is_named_as_net_rx() {
    let _machine = exclusive();
    let d = TempDir::new("softirq");
    let json = d.join("r.json");
    let mut seen = Vec::new();
    for _ in 0..3 {
        let run = start(30, &["-p", "98"], &json);
        wait_ready(&run, READY);
        let st = Command::new("taskset")
            .args(["-c", "0", "timeout", "-k", "1", "4", "taskset", "-c", "1"])
            .args(["stress-ng", "--sock", "2", "-t", "3", "--quiet"])
            .status()
            .expect("stress-ng (Debian package stress-ng)");
        assert!(st.success() || st.code() == Some(124), "{st:?}");
        let (x, err) = stop(run, &json);
        let v = explained(&x);
        // The flood's own tasks (SCHED_OTHER: they cannot outrank the thread) keep the
        // CPU in the network stack, or its softirq runs.
        let named = v.iter().any(|e| {
            let text = e["cause"]["text"].as_str().unwrap_or("");
            text.contains("NET_RX")
                || (e["cause"]["kind"] == "preempt_off" && text.contains("stress-ng"))
                || e["softirqs"]
                    .as_array()
                    .is_some_and(|s| s.iter().any(|i| i["name"] == "NET_RX"))
        });
        if named {
            return;
        }
        seen.push(format!("{x:#}\n{err}"));
    }
    panic!(
        "neither NET_RX nor a BH-disabled section of stress-ng in three runs:\n{}",
        seen.join("\n---\n")
    );
}

/// CFS bandwidth (`cpu.max`, or v1 `cpu.cfs_quota_us`) of the cgroup a SCHED_OTHER
/// measurement runs in, exhausted by a busy loop in the same cgroup.
#[test]
fn cfs_bandwidth_throttling_is_an_invalid_sample() {
    let _machine = exclusive();
    let d = TempDir::new("cfs");
    let json = d.join("r.json");
    let run = start(5000, &["--policy", "other"], &json);
    wait_ready(&run, READY);
    let g = Quota::new(run.id());
    // The loop joins the quota before it spins: spinning outside it first would
    // delay the thread as a fair competitor ("task"), and the recording of that
    // sample could still be read when the throttling comes.
    let join = format!(
        "echo $$ > {}; while :; do :; done",
        g.dir.join("cgroup.procs").display()
    );
    let (mut busy, busy_pid) = culprit(&["-o", "0"], "2", &join, &d);
    g.add(busy_pid as u32);
    busy.wait().unwrap();
    drop(g);
    let (x, err) = stop(run, &json);
    let v = explained(&x);
    let t = by_kind(&v, "cfs_throttled");
    assert!(!t.is_empty(), "no CFS throttling named: {x:#}\n{err}");
    assert!(
        t[0]["cause"]["text"]
            .as_str()
            .unwrap()
            .contains("throttled"),
        "{:#}",
        t[0]
    );
}

/// A cgroup with a CPU quota of 5 ms per 100 ms.
struct Quota {
    dir: PathBuf,
    back: PathBuf,
    pids: std::cell::RefCell<Vec<u32>>,
}

impl Quota {
    fn new(pid: u32) -> Quota {
        let v1 = cgroup_mount("cgroup", Some("cpu"));
        let (root, v2) = match v1 {
            Some(r) => (r, false),
            None => (
                cgroup_mount("cgroup2", None).expect("no cpu controller"),
                true,
            ),
        };
        let dir = root.join(format!("rtbench-explain-cfs-{}", std::process::id()));
        let _ = std::fs::create_dir(&dir);
        if v2 {
            std::fs::write(dir.join("cpu.max"), "5000 100000").unwrap();
        } else {
            std::fs::write(dir.join("cpu.cfs_period_us"), "100000").unwrap();
            std::fs::write(dir.join("cpu.cfs_quota_us"), "5000").unwrap();
        }
        let q = Quota {
            dir,
            back: root,
            pids: Default::default(),
        };
        q.add(pid);
        q
    }

    fn add(&self, pid: u32) {
        std::fs::write(self.dir.join("cgroup.procs"), pid.to_string()).unwrap();
        self.pids.borrow_mut().push(pid);
    }
}

impl Drop for Quota {
    fn drop(&mut self) {
        for p in self.pids.borrow().iter() {
            let _ = std::fs::write(self.back.join("cgroup.procs"), p.to_string());
        }
        let _ = std::fs::remove_dir(&self.dir);
    }
}

#[test]
fn an_instance_left_by_a_killed_rtbench_is_removed_at_the_next_start_and_the_top_level_is_untouched(
) {
    let _machine = exclusive();
    let top =
        |f: &str| std::fs::read_to_string(format!("/sys/kernel/tracing/{f}")).unwrap_or_default();
    let d = TempDir::new("crash");
    let json = d.join("r.json");
    let run = start(100_000, &["-p", "98"], &json);
    wait_ready(&run, READY);
    let before = (
        top("tracing_on"),
        top("set_event"),
        top("current_tracer"),
        top("trace_clock"),
    );
    let pid = run.id();
    signal(pid, libc::SIGKILL);
    let mut run = run;
    run.wait().unwrap();
    assert!(instance_of(pid).exists(), "the killed run's instance");
    // Killed: the kernel closed free_buffer, which stopped the recording.
    assert_eq!(
        std::fs::read_to_string(instance_of(pid).join("tracing_on"))
            .unwrap()
            .trim(),
        "0"
    );
    let out = rtbench().args(SHORT_RUN).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains(&format!(
            "tracefs instance rtbench-{pid} of an rtbench that is gone removed"
        )),
        "{err}"
    );
    assert!(!instance_of(pid).exists());
    let left: Vec<String> = std::fs::read_dir("/sys/kernel/tracing/instances")
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("rtbench-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    let after = (
        top("tracing_on"),
        top("set_event"),
        top("current_tracer"),
        top("trace_clock"),
    );
    assert_eq!(before, after, "the top-level buffer's settings changed");
}

/// A threshold with a unit other than µs, a fraction or an exponent is refused before
/// anything starts, in every command that takes `--explain` (rtbench's own option: not
/// read as `atoi` would, which made `1s` a 1-µs threshold).
#[test]
fn an_explain_threshold_that_is_not_whole_microseconds_is_refused() {
    for cmd in ["cyclic", "pmq", "pipe"] {
        for bad in ["1s", "100ms", "2e3", "0.5"] {
            let out = rtbench()
                .args([cmd, "-l", "1", "-q", "--explain", bad])
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{cmd} --explain {bad}: {err}");
            assert_eq!(err.lines().count(), 1, "{cmd} --explain {bad}: {err}");
            assert!(
                err.contains("--explain") && err.contains("whole number of µs"),
                "{cmd} --explain {bad}: {err}"
            );
        }
    }
}

/// Without permission to make an instance the measurement runs as before, with one
/// line saying why nothing is explained.
#[test]
fn without_permission_nothing_is_explained_and_the_run_goes_on() {
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(crate::common::exe())
        .args([
            "cyclic",
            "--policy",
            "other",
            "--no-mlockall",
            "-i",
            "1000",
            "-l",
            "100",
            "-q",
            "--explain",
            "100",
            "--default-system",
        ])
        .output()
        .expect("setpriv (util-linux)");
    let err = String::from_utf8_lossy(&out.stderr);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{err}");
    assert!(text.contains("T: 0"), "{text}");
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("cannot explain"))
        .collect();
    assert_eq!(lines.len(), 1, "{err}");
    // Permission, not "not mounted": a user cannot see whether it is.
    assert!(
        lines[0].contains("no permission") && !lines[0].contains("not mounted"),
        "{err}"
    );
}

/// tracefs is the machine's, pids are a namespace's: an rtbench in a container (its own
/// pid namespace, `unshare --pid`) names its instance by its namespace and leaves a
/// dead-looking `rtbench-PID` of the initial namespace alone (that pid may be alive
/// out there); an rtbench of the initial namespace reclaims it.
#[test]
fn an_rtbench_in_another_pid_namespace_reclaims_only_its_own_namespace() {
    let _machine = exclusive();
    // A pid of the initial namespace that is gone, and an instance named for it.
    let mut gone = Command::new("true").spawn().unwrap();
    let gone_pid = gone.id();
    gone.wait().unwrap();
    let planted = instance_of(gone_pid);
    std::fs::create_dir(&planted).expect("mkdir of a tracefs instance");
    // What a killed rtbench leaves: its marker (src/sys/tracefs.rs), recording off.
    std::fs::write(
        planted.join("events/sched/sched_process_free/filter"),
        "common_pid != -1 && common_type != 0x7274626e",
    )
    .unwrap();
    std::fs::write(planted.join("tracing_on"), "0").unwrap();
    struct Rm(PathBuf);
    impl Drop for Rm {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir(&self.0);
        }
    }
    let _rm = Rm(planted.clone());
    let contained = Command::new("unshare")
        .args(["--pid", "--fork", "--mount-proc"])
        .arg(crate::common::exe())
        .args(SHORT_RUN)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("unshare (util-linux)");
    // Its instance carries its namespace.
    let named = wait_for(Duration::from_secs(20), || {
        std::fs::read_dir("/sys/kernel/tracing/instances")
            .ok()?
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .find(|n| n.starts_with("rtbench-1-ns"))
    });
    let out = contained.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(named.is_some(), "no rtbench-1-nsINODE instance seen: {err}");
    assert!(
        planted.exists(),
        "the container's rtbench removed another namespace's instance"
    );
    assert!(!err.contains("removed"), "{err}");
    // On the host it is an instance of an rtbench that is gone.
    let out = rtbench().args(SHORT_RUN).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!planted.exists(), "{err}");
}

/// `rtbench pipe --explain`: a back-to-back FIFO pair on CPU 1 beside a fair busy loop
/// there is held back by RT bandwidth control (RT throttling; from Linux 6.12 the fair
/// server) about once a second; the explanation says so, names rtbench's own pair as the
/// real-time load, and marks the sample as not the system's latency — in the JSON and
/// the `# Explained:` block. (A culprit that outranks the pair on its own CPU holds
/// back the sender too, so it delays no message.) The stall lands on the message or on
/// the reply, which is not explained (the forward latency is the one judged, as by
/// `-b`): up to three runs of 3 s.
#[test]
fn pipe_explains_a_late_message_as_rt_throttling_by_its_own_pair() {
    let _machine = exclusive();
    let d = TempDir::new("pipe");
    let json = d.join("r.json");
    let mut seen = Vec::new();
    for _ in 0..3 {
        let (fair, _) = culprit(&["-o", "0"], "10", "while :; do :; done", &d);
        let out = rtbench()
            .args([
                "pipe",
                "-a",
                "1",
                "-p",
                "80",
                "-i",
                "0",
                "-q",
                "--mainaffinity",
                "0",
                "-D",
                "3s",
                "--explain",
                "10000",
                "--json",
            ])
            .arg(&json)
            .output()
            .expect("rtbench runs");
        // timeout passes SIGTERM on to the loop it runs.
        signal(fair.id(), libc::SIGTERM);
        let _ = fair.wait_with_output();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{err}");
        let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        let v = explained(&doc["rtbench"]["explain"]);
        let t = by_kind(&v, "rt_throttled");
        if let Some(t) = t.first() {
            assert_eq!(t["spike"]["test"], "pipe");
            assert_eq!(t["cause"]["valid"], false);
            assert!(
                t["cause"]["text"]
                    .as_str()
                    .unwrap()
                    .contains("caused by rtbench's own threads"),
                "{t:#}"
            );
            assert!(text.contains("# Explained: T:0 ("), "{text}");
            assert!(text.contains("RT throttling"), "{text}");
            return;
        }
        seen.push(format!("{v:#?}\n{text}"));
    }
    panic!(
        "no RT throttling named in three runs:\n{}",
        seen.join("\n---\n")
    );
}
