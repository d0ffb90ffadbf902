//! The system snapshot saved with every result: uname, the preemption model and
//! whether the kernel is PREEMPT_RT (and what said so), the kernel command line and the
//! CPU sets of [`CpuTopology`] — possible, present, online, allowed (the cpuset),
//! affinity, isolated, nohz_full, housekeeping, SMT.
//!
//! PREEMPT_RT evidence takes every form kernels have used (the RT patch sets at
//! <https://cdn.kernel.org/pub/linux/kernel/projects/rt/> and mainline's `init/Makefile`):
//! `/sys/kernel/realtime` = 1 (the out-of-tree RT patch, 3.14-rt … 6.12-rt; not in
//! mainline 6.12+), `PREEMPT_RT` in `uname -v` (`init/Makefile`), `PREEMPT RT` in the
//! version string of old -rt patch sets (e.g. 4.0-rt), and `CONFIG_PREEMPT_RT=y` or
//! the older `CONFIG_PREEMPT_RT_FULL=y` in `/proc/config.gz` or
//! `/boot/config-<release>`. Every source that says "RT" is recorded, named with what
//! it found.

use super::cgroup::Cpuset;
use super::cpus::CpuTopology;
use super::SysRoot;
use std::io::Read;

/// A snapshot of the facts that decide whether a latency figure means anything.
/// CPU sets are in cpu-list form (`0-3,5`; empty for none). Fields added after the
/// first release default when a stored result lacks them.
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
    /// What said PREEMPT_RT, one entry per source, e.g. `/sys/kernel/realtime = 1`,
    /// `uname -v: PREEMPT_RT`, `uname -v: PREEMPT RT`,
    /// `CONFIG_PREEMPT_RT_FULL=y in /proc/config.gz`.
    pub realtime_evidence: Vec<String>,
    /// The preemption model: `PREEMPT_RT`, `PREEMPT_DYNAMIC`, `PREEMPT`,
    /// `PREEMPT_VOLUNTARY`, `PREEMPT_NONE` or `unknown`.
    pub preempt_model: String,
    /// `/proc/cmdline`, trimmed.
    pub cmdline: String,
    /// Number of possible CPU ids.
    pub nr_cpu_ids: usize,
    /// Possible CPUs (`/sys/devices/system/cpu/possible`).
    #[serde(default)]
    pub cpus_possible: String,
    /// Present CPUs.
    #[serde(default)]
    pub cpus_present: String,
    /// Online CPUs.
    pub cpus_online: String,
    /// Online CPUs this process's cpuset allows.
    #[serde(default)]
    pub cpus_allowed: String,
    /// The cpuset that narrows `cpus_allowed`, `null` in the top cpuset.
    #[serde(default)]
    pub cpuset: Option<Cpuset>,
    /// The process's affinity at start (`Cpus_allowed_list`), empty when unknown.
    #[serde(default)]
    pub cpus_affinity: String,
    /// Isolated CPUs (`/sys/devices/system/cpu/isolated`).
    pub cpus_isolated: String,
    /// nohz_full CPUs.
    pub cpus_nohz_full: String,
    /// Housekeeping CPUs (online minus isolated and nohz_full).
    pub cpus_housekeeping: String,
    /// `/sys/devices/system/cpu/smt/control`, empty when absent.
    #[serde(default)]
    pub smt_control: String,
    /// The SMT sibling groups with more than one online CPU, e.g. `["0,4", "1,5"]`.
    #[serde(default)]
    pub smt_siblings: Vec<String>,
    /// The CPU model: `/proc/cpuinfo`'s first `model name` (x86), else `Model` or
    /// `Hardware` (arm); `null` when none (absent in files of older versions).
    #[serde(default)]
    pub cpu_model: Option<String>,
    /// A fingerprint of the kernel configuration ([`kernel_config`]): `fnv1a64:` and
    /// the 64-bit FNV-1a hash of its text in hex, so two runs say whether their kernels
    /// were configured alike; `null` when the configuration is not readable.
    #[serde(default)]
    pub kernel_config_hash: Option<String>,
}

/// The 64-bit FNV-1a hash of `bytes` as `fnv1a64:` and 16 hex digits
/// (<http://www.isthe.com/chongo/tech/comp/fnv/>: offset basis 0xcbf29ce484222325,
/// prime 0x100000001b3).
pub fn fnv1a64(bytes: &[u8]) -> String {
    let h = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    format!("fnv1a64:{h:016x}")
}

/// The CPU model from `/proc/cpuinfo` text (see [`SysInfo::cpu_model`]).
pub fn cpu_model(cpuinfo: &str) -> Option<String> {
    ["model name", "Model", "Hardware"]
        .iter()
        .find_map(|key| cpuinfo_field(cpuinfo, key))
}

/// The first non-empty value of `key` in `/proc/cpuinfo` text (`key\t\t: value`
/// lines; fs/proc/cpuinfo.c and each architecture's `show_cpuinfo`).
pub fn cpuinfo_field(cpuinfo: &str, key: &str) -> Option<String> {
    cpuinfo.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == key && !v.trim().is_empty()).then(|| v.trim().to_string())
    })
}

/// The kernel configuration and where it was read: `/proc/config.gz`
/// (CONFIG_IKCONFIG_PROC) or `/boot/config-<release>`. `None` when neither is
/// readable.
pub fn kernel_config(root: &SysRoot, release: &str) -> Option<(String, String)> {
    // A regular file of bounded size, its text bounded too (a FIFO or /dev/zero in
    // its place must not stall or exhaust the reader).
    let max = super::root::MAX_KERNEL_FILE_BYTES;
    if let Ok(gz) = super::input::read_regular(&root.path("/proc/config.gz"), max) {
        let mut s = String::new();
        if flate2::read::GzDecoder::new(&gz[..])
            .take(max)
            .read_to_string(&mut s)
            .is_ok()
        {
            return Some((s, "/proc/config.gz".into()));
        }
    }
    let boot = format!("/boot/config-{release}");
    root.read(&boot).ok().map(|s| (s, boot))
}

/// Whether the kernel configuration `config` sets `key=y`.
pub fn config_has(config: &str, key: &str) -> bool {
    config
        .lines()
        .any(|l| l.trim().strip_prefix(key) == Some("=y"))
}

/// The PREEMPT_RT evidence (see the module doc): `realtime` is the content of
/// `/sys/kernel/realtime` if it exists, `version` the `uname -v` string, `config` the
/// kernel configuration and its source. Plain `PREEMPT` and `PREEMPT_DYNAMIC` are not
/// evidence.
pub fn preempt_rt_evidence(
    realtime: Option<&str>,
    version: &str,
    config: Option<(&str, &str)>,
) -> Vec<String> {
    let mut evidence = Vec::new();
    if realtime.is_some_and(|v| v.trim() == "1") {
        evidence.push("/sys/kernel/realtime = 1".to_string());
    }
    let tokens: Vec<&str> = version.split_whitespace().collect();
    if tokens.contains(&"PREEMPT_RT") {
        evidence.push("uname -v: PREEMPT_RT".to_string());
    }
    if tokens.windows(2).any(|w| w == ["PREEMPT", "RT"]) {
        evidence.push("uname -v: PREEMPT RT".to_string());
    }
    if let Some((text, source)) = config {
        for key in ["CONFIG_PREEMPT_RT", "CONFIG_PREEMPT_RT_FULL"] {
            if config_has(text, key) {
                evidence.push(format!("{key}=y in {source}"));
            }
        }
    }
    evidence
}

impl SysInfo {
    /// Reads the snapshot below `root`. uname comes from the running kernel; below a
    /// root other than `/` (a test tree), `/proc/sys/kernel/{osrelease,version}` of the
    /// tree win when present.
    pub fn read(root: &SysRoot) -> SysInfo {
        let u = nix::sys::utsname::uname().ok();
        let field = |f: fn(&nix::sys::utsname::UtsName) -> &std::ffi::OsStr| {
            u.as_ref()
                .map(|u| f(u).to_string_lossy().into_owned())
                .unwrap_or_default()
        };
        let from_tree = |p: &str| (!root.is_host()).then(|| root.read_trim(p).ok()).flatten();
        let release =
            from_tree("/proc/sys/kernel/osrelease").unwrap_or_else(|| field(|u| u.release()));
        let version =
            from_tree("/proc/sys/kernel/version").unwrap_or_else(|| field(|u| u.version()));
        let config = kernel_config(root, &release);
        let sysfs = root.read("/sys/kernel/realtime").ok();
        let evidence = preempt_rt_evidence(
            sysfs.as_deref(),
            &version,
            config.as_ref().map(|(t, s)| (t.as_str(), s.as_str())),
        );
        let config = config.map(|(t, _)| t);
        let kernel_config_hash = config.as_deref().map(|c| fnv1a64(c.as_bytes()));
        let tokens: Vec<&str> = version.split_whitespace().collect();
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
            cpus_possible: topo.possible.to_list(),
            cpus_present: topo.present.to_list(),
            cpus_online: topo.online.to_list(),
            cpus_allowed: topo.allowed.to_list(),
            cpuset: topo.cpuset.clone(),
            cpus_affinity: topo
                .affinity
                .as_ref()
                .map(|a| a.to_list())
                .unwrap_or_default(),
            cpus_isolated: topo.isolated.to_list(),
            cpus_nohz_full: topo.nohz_full.to_list(),
            cpus_housekeeping: topo.housekeeping().to_list(),
            smt_control: topo.smt_control.clone().unwrap_or_default(),
            smt_siblings: topo
                .cores
                .iter()
                .filter(|c| c.len() > 1)
                .map(|c| c.to_list())
                .collect(),
            cpu_model: root
                .read("/proc/cpuinfo")
                .ok()
                .as_deref()
                .and_then(cpu_model),
            kernel_config_hash,
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
        if let Some((cfg, source)) = kernel_config(&SysRoot::host(), &info.release) {
            assert_eq!(
                config_has(&cfg, "CONFIG_PREEMPT_RT"),
                info.realtime_evidence
                    .contains(&format!("CONFIG_PREEMPT_RT=y in {source}"))
            );
        }
        let t = CpuTopology::read(&SysRoot::host());
        assert_eq!(info.cpus_allowed, t.allowed.to_list());
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
        assert_eq!(info.realtime_evidence, vec!["/sys/kernel/realtime = 1"]);
        assert_eq!(info.preempt_model, "PREEMPT_RT");
        assert_eq!(info.cmdline, "isolcpus=1");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn every_form_of_preempt_rt_evidence() {
        let none = preempt_rt_evidence(None, "#1 SMP PREEMPT_DYNAMIC Debian 6.1", None);
        assert!(none.is_empty());
        // Plain PREEMPT followed by something else is not RT.
        assert!(preempt_rt_evidence(Some("0\n"), "#1 SMP PREEMPT Tue RTC", None).is_empty());
        assert_eq!(
            preempt_rt_evidence(None, "#1 SMP PREEMPT_RT Debian 6.12.43-1", None),
            vec!["uname -v: PREEMPT_RT"]
        );
        assert_eq!(
            preempt_rt_evidence(None, "#1 SMP PREEMPT RT Sat May 30 2015", None),
            vec!["uname -v: PREEMPT RT"]
        );
        let old = "CONFIG_PREEMPT_RT_BASE=y\nCONFIG_PREEMPT_RT_FULL=y\n";
        assert_eq!(
            preempt_rt_evidence(None, "#1 SMP", Some((old, "/boot/config-4.19.1-rt3"))),
            vec!["CONFIG_PREEMPT_RT_FULL=y in /boot/config-4.19.1-rt3"]
        );
        let all = preempt_rt_evidence(
            Some("1\n"),
            "#1 SMP PREEMPT_RT",
            Some(("CONFIG_PREEMPT_RT=y\n", "/proc/config.gz")),
        );
        assert_eq!(
            all,
            vec![
                "/sys/kernel/realtime = 1",
                "uname -v: PREEMPT_RT",
                "CONFIG_PREEMPT_RT=y in /proc/config.gz"
            ]
        );
    }

    #[test]
    fn version_and_config_from_a_tree() {
        let d = crate::config::tempdir::Dir::new("info-tree");
        d.file("proc/sys/kernel/osrelease", "4.19.1-rt3\n");
        d.file(
            "proc/sys/kernel/version",
            "#1 SMP PREEMPT RT Mon Jan 7 2019\n",
        );
        d.file("boot/config-4.19.1-rt3", "CONFIG_PREEMPT_RT_FULL=y\n");
        d.file("sys/devices/system/cpu/possible", "0-7\n");
        d.file("sys/devices/system/cpu/online", "0-3\n");
        let info = SysInfo::read(&SysRoot::at(d.path()));
        assert!(info.realtime);
        assert_eq!(
            info.realtime_evidence,
            vec![
                "uname -v: PREEMPT RT",
                "CONFIG_PREEMPT_RT_FULL=y in /boot/config-4.19.1-rt3"
            ]
        );
        assert_eq!(
            (info.cpus_possible.as_str(), info.cpus_online.as_str()),
            ("0-7", "0-3")
        );
        assert_eq!(info.cpus_allowed, "0-3");
        assert_eq!(info.cpuset, None);
    }

    #[test]
    fn config_lines_are_matched_exactly() {
        let cfg = "# CONFIG_PREEMPT_RT is not set\nCONFIG_PREEMPT_DYNAMIC=y\n";
        assert!(!config_has(cfg, "CONFIG_PREEMPT_RT"));
        assert!(config_has(cfg, "CONFIG_PREEMPT_DYNAMIC"));
    }
}
