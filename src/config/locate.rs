//! The one way every command finds and reads `rtbench.toml`: the file `--config FILE`
//! names (which must exist), else [`DEFAULT_PATH`], whose absence means the documented
//! defaults (an empty file) for every command that can run without one.
//!
//! The commands differ in two visible ways, kept as each has always said it (the
//! golden files `tests/golden/usage_errors.txt` and `selftest_config_errors.txt`) and
//! decided here only, by [`Reader`]:
//!
//! | reader | default file missing | "cannot read" message ends with |
//! |---|---|---|
//! | `selftest`, `report`, `diagnose`, `config check` | the defaults | the OS error |
//! | `monitor`, `tune revert`, `tune status` | the defaults | `; expected a TOML file (see --config)` |
//! | `tune check` | the generic real-time audit ([`AUDIT`]) | `; expected a TOML file (see --config)` |
//! | `tune apply` | an error (exit 2): applying needs a file | `; expected a TOML file (see --config)` |

use super::{parse, Config, DEFAULT_PATH};
use crate::error::{ConfigError, ConfigPlace};
use crate::sys::SysRoot;
use std::path::{Path, PathBuf};

/// The command that reads the configuration (see the module documentation for how
/// they differ).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reader {
    /// `rtbench selftest`: its errors become journal entries.
    Selftest,
    /// `rtbench monitor`.
    Monitor,
    /// `rtbench report`: `[output]` and `[monitor] dir`.
    Report,
    /// `rtbench diagnose`: the configuration also goes into the bundle.
    Diagnose,
    /// `rtbench config check`: the file as every other command would read it.
    ConfigCheck,
    /// `rtbench tune check`: without the default file it checks the generic real-time
    /// audit ([`AUDIT`]), as `tuned-adm verify` checks a profile.
    TuneCheck,
    /// `rtbench tune apply`: it changes the system only as a file says, so the default
    /// file must exist too.
    TuneApply,
    /// `rtbench tune revert` and `tune status`: they work from the journal; the
    /// configuration only names its directory.
    TuneJournal,
}

/// The generic real-time audit `rtbench tune check` runs where there is no
/// configuration file (`src/config/audit.toml`, which says what and why): PREEMPT_RT,
/// console log level 4, RT throttling on, timer migration off, vmstat every 10 s, no
/// transparent huge pages.
pub const AUDIT: &str = include_str!("audit.toml");

impl Reader {
    /// The text that stands for a missing [`DEFAULT_PATH`]: the documented defaults (an
    /// empty file), the audit for `tune check`, `None` (an error) for `tune apply`.
    fn missing_default(self) -> Option<&'static str> {
        match self {
            Reader::TuneApply => None,
            Reader::TuneCheck => Some(AUDIT),
            _ => Some(""),
        }
    }

    /// Whether the "cannot read" message points at `--config`.
    fn hints_at_flag(self) -> bool {
        matches!(
            self,
            Reader::Monitor | Reader::TuneCheck | Reader::TuneApply | Reader::TuneJournal
        )
    }
}

/// A configuration found and validated.
#[derive(Debug, Clone)]
pub struct Located {
    /// The file as named: `--config FILE`, or [`DEFAULT_PATH`] (also when it does not
    /// exist).
    pub path: PathBuf,
    /// The file's text; `None` when the default file does not exist and the
    /// documented defaults apply.
    pub text: Option<String>,
    /// The validated configuration (when `text` is `None`: the defaults, or for
    /// [`Reader::TuneCheck`] the audit, [`AUDIT`]).
    pub config: Config,
}

impl Located {
    /// The file as shown in messages and journal fields.
    pub fn shown(&self) -> String {
        self.path.display().to_string()
    }
}

/// Reads and validates the configuration for `reader`: the file `explicit` names
/// (`--config`), which must exist, else [`DEFAULT_PATH`] (a missing one is the
/// documented defaults, the audit for [`Reader::TuneCheck`] and an error for
/// [`Reader::TuneApply`]). CPU lists are validated against the system below `root`.
///
/// Errors ([`ConfigError`], exit 2): a file that cannot be read (missing, not UTF-8,
/// larger than [`crate::sys::input::MAX_CONFIG_BYTES`]), TOML syntax, unknown key,
/// wrong type, value out of range, CPU list not valid on this machine.
pub fn locate(
    explicit: Option<&Path>,
    reader: Reader,
    root: &SysRoot,
) -> Result<Located, ConfigError> {
    let path = explicit.map_or_else(|| PathBuf::from(DEFAULT_PATH), Path::to_path_buf);
    let shown = path.display().to_string();
    let missing =
        |e: &std::io::Error| e.kind() == std::io::ErrorKind::NotFound && explicit.is_none();
    let (text, standing_in) = match read(&path, explicit.is_some()) {
        Ok(t) => (Some(t), ""),
        Err(e) if missing(&e) && reader.missing_default().is_some() => {
            (None, reader.missing_default().unwrap_or(""))
        }
        Err(e) if missing(&e) && reader == Reader::TuneApply => {
            return Err(unreadable(
                &shown,
                format!(
                    "cannot read the configuration: {e}; tune apply changes the system only \
                     as a configuration file's [tuning] says (rtbench config template), \
                     tune check without one checks the generic real-time audit"
                ),
            ));
        }
        Err(e) => {
            let hint = if reader.hints_at_flag() {
                "; expected a TOML file (see --config)"
            } else {
                ""
            };
            return Err(unreadable(
                &shown,
                format!("cannot read the configuration: {e}{hint}"),
            ));
        }
    };
    let config = match &text {
        Some(t) => parse(t, &shown, root)?,
        None => parse(standing_in, &shown, root)?,
    };
    Ok(Located { path, text, config })
}

/// Reads a configuration file as text: at most [`crate::sys::input::MAX_CONFIG_BYTES`]
/// (`/dev/zero` is not read without end). A file the user `named` may be a FIFO or
/// `<(…)`; the default one must be a regular file ([`crate::sys::input::read_regular`]):
/// a FIFO at [`DEFAULT_PATH`] must not stall every command, the boot self-test first.
fn read(path: &Path, named: bool) -> std::io::Result<String> {
    use crate::sys::input;
    let max = input::MAX_CONFIG_BYTES;
    let bytes = if named {
        input::read_bounded(path, max)
    } else {
        input::read_regular(path, max)
    }
    .map_err(input::InputError::into_io)?;
    String::from_utf8(bytes)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8 text"))
}

/// An error for a file that could not be read.
fn unreadable(file: &str, message: impl Into<String>) -> ConfigError {
    ConfigError {
        file: file.to_string(),
        place: ConfigPlace::Unreadable,
        message: message.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_file_must_be_regular_a_named_one_may_be_a_fifo() {
        use std::os::unix::ffi::OsStrExt;
        let d = crate::config::tempdir::Dir::new("locate-fifo");
        let fifo = d.path().join("rtbench.toml");
        let c = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
        // SAFETY: a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // Read as the default file: refused at once, not waited on.
        let e = read(&fifo, false).unwrap_err();
        assert!(e.to_string().contains("FIFO"), "{e}");
        // Named (`--config <(cmd)`): read as it comes, up to its end.
        let w = fifo.clone();
        let writer = std::thread::spawn(move || std::fs::write(w, "[cyclic]\n").unwrap());
        assert_eq!(read(&fifo, true).unwrap(), "[cyclic]\n");
        writer.join().unwrap();
    }

    #[test]
    fn an_explicit_file_must_exist_and_the_message_follows_the_reader() {
        let root = SysRoot::host();
        let missing = Path::new("/nonexistent/rtbench.toml");
        for (reader, hint) in [
            (Reader::Selftest, false),
            (Reader::Report, false),
            (Reader::Diagnose, false),
            (Reader::ConfigCheck, false),
            (Reader::Monitor, true),
            (Reader::TuneCheck, true),
            (Reader::TuneApply, true),
            (Reader::TuneJournal, true),
        ] {
            let e = locate(Some(missing), reader, &root).unwrap_err();
            assert_eq!(e.place, ConfigPlace::Unreadable);
            let text = e.to_string();
            assert!(
                text.starts_with("/nonexistent/rtbench.toml: cannot read the configuration: "),
                "{text}"
            );
            assert_eq!(
                text.ends_with("; expected a TOML file (see --config)"),
                hint,
                "{reader:?}: {text}"
            );
        }
    }

    /// The audit is a valid configuration wherever rtbench runs (no CPU lists), and it
    /// checks only what it says.
    #[test]
    fn the_audit_is_a_tuning_of_machine_independent_items() {
        let c = parse(AUDIT, "audit", &SysRoot::host()).unwrap();
        let t = &c.tuning;
        assert!(t.require_preempt_rt);
        assert_eq!(
            (t.printk, t.sched_rt_runtime_us, t.timer_migration),
            (Some(4), Some(950_000), Some(0))
        );
        assert_eq!(t.stat_interval_s, Some(10));
        assert_eq!(t.thp, Some(crate::tune::spec::Thp::Never));
        assert!(t.isolated.is_empty() && t.boot_isolcpus.is_none() && t.governor.is_none());
        assert!(t.overcommit_memory.is_none() && !t.irq_affinity);
    }

    #[test]
    fn a_file_read_keeps_its_text_and_name() {
        let dir = super::super::tempdir::Dir::new("locate");
        dir.file("r.toml", "[output]\nkeep = 3\n");
        let p = dir.path().join("r.toml");
        let l = locate(Some(&p), Reader::TuneApply, &SysRoot::host()).unwrap();
        assert_eq!(l.text.as_deref(), Some("[output]\nkeep = 3\n"));
        assert_eq!(l.config.output.keep, 3);
        assert_eq!(l.shown(), p.display().to_string());
        let dir_is_not_a_file = locate(Some(dir.path()), Reader::Report, &SysRoot::host());
        assert!(dir_is_not_a_file.is_err());
    }
}
