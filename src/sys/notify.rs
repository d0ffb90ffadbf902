//! sd_notify(3) without libsystemd: one `AF_UNIX` datagram per notification to the
//! socket named by `$NOTIFY_SOCKET` — a file system path (`/run/systemd/notify`) or, with
//! a leading `@`, an abstract socket (unix(7): the name after a NUL byte), which systemd
//! uses in containers and nested managers. The sd-notify crate (0.4.5, the newest that
//! builds with Rust 1.75) connects to the path as written and so never reaches an
//! abstract socket; this is the whole protocol, so rtbench speaks it itself.
//!
//! A notification that cannot be delivered is reported once (the caller logs the
//! returned line); later failures are silent, so a broken socket does not flood the log.
//! [`watchdog_interval`] says whether, and how often, the service manager wants
//! `WATCHDOG=1`. Every command that notifies (the self-test, the monitor) goes through
//! this module.
//!
//! Source: sd_notify(3) "NOTIFY_SOCKET", sd_watchdog_enabled(3), systemd's `sd_notify()`
//! and `sd_watchdog_enabled()` in src/libsystemd/sd-daemon/sd-daemon.c (abstract names:
//! `@` → leading NUL).

use std::io;
use std::os::unix::net::{SocketAddr, UnixDatagram};
use std::time::Duration;

/// Where notifications go, from `$NOTIFY_SOCKET`.
pub struct Notifier {
    /// The socket as named in `$NOTIFY_SOCKET` (for messages).
    name: String,
    /// The address, or why there is none usable.
    addr: Result<SocketAddr, String>,
    /// The sending socket, created on first use.
    sock: Option<UnixDatagram>,
    /// A failure was already reported.
    reported: bool,
}

/// The address `$NOTIFY_SOCKET` names: `/path`, or `@name` for an abstract socket.
pub fn address(value: &str) -> Result<SocketAddr, String> {
    if let Some(name) = value.strip_prefix('@') {
        use std::os::linux::net::SocketAddrExt;
        return SocketAddr::from_abstract_name(name.as_bytes()).map_err(|e| e.to_string());
    }
    if value.starts_with('/') {
        return SocketAddr::from_pathname(value).map_err(|e| e.to_string());
    }
    Err("expected an absolute path or @abstract-name (AF_UNIX)".into())
}

impl Notifier {
    /// A notifier for `$NOTIFY_SOCKET`; `None` when it is unset or empty (not started by
    /// a service manager that wants notifications).
    pub fn from_env() -> Option<Notifier> {
        let value = std::env::var("NOTIFY_SOCKET").ok()?;
        (!value.is_empty()).then(|| Notifier::new(&value))
    }

    /// A notifier for the socket named `value` (as in `$NOTIFY_SOCKET`).
    pub fn new(value: &str) -> Notifier {
        Notifier {
            name: value.to_string(),
            addr: address(value),
            sock: None,
            reported: false,
        }
    }

    fn try_send(&mut self, msg: &str) -> io::Result<()> {
        let addr = self
            .addr
            .as_ref()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.clone()))?;
        if self.sock.is_none() {
            self.sock = Some(UnixDatagram::unbound()?);
        }
        let sock = self.sock.as_ref().expect("created above");
        let n = sock.send_to_addr(msg.as_bytes(), addr)?;
        if n != msg.len() {
            return Err(io::Error::new(
                io::ErrorKind::WriteZero,
                format!("sent {n} of {} bytes", msg.len()),
            ));
        }
        Ok(())
    }

    /// Sends `lines` (`READY=1`, `STATUS=…`, `WATCHDOG=1`) as one datagram. Returns a
    /// line to log the first time a notification cannot be delivered, `None` otherwise.
    pub fn send(&mut self, lines: &[&str]) -> Option<String> {
        let msg = lines.join("\n");
        match self.try_send(&msg) {
            Ok(()) => None,
            Err(_) if self.reported => None,
            Err(e) => {
                self.reported = true;
                Some(format!(
                    "sd_notify to NOTIFY_SOCKET={} failed: {e}; the service manager will not \
                     see READY, STATUS or WATCHDOG from this run (reported once)",
                    self.name
                ))
            }
        }
    }
}

/// The watchdog interval the service manager expects `WATCHDOG=1` within, from
/// `$WATCHDOG_USEC` and `$WATCHDOG_PID` as sd_watchdog_enabled(3) reads them (see
/// [`watchdog_from`]); `None` when no watchdog is asked of this process.
pub fn watchdog_interval() -> Option<Duration> {
    let var = |n: &str| std::env::var(n).ok();
    watchdog_from(
        var("WATCHDOG_USEC").as_deref(),
        var("WATCHDOG_PID").as_deref(),
        std::process::id(),
    )
}

/// The watchdog interval for process `me` given `WATCHDOG_USEC` (`usec`) and
/// `WATCHDOG_PID` (`pid`), as sd_watchdog_enabled(3) defines them: `usec` is a number
/// of µs, neither 0 nor infinity (2^64 - 1); `pid`, when set, is a valid PID, and the
/// watchdog is this process's only when it is `me` (a child that inherited the
/// environment is not asked). Anything else: `None`.
pub fn watchdog_from(usec: Option<&str>, pid: Option<&str>, me: u32) -> Option<Duration> {
    let usec: u64 = usec?.parse().ok()?;
    if usec == 0 || usec == u64::MAX {
        return None;
    }
    match pid {
        None => {}
        Some(p) => {
            let p: u32 = p.parse().ok().filter(|&p| p > 0)?;
            if p != me {
                return None;
            }
        }
    }
    Some(Duration::from_micros(usec))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abstract_and_path_sockets_receive_and_bad_names_report_once() {
        let name = format!("rtbench-notify-unit-{}", std::process::id());
        let addr = address(&format!("@{name}")).unwrap();
        let rx = UnixDatagram::bind_addr(&addr).unwrap();
        let mut n = Notifier::new(&format!("@{name}"));
        assert_eq!(n.send(&["READY=1", "STATUS=x"]), None);
        let mut buf = [0u8; 64];
        let len = rx.recv(&mut buf).unwrap();
        assert_eq!(&buf[..len], b"READY=1\nSTATUS=x");

        let mut bad = Notifier::new("relative/path");
        assert!(bad.send(&["READY=1"]).unwrap().contains("relative/path"));
        assert_eq!(bad.send(&["READY=1"]), None, "reported once");
        let mut gone = Notifier::new("/nonexistent/rtbench-notify");
        assert!(gone.send(&["READY=1"]).is_some());
        assert_eq!(gone.send(&["WATCHDOG=1"]), None);
    }

    #[test]
    fn watchdog_as_sd_watchdog_enabled_reads_it() {
        let s = |us| Some(Duration::from_micros(us));
        assert_eq!(watchdog_from(Some("600000"), Some("42"), 42), s(600_000));
        assert_eq!(watchdog_from(Some("600000"), None, 42), s(600_000));
        assert_eq!(watchdog_from(Some("600000"), Some("41"), 42), None);
        assert_eq!(watchdog_from(Some("600000"), Some("x"), 42), None);
        assert_eq!(watchdog_from(Some("600000"), Some("0"), 42), None);
        assert_eq!(watchdog_from(None, Some("42"), 42), None);
        assert_eq!(watchdog_from(Some("0"), None, 42), None);
        assert_eq!(watchdog_from(Some("18446744073709551615"), None, 42), None);
        assert_eq!(watchdog_from(Some("-5"), None, 42), None);
    }
}
