//! The two transports of the pair tests: POSIX message queues (`rtbench pmq`, as
//! rt-tests' pmqtest uses them) and pipes (`rtbench pipe`, as `perf bench sched pipe`).
//!
//! Every message carries a [`Msg`] of four `i64` (32 bytes) in its first bytes; a
//! larger message size (`--msg-size`, `[pmq]`/`[pipe]` `msg_size`, **bytes**) pads it
//! with zeros. The caller owns the message buffer ([`MsgBuf`], allocated before the
//! measuring loop), so no send or receive allocates. A pipe message is at most
//! `PIPE_BUF` bytes, so its write is atomic and a read returns it whole (pipe(7)); a
//! queue's message at most `/proc/sys/fs/mqueue/msgsize_max` (mq_overview(7)). The hot
//! path makes exactly one syscall per send and per receive (plus `poll(2)` for a pipe
//! receive with a timeout).

use crate::error::{Error, Result};
use crate::sys::clock::{ns_to_ts, Clock};
use nix::mqueue::{mq_open, mq_receive, mq_send, mq_timedreceive, mq_unlink, MQ_OFlag, MqAttr};
use nix::sys::stat::Mode;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};

/// One message: sender's stamps and counters, all `i64` (time stamps in **ns** of
/// CLOCK_MONOTONIC).
pub type Msg = [i64; 4];
/// Size of a [`Msg`] on the wire, **bytes**: the smallest message and the default
/// message size (pmqtest's message, and rtbench's before `--msg-size`).
pub const MSG_BYTES: usize = 32;
/// Largest pipe message, **bytes**: `PIPE_BUF` (4096 on Linux), the most one `write(2)`
/// writes atomically (pipe(7)), so a message never arrives in pieces.
pub const PIPE_MAX_MSG_BYTES: usize = libc::PIPE_BUF;
/// Kernel file with the largest message an unprivileged queue may hold, **bytes**
/// (mq_overview(7): `msgsize_max`, default 8192).
pub const MQ_MSGSIZE_MAX: &str = "/proc/sys/fs/mqueue/msgsize_max";
/// The kernel's ceiling of `msgsize_max`, **bytes** (`HARD_MSGSIZEMAX`, 16 MiB,
/// mq_overview(7)); the bound when [`MQ_MSGSIZE_MAX`] cannot be read.
pub const MQ_HARD_MSGSIZE_MAX: usize = 16 * 1024 * 1024;

/// A message buffer of the message size, **bytes** (at least [`MSG_BYTES`]): the
/// first 32 bytes carry the [`Msg`], the rest is zero padding. Allocated once per end,
/// before the measuring loop. `Default` is an empty placeholder (no allocation) for
/// `std::mem::take`; it must not be sent or received with.
#[derive(Debug, Clone, Default)]
pub struct MsgBuf(Box<[u8]>);

impl MsgBuf {
    /// A zeroed buffer of `bytes` (raised to [`MSG_BYTES`]).
    pub fn new(bytes: usize) -> MsgBuf {
        MsgBuf(vec![0u8; bytes.max(MSG_BYTES)].into_boxed_slice())
    }

    /// The message size, **bytes**.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether this is the `Default` placeholder.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Sending side of a one-way channel.
pub trait Tx: Send {
    /// Sends one message of `buf.len()` bytes carrying `m` (blocking).
    fn send(&self, m: &Msg, buf: &mut MsgBuf) -> io::Result<()>;
}

/// Receiving side of a one-way channel.
pub trait Rx: Send {
    /// Receives one message of `buf.len()` bytes into `buf` and `m`. `timeout_ns`
    /// (relative, **ns**) bounds the wait; returns `Ok(false)` when it expired. End of
    /// file (the peer closed its end) is an `UnexpectedEof` error; a message of another
    /// size `InvalidData`.
    fn recv(&self, m: &mut Msg, buf: &mut MsgBuf, timeout_ns: Option<i64>) -> io::Result<bool>;
}

#[inline(always)]
fn encode(m: &Msg, b: &mut MsgBuf) {
    for (i, v) in m.iter().enumerate() {
        b.0[i * 8..i * 8 + 8].copy_from_slice(&v.to_ne_bytes());
    }
}

#[inline(always)]
fn decode(b: &[u8], m: &mut Msg) {
    for (i, v) in m.iter_mut().enumerate() {
        let mut x = [0u8; 8];
        x.copy_from_slice(&b[i * 8..i * 8 + 8]);
        *v = i64::from_ne_bytes(x);
    }
}

/// A POSIX message queue opened read-write (one descriptor serves both ends: the pair
/// runs in one process). Its name is unlinked right after creation, so nothing is
/// left in the mqueue file system even when rtbench is killed. Closed on drop.
#[derive(Debug)]
pub struct MqQueue {
    fd: RawFd,
}

impl Drop for MqQueue {
    fn drop(&mut self) {
        // SAFETY: fd is the descriptor mq_open returned and is closed only here.
        unsafe { libc::mq_close(self.fd) };
    }
}

/// Per-process and per-user message queue limits, for error messages.
const MQ_LIMITS: &str = "/proc/sys/fs/mqueue";

impl MqQueue {
    /// Creates queue `name` (e.g. `/rtbench-123-0-fwd`) holding one message of
    /// `msg_bytes` **bytes** (pmqtest: `mq_maxmsg` 1, 32 bytes), then unlinks the name.
    /// Receives into this queue need a [`MsgBuf`] of `msg_bytes`.
    ///
    /// Errors are one line naming the queue and the limit that refused it:
    /// ENOSYS (kernel without CONFIG_POSIX_MQUEUE), EMFILE (RLIMIT_MSGQUEUE, `ulimit -q`,
    /// which counts every queue's message bytes plus overhead, or the open-file limit),
    /// ENOSPC (`/proc/sys/fs/mqueue/queues_max`), EINVAL (`msg_max` / `msgsize_max`),
    /// EACCES/EEXIST.
    pub fn create(name: &str, msg_bytes: usize) -> Result<MqQueue> {
        let attr = MqAttr::new(0, 1, msg_bytes as _, 0);
        let flags = MQ_OFlag::O_CREAT | MQ_OFlag::O_EXCL | MQ_OFlag::O_RDWR;
        let q = mq_open(name, flags, Mode::from_bits_truncate(0o600), Some(&attr))
            .map_err(|e| mq_error(name, msg_bytes, e))?;
        let _ = mq_unlink(name);
        Ok(MqQueue {
            fd: q.into_raw_fd(),
        })
    }
}

fn read_limit(name: &str) -> String {
    std::fs::read_to_string(format!("{MQ_LIMITS}/{name}"))
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "?".into())
}

/// The refusal of `mq_open(name)` for one message of `msg_bytes` with `e`: the errno
/// and the limit that refused it.
fn mq_error(name: &str, msg_bytes: usize, e: nix::errno::Errno) -> Error {
    use crate::sys::refusal;
    use nix::errno::Errno;
    let (limit, why) = match e {
        Errno::ENOSYS => ("CONFIG_POSIX_MQUEUE", "POSIX message queues are not supported by this kernel (CONFIG_POSIX_MQUEUE is off)".to_string()),
        // EMFILE is either limit (mq_overview(7)): the descriptors decide which.
        Errno::EMFILE => {
            let fds = refusal::files::Descriptors::read(&crate::sys::SysRoot::host());
            if fds.exhausted(1) {
                let c = refusal::files::nofile(&fds, 1);
                (c.name, c.text)
            } else {
                let mut rl = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
                // SAFETY: rlimit is a valid out-pointer.
                unsafe { libc::getrlimit(libc::RLIMIT_MSGQUEUE, &mut rl) };
                ("RLIMIT_MSGQUEUE", format!(
                    "limit hit: RLIMIT_MSGQUEUE (ulimit -q) is {} bytes, too small for two queues of one {msg_bytes}-byte message (plus overhead) per pair",
                    rl.rlim_cur
                ))
            }
        }
        Errno::ENOSPC => ("fs.mqueue.queues_max", format!(
            "limit hit: {MQ_LIMITS}/queues_max ({}) queues exist already",
            read_limit("queues_max")
        )),
        Errno::EINVAL => ("fs.mqueue.msg_max", format!(
            "limit hit: 1 message of {msg_bytes} bytes exceeds {MQ_LIMITS}/msg_max ({}) or {MQ_LIMITS}/msgsize_max ({})",
            read_limit("msg_max"),
            read_limit("msgsize_max")
        )),
        Errno::ENFILE => {
            let c = refusal::files::descriptors(&crate::sys::SysRoot::host(), libc::ENFILE, 1)
                .expect("ENFILE has a cause");
            (c.name, c.text)
        }
        Errno::ENOMEM => ("memory", "out of memory".to_string()),
        _ => ("", String::new()),
    };
    Error::refused(
        format!("message queue {name}: mq_open"),
        io::Error::from(e),
        (!limit.is_empty()).then(|| crate::error::Cause::new(limit, why)),
    )
}

impl Tx for std::sync::Arc<MqQueue> {
    #[inline(always)]
    fn send(&self, m: &Msg, buf: &mut MsgBuf) -> io::Result<()> {
        // SAFETY: MqdT is a transparent wrapper of the raw mqd_t; ManuallyDrop keeps
        // the borrowed descriptor open.
        let q = std::mem::ManuallyDrop::new(unsafe { nix::mqueue::MqdT::from_raw_fd(self.fd) });
        encode(m, buf);
        mq_send(&q, &buf.0, 1).map_err(io::Error::from)
    }
}

impl Rx for std::sync::Arc<MqQueue> {
    #[inline(always)]
    fn recv(&self, m: &mut Msg, buf: &mut MsgBuf, timeout_ns: Option<i64>) -> io::Result<bool> {
        // SAFETY: as in `send`.
        let q = std::mem::ManuallyDrop::new(unsafe { nix::mqueue::MqdT::from_raw_fd(self.fd) });
        let mut prio = 0u32;
        let r = match timeout_ns {
            None => mq_receive(&q, &mut buf.0, &mut prio),
            Some(t) => {
                // mq_timedreceive takes an absolute CLOCK_REALTIME deadline.
                let abs = ns_to_ts(Clock::Realtime.now_ns() + t);
                mq_timedreceive(&q, &mut buf.0, &mut prio, &abs.into())
            }
        };
        match r {
            Ok(n) if n == buf.len() => {
                decode(&buf.0, m);
                Ok(true)
            }
            Ok(n) => Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("short message: {n} bytes"),
            )),
            Err(nix::errno::Errno::ETIMEDOUT) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }
}

/// Read end of a pipe.
#[derive(Debug)]
pub struct PipeRead(pub OwnedFd);
/// Write end of a pipe.
#[derive(Debug)]
pub struct PipeWrite(pub OwnedFd);

/// Creates a pipe (`pipe2(O_CLOEXEC)`).
pub fn pipe() -> Result<(PipeRead, PipeWrite)> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: fds is a valid array of two ints.
    let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    if rc != 0 {
        let e = io::Error::last_os_error();
        let cause = e.raw_os_error().and_then(|n| {
            crate::sys::refusal::files::descriptors(&crate::sys::SysRoot::host(), n, 2)
        });
        return Err(Error::refused("pipe2", e, cause));
    }
    // SAFETY: pipe2 returned two fresh descriptors that nothing else owns.
    unsafe {
        Ok((
            PipeRead(OwnedFd::from_raw_fd(fds[0])),
            PipeWrite(OwnedFd::from_raw_fd(fds[1])),
        ))
    }
}

impl Tx for PipeWrite {
    #[inline(always)]
    fn send(&self, m: &Msg, buf: &mut MsgBuf) -> io::Result<()> {
        encode(m, buf);
        let len = buf.len();
        loop {
            // SAFETY: buf is valid for len bytes.
            let n = unsafe { libc::write(self.0.as_raw_fd(), buf.0.as_ptr().cast(), len) };
            if n == len as isize {
                return Ok(());
            }
            let e = io::Error::last_os_error();
            if n < 0 && e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(if n < 0 {
                e
            } else {
                io::Error::new(io::ErrorKind::WriteZero, "short pipe write")
            });
        }
    }
}

impl Rx for PipeRead {
    #[inline(always)]
    fn recv(&self, m: &mut Msg, buf: &mut MsgBuf, timeout_ns: Option<i64>) -> io::Result<bool> {
        let fd = self.0.as_raw_fd();
        if let Some(t) = timeout_ns {
            let mut p = libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            };
            let ms = (t / 1_000_000).clamp(1, i32::MAX as i64) as libc::c_int;
            // SAFETY: p is one valid pollfd.
            let r = unsafe { libc::poll(&mut p, 1, ms) };
            if r == 0 {
                return Ok(false);
            }
            if r < 0 {
                let e = io::Error::last_os_error();
                return if e.kind() == io::ErrorKind::Interrupted {
                    Ok(false)
                } else {
                    Err(e)
                };
            }
        }
        let len = buf.len();
        loop {
            // SAFETY: buf is valid for len bytes.
            let n = unsafe { libc::read(fd, buf.0.as_mut_ptr().cast(), len) };
            if n == len as isize {
                decode(&buf.0, m);
                return Ok(true);
            }
            if n == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the other end closed the pipe",
                ));
            }
            let e = io::Error::last_os_error();
            if n < 0 && e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(if n < 0 {
                e
            } else {
                io::Error::new(io::ErrorKind::InvalidData, "short pipe read")
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn pipe_round_trip_and_timeout() {
        for size in [MSG_BYTES, PIPE_MAX_MSG_BYTES] {
            let (r, w) = pipe().unwrap();
            let (mut tb, mut rb) = (MsgBuf::new(size), MsgBuf::new(size));
            w.send(&[1, -2, i64::MAX, i64::MIN], &mut tb).unwrap();
            let mut m = [0; 4];
            assert!(r.recv(&mut m, &mut rb, None).unwrap());
            assert_eq!(m, [1, -2, i64::MAX, i64::MIN]);
            assert!(!r.recv(&mut m, &mut rb, Some(5_000_000)).unwrap());
            drop(w);
            let e = r.recv(&mut m, &mut rb, None).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
        }
    }

    #[test]
    fn pipe_message_of_another_size_is_invalid_data() {
        let (r, w) = pipe().unwrap();
        w.send(&[1, 2, 3, 4], &mut MsgBuf::new(MSG_BYTES)).unwrap();
        let mut m = [0; 4];
        let e = r.recv(&mut m, &mut MsgBuf::new(64), None).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
    }

    #[test]
    fn mq_round_trip_timeout_and_no_name_left() {
        let name = format!("/rtbench-test-{}", std::process::id());
        let q = Arc::new(MqQueue::create(&name, MSG_BYTES).unwrap());
        // The name is gone at once: a second create with O_EXCL succeeds.
        drop(MqQueue::create(&name, MSG_BYTES).unwrap());
        let mut b = MsgBuf::new(MSG_BYTES);
        q.send(&[7, 8, 9, 10], &mut b).unwrap();
        let mut m = [0; 4];
        assert!(q.recv(&mut m, &mut b, None).unwrap());
        assert_eq!(m, [7, 8, 9, 10]);
        assert!(!q.recv(&mut m, &mut b, Some(10_000_000)).unwrap());
        // A larger message: the queue's size, padded.
        let big = Arc::new(MqQueue::create(&name, 1024).unwrap());
        let mut b = MsgBuf::new(1024);
        big.send(&[1, 2, 3, 4], &mut b).unwrap();
        assert!(big.recv(&mut m, &mut b, None).unwrap());
        assert_eq!(m, [1, 2, 3, 4]);
        // Beyond msgsize_max (unprivileged) or HARD_MSGSIZEMAX: refused, naming it.
        let e = MqQueue::create(&name, MQ_HARD_MSGSIZE_MAX + 1).unwrap_err();
        assert!(e.to_string().contains("msgsize_max"), "{e}");
    }
}
