//! `rtbench cyclic -v` as cyclictest prints it (rt-tests src/cyclictest/cyclictest.c,
//! `print_stat` with `verbose`): every sample `%8d:%8lu:%8ld` (thread, cycle, latency
//! in µs), drained from each thread's ring by the main thread; `-o RED` prints the
//! largest of each group of RED samples. Real runs; the figures are checked against the
//! same run's own summary, never against a threshold.

use crate::common::*;

/// The `-v` lines of `text`: (thread, cycle, latency), each field exactly 8 wide.
fn samples(text: &str) -> Vec<(usize, u64, u64)> {
    text.lines()
        .filter(|l| l.len() == 26 && l.as_bytes()[8] == b':' && l.as_bytes()[17] == b':')
        .map(|l| {
            let f: Vec<&str> = l.split(':').map(str::trim_start).collect();
            (
                f[0].parse().unwrap(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
            )
        })
        .collect()
}

/// The `Max:` of each final `T:` line, by thread.
fn maxima(text: &str) -> Vec<u64> {
    text.lines()
        .filter(|l| l.starts_with("T:"))
        .map(|l| l.rsplit("Max:").next().unwrap().trim().parse().unwrap())
        .collect()
}

fn run(extra: &[&str]) -> String {
    shared();
    let o = rtbench()
        .args(["cyclic", "-v", "-q", "-t", "2", "-i", "1000", "-l", "300"])
        .args(extra)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    stdout(&o)
}

#[test]
fn every_sample_of_every_thread_is_printed_and_the_maximum_is_the_summarys() {
    let text = run(&[]);
    let s = samples(&text);
    let max = maxima(&text);
    assert_eq!(max.len(), 2, "{text}");
    for (t, &max) in max.iter().enumerate() {
        let mine: Vec<_> = s.iter().filter(|x| x.0 == t).collect();
        // Every cycle, in order, from 0 (cyclictest's cycle numbers).
        assert_eq!(
            mine.iter().map(|x| x.1).collect::<Vec<_>>(),
            (0..300).collect::<Vec<_>>(),
            "thread {t}"
        );
        assert_eq!(mine.iter().map(|x| x.2).max(), Some(max), "{text}");
    }
    // Nothing else on standard output but cyclictest's lines.
    for l in text.lines() {
        assert!(
            l.starts_with("Max CPUs = ")
                || l.starts_with("Online CPUs = ")
                || l.starts_with("Thread ")
                || l.starts_with("# ")
                || l.starts_with("T:")
                || samples(l).len() == 1,
            "{l:?}"
        );
    }
}

#[test]
fn oscilloscope_reduction_prints_each_groups_maximum() {
    let text = run(&["-o", "10"]);
    let s = samples(&text);
    let max = maxima(&text);
    assert_eq!(max.len(), 2, "{text}");
    for (t, &max) in max.iter().enumerate() {
        let mine: Vec<_> = s.iter().filter(|x| x.0 == t).collect();
        assert_eq!(mine.len(), 30, "300 samples in groups of 10: {text}");
        for (g, x) in mine.iter().enumerate() {
            let g = g as u64;
            assert!(
                (g * 10..g * 10 + 10).contains(&x.1),
                "cycle in its group: {x:?}"
            );
        }
        assert_eq!(mine.iter().map(|x| x.2).max(), Some(max), "{text}");
    }
}

#[test]
fn without_v_o_is_refused_as_cyclictest_refuses_it() {
    for (args, want) in [
        (&["-o", "10"][..], "-o 10: expected with -v"),
        (
            &["-v", "-o", "0"][..],
            "-o 0: expected a reduction of at least 1",
        ),
    ] {
        let o = rtbench()
            .args(["cyclic", "-l", "1"])
            .args(args)
            .output()
            .unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(want), "{err}");
    }
}

/// The lines before the final `T:` lines are cyclictest's: the same header lines
/// (digits masked) and only `%8d:%8lu:%8ld` sample lines besides — Debian's cyclictest
/// 2.4 run with the same options. (How the threads' lines interleave depends on when
/// the main thread looks, in cyclictest too.)
#[test]
fn the_verbose_lines_have_cyclictests_shape() {
    let args = "-v -q -t 2 -i 1000 -l 5";
    let theirs = stdout(&cyclictest(args));
    let o = rtbench()
        .arg("cyclic")
        .args(args.split_whitespace())
        .output()
        .unwrap();
    let ours = stdout(&o);
    let shape = |t: &str| -> (Vec<String>, usize) {
        let head: Vec<&str> = t.lines().take_while(|l| !l.starts_with("T:")).collect();
        let n = head.iter().filter(|l| samples(l).len() == 1).count();
        let other = head
            .iter()
            .filter(|l| samples(l).is_empty())
            .map(|l| {
                l.chars()
                    .map(|c| if c.is_ascii_digit() { '9' } else { c })
                    .collect()
            })
            .collect();
        (other, n)
    };
    let (ours_head, ours_n) = shape(&ours);
    let (theirs_head, theirs_n) = shape(&theirs);
    assert_eq!(ours_head, theirs_head, "ours:\n{ours}\ntheirs:\n{theirs}");
    assert_eq!(ours_n, 10, "{ours}");
    assert!(theirs_n > 0, "{theirs}");
}
