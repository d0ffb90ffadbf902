//! The one place rtbench writes a file. What happens depends on what the path names
//! ([`destination`]):
//!
//! - **a regular file, or no file yet**: atomic replacement — write a temporary file in
//!   the same directory, give it mode [`FILE_MODE`] (with `fchmod`, so the umask does
//!   not matter: collectors such as node_exporter read the files as another user),
//!   fsync it, rename it over the target, fsync the directory. A reader (or a crash)
//!   sees the old file or the new one, never a truncated one;
//! - **a symbolic link to a regular file**: the same, on the file the link points to,
//!   so the link stays a link (as `open(2)` would write through it);
//! - **a device, FIFO or socket** (`--json /dev/null`, a FIFO a collector reads, a
//!   link to either): written into with a plain `open(O_WRONLY)` — no `O_CREAT`, no
//!   `O_TRUNC` — as cyclictest's `fopen` would, except that a FIFO nobody reads is an
//!   error instead of a wait without end. Renaming a regular file over a device
//!   node would destroy it (as root, `--json /dev/null` would replace `/dev/null`);
//! - **a dangling symbolic link** is refused: creating a file wherever a link points
//!   is what a symlink attack on a root process relies on. A directory is refused.
//!
//! This is for outputs the user names for one run (`--json FILE`, `-o FILE`). Files
//! rtbench keeps and writes again and again (the monitor's state and store, the
//! results store, the tuning journal) never follow a link and are regular files only:
//! [`super::kept`].
//!
//! The kernel follows symbolic links here (`stat(2)`, `open(2)`), so
//! `fs.protected_symlinks` still applies; each step re-checks that the file it acts on
//! is the one it examined (device and inode), so a swap in between is an error, not a
//! write to another file.
//!
//! Source: rename(2) (atomic replacement within a file system), fsync(2), open(2)
//! (O_NOCTTY, O_NOFOLLOW), path_resolution(7), proc(5) `fs.protected_symlinks`.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Mode of every file rtbench writes: `rw-r--r--`.
pub const FILE_MODE: u32 = 0o644;

/// Longest file name when the file system does not say (`NAME_MAX` on Linux).
pub const DEFAULT_NAME_MAX: usize = 255;

/// What a path names, as far as writing to it is concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Destination {
    /// Nothing yet: the file is created (atomically) at this path.
    New(PathBuf),
    /// A regular file, replaced atomically; the path is the file itself (a symbolic
    /// link's target, never the link).
    Regular(PathBuf),
    /// A device, FIFO or socket, written into as a plain open would; `kind` names it
    /// for messages (`character device`, `FIFO`, …).
    Special {
        /// The path as given (a link to the node is fine: open follows it).
        path: PathBuf,
        /// What the node is.
        kind: &'static str,
    },
}

/// The name of a file type for messages: `FIFO`, `character device`, ….
pub fn kind_name(t: fs::FileType) -> &'static str {
    if t.is_file() {
        "regular file"
    } else if t.is_dir() {
        "directory"
    } else if t.is_symlink() {
        "symbolic link"
    } else if t.is_fifo() {
        "FIFO"
    } else if t.is_char_device() {
        "character device"
    } else if t.is_block_device() {
        "block device"
    } else if t.is_socket() {
        "socket"
    } else {
        "special file"
    }
}

/// The directory a file `path` lives in (`.` for a bare name).
pub fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// The longest file name the file system of `dir` takes (`pathconf(_PC_NAME_MAX)`),
/// [`DEFAULT_NAME_MAX`] when it does not say.
pub fn name_max(dir: &Path) -> usize {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return DEFAULT_NAME_MAX;
    };
    // SAFETY: `c` is a valid NUL-terminated string; pathconf only reads it.
    let n = unsafe { libc::pathconf(c.as_ptr(), libc::_PC_NAME_MAX) };
    usize::try_from(n)
        .ok()
        .filter(|&n| n > 0)
        .unwrap_or(DEFAULT_NAME_MAX)
}

/// Why `path` cannot name a file on Linux whatever the file system (`None` when it can):
/// it is empty, holds a NUL byte (every path the kernel takes is a C string,
/// path_resolution(7)), has a component longer than [`DEFAULT_NAME_MAX`] bytes, or is
/// `PATH_MAX` (4096) bytes or longer with its terminating NUL. The reason is one short
/// line that never quotes the path (callers name the key or option and its value).
pub fn unnameable(path: &Path) -> Option<String> {
    use std::os::unix::ffi::OsStrExt;
    let bytes = path.as_os_str().as_bytes();
    if bytes.is_empty() {
        return Some("is empty, which names no file".into());
    }
    if let Some(at) = bytes.iter().position(|&b| b == 0) {
        return Some(format!(
            "holds a NUL byte (at byte {at}), which no file name can"
        ));
    }
    if bytes.len() >= libc::PATH_MAX as usize {
        return Some(format!(
            "is {} bytes; Linux takes paths of at most {} bytes",
            bytes.len(),
            libc::PATH_MAX - 1
        ));
    }
    let longest = bytes.split(|&b| b == b'/').map(<[u8]>::len).max();
    match longest {
        Some(n) if n > DEFAULT_NAME_MAX => Some(format!(
            "has a component of {n} bytes; file names are at most {DEFAULT_NAME_MAX} bytes"
        )),
        _ => None,
    }
}

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}

/// Finds out what `path` names (see the module documentation). Errors: a directory, a
/// path ending in `/`, a dangling symbolic link, a link loop, or the `stat` error.
pub fn destination(path: &Path) -> io::Result<Destination> {
    use std::os::unix::ffi::OsStrExt;
    if path.as_os_str().as_bytes().ends_with(b"/") || path.file_name().is_none() {
        return Err(invalid("expected a file name, not a directory".into()));
    }
    let link = match fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Ok(Destination::New(path.to_path_buf()))
        }
        Err(e) => return Err(e),
        Ok(m) => m.file_type().is_symlink(),
    };
    // stat(2) follows links as open(2) would (protected_symlinks included).
    let meta = match fs::metadata(path) {
        Err(e) if link && e.kind() == io::ErrorKind::NotFound => {
            let to = fs::read_link(path).map_or_else(|_| "?".into(), |t| t.display().to_string());
            return Err(invalid(format!(
                "is a symbolic link to {to}, which does not exist; expected a file or a \
                 link to an existing one"
            )));
        }
        Err(e) => return Err(e),
        Ok(m) => m,
    };
    let t = meta.file_type();
    if t.is_dir() {
        return Err(invalid("is a directory; expected a file name".into()));
    }
    if !t.is_file() {
        return Ok(Destination::Special {
            path: path.to_path_buf(),
            kind: kind_name(t),
        });
    }
    if !link {
        return Ok(Destination::Regular(path.to_path_buf()));
    }
    let real = fs::canonicalize(path)?;
    let m = fs::metadata(&real)?;
    if (m.dev(), m.ino()) != (meta.dev(), meta.ino()) {
        return Err(invalid("changed while it was being examined".into()));
    }
    Ok(Destination::Regular(real))
}

/// The temporary file [`write()`] uses for `target`: `.NAME.tmp.PID` in the same
/// directory (the results store recognises stale ones by that shape), or
/// `.rtbench.tmp.PID` when that would be longer than the file system allows.
pub fn temp_path(target: &Path) -> PathBuf {
    let dir = parent_dir(target);
    let pid = std::process::id();
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let long = format!(".{name}.tmp.{pid}");
    if long.len() <= name_max(&dir) {
        dir.join(long)
    } else {
        dir.join(format!(".rtbench.tmp.{pid}"))
    }
}

/// Writes `bytes` to `path` (see the module documentation). On error a regular target
/// is untouched and the temporary file is removed; a device or FIFO may have taken
/// part of the bytes, as with any write to one.
pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    match destination(path)? {
        Destination::New(p) | Destination::Regular(p) => replace(&p, bytes),
        Destination::Special { path, .. } => write_into(&path, bytes),
    }
}

/// Writes into an existing device, FIFO or socket: `open(O_WRONLY | O_NOCTTY |
/// O_NONBLOCK)` without creating or truncating, then checks that what was opened is
/// still not a regular file (a swap after [`destination`] looked). A FIFO nobody reads
/// is an error at once (`ENXIO`, fifo(7)), never waited on — at boot there may never be
/// a reader; once open, the descriptor is made blocking again, so a reader that is
/// there gets every byte however slowly it reads.
fn write_into(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOCTTY | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| {
            if e.raw_os_error() == Some(libc::ENXIO) {
                invalid(
                    "is a FIFO that nobody reads; not written (rtbench does not wait for a reader)"
                        .into(),
                )
            } else {
                e
            }
        })?;
    if f.metadata()?.file_type().is_file() {
        return Err(invalid(
            "became a regular file while it was being opened; not written".into(),
        ));
    }
    set_blocking(&f)?;
    f.write_all(bytes)?;
    f.flush()
}

/// Clears `O_NONBLOCK` on `f` (fcntl(2) `F_GETFL`/`F_SETFL`).
fn set_blocking(f: &File) -> io::Result<()> {
    use std::os::unix::io::AsRawFd;
    let fd = f.as_raw_fd();
    // SAFETY: fcntl on a descriptor this function borrows; no memory is passed.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above.
    if unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Atomic replacement of the regular file (or new file) `path` (also for the files
/// rtbench keeps, [`super::kept::replace`]).
pub(super) fn replace(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = parent_dir(path);
    let tmp = temp_path(path);
    let result = (|| {
        let create = || {
            OpenOptions::new()
                .write(true)
                .create_new(true)
                .custom_flags(libc::O_NOFOLLOW | libc::O_NOCTTY)
                .open(&tmp)
        };
        let mut f = match create() {
            // The temporary name carries this process's PID, so a file already there
            // is stale: left by a process of an earlier boot that had the same PID
            // (boards boot the same way every time) and was killed between create
            // and rename. Removed (unlink(2) never follows a link) and made afresh.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                fs::remove_file(&tmp)?;
                create()?
            }
            r => r?,
        };
        f.set_permissions(fs::Permissions::from_mode(FILE_MODE))?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        // rename(2) replaces the name itself: a link or node put there after
        // `destination` looked is replaced, never written through.
        if let Ok(m) = fs::symlink_metadata(path) {
            if !m.file_type().is_file() {
                return Err(invalid(format!(
                    "became a {} while it was being written; not replaced",
                    kind_name(m.file_type())
                )));
            }
        }
        fs::rename(&tmp, path)?;
        File::open(&dir)?.sync_all()
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStrExt;

    fn dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("rtbench-atomic-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn replaces_whole_file_and_leaves_no_temp() {
        let dir = dir("plain");
        let p = dir.join("r.json");
        write(&p, b"old contents that are longer").unwrap();
        write(&p, b"new").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"new");
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1);
        assert!(write(&dir.join("missing/x"), b"x").is_err());
        // The mode is fixed (tests/cli/output_contract.rs checks it under umask 077).
        let mode = fs::metadata(&p).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, FILE_MODE, "{mode:o}");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn devices_are_written_into_and_links_kept() {
        let d = dir("special");
        let node = d.join("null");
        let c = std::ffi::CString::new(node.as_os_str().as_bytes()).unwrap();
        // SAFETY: valid C string.
        let rc = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 3)) };
        if rc != 0 {
            eprintln!("mknod not permitted here: skipping the device part");
        } else {
            assert_eq!(
                destination(&node).unwrap(),
                Destination::Special {
                    path: node.clone(),
                    kind: "character device"
                }
            );
            write(&node, b"into the device").unwrap();
            assert!(fs::symlink_metadata(&node)
                .unwrap()
                .file_type()
                .is_char_device());
        }
        // A link to a regular file: the file is replaced, the link stays.
        fs::write(d.join("real"), b"old").unwrap();
        std::os::unix::fs::symlink("real", d.join("link")).unwrap();
        write(&d.join("link"), b"new").unwrap();
        assert!(fs::symlink_metadata(d.join("link"))
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read(d.join("real")).unwrap(), b"new");
        // Dangling links, directories and trailing slashes are refused.
        std::os::unix::fs::symlink("nowhere", d.join("dangling")).unwrap();
        let e = write(&d.join("dangling"), b"x").unwrap_err();
        assert!(e.to_string().contains("does not exist"), "{e}");
        assert!(!d.join("nowhere").exists());
        assert!(write(&d, b"x").is_err());
        let slash = PathBuf::from(format!("{}/sub/", d.display()));
        assert!(destination(&slash)
            .unwrap_err()
            .to_string()
            .contains("file name"));
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn long_names_get_a_short_temporary_name() {
        let d = dir("long");
        let name = "n".repeat(250);
        let p = d.join(&name);
        let t = temp_path(&p);
        assert!(t.file_name().unwrap().len() <= 255, "{}", t.display());
        write(&p, b"x").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"x");
        assert_eq!(fs::read_dir(&d).unwrap().count(), 1);
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_fifo_is_written_while_read_and_refused_at_once_without_a_reader() {
        let d = dir("fifo");
        let p = d.join("fifo");
        let c = std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap();
        // SAFETY: a path this test owns.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        let e = write(&p, b"x").unwrap_err();
        assert!(e.to_string().contains("nobody reads"), "{e}");
        let mut reader = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&p)
            .unwrap();
        write(&p, b"whole").unwrap();
        let mut got = String::new();
        std::io::Read::read_to_string(&mut reader, &mut got).unwrap();
        assert_eq!(got, "whole");
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_stale_temporary_file_of_this_pid_is_replaced() {
        let d = dir("stale");
        let p = d.join("state.json");
        fs::write(temp_path(&p), b"left by an earlier boot").unwrap();
        write(&p, b"new").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"new");
        assert_eq!(fs::read_dir(&d).unwrap().count(), 1);
        fs::remove_dir_all(&d).unwrap();
    }
}
