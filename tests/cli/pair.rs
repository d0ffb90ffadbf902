//! `rtbench pmq` and `rtbench pipe` on this machine, compared with rt-tests' pmqtest.

use crate::common::*;
use serde_json::Value;
use std::collections::BTreeSet;

const PMQTEST: &str = "/usr/bin/pmqtest";

/// Whether `line` is what C's printf could print for `fmt` with integer conversions
/// (`%d`, `%4d`, `%ld`, `%1d`): a width pads with spaces, the digits may be negative.
fn matches_printf(fmt: &str, line: &str) -> bool {
    let (f, l) = (fmt.as_bytes(), line.as_bytes());
    let (mut i, mut j) = (0, 0);
    while i < f.len() {
        if f[i] == b'%' {
            i += 1;
            while i < f.len() && (f[i].is_ascii_digit() || f[i] == b'l') {
                i += 1;
            }
            i += 1; // the 'd'
            while j < l.len() && l[j] == b' ' {
                j += 1;
            }
            if j < l.len() && l[j] == b'-' {
                j += 1;
            }
            let start = j;
            while j < l.len() && l[j].is_ascii_digit() {
                j += 1;
            }
            if j == start {
                return false;
            }
        } else {
            if j >= l.len() || l[j] != f[i] {
                return false;
            }
            i += 1;
            j += 1;
        }
    }
    j == l.len()
}

/// pmqtest's two line formats (rt-tests src/pmqtest/pmqtest.c, print_stat).
const HEADER_FMT: &str = "#%1d: ID%d, P%d, CPU%d, I%ld; #%1d: ID%d, P%d, CPU%d, TO %d, Cycles %d";
const LATENCY_FMT: &str = "#%d -> #%d, Min %4d, Cur %4d, Avg %4d, Max %4d";

/// Set of key paths (`a.b.c`), with thread numbers replaced by `N`.
fn key_paths(v: &Value, prefix: &str, out: &mut BTreeSet<String>) {
    if let Value::Object(m) = v {
        for (k, x) in m {
            let k = if k.parse::<u32>().is_ok() {
                "N"
            } else {
                k.as_str()
            };
            let p = if prefix.is_empty() {
                k.to_string()
            } else {
                format!("{prefix}.{k}")
            };
            out.insert(p.clone());
            key_paths(x, &p, out);
        }
    }
}

#[test]
fn pmq_matches_pmqtest_line_shapes_and_json_keys() {
    assert!(
        std::path::Path::new(PMQTEST).exists(),
        "rt-tests' pmqtest is needed for this comparison"
    );
    let tmp = TempDir::new("pmqcmp");
    let flags = ["-S", "-p", "80", "-i", "1000", "-l", "300", "-q"];
    let jr = tmp.join("ref.json");
    let jo = tmp.join("ours.json");
    let r = std::process::Command::new(PMQTEST)
        .args(flags)
        .arg(format!("--json={}", jr.display()))
        .output()
        .unwrap();
    assert!(r.status.success());
    let o = run(&[&["pmq"], &flags[..], &["--json", jo.to_str().unwrap()]].concat());
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let shapes = |s: &str| -> Vec<char> {
        s.lines()
            .filter(|l| !l.starts_with("# "))
            .map(|l| {
                if matches_printf(HEADER_FMT, l) {
                    'H'
                } else if matches_printf(LATENCY_FMT, l) {
                    'L'
                } else {
                    panic!("line of neither pmqtest shape: {l:?}")
                }
            })
            .collect()
    };
    let ref_out = String::from_utf8_lossy(&r.stdout);
    let our_out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        shapes(&ref_out),
        shapes(&our_out),
        "pmqtest:\n{ref_out}\nrtbench:\n{our_out}"
    );
    let n = num_cpus();
    let want: Vec<char> = std::iter::repeat('H')
        .take(n)
        .chain(std::iter::repeat('L').take(n))
        .collect();
    assert_eq!(
        shapes(&our_out),
        want,
        "one header and one latency line per pair (-S: one pair per CPU)"
    );

    let rv: Value = serde_json::from_slice(&std::fs::read(&jr).unwrap()).unwrap();
    let ov: Value = serde_json::from_slice(&std::fs::read(&jo).unwrap()).unwrap();
    let (mut rk, mut ok) = (BTreeSet::new(), BTreeSet::new());
    key_paths(&rv, "", &mut rk);
    key_paths(&ov, "", &mut ok);
    let missing: Vec<_> = rk.difference(&ok).collect();
    assert!(
        missing.is_empty(),
        "pmqtest keys missing in rtbench: {missing:?}"
    );
    let extra: Vec<_> = ok
        .difference(&rk)
        .filter(|k| !k.starts_with("rtbench"))
        .collect();
    assert!(
        extra.is_empty(),
        "keys beyond pmqtest's outside \"rtbench\": {extra:?}"
    );
    // Same values where the meaning is the same.
    for t in ["0", "1"].iter().take(num_cpus()) {
        let (a, b) = (&rv["thread"][t], &ov["thread"][t]);
        for k in ["cpu", "priority", "interval"] {
            assert_eq!(a["sender"][k], b["sender"][k], "thread {t} sender.{k}");
        }
        assert_eq!(b["sender"]["samples"], 300);
        let (mn, av, mx) = (
            b["receiver"]["min"].as_u64().unwrap(),
            b["receiver"]["avg"].as_f64().unwrap(),
            b["receiver"]["max"].as_u64().unwrap(),
        );
        assert!(
            mn as f64 <= av + 0.5 && av <= mx as f64 + 0.5 && mx < 100_000,
            "{b}"
        );
        let p = &ov["rtbench"]["pairs"][t.parse::<usize>().unwrap()];
        assert_eq!(p["latency"]["count"], 300);
        assert!(
            p["latency"]["p99_ns"].as_u64().unwrap() <= p["latency"]["max_ns"].as_u64().unwrap()
        );
    }
    assert_eq!(ov["rtbench"]["test"], "pmq");
    assert_eq!(ov["num_threads"], rv["num_threads"]);
}

fn num_cpus() -> usize {
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    online
        .trim()
        .split(',')
        .map(|r| match r.split_once('-') {
            Some((a, b)) => b.parse::<usize>().unwrap() - a.parse::<usize>().unwrap() + 1,
            None => 1,
        })
        .sum()
}

#[test]
fn printf_matcher_is_strict() {
    assert!(matches_printf(
        LATENCY_FMT,
        "#1 -> #0, Min    3, Cur    5, Avg    4, Max  118"
    ));
    assert!(matches_printf(
        HEADER_FMT,
        "#0: ID14991, P80, CPU0, I1000; #1: ID14992, P80, CPU-1, TO 0, Cycles 2839"
    ));
    assert!(!matches_printf(
        LATENCY_FMT,
        "#1 -> #0, Min    3, Cur    5, Avg    4"
    ));
    assert!(!matches_printf(
        LATENCY_FMT,
        "#1 -> #0, Min 3.5, Cur    5, Avg    4, Max  118"
    ));
    assert!(!matches_printf(
        HEADER_FMT,
        "T: 0 ( 7580) P:90 I:1000 C:   2961 Min:     11 Act:   14 Avg:   33 Max:    7060"
    ));
}

#[test]
fn pmq_histogram_and_nsecs() {
    let o = run(&[
        "pmq", "-a", "0", "-t", "2", "-i", "200", "-l", "400", "-q", "-h", "200",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(
        s.contains("#1 -> #0, Min") && s.contains("#3 -> #2, Min"),
        "{s}"
    );
    let h: Vec<&str> = s.lines().skip_while(|l| *l != "# Histogram").collect();
    assert!(!h.is_empty(), "{s}");
    let rows: Vec<&str> = h
        .iter()
        .skip(1)
        .take_while(|l| !l.starts_with('#'))
        .copied()
        .collect();
    let total: u64 = rows
        .iter()
        .map(|r| {
            let (b, cols) = r.split_once(' ').unwrap();
            assert_eq!(b.len(), 6);
            cols.split('\t')
                .map(|c| c.parse::<u64>().unwrap())
                .sum::<u64>()
        })
        .sum();
    let ovf: u64 = h
        .iter()
        .find(|l| l.starts_with("# Histogram Overflows:"))
        .unwrap()
        .split_whitespace()
        .skip(3)
        .map(|x| x.parse::<u64>().unwrap())
        .sum();
    assert_eq!(
        total + ovf,
        800,
        "every message of both pairs is in the dump"
    );
    assert!(s.contains("# #1 -> #0 P50:"));

    let o = run(&["pmq", "-a", "1", "-i", "100", "-l", "200", "-q", "-N"]);
    let s = String::from_utf8_lossy(&o.stdout);
    let min: u64 = s
        .lines()
        .find(|l| l.starts_with("#1 -> #0"))
        .unwrap()
        .split("Min ")
        .nth(1)
        .unwrap()
        .split(',')
        .next()
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(min > 100, "-N gives ns: {s}");
}

fn pipe_json(extra: &[&str]) -> Value {
    let tmp = TempDir::new(&format!("pipe{}", extra.len()));
    let j = tmp.join("p.json");
    let o = run(&[
        &[
            "pipe",
            "-a",
            "1",
            "-l",
            "3000",
            "-q",
            "--json",
            j.to_str().unwrap(),
        ],
        extra,
    ]
    .concat());
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let s = String::from_utf8_lossy(&o.stdout);
    for l in [
        "#1 -> #0, Min",
        "#0 -> #1, Min",
        "#1 -> #0 -> #1, Min",
        "# pair 0: 3000 round trips",
    ] {
        assert!(s.contains(l), "{l}: {s}");
    }
    serde_json::from_slice(&std::fs::read(&j).unwrap()).unwrap()
}

#[test]
fn pipe_threads_and_fork_give_both_directions_round_trip_and_switch_time() {
    for extra in [&[][..], &["--fork", "-p", "0"][..]] {
        let v = pipe_json(extra);
        let p = &v["rtbench"]["pairs"][0];
        assert_eq!(v["rtbench"]["test"], "pipe");
        assert_eq!(v["rtbench"]["fork"], !extra.is_empty());
        for k in ["latency", "latency_back", "round_trip"] {
            assert_eq!(p[k]["count"], 3000, "{k}");
            assert!(p[k]["min_ns"].as_u64().unwrap() > 0);
        }
        let rt_sum = p["round_trip"]["sum_ns"].as_f64().unwrap();
        let total = p["total_ns"].as_f64().unwrap();
        let sw = p["switch_mean_ns"].as_f64().unwrap();
        assert!(
            (sw - total / 6000.0).abs() < 1.0,
            "switch = total / (2 x loops): {sw} vs {total}"
        );
        // The total covers every round trip plus the sender's bookkeeping between them.
        assert!(
            total >= rt_sum && total < rt_sum * 3.0,
            "{total} vs {rt_sum}"
        );
        // One way each direction is at least a switch; the round trip holds both.
        let one = p["latency"]["avg_ns"].as_f64().unwrap()
            + p["latency_back"]["avg_ns"].as_f64().unwrap();
        assert!(
            p["round_trip"]["avg_ns"].as_f64().unwrap() >= one * 0.9,
            "{p}"
        );
        assert_ne!(p["sender_tid"], p["receiver_tid"]);
        assert_eq!(v["thread"]["0"]["sender"]["cpu"], 1);
    }
}

#[test]
fn sigint_stops_with_130_and_partial_results() {
    let r = Running::spawn(rtbench().args(["pmq", "-i", "1000", "-q"]));
    wait_samples(r.pid(), "rtbench-S", 1, 10);
    r.signal(libc::SIGINT);
    let o = r.finish();
    assert_eq!(o.status.code(), Some(130));
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(
        s.contains("#1 -> #0, Min") && s.contains("# interrupted (SIGINT)"),
        "{s}"
    );
}

#[test]
fn queue_limit_is_named_and_nothing_runs() {
    // RLIMIT_MSGQUEUE 0: the kernel refuses every queue, even for root.
    let mut cmd = rtbench();
    cmd.args(["pmq", "-l", "10", "--load", "cpu:1"]);
    // SAFETY: setrlimit in the child before exec.
    unsafe {
        use std::os::unix::process::CommandExt;
        cmd.pre_exec(|| {
            let rl = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            if libc::setrlimit(libc::RLIMIT_MSGQUEUE, &rl) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let o = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    // The system refused the queue: exit 3 (the environment refused), with the errno.
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("(os error 24)"),
        "EMFILE as mq_open returned it: {err}"
    );
    assert!(
        err.contains("RLIMIT_MSGQUEUE") && err.contains("message queue /rtbench-"),
        "{err}"
    );
    assert!(!err.contains("# load"), "no load started: {err}");
    assert!(o.stdout.is_empty());
}

#[test]
fn bad_pair_input_is_exit_2() {
    for (args, want) in [
        (&["pmq", "-i", "0"][..], "-i 0:"),
        (&["pmq", "-p", "120"][..], "-p 120:"),
        (&["pipe", "-a", "77"][..], "-a 77:"),
        (&["pipe", "-D", "3x"][..], "unknown suffix 'x'"),
        (
            &["pmq", "--json", "/nonexistent-dir/x.json"][..],
            "does not exist",
        ),
    ] {
        let o = run(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            err.lines().count() == 1 && err.contains(want),
            "{args:?}: {err}"
        );
    }
}

/// `--msg-size`: a real run with PIPE_BUF-sized pipe messages and
/// 1 KiB queue messages succeeds and its JSON says the size; the default run's JSON
/// has no `msg_size` (32 bytes, output unchanged); sizes out of range are exit 2 with
/// one line naming the flag and the range.
#[test]
fn msg_size_runs_are_recorded_and_out_of_range_sizes_are_exit_2() {
    let tmp = TempDir::new("msgsize");
    for (test, size) in [("pipe", "4096"), ("pmq", "1024"), ("pipe", "32")] {
        let j = tmp.join(format!("{test}-{size}.json"));
        let mut args = vec![test, "-a", "0", "-l", "200", "-q", "--json"];
        args.push(j.to_str().unwrap());
        if test == "pmq" {
            args.extend(["-i", "100"]);
        }
        if size != "32" {
            args.extend(["--msg-size", size]);
        }
        let o = run(&args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        let v: Value = serde_json::from_slice(&std::fs::read(&j).unwrap()).unwrap();
        assert_eq!(
            v["rtbench"]["pairs"][0]["latency"]["count"], 200,
            "{args:?}"
        );
        if size == "32" {
            assert!(v["rtbench"].get("msg_size").is_none(), "{args:?}: {v}");
        } else {
            assert_eq!(v["rtbench"]["msg_size"], size.parse::<u64>().unwrap());
        }
    }
    let max = std::fs::read_to_string("/proc/sys/fs/mqueue/msgsize_max").unwrap();
    let over = (max.trim().parse::<u64>().unwrap() + 1).to_string();
    for (args, want) in [
        (
            vec!["pipe", "--msg-size", "4097"],
            "--msg-size 4097: expected a message size of 32..=4096 bytes (PIPE_BUF, pipe(7))",
        ),
        (vec!["pipe", "--msg-size=31"], "--msg-size 31:"),
        (vec!["pmq", "--msg-size", "16"], "--msg-size 16:"),
        (
            vec!["pmq", "--msg-size", &over],
            "msgsize_max, mq_overview(7)",
        ),
    ] {
        let o = run(&args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.lines().count() == 1 && err.contains(want),
            "{args:?}: {err}"
        );
        assert!(o.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn forced_timeouts_are_counted() {
    // pmqtest's -f: the sender waits 3 s, the receiver's 2 s timeout expires once.
    let o = run(&["pmq", "-a", "0", "-T", "2", "-f", "3", "-l", "1", "-q"]);
    assert_eq!(o.status.code(), Some(0));
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(s.contains(", TO 1, Cycles 1"), "{s}");
    assert!(s.contains("Timeouts:1"), "{s}");
    let o = run(&["pmq", "-f", "2", "-l", "1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("-f 2: needs -T TO"));
}

#[test]
fn breaktrace_stops_the_run_with_exit_1() {
    let tracing = TracingOnGuard::save();
    // Every message hand-over takes more than 1 µs: -b 1 fires on the first one.
    let o = run(&[
        "pmq", "-a", "0", "-i", "100", "-b", "1", "-l", "100000", "-q",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(s.contains("# Break value: "), "{s}");
    let cycles: u64 = s
        .split("Cycles ")
        .nth(1)
        .unwrap()
        .trim()
        .lines()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(cycles < 100000, "stopped early: {s}");
    if let Some(v) = tracing.read() {
        assert_eq!(v, "0", "-b stops tracing");
    }
}

#[test]
fn refused_sched_fifo_is_exit_3_without_hanging_or_leftovers() {
    // Without CAP_SYS_NICE (dropped from the bounding set) SCHED_FIFO is refused; the
    // pair must not hang, and a forked responder and the load must be gone.
    for mode in [&["pipe", "--fork"][..], &["pmq"][..]] {
        let tmp = TempDir::new(&format!("nofifo{}", mode.len()));
        // Hanging would fail the test after common::BOUND instead of blocking it.
        let o = Running::spawn(
            std::process::Command::new("setpriv")
                .args(["--bounding-set", "-sys_nice", "--inh-caps", "-sys_nice"])
                .arg(crate::common::exe())
                .args(mode)
                .args(["-l", "10", "-q", "--load", "io:1"])
                .env("TMPDIR", &tmp),
        )
        .finish();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(3), "{mode:?}: {err}");
        assert!(
            err.contains("sched_setscheduler(SCHED_FIFO, 98): Operation not permitted"),
            "{err}"
        );
        let dir = tmp.to_string_lossy().into_owned();
        assert!(
            all_procs().iter().all(|p| !p.cmdline.contains(&dir)),
            "load left behind"
        );
        assert!(tmp.entries().is_empty());
    }
}

#[test]
fn sigint_stops_pmq_and_pipe_with_long_intervals_at_once() {
    // Both ends sleep up to 120 s per message, longer than a test waits for a process
    // to end (common::BOUND): only the runner's wake signal can end the run in time.
    for args in [
        &["pmq", "-l", "3", "-i", "120000000", "-q"][..],
        &["pipe", "-l", "3", "-i", "120000000", "-q"][..],
        &["pipe", "--fork", "-l", "3", "-i", "120000000", "-q"][..],
    ] {
        let r = Running::spawn(rtbench().args(args));
        wait_measuring(r.pid(), "rtbench-S", 1);
        r.signal(libc::SIGINT);
        let o = r.finish();
        assert_eq!(
            o.status.code(),
            Some(130),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(!out.contains("18446744073709551615"), "{args:?}: {out}");
    }
}
