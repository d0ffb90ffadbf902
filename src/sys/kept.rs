//! Files rtbench keeps: the monitor's state file (`state.json`), window store
//! (`windows.jsonl`, `windows.1.jsonl`) and Prometheus textfile, the results store's
//! `run-*.json`, the self-test's fallback copy and the tuning journal in
//! `/run/rtbench`. They are written again and again, for weeks, by a root process, in
//! directories others may write to. Unlike a one-shot output the user names
//! ([`super::atomic::write`]: `--json /dev/null` writes into the device, a link is
//! written through), a kept file:
//!
//! - **never follows a link**: the last component is opened with `O_NOFOLLOW` (a
//!   link there is refused, never written through, appended to or replaced); the
//!   directories above may be links (`/var/lib/rtbench` on another partition);
//! - **never blocks**: opened with `O_NONBLOCK` and checked with `fstat` on the
//!   opened descriptor, so a FIFO or device named like the file is an error at once,
//!   never waited on, written into or read without end;
//! - **is a regular file or nothing**: [`check`] says at start, in one line, what is
//!   wrong with the path, so that a command refuses before it starts (exit 2), and
//!   every write says the same when the file was replaced later.
//!
//! Source: open(2) (`O_NOFOLLOW`: `ELOOP` when the last component is a link;
//! `O_NONBLOCK` on FIFOs), fstat(2), rename(2), symlink(7).

use super::atomic::{self, kind_name};
use super::input::InputError;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

fn refused(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}

/// What is wrong with `path` as a file rtbench keeps, in words that follow the path
/// (`is a symbolic link to X; …`), or `None` when it is a regular file or does not
/// exist. Paths that cannot be examined (permissions) are left to the write.
pub fn why_not(path: &Path) -> Option<String> {
    let m = fs::symlink_metadata(path).ok()?;
    let t = m.file_type();
    if t.is_symlink() {
        let to = fs::read_link(path).map_or_else(|_| "?".into(), |t| t.display().to_string());
        return Some(format!(
            "is a symbolic link (to {to}); rtbench does not follow links for the files it \
             keeps: expected a regular file"
        ));
    }
    (!t.is_file()).then(|| format!("is a {}; expected a regular file", kind_name(t)))
}

/// [`why_not`] as an error (kind `InvalidInput`): `Ok` for a regular file or no file.
pub fn check(path: &Path) -> io::Result<()> {
    why_not(path).map_or(Ok(()), |why| Err(refused(why)))
}

/// What is wrong with `dir` as the directory of kept files, or `None` when it is a
/// directory (or a link to one) or does not exist yet: a dangling symbolic link or a
/// link loop is named here, since creating the directory would fail at every write.
pub fn why_not_dir(dir: &Path) -> Option<String> {
    let link = fs::symlink_metadata(dir).ok()?;
    match fs::metadata(dir) {
        Ok(m) if m.is_dir() => None,
        Ok(m) => Some(format!(
            "is a {}; expected a directory",
            kind_name(m.file_type())
        )),
        Err(e) if link.file_type().is_symlink() => {
            let to = fs::read_link(dir).map_or_else(|_| "?".into(), |t| t.display().to_string());
            let what = if e.raw_os_error() == Some(libc::ELOOP) {
                "a loop of links"
            } else {
                "which does not exist"
            };
            Some(format!(
                "is a symbolic link to {to}, {what}; expected a directory"
            ))
        }
        Err(e) => Some(e.to_string()),
    }
}

/// Opens `path` with `opts` (plus `O_NOFOLLOW | O_NONBLOCK | O_NOCTTY`) and checks
/// that it is a regular file; anything else is said as [`why_not`] says it.
fn open(path: &Path, opts: &mut OpenOptions) -> io::Result<File> {
    super::input::open_regular(path, opts, super::input::Links::Refuse).map_err(|e| match e {
        Ok(kind) => refused(format!("is a {kind}; expected a regular file")),
        // ELOOP (a link, O_NOFOLLOW), ENXIO (a FIFO without a reader, O_NONBLOCK), a
        // device that refuses: said as what the path is.
        Err(e) => why_not(path).map_or(e, refused),
    })
}

/// Reads the kept file `path`, at most `max` bytes: a link, FIFO, device or
/// directory is [`InputError::NotRegular`] (a link as `symbolic link`) without
/// waiting or reading; larger is [`InputError::TooLarge`].
pub fn read(path: &Path, max: u64) -> Result<Vec<u8>, InputError> {
    let f = match open(path, OpenOptions::new().read(true)) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::InvalidInput => {
            let kind =
                fs::symlink_metadata(path).map_or("special file", |m| kind_name(m.file_type()));
            return Err(InputError::NotRegular { kind });
        }
        Err(e) => return Err(e.into()),
    };
    super::input::read_opened_regular(f, max)
}

/// [`read`] as UTF-8 text.
pub fn read_text(path: &Path, max: u64) -> Result<String, InputError> {
    super::input::utf8(read(path, max)?)
}

/// Replaces the kept file `path` with `bytes` atomically (as [`atomic::write`] does
/// for a regular file: temporary file, mode 0644, fsync, rename, directory fsync).
/// Errors: `path` is a link or not a regular file ([`why_not`]; nothing written), or
/// the write's error.
pub fn replace(path: &Path, bytes: &[u8]) -> io::Result<()> {
    if path.file_name().is_none() {
        return Err(refused("expected a file name, not a directory".into()));
    }
    check(path)?;
    atomic::replace(path, bytes)
}

/// Appends `bytes` to the kept file `path` with one `write(2)` and fsyncs it,
/// creating it with mode [`atomic::FILE_MODE`] if needed: for append-only logs (the
/// monitor's window store), where rewriting the whole file for every record would
/// wear out flash. Not atomic: a crash can leave the last record cut short, so readers
/// skip a last line without its newline. A link, FIFO or device named like the log is
/// an error ([`why_not`]), never followed, waited on, chmod-ed or written.
pub fn append(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = open(path, OpenOptions::new().append(true).create(true))?;
    f.set_permissions(fs::Permissions::from_mode(atomic::FILE_MODE))?;
    f.write_all(bytes)?;
    f.sync_data()
}

/// Removes the temporary files a writer killed between create and rename left in
/// `dir` ([`atomic::temp_path`]: `.NAME.tmp.PID`, or `.rtbench.tmp.PID`), for the
/// file names `names` exactly (`run-` alone stands for every stored run,
/// `.run-….json.tmp.PID`), whose process no longer exists; returns how many were
/// removed. A killed writer of an earlier boot leaves one each time, so a directory
/// rtbench keeps for years would otherwise fill up. Only regular files whose PID is
/// written as the writer writes it (decimal, no sign, no leading zero) are removed:
/// in a directory shared with other programs (node_exporter's textfile directory)
/// nothing else is touched. A PID is judged in this PID namespace: a live writer of
/// the same file in another namespace would look gone.
pub fn remove_stale_temps(dir: &Path, names: &[&str]) -> usize {
    let Ok(entries) = fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else {
            continue;
        };
        let Some((stem, pid_text)) = name.strip_prefix('.').and_then(|n| n.rsplit_once(".tmp."))
        else {
            continue;
        };
        let ours = stem == "rtbench"
            || names.iter().any(|n| {
                stem == *n || (*n == "run-" && stem.starts_with(n) && stem.ends_with(".json"))
            });
        let Ok(pid) = pid_text.parse::<i32>() else {
            continue;
        };
        let canonical = pid > 0 && pid.to_string() == pid_text;
        let regular = e.file_type().is_ok_and(|t| t.is_file());
        if ours
            && canonical
            && regular
            && !super::signals::pid_alive(pid)
            && fs::remove_file(e.path()).is_ok()
        {
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::symlink;

    #[test]
    fn links_fifos_and_devices_are_refused_never_followed_or_waited_on() {
        let d = std::env::temp_dir().join(format!("rtbench-kept-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        fs::write(d.join("real"), b"old\n").unwrap();
        symlink("real", d.join("link")).unwrap();
        symlink("nowhere", d.join("dangling")).unwrap();
        symlink("loop", d.join("loop")).unwrap();
        symlink("/dev/zero", d.join("zero")).unwrap();
        let fifo = d.join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
        // SAFETY: a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        for name in ["link", "dangling", "loop", "zero", "fifo"] {
            let p = d.join(name);
            let why = why_not(&p).unwrap();
            assert!(!why.contains('\n'), "{why}");
            assert_eq!(append(&p, b"x\n").unwrap_err().to_string(), why, "{name}");
            assert_eq!(replace(&p, b"x\n").unwrap_err().to_string(), why, "{name}");
            assert!(
                matches!(read(&p, 10), Err(InputError::NotRegular { .. })),
                "{name}"
            );
        }
        // Nothing was written through the link or created where the others point.
        assert_eq!(fs::read(d.join("real")).unwrap(), b"old\n");
        assert!(!d.join("nowhere").exists());
        assert!(why_not(&d.join("real")).is_none() && why_not(&d.join("new")).is_none());
        append(&d.join("new"), b"a\n").unwrap();
        append(&d.join("new"), b"b\n").unwrap();
        replace(&d.join("real"), b"new\n").unwrap();
        assert_eq!(read(&d.join("new"), 10).unwrap(), b"a\nb\n");
        assert_eq!(read(&d.join("real"), 10).unwrap(), b"new\n");
        assert!(matches!(
            read(&d.join("new"), 3),
            Err(InputError::TooLarge { .. })
        ));
        // Directories: a link to one is fine, a dangling one or a loop is named.
        symlink(".", d.join("here")).unwrap();
        assert_eq!(why_not_dir(&d.join("here")), None);
        assert_eq!(why_not_dir(&d.join("absent")), None);
        assert!(why_not_dir(&d.join("dangling"))
            .unwrap()
            .contains("does not exist"));
        assert!(why_not_dir(&d.join("loop")).unwrap().contains("loop"));
        assert!(why_not_dir(&d.join("real"))
            .unwrap()
            .contains("regular file"));
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn stale_temporary_files_of_gone_processes_are_removed() {
        let d = std::env::temp_dir().join(format!("rtbench-kept-stale-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        // A PID above pid_max (2^22) exists nowhere.
        let gone = 4_194_305;
        let me = std::process::id();
        for n in [
            format!(".state.json.tmp.{gone}"),
            format!(".rtbench.tmp.{gone}"),
            format!(".state.json.tmp.{me}"),
            format!(".other.json.tmp.{gone}"),
            format!(".state.json.bak.tmp.{gone}"),
            format!(".state.json.tmp.0{gone}"),
            format!(".state.json.tmp.+{gone}"),
            "state.json".to_string(),
        ] {
            fs::write(d.join(n), b"x").unwrap();
        }
        std::os::unix::fs::symlink(
            "state.json",
            d.join(format!(".state.json.tmp.{}", gone + 1)),
        )
        .unwrap();
        assert_eq!(remove_stale_temps(&d, &["state.json"]), 2);
        let mut left: Vec<String> = fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        let mut want = vec![
            format!(".other.json.tmp.{gone}"),
            format!(".state.json.tmp.{me}"),
            format!(".state.json.bak.tmp.{gone}"),
            format!(".state.json.tmp.0{gone}"),
            format!(".state.json.tmp.+{gone}"),
            format!(".state.json.tmp.{}", gone + 1),
            "state.json".to_string(),
        ];
        want.sort();
        assert_eq!(left, want);
        fs::remove_dir_all(&d).unwrap();
    }
}
