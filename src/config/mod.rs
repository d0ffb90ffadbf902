//! The configuration file (`/etc/rtbench/rtbench.toml`, or `--config FILE`).
//!
//! Two layers per section: a raw TOML shape (serde, `deny_unknown_fields`, so a typo is
//! an error instead of a silently ignored knob; every value that is validated is a
//! [`toml::Spanned`], so its line comes from the parser) and a validated type built
//! against the running system (CPU lists need `nr_cpu_ids` and the online CPUs).
//! Every error is a [`ConfigError`] carrying the file, the line, the key and the value
//! as written; its exit code is 2.
//!
//! [`locate()`] finds and reads the file for every command ([`Reader`] says how they
//! differ on a missing one). One file per group of sections: [`tuning`] (`[tuning]`), [`selftest`]
//! (`[selftest]`, `[cyclic]`, `[load]`, `[output]`) and [`limits`] (`[limits]`).
//! Adding a section: a raw field in [`RawConfig`] with `#[serde(default)]`, a validated
//! field in [`Config`], one line in [`parse`].

pub mod condition;
mod expect;
pub mod explain;
pub mod limits;
pub mod locate;
pub mod monitor;
pub mod pair;
pub mod poll;
pub mod selftest;
pub mod tuning;
pub mod unit;

pub use locate::{locate, Located, Reader, AUDIT};
pub use selftest::{CyclicSection, LoadSection, OutputSection, SelftestSection, TuningMode};

use crate::error::{ConfigError, ConfigPlace};
use crate::sys::cpus::CpuTopology;
use crate::sys::SysRoot;
use std::ops::Range;

/// The configuration template, `systemd/rtbench.toml` of the source tree: every key,
/// its default and what it does. `rtbench config template` prints it, the packaging
/// installs it as `/etc/rtbench/rtbench.toml`, and `docs/man/rtbench.toml.5` is
/// generated from it (`tests/golden/generated_docs.rs`), so the three say the same.
pub const TEMPLATE: &str = include_str!("../../systemd/rtbench.toml");

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
    pub selftest: selftest::SelftestToml,
    /// `[cyclic]`: the timer-wakeup test.
    #[serde(default)]
    pub cyclic: selftest::CyclicToml,
    /// `[pmq]`: the message-queue latency test (absent: not run).
    #[serde(default)]
    pub pmq: Option<pair::PairToml>,
    /// `[pipe]`: the pipe ping-pong task-switch test (absent: not run).
    #[serde(default)]
    pub pipe: Option<pair::PairToml>,
    /// `[poll]`: the busy-poll test (absent: not run).
    #[serde(default)]
    pub poll: Option<toml::Spanned<poll::PollToml>>,
    /// `[load]`: what runs beside the measurement.
    #[serde(default)]
    pub load: selftest::LoadToml,
    /// `[limits]`: pass/fail limits.
    #[serde(default)]
    pub limits: limits::LimitsToml,
    /// `[output]`: results store and Prometheus textfile.
    #[serde(default)]
    pub output: selftest::OutputToml,
    /// `[monitor]`: the long-running field measurement.
    #[serde(default)]
    pub monitor: monitor::MonitorToml,
    /// `[explain]`: why samples over their limit were late.
    #[serde(default)]
    pub explain: explain::ExplainToml,
    /// `[[condition]]`: the self-test's conditions, measured one after the other
    /// (none: one condition, the sections above).
    #[serde(default)]
    pub condition: Vec<condition::ConditionToml>,
    /// `[unit]`: the factory line's names of the unit.
    #[serde(default)]
    pub unit: unit::UnitToml,
}

/// The validated configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// The tuning to check or apply.
    pub tuning: crate::tune::spec::TuningSpec,
    /// `[selftest]`.
    pub selftest: SelftestSection,
    /// The measurement duration from `[selftest]`.
    pub duration: std::time::Duration,
    /// `[cyclic]`.
    pub cyclic: CyclicSection,
    /// The CPUs `[cyclic]` measures.
    pub cyclic_cpus: crate::cpuset::CpuSet,
    /// `[pmq]` (`None`: no such section, the test does not run).
    pub pmq: Option<pair::PairSection>,
    /// `[pipe]` (`None`: no such section, the test does not run).
    pub pipe: Option<pair::PairSection>,
    /// `[poll]` (`None`: no such section, the test does not run).
    pub poll: Option<poll::PollSection>,
    /// `[load]` as written.
    pub load: LoadSection,
    /// `[load]`, validated (`None`: no load).
    pub load_spec: Option<crate::load::LoadSpec>,
    /// `[limits]`, resolved.
    pub limits: limits::LimitSet,
    /// `[output]`.
    pub output: OutputSection,
    /// `[monitor]`.
    pub monitor: monitor::MonitorSection,
    /// `[explain]`.
    pub explain: explain::ExplainSection,
    /// `[[condition]]`s, in the file's order (empty: the self-test measures the
    /// sections above as one unnamed condition, as before conditions existed).
    pub conditions: Vec<condition::Condition>,
    /// `[unit]`.
    pub unit: unit::UnitSection,
}

impl Config {
    /// Advice on a valid configuration that is probably not what was meant, one line
    /// each (`rtbench config check` and the self-test print it; never an error):
    /// a SCHED_FIFO priority of 99 for a test or the monitor, which the template
    /// advises against — the measuring threads then outrank the kernel's own threads
    /// that need 99 (the watchdog, a threaded IRQ raised there), as `cyclictest -p99`
    /// does.
    pub fn advice(&self) -> Vec<String> {
        let mut v = Vec::new();
        let mut prio = |key: &str, p: i32| {
            if p == 99 {
                v.push(format!(
                    "{key} = 99: the measuring threads outrank the kernel's own threads that \
                     need priority 99; the default 98 leaves it to them"
                ));
            }
        };
        if self.cyclic.enabled {
            prio("cyclic.priority", self.cyclic.priority);
        }
        for p in [&self.pmq, &self.pipe].into_iter().flatten() {
            if p.enabled {
                prio(&format!("{}.priority", pair::kind_name(p.kind)), p.priority);
            }
        }
        prio("monitor.priority", self.monitor.priority);
        // A threshold above a max limit: the verdict judges such samples, but nothing
        // explains those between the limit and the threshold.
        if let (true, Some(t)) = (self.explain.enabled, self.explain.threshold_us) {
            let sets = std::iter::once(&self.limits)
                .chain(self.conditions.iter().map(|c| &c.measure.limits));
            let lowest = sets
                .flat_map(|s| {
                    std::iter::once(&s.default)
                        .chain(s.per_test.values())
                        .chain(s.per_cpus.iter().map(|r| &r.limits))
                })
                .filter_map(|l| l.max_us)
                .min();
            if let Some(l) = lowest.filter(|&l| l < t) {
                v.push(format!(
                    "explain.threshold_us = {t} is above a max_us limit of {l}: samples \
                     between {l} and {t} µs fail that limit unexplained (leave threshold_us \
                     out to explain from each thread's limit)"
                ));
            }
        }
        v
    }
}

/// Validates configuration `text` (named `file` in errors) against the system below
/// `root`. See [`locate()`] for finding and reading the file.
pub fn parse(text: &str, file: &str, root: &SysRoot) -> Result<Config, ConfigError> {
    let src = Source { file, text };
    let raw: RawConfig = toml::from_str(text).map_err(|e| src.toml_error(&e))?;
    let topo = CpuTopology::read(root);
    // The order decides which of several problems is reported.
    let load_spec = raw.load.resolve(&topo, &src)?;
    let output = raw.output.resolve(&src)?;
    let mut tuning = tuning::resolve(&raw.tuning, &topo, &src)?;
    let (selftest, duration) = raw.selftest.resolve(&src)?;
    let parts = condition::Parts {
        cyclic: &raw.cyclic,
        pmq: raw.pmq.as_ref(),
        pipe: raw.pipe.as_ref(),
        poll: raw.poll.as_ref(),
        load: &raw.load,
        limits: &raw.limits,
    };
    // With conditions, the top-level [limits] apply only where a condition inherits
    // them, and are checked there against the tests that condition runs (a top-level
    // [limits.pmq] is right when every condition runs pmq): not against the top-level
    // tests, which then do not run as such. Kept (for what reads the top level) as
    // rules of every test, after the conditions had their say.
    let no_limits = limits::LimitsToml::default();
    let base_parts = if raw.condition.is_empty() {
        parts
    } else {
        condition::Parts {
            limits: &no_limits,
            ..parts
        }
    };
    let mut base = condition::measure(&base_parts, load_spec, duration, &topo, root, &src)?;
    let monitor = raw.monitor.resolve(&topo, &src)?;
    let explain = raw.explain.resolve(&src)?;
    let conditions = condition::resolve(&raw, &parts, duration, &topo, root, &src)?;
    if !raw.condition.is_empty() {
        let any = limits::Written {
            cyclic: limits::Measured::Default,
            pmq: limits::Measured::Default,
            pipe: limits::Measured::Default,
            poll: limits::Measured::Default,
        };
        base.limits = raw.limits.resolve(&topo, &src, any)?;
    }
    let unit = raw.unit.resolve(&src)?;
    tuning.commit_reserve = conditions
        .iter()
        .map(|c| &c.measure)
        .chain([&base])
        .map(condition::Measure::commit_reserve)
        .reduce(condition::larger_reserve)
        .unwrap_or_default();
    let condition::Measure {
        duration,
        cyclic,
        cyclic_cpus,
        pmq,
        pipe,
        poll,
        load,
        load_spec,
        limits,
    } = base;
    Ok(Config {
        tuning,
        selftest,
        duration,
        cyclic,
        cyclic_cpus,
        pmq,
        pipe,
        poll,
        limits,
        load,
        load_spec,
        output,
        monitor,
        explain,
        conditions,
        unit,
    })
}

/// The text of a configuration file, for locating errors by the parser's spans.
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

    /// The value of an optional number key, checked against `range`; `default` when the
    /// key is absent. Error: the key's value with `expected …` (the caller's words).
    /// One rule for the interval and priority keys of `[cyclic]`, `[pmq]`, `[pipe]` and
    /// `[monitor]`.
    pub fn in_range<T: Copy + PartialOrd>(
        &self,
        value: &Option<toml::Spanned<T>>,
        key: &str,
        range: std::ops::RangeInclusive<T>,
        default: T,
        expected: impl Into<String>,
    ) -> Result<T, ConfigError> {
        match value {
            Some(v) if !range.contains(v.get_ref()) => {
                Err(self.value_error(v.span(), key, expected))
            }
            Some(v) => Ok(*v.get_ref()),
            None => Ok(default),
        }
    }

    /// Refuses a path key whose value cannot name a file on Linux
    /// ([`crate::sys::atomic::unnameable`]: empty, a NUL byte, a component or the
    /// whole too long), before any other check reads it as a path.
    pub fn nameable<P: AsRef<std::path::Path>>(
        &self,
        value: &toml::Spanned<P>,
        key: &str,
    ) -> Result<(), ConfigError> {
        match crate::sys::atomic::unnameable(value.get_ref().as_ref()) {
            Some(why) => Err(self.value_error(value.span(), key, format!("path {why}"))),
            None => Ok(()),
        }
    }

    /// An error for dotted `key` whose value sits at byte range `span`:
    /// `FILE:LINE: KEY = VALUE: MESSAGE`, the value as written.
    pub fn value_error(
        &self,
        span: Range<usize>,
        key: &str,
        message: impl Into<String>,
    ) -> ConfigError {
        ConfigError {
            file: self.file.to_string(),
            place: ConfigPlace::Value {
                line: self.line_of(span.start),
                key: key.to_string(),
                value: self.text.get(span).unwrap_or("").trim().to_string(),
            },
            message: message.into(),
        }
    }

    /// An error for the table `key` (e.g. `limits.pmq`) whose span starts at its
    /// header: `FILE:LINE: [KEY]: MESSAGE`.
    pub fn table_error(
        &self,
        span: Range<usize>,
        key: &str,
        message: impl Into<String>,
    ) -> ConfigError {
        ConfigError {
            file: self.file.to_string(),
            place: ConfigPlace::Table {
                line: self.line_of(span.start),
                key: key.to_string(),
            },
            message: message.into(),
        }
    }

    /// The parser's error: its line, that line's text and the key written on it; a type
    /// error says what the key allows ([`expect::reword`]).
    fn toml_error(&self, e: &toml::de::Error) -> ConfigError {
        let mut message = e.message().trim().replace('\n', " ");
        let place = match e.span() {
            Some(span) => {
                let line = self.line_of(span.start);
                let text = self.text.lines().nth(line - 1).unwrap_or("").trim();
                message = match text.strip_prefix("[[").and_then(|t| t.split_once("]]")) {
                    // An array of tables where a table is expected (`[[cyclic]]`): the
                    // type serde expected inside the table is not what was wrong (serde
                    // reads the array as the fields in order: `expected a boolean`).
                    Some((name, _)) if message.starts_with("invalid type") => {
                        format!(
                            "expected a table, [{}], not an array of tables",
                            name.trim()
                        )
                    }
                    _ => expect::reword(&message, key_on_line(text).as_deref()),
                };
                ConfigPlace::Syntax {
                    line: Some(line),
                    text: text.to_string(),
                    key: key_on_line(text),
                }
            }
            None => ConfigPlace::Syntax {
                line: None,
                text: String::new(),
                key: None,
            },
        };
        ConfigError {
            file: self.file.to_string(),
            place,
            message,
        }
    }
}

/// The key of a `key = value` line (`None` for table headers and other lines).
fn key_on_line(text: &str) -> Option<String> {
    if text.starts_with('[') {
        return None;
    }
    let (key, _) = text.split_once('=')?;
    let key = key.trim();
    (!key.is_empty()).then(|| key.to_string())
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
        .unwrap_err();
        assert_eq!((e.line(), e.key()), (Some(2), Some("isolatd")));
        let e = e.to_string();
        assert!(e.starts_with("/etc/rtbench/rtbench.toml:2: isolatd"), "{e}");
        assert!(e.contains("unknown field `isolatd`"), "{e}");
        let e = parse("[tunning]\n", "f", &SysRoot::host()).unwrap_err();
        assert_eq!((e.line(), e.key()), (Some(1), None));
        assert!(e.to_string().starts_with("f:1:"), "{e}");
        assert_eq!(
            crate::error::Error::from(e).exit_code(),
            crate::error::exit::USAGE
        );
    }

    #[test]
    fn wrong_type_names_the_line() {
        let e = parse(
            "[tuning.sysctl]\n\nprintk = \"one\"\n",
            "f",
            &SysRoot::host(),
        )
        .unwrap_err();
        assert_eq!((e.line(), e.key()), (Some(3), Some("printk")));
        assert!(e.to_string().starts_with("f:3: printk = \"one\""), "{e}");
    }

    /// Lines come from the parser's spans, so every way TOML allows to write a key
    /// is located: dotted keys, inline tables, comments after the value.
    #[test]
    fn every_section_is_located_by_spans() {
        let root = SysRoot::host();
        for (text, line, key, value) in [
            ("cyclic.priority = 0\n", 1, "cyclic.priority", "0"),
            (
                "[selftest]\nmode = \"off\"\n\n[cyclic]\npriority = 0  # too low\n",
                5,
                "cyclic.priority",
                "0",
            ),
            (
                "cyclic = { interval_us = 0 }\n",
                1,
                "cyclic.interval_us",
                "0",
            ),
            ("[output]\nkeep = 0\n", 2, "output.keep", "0"),
            (
                "[selftest]\nduration = \"0s\"\n",
                2,
                "selftest.duration",
                "\"0s\"",
            ),
            ("[load]\nspec = \"disk:1\"\n", 2, "load.spec", "\"disk:1\""),
            (
                "[[limits.cpus]]\ncpus = \"0\"\nmax_us = 9\n[[limits.cpus]]\ncpus = \"0\"\ntest = \"x\"\n",
                6,
                "limits.cpus[1].test",
                "\"x\"",
            ),
        ] {
            let e = parse(text, "f", &root).unwrap_err();
            assert_eq!(e.line(), Some(line), "{text:?}: {e}");
            assert_eq!(e.key(), Some(key), "{text:?}: {e}");
            match &e.place {
                ConfigPlace::Value { value: v, .. } => assert_eq!(v, value, "{text:?}"),
                p => panic!("{text:?}: {p:?}"),
            }
        }
        let e = parse("[limits]\nmax_us = 9\n\n[limits.pipe]\n", "f", &root).unwrap_err();
        assert_eq!(
            e.place,
            ConfigPlace::Table {
                line: 4,
                key: "limits.pipe".into()
            }
        );
    }
}
