//! One line of a tracefs `trace` file, parsed into the few events the explanation
//! reads. The text is the kernel's own rendering of each event (its `TP_printk` format,
//! `events/<system>/<event>/format`); the line prefix is the default output of
//! Documentation/trace/ftrace.rst ("The File System", `trace`):
//!
//! ```text
//!       cyclictest-22084   [001] d.h2.   901.919396: sched_waking: comm=cyclictest pid=22084 prio=1 target_cpu=001
//! ```
//!
//! task and pid, `[CPU]`, the latency flags (irqs-off, need-resched, hardirq/softirq,
//! preempt depth, migrate-disable: 4 or 5 characters by kernel version; absent with the
//! `irq-info` option off), the timestamp in seconds with **µs** digits (the instance's
//! `trace_clock`, `mono` here: CLOCK_MONOTONIC), the event name and its fields. Fields
//! that carry time (`expires=`, `now=` of the hrtimer events, `delta_ns=` of NMIs) are
//! **ns**. A field value may hold spaces (a task name such as `irq/24-GPIO Key`), so
//! values are cut at the next known key, never at a space.
//!
//! Nothing here allocates per line: events borrow from the text.

/// The context flags of a line (the `d.h1.` column).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Flags {
    /// Interrupts were disabled (`d`; `D` with BH also disabled).
    pub irqs_off: bool,
    /// Bottom halves (softirqs) were disabled: `local_bh_disable` (`b`, or `D` with
    /// interrupts also off, in the first column; Linux 5.18+).
    pub bh_off: bool,
    /// In hard-IRQ context (`h`, or `H`: hard IRQ inside a softirq).
    pub hardirq: bool,
    /// In softirq context (`s`, or `H`).
    pub softirq: bool,
    /// NMI context (`z`, or `Z`: NMI inside a hard IRQ).
    pub nmi: bool,
}

/// What happened, for the events the explanation reads; every other event is
/// [`Kind::Other`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind<'a> {
    /// `sched:sched_switch`: the CPU went from `prev` to `next`. Priorities are the
    /// kernel's (`0..=98` real-time, `99 − rt_priority`; `100..=139` fair, `120 + nice`;
    /// `-1` deadline).
    Switch {
        /// Task switched out.
        prev_comm: &'a str,
        /// Its pid (thread id).
        prev_pid: i32,
        /// Its kernel priority.
        prev_prio: i32,
        /// Its state: `R`/`R+` still runnable (preempted), `S`/`D` sleeping, `T`/`t`
        /// stopped/traced, `X`/`Z` exiting.
        prev_state: &'a str,
        /// Task switched in.
        next_comm: &'a str,
        /// Its pid.
        next_pid: i32,
        /// Its kernel priority.
        next_prio: i32,
    },
    /// `sched:sched_waking` (`waking: true`, logged by the waker) or `sched_wakeup`
    /// (the task is runnable).
    Wake {
        /// The task woken.
        comm: &'a str,
        /// Its pid.
        pid: i32,
        /// Its kernel priority.
        prio: i32,
        /// `sched_waking` rather than `sched_wakeup`.
        waking: bool,
    },
    /// `timer:hrtimer_start`: a timer armed to expire at `expires_ns` (**ns**, the
    /// timer's clock base).
    TimerStart {
        /// The timer (a hashed pointer: equal for equal timers).
        hrtimer: &'a str,
        /// Its callback: `hrtimer_wakeup` for a sleeping task.
        function: &'a str,
        /// Hard expiry, **ns**.
        expires_ns: i64,
        /// Soft expiry, **ns**: the time asked for; `expires` adds the task's timer
        /// slack (50 µs for SCHED_OTHER by default, 0 for real-time tasks).
        softexpires_ns: i64,
    },
    /// `timer:hrtimer_expire_entry`: the timer's callback runs, at `now_ns` (**ns**).
    TimerExpire {
        /// The timer.
        hrtimer: &'a str,
        /// Its callback.
        function: &'a str,
        /// The clock base's time when the callback ran, **ns**.
        now_ns: i64,
    },
    /// `timer:hrtimer_expire_exit`: the timer's callback returned.
    TimerExpireExit {
        /// The timer.
        hrtimer: &'a str,
    },
    /// `timer:hrtimer_cancel`: an armed timer removed before it fired.
    TimerCancel {
        /// The timer.
        hrtimer: &'a str,
    },
    /// `irq:irq_handler_entry`.
    IrqEntry {
        /// IRQ number.
        irq: u32,
        /// The handler's name (`/proc/interrupts`).
        name: &'a str,
    },
    /// `irq:irq_handler_exit`.
    IrqExit {
        /// IRQ number.
        irq: u32,
    },
    /// `irq:softirq_entry`.
    SoftirqEntry {
        /// Vector number (`HI`=0 … `RCU`=9).
        vec: u32,
    },
    /// `irq:softirq_exit`.
    SoftirqExit {
        /// Vector number.
        vec: u32,
    },
    /// An x86 `irq_vectors:<name>_entry` event (`local_timer`, `reschedule`,
    /// `call_function`, …): a system vector's handler starts.
    VectorEntry {
        /// The event name without `_entry`.
        name: &'a str,
    },
    /// `irq_vectors:<name>_exit`.
    VectorExit {
        /// The event name without `_exit`.
        name: &'a str,
    },
    /// `nmi:nmi_handler`: an NMI handler ran for `delta_ns` (**ns**).
    Nmi {
        /// The handler function.
        handler: &'a str,
        /// How long it ran, **ns**.
        delta_ns: u64,
    },
    /// `workqueue:workqueue_execute_start`: a kworker runs a work item.
    WorkStart {
        /// The work function.
        function: &'a str,
    },
    /// `workqueue:workqueue_execute_end`.
    WorkEnd,
    /// A sample of the timerlat tracer (Documentation/trace/timerlat-tracer.rst):
    /// `#1234 context irq timer_latency 1234 ns`.
    Timerlat {
        /// `irq`, `thread` or `user-ret`.
        context: &'a str,
        /// The latency, **ns**.
        latency_ns: u64,
    },
    /// Any other event.
    Other {
        /// Its name.
        name: &'a str,
    },
}

/// One parsed line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event<'a> {
    /// The task the event was logged in (the `TASK-PID` column).
    pub comm: &'a str,
    /// Its pid.
    pub pid: i32,
    /// The CPU.
    pub cpu: usize,
    /// The timestamp, **ns** (µs resolution in the text).
    pub ts_ns: i64,
    /// The context flags.
    pub flags: Flags,
    /// What happened.
    pub kind: Kind<'a>,
}

/// What a line of a `trace` file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line<'a> {
    /// An event.
    Event(Event<'a>),
    /// `CPU:1 [LOST 1234 EVENTS]`: the ring buffer overwrote events it had not shown.
    Lost(u64),
    /// A header or comment line (`# tracer: nop`), an empty line, or text this parser
    /// does not know.
    Skip,
}

/// Parses one line of a `trace` or `per_cpu/cpuN/trace` file.
pub fn parse(line: &str) -> Line<'_> {
    let t = line.trim_start();
    if t.is_empty() || t.starts_with('#') {
        return Line::Skip;
    }
    if t.starts_with("CPU:") {
        if let Some(i) = t.find("[LOST ") {
            let n = t[i + 6..].split(' ').next().and_then(|n| n.parse().ok());
            return n.map_or(Line::Skip, Line::Lost);
        }
        return Line::Skip;
    }
    parse_event(line).map_or(Line::Skip, Line::Event)
}

/// The next ` [NNN]` that may be the CPU column at or after byte `from`: its start and
/// the CPU. A task name may hold one too (`x [3]`): the caller tries each in turn.
fn cpu_column(line: &str, from: usize) -> Option<(usize, usize)> {
    let b = line.as_bytes();
    let mut from = from;
    while let Some(i) = line.get(from..)?.find(" [").map(|i| i + from) {
        let digits = b[i + 2..].iter().take_while(|c| c.is_ascii_digit()).count();
        if digits > 0 && b.get(i + 2 + digits) == Some(&b']') {
            if let Ok(cpu) = line[i + 2..i + 2 + digits].parse() {
                return Some((i, cpu));
            }
        }
        from = i + 2;
    }
    None
}

/// `123.456789:` → ns.
fn timestamp(tok: &str) -> Option<i64> {
    let tok = tok.strip_suffix(':')?;
    let (s, frac) = tok.split_once('.')?;
    if frac.is_empty() || frac.len() > 9 || !frac.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let secs: i64 = s.parse().ok()?;
    let mut f: i64 = frac.parse().ok()?;
    for _ in frac.len()..9 {
        f *= 10;
    }
    secs.checked_mul(1_000_000_000)?.checked_add(f)
}

fn flags(tok: &str) -> Flags {
    // The columns are positional; only the first says irqs-off / BH-off (a `b` in the
    // second is a need-resched state).
    // Columns: irqs-off, need-resched, hardirq/softirq, preempt depth (hex), and
    // migrate-disable (Documentation/trace/ftrace.rst, "Output format"). `X` (the
    // architecture cannot tell) is not "off".
    let b = tok.as_bytes();
    let first = b.first().copied();
    let ctx = b.get(2).copied();
    Flags {
        irqs_off: matches!(first, Some(b'd' | b'D')),
        bh_off: matches!(first, Some(b'D' | b'b')),
        hardirq: matches!(ctx, Some(b'h' | b'H' | b'Z')),
        softirq: matches!(ctx, Some(b's' | b'H')),
        nmi: matches!(ctx, Some(b'z' | b'Z')),
    }
}

fn parse_event(line: &str) -> Option<Event<'_>> {
    let mut from = 0;
    while let Some((col, cpu)) = cpu_column(line, from) {
        if let Some(e) = parse_at(line, col, cpu) {
            return Some(e);
        }
        from = col + 2;
    }
    None
}

/// The event of `line` with its CPU column at byte `col`, if the rest fits.
fn parse_at(line: &str, col: usize, cpu: usize) -> Option<Event<'_>> {
    let task = line[..col].trim();
    let (comm, pid) = task.rsplit_once('-')?;
    let pid: i32 = pid.parse().ok()?;
    let rest = &line[col..];
    let rest = &rest[rest.find(']')? + 1..];
    let mut words = rest.split_ascii_whitespace();
    let mut tok = words.next()?;
    let mut fl = Flags::default();
    let ts_ns = match timestamp(tok) {
        Some(t) => t,
        None => {
            fl = flags(tok);
            tok = words.next()?;
            timestamp(tok)?
        }
    };
    // The text after "<timestamp>: ".
    let after = &rest[rest.find(tok)? + tok.len()..];
    let after = after.strip_prefix(' ').unwrap_or(after);
    let kind = if after.starts_with('#') {
        // A tracer's sample line (timerlat, hwlat, osnoise).
        timerlat(after).unwrap_or(Kind::Other { name: "#" })
    } else {
        let (name, fields) = after
            .split_once(": ")
            .unwrap_or((after.trim_end_matches(':'), ""));
        event_kind(name, fields)
    };
    Some(Event {
        comm,
        pid,
        cpu,
        ts_ns,
        flags: fl,
        kind,
    })
}

/// The value of `key` (given with its `=`) in `fields`, up to the next ` name=`
/// or the end (trailing spaces cut). A value may contain spaces.
fn field<'a>(fields: &'a str, key: &str) -> Option<&'a str> {
    let mut from = 0;
    let start = loop {
        let i = fields[from..].find(key)? + from;
        if i == 0 || fields.as_bytes()[i - 1] == b' ' {
            break i + key.len();
        }
        from = i + 1;
    };
    let v = &fields[start..];
    let end = next_key(v).unwrap_or(v.len());
    Some(v[..end].trim_end())
}

/// The value of `key` (with its `=`) at its last occurrence after a space in `fields`,
/// up to the next ` name=` or the end: for the fields after a task name.
fn field_last<'a>(fields: &'a str, key: &str) -> Option<&'a str> {
    let mut end = fields.len();
    let start = loop {
        let i = fields[..end].rfind(key)?;
        if i > 0 && fields.as_bytes()[i - 1] == b' ' {
            break i + key.len();
        }
        end = i;
    };
    let v = &fields[start..];
    let e = next_key(v).unwrap_or(v.len());
    Some(v[..e].trim_end())
}

/// [`field_last`] as a number.
fn num_last<T: std::str::FromStr>(fields: &str, key: &str) -> Option<T> {
    field_last(fields, key)?.parse().ok()
}

/// Where the next ` name=` (or ` ==> `) starts in `v`.
fn next_key(v: &str) -> Option<usize> {
    let b = v.as_bytes();
    let mut i = 0;
    while let Some(j) = v[i..].find(' ').map(|j| j + i) {
        let word = &v[j + 1..];
        if word.starts_with("==>") {
            return Some(j);
        }
        let name_len = word
            .bytes()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == b'_')
            .count();
        if name_len > 0 && b.get(j + 1 + name_len) == Some(&b'=') {
            return Some(j);
        }
        i = j + 1;
    }
    None
}

/// A numeric field: its first word (`vec=1 [action=TIMER]` is 1).
fn num<T: std::str::FromStr>(fields: &str, key: &str) -> Option<T> {
    field(fields, key)?.split(' ').next()?.parse().ok()
}

fn event_kind<'a>(name: &'a str, f: &'a str) -> Kind<'a> {
    let other = Kind::Other { name };
    let k = match name {
        // A task name is any 15 bytes (`prctl(PR_SET_NAME)`), "x prev_pid=1" too: the
        // fields after a name are found from the right, where no name can reach.
        "sched_switch" => (|| {
            let i = f.rfind(" ==> next_comm=")?;
            let (prev, next) = (&f[..i], &f[i + 5..]);
            let pid_at = prev.rfind(" prev_pid=")?;
            let comm_at = next.rfind(" next_pid=")?;
            Some(Kind::Switch {
                prev_comm: prev[..pid_at].strip_prefix("prev_comm=")?,
                prev_pid: num_last(prev, "prev_pid=")?,
                prev_prio: num_last(prev, "prev_prio=")?,
                prev_state: field_last(prev, "prev_state=")?,
                next_comm: next[..comm_at].strip_prefix("next_comm=")?,
                next_pid: num_last(next, "next_pid=")?,
                next_prio: num_last(next, "next_prio=")?,
            })
        })(),
        "sched_waking" | "sched_wakeup" => (|| {
            let pid_at = f.rfind(" pid=")?;
            Some(Kind::Wake {
                comm: f[..pid_at].strip_prefix("comm=")?,
                pid: num_last(f, "pid=")?,
                prio: num_last(f, "prio=")?,
                waking: name == "sched_waking",
            })
        })(),
        "hrtimer_start" => (|| {
            let expires_ns = num(f, "expires=")?;
            Some(Kind::TimerStart {
                hrtimer: field(f, "hrtimer=")?,
                function: field(f, "function=")?,
                expires_ns,
                softexpires_ns: num(f, "softexpires=").unwrap_or(expires_ns),
            })
        })(),
        "hrtimer_expire_entry" => (|| {
            Some(Kind::TimerExpire {
                hrtimer: field(f, "hrtimer=")?,
                function: field(f, "function=")?,
                now_ns: num(f, "now=")?,
            })
        })(),
        "hrtimer_expire_exit" => {
            field(f, "hrtimer=").map(|hrtimer| Kind::TimerExpireExit { hrtimer })
        }
        "hrtimer_cancel" => field(f, "hrtimer=").map(|hrtimer| Kind::TimerCancel { hrtimer }),
        "irq_handler_entry" => (|| {
            Some(Kind::IrqEntry {
                irq: num(f, "irq=")?,
                name: field(f, "name=")?,
            })
        })(),
        "irq_handler_exit" => num(f, "irq=").map(|irq| Kind::IrqExit { irq }),
        "softirq_entry" => num(f, "vec=").map(|vec| Kind::SoftirqEntry { vec }),
        "softirq_exit" => num(f, "vec=").map(|vec| Kind::SoftirqExit { vec }),
        "nmi_handler" => (|| {
            Some(Kind::Nmi {
                handler: field(f, "handler=")?,
                delta_ns: num(f, "delta_ns=")?,
            })
        })(),
        // "work struct 00000000c0ffee00: function vmstat_update"
        "workqueue_execute_start" => f.split_once("function ").map(|(_, func)| Kind::WorkStart {
            function: func.trim_end(),
        }),
        "workqueue_execute_end" => Some(Kind::WorkEnd),
        _ => {
            if let Some(v) = name.strip_suffix("_entry").filter(|_| is_vector(f)) {
                Some(Kind::VectorEntry { name: v })
            } else {
                name.strip_suffix("_exit")
                    .filter(|_| is_vector(f))
                    .map(|v| Kind::VectorExit { name: v })
            }
        }
    };
    k.unwrap_or(other)
}

/// An `irq_vectors` event's fields: `vector=236`.
fn is_vector(f: &str) -> bool {
    f.starts_with("vector=")
}

/// `#1234 context irq timer_latency 1234 ns` (with any spacing).
fn timerlat(text: &str) -> Option<Kind<'_>> {
    let mut w = text.split_ascii_whitespace();
    w.next()?; // #N
    if w.next()? != "context" {
        return None;
    }
    let context = w.next()?;
    if w.next()? != "timer_latency" {
        return None;
    }
    let latency_ns = w.next()?.parse().ok()?;
    (w.next()? == "ns").then_some(Kind::Timerlat {
        context,
        latency_ns,
    })
}

/// The name of softirq vector `vec` (`include/linux/interrupt.h`, the order of
/// `softirq_to_name`).
pub fn softirq_name(vec: u32) -> &'static str {
    const NAMES: [&str; 10] = [
        "HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER",
        "RCU",
    ];
    NAMES.get(vec as usize).copied().unwrap_or("?")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(line: &str) -> Event<'_> {
        match parse(line) {
            Line::Event(e) => e,
            other => panic!("{line:?} parsed as {other:?}"),
        }
    }

    #[test]
    fn sched_switch_with_spaces_in_names() {
        let e = ev("  irq/24-GPIO Key-52      [001] d..2.   833.626755: sched_switch: prev_comm=irq/24-GPIO Key prev_pid=52 prev_prio=49 prev_state=S ==> next_comm=cyclictest next_pid=21931 next_prio=1");
        assert_eq!((e.comm, e.pid, e.cpu), ("irq/24-GPIO Key", 52, 1));
        assert_eq!(e.ts_ns, 833_626_755_000);
        assert!(e.flags.irqs_off && !e.flags.hardirq);
        assert!(!e.flags.bh_off);
        assert_eq!(
            e.kind,
            Kind::Switch {
                prev_comm: "irq/24-GPIO Key",
                prev_pid: 52,
                prev_prio: 49,
                prev_state: "S",
                next_comm: "cyclictest",
                next_pid: 21931,
                next_prio: 1
            }
        );
    }

    #[test]
    fn timer_wake_irq_softirq_vector_lines() {
        let e = ev("          <idle>-0       [001] d.h1.   903.738324: hrtimer_expire_entry: hrtimer=00000000ba53f61d function=hrtimer_wakeup now=903738324045");
        assert_eq!((e.comm, e.pid), ("<idle>", 0));
        assert!(e.flags.hardirq && e.flags.irqs_off);
        assert_eq!(
            e.kind,
            Kind::TimerExpire {
                hrtimer: "00000000ba53f61d",
                function: "hrtimer_wakeup",
                now_ns: 903_738_324_045
            }
        );
        let e = ev("      cyclictest-22095   [001] d..1.   903.737332: hrtimer_start: hrtimer=00000000ba53f61d function=hrtimer_wakeup expires=903738317673 softexpires=903738317673 mode=ABS was_armed=0");
        assert_eq!(
            e.kind,
            Kind::TimerStart {
                hrtimer: "00000000ba53f61d",
                function: "hrtimer_wakeup",
                expires_ns: 903_738_317_673,
                softexpires_ns: 903_738_317_673
            }
        );
        let e = ev("          <idle>-0       [001] dNh4.   903.737325: sched_wakeup: comm=cyclictest pid=22095 prio=1 target_cpu=001");
        assert_eq!(
            e.kind,
            Kind::Wake {
                comm: "cyclictest",
                pid: 22095,
                prio: 1,
                waking: false
            }
        );
        let e = ev("          <idle>-0       [001] ..s1.   903.740014: softirq_entry: vec=1 [action=TIMER]");
        assert!(e.flags.softirq);
        assert_eq!(e.kind, Kind::SoftirqEntry { vec: 1 });
        let e =
            ev("          <idle>-0       [001] d.h1.   903.738324: local_timer_entry: vector=236");
        assert_eq!(
            e.kind,
            Kind::VectorEntry {
                name: "local_timer"
            }
        );
        let e = ev("            ping-77      [000] d.h..    12.000001: irq_handler_entry: irq=24 name=virtio0-input.0");
        assert_eq!(
            e.kind,
            Kind::IrqEntry {
                irq: 24,
                name: "virtio0-input.0"
            }
        );
        let e = ev("     kworker/1:2-123     [001] .....    12.000002: workqueue_execute_start: work struct 00000000c0ffee00: function vmstat_update");
        assert_eq!(
            e.kind,
            Kind::WorkStart {
                function: "vmstat_update"
            }
        );
        let e = ev("          <idle>-0       [001] d.Z1.    12.000003: nmi_handler: handler=perf_event_nmi_handler delta_ns=4521");
        assert!(e.flags.nmi);
        assert_eq!(
            e.kind,
            Kind::Nmi {
                handler: "perf_event_nmi_handler",
                delta_ns: 4521
            }
        );
    }

    #[test]
    fn old_kernels_without_migrate_column_and_no_irq_info() {
        let e = ev("          <idle>-0     [003] d.h2  1234.567890: hrtimer_cancel: hrtimer=ffff8881f6a9c8a0");
        assert_eq!(e.cpu, 3);
        assert_eq!(
            e.kind,
            Kind::TimerCancel {
                hrtimer: "ffff8881f6a9c8a0"
            }
        );
        let e = ev("            bash-1   [000]  1.000001: sched_waking: comm=a b pid=7 prio=120 target_cpu=000");
        assert_eq!(e.flags, Flags::default());
        assert_eq!(e.ts_ns, 1_000_001_000);
        assert!(matches!(
            e.kind,
            Kind::Wake {
                comm: "a b",
                pid: 7,
                ..
            }
        ));
    }

    #[test]
    fn timerlat_lost_and_headers() {
        let e = ev("     timerlat/1-1234    [001] .......   123.456789: #1       context    irq timer_latency      1234 ns");
        assert_eq!(
            e.kind,
            Kind::Timerlat {
                context: "irq",
                latency_ns: 1234
            }
        );
        assert_eq!(parse("CPU:1 [LOST 1234 EVENTS]"), Line::Lost(1234));
        assert_eq!(parse("# tracer: nop"), Line::Skip);
        assert_eq!(parse(""), Line::Skip);
        assert_eq!(parse("garbage [x] line"), Line::Skip);
        // An unknown event keeps its name.
        let e = ev("  a-1 [000] .....     1.000000: foo_bar: x=1");
        assert_eq!(e.kind, Kind::Other { name: "foo_bar" });
    }

    #[test]
    fn bh_off_is_read_from_the_first_column_only() {
        assert!(flags("D.h2.").bh_off && flags("D.h2.").irqs_off);
        assert!(flags("b..1.").bh_off && !flags("b..1.").irqs_off);
        // `b` as the need-resched state (second column) is not BH off.
        assert!(!flags("db.2.").bh_off);
        assert!(!flags("d..2.").bh_off);
    }

    #[test]
    fn task_names_that_look_like_columns_or_fields_are_read_as_names() {
        // A name with a CPU column in it.
        let e = ev("           x [3]-4242    [001] d..2.   833.626755: sched_switch: prev_comm=x [3] prev_pid=4242 prev_prio=120 prev_state=T ==> next_comm=swapper/1 next_pid=0 next_prio=120");
        assert_eq!((e.comm, e.pid, e.cpu), ("x [3]", 4242, 1));
        // A name that spells another field: the real fields are the last ones.
        let e = ev("  a prev_pid=500-77      [001] d..2.   833.626755: sched_switch: prev_comm=a prev_pid=500 prev_pid=77 prev_prio=120 prev_state=T ==> next_comm=b next_pid=9 next_pid=8 next_prio=120");
        match e.kind {
            Kind::Switch {
                prev_comm,
                prev_pid,
                next_comm,
                next_pid,
                prev_state,
                ..
            } => {
                assert_eq!(
                    (prev_comm, prev_pid, prev_state),
                    ("a prev_pid=500", 77, "T")
                );
                assert_eq!((next_comm, next_pid), ("b next_pid=9", 8));
            }
            k => panic!("{k:?}"),
        }
        let e = ev("          <idle>-0       [001] dNh3.   833.626755: sched_wakeup: comm=x pid=1 pid=500 prio=1 target_cpu=001");
        match e.kind {
            Kind::Wake { comm, pid, .. } => assert_eq!((comm, pid), ("x pid=1", 500)),
            k => panic!("{k:?}"),
        }
    }

    #[test]
    fn flags_are_read_by_column() {
        // `X`: the architecture cannot tell, not "interrupts off"; `d` as a hex preempt
        // depth (13) in the fourth column is not either.
        assert!(!flags("X..1.").irqs_off);
        assert!(!flags("...d.").irqs_off);
        assert!(flags("d.h1.").hardirq && !flags("d.h1.").softirq);
        assert!(flags("..s1.").softirq);
        assert!(flags("d.H1.").hardirq && flags("d.H1.").softirq);
        assert!(flags("d.Z1.").nmi && flags("d.Z1.").hardirq);
        assert!(flags("d.z1.").nmi);
        // Kernels before 5.x print four columns.
        assert!(flags("d.h1").hardirq);
    }
}
