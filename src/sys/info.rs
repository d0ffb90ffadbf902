//! The system snapshot saved with every result: uname, the preemption model and
//! whether the kernel is PREEMPT_RT, the kernel command line and the CPU sets.
//!
//! PREEMPT_RT detection must work both on RT-patched kernels (which have
//! `/sys/kernel/realtime` = 1) and on mainline 6.12+ with `CONFIG_PREEMPT_RT=y` (no such
//! file; `uname -v` says `PREEMPT_RT`). The three sources are read together and every
//! one that says "RT" is recorded as evidence.

use super::cpus::CpuTopology;
use super::SysRoot;
use std::io::Read;

/// A snapshot of the facts that decide whether a latency figure means anything.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SysInfo {
    /// `uname -s`.
    pub sysname: String,
    /// `uname -n`.
    pub nodename: String,
    /// `uname -r`.
    pub release: String,
    /// `uname -v` (holds `PREEMPT_RT` / `PREEMPT_DYNAMIC` on current kernels).
    pub version: String,
    /// `uname -m`.
    pub machine: String,
    /// Whether the kernel is PREEMPT_RT (any evidence below).
    pub realtime: bool,
    /// Which sources said PREEMPT_RT: `sysfs`, `uname`, `config`.
    pub realtime_evidence: Vec<String>,
    /// The preemption model: `PREEMPT_RT`, `PREEMPT_DYNAMIC`, `PREEMPT`,
    /// `PREEMPT_VOLUNTARY`, `PREEMPT_NONE` or `unknown`.
    pub preempt_model: String,
    /// `/proc/cmdline`, trimmed.
    pub cmdline: String,
    /// Number of possible CPU ids.
    pub nr_cpu_ids: usize,
    /// Online CPUs, cpu-list form.
    pub cpus_online: String,
    /// Isolated CPUs (`/sys/devices/system/cpu/isolated`), cpu-list form.
    pub cpus_isolated: String,
    /// nohz_full CPUs, cpu-list form.
    pub cpus_nohz_full: String,
    /// Housekeeping CPUs (online minus isolated and nohz_full), cpu-list form.
    pub cpus_housekeeping: String,
}

/// Kernel configuration lines of interest (`CONFIG_PREEMPT*`), read from
/// `/proc/config.gz` (CONFIG_IKCONFIG_PROC) or `/boot/config-<release>`.
/// Returns `None` when neither is readable.
pub fn kernel_config(root: &SysRoot, release: &str) -> Option<String> {
    if let Ok(f) = std::fs::File::open(root.path("/proc/config.gz")) {
        let mut s = String::new();
        if flate2::read::GzDecoder::new(f)
            .read_to_string(&mut s)
            .is_ok()
        {
            return Some(s);
        }
    }
    root.read(&format!("/boot/config-{release}")).ok()
}

fn config_has(config: &str, key: &str) -> bool {
    config.lines().any(|l| l.trim() == format!("{key}=y"))
}

impl SysInfo {
    /// Reads the snapshot below `root` (uname always from the running kernel).
    pub fn read(root: &SysRoot) -> SysInfo {
        let u = nix::sys::utsname::uname().ok();
        let field = |f: fn(&nix::sys::utsname::UtsName) -> &std::ffi::OsStr| {
            u.as_ref()
                .map(|u| f(u).to_string_lossy().into_owned())
                .unwrap_or_default()
        };
        let release = field(|u| u.release());
        let version = field(|u| u.version());
        let config = kernel_config(root, &release);
        let sysfs_rt = root
            .read_trim("/sys/kernel/realtime")
            .is_ok_and(|v| v == "1");
        let tokens: Vec<&str> = version.split_whitespace().collect();
        let uname_rt = tokens.contains(&"PREEMPT_RT");
        let config_rt = config
            .as_deref()
            .is_some_and(|c| config_has(c, "CONFIG_PREEMPT_RT"));
        let mut evidence = Vec::new();
        for (yes, name) in [
            (sysfs_rt, "sysfs"),
            (uname_rt, "uname"),
            (config_rt, "config"),
        ] {
            if yes {
                evidence.push(name.to_string());
            }
        }
        let realtime = !evidence.is_empty();
        let model = if realtime {
            "PREEMPT_RT"
        } else if tokens.contains(&"PREEMPT_DYNAMIC")
            || config
                .as_deref()
                .is_some_and(|c| config_has(c, "CONFIG_PREEMPT_DYNAMIC"))
        {
            "PREEMPT_DYNAMIC"
        } else if tokens.contains(&"PREEMPT") {
            "PREEMPT"
        } else if let Some(c) = config.as_deref() {
            if config_has(c, "CONFIG_PREEMPT_VOLUNTARY") {
                "PREEMPT_VOLUNTARY"
            } else if config_has(c, "CONFIG_PREEMPT_NONE") {
                "PREEMPT_NONE"
            } else {
                "unknown"
            }
        } else {
            "unknown"
        };
        let topo = CpuTopology::read(root);
        SysInfo {
            sysname: field(|u| u.sysname()),
            nodename: field(|u| u.nodename()),
            release,
            version,
            machine: field(|u| u.machine()),
            realtime,
            realtime_evidence: evidence,
            preempt_model: model.to_string(),
            cmdline: root.read_trim("/proc/cmdline").unwrap_or_default(),
            nr_cpu_ids: topo.nr_cpu_ids,
            cpus_online: topo.online.to_list(),
            cpus_isolated: topo.isolated.to_list(),
            cpus_nohz_full: topo.nohz_full.to_list(),
            cpus_housekeeping: topo.housekeeping().to_list(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_snapshot_agrees_with_uname_and_config() {
        let info = SysInfo::read(&SysRoot::host());
        assert_eq!(info.sysname, "Linux");
        let uname_v = std::process::Command::new("uname")
            .arg("-v")
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&uname_v.stdout).trim(),
            info.version
        );
        assert_eq!(
            info.realtime,
            info.version.contains("PREEMPT_RT") || !info.realtime_evidence.is_empty()
        );
        if let Some(cfg) = kernel_config(&SysRoot::host(), &info.release) {
            assert_eq!(
                config_has(&cfg, "CONFIG_PREEMPT_RT"),
                info.realtime_evidence.contains(&"config".to_string())
            );
        }
        assert!(!info.cpus_online.is_empty());
    }

    #[test]
    fn rt_detected_from_sysfs_flag_alone() {
        let dir = std::env::temp_dir().join(format!("rtbench-info-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sys/kernel")).unwrap();
        std::fs::create_dir_all(dir.join("proc")).unwrap();
        std::fs::write(dir.join("sys/kernel/realtime"), "1\n").unwrap();
        std::fs::write(dir.join("proc/cmdline"), "isolcpus=1\n").unwrap();
        let info = SysInfo::read(&SysRoot::at(&dir));
        assert!(info.realtime);
        assert!(info.realtime_evidence.contains(&"sysfs".to_string()));
        assert_eq!(info.preempt_model, "PREEMPT_RT");
        assert_eq!(info.cmdline, "isolcpus=1");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn config_lines_are_matched_exactly() {
        let cfg = "# CONFIG_PREEMPT_RT is not set\nCONFIG_PREEMPT_DYNAMIC=y\n";
        assert!(!config_has(cfg, "CONFIG_PREEMPT_RT"));
        assert!(config_has(cfg, "CONFIG_PREEMPT_DYNAMIC"));
    }
}
