//! The configuration file (`/etc/rtbench/rtbench.toml`, or `--config FILE`).
//!
//! Two layers per section: a raw TOML shape (serde, `deny_unknown_fields`, so a typo is
//! an error instead of a silently ignored knob) and a validated spec built against the
//! running system (CPU lists need `nr_cpu_ids` and the online CPUs). Every error is one
//! line naming the file, the line, the key and what was expected; its exit code is 2.
//!
//! Adding a section (`[selftest]`, `[load]`, `[limits]`, `[output]`): a field in
//! [`RawConfig`] with `#[serde(default)]`, a field in [`Config`], one line in
//! [`parse`].

pub mod tuning;

pub use crate::selftest::config as sections;

use crate::error::{Error, Result};
use crate::sys::cpus::CpuTopology;
use crate::sys::SysRoot;
use std::ops::Range;
use std::path::Path;

/// Where the configuration lives unless `--config FILE` says otherwise.
pub const DEFAULT_PATH: &str = "/etc/rtbench/rtbench.toml";

/// The file as written: every section optional, unknown keys rejected.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawConfig {
    /// `[tuning]`: what `rtbench tune` checks and changes.
    #[serde(default)]
    pub tuning: tuning::TuningToml,
    /// `[selftest]`: tuning mode and duration.
    #[serde(default)]
    pub selftest: sections::SelftestSection,
    /// `[cyclic]`: the timer-wakeup test.
    #[serde(default)]
    pub cyclic: sections::CyclicSection,
    /// `[load]`: what runs beside the measurement.
    #[serde(default)]
    pub load: sections::LoadSection,
    /// `[limits]`: pass/fail limits.
    #[serde(default)]
    pub limits: sections::LimitsSection,
    /// `[output]`: results store and Prometheus textfile.
    #[serde(default)]
    pub output: sections::OutputSection,
}

/// The validated configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// The tuning to check or apply.
    pub tuning: tuning::TuningSpec,
    /// `[selftest]` as written.
    pub selftest: sections::SelftestSection,
    /// The measurement duration from `[selftest]`.
    pub duration: std::time::Duration,
    /// `[cyclic]` as written.
    pub cyclic: sections::CyclicSection,
    /// The CPUs `[cyclic]` measures.
    pub cyclic_cpus: crate::cpuset::CpuSet,
    /// `[load]` as written.
    pub load: sections::LoadSection,
    /// `[load]`, validated (`None`: no load).
    pub load_spec: Option<crate::load::LoadSpec>,
    /// `[limits]`, resolved.
    pub limits: crate::selftest::limits::LimitSet,
    /// `[output]`.
    pub output: sections::OutputSection,
}

/// Reads and validates the configuration file `path` against the system below `root`.
///
/// Errors (all [`Error::Usage`], exit 2): unreadable file, TOML syntax, unknown key,
/// wrong type, value out of range, CPU list not valid on this machine.
pub fn load(path: &Path, root: &SysRoot) -> Result<Config> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::usage(
            path.display().to_string(),
            format!("cannot read the configuration: {e}; expected a TOML file (see --config)"),
        )
    })?;
    parse(&text, &path.display().to_string(), root)
}

/// Validates configuration `text` (named `file` in errors) against the system below
/// `root`. See [`load`].
pub fn parse(text: &str, file: &str, root: &SysRoot) -> Result<Config> {
    let src = Source { file, text };
    let raw: RawConfig = toml::from_str(text).map_err(|e| src.toml_error(&e))?;
    let topo = CpuTopology::read(root);
    let key = |e: sections::KeyError| src.key_error(&e);
    let load = raw.load.resolve(&topo).map_err(key)?;
    raw.output.check().map_err(key)?;
    Ok(Config {
        tuning: tuning::resolve(&raw.tuning, &topo, &src)?,
        duration: raw.selftest.duration().map_err(key)?,
        cyclic_cpus: raw.cyclic.cpus(&topo).map_err(key)?,
        limits: raw.limits.to_limit_set(&topo).map_err(key)?,
        selftest: raw.selftest,
        cyclic: raw.cyclic,
        load: raw.load,
        load_spec: load,
        output: raw.output,
    })
}

/// The text of a configuration file, for locating errors.
pub struct Source<'a> {
    /// File name as shown in errors.
    pub file: &'a str,
    /// The whole file.
    pub text: &'a str,
}

impl Source<'_> {
    /// 1-based line number of byte `offset`.
    pub fn line_of(&self, offset: usize) -> usize {
        let end = offset.min(self.text.len());
        self.text.as_bytes()[..end]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1
    }

    /// A usage error for `key` whose value sits at byte range `span`:
    /// `FILE:LINE: KEY = VALUE: MESSAGE`.
    pub fn error(&self, span: Range<usize>, key: &str, message: impl Into<String>) -> Error {
        let value = self.text.get(span.clone()).unwrap_or("").trim();
        Error::usage(
            format!(
                "{}:{}: {key} = {value}",
                self.file,
                self.line_of(span.start)
            ),
            message,
        )
    }

    /// A usage error for a semantic problem of dotted `key` (`section.name`, or
    /// `limits.cpus[i].name`): the line is that of `name = …` inside `[section]`, or
    /// the section header when the key is absent (a default that does not fit).
    pub fn key_error(&self, e: &crate::selftest::config::KeyError) -> Error {
        let (section, name) = e.key.rsplit_once('.').unwrap_or(("", e.key.as_str()));
        let (section, index) = match section.split_once('[') {
            Some((s, rest)) => (s, rest.trim_end_matches(']').parse::<usize>().ok()),
            None => (section, None),
        };
        let header_is = |l: &str, want: &str| {
            let t = l.trim();
            t == format!("[{want}]") || t == format!("[[{want}]]")
        };
        let mut in_section = section.is_empty();
        let mut seen = 0usize;
        let mut header_line = None;
        for (i, l) in self.text.lines().enumerate() {
            let t = l.trim_start();
            if t.starts_with('[') && header_is(t, &e.key) {
                // The key is itself a table, e.g. [limits.pmq].
                return Error::usage(
                    format!("{}:{}: [{}]", self.file, i + 1, e.key),
                    e.message.clone(),
                );
            }
            if t.starts_with('[') {
                in_section = header_is(t, section)
                    && index.map_or(true, |want| {
                        seen += 1;
                        seen == want + 1
                    });
                if in_section && header_line.is_none() {
                    header_line = Some(i + 1);
                }
                continue;
            }
            if in_section {
                if let Some((k, v)) = t.split_once('=') {
                    if k.trim() == name {
                        return Error::usage(
                            format!("{}:{}: {} = {}", self.file, i + 1, e.key, v.trim()),
                            e.message.clone(),
                        );
                    }
                }
            }
        }
        let at =
            header_line.map_or_else(|| self.file.to_string(), |l| format!("{}:{l}", self.file));
        Error::usage(format!("{at}: {}", e.key), e.message.clone())
    }

    fn toml_error(&self, e: &toml::de::Error) -> Error {
        let message = e.message().trim().replace('\n', " ");
        match e.span() {
            Some(span) => {
                let line_no = self.line_of(span.start);
                let line = self.text.lines().nth(line_no - 1).unwrap_or("").trim();
                Error::usage(format!("{}:{line_no}: {line}", self.file), message)
            }
            None => Error::usage(self.file.to_string(), message),
        }
    }
}

/// A tiny temp-dir helper for unit tests (removed on drop).
#[cfg(test)]
pub(crate) mod tempdir {
    use std::path::{Path, PathBuf};

    pub struct Dir(PathBuf);

    impl Dir {
        pub fn new(tag: &str) -> Dir {
            use std::sync::atomic::{AtomicUsize, Ordering};
            static N: AtomicUsize = AtomicUsize::new(0);
            let p = std::env::temp_dir().join(format!(
                "rtbench-{tag}-{}-{}",
                std::process::id(),
                N.fetch_add(1, Ordering::Relaxed)
            ));
            let _ = std::fs::remove_dir_all(&p);
            std::fs::create_dir_all(&p).unwrap();
            Dir(p)
        }

        pub fn path(&self) -> &Path {
            &self.0
        }

        pub fn file(&self, rel: &str, content: &str) {
            let p = self.0.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, content).unwrap();
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_file_is_an_empty_tuning() {
        let c = parse("", "t.toml", &SysRoot::host()).unwrap();
        assert!(c.tuning.is_empty());
    }

    #[test]
    fn unknown_keys_name_file_and_line() {
        let e = parse(
            "[tuning]\nisolatd = \"1\"\n",
            "/etc/rtbench/rtbench.toml",
            &SysRoot::host(),
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("/etc/rtbench/rtbench.toml:2: isolatd"), "{e}");
        assert!(e.contains("unknown field `isolatd`"), "{e}");
        let e = parse("[tunning]\n", "f", &SysRoot::host()).unwrap_err();
        assert!(e.to_string().starts_with("f:1:"), "{e}");
        assert_eq!(e.exit_code(), crate::error::exit::USAGE);
    }

    #[test]
    fn wrong_type_names_the_line() {
        let e = parse(
            "[tuning.sysctl]\n\nprintk = \"one\"\n",
            "f",
            &SysRoot::host(),
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("f:3: printk = \"one\""), "{e}");
    }
}
