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
//! | `tune check`, `tune apply` | an error (exit 2) | `; expected a TOML file (see --config)` |

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
    /// `rtbench tune check` and `tune apply`: they compare the system with a
    /// configuration, so the default file must exist too.
    TuneCheck,
    /// `rtbench tune revert` and `tune status`: they work from the journal; the
    /// configuration only names its directory.
    TuneJournal,
}

impl Reader {
    /// Whether a missing [`DEFAULT_PATH`] means the documented defaults.
    fn default_may_be_missing(self) -> bool {
        self != Reader::TuneCheck
    }

    /// Whether the "cannot read" message points at `--config`.
    fn hints_at_flag(self) -> bool {
        matches!(
            self,
            Reader::Monitor | Reader::TuneCheck | Reader::TuneJournal
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
    /// The validated configuration (the defaults when `text` is `None`).
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
/// documented defaults unless `reader` is [`Reader::TuneCheck`]). CPU lists are
/// validated against the system below `root`.
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
    let text = match read(&path) {
        Ok(t) => Some(t),
        Err(e)
            if e.kind() == std::io::ErrorKind::NotFound
                && explicit.is_none()
                && reader.default_may_be_missing() =>
        {
            None
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
    let config = parse(text.as_deref().unwrap_or(""), &shown, root)?;
    Ok(Located { path, text, config })
}

/// Reads a configuration file as text: at most [`crate::sys::input::MAX_CONFIG_BYTES`]
/// (a FIFO or `<(…)` is fine, `/dev/zero` is not read without end).
fn read(path: &Path) -> std::io::Result<String> {
    use crate::sys::input;
    let bytes =
        input::read_bounded(path, input::MAX_CONFIG_BYTES).map_err(input::InputError::into_io)?;
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

    #[test]
    fn a_file_read_keeps_its_text_and_name() {
        let dir = super::super::tempdir::Dir::new("locate");
        dir.file("r.toml", "[output]\nkeep = 3\n");
        let p = dir.path().join("r.toml");
        let l = locate(Some(&p), Reader::TuneCheck, &SysRoot::host()).unwrap();
        assert_eq!(l.text.as_deref(), Some("[output]\nkeep = 3\n"));
        assert_eq!(l.config.output.keep, 3);
        assert_eq!(l.shown(), p.display().to_string());
        let dir_is_not_a_file = locate(Some(dir.path()), Reader::Report, &SysRoot::host());
        assert!(dir_is_not_a_file.is_err());
    }
}
