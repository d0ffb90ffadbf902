//! The `overcommit_memory = 2` guard's arithmetic: what must fit under CommitLimit once
//! strict accounting is on, so that switching it on does not make the next fork or
//! mmap fail (Documentation/mm/overcommit-accounting.rst, mm/util.c
//! `__vm_enough_memory()`, kernel/fork.c `dup_mmap()`).
//!
//! In mode 2 every private writable mapping is committed when it is made, and a fork
//! commits the parent's private writable memory again for the child. So the margin
//! above today's `Committed_AS` is not a percentage: it is the largest process that may
//! fork (its `VmData` + `VmStk`, the private writable memory `dup_mmap()` charges), plus
//! what the self-test adds while it runs — its vm load (each `vm:N:SIZE` maps SIZE), a
//! fork of rtbench for each load process, a stack for each measuring thread and
//! rtbench's own memory, which it locks — plus the optional `commit_headroom_pct`.

use super::spec::CommitReserve;
use crate::sys::refusal::memory::meminfo_kb;
use crate::sys::refusal::Status;
use crate::sys::SysRoot;

/// What must fit under CommitLimit, in kB, and where each part comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Need {
    /// `Committed_AS` now.
    pub committed_kb: u64,
    /// The largest process that may fork: `comm`, pid and private writable kB.
    pub fork: Option<(String, u32, u64)>,
    /// rtbench's own private writable memory (`VmData` + `VmStk` of this process).
    pub own_kb: u64,
    /// The self-test's reserve.
    pub reserve: CommitReserve,
    /// The extra `commit_headroom_pct` of `Committed_AS`.
    pub headroom_kb: u64,
}

/// `VmData + VmStk` of a `status` file, kB.
fn private_kb(status: &str) -> u64 {
    let st = Status::parse(status);
    st.vm_data_kb + st.vm_stk_kb
}

impl Need {
    /// Reads `/proc/meminfo`, every `/proc/PID/status` and this process's own below
    /// `root`.
    pub fn read(root: &SysRoot, reserve: &CommitReserve, headroom_pct: u32) -> Need {
        let mem = root.read("/proc/meminfo").unwrap_or_default();
        let committed_kb = meminfo_kb(&mem, "Committed_AS").unwrap_or(u64::MAX / 4);
        let fork = root
            .list_dir("/proc")
            .unwrap_or_default()
            .iter()
            .filter_map(|d| d.parse::<u32>().ok())
            .filter_map(|pid| {
                let text = root.read(&format!("/proc/{pid}/status")).ok()?;
                let name = text
                    .lines()
                    .find_map(|l| l.strip_prefix("Name:"))
                    .map_or_else(String::new, |n| n.trim().to_string());
                Some((name, pid, private_kb(&text)))
            })
            .max_by_key(|(_, pid, kb)| (*kb, std::cmp::Reverse(*pid)))
            .filter(|(_, _, kb)| *kb > 0);
        let own_kb = root.read("/proc/self/status").map_or(0, |t| private_kb(&t));
        Need {
            committed_kb,
            fork,
            own_kb,
            reserve: reserve.clone(),
            headroom_kb: committed_kb.saturating_mul(headroom_pct as u64) / 100,
        }
    }

    /// The self-test's part, kB: its vm load, a fork of rtbench per load process,
    /// its thread stacks and its own memory.
    pub fn selftest_kb(&self) -> u64 {
        let r = &self.reserve;
        r.load_bytes.div_ceil(1024)
            + r.load_procs * self.own_kb
            + r.threads * r.stack_bytes.div_ceil(1024)
            + self.own_kb
    }

    /// `CommitLimit 800000 kB covers 101024 kB (Committed_AS 100000 + largest fork 0 +
    /// self-test 1024)`: the guard's numbers when it lets the change through.
    pub fn summary(&self, limit_kb: u64) -> String {
        format!(
            "CommitLimit {limit_kb} kB covers {} kB (Committed_AS {} + largest fork {} + self-test {}{})",
            self.total_kb(),
            self.committed_kb,
            self.fork.as_ref().map_or(0, |f| f.2),
            self.selftest_kb(),
            if self.headroom_kb > 0 {
                format!(" + headroom {}", self.headroom_kb)
            } else {
                String::new()
            }
        )
    }

    /// Everything that must fit, kB.
    pub fn total_kb(&self) -> u64 {
        self.committed_kb
            .saturating_add(self.fork.as_ref().map_or(0, |f| f.2))
            .saturating_add(self.selftest_kb())
            .saturating_add(self.headroom_kb)
    }

    /// `Committed_AS 887012 kB + the largest process that may fork, cc1plus (pid 7)
    /// 812345 kB + the self-test 530000 kB (vm load 512 MiB, 1 load process, 2
    /// measuring threads × their stack mapping, rtbench's own 4000 kB, locked) = … kB`.
    pub fn describe(&self) -> String {
        let r = &self.reserve;
        let mut s = format!("Committed_AS {} kB", self.committed_kb);
        if let Some((name, pid, kb)) = &self.fork {
            s += &format!(" + the largest process that may fork, {name} (pid {pid}), {kb} kB");
        }
        s += &format!(
            " + the self-test {} kB (vm load {} kB, {} load process(es), {} measuring thread(s) × {} KiB stack, rtbench's own {} kB, locked)",
            self.selftest_kb(),
            r.load_bytes.div_ceil(1024),
            r.load_procs,
            r.threads,
            r.stack_bytes / 1024,
            self.own_kb
        );
        if self.headroom_kb > 0 {
            s += &format!(" + commit_headroom_pct {} kB", self.headroom_kb);
        }
        s + &format!(" = {} kB", self.total_kb())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::refusal::tree::Tree;

    #[test]
    fn the_margin_is_the_largest_fork_and_the_selftest() {
        let t = Tree::new("commit");
        t.file(
            "/proc/meminfo",
            "MemTotal: 1000000 kB\nCommitted_AS: 100000 kB\n",
        )
        .file(
            "/proc/7/status",
            "Name:\tbig\nVmData:\t  300000 kB\nVmStk:\t     132 kB\n",
        )
        .file("/proc/8/status", "Name:\tsmall\nVmData:\t    1000 kB\n")
        .file("/proc/9/status", "Name:\tkthreadd\n")
        .file(
            "/proc/self/status",
            "Name:\trtbench\nVmData:\t    3000 kB\nVmStk:\t     132 kB\n",
        );
        let reserve = CommitReserve {
            load_bytes: 64 << 20,
            load_procs: 2,
            threads: 2,
            stack_bytes: 256 << 10,
        };
        let n = Need::read(&t.root(), &reserve, 10);
        assert_eq!(n.fork, Some(("big".into(), 7, 300_132)));
        assert_eq!(n.own_kb, 3132);
        // 65536 load + 2 × 3132 forks + 2 × 256 stacks + 3132 own.
        assert_eq!(n.selftest_kb(), 65536 + 6264 + 512 + 3132);
        assert_eq!(n.total_kb(), 100_000 + 300_132 + 75_444 + 10_000);
        let d = n.describe();
        assert!(
            d.starts_with("Committed_AS 100000 kB + the largest process that may fork, big (pid 7), 300132 kB + the self-test 75444 kB (vm load 65536 kB, 2 load process(es), 2 measuring thread(s) × 256 KiB stack")
                && d.ends_with("+ commit_headroom_pct 10000 kB = 485576 kB"),
            "{d}"
        );
    }
}
