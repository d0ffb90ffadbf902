//! The options of the rt-tests programs rtbench stands in for — cyclictest 2.4 and
//! pmqtest 2.4 (Debian 12's `rt-tests 2.4-1`; the option tables are the `long_options`
//! arrays and `getopt_long` option strings of `src/cyclictest/cyclictest.c` and
//! `src/pmqtest/pmqtest.c`, checked against the installed binaries: every name below is
//! accepted by them and `--numa`/`--notrace` are not). This is **the one list of
//! rt-tests options rtbench does not implement**: [`super::getopt`] refuses each with one
//! line saying so, instead of clap's "unexpected argument" or, worse, ignoring it.
//!
//! An option of this list that `rtbench cyclic`/`pmq` defines (same long name) is
//! implemented; the others are not, and `about` says what they do in cyclictest.
//! `tests` in [`super::getopt`] check that the two agree (short letter, value kind).

/// How an option takes its value (getopt_long's `has_arg`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HasArg {
    /// `no_argument`.
    No,
    /// `required_argument`: attached (`-h3500`, `--histogram=3500`) or the next
    /// argument, whatever it is.
    Required,
    /// `optional_argument`: only attached (`-t4`, `--threads=4`); cyclictest and
    /// pmqtest then look at the next argument themselves (`-t 4`).
    Optional,
}

/// One option of an rt-tests program.
#[derive(Debug, Clone, Copy)]
pub struct RtOption {
    /// Long name, without `--`.
    pub long: &'static str,
    /// Short letter, if any.
    pub short: Option<char>,
    /// Value kind.
    pub has_arg: HasArg,
    /// What it does there (used in the "not implemented" message).
    pub about: &'static str,
}

const fn opt(
    long: &'static str,
    short: Option<char>,
    has_arg: HasArg,
    about: &'static str,
) -> RtOption {
    RtOption {
        long,
        short,
        has_arg,
        about,
    }
}

use HasArg::{No, Optional, Required};

/// cyclictest 2.4's options (`a::A::b:c:d:D:F:h:H:i:l:MNo:p:mqrRsSt::uvD:x` and the
/// long-only ones).
pub const CYCLICTEST: &[RtOption] = &[
    opt("affinity", Some('a'), Optional, "pin threads to CPUs"),
    opt(
        "aligned",
        Some('A'),
        Optional,
        "align thread wakeups to an offset",
    ),
    opt(
        "breaktrace",
        Some('b'),
        Required,
        "stop tracing above a latency",
    ),
    opt("clock", Some('c'), Required, "select the clock"),
    opt("default-system", None, No, "leave power management alone"),
    opt(
        "distance",
        Some('d'),
        Required,
        "distance of thread intervals",
    ),
    opt("duration", Some('D'), Required, "run time"),
    opt("latency", None, Required, "PM QoS target"),
    opt(
        "fifo",
        Some('F'),
        Required,
        "write statistics to a named pipe",
    ),
    opt("histogram", Some('h'), Required, "latency histogram"),
    opt(
        "histofall",
        Some('H'),
        Required,
        "histogram with a summary column",
    ),
    opt("histfile", None, Required, "histogram to a file"),
    opt("interval", Some('i'), Required, "base interval"),
    opt("json", None, Required, "JSON results"),
    opt("laptop", None, No, "save battery (no PM QoS)"),
    opt("loops", Some('l'), Required, "number of loops"),
    opt("mainaffinity", None, Required, "CPUs of the main thread"),
    opt("mlockall", Some('m'), No, "lock memory"),
    opt(
        "refresh_on_max",
        Some('M'),
        No,
        "refresh the screen only on a new maximum",
    ),
    opt("nsecs", Some('N'), No, "results in ns"),
    opt("oscope", Some('o'), Required, "oscilloscope mode"),
    opt("priority", Some('p'), Required, "priority"),
    opt("quiet", Some('q'), No, "summary only"),
    opt("priospread", None, No, "spread priorities"),
    opt("relative", Some('r'), No, "relative timers"),
    opt("resolution", Some('R'), No, "check the clock resolution"),
    opt(
        "secaligned",
        None,
        Optional,
        "align wakeups to the next full second",
    ),
    opt("system", Some('s'), No, "sys_nanosleep and sys_setitimer"),
    opt("smi", None, No, "SMI counting"),
    opt("smp", Some('S'), No, "one thread per CPU, same priority"),
    opt("spike", None, Required, "record spikes above a trigger"),
    opt("spike-nodes", None, Required, "number of recorded spikes"),
    opt("threads", Some('t'), Optional, "number of threads"),
    opt("tracemark", None, No, "trace mark on -b"),
    opt("unbuffered", Some('u'), No, "unbuffered output"),
    opt("verbose", Some('v'), No, "every sample on standard output"),
    opt("dbg_cyclictest", None, No, "cyclictest debugging output"),
    opt("policy", None, Required, "scheduling policy"),
    opt("help", None, No, "help"),
    opt("posix_timers", Some('x'), No, "POSIX interval timers"),
];

/// Long options of cyclictest before rt-tests 2.0 that older harnesses still pass
/// (rteval 2.x `--numa`, rteval 3.0–3.2 `--notrace`); cyclictest 2.x refuses them too.
/// Matched by their full name only (getopt of 2.x cannot abbreviate what it lacks).
pub const CYCLICTEST_REMOVED: &[RtOption] = &[
    opt(
        "numa",
        None,
        No,
        "NUMA mode of cyclictest 1.x, removed in rt-tests 2.0",
    ),
    opt(
        "notrace",
        None,
        No,
        "option of cyclictest 1.x, removed in rt-tests 2.0",
    ),
];

/// pmqtest 2.4's options (`a::b:d:D:f:i:l:p:qSt::T:`; `--help` has no short letter:
/// pmqtest's `-h` is an unknown option that prints the help).
pub const PMQTEST: &[RtOption] = &[
    opt("affinity", Some('a'), Optional, "pin pairs to CPUs"),
    opt(
        "breaktrace",
        Some('b'),
        Required,
        "stop tracing above a latency",
    ),
    opt(
        "distance",
        Some('d'),
        Required,
        "distance of pair intervals",
    ),
    opt("duration", Some('D'), Required, "run time"),
    opt("forcetimeout", Some('f'), Required, "force timeouts"),
    opt("help", None, No, "help"),
    opt("interval", Some('i'), Required, "base interval"),
    opt("json", None, Required, "JSON results"),
    opt("loops", Some('l'), Required, "number of loops"),
    opt("priority", Some('p'), Required, "priority"),
    opt("quiet", Some('q'), No, "summary only"),
    opt("smp", Some('S'), No, "one pair per CPU, same priority"),
    opt("threads", Some('t'), Optional, "number of pairs"),
    opt("timeout", Some('T'), Required, "receive timeout"),
];

/// oslat 2.4's options (`b:Bc:C:D:f:hm:qsw:T:vz` and `--json`), with `-W/--bucket-width`
/// of later rt-tests (`src/oslat/oslat.c`). rtbench implements every one.
pub const OSLAT: &[RtOption] = &[
    opt("bucket-size", Some('b'), Required, "number of buckets"),
    opt("bias", Some('B'), No, "bias the buckets"),
    opt("cpu-list", Some('c'), Required, "CPUs to poll"),
    opt(
        "cpu-main-thread",
        Some('C'),
        Required,
        "CPU of the main thread",
    ),
    opt("duration", Some('D'), Required, "run time"),
    opt("json", None, Required, "JSON results"),
    opt("rtprio", Some('f'), Required, "SCHED_FIFO priority"),
    opt("help", Some('h'), No, "help"),
    opt("workload-mem", Some('m'), Required, "workload memory size"),
    opt("quiet", Some('q'), No, "summary only"),
    opt("single-preheat", Some('s'), No, "pre-heat with one thread"),
    opt(
        "trace-threshold",
        Some('T'),
        Required,
        "stop above a latency",
    ),
    opt("version", Some('v'), No, "version"),
    opt("workload", Some('w'), Required, "workload kind"),
    opt("bucket-width", Some('W'), Required, "bucket width in ns"),
    opt("zero-omit", Some('z'), No, "omit all-zero buckets"),
];
