//! sd_notify(3) without libsystemd: one `AF_UNIX` datagram per notification to the
//! socket named by `$NOTIFY_SOCKET` — a file system path (`/run/systemd/notify`) or, with
//! a leading `@`, an abstract socket (unix(7): the name after a NUL byte), which systemd
//! uses in containers and nested managers. The sd-notify crate (0.4.5, the newest that
//! builds with Rust 1.75) connects to the path as written and so never reaches an
//! abstract socket; this is the whole protocol, so rtbench speaks it itself.
//!
//! A notification that cannot be delivered is reported once (the caller logs the
//! returned line); later failures are silent, so a broken socket does not flood the log.
//!
//! Notification is best effort and never waits: the socket is non-blocking, so a
//! supervisor that stops reading (a full receive queue, `net.unix.max_dgram_qlen`
//! datagrams, 10 by default) costs a refused send (`EAGAIN`), not a main thread stuck in
//! `sendto` while windows, `-D`, signals and storing wait. What could not be sent is kept,
//! one value per variable (`READY`, `STATUS`, `WATCHDOG`, …: the latest wins, so what is
//! kept is bounded by the variables rtbench sends), and sent before the next
//! notification; [`Notifier::dropped`] counts the notifications that were replaced or
//! merged that way, and the first refusal is said once.
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
    /// What could not be sent yet, one `KEY=value` per key (latest value), in the
    /// order the keys were first sent.
    pending: Vec<String>,
    /// Calls of [`Notifier::send`] whose lines did not go out then as a datagram of
    /// their own, because the socket was full (delayed, merged with another, or a
    /// value replaced by a newer one).
    dropped: u64,
    /// The socket was found full at least once (said once).
    full_reported: bool,
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
            pending: Vec::new(),
            dropped: 0,
            full_reported: false,
        }
    }

    /// How many notifications were not delivered as sent because the socket was full
    /// (their latest values were sent later, merged, or are still pending).
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// The line to log at the end of a run when notifications were not delivered as
    /// sent (see [`Notifier::dropped`]), `None` when all were.
    pub fn dropped_line(&self) -> Option<String> {
        (self.dropped > 0).then(|| {
            format!(
                "sd_notify to NOTIFY_SOCKET={}: {} notifications were delayed or merged \
                 because the service manager was not reading{}",
                self.name,
                self.dropped,
                if self.pending() {
                    "; the last is still undelivered"
                } else {
                    ""
                }
            )
        })
    }

    /// Whether notifications are still waiting for the socket to take them.
    pub fn pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Merges `lines` into the pending ones: a `KEY=value` replaces the pending value of
    /// its key (the order of first sending kept), so the pending set never holds more
    /// than one line per key.
    fn merge(&mut self, lines: &[&str]) {
        for line in lines {
            let key = line.split('=').next().unwrap_or(line);
            match self
                .pending
                .iter_mut()
                .find(|p| p.split('=').next() == Some(key))
            {
                Some(p) => *p = line.to_string(),
                None => self.pending.push(line.to_string()),
            }
        }
    }

    fn try_send(&mut self, msg: &str) -> io::Result<()> {
        let addr = self
            .addr
            .as_ref()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.clone()))?;
        if self.sock.is_none() {
            let sock = UnixDatagram::unbound()?;
            // Never wait on the supervisor: a full queue is EAGAIN (see the module).
            sock.set_nonblocking(true)?;
            self.sock = Some(sock);
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

    /// Sends `lines` (`READY=1`, `STATUS=…`, `WATCHDOG=1`) as one datagram, together
    /// with what an earlier call could not send (the newer value of a key winning);
    /// never blocks. Returns a line to log the first time a notification cannot be
    /// delivered (a full socket: once, and the values are kept for the next call; any
    /// other failure: once, and nothing is kept), `None` otherwise.
    pub fn send(&mut self, lines: &[&str]) -> Option<String> {
        let had_pending = !self.pending.is_empty();
        if had_pending {
            // The pending notification and this one go as one: one of them is lost as
            // a datagram of its own.
            self.dropped += 1;
        }
        self.merge(lines);
        let msg = self.pending.join("\n");
        match self.try_send(&msg) {
            Ok(()) => {
                self.pending.clear();
                None
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if !had_pending {
                    self.dropped += 1;
                }
                if self.full_reported {
                    return None;
                }
                self.full_reported = true;
                Some(format!(
                    "sd_notify to NOTIFY_SOCKET={}: the service manager is not reading \
                     (its socket is full); rtbench does not wait for it and sends the \
                     latest READY, STATUS and WATCHDOG when it reads again (reported once)",
                    self.name
                ))
            }
            Err(_) if self.reported => {
                self.pending.clear();
                None
            }
            Err(e) => {
                self.pending.clear();
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

    /// A reader that never reads: the queue fills (`net.unix.max_dgram_qlen`), and
    /// `send` returns at once, says so once, keeps one line per key and delivers the
    /// latest values when the reader drains the queue.
    #[test]
    fn a_socket_whose_reader_never_reads_never_blocks_and_keeps_the_latest() {
        let dir = std::env::temp_dir().join(format!("rtbench-notify-full-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("notify.sock");
        let rx = UnixDatagram::bind(&path).unwrap();
        let mut n = Notifier::new(path.to_str().unwrap());
        let mut said = Vec::new();
        // Far more than any queue length; a blocking send would hang here.
        for i in 0..5000 {
            let status = format!("STATUS=window {i}");
            said.extend(n.send(&[&status, "WATCHDOG=1"]));
        }
        assert_eq!(said.len(), 1, "said once: {said:?}");
        assert!(said[0].contains("not reading"), "{said:?}");
        assert!(n.pending(), "the latest values are kept");
        assert!(n.dropped() > 4000, "{}", n.dropped());
        assert!(n.pending.len() <= 2, "one line per key: {:?}", n.pending);
        // The reader drains its queue: the next send delivers the latest values, merged.
        rx.set_nonblocking(true).unwrap();
        let mut buf = [0u8; 256];
        let mut first = None;
        while let Ok(len) = rx.recv(&mut buf) {
            first.get_or_insert_with(|| String::from_utf8_lossy(&buf[..len]).into_owned());
        }
        assert_eq!(first.as_deref(), Some("STATUS=window 0\nWATCHDOG=1"));
        assert_eq!(n.send(&["STATUS=stopped"]), None);
        assert!(!n.pending());
        let len = rx.recv(&mut buf).unwrap();
        assert_eq!(&buf[..len], b"STATUS=stopped\nWATCHDOG=1");
        let _ = std::fs::remove_dir_all(&dir);
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
