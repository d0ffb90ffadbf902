//! `rtbench plot` on real inputs: Debian cyclictest's `-h`/`-H` dumps (rt-tests 2.4,
//! legacy layout) and `--json`, rtbench's own dump (2.7+ layout) and `--json`, and a
//! stored result of a real `rtbench selftest`. Each SVG is parsed as XML and its
//! geometry read back: one curve per thread, and the points above the x axis mapped
//! through the drawn axis ticks give exactly the input's non-empty buckets and counts.

#![cfg(feature = "plot")]

use crate::common::{cyclictest, online_cpus, rtbench, run, stderr, TempDir};
use std::collections::BTreeMap;
use std::path::Path;

/// Per thread: latency bucket in µs → samples (non-empty buckets only).
pub(super) type Buckets = Vec<BTreeMap<u64, u64>>;

/// The 1-µs classes (µs → count) a stored thread's `[value_ns, count]` pairs plot as,
/// and the count at or beyond `range_us`: a pair whose value is the upper edge of a
/// bucket wider than 1 µs (from 131 µs up) is spread over the classes the bucket
/// covers in proportion to the overlap, the remainder in its own class; any other
/// lands in its own class.
pub(super) fn stored_classes(
    pairs: &serde_json::Value,
    range_us: Option<u64>,
) -> (BTreeMap<u64, u64>, u64) {
    let mut m = BTreeMap::new();
    let mut over = 0u64;
    let mut put = |class_us: u64, n: u64, m: &mut BTreeMap<u64, u64>| {
        if range_us.is_some_and(|r| class_us >= r) {
            over += n;
        } else if n > 0 {
            *m.entry(class_us).or_insert(0) += n;
        }
    };
    for p in pairs.as_array().unwrap() {
        let (v, c) = (p[0].as_u64().unwrap(), p[1].as_u64().unwrap());
        match rtbench::measure::histogram::bucket_of(v) {
            Some((lo, hi)) if hi == v && hi - lo >= 1000 => {
                let width = (hi - lo + 1) as u128;
                let mut given = 0;
                for us in lo / 1000..=hi / 1000 {
                    let covered = (us * 1000 + 999).min(hi) - (us * 1000).max(lo) + 1;
                    let part = if us == hi / 1000 {
                        c - given
                    } else {
                        (c as u128 * covered as u128 / width) as u64
                    };
                    given += part;
                    put(us, part, &mut m);
                }
            }
            _ => put(v / 1000, c, &mut m),
        }
    }
    (m, over)
}

pub(super) fn attr(n: roxmltree::Node, a: &str) -> f64 {
    n.attribute(a)
        .unwrap_or_else(|| panic!("<{}> without {a}", n.tag_name().name()))
        .parse()
        .unwrap()
}

pub(super) fn by_id<'a>(doc: &'a roxmltree::Document, id: &str) -> roxmltree::Node<'a, 'a> {
    doc.descendants()
        .find(|n| n.attribute("id") == Some(id))
        .unwrap_or_else(|| panic!("no element with id {id}"))
}

pub(super) fn has_class(n: &roxmltree::Node, c: &str) -> bool {
    n.attribute("class") == Some(c)
}

/// (grid line position, tick value) pairs of an axis group, in drawing order.
pub(super) fn ticks(axis: roxmltree::Node, pos: &str) -> Vec<(f64, f64)> {
    let lines: Vec<f64> = axis
        .children()
        .filter(|n| has_class(n, "grid"))
        .map(|n| attr(n, pos))
        .collect();
    let values: Vec<f64> = axis
        .children()
        .filter(|n| has_class(n, "tick"))
        .map(|n| {
            n.attribute("data-value")
                .map(str::to_string)
                .unwrap_or_else(|| n.text().unwrap().to_string())
                .parse()
                .unwrap()
        })
        .collect();
    assert_eq!(lines.len(), values.len());
    assert!(lines.len() >= 2, "axis needs two ticks");
    lines.into_iter().zip(values).collect()
}

/// Parses `svg`, checks the frame (well-formed XML, axis labels, one curve, maximum
/// marker and legend entry per thread) and that the plotted points equal `want`.
/// Returns the document text for further checks.
pub(super) fn check_plot(svg_path: &Path, want: &Buckets) -> String {
    let text = std::fs::read_to_string(svg_path).unwrap();
    let doc = roxmltree::Document::parse(&text).expect("well-formed XML");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "svg");
    assert_eq!(
        root.tag_name().namespace(),
        Some("http://www.w3.org/2000/svg")
    );
    let log_x = by_id(&doc, "x-axis").attribute("data-scale") == Some("log");
    let x_label = if log_x {
        "Latency (µs, log scale)"
    } else {
        "Latency (µs)"
    };
    assert_eq!(by_id(&doc, "x-label").text(), Some(x_label));
    let y_label = by_id(&doc, "y-label").text().unwrap();
    assert!(y_label.contains("log scale"), "{y_label}");

    let area = by_id(&doc, "plot-area");
    let floor = attr(area, "y") + attr(area, "height");
    // x: linear (a bucket at its lower bound) or log10 (at its centre, half a 1-µs
    // bucket higher); y: log10, from the decade grid lines.
    let xt = ticks(by_id(&doc, "x-axis"), "x1");
    let (x0, v0) = xt[0];
    let (x1, v1) = xt[xt.len() - 1];
    let to_us = |x: f64| {
        if log_x {
            10f64.powf(v0.log10() + (x - x0) / (x1 - x0) * (v1.log10() - v0.log10())) - 0.5
        } else {
            v0 + (x - x0) / (x1 - x0) * (v1 - v0)
        }
    };
    // µs per px at `us`: x is written to 1/1000 px.
    let us_per_px = |us: f64| {
        if log_x {
            (us + 0.5) * std::f64::consts::LN_10 * (v1.log10() - v0.log10()) / (x1 - x0)
        } else {
            (v1 - v0) / (x1 - x0)
        }
    };
    let yt = ticks(by_id(&doc, "y-axis"), "y1");
    let (ya, la) = (yt[0].0, yt[0].1.log10());
    let (yb, lb) = (yt[yt.len() - 1].0, yt[yt.len() - 1].1.log10());
    let to_count = |y: f64| 10f64.powf(la + (y - ya) / (yb - ya) * (lb - la));

    let curves: Vec<_> = doc
        .descendants()
        .filter(|n| has_class(n, "curve"))
        .collect();
    assert_eq!(curves.len(), want.len(), "one curve per thread");
    for (t, (c, want)) in curves.iter().zip(want).enumerate() {
        let poly = c
            .children()
            .find(|n| has_class(n, "histogram"))
            .expect("polyline");
        let mut got = BTreeMap::new();
        for p in poly.attribute("points").unwrap().split_whitespace() {
            let (x, y) = p.split_once(',').unwrap();
            let (x, y): (f64, f64) = (x.parse().unwrap(), y.parse().unwrap());
            assert!(y <= floor + 1e-6, "thread {t}: point below the axis");
            if y < floor - 1e-6 {
                let us = to_us(x);
                let n = to_count(y);
                let b = us.round();
                // x is written to 1/1000 px: allow that rounding, in µs, on wide axes.
                let tol = 0.05f64.max(0.0006 * us_per_px(us));
                assert!(
                    tol < 0.5,
                    "axis too wide to name 1-µs buckets: {v0}..{v1} µs"
                );
                assert!((us - b).abs() < tol, "thread {t}: x {us} is not a bucket");
                assert!(
                    got.insert(b as u64, n).is_none(),
                    "thread {t}: bucket {b} twice"
                );
            }
        }
        assert_eq!(
            got.len(),
            want.len(),
            "thread {t}: plotted non-zero buckets"
        );
        for ((gb, gn), (wb, wn)) in got.iter().zip(want) {
            assert_eq!(gb, wb, "thread {t}: bucket");
            assert!(
                (gn.log10() - (*wn as f64).log10()).abs() < 0.01,
                "thread {t} bucket {wb}: plotted {gn}, input {wn}"
            );
        }
    }
    let maxima = doc.descendants().filter(|n| has_class(n, "max")).count();
    assert_eq!(maxima, want.len(), "one maximum marker per thread");
    let entries = doc.descendants().filter(|n| has_class(n, "entry")).count();
    assert_eq!(entries, want.len(), "one legend entry per thread");
    text
}

/// Non-empty rows of a cyclictest dump, per thread (the first `threads` columns).
fn dump_buckets(dump: &str, threads: usize) -> Buckets {
    let mut v = vec![BTreeMap::new(); threads];
    for l in dump
        .lines()
        .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()))
    {
        let w: Vec<u64> = l.split_whitespace().map(|x| x.parse().unwrap()).collect();
        for t in 0..threads {
            if w[1 + t] > 0 {
                v[t].insert(w[0], w[1 + t]);
            }
        }
    }
    v
}

/// The `"thread"` histograms of an rt-tests file_version 1 JSON document.
fn json_buckets(doc: &serde_json::Value) -> Buckets {
    let threads = doc["thread"].as_object().unwrap();
    (0..threads.len())
        .map(|i| {
            threads[&i.to_string()]["histogram"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.parse().unwrap(), v.as_u64().unwrap()))
                .filter(|b| b.1 > 0)
                .collect()
        })
        .collect()
}

fn plot(input: &Path, out: &Path) -> std::process::Output {
    rtbench()
        .arg("plot")
        .arg(input)
        .arg("-o")
        .arg(out)
        .output()
        .unwrap()
}

fn assert_ok(o: &std::process::Output) {
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(o));
}

#[test]
fn plots_debian_cyclictest_dump_and_json() {
    let dir = TempDir::new("plot-ct");
    let json = dir.join("ct.json");
    let o = cyclictest(&format!(
        "-m -S -p 80 -i 500 -l 2000 -q -h 200 --json={}",
        json.display()
    ));
    assert!(o.status.success(), "cyclictest: {}", stderr(&o));
    let dump = String::from_utf8(o.stdout).unwrap();
    // Debian's rt-tests 2.4 prints the <= 2.6 layout: every row and "# Total:".
    assert!(dump.contains("\n# Total: "), "{dump}");
    let n = online_cpus();
    let want = dump_buckets(&dump, n);
    let f = dir.join("hist.txt");
    std::fs::write(&f, &dump).unwrap();
    let svg = dir.join("hist.svg");
    assert_ok(&plot(&f, &svg));
    let text = check_plot(&svg, &want);
    assert!(text.contains("&lt;= 2.6 layout"), "layout named");
    assert!(text.contains("not recorded (give --title)"));

    // The same run's JSON (rt-tests 2.4's own writer) plots the same curves.
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(json_buckets(&doc), want);
    let svg = dir.join("json.svg");
    assert_ok(&plot(&json, &svg));
    let text = check_plot(&svg, &want);
    let release = doc["sysinfo"]["release"].as_str().unwrap();
    assert!(text.contains(release), "kernel release in the title");
}

#[test]
fn plots_cyclictest_histofall_dump_without_the_sum_column() {
    let dir = TempDir::new("plot-ct-H");
    let o = cyclictest("-m -S -p 80 -i 500 -l 1000 -q -H 150");
    assert!(o.status.success(), "cyclictest: {}", stderr(&o));
    let dump = String::from_utf8(o.stdout).unwrap();
    let n = online_cpus();
    let f = dir.join("hist.txt");
    std::fs::write(&f, &dump).unwrap();
    let svg = dir.join("hist.svg");
    assert_ok(&plot(&f, &svg));
    // Only the thread columns become curves; the -H sum column does not.
    check_plot(&svg, &dump_buckets(&dump, n));
    // --title replaces the made-up title and is escaped.
    let title = "board <7> & \"12 h\"";
    let o = rtbench()
        .args(["plot", "--title", title, "-o"])
        .arg(&svg)
        .arg(&f)
        .output()
        .unwrap();
    assert_ok(&o);
    let text = std::fs::read_to_string(&svg).unwrap();
    let doc = roxmltree::Document::parse(&text).expect("well-formed XML");
    assert_eq!(by_id(&doc, "title").text(), Some(title));
}

#[test]
fn plots_rtbench_json_and_current_layout_dump() {
    let dir = TempDir::new("plot-rt");
    let json = dir.join("run.json");
    let hist = dir.join("hist.txt");
    let o = run(&format!(
        "cyclic -S -p 98 -i 500 -l 2000 -q -H 200 --load cpu:1 --histfile {} --json {}",
        hist.display(),
        json.display()
    ));
    assert_ok(&o);
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let want = json_buckets(&doc);
    assert_eq!(want.len(), online_cpus());
    let svg = dir.join("run.svg");
    assert_ok(&plot(&json, &svg));
    let text = check_plot(&svg, &want);
    // Legend: exact p99.9 and max per CPU from the "rtbench" object.
    for t in doc["rtbench"]["threads"].as_array().unwrap() {
        let us = |k: &str| rtbench::plot::svg::us(t[k].as_u64().unwrap());
        let entry = format!(
            "CPU {}: {} samples, p99.9 {} µs, max {} µs",
            t["cpu"],
            rtbench::plot::svg::count(t["count"].as_u64().unwrap()),
            us("p999_ns"),
            us("max_ns")
        );
        assert!(text.contains(&entry), "{entry}");
    }
    let si = &doc["rtbench"]["sysinfo"];
    for k in ["nodename", "release", "preempt_model"] {
        assert!(text.contains(si[k].as_str().unwrap()), "{k} shown");
    }
    assert!(text.contains("test: cyclic"));
    assert!(text.contains("load: cpu:1 on CPUs "), "the load that ran");

    // --x-max 40 keeps the buckets up to 40 µs; the legend counts the rest.
    let zoom = dir.join("zoom.svg");
    let o = rtbench()
        .args(["plot", "--x-max", "40", "-o"])
        .arg(&zoom)
        .arg(&json)
        .output()
        .unwrap();
    assert_ok(&o);
    let near: Buckets = want
        .iter()
        .map(|m| {
            m.iter()
                .filter(|b| *b.0 <= 40)
                .map(|(&k, &v)| (k, v))
                .collect()
        })
        .collect();
    let text = check_plot(&zoom, &near);
    let cut: u64 = want[0].iter().filter(|b| *b.0 > 40).map(|b| b.1).sum();
    if cut > 0 {
        let s = format!("{} beyond the axis", rtbench::plot::svg::count(cut));
        assert!(text.contains(&s), "{s}");
    }
    let o = rtbench()
        .args(["plot", "--x-max", "0", "-o"])
        .arg(&zoom)
        .arg(&json)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).starts_with("rtbench: --x-max 0: not a finite number of µs greater than 0"),
        "{}",
        stderr(&o)
    );

    // rtbench's -H dump is cyclictest 2.7+'s layout: zero rows omitted, no "# Total:".
    let dump = std::fs::read_to_string(&hist).unwrap();
    assert!(!dump.contains("# Total:"));
    let svg = dir.join("hist.svg");
    assert_ok(&plot(&hist, &svg));
    let text = check_plot(&svg, &want);
    assert!(text.contains("2.7+ layout"));
}

#[test]
fn bad_inputs_are_one_line_errors_and_write_nothing() {
    let dir = TempDir::new("plot-bad");
    let svg = dir.join("out.svg");
    let check = |input: &Path, needle: &str| {
        let o = plot(input, &svg);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(&input.display().to_string()), "{err}");
        assert!(err.contains(needle), "{needle:?} in {err}");
        assert!(!svg.exists(), "no picture for bad input");
        err
    };

    // Neither format.
    let f = dir.join("notes.txt");
    std::fs::write(&f, "T: 0 ( 7580) P:90 I:1000 C: 2961 Min: 11\n").unwrap();
    check(&f, "expected rtbench or cyclictest --json output");

    // An empty histogram: with -h 1 every real sample (>= 1 µs) is an overflow.
    let o = cyclictest("-m -S -p 80 -i 500 -l 200 -q -h 1");
    assert!(o.status.success());
    let f = dir.join("empty.txt");
    std::fs::write(&f, &o.stdout).unwrap();
    // cyclictest -S ends every thread when the first reaches -l, so under load thread 0
    // may hold fewer than 200: the count is the dump's own.
    let err = check(&f, "histogram of thread 0 is empty: all ");
    assert!(
        err.contains(" samples lie beyond the histogram's 1 µs"),
        "{err}"
    );

    // A dump cut in half: the error names the last line that was read.
    let o = cyclictest("-m -S -p 80 -i 500 -l 500 -q -h 100");
    assert!(o.status.success());
    let cut = &o.stdout[..o.stdout.len() / 2];
    let f = dir.join("cut.txt");
    std::fs::write(&f, cut).unwrap();
    let lines = String::from_utf8_lossy(cut).lines().count();
    let err = check(&f, &format!("line {lines}: "));
    assert!(err.contains("truncated"), "{err}");

    // A run without -h has no histogram to plot.
    let f = dir.join("nohist.json");
    assert_ok(&run(&format!(
        "cyclic -S -p 80 -i 500 -l 100 -q --json {}",
        f.display()
    )));
    check(&f, "has no histogram");
}

#[test]
fn plots_a_stored_self_test_result() {
    // A real `rtbench selftest` run (no tuning, 1 s under a cpu load) writes the result.
    let dir = TempDir::new("plot-store");
    let results = dir.join("results");
    let cfg = dir.join("rtbench.toml");
    std::fs::write(
        &cfg,
        crate::common::on_any_kernel(
            &(format!(
                "[selftest]\nmode = \"off\"\nduration = \"1s\"\n[load]\nspec = \"cpu:1\"\n\
             [limits]\nmax_us = 10000000\n[output]\nresults_dir = \"{}\"\nkeep = 3\n",
                results.display()
            )),
        ),
    )
    .unwrap();
    let o = rtbench()
        .args(["selftest", "--config"])
        .arg(&cfg)
        .output()
        .unwrap();
    assert_ok(&o);
    let file = std::fs::read_dir(&results)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("run-"))
        .expect("stored result");
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let cyclic = run["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["test"] == "cyclic")
        .expect("cyclic test stored");
    let threads = cyclic["threads"].as_array().unwrap();
    assert_eq!(threads.len(), online_cpus());
    // The stored [value_ns, count] pairs in 1-µs classes, as the plot draws them.
    let want: Buckets = threads
        .iter()
        .map(|t| stored_classes(&t["histogram"], None).0)
        .collect();
    let svg = dir.join("store.svg");
    // The results directory stands for its newest run.
    assert_ok(&plot(&results, &svg));
    let text = check_plot(&svg, &want);
    assert!(text.contains("load: cpu:1"));
    assert!(text.contains("duration: 1 s"));
    assert!(text.contains("rtbench self-test result"));
    for t in threads {
        let u = |k: &str| rtbench::plot::svg::us(t[k].as_u64().unwrap());
        let entry = format!(
            "CPU {}: {} samples, p99.9 {} µs, max {} µs",
            t["cpu"],
            rtbench::plot::svg::count(t["count"].as_u64().unwrap()),
            u("p999_ns"),
            u("max_ns")
        );
        assert!(text.contains(&entry), "{entry}");
    }
    // An unknown test name lists the ones there are.
    let o = rtbench()
        .args(["plot", "--test", "nosuch", "-o"])
        .arg(&svg)
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no test \"nosuch\" in the stored result (it has: cyclic"),
        "{}",
        stderr(&o)
    );
}

/// cyclictest writes a thread that never completed a cycle as `"cycles": 0, …,
/// "avg": -nan` (printf of 0/0: not JSON). The plot keeps the other threads and names
/// the thread left out and why; a file where no thread measured anything is refused
/// naming the cause.
#[test]
fn a_cyclictest_thread_with_0_cycles_and_avg_nan_is_left_out_and_named() {
    let dir = TempDir::new("plot-nan");
    let json = dir.join("r.json");
    let o = rtbench()
        .args([
            "cyclic", "-t", "2", "-h", "100", "-l", "200", "-i", "1000", "-q", "--json",
        ])
        .arg(&json)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    // As cyclictest writes it: no "rtbench" object, thread 1 without a cycle.
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    doc.as_object_mut().unwrap().remove("rtbench");
    let t1 = &mut doc["thread"]["1"];
    for (_, n) in t1["histogram"].as_object_mut().unwrap() {
        *n = 0.into();
    }
    t1["cycles"] = 0.into();
    t1["min"] = 1_000_000.into();
    t1["max"] = 0.into();
    t1["avg"] = "NAN-HERE".into();
    let text = serde_json::to_string_pretty(&doc)
        .unwrap()
        .replace("\"NAN-HERE\"", "-nan");
    assert!(text.contains("\"avg\": -nan"), "{text}");
    let ct = dir.join("ct.json");
    std::fs::write(&ct, &text).unwrap();
    let svg = dir.join("p.svg");
    let o = plot(&ct, &svg);
    assert_ok(&o);
    let drawn = std::fs::read_to_string(&svg).unwrap();
    assert!(
        drawn.contains("thread 1 left out") && drawn.contains("-nan"),
        "the thread left out and why: {drawn}"
    );
    // Every thread without a cycle: refused, naming the cause, one line.
    let t0 = &mut doc["thread"]["0"];
    for (_, n) in t0["histogram"].as_object_mut().unwrap() {
        *n = 0.into();
    }
    t0["cycles"] = 0.into();
    t0["avg"] = "NAN-HERE".into();
    let text = serde_json::to_string(&doc)
        .unwrap()
        .replace("\"NAN-HERE\"", "-nan");
    std::fs::write(&ct, &text).unwrap();
    let o = plot(&ct, &svg);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("no thread measured anything") && err.contains("\"avg\": -nan"),
        "{err}"
    );
}
