//! Clocks for the measuring loops: raw `clock_gettime` / `clock_nanosleep` so the hot
//! path makes exactly the syscalls cyclictest makes and nothing else.

/// Nanoseconds per microsecond.
pub const NS_PER_US: u64 = 1_000;
/// Nanoseconds per second.
pub const NS_PER_SEC: i64 = 1_000_000_000;

/// A clock a measurement may run on (cyclictest `-c/--clock`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Clock {
    /// CLOCK_MONOTONIC (cyclictest `-c 0`, the default).
    Monotonic,
    /// CLOCK_REALTIME (cyclictest `-c 1`); steps with NTP and settimeofday.
    Realtime,
}

impl Clock {
    /// Parses `0`/`monotonic` or `1`/`realtime` (cyclictest 2.10 accepts both forms).
    pub fn parse(s: &str) -> Option<Clock> {
        match s.to_ascii_lowercase().as_str() {
            "0" | "monotonic" => Some(Clock::Monotonic),
            "1" | "realtime" => Some(Clock::Realtime),
            _ => None,
        }
    }

    /// The clockid_t for syscalls.
    pub fn id(self) -> libc::clockid_t {
        match self {
            Clock::Monotonic => libc::CLOCK_MONOTONIC,
            Clock::Realtime => libc::CLOCK_REALTIME,
        }
    }

    /// The current time of this clock in **ns**.
    #[inline(always)]
    pub fn now_ns(self) -> i64 {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: ts is a valid out-pointer; the clock id is a constant the kernel knows.
        unsafe { libc::clock_gettime(self.id(), &mut ts) };
        ts_to_ns(&ts)
    }

    /// Sleeps until absolute time `deadline_ns` of this clock with
    /// `clock_nanosleep(…, TIMER_ABSTIME, …)`. Returns `false` when a signal handler
    /// interrupted the sleep (EINTR) before the deadline — the runner's wake signal,
    /// sent when the run stops — and `true` otherwise.
    #[inline(always)]
    pub fn sleep_until_ns(self, deadline_ns: i64) -> bool {
        let ts = ns_to_ts(deadline_ns);
        // SAFETY: ts is valid; the remaining-time pointer may be null with TIMER_ABSTIME.
        let rc = unsafe {
            libc::clock_nanosleep(self.id(), libc::TIMER_ABSTIME, &ts, std::ptr::null_mut())
        };
        rc != libc::EINTR
    }

    /// Seconds of this clock since the epoch of CLOCK_REALTIME, for timestamps in output.
    pub fn wall_secs() -> i64 {
        Clock::Realtime.now_ns() / NS_PER_SEC
    }
}

/// Converts a timespec to **ns**.
#[inline(always)]
#[allow(clippy::unnecessary_cast)] // time_t/c_long are 32-bit on armv7
pub fn ts_to_ns(ts: &libc::timespec) -> i64 {
    ts.tv_sec as i64 * NS_PER_SEC + ts.tv_nsec as i64
}

/// Converts **ns** to a normalised timespec.
#[inline(always)]
pub fn ns_to_ts(ns: i64) -> libc::timespec {
    libc::timespec {
        tv_sec: ns.div_euclid(NS_PER_SEC) as libc::time_t,
        tv_nsec: ns.rem_euclid(NS_PER_SEC) as _,
    }
}

/// Clock ticks per second of the times in `/proc/PID/stat` (`sysconf(_SC_CLK_TCK)`,
/// proc(5)); 100 if it cannot be read.
pub fn clock_ticks_per_sec() -> f64 {
    // SAFETY: sysconf has no memory-safety preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if hz > 0 {
        hz as f64
    } else {
        100.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absolute_sleep_wakes_after_deadline() {
        let c = Clock::Monotonic;
        let deadline = c.now_ns() + 2_000_000;
        assert!(c.sleep_until_ns(deadline));
        assert!(c.now_ns() >= deadline);
        let ts = ns_to_ts(1_500_000_123);
        assert_eq!((ts.tv_sec, ts.tv_nsec), (1, 500_000_123));
        assert_eq!(ts_to_ns(&ts), 1_500_000_123);
        assert_eq!(Clock::parse("1"), Some(Clock::Realtime));
        assert_eq!(Clock::parse("tai"), None);
    }
}
