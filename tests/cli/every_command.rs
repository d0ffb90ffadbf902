//! Every measuring command against each kind of environment that one of them once got
//! wrong on its own: one test per kind, and each runs every command the kind applies
//! to, so the next command cannot miss it.
//!
//! - A cgroup cpuset that leaves out CPU 0: `cyclic`, `pmq`, `pipe`, `oslat`, `selftest`
//!   and `monitor` start and measure on the CPU it allows (the allowed CPUs, not the online
//!   ones; the main thread on an allowed CPU).
//! - An abstract `NOTIFY_SOCKET=@name` (systemd in a container or a nested manager):
//!   `READY=1` of the commands that notify (`selftest`, `monitor`) reaches it.
//! - `journalctl -x`: every `@FIELD@` of the catalog text of a MESSAGE_ID is a field of
//!   every entry with that ID, for the commands that log entries (`selftest`,
//!   `monitor`), on runs that produce every kind of entry they have.
//!
//! The cpuset is `common::cpuset::Cpuset` (as in tests/cli/cpuset_cgroup.rs): a child of
//! the root of the cgroup v1 cpuset hierarchy, or of cgroup v2 when the cpuset
//! controller is there, holding the last online CPU; it is removed on drop, also when
//! an assertion fails. Needs root and at least 2 online CPUs. Runs wait for the command
//! to end, never on a clock.

use crate::common::cpuset::Cpuset;
use crate::common::*;
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;
use std::process::Output;

const START: &str = "c235ff9bebdd447a895829d54b7b1aa9";
const WINDOW: &str = "cc642425788247bfaec2950f5114111e";
const LIMIT: &str = "a694d7ed549d47af8e69c18a54fad1a8";
const STOP: &str = "d4afd97974874b9781398c86865fe1c7";
const MONITOR_OUTPUT: &str = "37e4093074a449328d450b9a6e3f66f8";
const RESULT: &str = "b338a16c561342608e6e5ef41b0a0813";
const SUMMARY: &str = "7b1dd0eea94d4cc4bd8f9e6c91b6465d";
const TUNING: &str = "872270459a844055a01dbd7e3ccfd9a5";
const READY: &str = "6a9954f26ad8443b8423171c8abd3682";
const OUTPUT: &str = "4ac37d680e7a4865822e0b39e581b9e0";

/// The words of `s`, owned.
fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(String::from).collect()
}

fn ok(what: &str, o: &Output) {
    assert_eq!(
        o.status.code(),
        Some(0),
        "{what}: stdout:\n{}\nstderr:\n{}",
        stdout(o),
        stderr(o)
    );
}

/// A self-test configuration in `dir` (never the host's /etc/rtbench): tuning in
/// `mode`, one short cyclic test, results in `dir/results_dir`, and `extra`.
fn selftest_config(dir: &Path, mode: &str, results_dir: &str, extra: &str) -> String {
    let p = dir.join("selftest.toml");
    std::fs::write(
        &p,
        crate::common::on_any_kernel(
            &(format!(
                "[selftest]\nmode = \"{mode}\"\nduration = \"1s\"\n[cyclic]\ninterval_us = 500\n\
             [output]\nresults_dir = \"{d}/{results_dir}\"\nfallback_dir = \"{d}/run\"\n{extra}",
                d = dir.display(),
            )),
        ),
    )
    .unwrap();
    p.display().to_string()
}

/// A monitor configuration in `dir` with `body`.
fn monitor_config(dir: &Path, body: &str) -> String {
    let p = dir.join("monitor.toml");
    std::fs::write(&p, body).unwrap();
    p.display().to_string()
}

/// `rtbench monitor` for two seconds with 1-s windows, its state in `dir/mon`, CPUs
/// as planned by default (no `-a`).
fn monitor_args(dir: &Path, cfg: &str, extra: &str) -> Vec<String> {
    let mut a = words(&format!(
        "monitor --config {cfg} --log-format logfmt --window 1s -D 2 --dir {}/mon",
        dir.display()
    ));
    a.extend(words(extra));
    a
}

fn selftest_args(cfg: &str) -> Vec<String> {
    words(&format!("selftest --log-format logfmt --config {cfg}"))
}

#[test]
fn every_command_measures_in_a_cpuset_that_leaves_out_cpu_0() {
    let cs = Cpuset::new("every-cpuset");
    let t = TempDir::new("every-cpuset");
    let cpu = cs.cpu.to_string();

    // cyclic, pmq, pipe: -S (one thread or pair per allowed CPU), JSON says where.
    for cmd in ["cyclic", "pmq", "pipe"] {
        let json = t.join(format!("{cmd}.json"));
        let o = cs.rtbench(&words(&format!(
            "{cmd} -S -p 90 -l 200 -q -i 500 --json {}",
            json.display()
        )));
        ok(cmd, &o);
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let threads = v["thread"].as_object().unwrap();
        assert_eq!(threads.len(), 1, "{cmd}: {v}");
        let t0 = &v["thread"]["0"];
        let ran_on = if cmd == "cyclic" {
            vec![&t0["cpu"]]
        } else {
            vec![&t0["sender"]["cpu"], &t0["receiver"]["cpu"]]
        };
        for c in ran_on {
            assert_eq!(c.as_u64(), Some(cs.cpu as u64), "{cmd}: {v}");
        }
    }

    // oslat: without -c, every allowed CPU (the one), the main thread beside it.
    let json = t.join("oslat.json");
    let o = cs.rtbench(&words(&format!("oslat -D 1 -q --json {}", json.display())));
    ok("oslat", &o);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["num_threads"], 1, "oslat: {v}");
    assert_eq!(
        v["thread"]["0"]["cpu"].as_u64(),
        Some(cs.cpu as u64),
        "oslat: {v}"
    );

    // selftest: its default CPUs are the allowed one.
    let cfg = selftest_config(&t, "off", "results", "[limits]\nmax_us = 60000000\n");
    let o = cs.rtbench(&selftest_args(&cfg));
    ok("selftest", &o);
    let e = entries(&o);
    let results = with_id(&e, RESULT);
    assert_eq!(results.len(), 1, "{e:?}");
    assert_eq!(results[0]["RTBENCH_CPU"], cpu, "{e:?}");

    // monitor: its default CPUs are the allowed one, and so is its main thread.
    let cfg = monitor_config(&t, "");
    let o = cs.rtbench(&monitor_args(&t, &cfg, ""));
    ok("monitor", &o);
    let e = entries(&o);
    assert_eq!(with_id(&e, START)[0]["RTBENCH_CPUS"], cpu, "{e:?}");
    let w = with_id(&e, WINDOW);
    assert!(!w.is_empty(), "{e:?}");
    for m in &w {
        assert_eq!(m["RTBENCH_CPU"], cpu, "{e:?}");
        assert!(m["RTBENCH_SAMPLES"].parse::<u64>().unwrap() > 0, "{m:?}");
    }
    assert_eq!(with_id(&e, STOP)[0]["RTBENCH_STOP"], "duration reached");
}

/// The datagrams waiting on `sock` (the sender has ended: nothing more comes).
fn drain(sock: &std::os::unix::net::UnixDatagram) -> Vec<String> {
    sock.set_nonblocking(true).unwrap();
    let mut msgs = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n) = sock.recv(&mut buf) {
        msgs.push(String::from_utf8_lossy(&buf[..n]).into_owned());
    }
    msgs
}

#[test]
fn ready_reaches_an_abstract_notify_socket_from_every_command_that_notifies() {
    use std::os::linux::net::SocketAddrExt;
    use std::os::unix::net::{SocketAddr, UnixDatagram};
    let t = TempDir::new("every-notify");
    let scfg = selftest_config(&t, "off", "results", "[limits]\nmax_us = 60000000\n");
    let mcfg = monitor_config(&t, "");
    let runs = [
        ("selftest", selftest_args(&scfg)),
        ("monitor", monitor_args(&t, &mcfg, "")),
    ];
    for (cmd, args) in runs {
        let name = format!(
            "rtbench-every-notify-{cmd}-{}-{}",
            std::process::id(),
            unique()
        );
        let sock =
            UnixDatagram::bind_addr(&SocketAddr::from_abstract_name(name.as_bytes()).unwrap())
                .unwrap();
        let o = rtbench()
            .args(&args)
            .env("NOTIFY_SOCKET", format!("@{name}"))
            .output()
            .unwrap();
        ok(cmd, &o);
        let msgs = drain(&sock);
        let ready = msgs
            .iter()
            .filter(|m| m.lines().any(|l| l == "READY=1"))
            .count();
        assert_eq!(ready, 1, "{cmd}: READY=1 once on @{name}: {msgs:?}");
        assert!(
            msgs.iter()
                .any(|m| m.lines().any(|l| l.starts_with("STATUS="))),
            "{cmd}: {msgs:?}"
        );
        assert!(!stderr(&o).contains("sd_notify"), "{cmd}: {}", stderr(&o));
    }
}

/// Every entry has every `@FIELD@` of its MESSAGE_ID's catalog text.
fn catalog_fields_present(cmd: &str, e: &[HashMap<String, String>]) {
    let cat = catalog();
    for m in e {
        let id = &m["MESSAGE_ID"];
        let fields = cat
            .get(id)
            .unwrap_or_else(|| panic!("{cmd}: MESSAGE_ID {id} is not in the catalog: {m:?}"));
        for f in fields {
            assert!(
                m.contains_key(f),
                "{cmd}: catalog entry {id} uses @{f}@, which this entry lacks \
                 (journalctl -x shows the bare name): {m:?}"
            );
        }
    }
}

#[test]
fn every_entry_of_every_command_that_logs_has_its_catalog_fields() {
    let t = TempDir::new("every-catalog");
    // selftest: a failing run with tuning checked, and an output it cannot write (a
    // file where the results directory should be).
    std::fs::write(t.join("blocker"), "").unwrap();
    let cfg = selftest_config(
        &t,
        "check",
        "blocker/results",
        "[limits]\nmax_us = 1\n[tuning.power]\ngovernor = \"performance\"\n",
    );
    let o = rtbench().args(selftest_args(&cfg)).output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = entries(&o);
    for id in [RESULT, SUMMARY, TUNING, READY, OUTPUT] {
        assert!(!with_id(&e, id).is_empty(), "selftest logged {id}: {e:?}");
    }
    catalog_fields_present("selftest", &e);

    // monitor: a limit other than max exceeded (p99: 1 µs holds nowhere), and a
    // Prometheus textfile whose directory does not exist.
    let cfg = monitor_config(&t, "[monitor.limits]\np99_us = 1\n");
    let prom = t.join("missing/monitor.prom");
    let o = rtbench()
        .args(monitor_args(
            &t,
            &cfg,
            &format!("--prometheus {}", prom.display()),
        ))
        .output()
        .unwrap();
    ok("monitor", &o);
    let e = entries(&o);
    for id in [START, WINDOW, LIMIT, STOP, MONITOR_OUTPUT] {
        assert!(!with_id(&e, id).is_empty(), "monitor logged {id}: {e:?}");
    }
    catalog_fields_present("monitor", &e);
}
