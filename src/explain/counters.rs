//! Causes of a late sample that are not the kernel's scheduling latency, from counters
//! and settings the kernel keeps (read on the main thread, never by a measuring one):
//!
//! - CFS bandwidth throttling: `cpu.stat` of the thread's cgroup, `nr_throttled` and
//!   `throttled_usec` (v2) or `throttled_time` (v1, **ns**)
//!   (Documentation/admin-guide/cgroup-v2.rst "cpu", Documentation/scheduler/sched-bwc.rst);
//!   it holds back SCHED_OTHER threads.
//! - RT throttling: `/proc/sys/kernel/sched_rt_runtime_us` of `sched_rt_period_us`
//!   (Documentation/scheduler/sched-rt-group.rst; `-1` turns it off).
//! - The kernel log: `/dev/kmsg` records written during the run
//!   (Documentation/ABI/testing/dev-kmsg: `prio,seq,µs since boot,flags;text`), with
//!   their time converted to wall-clock time (approximately: the printk clock is close
//!   to, not exactly, CLOCK_MONOTONIC).
//! - A step of the wall clock (CLOCK_REALTIME − CLOCK_MONOTONIC changing by more than
//!   [`STEP_NS`] between two looks), which spoils samples taken on CLOCK_REALTIME.

use crate::sys::clock::Clock;
use crate::sys::SysRoot;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;

/// A change of CLOCK_REALTIME − CLOCK_MONOTONIC larger than this between two looks is a
/// step (NTP slews at most 500 ppm: 25 µs in 50 ms), **ns**.
pub const STEP_NS: i64 = 1_000_000;

/// Kernel log lines kept per run (the newest).
pub const KMSG_KEPT: usize = 64;

/// `(sched_rt_runtime_us, sched_rt_period_us)` when RT throttling is on (runtime not
/// `-1` and below the period), **µs**.
pub fn rt_throttling(root: &SysRoot) -> Option<(i64, i64)> {
    let (runtime, period) = crate::sys::refusal::rtgroup::global(root)?;
    let period = i64::try_from(period).ok()?;
    (runtime >= 0 && runtime < period).then_some((runtime, period))
}

/// The CFS bandwidth counters of a cgroup's `cpu.stat`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CfsStat {
    /// The file read.
    pub file: String,
    /// Periods in which the cgroup was throttled.
    pub nr_throttled: u64,
    /// Time throttled, **ns**.
    pub throttled_ns: u64,
    /// The quota as `cpu.max` (v2) or `cpu.cfs_quota_us`/`cpu.cfs_period_us` (v1) say it.
    pub limit: String,
}

impl CfsStat {
    /// The counters of the calling thread's cgroup (the cpu controller's v1 hierarchy,
    /// else the unified one); `None` without the cpu controller or its counters.
    pub fn read(root: &SysRoot) -> Option<CfsStat> {
        let dir = crate::sys::cgroup::cgroup_dir(root, "cpu", true)?;
        Self::read_dir(root, &dir)
    }

    /// The counters in cgroup directory `dir`.
    pub fn read_dir(root: &SysRoot, dir: &str) -> Option<CfsStat> {
        let file = format!("{dir}/cpu.stat");
        let text = root.read(&file).ok()?;
        let get = |k: &str| {
            text.lines().find_map(|l| {
                l.strip_prefix(k)?
                    .strip_prefix(' ')?
                    .trim()
                    .parse::<u64>()
                    .ok()
            })
        };
        let nr_throttled = get("nr_throttled")?;
        let throttled_ns = get("throttled_usec")
            .map(|us| us.saturating_mul(1000))
            .or_else(|| get("throttled_time"))?;
        let limit = match root.read_trim(&format!("{dir}/cpu.max")) {
            Ok(v) => format!("cpu.max {v}"),
            Err(_) => {
                let q = root
                    .read_trim(&format!("{dir}/cpu.cfs_quota_us"))
                    .unwrap_or_default();
                let p = root
                    .read_trim(&format!("{dir}/cpu.cfs_period_us"))
                    .unwrap_or_default();
                format!("cpu.cfs_quota_us {q} of cpu.cfs_period_us {p}")
            }
        };
        Some(CfsStat {
            file,
            nr_throttled,
            throttled_ns,
            limit,
        })
    }
}

/// One kernel log record written during the run.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct KernelLine {
    /// Its time, CLOCK_MONOTONIC **ns** (the printk clock, approximately).
    pub mono_ns: i64,
    /// Its time as wall-clock **ns** since the epoch (approximate conversion).
    pub wall_ns: i64,
    /// The text.
    pub text: String,
}

/// The counters of one run, compared at every look.
#[derive(Debug)]
pub struct Counters {
    cfs_start: Option<CfsStat>,
    cfs_last: Option<CfsStat>,
    rt: Option<(i64, i64)>,
    kmsg: Option<std::fs::File>,
    offset_ns: i64,
    /// Wall-clock steps seen: (CLOCK_MONOTONIC **ns** of the look, the step in **ns**).
    pub steps: Vec<(i64, i64)>,
    /// Kernel log records of the run, the newest [`KMSG_KEPT`].
    pub kernel_lines: Vec<KernelLine>,
}

/// CLOCK_REALTIME − CLOCK_MONOTONIC now, **ns**.
pub fn wall_offset_ns() -> i64 {
    Clock::Realtime.now_ns() - Clock::Monotonic.now_ns()
}

impl Counters {
    /// Reads the starting values below `root` (on the host, `/dev/kmsg` is opened at its
    /// end, non-blocking, so only the run's records are read).
    pub fn start(root: &SysRoot) -> Counters {
        let cfs = CfsStat::read(root);
        let kmsg = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(root.path("/dev/kmsg"))
            .ok()
            .map(|f| {
                use std::os::fd::AsRawFd;
                // SAFETY: a valid descriptor; SEEK_END on /dev/kmsg moves past the
                // records already logged.
                unsafe { libc::lseek(f.as_raw_fd(), 0, libc::SEEK_END) };
                f
            });
        Counters {
            cfs_last: cfs.clone(),
            cfs_start: cfs,
            rt: rt_throttling(root),
            kmsg,
            offset_ns: wall_offset_ns(),
            steps: Vec::new(),
            kernel_lines: Vec::new(),
        }
    }

    /// RT throttling as set at the start.
    pub fn rt_throttling(&self) -> Option<(i64, i64)> {
        self.rt
    }

    /// Looks again, at every poll (two clock reads and one non-blocking `read(2)` of
    /// `/dev/kmsg` when nothing was logged): clock steps, new kernel log records.
    pub fn look(&mut self) {
        let off = wall_offset_ns();
        let step = off - self.offset_ns;
        if step.abs() > STEP_NS {
            self.steps.push((Clock::Monotonic.now_ns(), step));
        }
        self.offset_ns = off;
        self.read_kmsg();
    }

    /// Reads the CFS counters of the thread's cgroup, before an analysis (the
    /// counters are cumulative, so reading them only then loses nothing). The cgroup is
    /// looked up again: the process may have been moved; in a cgroup it was moved into,
    /// throttling is counted from the cgroup's start.
    pub fn look_cgroup(&mut self, root: &SysRoot) {
        let Some(now) = CfsStat::read(root) else {
            return;
        };
        if self.cfs_start.as_ref().map_or(true, |s| s.file != now.file) {
            self.cfs_start = Some(CfsStat {
                nr_throttled: 0,
                throttled_ns: 0,
                ..now.clone()
            });
        }
        self.cfs_last = Some(now);
    }

    /// The CFS bandwidth throttling of the thread's cgroup since the start (or since
    /// it was made, when the process moved into it), as a sentence; `None` when it was
    /// never throttled.
    pub fn cfs_throttled(&self) -> Option<String> {
        let (n, ns) = self.cfs_throttled_total()?;
        let now = self.cfs_last.as_ref()?;
        Some(format!(
            "CFS bandwidth throttling of the thread's cgroup ({}: {n} periods throttled, {} µs in all, by {})",
            now.file,
            ns / 1000,
            now.limit
        ))
    }

    /// Periods throttled since the start (`cpu.stat` `nr_throttled` grew), and the
    /// time throttled (**ns**), if any.
    pub fn cfs_throttled_total(&self) -> Option<(u64, u64)> {
        let (a, b) = (self.cfs_start.as_ref()?, self.cfs_last.as_ref()?);
        let n = b.nr_throttled.saturating_sub(a.nr_throttled);
        (n > 0).then(|| (n, b.throttled_ns.saturating_sub(a.throttled_ns)))
    }

    /// A wall-clock step inside `[from_ns, to_ns]` (CLOCK_MONOTONIC), as a sentence.
    pub fn step_in(&self, from_ns: i64, to_ns: i64) -> Option<String> {
        // A step is seen at the first look after it: up to one look interval later.
        self.steps
            .iter()
            .find(|(at, _)| *at >= from_ns && *at <= to_ns + 200_000_000)
            .map(|(_, s)| {
                format!(
                    "the wall clock was stepped by {} µs (settimeofday, NTP or PTP)",
                    s / 1000
                )
            })
    }

    /// Kernel log lines within `slack_ns` of `[from_ns, to_ns]` (CLOCK_MONOTONIC).
    pub fn lines_near(&self, from_ns: i64, to_ns: i64, slack_ns: i64) -> Vec<KernelLine> {
        self.kernel_lines
            .iter()
            .filter(|l| l.mono_ns >= from_ns - slack_ns && l.mono_ns <= to_ns + slack_ns)
            .cloned()
            .collect()
    }

    fn read_kmsg(&mut self) {
        let Some(f) = self.kmsg.as_mut() else {
            return;
        };
        let (offset, lines) = (self.offset_ns, &mut self.kernel_lines);
        let _ = drain_kmsg(f, 256, |rec| {
            if let Some(l) = parse_kmsg(rec, offset) {
                if lines.len() == KMSG_KEPT {
                    lines.remove(0);
                }
                lines.push(l);
            }
        });
    }
}

/// Reads up to `max` records from `/dev/kmsg` opened with `O_NONBLOCK`, each passed to
/// `each` as read: one record per `read(2)`; `EAGAIN` ends it (none left), `EPIPE`
/// (records overwritten while reading) goes on with the next one
/// (Documentation/ABI/testing/dev-kmsg). `Err` for any other read error.
pub fn drain_kmsg(
    f: &mut std::fs::File,
    max: usize,
    mut each: impl FnMut(&[u8]),
) -> std::io::Result<()> {
    let mut buf = [0u8; 8192];
    for _ in 0..max {
        match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => each(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            Err(e) if e.raw_os_error() == Some(libc::EPIPE) => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// One `/dev/kmsg` record: `prio,seq,µs,flags[,…];text\n` plus continuation lines.
pub fn parse_kmsg(rec: &[u8], wall_offset_ns: i64) -> Option<KernelLine> {
    let rec = String::from_utf8_lossy(rec);
    let (head, text) = rec.split_once(';')?;
    let us: i64 = head.split(',').nth(2)?.parse().ok()?;
    let text = text.lines().next().unwrap_or("").to_string();
    let mono_ns = us.checked_mul(1000)?;
    Some(KernelLine {
        mono_ns,
        wall_ns: mono_ns.saturating_add(wall_offset_ns),
        text,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kmsg_records_get_wall_clock_time() {
        let l = parse_kmsg(
            b"4,1234,84123456,-;sched: RT throttling activated\n",
            1_000_000_000_000,
        )
        .unwrap();
        assert_eq!(l.mono_ns, 84_123_456_000);
        assert_eq!(l.wall_ns, 1_084_123_456_000);
        assert_eq!(l.text, "sched: RT throttling activated");
        assert!(parse_kmsg(b"garbage", 0).is_none());
    }

    fn tree(files: &[(&str, &str)]) -> (std::path::PathBuf, SysRoot) {
        let d = std::env::temp_dir().join(format!(
            "rtbench-counters-{}-{}",
            std::process::id(),
            files.len()
        ));
        let _ = std::fs::remove_dir_all(&d);
        for (p, v) in files {
            let f = d.join(p.trim_start_matches('/'));
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, v).unwrap();
        }
        let r = SysRoot::at(&d);
        (d, r)
    }

    #[test]
    fn rt_throttling_and_cfs_counters_are_read_from_their_files() {
        let (d, root) = tree(&[
            ("/proc/sys/kernel/sched_rt_runtime_us", "950000\n"),
            ("/proc/sys/kernel/sched_rt_period_us", "1000000\n"),
            (
                "/g/cpu.stat",
                "usage_usec 5\nnr_periods 44\nnr_throttled 43\nthrottled_usec 2150000\n",
            ),
            ("/g/cpu.max", "5000 100000\n"),
        ]);
        assert_eq!(rt_throttling(&root), Some((950_000, 1_000_000)));
        let c = CfsStat::read_dir(&root, "/g").unwrap();
        assert_eq!((c.nr_throttled, c.throttled_ns), (43, 2_150_000_000));
        assert_eq!(c.limit, "cpu.max 5000 100000");
        std::fs::write(d.join("proc/sys/kernel/sched_rt_runtime_us"), "-1\n").unwrap();
        assert_eq!(rt_throttling(&root), None);
        let _ = std::fs::remove_dir_all(&d);
    }
}
