//! Why a new file descriptor was refused (a pipe, a message queue, a file): EMFILE is
//! the process's `RLIMIT_NOFILE` (`ulimit -n`) for every call that makes a descriptor
//! (open(2), pipe(2), and mq_open(3), where EMFILE may also be `RLIMIT_MSGQUEUE`:
//! mq_overview(7)); ENFILE is the system's `fs.file-max` (proc_sys_fs(5)).
//!
//! The open descriptors are counted in `/proc/self/fd`; the limit is `Max open files`
//! of `/proc/self/limits`. At the limit the process cannot open either of them (each
//! read takes a descriptor): it then counts as at its limit, and the limit is the one
//! `getrlimit(2)` returns.

use super::{soft_limit, Cause, SysRoot};

/// The process's open descriptors and its soft `RLIMIT_NOFILE` (`None`: unlimited),
/// when they can be found. `open` is `None` when `/proc/self/fd` could not be opened
/// for want of a descriptor (EMFILE: every one is in use).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Descriptors {
    /// Descriptors open with a number below the limit, the listing's own left out;
    /// `None`: none free to count them.
    pub open: Option<u64>,
    /// The soft limit; `None`: unlimited.
    pub limit: Option<u64>,
}

/// `rlim_t` as `u64`: 32 bits on armv7, 64 on aarch64 and x86-64.
#[allow(clippy::useless_conversion)]
fn widen(v: libc::rlim_t) -> u64 {
    u64::from(v)
}

impl Descriptors {
    /// Reads the count and the limit below `root`.
    pub fn read(root: &SysRoot) -> Descriptors {
        let limit = soft_limit(root, "Max open files").unwrap_or_else(|| {
            let mut rl = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            // SAFETY: rl is a valid out-pointer; getrlimit takes no descriptor.
            let ok =
                root.is_host() && unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) } == 0;
            (ok && rl.rlim_cur != libc::RLIM_INFINITY).then_some(widen(rl.rlim_cur))
        });
        // Only numbers below the limit count: a new descriptor is the lowest free
        // one below it, and descriptors inherited above it (a lowered limit) take
        // none of those places.
        let open = match root.list_dir("/proc/self/fd") {
            // The directory's own descriptor is listed too (and is below the limit).
            Ok(v) => Some(
                (v.iter()
                    .filter_map(|n| n.parse::<u64>().ok())
                    .filter(|&fd| limit.map_or(true, |l| fd < l))
                    .count() as u64)
                    .saturating_sub(1),
            ),
            Err(e) if e.raw_os_error() == Some(libc::EMFILE) => None,
            Err(_) => Some(0),
        };
        Descriptors { open, limit }
    }

    /// Whether `needed` more descriptors do not fit under the limit.
    pub fn exhausted(&self, needed: u64) -> bool {
        match (self.open, self.limit) {
            (None, _) => true,
            (Some(open), Some(l)) => open + needed > l,
            (Some(_), None) => false,
        }
    }
}

/// The cause of a call that makes `needed` descriptors (2 for pipe(2), 1 for open(2))
/// failing with `errno`: `RLIMIT_NOFILE` for EMFILE, `fs.file-max` for ENFILE, with
/// their numbers and the fix; `None` for any other errno.
pub fn descriptors(root: &SysRoot, errno: i32, needed: u64) -> Option<Cause> {
    match errno {
        libc::EMFILE => Some(nofile(&Descriptors::read(root), needed)),
        libc::ENFILE => Some(file_max(root)),
        _ => None,
    }
}

/// `RLIMIT_NOFILE` as the cause, with the count `d` found.
pub fn nofile(d: &Descriptors, needed: u64) -> Cause {
    let limit = d
        .limit
        .map_or_else(|| "unlimited".to_string(), |l| l.to_string());
    let open = d.open.map_or_else(
        || "every one of them is open".to_string(),
        |o| format!("{o} of them are open and {needed} more are needed"),
    );
    Cause::new(
        "RLIMIT_NOFILE",
        format!(
            "RLIMIT_NOFILE is {limit} descriptors (ulimit -n) and {open}: raise it (LimitNOFILE= in the systemd unit, a nofile line in /etc/security/limits.conf, prlimit --nofile=)"
        ),
    )
}

/// `fs.file-max` as the cause, with `/proc/sys/fs/file-nr`'s numbers.
fn file_max(root: &SysRoot) -> Cause {
    let nr = root.read_trim("/proc/sys/fs/file-nr").unwrap_or_default();
    let f: Vec<&str> = nr.split_whitespace().collect();
    let (used, max) = match f.as_slice() {
        [used, _, max] => (used.to_string(), max.to_string()),
        _ => ("?".into(), "?".into()),
    };
    Cause::new(
        "fs.file-max",
        format!(
            "the system's open files ({used}, /proc/sys/fs/file-nr) reached fs.file-max ({max}): raise /proc/sys/fs/file-max or close files elsewhere"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::super::tree::Tree;
    use super::*;

    #[test]
    fn the_open_file_limit_is_named_with_its_numbers() {
        let t = Tree::new("nofile");
        t.file(
            "/proc/self/limits",
            "Limit                     Soft Limit           Hard Limit           Units     \n\
             Max open files            8                    1024                 files     \n",
        );
        // Descriptors 0-7, and 20 inherited above the limit, which takes no place.
        for fd in [0, 1, 2, 3, 4, 5, 6, 7, 20] {
            t.file(&format!("/proc/self/fd/{fd}"), "");
        }
        let c = descriptors(&t.root(), libc::EMFILE, 2).unwrap();
        assert_eq!(c.name, "RLIMIT_NOFILE");
        assert!(
            c.text.starts_with(
                "RLIMIT_NOFILE is 8 descriptors (ulimit -n) and 7 of them are open and 2 more are needed"
            ),
            "{}",
            c.text
        );
        let d = Descriptors::read(&t.root());
        assert!(d.exhausted(2) && !d.exhausted(1));
        t.file("/proc/sys/fs/file-nr", "2048\t0\t2048\n");
        let c = descriptors(&t.root(), libc::ENFILE, 1).unwrap();
        assert_eq!(c.name, "fs.file-max");
        assert!(c
            .text
            .contains("(2048, /proc/sys/fs/file-nr) reached fs.file-max (2048)"));
        assert_eq!(descriptors(&t.root(), libc::EPERM, 1), None);
    }
}
