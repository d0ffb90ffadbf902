//! The bodies of the built-in load workers (`rtbench load-worker cpu|vm BYTES|io`).
//! Each runs until it is killed; the parent ([`super::RunningLoad`]) does that.

use crate::error::{exit, Error, Result};
use crate::sys::{refusal, SysRoot};
use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// One `rtbench load-worker` process, as [`super::RunningLoad`] starts it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Job {
    /// [`cpu`].
    Cpu,
    /// [`vm`] of `bytes` per round.
    Vm {
        /// Bytes mapped per round.
        bytes: u64,
    },
    /// [`io()`] in `dir`.
    Io {
        /// Where the unnamed temporary file is.
        dir: PathBuf,
    },
    /// The `--load-cmd` guard ([`super::guard::run`]).
    Guard {
        /// The program, resolved.
        prog: PathBuf,
        /// Its argv\[0\] as written.
        argv0: String,
        /// Its arguments.
        args: Vec<String>,
    },
}

/// Runs `job`; a worker runs until it is killed, the guard until its command ends
/// (its exit code, or 128+signal). Errors: [`Error::Refused`] with what refused (a
/// mapping of `vm`, the fork of the guard's command, by
/// [`refusal::memory`]), [`Error::Io`] for the `io` worker's file.
pub fn run(job: &Job) -> Result<i32> {
    match job {
        Job::Cpu => cpu(),
        Job::Vm { bytes } => vm(*bytes).map_err(|e| {
            let cause = e
                .raw_os_error()
                .and_then(|n| refusal::memory::mapping(&SysRoot::host(), n, *bytes));
            let size = refusal::bytes(*bytes);
            Error::refused(format!("vm load worker: mmap of {size}"), e, cause)
        })?,
        Job::Io { dir } => io(dir).map_err(|e| Error::io(dir, e))?,
        Job::Guard { prog, argv0, args } => {
            return super::guard::run(prog, argv0, args).map_err(|e| {
                let cause = e
                    .raw_os_error()
                    .and_then(|n| refusal::memory::new_task(&SysRoot::host(), n, 0));
                let mut argv = vec![argv0.clone()];
                argv.extend(args.iter().cloned());
                Error::refused(
                    format!("starting --load-cmd '{}'", argv.join(" ")),
                    e,
                    cause,
                )
            })
        }
    }
    Ok(exit::OK)
}

/// Spins forever on integer arithmetic (one CPU at 100 %).
pub fn cpu() -> ! {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    loop {
        for _ in 0..1_000_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
        std::hint::black_box(x);
    }
}

/// Maps `bytes` of anonymous memory, writes one byte per page, unmaps it; forever.
/// Fails at once (so the parent reports it) when the first mapping is refused.
pub fn vm(bytes: u64) -> io::Result<()> {
    // The parent passes a size parse_size accepted (at most isize::MAX); a larger one
    // is refused rather than truncated to a different length.
    let len = usize::try_from(bytes)
        .ok()
        .filter(|&l| l <= isize::MAX as usize)
        .ok_or_else(|| io::Error::from_raw_os_error(libc::EOVERFLOW))?;
    let mut first = true;
    loop {
        // SAFETY: anonymous private mapping; the pointer is checked and only used
        // within [p, p+len) before munmap.
        unsafe {
            let p = libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            if p == libc::MAP_FAILED {
                let e = io::Error::last_os_error();
                if first {
                    return Err(e);
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
                continue;
            }
            let base = p as *mut u8;
            let mut off = 0;
            while off < len {
                std::ptr::write_volatile(base.add(off), 0x5a);
                off += 4096;
            }
            libc::munmap(p, len);
        }
        first = false;
    }
}

/// Opens a temporary file in `dir` that has no name: `O_TMPFILE` where the file
/// system supports it, else a fresh name that is unlinked right after `open`, so no
/// file is left behind even when the worker is SIGKILLed.
pub fn open_unnamed(dir: &Path) -> io::Result<File> {
    let tmp = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_TMPFILE)
        .open(dir);
    match tmp {
        Ok(f) => Ok(f),
        Err(e)
            if matches!(
                e.raw_os_error(),
                Some(libc::EOPNOTSUPP) | Some(libc::EISDIR) | Some(libc::EINVAL)
            ) =>
        {
            let name = dir.join(format!(".rtbench-io-{}", std::process::id()));
            let f = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&name)?;
            std::fs::remove_file(&name)?;
            Ok(f)
        }
        Err(e) => Err(e),
    }
}

/// Writes 1 MiB blocks to an unnamed file in `dir`, `fsync` after each, and starts
/// over after 64 MiB; forever. Fails at once when the file cannot be created or
/// written.
pub fn io(dir: &Path) -> io::Result<()> {
    use std::io::Seek;
    let mut f = open_unnamed(dir)?;
    let block = vec![0xa5u8; 1 << 20];
    loop {
        for _ in 0..64 {
            f.write_all(&block)?;
            f.sync_data()?;
        }
        f.rewind()?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unnamed_file_leaves_directory_empty() {
        let dir = std::env::temp_dir().join(format!("rtbench-io-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut f = open_unnamed(&dir).unwrap();
        f.write_all(b"data").unwrap();
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        drop(f);
        std::fs::remove_dir(&dir).unwrap();
        assert!(open_unnamed(Path::new("/nonexistent-rtbench")).is_err());
    }
}
