//! journald's native protocol (<https://systemd.io/JOURNAL_NATIVE_PROTOCOL/>,
//! sd_journal_send(3)): one datagram per entry on the `AF_UNIX` socket
//! `/run/systemd/journal/socket`, each field `KEY=value\n`, or — for a value with a
//! newline — `KEY\n`, the value's length as a little-endian `u64`, the value, `\n`.
//!
//! The socket never blocks (`O_NONBLOCK`): a journald that stops reading (stuck on its
//! storage, being restarted) fills the socket's queue (`net.unix.max_dgram_qlen`
//! datagrams) and a blocking send would then stall the self-test's or the monitor's main
//! thread, which also cuts windows and takes signals. A send that would block fails with
//! `EAGAIN` instead, and [`super::Journal::try_send`] writes that entry to standard error,
//! as for any other journald failure: the facts are never lost, nothing waits. An entry
//! too large for one datagram (`EMSGSIZE`; rtbench's entries are bounded far below the
//! socket's buffer) falls back the same way rather than through the protocol's memfd
//! form.

use std::io;
use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};

/// A connection to journald's native socket that never waits.
pub struct Native {
    socket: UnixDatagram,
    path: PathBuf,
}

impl Native {
    /// An unbound, non-blocking datagram socket that sends to `path` (journald's is
    /// [`super::JOURNAL_SOCKET`]). An empty datagram, which journald discards, proves a
    /// reader is bound there.
    ///
    /// Errors: socket(2), fcntl(2), or the first send (`ENOENT`, `ECONNREFUSED` when no
    /// journald listens; `EAGAIN` when its queue is already full).
    pub fn connect(path: &Path) -> io::Result<Native> {
        let socket = UnixDatagram::unbound()?;
        socket.set_nonblocking(true)?;
        socket.send_to(&[], path)?;
        Ok(Native {
            socket,
            path: path.to_path_buf(),
        })
    }

    /// Sends one entry made of `fields` (name, value) in their order.
    ///
    /// Errors: sendto(2)'s — `EAGAIN` when journald's queue is full (nothing waits),
    /// `EMSGSIZE` for an entry larger than a datagram may be.
    pub fn send(&self, fields: &[(&str, &str)]) -> io::Result<()> {
        self.socket.send_to(&encode(fields), &self.path).map(|_| ())
    }
}

/// The datagram of one entry: each field `NAME=value\n`, or `NAME\n<u64 LE length>value\n`
/// when the value holds a newline. `NAME` must be a journal field name (upper-case
/// letters, digits and `_`, not starting with a digit): rtbench's are constants.
pub fn encode(fields: &[(&str, &str)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(fields.iter().map(|(k, v)| k.len() + v.len() + 10).sum());
    for (name, value) in fields {
        debug_assert!(valid_name(name), "journal field name {name:?}");
        out.extend_from_slice(name.as_bytes());
        if value.contains('\n') {
            out.push(b'\n');
            out.extend_from_slice(&(value.len() as u64).to_le_bytes());
        } else {
            out.push(b'=');
        }
        out.extend_from_slice(value.as_bytes());
        out.push(b'\n');
    }
    out
}

/// A field name journald accepts from a client (systemd.journal-fields(7)): upper-case
/// letters, digits and `_`, not beginning with a digit or `_`.
fn valid_name(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && !b[0].is_ascii_digit()
        && b[0] != b'_'
        && b.iter()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fields of one datagram, read back as journald reads them.
    fn decode(mut d: &[u8]) -> Vec<(String, String)> {
        let mut v = Vec::new();
        while !d.is_empty() {
            let end = d.iter().position(|&c| c == b'\n' || c == b'=').unwrap();
            let name = String::from_utf8(d[..end].to_vec()).unwrap();
            if d[end] == b'=' {
                let nl = d[end..].iter().position(|&c| c == b'\n').unwrap() + end;
                v.push((name, String::from_utf8(d[end + 1..nl].to_vec()).unwrap()));
                d = &d[nl + 1..];
            } else {
                let len = u64::from_le_bytes(d[end + 1..end + 9].try_into().unwrap()) as usize;
                let value = &d[end + 9..end + 9 + len];
                assert_eq!(d[end + 9 + len], b'\n');
                v.push((name, String::from_utf8(value.to_vec()).unwrap()));
                d = &d[end + 10 + len..];
            }
        }
        v
    }

    #[test]
    fn fields_read_back_as_sent_newlines_and_equals_signs_included() {
        let f = [
            ("MESSAGE", "line one\nline two"),
            ("PRIORITY", "6"),
            ("RTBENCH_X", "a=b"),
            ("RTBENCH_EMPTY", ""),
        ];
        let back = decode(&encode(&f));
        let want: Vec<(String, String)> = f
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert_eq!(back, want);
        assert!(valid_name("RTBENCH_P99_NS"));
        assert!(!valid_name("_PID") && !valid_name("9X") && !valid_name("lower"));
    }

    #[test]
    fn a_reader_that_never_reads_never_blocks_a_send() {
        let dir = std::env::temp_dir().join(format!("rtbench-native-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("socket");
        let _ = std::fs::remove_file(&path);
        let reader = UnixDatagram::bind(&path).unwrap();
        let j = Native::connect(&path).unwrap();
        let fields = [("MESSAGE", "x".repeat(1000)), ("PRIORITY", "6".into())];
        let fields: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
        // The queue fills (net.unix.max_dgram_qlen, or the buffer), then every send
        // fails at once with EAGAIN: the loop ends without the reader ever reading.
        let mut sent = 0;
        let err = loop {
            match j.send(&fields) {
                Ok(()) => sent += 1,
                Err(e) => break e,
            }
            assert!(sent < 1_000_000, "the queue never filled");
        };
        assert_eq!(err.kind(), io::ErrorKind::WouldBlock, "{err}");
        assert!(sent >= 1);
        // What was queued is the entries as sent.
        let mut buf = vec![0u8; 4096];
        let n = reader.recv(&mut buf).unwrap();
        assert_eq!(n, 0, "the connecting probe first");
        let n = reader.recv(&mut buf).unwrap();
        assert_eq!(decode(&buf[..n])[1], ("PRIORITY".into(), "6".into()));
        drop(reader);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn no_reader_is_an_error_at_connect() {
        let path = std::env::temp_dir().join(format!("rtbench-native-none-{}", std::process::id()));
        assert!(Native::connect(&path).is_err());
    }
}
