//! `rtbench sysinfo`: the system snapshot as text or JSON.

use crate::cli::sysinfo::SysinfoArgs;
use crate::error::{exit, Error, Result};
use crate::sys::info::SysInfo;
use crate::sys::SysRoot;

/// `rtbench sysinfo`.
pub fn run(args: &SysinfoArgs) -> Result<i32> {
    let info = SysInfo::read(&SysRoot::host());
    if args.json {
        let s = serde_json::to_string_pretty(&info).map_err(|e| Error::io("<stdout>", e.into()))?;
        println!("{s}");
    } else {
        println!(
            "kernel:        {} {} ({})",
            info.sysname, info.release, info.machine
        );
        println!("version:       {}", info.version);
        println!(
            "preemption:    {}{}",
            info.preempt_model,
            if info.realtime {
                format!(" (PREEMPT_RT: {})", info.realtime_evidence.join(", "))
            } else {
                String::new()
            }
        );
        println!("cpus online:   {}", info.cpus_online);
        println!("isolated:      {}", or_none(&info.cpus_isolated));
        println!("nohz_full:     {}", or_none(&info.cpus_nohz_full));
        println!("housekeeping:  {}", info.cpus_housekeeping);
        println!("cmdline:       {}", info.cmdline);
    }
    Ok(exit::OK)
}

fn or_none(s: &str) -> &str {
    if s.is_empty() {
        "none"
    } else {
        s
    }
}
