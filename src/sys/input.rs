//! Reading files whose contents rtbench does not control — stored results, the
//! configuration, plot inputs — with a bound on what is read and, where only regular
//! files make sense, a check of what was opened.
//!
//! A results directory may hold anything named like a run: a FIFO makes a plain read
//! wait forever for a writer, a link to `/dev/zero` reads until memory runs out.
//! [`read_regular`] opens with `O_NONBLOCK` (so opening a FIFO never waits), checks with
//! `fstat` on the opened descriptor that it is a regular file (no window between a
//! check and the open) and reads at most the limit. [`read_bounded`] is for a file the
//! user names on the command line: FIFOs and devices are fine there (`<(cmd)` is a
//! pipe), but the read stops at the limit.
//!
//! Source: open(2) (`O_NONBLOCK` on FIFOs), fstat(2), fifo(7).

use std::fs::OpenOptions;
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// The most rtbench reads of a stored result or a plot input, in bytes (256 MiB): far
/// above a stored run of 1024 CPUs (a few MiB of histogram pairs) or a cyclictest
/// `-h` dump of 100,000 buckets for 64 threads (about 50 MiB).
pub const MAX_INPUT_BYTES: u64 = 256 << 20;

/// The most rtbench reads of a configuration file, in bytes (4 MiB; the shipped one is
/// about 6 KiB).
pub const MAX_CONFIG_BYTES: u64 = 4 << 20;

/// Why a file was not read.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// Not a regular file (a FIFO, a device, a directory, a socket).
    #[error("a {kind}, not a regular file")]
    NotRegular {
        /// What it is, e.g. `FIFO`, `character device`.
        kind: &'static str,
    },
    /// Larger than the limit.
    #[error("larger than {} MiB ({what}); not read", .max >> 20)]
    TooLarge {
        /// The limit in bytes.
        max: u64,
        /// `N bytes`, or `more than the limit` for a stream.
        what: String,
    },
    /// The open or read failed.
    #[error("{0}")]
    Io(#[from] io::Error),
}

impl InputError {
    /// The same as an [`io::Error`] (kind `InvalidData` unless it is one already).
    pub fn into_io(self) -> io::Error {
        match self {
            InputError::Io(e) => e,
            e => io::Error::new(io::ErrorKind::InvalidData, e.to_string()),
        }
    }
}

/// Whether [`open_regular`] follows a symbolic link at the path itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    /// Follow it (a file the user names: a link to a result is fine).
    Follow,
    /// Refuse it with `ELOOP` (`O_NOFOLLOW`: the files rtbench keeps, `crate::sys::kept`).
    Refuse,
}

/// Opens `path` with `opts` plus `O_NONBLOCK | O_NOCTTY` (and `O_NOFOLLOW` for
/// [`Links::Refuse`]) and checks with `fstat` on the opened descriptor that it is a
/// regular file: the one way rtbench opens a regular file without blocking. Opening a
/// FIFO never waits for a writer (`O_NONBLOCK`; for a regular file the flag does
/// nothing), a terminal never becomes the controlling one, and nothing can change
/// between the check and the open. Returns the file, or `Err(Ok(kind))` when it is not
/// a regular file (`FIFO`, `character device`, … as `super::atomic::kind_name` says),
/// or `Err(Err(e))` when the open or `fstat` failed (`ELOOP`: a link refused).
pub fn open_regular(
    path: &Path,
    opts: &mut OpenOptions,
    links: Links,
) -> Result<std::fs::File, Result<&'static str, io::Error>> {
    let nofollow = if links == Links::Refuse {
        libc::O_NOFOLLOW
    } else {
        0
    };
    let f = opts
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | nofollow)
        .open(path)
        .map_err(Err)?;
    let t = f.metadata().map_err(Err)?.file_type();
    if !t.is_file() {
        return Err(Ok(super::atomic::kind_name(t)));
    }
    Ok(f)
}

/// Reads the regular file `path`, at most `max` bytes (see the module documentation).
/// A FIFO, device, socket or directory — also behind a symbolic link — is
/// [`InputError::NotRegular`] without waiting or reading.
pub fn read_regular(path: &Path, max: u64) -> Result<Vec<u8>, InputError> {
    let f =
        open_regular(path, OpenOptions::new().read(true), Links::Follow).map_err(|e| match e {
            Ok(kind) => InputError::NotRegular { kind },
            Err(e) => InputError::Io(e),
        })?;
    read_opened_regular(f, max)
}

/// Reads the regular file `f` already opened (and checked to be one), at most `max`
/// bytes: larger by its size is [`InputError::TooLarge`] before reading, and since the
/// size can still grow after `fstat` (`O_NONBLOCK` does nothing for a regular file),
/// the read is bounded too. Shared with [`super::kept::read`].
pub(super) fn read_opened_regular(f: std::fs::File, max: u64) -> Result<Vec<u8>, InputError> {
    let len = f.metadata()?.len();
    if len > max {
        return Err(InputError::TooLarge {
            max,
            what: format!("{len} bytes"),
        });
    }
    read_at_most(f, max)
}

/// `bytes` as UTF-8 text, else an `InvalidData` error.
pub(super) fn utf8(bytes: Vec<u8>) -> Result<String, InputError> {
    String::from_utf8(bytes)
        .map_err(|_| InputError::Io(io::Error::new(io::ErrorKind::InvalidData, "not UTF-8 text")))
}

/// Reads `path` whatever it is (a FIFO waits for its writer, as `cat` would), at most
/// `max` bytes; more is [`InputError::TooLarge`].
pub fn read_bounded(path: &Path, max: u64) -> Result<Vec<u8>, InputError> {
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOCTTY)
        .open(path)?;
    if f.metadata()?.is_dir() {
        return Err(InputError::NotRegular { kind: "directory" });
    }
    read_at_most(f, max)
}

/// Reads standard input (or any reader), at most `max` bytes.
pub fn read_stream(r: impl Read, max: u64) -> Result<Vec<u8>, InputError> {
    read_at_most(r, max)
}

fn read_at_most(r: impl Read, max: u64) -> Result<Vec<u8>, InputError> {
    let mut buf = Vec::new();
    r.take(max.saturating_add(1)).read_to_end(&mut buf)?;
    if buf.len() as u64 > max {
        return Err(InputError::TooLarge {
            max,
            what: "more than that".into(),
        });
    }
    Ok(buf)
}

/// [`read_regular`] as UTF-8 text.
pub fn read_regular_text(path: &Path, max: u64) -> Result<String, InputError> {
    utf8(read_regular(path, max)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStrExt;

    #[test]
    fn fifos_devices_and_large_files_are_not_read() {
        let d = std::env::temp_dir().join(format!("rtbench-input-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        let fifo = d.join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
        // SAFETY: valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read_regular(&fifo, 10).unwrap_err();
        assert_eq!(e.to_string(), "a FIFO, not a regular file");
        std::os::unix::fs::symlink("/dev/zero", d.join("zero")).unwrap();
        let e = read_regular(&d.join("zero"), 10).unwrap_err();
        assert_eq!(e.to_string(), "a character device, not a regular file");
        // Named on the command line, a device is read, but only up to the limit.
        let e = read_bounded(&d.join("zero"), 1 << 20).unwrap_err();
        assert!(matches!(e, InputError::TooLarge { .. }), "{e}");
        std::fs::write(d.join("big"), vec![b'x'; 100]).unwrap();
        assert!(matches!(
            read_regular(&d.join("big"), 99),
            Err(InputError::TooLarge { .. })
        ));
        assert_eq!(read_regular(&d.join("big"), 100).unwrap().len(), 100);
        assert!(matches!(
            read_regular(&d, 100),
            Err(InputError::NotRegular { kind: "directory" })
        ));
        std::fs::remove_dir_all(&d).unwrap();
    }
}
