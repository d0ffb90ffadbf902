//! Hardware first: latency the OS cannot cause or fix.
//!
//! - The hwlat tracer (Documentation/trace/hwlat_detector.rst): a kernel thread spins
//!   with interrupts off for `hwlat_detector/width` of every `window` and reports each
//!   gap in its clock reads above `tracing_thresh` (10 µs when unset) as
//!   `inner/outer(us)`. It runs in rtbench's own instance (never the top-level buffer),
//!   on the instance's `tracing_cpumask`. Its documentation warns against running it
//!   in production: it is a short, opt-in gate before the measurement. rt-tests'
//!   `hwlatdetect` is the model.
//! - The x86 SMI count, MSR 0x34 (`MSR_SMI_COUNT`, Intel SDM vol. 4) read through
//!   `/dev/cpu/N/msr` (the `msr` driver, `CONFIG_X86_MSR`) before and after a run, as
//!   hwlatdetect does with `rdmsr`. AMD CPUs have no such counter.
//!
//! Where the kernel lacks them, each says so ("unsupported: CONFIG_HWLAT_TRACER", "no
//! msr device") instead of staying silent.

use super::event::{self, Line};
use crate::cpuset::CpuSet;
use crate::sys::tracefs::{Instance, Tracefs};
use crate::sys::SysRoot;
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// The hwlat gate's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Hwlat {
    /// How long it ran, **ms**.
    pub ran_ms: u64,
    /// The largest gap per CPU (CPUs with none are absent), **µs**: `(cpu, µs)`.
    pub max_us: Vec<(usize, u64)>,
    /// Gaps reported in all.
    pub samples: u64,
    /// Why it did not run (`unsupported: CONFIG_HWLAT_TRACER`, …), if it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsupported: Option<String>,
}

impl Hwlat {
    /// The largest gap on any CPU, **µs**.
    pub fn worst_us(&self) -> Option<(usize, u64)> {
        self.max_us.iter().copied().max_by_key(|(_, us)| *us)
    }

    fn unsupported(why: impl Into<String>) -> Hwlat {
        Hwlat {
            unsupported: Some(why.into()),
            ..Hwlat::default()
        }
    }
}

/// Runs the hwlat tracer on `cpus` for `duration` in an instance of rtbench's own
/// (the kernel's `per-cpu` mode where it has `hwlat_detector/mode`, 5.14+: every CPU
/// in turn otherwise), then reads what it found. `stop` is asked between polls (a
/// signal ends the gate early).
///
/// Fails closed: a gate that could not look — no tracer, a write or the read of its
/// trace refused, or a global `tracing_thresh` above `limit_us` (**µs**; the tracer
/// reports only gaps above it) — returns a [`Hwlat`] whose `unsupported` says why.
pub fn run_hwlat(
    root: &SysRoot,
    cpus: &CpuSet,
    duration: Duration,
    limit_us: u64,
    stop: &dyn Fn() -> bool,
) -> Hwlat {
    let fs = match Tracefs::open(root) {
        Ok(f) => f,
        Err(e) => return Hwlat::unsupported(e.0),
    };
    if !fs.has_tracer("hwlat") {
        return Hwlat::unsupported("unsupported: CONFIG_HWLAT_TRACER");
    }
    // Read, never written: the threshold is every tracer's, not rtbench's.
    let thresh_us = match std::fs::read_to_string(fs.dir.join("tracing_thresh"))
        .ok()
        .and_then(|t| t.trim().parse::<u64>().ok())
    {
        Some(t) => t,
        None => {
            return Hwlat::unsupported("tracing_thresh unreadable: the gate's threshold is unknown")
        }
    };
    if thresh_us > limit_us {
        return Hwlat::unsupported(format!(
            "tracing_thresh is {thresh_us} µs: the hwlat tracer reports no gap below it, above hwlat_limit_us {limit_us} µs"
        ));
    }
    let inst = match Instance::create(&fs) {
        Ok(i) => i,
        Err(e) => return Hwlat::unsupported(format!("cannot make a tracefs instance: {e}")),
    };
    let _ = inst.write("tracing_on", "0");
    if let Some(last) = cpus.last() {
        if let Err(e) = inst.write("tracing_cpumask", &cpus.to_mask(last + 1)) {
            return Hwlat::unsupported(format!(
                "cannot restrict the hwlat tracer to CPUs {cpus} ({e})"
            ));
        }
    }
    // The mode is the hwlat tracer's own setting, shared by every instance: set it only
    // while the tracer runs here, and put it back.
    let mode_file = fs.dir.join("hwlat_detector/mode");
    let old_mode = std::fs::read_to_string(&mode_file).ok().and_then(|m| {
        m.split_whitespace()
            .find(|w| w.starts_with('['))
            .map(|w| w.trim_matches(|c| c == '[' || c == ']').to_string())
    });
    if let Err(e) = inst.write("current_tracer", "hwlat") {
        return Hwlat::unsupported(format!(
            "the hwlat tracer cannot run in an instance here ({e}); rtbench never takes the top-level buffer"
        ));
    }
    if old_mode.is_some() {
        let _ = std::fs::write(&mode_file, "per-cpu");
    }
    let t0 = Instant::now();
    let started = inst.write("tracing_on", "1");
    if started.is_ok() {
        while t0.elapsed() < duration && !stop() {
            std::thread::sleep(Duration::from_millis(50).min(duration));
        }
    }
    let _ = inst.write("tracing_on", "0");
    let text = inst.read("trace", 4 << 20);
    let _ = inst.write("current_tracer", "nop");
    if let Some(m) = old_mode {
        let _ = std::fs::write(&mode_file, m);
    }
    drop(inst);
    let ran_ms = t0.elapsed().as_millis() as u64;
    let mut h = match (started, text) {
        (Ok(()), Ok(text)) => parse_hwlat(&text),
        (Err(e), _) => Hwlat::unsupported(format!("the hwlat tracer did not start: {e}")),
        (_, Err(e)) => Hwlat::unsupported(format!("cannot read the hwlat trace: {e}")),
    };
    h.ran_ms = ran_ms;
    h
}

/// The hwlat tracer's samples in `trace` text: `#1 inner/outer(us): 11/12 ts:… count:6`.
pub fn parse_hwlat(text: &str) -> Hwlat {
    let mut h = Hwlat::default();
    for line in text.lines() {
        let Some(i) = line.find("inner/outer(us):") else {
            continue;
        };
        let cpu = match event::parse(line) {
            Line::Event(e) => e.cpu,
            _ => continue,
        };
        let v = line[i + "inner/outer(us):".len()..]
            .split_whitespace()
            .next();
        let Some((inner, outer)) = v.and_then(|v| v.split_once('/')) else {
            continue;
        };
        let (Ok(inner), Ok(outer)) = (inner.parse::<u64>(), outer.parse::<u64>()) else {
            continue;
        };
        h.samples += 1;
        let us = inner.max(outer);
        match h.max_us.iter_mut().find(|(c, _)| *c == cpu) {
            Some((_, m)) => *m = (*m).max(us),
            None => h.max_us.push((cpu, us)),
        }
    }
    h.max_us.sort();
    h
}

/// What the self-test learned about the hardware: the hwlat gate (when configured) and
/// the SMIs counted during the measurement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct HardwareCheck {
    /// The hwlat gate before the tests (`[selftest] hwlat`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hwlat: Option<Hwlat>,
    /// Its limit, **µs**.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hwlat_limit_us: Option<u64>,
    /// SMIs per CPU during the tests (the count after minus before), or why unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smis: Option<SmiCount>,
}

impl HardwareCheck {
    /// `hwlat 10 s: max 12 µs on CPU 1 (limit 20 µs)`, `hwlat: unsupported: …`; empty
    /// when the gate did not run.
    pub fn hwlat_text(&self) -> String {
        let Some(h) = &self.hwlat else {
            return String::new();
        };
        if let Some(w) = &h.unsupported {
            return format!("hwlat: {w}");
        }
        let limit = self
            .hwlat_limit_us
            .map_or_else(String::new, |l| format!(" (limit {l} µs)"));
        match h.worst_us() {
            Some((cpu, us)) => format!(
                "hwlat {:.0} s: max {us} µs on CPU {cpu}{limit}",
                h.ran_ms as f64 / 1000.0
            ),
            None => format!(
                "hwlat {:.0} s: no gap over the threshold{limit}",
                h.ran_ms as f64 / 1000.0
            ),
        }
    }

    /// `SMIs: 0`, `SMIs: 3 (CPU 0: 2, CPU 1: 1)`, `SMIs: unknown (no msr device …)`.
    pub fn smi_text(&self) -> String {
        match &self.smis {
            None => String::new(),
            Some(SmiCount::Unsupported(w)) => format!("SMIs: unknown ({w})"),
            Some(SmiCount::Counts(c)) => {
                let total: u64 = c.iter().map(|(_, n)| n).sum();
                if total == 0 {
                    "SMIs: 0".into()
                } else {
                    let per: Vec<String> = c
                        .iter()
                        .filter(|(_, n)| *n > 0)
                        .map(|(cpu, n)| format!("CPU {cpu}: {n}"))
                        .collect();
                    format!("SMIs: {total} ({})", per.join(", "))
                }
            }
        }
    }
}

/// SMIs counted by the CPUs (MSR 0x34), or why they cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SmiCount {
    /// The count per CPU.
    Counts(Vec<(usize, u64)>),
    /// `no msr device: modprobe msr`, `unsupported: SMIs are an x86 feature`, …
    Unsupported(String),
}

/// `MSR_SMI_COUNT`.
const MSR_SMI_COUNT: u64 = 0x34;

/// Reads the SMI count of every CPU in `cpus` below `root`.
pub fn smi_count(root: &SysRoot, cpus: &CpuSet) -> SmiCount {
    if !cfg!(any(target_arch = "x86_64", target_arch = "x86")) {
        return SmiCount::Unsupported("unsupported: SMIs are an x86 feature".into());
    }
    let mut v = Vec::new();
    for cpu in cpus.iter() {
        let path = root.path(&format!("/dev/cpu/{cpu}/msr"));
        let f = match std::fs::File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                // The driver is there (loaded or built in) but not its device: this
                // process has a /dev of its own.
                let why = if root.path("/sys/module/msr").exists() {
                    "no /dev/cpu/N/msr here though the msr driver is loaded: a private /dev (systemd PrivateDevices=, a container)"
                } else {
                    "no msr device: modprobe msr"
                };
                return SmiCount::Unsupported(why.into());
            }
            Err(e) if matches!(e.raw_os_error(), Some(libc::EPERM) | Some(libc::EACCES)) => {
                return SmiCount::Unsupported(format!(
                    "{}: {e} (reading MSRs needs CAP_SYS_RAWIO)",
                    path.display()
                ))
            }
            Err(e) => return SmiCount::Unsupported(format!("{}: {e}", path.display())),
        };
        let mut b = [0u8; 8];
        use std::os::unix::fs::FileExt;
        match f.read_exact_at(&mut b, MSR_SMI_COUNT) {
            Ok(()) => v.push((cpu, u64::from_le_bytes(b) & 0xffff_ffff)),
            Err(e) => {
                return SmiCount::Unsupported(format!(
                "MSR_SMI_COUNT not readable ({e}): not an Intel CPU, or a hypervisor that hides it"
            ))
            }
        }
    }
    SmiCount::Counts(v)
}

/// SMIs between two reads, per CPU with any, or why they are not known.
pub fn smi_delta(before: &SmiCount, after: &SmiCount) -> SmiCount {
    match (before, after) {
        (SmiCount::Counts(a), SmiCount::Counts(b)) => SmiCount::Counts(
            a.iter()
                .zip(b)
                .map(|((c, x), (_, y))| (*c, y.wrapping_sub(*x) & 0xffff_ffff))
                .collect(),
        ),
        (SmiCount::Unsupported(w), _) | (_, SmiCount::Unsupported(w)) => {
            SmiCount::Unsupported(w.clone())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hwlat_samples_are_read_per_cpu() {
        let text = "# tracer: hwlat\n\
            #\n\
            \x20          <...>-1729  [001] d...   678.473449: #1     inner/outer(us):   11/12    ts:1581527483.343962693 count:6\n\
            \x20          <...>-1729  [001] d...   679.473449: #2     inner/outer(us):   40/3    ts:1581527484.343962693 count:1\n\
            \x20          <...>-1730  [000] d...   680.473449: #3     inner/outer(us):   15/0    ts:1581527485.343962693 count:1 nmi-total:4 nmi-count:1\n";
        let h = parse_hwlat(text);
        assert_eq!(h.samples, 3);
        assert_eq!(h.max_us, vec![(0, 15), (1, 40)]);
        assert_eq!(h.worst_us(), Some((1, 40)));
    }

    #[test]
    fn no_msr_device_is_said() {
        let d = std::env::temp_dir().join(format!("rtbench-msr-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let c = smi_count(&SysRoot::at(&d), &[0].into_iter().collect());
        if cfg!(target_arch = "x86_64") {
            assert!(
                matches!(c, SmiCount::Unsupported(ref w) if w.contains("no msr device")),
                "{c:?}"
            );
        }
        let _ = std::fs::remove_dir_all(&d);
    }
}
