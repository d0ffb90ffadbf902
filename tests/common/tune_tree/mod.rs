//! Shared fixture for the tune integration tests: a temporary /proc + /sys tree.
#![allow(dead_code)]

pub mod shape;

use super::TempDir;
use rtbench::config;
use rtbench::sys::SysRoot;
use rtbench::tune::spec::TuningSpec;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A temporary /proc + /sys tree (`DIR/root`) and journal directory (`DIR/run`), in a
/// [`TempDir`] of its own. It dereferences to `DIR`.
pub struct Tree(TempDir);

impl std::ops::Deref for Tree {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Tree {
    pub fn new(tag: &str) -> Tree {
        let t = Tree(TempDir::new(&format!("tree-{tag}")));
        t.populate();
        t
    }

    pub fn file(&self, rel: &str, content: &str) {
        let p = self.0.join("root").join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }

    /// A 4-CPU board: 3 IRQs, a workqueue mask, sysctls, one cpufreq policy, cpuidle.
    pub fn populate(&self) {
        self.file("sys/devices/system/cpu/possible", "0-3\n");
        self.file("sys/devices/system/cpu/online", "0-3\n");
        self.file("proc/irq/default_smp_affinity", "f\n");
        for irq in [10, 11, 12] {
            self.file(&format!("proc/irq/{irq}/smp_affinity_list"), "0-3\n");
            self.file(&format!("proc/irq/{irq}/effective_affinity_list"), "2\n");
        }
        self.file("sys/devices/virtual/workqueue/cpumask", "f\n");
        self.file("proc/sys/vm/overcommit_memory", "0\n");
        self.file("proc/sys/vm/overcommit_ratio", "50\n");
        self.file("proc/sys/vm/overcommit_kbytes", "0\n");
        self.file(
            "proc/meminfo",
            "MemTotal:        1000000 kB\nSwapTotal:             0 kB\nCommitted_AS:     100000 kB\nHugetlb:               0 kB\n",
        );
        self.file("proc/sys/kernel/printk", "4\t4\t1\t7\n");
        self.file("proc/sys/kernel/timer_migration", "1\n");
        self.file("proc/sys/vm/stat_interval", "1\n");
        let pol = "sys/devices/system/cpu/cpufreq/policy0";
        self.file(&format!("{pol}/scaling_governor"), "schedutil\n");
        self.file(
            &format!("{pol}/scaling_available_governors"),
            "performance schedutil\n",
        );
        for cpu in [2, 3] {
            for (st, name, lat) in [(0, "WFI", 0), (1, "cpu-sleep", 100)] {
                let d = format!("sys/devices/system/cpu/cpu{cpu}/cpuidle/state{st}");
                self.file(&format!("{d}/name"), &format!("{name}\n"));
                self.file(&format!("{d}/latency"), &format!("{lat}\n"));
                self.file(&format!("{d}/disable"), "0\n");
            }
        }
    }

    pub fn root(&self) -> SysRoot {
        SysRoot::at(self.0.join("root"))
    }

    pub fn journal_dir(&self) -> PathBuf {
        self.0.join("run")
    }

    /// Every file below the root with its exact bytes.
    pub fn snapshot(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        pub fn walk(p: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
            for e in std::fs::read_dir(p).unwrap() {
                let e = e.unwrap();
                if e.file_type().unwrap().is_dir() {
                    walk(&e.path(), out);
                } else {
                    out.insert(e.path(), std::fs::read(e.path()).unwrap());
                }
            }
        }
        let mut m = BTreeMap::new();
        walk(&self.0.join("root"), &mut m);
        m
    }

    /// The configuration the fault tests use, plus `extra` TOML.
    pub fn config_text(&self, extra: &str) -> String {
        format!(
            "[tuning]\nisolated = \"2-3\"\njournal_dir = \"{}\"\n\
             [tuning.irq]\naffinity = true\ndefault_affinity = true\n\
             [tuning.workqueue]\ncpumask = true\n\
             [tuning.sysctl]\nprintk = 1\novercommit_memory = 2\novercommit_ratio = 80\n\
             timer_migration = 0\nstat_interval = 10\n\
             [tuning.power]\ngovernor = \"performance\"\ncpuidle_max_latency_us = 10\n{extra}",
            self.journal_dir().display()
        )
    }

    /// [`Tree::config_text`] validated against the tree.
    pub fn spec(&self, extra: &str) -> TuningSpec {
        config::parse(&self.config_text(extra), "test.toml", &self.root())
            .unwrap()
            .tuning
    }
}
