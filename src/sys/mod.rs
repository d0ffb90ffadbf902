//! Everything rtbench asks of the kernel: the SysRoot through which /proc, /sys and
//! /dev are read and written, scheduling and memory locking, the PM QoS holder,
//! clocks and the system snapshot, cpufreq and cpuidle ([`power`]), and why the kernel
//! refused ([`refusal`]).

pub mod atomic;
pub mod cgroup;
pub mod clock;
pub mod counter;
pub mod cpus;
pub mod envfile;
pub mod info;
pub mod input;
pub mod kept;
pub mod notify;
pub mod pmqos;
pub mod power;
pub mod refusal;
pub mod root;
pub mod sched;
pub mod serial;
pub mod signals;
pub mod tracefs;

pub use root::SysRoot;
