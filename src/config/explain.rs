//! `[explain]`: why a sample over its limit was late, from the kernel's trace events
//! (`crate::explain`), in the self-test and the monitor. Every key is optional; by
//! default every test's samples over their `max` limit are explained where the kernel
//! allows it (tracefs, root), and `rtbench` says once why not where it does not.

use super::Source;
use crate::error::ConfigError;
use serde::Deserialize;
use toml::Spanned;

/// Smallest ring buffer per CPU, **KiB**.
pub const MIN_BUFFER_KIB: u32 = 64;
/// Largest ring buffer per CPU, **KiB** (64 MiB: the text of one CPU's window is
/// read and parsed in one look).
pub const MAX_BUFFER_KIB: u32 = 65_536;

/// `[explain]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExplainToml {
    enabled: Option<bool>,
    threshold_us: Option<Spanned<u64>>,
    buffer_kib: Option<Spanned<u32>>,
    timerlat: Option<bool>,
}

/// `[explain]`, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExplainSection {
    /// Explain at all (default true).
    pub enabled: bool,
    /// Explain samples above this many **µs**; `None` (the default): above the
    /// thread's `max` limit (threads without one are not explained).
    pub threshold_us: Option<u64>,
    /// Ring buffer per recorded CPU, **KiB**.
    pub buffer_kib: u32,
    /// Also run the kernel's timerlat tracer for a second opinion (adds a SCHED_FIFO
    /// 95 thread per measured CPU; default false).
    pub timerlat: bool,
}

impl Default for ExplainSection {
    fn default() -> Self {
        ExplainSection {
            enabled: true,
            threshold_us: None,
            buffer_kib: crate::explain::recorder::DEFAULT_BUFFER_KIB,
            timerlat: false,
        }
    }
}

impl ExplainToml {
    /// Validates the section.
    pub fn resolve(&self, src: &Source<'_>) -> Result<ExplainSection, ConfigError> {
        let d = ExplainSection::default();
        let threshold_us = match &self.threshold_us {
            Some(v) if *v.get_ref() == 0 => {
                return Err(src.value_error(
                    v.span(),
                    "explain.threshold_us",
                    "expected at least 1 µs",
                ))
            }
            Some(v) => Some(*v.get_ref()),
            None => None,
        };
        let buffer_kib = src.in_range(
            &self.buffer_kib,
            "explain.buffer_kib",
            MIN_BUFFER_KIB..=MAX_BUFFER_KIB,
            d.buffer_kib,
            format!("expected {MIN_BUFFER_KIB}..{MAX_BUFFER_KIB} KiB per CPU"),
        )?;
        Ok(ExplainSection {
            enabled: self.enabled.unwrap_or(d.enabled),
            threshold_us,
            buffer_kib,
            timerlat: self.timerlat.unwrap_or(d.timerlat),
        })
    }
}
