//! A service manager whose notify socket stops reading (podman's and conmon's notify
//! proxies have done this): a real `AF_UNIX` datagram socket bound in a temporary
//! directory that is never read, so its queue (`net.unix.max_dgram_qlen`, 10 by default)
//! fills after a few notifications. The monitor still cuts its windows, ends at `-D` and
//! on SIGTERM, and saves its state; a blocking send would hang its main thread.
#![cfg(feature = "monitor")]

use crate::common::*;
use std::os::unix::net::UnixDatagram;
use std::process::Command;

const WINDOW: &str = "cc642425788247bfaec2950f5114111e";
const STOP: &str = "d4afd97974874b9781398c86865fe1c7";

/// The monitor on CPU 0 in 1-s windows, state in `t/mon`, notifying `sock` with a
/// 100-ms watchdog (a notification every 50 ms).
fn monitor(t: &TempDir, sock: &std::path::Path) -> Command {
    let cfg = t.join("rtbench.toml");
    std::fs::write(&cfg, "").unwrap();
    let mut c = rtbench();
    c.args([
        "monitor",
        "--log-format",
        "logfmt",
        "-a",
        "0",
        "--window",
        "1s",
    ])
    .arg("--config")
    .arg(&cfg)
    .arg("--dir")
    .arg(t.join("mon"))
    .env("NOTIFY_SOCKET", sock)
    .env("WATCHDOG_USEC", "100000")
    .env_remove("WATCHDOG_PID");
    c
}

/// The socket nobody reads, bound in `t` (kept open by the returned value).
fn stuck_socket(t: &TempDir) -> (UnixDatagram, std::path::PathBuf) {
    let path = t.join("notify.sock");
    (UnixDatagram::bind(&path).unwrap(), path)
}

fn said_full_once(stderr: &str) {
    let n = stderr
        .lines()
        .filter(|l| l.contains("its socket is full"))
        .count();
    assert_eq!(n, 1, "the full socket said once: {stderr}");
}

#[test]
fn a_notify_socket_that_stops_reading_does_not_stop_the_monitor_at_its_duration() {
    let t = TempDir::new("monitor-notify-stuck");
    let (_sock, path) = stuck_socket(&t);
    let o = Running::spawn(monitor(&t, &path).args(["-D", "3"])).finish();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let e = entries(&o);
    assert!(with_id(&e, WINDOW).len() >= 2, "{e:?}");
    assert_eq!(with_id(&e, STOP).len(), 1, "{e:?}");
    assert!(t.join("mon/state.json").exists());
    said_full_once(&err);
    assert!(
        err.contains("notifications were delayed or merged"),
        "{err}"
    );
}

#[test]
fn a_notify_socket_that_stops_reading_does_not_keep_sigterm_from_the_monitor() {
    let t = TempDir::new("monitor-notify-term");
    let (_sock, path) = stuck_socket(&t);
    let r = Running::spawn(&mut monitor(&t, &path));
    // Two windows: by then far more than the queue's ten notifications were sent.
    let first = r.wait_stderr(0, "a window entry", |l| l.contains(WINDOW));
    r.wait_stderr(first + 1, "a second window entry", |l| l.contains(WINDOW));
    r.signal(libc::SIGTERM);
    let o = r.finish();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(143), "{err}");
    let e = entries(&o);
    assert_eq!(with_id(&e, STOP)[0]["RTBENCH_STOP"], "SIGTERM", "{e:?}");
    assert!(t.join("mon/state.json").exists());
    said_full_once(&err);
}
