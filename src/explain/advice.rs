//! What would move the noise an explanation found off its CPU: for each thing that
//! took the CPU in the gap — the scheduler tick, a device IRQ, a softirq, a kworker,
//! RCU, another task — the boot parameter or rtbench `[tuning]` key that moves it
//! (kernel documentation: Documentation/admin-guide/kernel-parameters.txt `isolcpus=`,
//! `nohz_full=`, `rcu_nocbs=`, `irqaffinity=`; Documentation/timers/no_hz.rst;
//! Documentation/core-api/irq/irq-affinity.rst; the workqueue `cpumask` of
//! Documentation/core-api/workqueue.rst). The words name what to change, never a
//! change already made: rtbench's `tune check` says what is in force.

use super::{Explanation, IrqUse};

/// How the CPU of an explanation is set up: its number, and whether it is isolated
/// (`isolcpus=`) and adaptive-tick (`nohz_full=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuRole {
    /// The CPU.
    pub cpu: usize,
    /// In `/sys/devices/system/cpu/isolated`.
    pub isolated: bool,
    /// In `/sys/devices/system/cpu/nohz_full`.
    pub nohz_full: bool,
}

/// Share of the gap below which a contributor is not worth a line (1/20).
const WORTH: u64 = 20;

/// One line per kind of contributor of `e` (at least 1/20 of its gap, or the
/// headline's), each naming what moves it off `role`'s CPU; the most time first.
pub fn advice(e: &Explanation, role: CpuRole) -> Vec<String> {
    let gap = e.spike.latency_ns().max(1);
    let worth = |ns: u64| ns.saturating_mul(WORTH) >= gap;
    let cpu = role.cpu;
    let mut lines: Vec<(u64, String)> = Vec::new();
    let mut add = |ns: u64, line: String| {
        if !lines.iter().any(|(_, l)| *l == line) {
            lines.push((ns, line));
        }
    };
    for i in e.irqs.iter().filter(|i| worth(i.ns)) {
        add(i.ns, irq(i, role));
    }
    for s in e.softirqs.iter().filter(|s| worth(s.ns)) {
        add(s.ns, softirq(&s.name, cpu));
    }
    for t in e
        .tasks
        .iter()
        .filter(|t| t.pid != 0 && !t.own && worth(t.ran_ns))
    {
        let c = t.comm.as_str();
        let line = if c.starts_with("kworker/u") {
            "unbound work (kworker/u…): [tuning.workqueue] cpumask = true keeps unbound \
             workqueues on the housekeeping CPUs (/sys/devices/virtual/workqueue/cpumask)"
                .to_string()
        } else if c.starts_with("kworker/") {
            let work: Vec<&str> = t.work.iter().map(|w| w.function.as_str()).collect();
            let what = if work.is_empty() {
                String::new()
            } else {
                format!(" ({})", work.join(", "))
            };
            format!(
                "per-CPU work{what} queued on CPU {cpu}: only its submitter decides where it \
                 runs; isolcpus=domain,managed_irq and nohz_full=CPU ([tuning] isolated with \
                 [tuning.boot] isolcpus, nohz_full) keep most submitters away"
            )
        } else if c.starts_with("rcu") {
            format!(
                "RCU callbacks ({c}): rcu_nocbs={cpu} ([tuning.boot] rcu_nocbs) runs them on \
                 the housekeeping CPUs"
            )
        } else if c.starts_with("ksoftirqd/") {
            format!(
                "softirqs deferred to {c}: move the IRQs that raise them ([tuning.irq] affinity)"
            )
        } else {
            format!(
                "task {}: isolcpus={cpu} ([tuning] isolated with [tuning.boot] isolcpus) keeps \
                 the scheduler from placing tasks there; pin the others off it (taskset, a cpuset)",
                crate::error::echo(c)
            )
        };
        add(t.ran_ns, line);
    }
    if let Some(n) = e.nmis.as_ref().filter(|n| worth(n.ns)) {
        add(
            n.ns,
            "NMIs: the perf or hard-lockup watchdog (nmi_watchdog=0 at boot, or \
             kernel.nmi_watchdog = 0)"
                .to_string(),
        );
    }
    if worth(e.silent_ns) {
        add(
            e.silent_ns,
            "time with no event: interrupts off, SMIs, firmware or the hypervisor — \
             nothing the kernel's parameters move; `rtbench selftest`'s hwlat gate measures \
             the hardware's share"
                .to_string(),
        );
    }
    lines.sort_by_key(|(ns, _)| std::cmp::Reverse(*ns));
    lines.into_iter().map(|(_, l)| l).collect()
}

/// A hard IRQ or system vector.
fn irq(i: &IrqUse, role: CpuRole) -> String {
    let cpu = role.cpu;
    let n = i.name.as_str();
    if n.starts_with("local_timer") || n.starts_with("arch_timer") || n.contains("timer (vector)") {
        return if role.nohz_full {
            format!(
                "the scheduler tick on nohz_full CPU {cpu}, which it stops only while one task \
                 runs there: a second runnable task, RCU (rcu_nocbs={cpu}, [tuning.boot] \
                 rcu_nocbs) or a timer armed on the CPU keeps it"
            )
        } else {
            format!(
                "the scheduler tick: nohz_full={cpu} at boot ([tuning.boot] nohz_full) stops it \
                 while one task runs on CPU {cpu}"
            )
        };
    }
    if n.ends_with("(vector)") {
        return format!(
            "inter-processor interrupts ({n}): work other CPUs send to CPU {cpu} (TLB \
             shootdowns, smp_call_function); isolcpus=domain keeps the tasks that cause them away"
        );
    }
    match n.split_once(':') {
        Some((num, dev)) if num.chars().all(|c| c.is_ascii_digit()) => format!(
            "IRQ {num} ({}): [tuning.irq] affinity = true moves it to the housekeeping CPUs \
             (/proc/irq/{num}/smp_affinity_list); irqaffinity= at boot ([tuning.boot] \
             irqaffinity) for IRQs set up later; a managed IRQ moves only with \
             isolcpus=managed_irq",
            crate::error::echo(dev)
        ),
        _ => format!(
            "hard IRQ {}: its affinity ([tuning.irq] affinity, irqaffinity= at boot)",
            crate::error::echo(n)
        ),
    }
}

/// A softirq.
fn softirq(name: &str, cpu: usize) -> String {
    match name {
        "RCU" => {
            format!("RCU softirq: rcu_nocbs={cpu} ([tuning.boot] rcu_nocbs) with nohz_full={cpu}")
        }
        "TIMER" | "HRTIMER" => format!(
            "{name} softirq: timers armed on CPU {cpu}; nohz_full={cpu} and [tuning.sysctl] \
             timer_migration move the unpinned ones"
        ),
        "SCHED" => format!(
            "SCHED softirq (load balancing): isolcpus=domain takes CPU {cpu} out of the \
             scheduler domains"
        ),
        other => format!(
            "{other} softirq: raised by a device's IRQ on CPU {cpu}; it moves with the IRQ \
             ([tuning.irq] affinity)"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explain::{Spike, SpikeKind, TaskUse, WorkUse};

    fn gap(ns: u64) -> Explanation {
        Explanation {
            spike: Spike {
                kind: SpikeKind::Poll,
                start_ns: 0,
                wake_ns: ns as i64,
                cpu: 1,
                ..Spike::default()
            },
            ..Explanation::default()
        }
    }

    fn role(nohz_full: bool) -> CpuRole {
        CpuRole {
            cpu: 1,
            isolated: true,
            nohz_full,
        }
    }

    /// Each kind of contributor names the parameter that moves it; small shares and
    /// rtbench's own threads are left out; the most time comes first.
    #[test]
    fn each_contributor_names_what_moves_it() {
        let mut e = gap(100_000);
        e.irqs = vec![
            IrqUse {
                name: "local_timer (vector)".into(),
                count: 1,
                ns: 10_000,
            },
            IrqUse {
                name: "36:virtio1-req.0".into(),
                count: 1,
                ns: 30_000,
            },
            IrqUse {
                name: "37:eth0".into(),
                count: 1,
                ns: 100,
            },
        ];
        e.softirqs = vec![IrqUse {
            name: "RCU".into(),
            count: 1,
            ns: 6_000,
        }];
        e.tasks = vec![
            TaskUse {
                comm: "kworker/1:0H".into(),
                pid: 26,
                ran_ns: 40_000,
                work: vec![WorkUse {
                    function: "blk_mq_requeue_work".into(),
                    count: 1,
                }],
                ..TaskUse::default()
            },
            TaskUse {
                comm: "rtbench-M0".into(),
                pid: 9,
                ran_ns: 50_000,
                own: true,
                ..TaskUse::default()
            },
        ];
        let a = advice(&e, role(false));
        assert_eq!(a.len(), 4, "{a:#?}");
        assert!(
            a[0].contains("(blk_mq_requeue_work) queued on CPU 1"),
            "{a:#?}"
        );
        assert!(
            a[1].starts_with("IRQ 36 (virtio1-req.0): [tuning.irq] affinity"),
            "{a:#?}"
        );
        assert!(
            a[2].contains("nohz_full=1 at boot ([tuning.boot] nohz_full)"),
            "{a:#?}"
        );
        assert!(a[3].contains("rcu_nocbs=1"), "{a:#?}");
        // On a nohz_full CPU the tick says why it was not stopped.
        let a = advice(&e, role(true));
        assert!(a[2].contains("on nohz_full CPU 1"), "{a:#?}");
        let mut e = gap(100_000);
        e.tasks = vec![TaskUse {
            comm: "kworker/u8:1".into(),
            pid: 30,
            ran_ns: 90_000,
            ..TaskUse::default()
        }];
        e.silent_ns = 10_000;
        let a = advice(&e, role(true));
        assert!(a[0].contains("[tuning.workqueue] cpumask"), "{a:#?}");
        assert!(a[1].starts_with("time with no event"), "{a:#?}");
    }

    /// A poll gap on CPU 1 (SCHED_OTHER polling thread, pid 500) written as the kernel
    /// writes its generic events: a device IRQ, the tick, then a per-CPU kworker woken
    /// and switched in with its work function, and the switch back. The attribution
    /// names the kworker (it took the CPU from a thread that never sleeps) and the
    /// advice names what moves each contributor.
    #[cfg(feature = "explain")]
    #[test]
    fn a_poll_gap_from_the_generic_events_is_attributed_and_advised() {
        use crate::explain::analyse::{analyse, Context};
        use crate::explain::CauseKind;
        let line = |task: &str, flags: &str, t: &str, ev: &str| {
            format!("{task:>16} [001] {flags} {t}: {ev}\n")
        };
        let poll = "rtbench-oslat0-500";
        let kw = "kworker/1:2-41";
        let mut trace = String::from("# tracer: nop\n#\n");
        for (task, flags, t, ev) in [
            // Before the gap: the trace covers it from its start.
            (poll, "d.h1.", "100.000020", "irq_handler_entry: irq=37 name=eth0"),
            (poll, "d.h1.", "100.000021", "irq_handler_exit: irq=37 ret=handled"),
            (poll, "d.h1.", "100.000060", "irq_handler_entry: irq=36 name=virtio1-req.0"),
            (poll, "d.h1.", "100.000090", "irq_handler_exit: irq=36 ret=handled"),
            (poll, "d.h1.", "100.000100", "local_timer_entry: vector=236"),
            (poll, "dNh3.", "100.000110", "sched_waking: comm=kworker/1:2 pid=41 prio=120 target_cpu=001"),
            (poll, "dNh4.", "100.000111", "sched_wakeup: comm=kworker/1:2 pid=41 prio=120 target_cpu=001"),
            (poll, "dNh1.", "100.000125", "local_timer_exit: vector=236"),
            (poll, "d..2.", "100.000126", "sched_switch: prev_comm=rtbench-oslat0 prev_pid=500 prev_prio=120 prev_state=R+ ==> next_comm=kworker/1:2 next_pid=41 next_prio=120"),
            (kw, ".....", "100.000130", "workqueue_execute_start: work struct 00000000ae2b05e5: function vmstat_update"),
            (kw, ".....", "100.000380", "workqueue_execute_end: work struct 00000000ae2b05e5: function vmstat_update"),
            (kw, "d..2.", "100.000390", "sched_switch: prev_comm=kworker/1:2 prev_pid=41 prev_prio=120 prev_state=I ==> next_comm=rtbench-oslat0 next_pid=500 next_prio=120"),
        ] {
            trace.push_str(&line(task, flags, t, ev));
        }
        let s = Spike {
            test: "oslat".into(),
            cpu: 1,
            tid: 500,
            prio: 120,
            start_ns: 100_000_050_000,
            timer_ns: 100_000_050_000,
            wake_ns: 100_000_400_000,
            kind: SpikeKind::Poll,
            ..Spike::default()
        };
        let e = analyse(&s, &trace, &Context::default());
        assert_eq!(e.cause.kind, CauseKind::Task, "{e:#?}");
        assert_eq!(e.cause.pid, Some(41), "{e:#?}");
        assert!(
            e.cause.text.contains("instead of the polling thread"),
            "{e:#?}"
        );
        let k = e.tasks.iter().find(|t| t.pid == 41).expect("the kworker");
        assert_eq!(
            k.work.first().map(|w| w.function.as_str()),
            Some("vmstat_update")
        );
        assert!(
            e.irqs.iter().any(|i| i.name == "36:virtio1-req.0"),
            "{:?}",
            e.irqs
        );
        assert!(
            e.irqs.iter().any(|i| i.name.starts_with("local_timer")),
            "{:?}",
            e.irqs
        );
        let a = advice(&e, role(false));
        assert!(
            a[0].starts_with("per-CPU work (vmstat_update) queued on CPU 1"),
            "{a:#?}"
        );
        assert!(
            a.iter().any(|l| l.starts_with("IRQ 36 (virtio1-req.0)")),
            "{a:#?}"
        );
        assert!(
            a.iter().any(|l| l.contains("nohz_full=1 at boot")),
            "{a:#?}"
        );
    }
}
