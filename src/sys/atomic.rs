//! Atomic file replacement, the one place rtbench writes a file: write a temporary
//! file in the same directory, give it mode [`FILE_MODE`] (with `fchmod`, so the umask
//! does not matter: collectors such as node_exporter read the files as another user),
//! fsync it, rename it over the target, fsync the directory. A reader (or a crash)
//! sees the old file or the new one, never a truncated one.
//!
//! Source: rename(2) (atomic replacement within a file system), fsync(2).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Mode of every file rtbench writes: `rw-r--r--`.
pub const FILE_MODE: u32 = 0o644;

/// Writes `bytes` to `path` atomically (see module docs). On error the target is
/// untouched and the temporary file is removed.
pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no file name"))?;
    let tmp = dir.join(format!(
        ".{}.tmp.{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| {
        let mut f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)?;
        f.set_permissions(fs::Permissions::from_mode(FILE_MODE))?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        fs::rename(&tmp, path)?;
        File::open(&dir)?.sync_all()
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Appends `bytes` to `path` with one `write(2)` and fsyncs it, creating the file with
/// mode [`FILE_MODE`] if needed: for append-only logs (the monitor's window store),
/// where rewriting the whole file for every record would wear out flash. Not atomic:
/// a crash can leave the last record cut short, so readers skip a last line without
/// its newline.
pub fn append(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = OpenOptions::new().append(true).create(true).open(path)?;
    f.set_permissions(fs::Permissions::from_mode(FILE_MODE))?;
    f.write_all(bytes)?;
    f.sync_data()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_whole_file_and_leaves_no_temp() {
        let dir = std::env::temp_dir().join(format!("rtbench-atomic-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let p = dir.join("r.json");
        write(&p, b"old contents that are longer").unwrap();
        write(&p, b"new").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"new");
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1);
        assert!(write(&dir.join("missing/x"), b"x").is_err());
        // The mode is fixed (tests/output_contract.rs checks it under umask 077).
        let mode = fs::metadata(&p).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, FILE_MODE, "{mode:o}");
        fs::remove_dir_all(&dir).unwrap();
    }
}
