//! RT tuning: check the kernel's effective state against `[tuning]`, change only what
//! differs, record every change so it can be undone (docs/ARCHITECTURE.md, "Where a knob is written").
//!
//! An [`Item`] reads its kernel files and decides ([`Item::plan`]); the shared engine
//! ([`engine`]) applies the decided [`Step`]s one `write(2)` each, after journalling the
//! original value (fsync'd), lets the item verify by re-reading, and reverts in reverse
//! order from the journal. Every item ends as one [`Status`].
//!
//! Kernel semantics: each item file cites the kernel documentation it follows. What
//! the items are asked for is a [`spec::TuningSpec`]; its TOML schema is documented in
//! src/config/tuning/mod.rs and systemd/rtbench.toml.

pub mod boot;
pub mod commit;
pub mod engine;
pub mod irq;
pub mod isolated;
pub mod journal;
pub mod knobs;
pub mod power;
pub mod spec;

use crate::sys::SysRoot;
use serde::{Deserialize, Serialize};

pub use engine::{apply, check, revert, status, ApplyOptions};

/// How an item ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Already as wanted, or now as wanted.
    Ok,
    /// The knob does not exist here (no cpufreq, no cpuidle, no `nohz_full` file…).
    NotApplicable,
    /// The knob exists but the kernel refuses by design (per-CPU, chained and managed
    /// IRQs: EIO before Linux 6.12, EPERM from 6.12).
    Unsupported,
    /// Differs from the configuration and was not changed: `check` found something
    /// `apply` would write, or a check-only item (boot parameter, PREEMPT_RT) does not hold.
    Deviation,
    /// A write or its verification failed (errno and path in the report), or a safety
    /// guard refused before any write; `apply` rolled everything back.
    Failed,
}

impl Status {
    /// The name used in text and JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::NotApplicable => "not-applicable",
            Status::Unsupported => "unsupported",
            Status::Deviation => "deviation",
            Status::Failed => "failed",
        }
    }
}

/// One item's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ItemReport {
    /// Item name, e.g. `sysctl.kernel.printk`, `irq.36`, `boot.isolcpus`.
    pub item: String,
    /// How it ended.
    pub status: Status,
    /// One human line: what was found, written, refused or expected.
    pub detail: String,
    /// The kernel file concerned (always set for `failed` writes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The errno of a refused write (e.g. 5 for EIO).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub errno: Option<i32>,
    /// Whether `apply` changed something that is still in place.
    pub changed: bool,
    /// For a deviation or failure: the value the configuration wants, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    /// For a deviation or failure: the value the system has, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub found: Option<String>,
}

impl ItemReport {
    /// A report without path or errno.
    pub fn new(item: impl Into<String>, status: Status, detail: impl Into<String>) -> Self {
        ItemReport {
            item: item.into(),
            status,
            detail: detail.into(),
            path: None,
            errno: None,
            changed: false,
            expected: None,
            found: None,
        }
    }

    /// The same report naming the wanted and the found value.
    pub fn values(mut self, expected: impl Into<String>, found: impl Into<String>) -> Self {
        self.expected = Some(expected.into());
        self.found = Some(found.into());
        self
    }

    /// The same report naming `path`.
    pub fn at(mut self, path: impl Into<String>) -> Self {
        self.path = Some(path.into());
        self
    }
}

/// Which command produced a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// Read and compare only.
    Check,
    /// Change what differs, as a transaction.
    Apply,
    /// Restore what the committed journal recorded.
    Revert,
}

/// The result of `check`, `apply` or `revert`.
#[derive(Debug, Clone, Serialize)]
pub struct TuningReport {
    /// The command.
    pub action: Action,
    /// One entry per item, in the order they were planned.
    pub items: Vec<ItemReport>,
    /// Changes of an interrupted earlier `apply` (journal left `applying`) restored at start.
    pub recovered: Vec<ItemReport>,
    /// Changes of this `apply` undone after the first failure, in the order undone.
    pub rolled_back: Vec<ItemReport>,
    /// A kernel command line fragment that satisfies the boot-parameter items.
    pub bootargs: Option<String>,
    /// What the bootargs suggestion left out (parameters this kernel cannot honour)
    /// or warns about (a command line too long for the architecture).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub bootargs_notes: Vec<String>,
    /// Number of `write(2)` calls made to kernel files (0 when nothing differed).
    pub writes: usize,
}

impl TuningReport {
    /// How many items ended as `status`.
    pub fn count(&self, status: Status) -> usize {
        self.items.iter().filter(|i| i.status == status).count()
    }

    /// A `check` that compared nothing: no item, or every item's knob is absent here
    /// (all `not-applicable`). `rtbench tune check` says so and exits 1.
    pub fn checked_nothing(&self) -> bool {
        self.action == Action::Check && self.items.iter().all(|i| i.status == Status::NotApplicable)
    }

    /// The exit code (src/error.rs): for `check`, 1 when an item is `deviation` or
    /// `failed` (a verdict on the system); for `apply` and `revert`, 3 when an item,
    /// a rollback or a restore `failed` — the kernel refused a write, a value did not
    /// hold, or a guard refused an item the system cannot take safely — else 1 when a
    /// check-only item deviates; 0 otherwise.
    pub fn exit_code(&self) -> i32 {
        use crate::error::exit;
        let has = |s: Status| {
            [&self.items, &self.recovered, &self.rolled_back]
                .iter()
                .any(|v| v.iter().any(|i| i.status == s))
        };
        let (failed, deviation) = (has(Status::Failed), has(Status::Deviation));
        match self.action {
            Action::Check if failed || deviation => exit::FAIL,
            Action::Apply | Action::Revert if failed => exit::ENV,
            _ if deviation => exit::FAIL,
            _ => exit::OK,
        }
    }
}

/// How a kernel file's text is compared (so `2,3` equals `2-3`, and the bracketed
/// THP word is what counts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ValueKind {
    /// Whitespace-separated words (sysctls, `printk`'s four numbers, governor names).
    Words,
    /// The word in `[brackets]` (`always [madvise] never`).
    Bracketed,
    /// A hex CPU mask (`smp_affinity`, workqueue `cpumask`).
    Mask,
    /// A cpu-list (`smp_affinity_list`).
    List,
    /// A task's CPU affinity: written with `sched_setaffinity(2)` (see
    /// [`SysRoot::set_task_affinity`]), read as the `Cpus_allowed_list` of
    /// `/proc/PID/status` (the step's path).
    TaskAffinity,
}

impl ValueKind {
    /// The comparable form of `text`; unparsable text compares as trimmed words.
    pub fn normalise(self, text: &str) -> String {
        let words = || text.split_whitespace().collect::<Vec<_>>().join(" ");
        match self {
            ValueKind::Words => words(),
            ValueKind::Bracketed => match (text.find('['), text.find(']')) {
                (Some(a), Some(b)) if a < b => text[a + 1..b].to_string(),
                _ => words(),
            },
            ValueKind::Mask => crate::cpuset::CpuSet::parse_mask(text)
                .map(|s| s.to_list())
                .unwrap_or_else(|_| words()),
            ValueKind::List => crate::cpuset::CpuSet::parse_list(text, crate::cpuset::MAX_CPU_IDS)
                .map(|s| s.to_list())
                .unwrap_or_else(|_| words()),
            ValueKind::TaskAffinity => {
                let list = text
                    .lines()
                    .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                    .unwrap_or(text);
                crate::cpuset::CpuSet::parse_list(list, 1 << 16)
                    .map(|s| s.to_list())
                    .unwrap_or_else(|_| words())
            }
        }
    }
}

/// One write an item wants: the kernel file, its value before, and what to write to
/// apply and to restore. This is also what the journal records.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    /// Kernel path, e.g. `/proc/irq/24/smp_affinity_list`.
    pub path: String,
    /// The file's exact text before any change.
    pub original: String,
    /// The value that restores `original` when written (`madvise` for `always [madvise] never`).
    pub restore: String,
    /// The value `apply` writes.
    pub desired: String,
    /// How the file's text is compared.
    pub kind: ValueKind,
    /// For [`ValueKind::TaskAffinity`]: the task's name (`/proc/PID/comm`). A task
    /// of another name at that pid (the thread exited, the pid was reused) is left
    /// alone, as if gone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
}

impl Step {
    /// A step for a file whose text can be written back as read (trimmed).
    pub fn new(path: &str, original: &str, desired: String, kind: ValueKind) -> Step {
        Step {
            path: path.to_string(),
            original: original.to_string(),
            restore: original.trim().to_string(),
            desired,
            kind,
            task: None,
        }
    }

    /// A step that sets the affinity of task `pid` named `comm` from `original` (a
    /// cpu-list) to `desired`.
    pub fn task_affinity(pid: u32, comm: &str, original: &str, desired: String) -> Step {
        Step {
            task: Some(comm.to_string()),
            ..Step::new(
                &format!("/proc/{pid}/status"),
                original,
                desired,
                ValueKind::TaskAffinity,
            )
        }
    }

    /// Makes the kernel hold `value` (the desired or the restore value): one
    /// `write(2)` of `value` and a newline to the file, or for a task's affinity one
    /// `sched_setaffinity(2)` (ENOENT when the task is gone or is now another task).
    pub fn write(&self, root: &SysRoot, value: &str) -> std::io::Result<()> {
        if self.kind != ValueKind::TaskAffinity {
            let mut bytes = value.as_bytes().to_vec();
            bytes.push(b'\n');
            return root.write(&self.path, &bytes);
        }
        let gone = || std::io::Error::from_raw_os_error(libc::ENOENT);
        let pid: u32 = self
            .path
            .strip_prefix("/proc/")
            .and_then(|r| r.strip_suffix("/status"))
            .and_then(|p| p.parse().ok())
            .ok_or_else(gone)?;
        if let Some(comm) = &self.task {
            let now = root
                .read_trim(&format!("/proc/{pid}/comm"))
                .map_err(|_| gone())?;
            if &now != comm {
                return Err(gone());
            }
        }
        let set = crate::cpuset::CpuSet::parse_list(value, 1 << 16)
            .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
        match root.set_task_affinity(pid, &set) {
            Err(e) if e.raw_os_error() == Some(libc::ESRCH) => Err(gone()),
            r => r,
        }
    }

    /// Whether the file now holds `want` (compared as [`ValueKind`] says).
    pub fn holds(&self, root: &SysRoot, want: &str) -> std::io::Result<bool> {
        let now = root.read(&self.path)?;
        Ok(self.kind.normalise(&now) == self.kind.normalise(want))
    }
}

/// What an item decided after reading its files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Nothing to write; the item ends with this report (ok already, not-applicable,
    /// unsupported, a check-only deviation, or a guard that refuses).
    Done(ItemReport),
    /// These writes, in this order, make the item hold; `detail` says what changes.
    Change {
        /// The writes.
        steps: Vec<Step>,
        /// E.g. `0-1 -> 0`.
        detail: String,
    },
}

/// A tuning item: read → plan → (engine: journal, write) → verify → (engine: revert).
pub trait Item {
    /// Stable name shown in reports and the journal, e.g. `irq.36`.
    fn name(&self) -> String;

    /// Reads the current state below `root` and decides; never writes.
    fn plan(&self, root: &SysRoot) -> Decision;

    /// Classifies a write refused with `errno`. Default: `failed`.
    fn refused(&self, errno: i32) -> Status {
        let _ = errno;
        Status::Failed
    }

    /// Why a write of this item was refused with `errno`, when the item can tell
    /// (e.g. the RT runtime other cgroups hold). Default: nothing beyond the errno.
    fn explain(&self, root: &SysRoot, errno: i32) -> Option<crate::error::Cause> {
        let _ = (root, errno);
        None
    }

    /// Re-reads after all `steps` were written. `Ok(note)` when the kernel holds the
    /// wanted values (note may be empty), `Err((path, message))` otherwise.
    /// Default: every step's file compares equal to its `desired` value.
    fn verify(&self, root: &SysRoot, steps: &[Step]) -> Result<String, (String, String)> {
        verify_steps(root, steps).map(|()| String::new())
    }
}

/// Checks that every step's file compares equal to its `desired` value;
/// `Err((path, message))` for the first that does not.
pub fn verify_steps(root: &SysRoot, steps: &[Step]) -> Result<(), (String, String)> {
    for s in steps {
        match s.holds(root, &s.desired) {
            Ok(true) => {}
            Ok(false) => {
                let now = root.read(&s.path).unwrap_or_default();
                return Err((
                    s.path.clone(),
                    format!("reads back {:?}, wanted {:?}", now.trim(), s.desired),
                ));
            }
            Err(e) => return Err((s.path.clone(), format!("re-read failed: {e}"))),
        }
    }
    Ok(())
}

/// The item ends `not-applicable` at `path`: the knob does not exist here.
pub(crate) fn not_applicable(name: String, path: &str, why: &str) -> Decision {
    Decision::Done(ItemReport::new(name, Status::NotApplicable, why).at(path))
}

/// Reads the knob `path` for the item `name`: its text, or the item's end when it
/// cannot be read — `not-applicable` with `absent` when the file does not exist (the
/// kernel lacks the knob), `failed` when it exists but cannot be read (a FIFO, a
/// device, a link to one, permissions: [`SysRoot::read`] reads regular files only),
/// which is no reason to call it absent.
pub(crate) fn read_knob(
    root: &SysRoot,
    name: &str,
    path: &str,
    absent: &str,
) -> Result<String, Box<Decision>> {
    root.read(path).map_err(|e| {
        Box::new(if e.kind() == std::io::ErrorKind::NotFound {
            not_applicable(name.to_string(), path, absent)
        } else {
            Decision::Done(
                ItemReport::new(name.to_string(), Status::Failed, format!("unreadable: {e}"))
                    .at(path),
            )
        })
    })
}

/// The item ends `ok` at `path`: already as wanted.
pub(crate) fn already(name: String, path: &str, detail: String) -> Decision {
    Decision::Done(ItemReport::new(name, Status::Ok, detail).at(path))
}

/// A knob the kernel does not have at all.
pub(crate) struct Absent {
    pub(crate) name: String,
    pub(crate) why: String,
    pub(crate) path: String,
}

impl Item for Absent {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn plan(&self, _root: &SysRoot) -> Decision {
        not_applicable(self.name(), &self.path, &self.why)
    }
}

/// Plans a one-file knob: `not-applicable` when `path` is missing, `ok` when it
/// already holds `want` (compared as `kind`), else one write of `want`.
pub(crate) fn plan_value(
    name: String,
    path: &str,
    want: &str,
    kind: ValueKind,
    root: &SysRoot,
) -> Decision {
    let text = match read_knob(root, &name, path, "not present in this kernel") {
        Ok(t) => t,
        Err(d) => return *d,
    };
    let now = kind.normalise(&text);
    if now == kind.normalise(want) {
        return already(name, path, now);
    }
    Decision::Change {
        detail: format!("{now} -> {}", kind.normalise(want)),
        steps: vec![Step::new(path, &text, want.to_string(), kind)],
    }
}

/// The symbolic name of `errno` (`EIO`, `EPERM`, …) for reports.
pub fn errno_name(errno: i32) -> String {
    let name = match errno {
        libc::EPERM => "EPERM",
        libc::ENOENT => "ENOENT",
        libc::EIO => "EIO",
        libc::EBUSY => "EBUSY",
        libc::EACCES => "EACCES",
        libc::EINVAL => "EINVAL",
        libc::ENOSPC => "ENOSPC",
        libc::EROFS => "EROFS",
        libc::ENOMEM => "ENOMEM",
        libc::ERANGE => "ERANGE",
        libc::EOVERFLOW => "EOVERFLOW",
        _ => return format!("errno {errno}"),
    };
    name.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_knob_that_cannot_be_read_is_failed_not_absent() {
        use std::os::unix::ffi::OsStrExt;
        let d = std::env::temp_dir().join(format!("rtbench-knob-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("proc/sys/kernel")).unwrap();
        let fifo = d.join("proc/sys/kernel/printk");
        let c = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
        // SAFETY: a valid C string naming a path in this test's directory.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        let root = SysRoot::at(&d);
        match read_knob(&root, "k", "/proc/sys/kernel/printk", "absent").map_err(|d| *d) {
            Err(Decision::Done(r)) => {
                assert_eq!(r.status, Status::Failed, "{r:?}");
                assert!(r.detail.contains("FIFO"), "{r:?}");
            }
            other => panic!("{other:?}"),
        }
        match read_knob(&root, "k", "/proc/sys/kernel/none", "absent").map_err(|d| *d) {
            Err(Decision::Done(r)) => assert_eq!(r.status, Status::NotApplicable, "{r:?}"),
            other => panic!("{other:?}"),
        }
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn normalised_forms() {
        assert_eq!(ValueKind::Words.normalise("4\t4\t1\t7\n"), "4 4 1 7");
        assert_eq!(
            ValueKind::Bracketed.normalise("always [madvise] never\n"),
            "madvise"
        );
        assert_eq!(ValueKind::Bracketed.normalise("never"), "never");
        assert_eq!(ValueKind::Mask.normalise("00000000,00000003\n"), "0-1");
        assert_eq!(ValueKind::List.normalise("0,1\n"), "0-1");
        assert_eq!(
            ValueKind::TaskAffinity
                .normalise("Name:\tirq/9-acpi\nCpus_allowed:\t3\nCpus_allowed_list:\t0,1\n"),
            "0-1"
        );
        assert_eq!(ValueKind::TaskAffinity.normalise("2,3"), "2-3");
        assert_eq!(errno_name(libc::ENOSPC), "ENOSPC");
    }
}
