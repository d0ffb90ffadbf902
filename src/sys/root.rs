//! `SysRoot`: the one way rtbench touches kernel interface files.
//!
//! Production uses `/`; fault tests point it at a temporary tree. Paths given to its
//! methods are absolute kernel paths such as `/proc/cmdline`; they are joined below
//! the root.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The most [`SysRoot::read`] reads of one file, bytes (64 MiB: `/proc/interrupts` of
/// 1024 CPUs and a thousand IRQs is about 12 MiB).
pub const MAX_KERNEL_FILE_BYTES: u64 = 64 << 20;

/// The root below which `/proc`, `/sys` and `/dev` are found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SysRoot {
    root: PathBuf,
    /// Fault plan for tests: kernel path → errno that `write` returns instead of writing.
    faults: BTreeMap<String, i32>,
}

impl Default for SysRoot {
    fn default() -> Self {
        SysRoot::host()
    }
}

impl SysRoot {
    /// The running system (`/`).
    pub fn host() -> Self {
        SysRoot {
            root: "/".into(),
            faults: BTreeMap::new(),
        }
    }

    /// A tree rooted at `root` (for tests: a temp dir holding `proc/`, `sys/`, `dev/`).
    ///
    /// Below a root other than `/` the files are plain files standing in for kernel
    /// attributes, so [`SysRoot::write`] replaces their content (`O_TRUNC`) the way a
    /// sysctl or sysfs store replaces the value.
    pub fn at(root: impl Into<PathBuf>) -> Self {
        SysRoot {
            root: root.into(),
            faults: BTreeMap::new(),
        }
    }

    /// Fault injection for tests: every [`SysRoot::write`] to a kernel path in `faults`
    /// fails with the mapped errno (e.g. `EIO` for an unmovable IRQ before Linux 6.12,
    /// `EPERM` from 6.12, `EROFS` for a read-only /proc/sys) and writes nothing, as the
    /// kernel does when a store is refused. Reads are not affected.
    pub fn with_faults(mut self, faults: impl IntoIterator<Item = (String, i32)>) -> Self {
        self.faults.extend(faults);
        self
    }

    /// Whether this is the running system.
    pub fn is_host(&self) -> bool {
        self.root == Path::new("/")
    }

    /// The real path of kernel path `p` (e.g. `/proc/cmdline`) below this root.
    pub fn path(&self, p: &str) -> PathBuf {
        self.root.join(p.trim_start_matches('/'))
    }

    /// Whether kernel path `p` exists.
    pub fn exists(&self, p: &str) -> bool {
        self.path(p).exists()
    }

    /// Reads kernel file `p` whole, as text, at most [`MAX_KERNEL_FILE_BYTES`]. Kernel
    /// attributes in procfs and sysfs are regular files; anything else (a FIFO, a
    /// device or a link to one in a test tree or a tampered `/etc`) is an error
    /// without waiting or reading ([`super::input::read_regular`]: `O_NONBLOCK`,
    /// `fstat`). Errors: the open or read, not a regular file, larger than the bound,
    /// not UTF-8.
    pub fn read(&self, p: &str) -> std::io::Result<String> {
        super::input::read_regular_text(&self.path(p), MAX_KERNEL_FILE_BYTES)
            .map_err(super::input::InputError::into_io)
    }

    /// Reads kernel file `p` and trims surrounding white space (one-value files).
    pub fn read_trim(&self, p: &str) -> std::io::Result<String> {
        Ok(self.read(p)?.trim().to_string())
    }

    /// Writes `value` to kernel file `p` with a single `write(2)` and no truncation,
    /// as sysctl and sysfs files expect (one value per write). Errors carry the errno.
    /// Opened with `O_NONBLOCK` (no effect on procfs and sysfs attributes): a FIFO in
    /// its place is `ENXIO` at once, never waited on.
    pub fn write(&self, p: &str, value: &[u8]) -> std::io::Result<()> {
        use std::os::unix::fs::OpenOptionsExt;
        if let Some(&errno) = self.faults.get(p) {
            return Err(std::io::Error::from_raw_os_error(errno));
        }
        let mut f = OpenOptions::new()
            .write(true)
            .truncate(!self.is_host())
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
            .open(self.path(p))?;
        let n = f.write(value)?;
        if n != value.len() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::WriteZero,
                format!("short write: {n} of {} bytes", value.len()),
            ));
        }
        Ok(())
    }

    /// Sets the CPU affinity of task `pid` (another process or thread, e.g. an
    /// `irq/N-name` kernel thread) with `sched_setaffinity(pid, …)`. The kernel refuses
    /// with EINVAL for threads it keeps where they are (PF_NO_SETAFFINITY: per-CPU
    /// kthreads) or a set without an active CPU, ESRCH when the task is gone, EPERM
    /// without CAP_SYS_NICE. Below a test root, the tree's `/proc/PID/status` stands in
    /// for the task: its `Cpus_allowed_list` (and `Cpus_allowed`) lines are rewritten,
    /// ENOENT when it does not exist; a fault planned for `/proc/PID/status` is
    /// returned instead.
    pub fn set_task_affinity(&self, pid: u32, cpus: &crate::cpuset::CpuSet) -> std::io::Result<()> {
        let status = format!("/proc/{pid}/status");
        if let Some(&errno) = self.faults.get(&status) {
            return Err(std::io::Error::from_raw_os_error(errno));
        }
        if self.is_host() {
            let mut set = nix::sched::CpuSet::new();
            for c in cpus.iter() {
                set.set(c)
                    .map_err(|e| std::io::Error::from_raw_os_error(e as i32))?;
            }
            let pid =
                i32::try_from(pid).map_err(|_| std::io::Error::from_raw_os_error(libc::ESRCH))?;
            return nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(pid), &set)
                .map_err(|e| std::io::Error::from_raw_os_error(e as i32));
        }
        use std::os::unix::fs::OpenOptionsExt;
        let text = self.read(&status)?;
        let nbits = cpus.last().map_or(1, |l| l + 1);
        let out: Vec<String> = text
            .lines()
            .map(|l| {
                if l.starts_with("Cpus_allowed_list:") {
                    format!("Cpus_allowed_list:\t{}", cpus.to_list())
                } else if l.starts_with("Cpus_allowed:") {
                    format!("Cpus_allowed:\t{}", cpus.to_mask(nbits))
                } else {
                    l.to_string()
                }
            })
            .collect();
        // Through `write` (O_NONBLOCK): the tree's stand-in may be a FIFO.
        let mut f = OpenOptions::new()
            .write(true)
            .truncate(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
            .open(self.path(&status))?;
        f.write_all((out.join("\n") + "\n").as_bytes())
    }

    /// Opens kernel file `p` for reading and writing (devices such as
    /// `/dev/cpu_dma_latency`).
    pub fn open_rw(&self, p: &str) -> std::io::Result<File> {
        OpenOptions::new().read(true).write(true).open(self.path(p))
    }

    /// Lists the entries of kernel directory `p` (names only, unsorted).
    pub fn list_dir(&self, p: &str) -> std::io::Result<Vec<String>> {
        let mut v = Vec::new();
        for e in std::fs::read_dir(self.path(p))? {
            v.push(e?.file_name().to_string_lossy().into_owned());
        }
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joins_below_root_and_writes_once() {
        let dir = std::env::temp_dir().join(format!("rtbench-root-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("proc/sys/kernel")).unwrap();
        std::fs::write(dir.join("proc/sys/kernel/printk"), "7\t4\t1\t7\n").unwrap();
        let r = SysRoot::at(&dir);
        assert_eq!(
            r.read_trim("/proc/sys/kernel/printk").unwrap(),
            "7\t4\t1\t7"
        );
        r.write("/proc/sys/kernel/printk", b"1").unwrap();
        // A plain file standing in for a sysctl: the write replaces the value.
        assert_eq!(r.read("/proc/sys/kernel/printk").unwrap(), "1");
        assert!(r.read("/proc/missing").is_err());
        let faulty = r.with_faults([("/proc/sys/kernel/printk".to_string(), libc::EIO)]);
        let e = faulty.write("/proc/sys/kernel/printk", b"7").unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EIO));
        assert_eq!(faulty.read("/proc/sys/kernel/printk").unwrap(), "1");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
