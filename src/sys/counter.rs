//! The free-running counter a busy-poll loop reads, as rt-tests' oslat reads it
//! (`frc()` in `src/oslat/oslat.c`): on x86_64 `lfence; rdtsc` (the kernel's
//! `rdtsc_ordered()`), on aarch64 `isb; mrs cntvct_el0; isb`. A cycle counter is
//! used only where it ticks at a constant rate whatever the CPU does: on x86 the
//! `constant_tsc` and `nonstop_tsc` flags of `/proc/cpuinfo` (Intel SDM vol. 3,
//! "Invariant TSC"; arch/x86/kernel/cpu/), on aarch64 always (the generic timer's
//! virtual count runs at the fixed `CNTFRQ_EL0`, Arm ARM D11). Anywhere else, and on
//! an x86 without both flags, the loop reads `CLOCK_MONOTONIC` through
//! `clock_gettime(2)` (the vDSO where the clocksource allows it).
//!
//! The counter's rate is measured against `CLOCK_MONOTONIC_RAW` before the run
//! ([`Counter::detect`]) or read from `CNTFRQ_EL0`; ticks become **ns** with one
//! 64×64→128-bit multiplication ([`Counter::ns`]).

use super::SysRoot;

/// Which counter the loop reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CounterKind {
    /// x86_64 `rdtsc` after `lfence` (invariant TSC).
    Tsc,
    /// aarch64 `cntvct_el0` between `isb`s.
    Cntvct,
    /// `clock_gettime(CLOCK_MONOTONIC)`, ns.
    Monotonic,
}

impl CounterKind {
    /// The name printed in rtbench's own lines and JSON (`rdtsc`, `cntvct_el0`,
    /// `clock_gettime`).
    pub fn name(self) -> &'static str {
        match self {
            CounterKind::Tsc => "rdtsc",
            CounterKind::Cntvct => "cntvct_el0",
            CounterKind::Monotonic => "clock_gettime(CLOCK_MONOTONIC)",
        }
    }
}

/// A counter and its rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counter {
    /// The counter read.
    pub kind: CounterKind,
    /// Its rate in **Hz**.
    pub hz: u64,
    /// ns per tick in 32.32 fixed point.
    mult: u64,
}

/// Whether `/proc/cpuinfo` text says the TSC is invariant: every `flags` line has
/// both `constant_tsc` and `nonstop_tsc` (at least one line).
pub fn invariant_tsc(cpuinfo: &str) -> bool {
    let mut any = false;
    for l in cpuinfo.lines() {
        let Some((k, v)) = l.split_once(':') else {
            continue;
        };
        if k.trim() != "flags" {
            continue;
        }
        any = true;
        let has = |f: &str| v.split_whitespace().any(|w| w == f);
        if !(has("constant_tsc") && has("nonstop_tsc")) {
            return false;
        }
    }
    any
}

impl Counter {
    /// A counter of `kind` ticking at `hz` (> 0).
    pub fn new(kind: CounterKind, hz: u64) -> Counter {
        let hz = hz.max(1);
        let mult = ((1_000_000_000u128 << 32) / hz as u128).min(u64::MAX as u128) as u64;
        Counter { kind, hz, mult }
    }

    /// The counter this machine's busy-poll loop reads (see the module documentation),
    /// its rate measured or read. Takes about 30 ms on x86 (the calibration).
    pub fn detect(root: &SysRoot) -> Counter {
        #[cfg(target_arch = "x86_64")]
        {
            let cpuinfo = root.read("/proc/cpuinfo").unwrap_or_default();
            if invariant_tsc(&cpuinfo) {
                return Counter::new(CounterKind::Tsc, calibrate(CounterKind::Tsc));
            }
        }
        #[cfg(target_arch = "aarch64")]
        {
            let _ = root;
            let frq: u64;
            // SAFETY: CNTFRQ_EL0 is readable at EL0 on Linux (arch timer).
            unsafe { std::arch::asm!("mrs {}, cntfrq_el0", out(reg) frq) };
            if frq > 0 {
                return Counter::new(CounterKind::Cntvct, frq);
            }
        }
        let _ = root;
        Counter::new(CounterKind::Monotonic, 1_000_000_000)
    }

    /// The counter's value now (ticks). Ordered as oslat orders it: no earlier load
    /// passes it.
    #[inline(always)]
    pub fn read(&self) -> u64 {
        read(self.kind)
    }

    /// `ticks` in **ns** (rounded down).
    #[inline(always)]
    pub fn ns(&self, ticks: u64) -> u64 {
        ((ticks as u128 * self.mult as u128) >> 32) as u64
    }

    /// `ns` in ticks (rounded down), saturating.
    pub fn ticks(&self, ns: u64) -> u64 {
        let t = ns as u128 * self.hz as u128 / 1_000_000_000;
        t.min(u64::MAX as u128) as u64
    }

    /// The rate in whole MHz, as oslat prints it (`Counter Freq`).
    pub fn mhz(&self) -> u64 {
        self.hz / 1_000_000
    }

    /// One tick in **ns** (the resolution of a gap).
    pub fn resolution_ns(&self) -> f64 {
        1e9 / self.hz as f64
    }
}

/// Reads counter `kind`.
#[inline(always)]
pub fn read(kind: CounterKind) -> u64 {
    match kind {
        #[cfg(target_arch = "x86_64")]
        CounterKind::Tsc => {
            // SAFETY: lfence and rdtsc have no memory operands; SSE2 is baseline.
            unsafe {
                std::arch::x86_64::_mm_lfence();
                std::arch::x86_64::_rdtsc()
            }
        }
        #[cfg(target_arch = "aarch64")]
        CounterKind::Cntvct => {
            let v: u64;
            // SAFETY: CNTVCT_EL0 is readable at EL0 on Linux; isb orders the read.
            unsafe {
                std::arch::asm!("isb", "mrs {}, cntvct_el0", "isb", out(reg) v);
            }
            v
        }
        _ => super::clock::Clock::Monotonic.now_ns() as u64,
    }
}

/// The rate of `kind` in Hz, measured against CLOCK_MONOTONIC_RAW over about 20 ms,
/// the best of three bracketed readings at each end (a reading preempted between its
/// two counter reads is not taken).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
fn calibrate(kind: CounterKind) -> u64 {
    let raw = || {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: ts is a valid out-pointer.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_RAW, &mut ts) };
        super::clock::ts_to_ns(&ts)
    };
    let pair = || {
        (0..3)
            .map(|_| {
                let a = read(kind);
                let t = raw();
                let b = read(kind);
                (b.wrapping_sub(a), a / 2 + b / 2, t)
            })
            .min_by_key(|p| p.0)
            .map(|(_, c, t)| (c, t))
            .unwrap_or((0, 0))
    };
    let (c0, t0) = pair();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let (c1, t1) = pair();
    let dt = (t1 - t0).max(1) as u128;
    (c1.wrapping_sub(c0) as u128 * 1_000_000_000 / dt) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invariant_tsc_needs_both_flags_on_every_cpu() {
        let both = "processor\t: 0\nflags\t\t: fpu constant_tsc nonstop_tsc\n";
        assert!(invariant_tsc(both));
        assert!(invariant_tsc(&format!("{both}{both}")));
        let one = "flags\t\t: fpu constant_tsc\n";
        assert!(!invariant_tsc(one));
        assert!(!invariant_tsc(&format!("{both}{one}")));
        assert!(!invariant_tsc("processor\t: 0\n"));
    }

    #[test]
    fn ticks_and_ns_round_trip() {
        for hz in [1_000_000_000u64, 2_597_000_000, 19_200_000, 24_000_000] {
            let c = Counter::new(CounterKind::Tsc, hz);
            for ns in [0u64, 1, 999, 1000, 123_456, 10_000_000_000] {
                let back = c.ns(c.ticks(ns));
                // One tick of rounding each way, and the 32.32 multiplier's 2^-32.
                let slack = c.resolution_ns() + 1.0 + ns as f64 * 1e-9;
                assert!(ns.abs_diff(back) as f64 <= slack, "{hz} {ns} {back}");
            }
        }
        assert_eq!(
            Counter::new(CounterKind::Monotonic, 1_000_000_000).ns(12345),
            12345
        );
    }

    #[test]
    fn this_machines_counter_is_monotonic_and_measured() {
        let c = Counter::detect(&SysRoot::host());
        let a = c.read();
        let b = c.read();
        assert!(b >= a);
        assert!(c.hz >= 1_000_000, "{c:?}");
    }
}
