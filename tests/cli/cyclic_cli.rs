//! rtbench cyclic as a user meets it: bad input, signals, -b, overruns, refusals.

use crate::common::*;
use serde_json::Value;
use std::time::Duration;

#[test]
fn bad_input_is_one_line_exit_2_and_nothing_runs() {
    let dir = TempDir::new("bad");
    let cases = [
        ("-a 3-1", "-a 3-1:"),
        ("-a 9999", "-a 9999:"),
        ("-a 4-N", "-a 4-N:"),
        ("-a abc", "-a abc:"),
        ("-p 100", "-p 100:"),
        ("-i 0", "-i 0:"),
        ("-D 5x", "-D 5x:"),
        ("-h 0", "-h 0:"),
        ("--policy deadline", "--policy deadline:"),
        (
            "--json /nonexistent-rtbench-dir/out.json",
            "--json /nonexistent-rtbench-dir/out.json:",
        ),
    ];
    for (args, prefix) in cases {
        let hist = dir.join("never.hist");
        let o = rtbench()
            .args(["cyclic", "-l", "10", "--histfile"])
            .arg(&hist)
            .args(args.split_whitespace())
            .output()
            .unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args}: {err}");
        assert_eq!(
            err.lines().count(),
            1,
            "{args}: one line expected, got {err:?}"
        );
        assert!(
            stdout(&o).is_empty(),
            "{args}: nothing may run: {:?}",
            stdout(&o)
        );
        let o = run(&format!("cyclic -l 10 {args}"));
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args}: {err}");
        assert_eq!(
            err.lines().count(),
            1,
            "{args}: one line expected, got {err:?}"
        );
        assert!(
            err.starts_with(&format!("rtbench: {prefix}")),
            "{args}: {err:?}"
        );
        assert!(
            stdout(&o).is_empty(),
            "{args}: nothing may run: {:?}",
            stdout(&o)
        );
    }
    assert!(!dir.join("never.hist").exists());
}

#[test]
fn sigint_stops_a_long_interval_at_once() {
    // A 30 s interval: the threads sleep in clock_nanosleep when SIGINT arrives. Woken
    // by the stop, they end without a sample; left to sleep, each would take one at
    // 30 s (the loop records every completed sleep: src/measure/cyclic.rs).
    let r =
        Running::spawn(rtbench().args(["cyclic", "-t", "2", "-i", "30000000", "-l", "2", "-q"]));
    wait_measuring(r.pid(), "rtbench-T", 2);
    r.signal(libc::SIGINT);
    let o = r.finish();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    let t: Vec<String> = stdout(&o)
        .lines()
        .filter(|l| l.starts_with("T: "))
        .map(String::from)
        .collect();
    assert_eq!(t.len(), 2, "{}", stdout(&o));
    assert!(
        t.iter().all(|l| l.contains(" C:      0 ")),
        "stopped before the first 30 s wake-up, no bogus sample: {t:?}"
    );
}

#[test]
fn n_is_accepted_and_d_takes_suffixes() {
    let o = run("cyclic -n -i 1000 -D 1s -q");
    assert!(o.status.success(), "{}", stderr(&o));
    let t = stdout(&o);
    let c: u64 = t
        .lines()
        .find(|l| l.starts_with("T: 0"))
        .and_then(|l| l.split("C:").nth(1))
        .and_then(|r| r.split_whitespace().next())
        .and_then(|c| c.parse().ok())
        .unwrap();
    // 1 s at 1 ms: ~1000 wakeups (overruns on a noisy VM skip some periods).
    assert!((500..=1001).contains(&c), "cycles {c}");
}

fn spawn_json(args: &str, json: &std::path::Path) -> Running {
    Running::spawn(
        rtbench()
            .args(args.split_whitespace())
            .arg("--json")
            .arg(json),
    )
}

/// Asks a running `rtbench cyclic` for its status (SIGUSR1) until thread 0 has taken
/// more than `cycles` samples, as its own `C:` count says (standard error).
fn wait_cycles(r: &Running, cycles: u64) {
    let mut from = 0;
    loop {
        r.signal(libc::SIGUSR1);
        let at = r.wait_stderr(from, "a status line of T: 0", |l| l.starts_with("T: 0 "));
        from = at + 1;
        let line = &r.stderr_lines()[at];
        let c: u64 = line
            .split("C:")
            .nth(1)
            .and_then(|x| x.split_whitespace().next())
            .and_then(|x| x.parse().ok())
            .unwrap_or_else(|| panic!("{line}"));
        if c > cycles {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn sigint_writes_partial_results_and_exits_130() {
    let dir = TempDir::new("sigint");
    let json = dir.join("r.json");
    let r = spawn_json("cyclic -S -i 1000 -D 60s -q", &json);
    wait_measuring(r.pid(), "rtbench-T", 1);
    wait_cycles(&r, 100);
    r.signal(libc::SIGINT);
    let o = r.finish();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert!(stdout(&o).contains("T: 0"), "{}", stdout(&o));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["rtbench"]["interrupted"], true);
    assert_eq!(v["rtbench"]["stop"], "sigint");
    assert_eq!(v["return_code"], 130);
    assert!(v["thread"]["0"]["cycles"].as_u64().unwrap() > 100);
}

#[test]
fn sigterm_stops_and_sigusr1_dumps_status() {
    let dir = TempDir::new("sigterm");
    let json = dir.join("r.json");
    let r = spawn_json("cyclic -t 2 -i 1000 -D 60s -q", &json);
    wait_measuring(r.pid(), "rtbench-T", 2);
    r.signal(libc::SIGUSR1);
    let head = r.wait_stderr(0, "the status", |l| l == "# rtbench current status:");
    r.wait_stderr(head, "the status of T: 1", |l| l.starts_with("T: 1 "));
    r.signal(libc::SIGTERM);
    let o = r.finish();
    assert_eq!(o.status.code(), Some(143));
    let err = stderr(&o);
    assert!(err.contains("# rtbench current status:"), "{err}");
    assert!(
        err.lines().filter(|l| l.starts_with("T: ")).count() >= 2,
        "{err}"
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["rtbench"]["stop"], "sigterm");
}

#[test]
fn breaktrace_stops_the_run_and_exits_1() {
    // Whether or not tracefs is mounted at /sys/kernel/tracing (rtbench mounts it, in
    // this binary's private mount namespace, when it is not), -b stops the tracing of
    // the tracefs rtbench uses.
    let tracing = TracingOnGuard::save();
    // Any wakeup is later than 0 µs + 1: the first sample over 1 µs trips it.
    let o = run("cyclic -t 2 -i 1000 -D 30s -q -b 1");
    if let Some(v) = tracing.read() {
        assert_eq!(v, "0", "-b stops tracing (without --tracemark too)");
    }
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("# Thread Ids:"), "{out}");
    let tid_line = out
        .lines()
        .find(|l| l.starts_with("# Break thread: "))
        .unwrap();
    let value_line = out
        .lines()
        .find(|l| l.starts_with("# Break value: "))
        .unwrap();
    let v: u64 = value_line.rsplit(' ').next().unwrap().parse().unwrap();
    assert!(v > 1, "{value_line}");
    assert!(tid_line.rsplit(' ').next().unwrap().parse::<i32>().unwrap() > 0);
}

#[test]
fn overruns_are_counted_when_the_process_is_stopped() {
    let dir = TempDir::new("overrun");
    let json = dir.join("r.json");
    let r = spawn_json("cyclic -t 1 -i 1000 -D 60s -q", &json);
    wait_samples(r.pid(), "rtbench-T", 1, 10);
    // Stopped for 200 ms (at least: the time counts from when it is seen stopped).
    r.signal(libc::SIGSTOP);
    wait_stopped(r.pid());
    std::thread::sleep(Duration::from_millis(200));
    r.signal(libc::SIGCONT);
    // The late wake-up is recorded when the thread next sleeps.
    wait_samples(r.pid(), "rtbench-T", 1, 2);
    r.signal(libc::SIGINT);
    let o = r.finish();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let t = &v["rtbench"]["threads"][0];
    assert!(t["overruns"].as_u64().unwrap() >= 1, "{t}");
    assert!(
        t["missed_periods"].as_u64().unwrap() >= 100,
        "200 ms stopped at 1 ms: {t}"
    );
    assert!(t["max_ns"].as_u64().unwrap() >= 150_000_000, "{t}");
}

#[test]
fn refused_sched_fifo_exits_3_without_fallback() {
    // As user nobody with RLIMIT_RTPRIO 0, SCHED_FIFO (and mlockall beyond
    // RLIMIT_MEMLOCK) are refused: rtbench must say so and exit 3.
    let bin = crate::common::exe();
    let o = std::process::Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--inh-caps=-all",
        ])
        .args(["prlimit", "--rtprio=0", "--"])
        .args([
            bin,
            "cyclic",
            "-l",
            "10",
            "-q",
            "--no-mlockall",
            "--default-system",
        ])
        .output()
        .expect("setpriv (util-linux)");
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(err.contains("SCHED_FIFO"), "{err}");
    assert!(
        err.contains("Operation not permitted"),
        "EPERM, not a clobbered errno: {err}"
    );
    assert!(
        !stdout(&o).contains("T: 0"),
        "no fallback measurement: {}",
        stdout(&o)
    );
    let o = std::process::Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--inh-caps=-all",
        ])
        .args(["prlimit", "--memlock=0", "--"])
        .args([bin, "cyclic", "-l", "10", "-q", "-m"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains("mlockall"), "{}", stderr(&o));
}

#[test]
fn nsecs_reports_in_ns() {
    let dir = TempDir::new("nsecs");
    let json = dir.join("r.json");
    let o = rtbench()
        .args(["cyclic", "-N", "-l", "200", "-q", "-i", "500", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    assert!(o.status.success());
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["resolution_in_ns"], 1);
    assert_eq!(
        v["thread"]["0"]["max"],
        v["rtbench"]["threads"][0]["max_ns"]
    );
}
