//! tracefs: where it is, and rtbench's own instance in it.
//!
//! Sources: Documentation/trace/ftrace.rst ("The File System": `instances`,
//! `trace_clock`, `buffer_size_kb`, `tracing_cpumask`, `tracing_on`, `free_buffer`,
//! `options/disable_on_free`, `per_cpu/cpuN/trace`), Documentation/trace/events.rst
//! (`events/<system>/<event>/enable`). An instance is a private ring buffer with its
//! own events and settings: `mkdir instances/NAME` makes it, `rmdir` removes it (EBUSY
//! while one of its files is open). rtbench never writes the top-level buffer's
//! settings or another instance's; its instances are named `rtbench-PID[-N]`, so one
//! left by a crashed rtbench is found by its pid and removed at the next start. tracefs
//! is one for the whole machine while pids are per pid namespace: in a container (not
//! the initial pid namespace) the name carries the namespace, `rtbench-PID-nsINODE[-N]`
//! (the inode of `/proc/self/ns/pid`, namespaces(7)), and an rtbench reclaims only
//! instances of its own namespace, where `kill(PID, 0)` means what it says.
//!
//! An instance is reclaimed only when it is provably a dead rtbench's: its name says so,
//! its process is gone, it carries rtbench's marker ([`MARKER`] in [`MARKER_FILE`],
//! written right after `mkdir`: a filter on an event rtbench never enables, that no
//! other tool writes) and it is not recording (`tracing_on` 0: a killed rtbench's
//! recording is stopped by the kernel when `free_buffer` closes). A name alone proves
//! nothing (`trace-cmd start -B rtbench-123` makes such an instance and leaves it
//! recording): such an instance is left alone and named ([`Reclaim::left`]).
//!
//! tracefs that is not mounted is mounted at `/sys/kernel/tracing`, as libtracefs
//! does for rtla and trace-cmd (`tracefs_tracing_dir()`), and stays mounted.

use super::SysRoot;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The prefix of every instance rtbench makes.
pub const INSTANCE_PREFIX: &str = "rtbench-";

/// The file of an instance that carries rtbench's marker: the filter of an event that
/// rtbench never enables (exists since Linux 2.6.32), so the filter changes nothing.
pub const MARKER_FILE: &str = "events/sched/sched_process_free/filter";

/// rtbench's marker, as [`MARKER_FILE`] reads back (the kernel shows a filter as it
/// was written): a filter that passes every event and names rtbench (`0x7274626e` is
/// "rtbn" in ASCII), which no other tool writes.
pub const MARKER: &str = "common_pid != -1 && common_type != 0x7274626e";

/// What [`Tracefs::reclaim`] did: the instances of dead rtbench processes it removed,
/// and those named like one that it left alone, each with why (`NAME (why)`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reclaim {
    /// Removed instances, by name.
    pub removed: Vec<String>,
    /// Instances named `rtbench-PID` of a gone process that are not provably rtbench's,
    /// each as `NAME (why)`, the name escaped ([`crate::error::echo`]).
    pub left: Vec<String>,
}

/// Why the instance in `dir` is not provably a dead rtbench's, `None` when it is:
/// rtbench's [`MARKER`] in [`MARKER_FILE`] and `tracing_on` 0.
pub fn not_provably_ours(dir: &Path) -> Option<&'static str> {
    // One read(2) with room for the whole file: an event's `filter` answers only the
    // first read of an open file (a second one at an offset reads as the end), so a
    // reader that probes with a small buffer first sees a cut marker.
    let read = |rel: &str| {
        let mut b = [0u8; 512];
        let n = File::open(dir.join(rel))
            .and_then(|mut f| f.read(&mut b))
            .ok()?;
        String::from_utf8(b[..n].to_vec()).ok()
    };
    match read("tracing_on").as_deref().map(str::trim) {
        Some("0") => {}
        Some(_) => return Some("recording: tracing_on is 1"),
        None => return Some("tracing_on unreadable"),
    }
    (read(MARKER_FILE).as_deref().map(str::trim) != Some(MARKER))
        .then_some("no rtbench marker: another tool's")
}

/// Where tracefs is mounted.
#[derive(Debug, Clone)]
pub struct Tracefs {
    /// The directory (`/sys/kernel/tracing` or `/sys/kernel/debug/tracing`), a real
    /// path below the [`SysRoot`].
    pub dir: PathBuf,
}

/// Why there is no tracefs to use: one line for "cannot explain: …".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable(pub String);

impl std::fmt::Display for Unavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Where tracefs is mounted: `/sys/kernel/tracing`, else the older
/// `/sys/kernel/debug/tracing` (Documentation/trace/ftrace.rst): the first below
/// `root` that has `file` (`tracing_on`, `instances`).
pub fn find(root: &SysRoot, file: &str) -> Option<&'static str> {
    ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"]
        .into_iter()
        .find(|d| root.exists(&format!("{d}/{file}")))
}

impl Tracefs {
    /// Finds tracefs below `root`: `/sys/kernel/tracing`, else
    /// `/sys/kernel/debug/tracing` (kernels before 4.1, or debugfs mounted and tracefs
    /// not), each only if it has `instances/`. On the host, with neither, mounts tracefs
    /// at `/sys/kernel/tracing` (`mount(2)`, needs CAP_SYS_ADMIN).
    ///
    /// Errors: no tracefs (`CONFIG_TRACING` off, or no permission to mount it), or a
    /// tracefs without instances (before Linux 3.12).
    pub fn open(root: &SysRoot) -> Result<Tracefs, Unavailable> {
        if let Some(d) = find(root, "instances") {
            return Ok(Tracefs { dir: root.path(d) });
        }
        if root.is_host() && root.exists("/sys/kernel/tracing") {
            if let Err(e) = mount_tracefs() {
                return Err(Unavailable(format!(
                    "tracefs is not mounted and mounting it at /sys/kernel/tracing failed: {e}"
                )));
            }
            if root.exists("/sys/kernel/tracing/instances") {
                return Ok(Tracefs {
                    dir: root.path("/sys/kernel/tracing"),
                });
            }
        }
        Err(Unavailable(
            "no tracefs with instances (/sys/kernel/tracing; kernel without CONFIG_TRACING?)"
                .into(),
        ))
    }

    /// `instances/NAME`.
    pub fn instance_dir(&self, name: &str) -> PathBuf {
        self.dir.join("instances").join(name)
    }

    /// Whether the kernel has tracer `name` (`available_tracers`).
    pub fn has_tracer(&self, name: &str) -> bool {
        std::fs::read_to_string(self.dir.join("available_tracers"))
            .is_ok_and(|t| t.split_whitespace().any(|n| n == name))
    }

    /// Removes the instances named `rtbench-PID[-N]` (in a container
    /// `rtbench-PID-nsINODE[-N]` of this namespace) whose process is gone (a crashed
    /// or killed rtbench) and that are provably rtbench's ([`not_provably_ours`]: the
    /// marker, not recording). An instance of a running rtbench, of another pid
    /// namespace, or any other name is never touched; one named like a gone rtbench's
    /// but not provably one is left and listed in [`Reclaim::left`].
    pub fn reclaim(&self) -> Reclaim {
        let mut r = Reclaim::default();
        let Ok(rd) = std::fs::read_dir(self.dir.join("instances")) else {
            return r;
        };
        // Which pids `kill(2)` can see is unknown without the namespace: reclaim nothing.
        let Some(ns) = own_pid_ns() else {
            return r;
        };
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some((pid, their_ns)) = parse_instance(&name) else {
                continue;
            };
            if their_ns != ns || crate::sys::signals::pid_alive(pid) {
                continue;
            }
            if let Some(why) = not_provably_ours(&e.path()) {
                if !e.path().exists() {
                    continue; // removed meanwhile (by its tool, or another rtbench)
                }
                r.left
                    .push(format!("{} ({why})", crate::error::echo(&name)));
                continue;
            }
            if remove_instance(&e.path()).is_ok() {
                r.removed.push(name);
            }
        }
        r
    }
}

/// The pid and the pid namespace (`None`: the initial one) of an instance name
/// rtbench makes: `rtbench-PID`, `rtbench-PID-N`, `rtbench-PID-nsINODE`,
/// `rtbench-PID-nsINODE-N`; `None` for any other name.
pub fn parse_instance(name: &str) -> Option<(i32, Option<u64>)> {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
    let mut parts = name.strip_prefix(INSTANCE_PREFIX)?.split('-');
    let pid = parts
        .next()
        .filter(|p| digits(p))?
        .parse()
        .ok()
        .filter(|p| *p > 0)?;
    let mut ns = None;
    let mut next = parts.next();
    if let Some(n) = next.and_then(|p| p.strip_prefix("ns")) {
        ns = Some(n.parse().ok().filter(|_| digits(n))?);
        next = parts.next();
    }
    if let Some(n) = next {
        if !digits(n) {
            return None;
        }
    }
    parts.next().is_none().then_some((pid, ns))
}

/// This process's pid namespace: `Some(None)` for the initial one
/// (`PROC_PID_INIT_INO`, 0xEFFFFFFC), `Some(Some(inode))` for another, `None` when
/// `/proc` cannot say.
fn own_pid_ns() -> Option<Option<u64>> {
    const PROC_PID_INIT_INO: u64 = 0xEFFF_FFFC;
    let link = std::fs::read_link("/proc/self/ns/pid").ok()?;
    let ino: u64 = link
        .to_str()?
        .strip_prefix("pid:[")?
        .strip_suffix(']')?
        .parse()
        .ok()?;
    Some((ino != PROC_PID_INIT_INO).then_some(ino))
}

fn mount_tracefs() -> std::io::Result<()> {
    let src = b"nodev\0";
    let target = b"/sys/kernel/tracing\0";
    let fstype = b"tracefs\0";
    // SAFETY: valid NUL-terminated strings; no data argument.
    let r = unsafe {
        libc::mount(
            src.as_ptr().cast(),
            target.as_ptr().cast(),
            fstype.as_ptr().cast(),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            std::ptr::null(),
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// `rmdir` of an instance, retried while the kernel still holds one of its files
/// (EBUSY right after a reader closed it).
fn remove_instance(dir: &Path) -> std::io::Result<()> {
    let mut last = Ok(());
    for _ in 0..20 {
        last = std::fs::remove_dir(dir);
        match &last {
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            _ => return last,
        }
    }
    last
}

/// rtbench's own instance. Removed when dropped.
#[derive(Debug)]
pub struct Instance {
    /// Its directory.
    pub dir: PathBuf,
    /// Its name (`rtbench-PID` or `rtbench-PID-N`).
    pub name: String,
}

impl Instance {
    /// Makes `instances/rtbench-PID` (`-nsINODE` in a container's pid namespace, `-N`
    /// appended when this process already has one: the self-test runs one recorder per
    /// test).
    ///
    /// Errors: the `mkdir` error (EACCES/EPERM without privilege, ENOMEM).
    pub fn create(fs: &Tracefs) -> std::io::Result<Instance> {
        let pid = std::process::id();
        let ns = own_pid_ns()
            .flatten()
            .map_or(String::new(), |i| format!("-ns{i}"));
        let mut last = None;
        for n in 0..64 {
            let name = if n == 0 {
                format!("{INSTANCE_PREFIX}{pid}{ns}")
            } else {
                format!("{INSTANCE_PREFIX}{pid}{ns}-{n}")
            };
            let dir = fs.instance_dir(&name);
            match std::fs::create_dir(&dir) {
                Ok(()) => {
                    let i = Instance { dir, name };
                    // Without the marker (an old kernel without the event) the instance
                    // works, but one a crash leaves is not reclaimed: said at that start.
                    let _ = i.write(MARKER_FILE, MARKER);
                    return Ok(i);
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last.unwrap_or_else(|| std::io::Error::from_raw_os_error(libc::EEXIST)))
    }

    /// The path of file `rel` in the instance.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    /// Whether file `rel` exists (an event, a tracer's file).
    pub fn has(&self, rel: &str) -> bool {
        self.path(rel).exists()
    }

    /// Writes `value` to file `rel` with one `write(2)`, as tracefs files expect.
    pub fn write(&self, rel: &str, value: &str) -> std::io::Result<()> {
        let mut f = OpenOptions::new().write(true).open(self.path(rel))?;
        f.write_all(value.as_bytes())
    }

    /// Reads file `rel`, at most `max` bytes (a `trace` file is as large as its
    /// buffer's events rendered as text); bytes that are not UTF-8 (a task name is any
    /// bytes) become U+FFFD.
    pub fn read(&self, rel: &str, max: u64) -> std::io::Result<String> {
        let mut b = Vec::new();
        File::open(self.path(rel))?.take(max).read_to_end(&mut b)?;
        // Task names are bytes: one that is not UTF-8 must not cost the whole trace.
        Ok(match String::from_utf8(b) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        })
    }

    /// Opens file `rel` for writing (kept open: `tracing_on`, `free_buffer`).
    pub fn open_write(&self, rel: &str) -> std::io::Result<File> {
        OpenOptions::new().write(true).open(self.path(rel))
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.write("tracing_on", "0");
        let _ = self.write("current_tracer", "nop");
        let _ = remove_instance(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instance_names_give_their_pid_and_namespace() {
        assert_eq!(parse_instance("rtbench-123"), Some((123, None)));
        assert_eq!(parse_instance("rtbench-123-4"), Some((123, None)));
        assert_eq!(
            parse_instance("rtbench-123-ns4026532201"),
            Some((123, Some(4026532201)))
        );
        assert_eq!(
            parse_instance("rtbench-123-ns4026532201-2"),
            Some((123, Some(4026532201)))
        );
        // Anything else is someone else's.
        for other in [
            "rtbench-x",
            "rtla-123",
            "rtbench-0",
            "rtbench-123-mine",
            "rtbench-123-4-5",
            "rtbench-123-ns",
            "rtbench-123-nsx",
            "rtbench--123",
            "rtbench-+123",
        ] {
            assert_eq!(parse_instance(other), None, "{other}");
        }
    }

    /// A fake instance tree (fault cases; the real kernel is in tests/cli/explain_reclaim.rs):
    /// only the marker and `tracing_on` 0 together make an instance rtbench's.
    #[test]
    fn only_a_marked_instance_that_is_not_recording_is_provably_rtbenchs() {
        let d = std::env::temp_dir().join(format!("rtbench-tracefs-mark-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        let marker_dir = d.join(MARKER_FILE);
        std::fs::create_dir_all(marker_dir.parent().unwrap()).unwrap();
        let put = |rel: &str, v: &str| std::fs::write(d.join(rel), v).unwrap();
        assert_eq!(not_provably_ours(&d), Some("tracing_on unreadable"));
        put(MARKER_FILE, "none\n");
        put("tracing_on", "0\n");
        assert_eq!(
            not_provably_ours(&d),
            Some("no rtbench marker: another tool's")
        );
        put(MARKER_FILE, &format!("{MARKER}\n"));
        assert_eq!(not_provably_ours(&d), None);
        put("tracing_on", "1\n");
        assert_eq!(not_provably_ours(&d), Some("recording: tracing_on is 1"));
        std::fs::remove_file(d.join("tracing_on")).unwrap();
        assert_eq!(not_provably_ours(&d), Some("tracing_on unreadable"));
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn no_tracefs_below_an_empty_root_is_said() {
        let d = std::env::temp_dir().join(format!("rtbench-tracefs-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let e = Tracefs::open(&SysRoot::at(&d)).unwrap_err();
        assert!(e.0.contains("no tracefs"), "{e}");
        let _ = std::fs::remove_dir_all(&d);
    }
}
