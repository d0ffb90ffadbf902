//! Unit tests of the cause ledger (`ledger.rs`) on synthetic explanations.
use super::*;
use crate::explain::{Cause, IrqUse, Spike};

fn owner() -> Owner<'static> {
    Owner {
        test: "cyclic",
        thread: 0,
        cpu: Some(1),
        threshold_ns: 1_000_000,
    }
}

fn sample(latency_ns: i64, wall_ns: i64, cause: Cause) -> Explanation {
    Explanation {
        spike: Spike {
            test: "cyclic".into(),
            start_ns: 1_000,
            wake_ns: 1_000 + latency_ns,
            wall_ns,
            cpu: 1,
            ..Spike::default()
        },
        cause,
        irqs: vec![IrqUse {
            name: "24:eth0".into(),
            count: 2,
            ns: 5,
        }],
        ..Explanation::default()
    }
}

fn task(pid: i32, comm: &str) -> Cause {
    Cause {
        kind: CauseKind::Task,
        valid: true,
        ns: 1,
        text: format!("CPU 1 ran {comm} (pid {pid}, FIFO 99)"),
        pid: Some(pid),
        comm: Some(comm.into()),
    }
}

#[test]
fn samples_of_one_culprit_merge_and_order_by_count_then_time_over() {
    let mut l = Ledger::new(ANALYSES_PER_SECOND);
    // One large one-off, then a recurring smaller culprit.
    l.add(owner(), &sample(300_000_000, 10, task(7, "sh")), |_| {
        Some(50)
    });
    for i in 0..3 {
        l.add(owner(), &sample(20_000_000, 20 + i, task(9, "hog")), |_| {
            Some(60)
        });
    }
    let irq = Cause {
        kind: CauseKind::Irq,
        valid: true,
        ..Cause::default()
    };
    l.add(owner(), &sample(2_000_000, 30, irq.clone()), |_| None);
    l.add(owner(), &sample(3_000_000, 40, irq), |_| None);
    let t = l.thread("cyclic", 0).unwrap();
    let names: Vec<&str> = t.causes.iter().map(|c| c.culprit.name.as_str()).collect();
    assert_eq!(names, ["hog", "24:eth0", "sh"]);
    let hog = &t.causes[0].tally;
    assert_eq!(hog.count, 3);
    assert_eq!(hog.over_ns, 3 * 19_000_000);
    assert_eq!(hog.worst_ns, 20_000_000);
    assert_eq!((hog.first_ns, hog.last_ns), (20, 22));
    assert_eq!(t.causes[1].tally.over_ns, 1_000_000 + 2_000_000);
    assert_eq!(t.samples(), 6);
    assert_eq!(l.top(1)[0].1.culprit.pid, Some(9));
}

#[test]
fn a_names_processes_are_one_cause_a_reused_pid_another_process_a_gone_task_itself() {
    let mut l = Ledger::new(ANALYSES_PER_SECOND);
    l.add(owner(), &sample(2_000_000, 1, task(9, "hog")), |_| Some(60));
    l.add(owner(), &sample(2_000_000, 2, task(9, "hog")), |_| None);
    let t = l.thread("cyclic", 0).unwrap();
    assert_eq!(t.causes.len(), 1, "{t:#?}");
    assert_eq!(t.causes[0].culprit.start_ticks, Some(60));
    assert_eq!(
        t.causes[0].culprit.label(100),
        "task hog (pid 9, started 0.60 s after boot)"
    );
    // The pid reused by a later process of the name, then a new pid: one cause,
    // three processes, the latest named.
    l.add(owner(), &sample(2_000_000, 3, task(9, "hog")), |_| Some(99));
    l.add(owner(), &sample(2_000_000, 4, task(12, "hog")), |_| {
        Some(150)
    });
    l.add(owner(), &sample(2_000_000, 5, task(13, "other")), |_| {
        Some(160)
    });
    let t = l.thread("cyclic", 0).unwrap();
    assert_eq!(t.causes.len(), 2, "{t:#?}");
    assert_eq!(t.causes[0].tally.count, 4);
    assert_eq!(t.causes[0].culprit.processes, 3);
    assert_eq!(
        t.causes[0].culprit.label(100),
        "task hog (3 processes, the latest pid 12, started 1.50 s after boot)"
    );
    assert_eq!(t.causes[1].culprit.processes, 1);
    // One process stays 1 through the JSON (the field is left out), three stay three.
    let j = serde_json::to_string(&t.causes[1].culprit).unwrap();
    assert!(!j.contains("processes"), "{j}");
    let back: Culprit = serde_json::from_str(&j).unwrap();
    assert_eq!(back.processes, 1);
    let j = serde_json::to_string(&t.causes[0].culprit).unwrap();
    assert_eq!(
        serde_json::from_str::<Culprit>(&j).unwrap(),
        t.causes[0].culprit
    );
}

#[test]
fn the_rate_limit_is_per_cpu_and_per_sliding_second() {
    use std::time::{Duration, Instant};
    let t0 = Instant::now();
    let mut p = Pace::new(2);
    for _ in 0..2 {
        assert!(p.room(1, t0));
        p.begin(1, t0);
    }
    assert!(!p.room(1, t0 + Duration::from_millis(999)));
    assert!(p.room(2, t0), "another CPU has its own");
    assert!(p.room(1, t0 + Duration::from_secs(1)));
    // A new maximum is analysed past the limit, and counts.
    p.begin(1, t0 + Duration::from_secs(1));
    p.begin(1, t0 + Duration::from_secs(1));
    p.begin(1, t0 + Duration::from_secs(1));
    assert!(!p.room(1, t0 + Duration::from_millis(1999)));
    assert!(p.room(1, t0 + Duration::from_secs(2)));
}

#[test]
fn samples_not_analysed_are_counted_with_their_reason() {
    let mut l = Ledger::new(ANALYSES_PER_SECOND);
    let untraced = Cause {
        kind: CauseKind::Untraced,
        valid: true,
        text: "not recorded".into(),
        ..Cause::default()
    };
    l.add(owner(), &sample(5_000_000, 5, untraced), |_| None);
    l.add_not_analysed(
        owner(),
        Reason::RateLimit,
        None,
        &Tally::of(3, 9_000_000, 4_000_000, 1_000_000, 7, 8),
    );
    l.add_not_analysed(owner(), Reason::Busy, None, &Tally::of(0, 0, 0, 0, 0, 0));
    let t = l.thread("cyclic", 0).unwrap();
    assert!(t.causes.is_empty());
    let reasons: Vec<Reason> = t.not_analysed.iter().map(|n| n.reason).collect();
    assert_eq!(reasons, [Reason::RateLimit, Reason::TraceLost]);
    assert_eq!(t.not_analysed[0].tally.over_ns, 6_000_000);
    assert_eq!(t.not_analysed[1].detail.as_deref(), Some("not recorded"));
    assert_eq!(t.samples(), 4);
    assert!(!l.is_empty());
    // The JSON shape round-trips (results files keep the ledger).
    let back: Ledger = serde_json::from_str(&serde_json::to_string(&l).unwrap()).unwrap();
    assert_eq!(back, l);
}
