//! The analysis on traces recorded on this project's development VM (6.18
//! PREEMPT_DYNAMIC, generic events, `trace_clock` mono) with a culprit injected:
//! cyclictest `-t1 -a1 -p98 -i1000` measured on CPU 1. Each file is the CPU's
//! `per_cpu/cpu1/trace` from a little before the deadline to a little after the wakeup.
//! To record another: run rtbench with `RTBENCH_DEBUG_TRACE_DIR=DIR` in its
//! environment, which writes the frozen trace of every explained sample to
//! `DIR/cpuN-tidT-DdeadlineNs-WwakeNs.trace`, and cut it to the window.

use super::*;
use crate::explain::{CauseKind, TaskUse};

/// A recorded trace (stored gzipped).
fn fixture(name: &str) -> String {
    use std::io::Read;
    let path = format!(
        "{}/src/explain/testdata/{name}.trace.gz",
        env!("CARGO_MANIFEST_DIR")
    );
    let gz = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut s = String::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_string(&mut s)
        .unwrap();
    s
}

fn spike(tid: i32, deadline_ns: i64, wake_ns: i64) -> Spike {
    Spike {
        test: "cyclic".into(),
        thread: 0,
        cpu: 1,
        tid,
        prio: 1, // SCHED_FIFO 98
        start_ns: deadline_ns,
        wake_ns,
        timer_ns: deadline_ns,
        kind: SpikeKind::Timer,
        wall_ns: 0,
    }
}

/// `chrt -f 99 taskset -c 1 sh -c 'while :; do :; done'` for 0.3 s.
#[test]
fn a_fifo_99_busy_loop_is_named_as_the_task_that_outranked_the_thread() {
    let s = spike(21931, 833_627_732_588, 833_925_590_000);
    let e = analyse(&s, &fixture("fifo99-busy-loop"), &Context::default());
    // The timer fired on time; the thread waited for the CPU.
    let irq = e.irq_latency_ns.unwrap();
    assert!(irq < 50_000, "{e:#?}");
    let thread = e.thread_latency_ns.unwrap();
    assert!(thread > 290_000_000, "{e:#?}");
    assert_eq!(e.cause.kind, CauseKind::Task, "{e:#?}");
    assert!(e.cause.valid);
    assert_eq!(e.cause.pid, Some(21936));
    let culprit = &e.tasks[0];
    assert_eq!(culprit.pid, 21936);
    assert_eq!(culprit.prio, 0, "FIFO 99 while it ran: {culprit:?}");
    assert!(culprit.outranks);
    assert!(culprit.ran_ns > 280_000_000, "{culprit:?}");
    assert_eq!(e.at_deadline.as_ref().map(|t| t.pid), Some(21936));
    // The busy loop's time excludes the ticks that interrupted it.
    assert!(
        e.irqs
            .iter()
            .any(|i| i.name == "local_timer (vector)" && i.count > 50),
        "{:?}",
        e.irqs
    );
    assert!(
        e.softirqs.iter().any(|i| i.name == "RCU"),
        "{:?}",
        e.softirqs
    );
    assert_eq!(e.silent_ns.min(50_000), e.silent_ns);
    assert!(e.notes.is_empty(), "{:?}", e.notes);
}

/// `kill -STOP` of cyclictest, `kill -CONT` 0.3 s later. The switch back to the thread
/// is missing from this trace (the kernel did not log it); the stop is still found.
#[test]
fn sigstop_is_an_invalid_sample_not_the_kernels_latency() {
    let s = spike(22014, 888_606_765_705, 888_907_277_705);
    let e = analyse(&s, &fixture("sigstop"), &Context::default());
    assert_eq!(e.cause.kind, CauseKind::Stopped, "{e:#?}");
    assert!(!e.cause.valid);
    assert!(e.cause.text.contains("SIGSTOP"), "{}", e.cause.text);
    assert!(e.cause.ns > 290_000_000, "{:?}", e.cause);
}

/// `echo 1 > cgroup.freeze` (cgroup v2) of cyclictest's cgroup for 0.3 s: the freezer
/// wakes the thread, which sleeps again in the freezer's trap without its timer.
#[test]
fn the_cgroup_v2_freezer_is_an_invalid_sample() {
    let s = spike(22084, 901_618_438_142, 901_919_404_142);
    let e = analyse(&s, &fixture("freezer-v2"), &Context::default());
    assert_eq!(e.cause.kind, CauseKind::Stopped, "{e:#?}");
    assert!(!e.cause.valid);
    assert!(e.cause.text.contains("frozen"), "{}", e.cause.text);
}

/// `echo 1 > cgroup.freeze` landing between the timer's wakeup and the thread's return
/// to user space (about 1 freeze in 100 at 1 kHz): the timer fired on time and woke
/// the thread, which slept in the freezer's trap before it read the clock. The kernel
/// logged no switch to the thread here either.
#[test]
fn a_freeze_after_the_timers_wakeup_is_an_invalid_sample() {
    let s = spike(20995, 14_050_165_654_565, 14_050_467_550_702);
    let trace = fixture("freezer-v2-after-wake");
    let e = analyse(&s, &trace, &Context::default());
    assert!(e.irq_latency_ns.unwrap() < 50_000, "{e:#?}");
    assert_eq!(e.cause.kind, CauseKind::Stopped, "{e:#?}");
    assert!(!e.cause.valid);
    assert!(
        e.cause.text.contains("after its timer woke it"),
        "{}",
        e.cause.text
    );
    assert!(e.cause.ns > 290_000_000, "{:?}", e.cause);
    // An uninterruptible sleep there (a lock, a page fault) is the system's latency.
    let d = trace.replace(
        "14050.165780: sched_switch: prev_comm=rtbench-T0 prev_pid=20995 prev_prio=1 prev_state=S",
        "14050.165780: sched_switch: prev_comm=rtbench-T0 prev_pid=20995 prev_prio=1 prev_state=D",
    );
    assert_ne!(d, trace);
    let e = analyse(&s, &d, &Context::default());
    assert_ne!(e.cause.kind, CauseKind::Stopped, "{e:#?}");
    assert!(e.cause.valid);
}

/// `echo FROZEN > freezer.state` (cgroup v1) for 0.3 s: the timer fires on time and
/// cannot wake the frozen thread.
#[test]
fn the_cgroup_v1_freezer_is_an_invalid_sample() {
    let s = spike(22095, 903_738_317_673, 904_039_610_673);
    let e = analyse(&s, &fixture("freezer-v1"), &Context::default());
    assert!(e.irq_latency_ns.unwrap() < 50_000, "{e:#?}");
    assert_eq!(e.cause.kind, CauseKind::Stopped, "{e:#?}");
    assert!(!e.cause.valid);
}

/// `rtbench pipe -a 1 -p 90 -i 0` (a back-to-back pair at SCHED_FIFO 90, 100 % busy)
/// beside the measured thread: on this 6.18 kernel the fair server runs fair tasks for
/// ~50 ms of every second while both are runnable.
#[test]
fn rt_throttling_by_a_busy_fifo_pair_is_an_invalid_sample() {
    let s = spike(5760, 2_308_563_053_563, 2_308_616_040_482);
    let ctx = Context {
        rt_throttling: Some((950_000, 1_000_000)),
        own_tids: vec![5760],
        ..Context::default()
    };
    let e = analyse(&s, &fixture("rt-throttling-pipe"), &ctx);
    assert_eq!(e.cause.kind, CauseKind::RtThrottled, "{:?}", e.cause);
    assert!(!e.cause.valid);
    assert!(
        e.cause.text.contains("rtbench-S0 (pid 5756"),
        "{}",
        e.cause.text
    );
    assert!(e.cause.ns > 40_000_000, "{:?}", e.cause);
    // Without RT throttling configured the same gap is lower-priority work that kept
    // the CPU: never "throttling".
    let e = analyse(&s, &fixture("rt-throttling-pipe"), &Context::default());
    assert_ne!(e.cause.kind, CauseKind::RtThrottled);
}

/// A trace that begins after the deadline explains nothing and says why.
#[test]
fn a_trace_that_does_not_reach_back_to_the_deadline_says_so() {
    let s = spike(21931, 833_627_732_588, 833_925_590_000);
    let text = fixture("fifo99-busy-loop");
    let late: String = text
        .lines()
        .filter(|l| match event::parse(l) {
            Line::Event(e) => e.ts_ns > 833_900_000_000,
            _ => true,
        })
        .map(|l| format!("{l}\n"))
        .collect();
    let e = analyse(&s, &late, &Context::default());
    assert!(
        e.notes.iter().any(|n| n.contains("after the deadline")),
        "{:?}",
        e.notes
    );
    let e = analyse(&s, "", &Context::default());
    assert_eq!(e.cause.kind, CauseKind::Untraced);
    assert!(e.notes.iter().any(|n| n.contains("empty")), "{:?}", e.notes);
}

/// Synthetic lines for shapes the recorded traces do not hold: a hard IRQ inside the
/// IRQ-latency window, a silent gap, and a lower-priority task keeping the CPU.
fn line(ts_us: i64, pid: i32, comm: &str, flags: &str, rest: &str) -> String {
    format!(
        "{comm:>16}-{pid:<7} [001] {flags} {:>6}.{:06}: {rest}\n",
        ts_us / 1_000_000,
        ts_us % 1_000_000
    )
}

#[test]
fn a_hard_irq_a_silent_gap_and_a_preempt_off_section_each_named() {
    let tid = 500;
    let d = 10_000_000_000i64; // 10 s, in ns
    let us = |x: i64| d / 1000 + x; // µs after the deadline
    let mut t = String::new();
    t += &line(us(-100), 7, "worker", "d..2.", "sched_switch: prev_comm=rtbench-T0 prev_pid=500 prev_prio=1 prev_state=S ==> next_comm=worker next_pid=7 next_prio=120");
    // Just before: the thread armed its timer.
    t = line(us(-101), tid, "rtbench-T0", "d..1.", &format!("hrtimer_start: hrtimer=00000000aaaa function=hrtimer_wakeup expires={d} softexpires={d} mode=ABS was_armed=0")) + &t;
    t += &line(
        us(10),
        7,
        "worker",
        "d.h1.",
        "irq_handler_entry: irq=24 name=eth0",
    );
    t += &line(
        us(210),
        7,
        "worker",
        "d.h1.",
        "irq_handler_exit: irq=24 ret=handled",
    );
    // 400 µs with no event: interrupts off in "worker".
    t += &line(
        us(610),
        7,
        "worker",
        "d.h1.",
        "local_timer_entry: vector=236",
    );
    t += &line(
        us(611),
        7,
        "worker",
        "d.h1.",
        &format!(
            "hrtimer_expire_entry: hrtimer=00000000aaaa function=hrtimer_wakeup now={}",
            d + 611_000
        ),
    );
    t += &line(
        us(611),
        7,
        "worker",
        "d.h2.",
        "sched_waking: comm=rtbench-T0 pid=500 prio=1 target_cpu=001",
    );
    t += &line(
        us(612),
        7,
        "worker",
        "dNh3.",
        "sched_wakeup: comm=rtbench-T0 pid=500 prio=1 target_cpu=001",
    );
    t += &line(
        us(613),
        7,
        "worker",
        "dNh1.",
        "local_timer_exit: vector=236",
    );
    // worker keeps the CPU 300 µs after the wakeup (need-resched set).
    t += &line(us(913), 7, "worker", "dN.2.", "sched_switch: prev_comm=worker prev_pid=7 prev_prio=120 prev_state=R+ ==> next_comm=rtbench-T0 next_pid=500 next_prio=1");
    let s = spike(tid, d, d + 920_000);
    let e = analyse(&s, &t, &Context::default());
    assert_eq!(e.irq_latency_ns, Some(611_000), "{e:#?}");
    assert_eq!(e.thread_latency_ns, Some(913_000));
    assert_eq!(e.irqs[0].name, "24:eth0");
    assert_eq!((e.irqs[0].count, e.irqs[0].ns), (1, 200_000));
    // 10 µs before the IRQ and 400 µs after it: no event while the timer was due.
    assert_eq!(e.silent_ns, 410_000, "{e:#?}");
    let w = &e.tasks[0];
    assert_eq!((w.pid, w.outranks, w.after_wakeup_ns), (7, false, 300_000));
    assert_eq!(e.cause.kind, CauseKind::Silent, "{:?}", e.cause);
    assert!(e.cause.text.contains("interrupts off"), "{}", e.cause.text);
    assert!(
        e.cause.text.contains("worker (pid 7, nice 0)"),
        "{}",
        e.cause.text
    );
    // With RT throttling configured, a lower-priority task that kept the CPU for long
    // is throttling; here 300 µs is not.
    let ctx = Context {
        rt_throttling: Some((950_000, 1_000_000)),
        ..Context::default()
    };
    assert_eq!(analyse(&s, &t, &ctx).cause.kind, CauseKind::Silent);
}

/// A real-time task at the thread's own priority that runs on after the wakeup (a
/// pair's sender on the receiver's CPU) is not preemption turned off: FIFO does not
/// preempt an equal priority. A fair task doing the same (need-resched set, no switch)
/// is.
#[test]
fn an_equal_priority_task_after_the_wakeup_is_named_as_such() {
    let tid = 500;
    let d = 10_000_000_000i64;
    let us = |x: i64| d / 1000 + x;
    let trace = |prio: i32| {
        let mut t = String::new();
        t += &line(us(-101), tid, "rtbench-T0", "d..1.", &format!("hrtimer_start: hrtimer=00000000aaaa function=hrtimer_wakeup expires={d} softexpires={d} mode=ABS was_armed=0"));
        t += &line(us(-100), tid, "rtbench-T0", "d..2.", &format!("sched_switch: prev_comm=rtbench-T0 prev_pid=500 prev_prio=1 prev_state=S ==> next_comm=sender next_pid=7 next_prio={prio}"));
        t += &line(
            us(5),
            7,
            "sender",
            "d.h1.",
            &format!(
                "hrtimer_expire_entry: hrtimer=00000000aaaa function=hrtimer_wakeup now={}",
                d + 5_000
            ),
        );
        t += &line(
            us(6),
            7,
            "sender",
            "dNh3.",
            "sched_wakeup: comm=rtbench-T0 pid=500 prio=1 target_cpu=001",
        );
        t += &line(
            us(7),
            7,
            "sender",
            "dNh1.",
            "hrtimer_expire_exit: hrtimer=00000000aaaa",
        );
        t += &line(us(306), 7, "sender", "d..2.", &format!("sched_switch: prev_comm=sender prev_pid=7 prev_prio={prio} prev_state=S ==> next_comm=rtbench-T0 next_pid=500 next_prio=1"));
        t
    };
    let s = spike(tid, d, d + 310_000);
    let e = analyse(&s, &trace(1), &Context::default());
    assert_eq!(e.cause.kind, CauseKind::Task, "{:?}", e.cause);
    assert_eq!(e.cause.pid, Some(7));
    assert!(e.cause.text.contains("own priority"), "{}", e.cause.text);
    let e = analyse(&s, &trace(120), &Context::default());
    assert_eq!(e.cause.kind, CauseKind::PreemptOff, "{:?}", e.cause);
}

#[test]
fn task_labels_say_policy_and_priority() {
    let mut t = TaskUse {
        comm: "kworker/1:2".into(),
        pid: 123,
        prio: 0,
        ..TaskUse::default()
    };
    assert_eq!(t.label(), "kworker/1:2 (pid 123, RT 99)");
    t.policy = Some("FIFO".into());
    assert_eq!(t.label(), "kworker/1:2 (pid 123, FIFO 99)");
    t.prio = 120;
    t.policy = Some("OTHER".into());
    t.own = true;
    assert_eq!(
        t.label(),
        "kworker/1:2 (pid 123, OTHER nice 0, rtbench's own)"
    );
    t.prio = -1;
    assert_eq!(t.sched(), "DEADLINE");
}

/// Loopback TCP (`stress-ng --sock`) on the measured CPU, recorded on this VM: the
/// socket's receive work ran in the sender's own context with bottom halves disabled
/// (the `D` flag: interrupts and BH off), not as a NET_RX softirq, and kept the CPU
/// 588 µs after the wakeup. The explanation says it was a softirq-disabled section.
#[test]
fn a_bh_disabled_section_is_named_as_such() {
    let t = "\
  stress-ng-sock-15597   [001] d..2.  7380.158236: hrtimer_start: hrtimer=00000000dbe47abc function=it_real_fn expires=7383158236207 softexpires=7383158236207 mode=REL was_armed=0
  stress-ng-sock-15597   [001] d.h1.  7380.158476: local_timer_entry: vector=236
  stress-ng-sock-15597   [001] d.h1.  7380.158477: hrtimer_expire_entry: hrtimer=00000000547cbedd function=hrtimer_wakeup now=7380158476736
  stress-ng-sock-15597   [001] d.h4.  7380.158478: sched_wakeup: comm=stress-ng-sock pid=15598 prio=120 target_cpu=001
  stress-ng-sock-15597   [001] d.h1.  7380.158478: hrtimer_expire_exit: hrtimer=00000000547cbedd
  stress-ng-sock-15597   [001] d.h1.  7380.158483: local_timer_exit: vector=236
  stress-ng-sock-15597   [001] D.h2.  7380.158762: local_timer_entry: vector=236
  stress-ng-sock-15597   [001] D.h2.  7380.158763: hrtimer_expire_entry: hrtimer=00000000b47ff48b function=hrtimer_wakeup now=7380158762482
  stress-ng-sock-15597   [001] DNh5.  7380.158764: sched_wakeup: comm=rtbench-T0 pid=15594 prio=1 target_cpu=001
  stress-ng-sock-15597   [001] DNh2.  7380.158764: hrtimer_expire_exit: hrtimer=00000000b47ff48b
  stress-ng-sock-15597   [001] DNh2.  7380.158769: local_timer_exit: vector=236
  stress-ng-sock-15597   [001] d..2.  7380.159357: sched_switch: prev_comm=stress-ng-sock prev_pid=15597 prev_prio=120 prev_state=R ==> next_comm=rtbench-T0 next_pid=15594 next_prio=1
";
    let s = spike(15594, 7_380_158_755_000, 7_380_159_358_730);
    let e = analyse(&s, t, &Context::default());
    assert_eq!(e.cause.kind, CauseKind::PreemptOff, "{e:#?}");
    assert_eq!(e.cause.pid, Some(15597));
    assert!(
        e.cause.text.contains("softirqs disabled"),
        "{}",
        e.cause.text
    );
    assert!(e.tasks.iter().any(|t| t.pid == 15597 && t.bh_off), "{e:#?}");
    // The same stretch in a 10 ms gap explains a twentieth of it: no single cause,
    // and the share is said.
    let long = spike(15594, 7_380_158_755_000, 7_380_168_755_000);
    let e = analyse(&long, t, &Context::default());
    assert_eq!(e.cause.kind, CauseKind::Unknown, "{e:#?}");
    assert!(
        e.cause
            .text
            .contains("the largest share, stress-ng-sock (pid 15597"),
        "{}",
        e.cause.text
    );
    // Without the BH flag the same stretch is preemption or interrupts disabled.
    let plain = t.replace("] D", "] d");
    let e = analyse(&s, &plain, &Context::default());
    assert!(
        e.cause.text.contains("preemption or interrupts disabled"),
        "{}",
        e.cause.text
    );
    assert!(e.tasks.iter().all(|t| !t.bh_off));
}

/// A stop that ended before the deadline (the thread ran again, SIGSTOP then SIGCONT,
/// or a debugger's attach) is no evidence for a later sample: a FIFO 99 task that held
/// the CPU over the deadline is the cause, and the sample is valid.
#[test]
fn a_stop_that_ended_before_the_deadline_excuses_nothing() {
    let tid = 500;
    let d = 10_000_000_000i64; // the deadline, ns
    let us = |x: i64| d / 1000 + x; // µs after the deadline
    let sw = |from: (&str, i32, i32, &str), to: (&str, i32, i32)| {
        format!(
            "sched_switch: prev_comm={} prev_pid={} prev_prio={} prev_state={} ==> next_comm={} next_pid={} next_prio={}",
            from.0, from.1, from.2, from.3, to.0, to.1, to.2
        )
    };
    let mut t = String::new();
    // 300 ms before: stopped (state T), then continued and running again.
    t += &line(
        us(-300_000),
        tid,
        "rtbench-T0",
        "d..2.",
        &sw(("rtbench-T0", tid, 1, "T"), ("swapper/1", 0, 120)),
    );
    t += &line(
        us(-200_000),
        0,
        "<idle>",
        "d..2.",
        &sw(("swapper/1", 0, 120, "R"), ("rtbench-T0", tid, 1)),
    );
    t += &line(
        us(-199_990),
        tid,
        "rtbench-T0",
        "d..1.",
        &format!("hrtimer_start: hrtimer=00000000b47ff48b function=hrtimer_wakeup expires={d} softexpires={d} mode=ABS was_armed=0"),
    );
    t += &line(
        us(-199_980),
        tid,
        "rtbench-T0",
        "d..2.",
        &sw(("rtbench-T0", tid, 1, "S"), ("swapper/1", 0, 120)),
    );
    // A FIFO 99 loop takes the CPU before the deadline and keeps it 400 µs past it.
    t += &line(
        us(-100),
        0,
        "<idle>",
        "d..2.",
        &sw(("swapper/1", 0, 120, "R"), ("burn", 77, 0)),
    );
    t += &line(us(1), 77, "burn", "d.h1.", "local_timer_entry: vector=236");
    t += &line(
        us(2),
        77,
        "burn",
        "d.h1.",
        &format!(
            "hrtimer_expire_entry: hrtimer=00000000b47ff48b function=hrtimer_wakeup now={}",
            d + 2_000
        ),
    );
    t += &line(
        us(3),
        77,
        "burn",
        "d.h3.",
        &format!("sched_wakeup: comm=rtbench-T0 pid={tid} prio=1 target_cpu=001"),
    );
    t += &line(
        us(4),
        77,
        "burn",
        "d.h1.",
        "hrtimer_expire_exit: hrtimer=00000000b47ff48b",
    );
    t += &line(us(5), 77, "burn", "d.h1.", "local_timer_exit: vector=236");
    t += &line(
        us(400),
        77,
        "burn",
        "d..2.",
        &sw(("burn", 77, 0, "S"), ("rtbench-T0", tid, 1)),
    );
    let s = spike(tid, d, d + 401_000);
    let e = analyse(&s, &t, &Context::default());
    assert_eq!(e.cause.kind, CauseKind::Task, "{e:#?}");
    assert!(e.cause.valid);
    assert_eq!(e.cause.pid, Some(77));
    // The same trace without the run between the stop and the deadline (its switch-in,
    // its timer's re-arm, its sleep): still stopped at its deadline, the stop is the
    // cause.
    let still: String = t
        .lines()
        .filter(|l| {
            !["9.800000:", "9.800010:", "9.800020:"]
                .iter()
                .any(|ts| l.contains(ts))
        })
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(still.lines().count(), t.lines().count() - 3, "{still}");
    let e = analyse(&s, &still, &Context::default());
    assert_eq!(e.cause.kind, CauseKind::Stopped, "{e:#?}");
    assert!(!e.cause.valid);
}

/// A culprit started through a shell shim at SCHED_FIFO 90 (pyenv's `python3` is a
/// bash script that forks a dozen subshells before it execs python) held a FIFO 80
/// thread back 54 ms, no task alone a fifth of it: the tasks that outrank the thread
/// are the cause together, the largest named.
#[test]
fn many_short_tasks_that_outrank_the_thread_are_the_cause_together() {
    let mut s = spike(4932, 10_290_478_001_439, 10_290_531_899_122);
    s.prio = 19; // SCHED_FIFO 80
    let e = analyse(&s, &fixture("shim-forks-at-fifo90"), &Context::default());
    assert_eq!(e.cause.kind, CauseKind::Task, "{:#?}", e.cause);
    assert_eq!(e.cause.pid, Some(4934), "{:#?}", e.cause);
    assert!(
        e.cause.text.contains("tasks that outrank the thread"),
        "{}",
        e.cause.text
    );
    let outranking = e.tasks.iter().filter(|t| t.outranks).count();
    assert!(outranking > 5, "{:#?}", e.tasks);
}
