//! The one output mechanism every command writes through, so the output contracts
//! hold by construction:
//!
//! - **A document on standard output is alone there.** When a command writes a
//!   machine-readable document to standard output (`--json -`, `sysinfo --json`,
//!   `plot -o -`), every human line — results, live progress, setup notices — goes to
//!   standard error instead.
//! - **Files are whole or absent.** A file is written atomically (temporary file,
//!   fsync, rename, directory fsync) with mode [`FILE_MODE`] whatever the umask, by
//!   [`crate::sys::atomic::write`] — the only file writer.
//! - **Diagnostics go to standard error**: warnings, remarks, `SIGUSR1` status.
//! - **One output that fails loses no other.** A command with several outputs writes
//!   its files first and each of them whatever happened to the one before, then its
//!   standard output, and reports every one that failed at the end, one line each
//!   ([`Written`], [`Error::Outputs`]; exit 3). A standard output whose reader went away
//!   (EPIPE, with SIGPIPE ignored: [`crate::sys::signals::ignore_sigpipe`]) is said by
//!   the exit code alone, 141, as a shell shows a process SIGPIPE killed. A full disk
//!   under standard output (`> /dev/full`) shows only when written to, so it cannot be
//!   checked before measuring: it is found, and reported, at the end.
//!
//! The journal is the self-test's other destination: [`super::journal::Journal`].

use super::Sink;
use crate::error::{exit, Error, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

pub use crate::sys::atomic::FILE_MODE;

/// Where one document goes: standard output (`-` on the command line) or a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// Standard output.
    Stdout,
    /// A file, replaced atomically.
    File(PathBuf),
}

impl Target {
    /// `-` is standard output, anything else a file.
    pub fn from_path(p: &Path) -> Target {
        if p == Path::new("-") {
            Target::Stdout
        } else {
            Target::File(p.to_path_buf())
        }
    }
}

/// A command's outputs (see the module documentation for the rules).
#[derive(Debug, Clone, Copy)]
pub struct Output {
    /// Standard output carries a document: human text goes to standard error.
    stdout_is_document: bool,
}

/// Whether `e` is a write whose reader went away (EPIPE; SIGPIPE ignored), to standard
/// output or standard error.
pub fn reader_gone(e: &Error) -> bool {
    matches!(e, Error::Io { source, .. } if source.kind() == std::io::ErrorKind::BrokenPipe)
}

fn stdout_error(e: std::io::Error) -> Error {
    Error::io(STDOUT, e)
}

impl Output {
    /// Outputs of a command whose document (if any) goes to `document`.
    pub fn new(document: Option<&Target>) -> Output {
        Output {
            stdout_is_document: document == Some(&Target::Stdout),
        }
    }

    /// Outputs of a command with a `--json`/`-o` path (`-` = standard output).
    pub fn for_path(document: Option<&Path>) -> Output {
        Output::new(document.map(Target::from_path).as_ref())
    }

    /// Whether human text goes to standard error because standard output carries a
    /// document.
    pub fn text_to_stderr(&self) -> bool {
        self.stdout_is_document
    }

    /// Human text (results, tables, live progress, notices): standard output, or
    /// standard error when that carries a document. Flushed at once.
    pub fn text<T: ?Sized>(&self, sink: &dyn Sink<T>, value: &T) -> Result<()> {
        if self.stdout_is_document {
            return self.to_stderr(sink, value);
        }
        let mut buf = Vec::new();
        sink.write(value, &mut buf).map_err(stdout_error)?;
        let mut out = std::io::stdout().lock();
        out.write_all(&buf).map_err(stdout_error)?;
        out.flush().map_err(stdout_error)
    }

    /// One line of human text (see [`Output::text`]).
    pub fn line(&self, line: &str) {
        let _ = self.text(&Line, line);
    }

    /// A document for standard output written as `sink` makes it, through a buffer,
    /// instead of made whole first as [`Output::document`] does: for a document that
    /// grows with its input (`report --since --json`, every window of the period). A
    /// failure part way leaves the document cut short (the command then fails).
    pub fn stream<T: ?Sized>(&self, sink: &dyn Sink<T>, value: &T) -> Result<()> {
        let mut out = std::io::BufWriter::with_capacity(64 << 10, std::io::stdout().lock());
        sink.write(value, &mut out).map_err(stdout_error)?;
        out.flush().map_err(stdout_error)
    }

    /// Text for standard error whatever else happens (a summary that must not disturb
    /// a byte-compatible standard output, a `SIGUSR1` status).
    pub fn to_stderr<T: ?Sized>(&self, sink: &dyn Sink<T>, value: &T) -> Result<()> {
        let mut buf = Vec::new();
        sink.write(value, &mut buf)
            .map_err(|e| Error::io("<stderr>", e))?;
        std::io::stderr()
            .write_all(&buf)
            .map_err(|e| Error::io("<stderr>", e))
    }

    /// A warning or remark, one line on standard error: line breaks and control
    /// characters in it (a file name, an echoed value) are escaped
    /// ([`crate::error::one_line`]).
    pub fn warn(&self, line: &str) {
        let _ = self.to_stderr(&Line, &crate::error::one_line(line));
    }

    /// A document to `target`: standard output, or a file written atomically.
    pub fn document<T: ?Sized>(
        &self,
        target: &Target,
        sink: &dyn Sink<T>,
        value: &T,
    ) -> Result<()> {
        match target {
            Target::Stdout => {
                let mut buf = Vec::new();
                sink.write(value, &mut buf).map_err(stdout_error)?;
                let mut out = std::io::stdout().lock();
                out.write_all(&buf).map_err(stdout_error)?;
                out.flush().map_err(stdout_error)
            }
            Target::File(p) => file(p, sink, value),
        }
    }
}

/// The outputs of one command written so far: each is written whatever happened to
/// the others, the failures kept for [`Written::finish`]. Standard output is not
/// written again once a write to it failed (the rest of a document would be garbage).
#[derive(Debug, Default)]
pub struct Written {
    failed: Vec<Error>,
    stdout_failed: bool,
}

/// Whether `e` is a write to standard output.
fn is_stdout(e: &Error) -> bool {
    matches!(e, Error::Io { path, .. } if path.as_os_str() == STDOUT)
}

impl Written {
    /// Nothing written yet.
    pub fn new() -> Written {
        Written::default()
    }

    /// Keeps `r`, the result of writing one output (a file, standard error).
    pub fn keep(&mut self, r: Result<()>) {
        if let Err(e) = r {
            self.stdout_failed |= is_stdout(&e);
            self.failed.push(e);
        }
    }

    /// Writes one output that may go to standard output (`write`: an [`Output::text`]
    /// or [`Output::document`] call), unless standard output has failed already.
    pub fn stdout(&mut self, write: impl FnOnce() -> Result<()>) {
        if !self.stdout_failed {
            self.keep(write());
        }
    }

    /// The command's result once every output was attempted: `Ok(code)` when all were
    /// written; [`exit::STDOUT_CLOSED`] (141) when only standard output failed and
    /// because its reader went away; else [`Error::Outputs`], every failure (exit 3),
    /// which `app::main` prints one line each.
    pub fn finish(self, code: i32) -> Result<i32> {
        let closed = |e: &Error| is_stdout(e) && reader_gone(e);
        let (pipe, other): (Vec<Error>, Vec<Error>) = self.failed.into_iter().partition(closed);
        match (pipe.is_empty(), other.is_empty()) {
            (true, true) => Ok(code),
            (false, true) => Ok(exit::STDOUT_CLOSED),
            _ => Err(Error::Outputs(other)),
        }
    }
}

/// How errors name standard output.
const STDOUT: &str = "<stdout>";

/// Writes `value` in `sink`'s format to the file `path`, atomically, mode
/// [`FILE_MODE`]. Errors name the path.
pub fn file<T: ?Sized>(path: &Path, sink: &dyn Sink<T>, value: &T) -> Result<()> {
    write_file(path, sink, value).map_err(|e| Error::io(path, e))
}

/// [`file()`] with the plain I/O error, for callers that report it themselves.
pub fn write_file<T: ?Sized>(path: &Path, sink: &dyn Sink<T>, value: &T) -> std::io::Result<()> {
    let mut buf = Vec::new();
    sink.write(value, &mut buf)?;
    crate::sys::atomic::write(path, &buf)
}

/// [`write_file`] for a file rtbench keeps and rewrites (the monitor's Prometheus
/// textfile): replaced through [`crate::sys::kept::replace`], so a link, FIFO or
/// device at `path` is an error, never followed, waited on or written into.
pub fn keep_file<T: ?Sized>(path: &Path, sink: &dyn Sink<T>, value: &T) -> std::io::Result<()> {
    let mut buf = Vec::new();
    sink.write(value, &mut buf)?;
    crate::sys::kept::replace(path, &buf)
}

/// A line of text and a newline.
struct Line;

impl Sink<str> for Line {
    fn write(&self, line: &str, out: &mut dyn Write) -> std::io::Result<()> {
        writeln!(out, "{line}")
    }
}

/// Text as it is (already formatted).
pub struct Verbatim;

impl Sink<str> for Verbatim {
    fn write(&self, text: &str, out: &mut dyn Write) -> std::io::Result<()> {
        out.write_all(text.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::ErrorKind;

    fn stdout_err(kind: ErrorKind) -> Result<()> {
        Err(stdout_error(std::io::Error::from(kind)))
    }

    fn enospc() -> std::io::Error {
        std::io::Error::from_raw_os_error(libc::ENOSPC)
    }

    #[test]
    fn every_output_is_written_and_each_failure_kept() {
        let mut w = Written::new();
        w.keep(Err(Error::io("/x/r.json", enospc())));
        let mut later = 0;
        w.stdout(|| {
            later += 1;
            Err(stdout_error(enospc()))
        });
        // Standard output failed: not written again.
        w.stdout(|| {
            later += 1;
            Ok(())
        });
        w.keep(Ok(()));
        assert_eq!(later, 1);
        match w.finish(0) {
            Err(Error::Outputs(each)) => {
                let lines: Vec<String> = each.iter().map(|e| e.to_string()).collect();
                assert_eq!(lines.len(), 2, "{lines:?}");
                assert!(lines[0].starts_with("/x/r.json: "), "{lines:?}");
                assert!(lines[1].starts_with("<stdout>: "), "{lines:?}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_closed_standard_output_alone_is_141_and_nothing_else_is_lost() {
        let mut w = Written::new();
        w.stdout(|| stdout_err(ErrorKind::BrokenPipe));
        assert_eq!(w.finish(0).unwrap(), exit::STDOUT_CLOSED);
        let mut w = Written::new();
        w.stdout(|| stdout_err(ErrorKind::BrokenPipe));
        w.keep(Err(Error::io("/x/r.json", enospc())));
        assert!(matches!(w.finish(0), Err(Error::Outputs(e)) if e.len() == 1));
        assert_eq!(Written::new().finish(130).unwrap(), 130);
    }
}
