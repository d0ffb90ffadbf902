//! sd_notify as systemd sees it: a real NOTIFY_SOCKET datagram socket receives
//! READY=1 (once, before the measurement ends), STATUS= progress and WATCHDOG=1.

use crate::common::*;
use std::os::unix::net::UnixDatagram;
use std::time::Duration;

#[test]
fn ready_status_and_watchdog_reach_the_notify_socket() {
    let dir = TempDir::new("notify");
    let sock_path = dir.join("notify.sock");
    let sock = UnixDatagram::bind(&sock_path).unwrap();
    sock.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let cfg = dir.join("rtbench.toml");
    std::fs::write(&cfg, crate::common::on_any_kernel(&format!(
            "[selftest]\nmode = \"off\"\nduration = \"2s\"\n[limits]\nmax_us = 10000000\n[output]\nresults_dir = \"{}\"\n",
            dir.join("results").display()
        )))
    .unwrap();
    // systemd sets WATCHDOG_PID to the service's main PID: `exec` keeps the shell's.
    let mut child = std::process::Command::new("sh")
        .args(["-c", "WATCHDOG_PID=$$ exec \"$0\" selftest --config \"$1\""])
        .arg(crate::common::exe())
        .arg(&cfg)
        .env("NOTIFY_SOCKET", &sock_path)
        .env("WATCHDOG_USEC", "600000")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut msgs: Vec<String> = Vec::new();
    let mut buf = [0u8; 4096];
    let status = loop {
        if let Ok(n) = sock.recv(&mut buf) {
            msgs.push(String::from_utf8_lossy(&buf[..n]).into_owned());
        }
        if let Some(st) = child.try_wait().unwrap() {
            while let Ok(n) = sock.recv(&mut buf) {
                msgs.push(String::from_utf8_lossy(&buf[..n]).into_owned());
            }
            break st;
        }
    };
    assert_eq!(status.code(), Some(0));
    let ready: Vec<usize> = (0..msgs.len())
        .filter(|&i| msgs[i].lines().any(|l| l == "READY=1"))
        .collect();
    assert_eq!(ready.len(), 1, "{msgs:?}");
    assert!(
        msgs[ready[0]].contains("STATUS=tuning off; measuring cyclic"),
        "{msgs:?}"
    );
    // READY when tuned, before the measurement reports any progress.
    let measuring = msgs
        .iter()
        .position(|m| m.contains("STATUS=measuring"))
        .unwrap_or_else(|| panic!("no progress status: {msgs:?}"));
    assert!(
        ready[0] < measuring,
        "READY before the first status: {msgs:?}"
    );
    let watchdogs = msgs
        .iter()
        .filter(|m| m.lines().any(|l| l == "WATCHDOG=1"))
        .count();
    assert!(
        watchdogs >= 3,
        "WATCHDOG=1 at least every 300 ms for 2 s: {msgs:?}"
    );
    assert!(
        msgs.last().unwrap().contains("STATUS=self-test pass"),
        "{msgs:?}"
    );
}

/// systemd in a container or a nested manager names an abstract
/// socket (`NOTIFY_SOCKET=@name`); READY must reach it.
#[test]
fn ready_reaches_an_abstract_notify_socket() {
    use std::os::linux::net::SocketAddrExt;
    let dir = TempDir::new("notify-abstract");
    let name = format!("rtbench-test-notify-{}-{}", std::process::id(), unique());
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
    let sock = UnixDatagram::bind_addr(&addr).unwrap();
    sock.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let cfg = dir.join("rtbench.toml");
    std::fs::write(&cfg, crate::common::on_any_kernel(&format!(
            "[selftest]\nmode = \"off\"\nduration = \"1s\"\n[limits]\nmax_us = 10000000\n[cyclic]\ncpus = \"0\"\n\
             [output]\nresults_dir = \"{}\"\n",
            dir.join("results").display()
        )))
    .unwrap();
    let o = rtbench()
        .args(["selftest", "--config"])
        .arg(&cfg)
        .env("NOTIFY_SOCKET", format!("@{name}"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let mut msgs = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n) = sock.recv(&mut buf) {
        msgs.push(String::from_utf8_lossy(&buf[..n]).into_owned());
    }
    assert!(
        msgs.iter().any(|m| m.lines().any(|l| l == "READY=1")),
        "READY=1 on @{name}: {msgs:?}; stderr: {}",
        stderr(&o)
    );
    assert!(!stderr(&o).contains("sd_notify"), "{}", stderr(&o));
}

/// A notification that cannot be delivered is logged, once.
#[test]
fn undeliverable_notifications_are_logged_once() {
    let dir = TempDir::new("notify-gone");
    let cfg = dir.join("rtbench.toml");
    std::fs::write(&cfg, crate::common::on_any_kernel(&format!(
            "[selftest]\nmode = \"off\"\nduration = \"2s\"\n[limits]\nmax_us = 10000000\n[cyclic]\ncpus = \"0\"\n\
             [output]\nresults_dir = \"{}\"\n",
            dir.join("results").display()
        )))
    .unwrap();
    let o = rtbench()
        .args(["selftest", "--config"])
        .arg(&cfg)
        .env("NOTIFY_SOCKET", dir.join("no-such.sock"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let lines: Vec<_> = stderr(&o)
        .lines()
        .filter(|l| l.contains("sd_notify"))
        .map(str::to_string)
        .collect();
    assert_eq!(
        lines.len(),
        1,
        "READY, STATUS every second and the end: one line: {lines:?}"
    );
    assert!(lines[0].contains("no-such.sock"), "{lines:?}");
}

/// A service manager whose socket stops reading (a real datagram socket bound here and
/// never read: its queue fills after `net.unix.max_dgram_qlen` notifications): the
/// self-test measures to its duration, stores its result and says so once, never
/// waiting on the socket (with a 100-ms watchdog it notifies every 50 ms).
#[test]
fn a_notify_socket_that_stops_reading_does_not_hang_the_self_test() {
    let dir = TempDir::new("notify-stuck");
    let sock_path = dir.join("notify.sock");
    let _sock = UnixDatagram::bind(&sock_path).unwrap();
    let results = dir.join("results");
    let cfg = dir.join("rtbench.toml");
    std::fs::write(&cfg, crate::common::on_any_kernel(&format!(
            "[selftest]\nmode = \"off\"\nduration = \"3s\"\n[limits]\nmax_us = 10000000\n[cyclic]\ncpus = \"0\"\n\
             [output]\nresults_dir = \"{}\"\n",
            results.display()
        )))
    .unwrap();
    let o = Running::spawn(
        rtbench()
            .args(["selftest", "--config"])
            .arg(&cfg)
            .env("NOTIFY_SOCKET", &sock_path)
            .env("WATCHDOG_USEC", "100000")
            .env_remove("WATCHDOG_PID"),
    )
    .finish();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let stored: Vec<_> = std::fs::read_dir(&results)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("run-"))
        .collect();
    assert_eq!(stored.len(), 1, "the result stored: {err}");
    let full = err
        .lines()
        .filter(|l| l.contains("its socket is full"))
        .count();
    assert_eq!(full, 1, "said once: {err}");
    assert!(
        err.contains("notifications were delayed or merged"),
        "{err}"
    );
}

/// A journald that stops reading (stuck on its storage, being restarted): its socket's
/// queue is full, and every entry rtbench sends would block. In a private mount
/// namespace, /run is a new tmpfs whose /run/systemd/journal/socket is bound by a
/// process that never reads, its queue filled to one free slot (rtbench's connecting
/// probe takes it). The self-test must end on its own — `timeout` outside it returns
/// 124 if it waited — with its entries on standard error instead.
#[test]
fn a_journald_that_stops_reading_does_not_hang_the_self_test() {
    let dir = TempDir::new("journald-stuck");
    let results = dir.join("results");
    let cfg = dir.join("rtbench.toml");
    std::fs::write(&cfg, crate::common::on_any_kernel(&format!(
            "[selftest]\nmode = \"off\"\nduration = \"1s\"\n[limits]\nmax_us = 10000000\n[cyclic]\ncpus = \"0\"\n\
             [output]\nresults_dir = \"{}\"\n",
            results.display()
        )))
    .unwrap();
    let stuck = r#"
import socket, sys, time
path = sys.argv[1]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
c = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
c.setblocking(False)
n = 0
while True:
    try:
        c.sendto(b"X=1\n", path)
        n += 1
    except BlockingIOError:
        break
s.recv(64)
print(n, flush=True)
time.sleep(600)
"#;
    let script = format!(
        "mount -t tmpfs rtbench-test /run\n\
         mkdir -p /run/systemd/journal /run/rtbench\n\
         python3 -c '{stuck}' /run/systemd/journal/socket > \"$D/queued\" &\n\
         reader=$!\n\
         i=0; while [ ! -s \"$D/queued\" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done\n\
         rc=0; timeout -k 5 60 \"$RTBENCH\" selftest --log-format journal --config \"$D/rtbench.toml\" || rc=$?\n\
         kill $reader\n\
         exit $rc\n"
    );
    let o = std::process::Command::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-ec", &script])
        .env("RTBENCH", exe())
        .env("D", dir.path())
        .env_remove("INVOCATION_ID")
        .env_remove("RTBENCH_TRIGGER")
        .env_remove("NOTIFY_SOCKET")
        .output()
        .expect("unshare (util-linux)");
    let err = stderr(&o);
    let queued = std::fs::read_to_string(dir.join("queued")).unwrap_or_default();
    assert!(
        queued.trim().parse::<u32>().is_ok_and(|n| n > 0),
        "the stuck reader's queue was filled: {queued:?}"
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "124 is a self-test that waited: {err}"
    );
    // The entries journald would not take are on standard error, the verdict among them.
    assert!(
        err.contains("MESSAGE_ID=7b1dd0eea94d4cc4bd8f9e6c91b6465d"),
        "the summary entry on standard error: {err}"
    );
    assert_eq!(
        stored_results(dir.path()).len(),
        1,
        "the result stored: {err}"
    );
}
