//! `rtbench sysinfo`'s text: one `name: value` line per fact of the system snapshot
//! ([`crate::sys::info::SysInfo`]; `--json` is [`super::PrettyJson`]).

use super::Sink;
use crate::sys::info::SysInfo;
use std::io::{self, Write};

/// The snapshot as aligned `name: value` lines.
pub struct SysinfoText;

fn or_none(s: &str) -> &str {
    if s.is_empty() {
        "none"
    } else {
        s
    }
}

impl Sink<SysInfo> for SysinfoText {
    fn write(&self, info: &SysInfo, out: &mut dyn Write) -> io::Result<()> {
        writeln!(
            out,
            "kernel:        {} {} ({})",
            info.sysname, info.release, info.machine
        )?;
        writeln!(out, "version:       {}", info.version)?;
        writeln!(
            out,
            "preemption:    {}{}",
            info.preempt_model,
            if info.realtime {
                format!(" (PREEMPT_RT: {})", info.realtime_evidence.join(", "))
            } else {
                String::new()
            }
        )?;
        writeln!(out, "cpus possible: {}", info.cpus_possible)?;
        writeln!(out, "cpus present:  {}", info.cpus_present)?;
        writeln!(out, "cpus online:   {}", info.cpus_online)?;
        writeln!(
            out,
            "allowed:       {} ({})",
            info.cpus_allowed,
            info.cpuset
                .as_ref()
                .map_or_else(|| "top cpuset".to_string(), |c| c.describe())
        )?;
        writeln!(out, "affinity:      {}", or_none(&info.cpus_affinity))?;
        writeln!(out, "isolated:      {}", or_none(&info.cpus_isolated))?;
        writeln!(out, "nohz_full:     {}", or_none(&info.cpus_nohz_full))?;
        writeln!(out, "housekeeping:  {}", info.cpus_housekeeping)?;
        writeln!(
            out,
            "smt:           {}{}",
            or_none(&info.smt_control),
            if info.smt_siblings.is_empty() {
                String::new()
            } else {
                format!(" (siblings {})", info.smt_siblings.join(" "))
            }
        )?;
        writeln!(out, "cmdline:       {}", info.cmdline)
    }
}
