//! Error types and the exit-code contract shared by every subcommand.
//!
//! Exit codes (DESIGN.md §5): 0 success/pass, 1 limits exceeded or deviations found,
//! 2 usage or configuration error, 3 the environment refused (no SCHED_FIFO, no mlock,
//! not root), 130 interrupted by SIGINT after writing partial results.

use std::path::PathBuf;

/// Process exit codes used by every rtbench subcommand.
pub mod exit {
    /// Success, or the self-test passed.
    pub const OK: i32 = 0;
    /// A limit was exceeded (e.g. `-b` fired) or deviations were found.
    pub const FAIL: i32 = 1;
    /// Bad command line or configuration; nothing was started or written.
    pub const USAGE: i32 = 2;
    /// The environment refused something the run needs (SCHED_FIFO, mlockall, a device).
    pub const ENV: i32 = 3;
    /// Stopped by SIGINT after writing what was measured.
    pub const INTERRUPTED: i32 = 130;
}

/// Every error rtbench reports. Each variant renders as one line that names the
/// offending input and what was expected.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A command-line value or configuration key is invalid (exit 2).
    #[error("{input}: {message}")]
    Usage {
        /// The flag or key with the value given, e.g. `-a 3-1`.
        input: String,
        /// What was wrong and what was expected.
        message: String,
    },
    /// The kernel or the process limits refused something the run needs (exit 3).
    #[error("{what}: {source}{hint}")]
    Refused {
        /// What was attempted, e.g. `sched_setscheduler(SCHED_FIFO, 98) on thread 0`.
        what: String,
        /// The errno the kernel returned.
        source: std::io::Error,
        /// Extra advice starting with "; ", or empty.
        hint: String,
    },
    /// Reading or writing a file failed (exit 3 when it is a system file, else 2).
    #[error("{path}: {source}")]
    Io {
        /// The file that failed.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
}

impl Error {
    /// Builds a usage error for `input` (e.g. `"-p 100"`) with an explanation.
    pub fn usage(input: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Usage {
            input: input.into(),
            message: message.into(),
        }
    }

    /// Builds an environment error for an action the kernel refused with `source`.
    pub fn refused(what: impl Into<String>, source: std::io::Error) -> Self {
        let hint = match source.raw_os_error() {
            Some(libc::EPERM) | Some(libc::EACCES) => {
                "; run as root or grant CAP_SYS_NICE/CAP_IPC_LOCK (or raise RLIMIT_RTPRIO/RLIMIT_MEMLOCK)"
            }
            Some(libc::ENOMEM) => "; RLIMIT_MEMLOCK is too small for mlockall (ulimit -l unlimited)",
            _ => "",
        };
        Error::Refused {
            what: what.into(),
            source,
            hint: hint.to_string(),
        }
    }

    /// Builds an I/O error for `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    /// The process exit code this error maps to (see [`exit`]).
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Usage { .. } => exit::USAGE,
            Error::Refused { .. } | Error::Io { .. } => exit::ENV,
        }
    }
}

/// Result alias used throughout the crate.
pub type Result<T> = std::result::Result<T, Error>;
