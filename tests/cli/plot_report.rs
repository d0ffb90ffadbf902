//! `rtbench plot` as a vendor pastes it into a report, without flags: a stored
//! self-test's plot shows the body and the tail of the distribution, `[output]
//! histogram_us` is cyclictest's `-h`, each test's plot carries its own duration and
//! verdict in full, pairs are labelled as pairs, limit and maximum labels stay inside
//! the picture and apart (checked on the parsed SVG's geometry), and the monitor's
//! window store plots as a timeline of window maxima. Inputs come from real `rtbench
//! selftest` and `rtbench monitor` runs; where a test needs a distribution this
//! machine cannot be made to produce (a far outlier, labels crowded at the edge), the
//! real stored result is edited, never written from scratch.

#![cfg(feature = "plot")]

use super::plot::{attr, by_id, check_plot, has_class, stored_classes, ticks};
use crate::common::{rtbench, stderr, TempDir};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Runs a real self-test in `dir` (no tuning, `[selftest] duration = "1s"`, `body`
/// added, `output` added to its `[output]`) and returns its stored result file.
fn selftest(dir: &Path, body: &str, output: &str) -> PathBuf {
    let results = dir.join("results");
    let cfg = dir.join("rtbench.toml");
    std::fs::write(
        &cfg,
        format!(
            "[selftest]\nmode = \"off\"\nduration = \"1s\"\n{body}\n[output]\n\
             results_dir = \"{}\"\nfallback_dir = \"{}\"\n{output}\n",
            results.display(),
            dir.join("run").display()
        ),
    )
    .unwrap();
    let o = rtbench()
        .args(["selftest", "--log-format", "logfmt", "--config"])
        .arg(&cfg)
        .output()
        .unwrap();
    assert!(
        matches!(o.status.code(), Some(0) | Some(1)),
        "selftest: {}",
        stderr(&o)
    );
    std::fs::read_dir(&results)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("run-"))
        .expect("stored result")
}

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// `rtbench plot INPUT -o OUT ARGS`, which must succeed; the SVG's text.
fn plot(input: &Path, out: &Path, args: &[&str]) -> String {
    let o = rtbench()
        .arg("plot")
        .arg(input)
        .arg("-o")
        .arg(out)
        .args(args)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "plot: {}", stderr(&o));
    std::fs::read_to_string(out).unwrap()
}

/// The header's lines, in order.
fn header(doc: &roxmltree::Document) -> Vec<String> {
    by_id(doc, "header")
        .children()
        .filter(|n| n.is_element() && n.attribute("id") != Some("title"))
        .map(|n| n.text().unwrap_or_default().to_string())
        .collect()
}

/// The test `name` of a stored result.
fn test_of<'a>(run: &'a mut Value, name: &str) -> &'a mut Value {
    run["tests"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|t| t["test"] == name)
        .unwrap_or_else(|| panic!("no {name} test stored"))
}

/// Replaces every thread's distribution of `test` with `hist` (`[value_ns, count]`)
/// and its maximum with `max_ns`.
fn set_distribution(run: &mut Value, test: &str, hist: &[[u64; 2]], max_ns: u64) {
    let t = test_of(run, test);
    for th in t["threads"].as_array_mut().unwrap() {
        th["histogram"] = json!(hist);
        th["max_ns"] = json!(max_ns);
        th["p999_ns"] = json!(hist[0][0]);
        th["count"] = json!(hist.iter().map(|h| h[1]).sum::<u64>());
    }
}

#[test]
fn self_test_plot_shows_the_body_and_the_tail() {
    // A real result, its distribution made the one a loaded board gives: the body at
    // 5-6 µs, one wakeup 3 ms late.
    let dir = TempDir::new("plot-tail");
    let file = selftest(&dir, "[limits]\nmax_us = 10000000", "");
    let mut run = read_json(&file);
    let hist = [[5_400, 10_000], [6_200, 500], [2_974_000, 1]];
    set_distribution(&mut run, "cyclic", &hist, 2_974_000);
    let edited = dir.join("edited.json");
    std::fs::write(&edited, run.to_string()).unwrap();
    let svg = dir.join("tail.svg");
    let threads = test_of(&mut run, "cyclic")["threads"]
        .as_array()
        .unwrap()
        .len();
    let want = vec![BTreeMap::from([(5, 10_000), (6, 500), (2974, 1)]); threads];
    let text = plot(&edited, &svg, &[]);
    // Every bucket, the tail's too, is drawn where the axis says.
    check_plot(&svg, &want);
    let doc = roxmltree::Document::parse(&text).unwrap();
    let area = by_id(&doc, "plot-area");
    let (left, width) = (attr(area, "x"), attr(area, "width"));
    // The body is not squeezed against the y axis: its peak lies beyond a tenth of
    // the width (a linear axis to 3 ms puts it in the first 0.2 %) ...
    let peak = doc
        .descendants()
        .filter(|n| has_class(n, "histogram"))
        .map(|p| {
            let pts: Vec<(f64, f64)> = p
                .attribute("points")
                .unwrap()
                .split_whitespace()
                .map(|xy| {
                    let (x, y) = xy.split_once(',').unwrap();
                    (x.parse().unwrap(), y.parse().unwrap())
                })
                .collect();
            pts.iter()
                .fold(pts[0], |a, b| if b.1 < a.1 { *b } else { a })
                .0
        })
        .next()
        .unwrap();
    assert!(
        (peak - left) / width > 0.1,
        "body at {:.1} % of the width",
        100.0 * (peak - left) / width
    );
    // ... and the tail is inside the axis, its maximum marked there, not at the edge.
    let xt = ticks(by_id(&doc, "x-axis"), "x1");
    assert!(xt.last().unwrap().1 >= 2974.0, "{xt:?}");
    for m in doc.descendants().filter(|n| has_class(n, "max")) {
        let label = m.descendants().find(|n| n.has_tag_name("text")).unwrap();
        assert_eq!(label.text(), Some("max 2974 µs"));
    }
}

#[test]
fn histogram_us_is_cyclictests_h() {
    let dir = TempDir::new("plot-h");
    let file = selftest(
        &dir,
        "[load]\nspec = \"cpu:1\"\n[limits]\nmax_us = 10000000",
        "histogram_us = 50",
    );
    let run = read_json(&file);
    let cyclic = run["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["test"] == "cyclic")
        .unwrap();
    assert_eq!(cyclic["histogram_us"], 50, "stored with the test");
    let svg = dir.join("h.svg");
    let text = plot(&file, &svg, &[]);
    // 1-µs buckets up to 50 µs, the rest counted as overflows (cyclictest -h 50).
    let mut want = Vec::new();
    let mut over = Vec::new();
    for t in cyclic["threads"].as_array().unwrap() {
        let (m, o) = stored_classes(&t["histogram"], Some(50));
        want.push(m);
        over.push(o);
    }
    check_plot(&svg, &want);
    let doc = roxmltree::Document::parse(&text).unwrap();
    assert_eq!(
        by_id(&doc, "x-axis").attribute("data-scale"),
        Some("linear")
    );
    let xt = ticks(by_id(&doc, "x-axis"), "x1");
    assert_eq!(xt.last().unwrap().1, 50.0, "the axis ends at the range");
    let legend: Vec<String> = doc
        .descendants()
        .filter(|n| has_class(n, "entry"))
        .map(|e| e.descendants().find(|n| n.has_tag_name("text")).unwrap())
        .map(|t| t.text().unwrap().to_string())
        .collect();
    for (l, o) in legend.iter().zip(&over) {
        if *o > 0 {
            let n = rtbench::plot::svg::count(*o);
            assert!(l.contains(&format!("{n} beyond 50 µs, counted")), "{l}");
        } else {
            assert!(!l.contains("beyond"), "{l}");
        }
    }
    // Out of range: a configuration error naming the key, as any other.
    let bad = selftest_config_error(&dir, "[output]\nhistogram_us = 0");
    assert!(bad.contains("output.histogram_us"), "{bad}");
}

/// Standard error of a self-test refused for its configuration `body` (exit 2).
fn selftest_config_error(dir: &Path, body: &str) -> String {
    let cfg = dir.join("bad.toml");
    std::fs::write(&cfg, body).unwrap();
    let o = rtbench()
        .args(["selftest", "--config"])
        .arg(&cfg)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    stderr(&o)
}

#[test]
fn each_test_plot_shows_its_own_duration_and_verdict() {
    // cyclic passes in 1 s; pmq runs 2 s and fails every figure against a limit of 0
    // (every latency is above 0 ns): four failures or more, longer than a line.
    let dir = TempDir::new("plot-own");
    let file = selftest(
        &dir,
        "[pmq]\nduration = \"2s\"\n[limits]\nmax_us = 10000000\n[limits.pmq]\n\
         max_us = 0\np99_us = 0\n[explain]\nenabled = false",
        "",
    );
    let run = read_json(&file);
    let cy = dir.join("cyclic.svg");
    let doc_text = plot(&file, &cy, &["--test", "cyclic"]);
    let doc = roxmltree::Document::parse(&doc_text).unwrap();
    let h = header(&doc);
    assert!(h.iter().any(|l| l.contains("duration: 1 s")), "{h:?}");
    assert!(h.iter().any(|l| l == "verdict: PASS"), "{h:?}");
    assert!(
        h.iter()
            .any(|l| l.starts_with("run: FAIL, ") && l.contains("outside this test")),
        "{h:?}"
    );
    let pm = dir.join("pmq.svg");
    let doc_text = plot(&file, &pm, &["--test", "pmq"]);
    let doc = roxmltree::Document::parse(&doc_text).unwrap();
    let h = header(&doc);
    assert!(h.iter().any(|l| l.contains("duration: 2 s")), "{h:?}");
    assert!(h.iter().all(|l| !l.contains('…')), "nothing cut: {h:?}");
    // Every pmq failure, whole, in the header (wrapped lines joined with a space).
    let joined = h.join(" ");
    let failures: Vec<String> = run["verdict"]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["test"] == "pmq" && c["pass"] == false)
        .map(|c| {
            format!(
                "pmq pair {} CPU {} {}",
                c["thread"],
                c["cpu"],
                c["what"].as_str().unwrap()
            )
        })
        .collect();
    assert!(failures.len() >= 4, "{failures:?}");
    assert!(joined.contains("verdict: FAIL: pmq pair 0"), "{joined}");
    for f in &failures {
        assert!(joined.contains(f.as_str()), "{f} in {joined}");
    }
    assert!(
        !joined.contains("cyclic CPU"),
        "only pmq's verdict: {joined}"
    );
}

#[test]
fn pair_tests_are_labelled_as_pairs() {
    let dir = TempDir::new("plot-pairs");
    let file = selftest(
        &dir,
        "[cyclic]\nenabled = false\n[pmq]\n[pipe]\ninterval_us = 100\n[limits]\nmax_us = 10000000",
        "",
    );
    let run = read_json(&file);
    for test in ["pmq", "pipe"] {
        let svg = dir.join(format!("{test}.svg"));
        let text = plot(&file, &svg, &["--test", test]);
        let doc = roxmltree::Document::parse(&text).unwrap();
        let stored = run["tests"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["test"] == test)
            .unwrap();
        let pairs: Vec<String> = stored["threads"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| format!("pair {} CPU {}", t["thread"], t["cpu"]))
            .collect();
        let titles: Vec<&str> = doc
            .descendants()
            .filter(|n| has_class(n, "curve"))
            .map(|c| c.children().find(|n| n.has_tag_name("title")).unwrap())
            .map(|t| t.text().unwrap())
            .collect();
        assert_eq!(titles, pairs, "{test}");
        let legend: Vec<&str> = doc
            .descendants()
            .filter(|n| has_class(n, "entry"))
            .map(|e| e.descendants().find(|n| n.has_tag_name("text")).unwrap())
            .map(|t| t.text().unwrap())
            .collect();
        for (l, p) in legend.iter().zip(&pairs) {
            assert!(l.starts_with(&format!("{p}: ")), "{l}");
        }
    }
}

/// Every label under `#limits` and `#maxima` as a box (left, top, right, bottom):
/// width = characters × font size × 0.6 (DejaVu Sans averages about 0.55 em), placed
/// by its `text-anchor`.
fn label_boxes(doc: &roxmltree::Document) -> Vec<(String, [f64; 4])> {
    let mut v = Vec::new();
    for group in ["limits", "maxima"] {
        let Some(g) = doc.descendants().find(|n| n.attribute("id") == Some(group)) else {
            continue;
        };
        let font: f64 = g.attribute("font-size").unwrap().parse().unwrap();
        for t in g.descendants().filter(|n| n.has_tag_name("text")) {
            let s = t.text().unwrap().to_string();
            let w = s.chars().count() as f64 * font * 0.6;
            let (x, y) = (attr(t, "x"), attr(t, "y"));
            let x0 = match t.attribute("text-anchor") {
                Some("middle") => x - w / 2.0,
                Some("end") => x - w,
                _ => x,
            };
            v.push((s, [x0, y - font, x0 + w, y + 0.25 * font]));
        }
    }
    v
}

fn assert_labels_inside_and_apart(text: &str) {
    let doc = roxmltree::Document::parse(text).unwrap();
    let root = doc.root_element();
    let vb: Vec<f64> = root
        .attribute("viewBox")
        .unwrap()
        .split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect();
    let area = by_id(&doc, "plot-area");
    let (ax, ay) = (attr(area, "x"), attr(area, "y"));
    let (aw, ah) = (attr(area, "width"), attr(area, "height"));
    let boxes = label_boxes(&doc);
    assert!(!boxes.is_empty());
    for (s, b) in &boxes {
        assert!(
            b[0] >= vb[0] && b[1] >= vb[1] && b[2] <= vb[0] + vb[2] && b[3] <= vb[1] + vb[3],
            "{s:?} {b:?} leaves the picture {vb:?}"
        );
        assert!(
            b[0] >= ax && b[2] <= ax + aw && b[1] >= ay && b[3] <= ay + ah,
            "{s:?} {b:?} leaves the plot area"
        );
    }
    for (i, (s, a)) in boxes.iter().enumerate() {
        for (t, b) in &boxes[i + 1..] {
            let apart = a[2] <= b[0] || b[2] <= a[0] || a[3] <= b[1] || b[3] <= a[1];
            assert!(apart, "{s:?} {a:?} covers {t:?} {b:?}");
        }
    }
}

#[test]
fn limit_and_max_labels_never_clip_or_overlap() {
    // Four limits 1 µs apart and every maximum on the last of them, at the axis end.
    let dir = TempDir::new("plot-labels");
    let file = selftest(
        &dir,
        "[limits]\nmax_us = 31\np999_us = 30\np99_us = 29\navg_us = 28\n[explain]\nenabled = false",
        "",
    );
    let mut run = read_json(&file);
    set_distribution(&mut run, "cyclic", &[[5_000, 1000], [31_000, 1]], 31_000);
    let edited = dir.join("edited.json");
    std::fs::write(&edited, run.to_string()).unwrap();
    let text = plot(&edited, &dir.join("a.svg"), &[]);
    let doc = roxmltree::Document::parse(&text).unwrap();
    assert_eq!(
        doc.descendants().filter(|n| has_class(n, "limit")).count(),
        4,
        "every limit drawn"
    );
    assert_labels_inside_and_apart(&text);
    // A shorter axis: the maxima lie beyond it, marked at the right edge.
    let text = plot(&edited, &dir.join("b.svg"), &["--x-max", "20"]);
    assert_labels_inside_and_apart(&text);
    // Near the y axis: a limit of 1 µs, maxima at 1 µs.
    set_distribution(&mut run, "cyclic", &[[1_000, 1000]], 1_000);
    std::fs::write(&edited, run.to_string()).unwrap();
    let text = plot(&edited, &dir.join("c.svg"), &["--x-max", "2"]);
    assert_labels_inside_and_apart(&text);
}

#[test]
fn monitor_windows_plot_as_a_timeline_of_window_maxima() {
    let dir = TempDir::new("plot-monitor");
    let cfg = dir.join("rtbench.toml");
    std::fs::write(&cfg, "").unwrap();
    let mon = dir.join("mon");
    let o = rtbench()
        .args([
            "monitor",
            "--log-format",
            "logfmt",
            "--window",
            "1s",
            "-D",
            "3",
        ])
        .arg("--config")
        .arg(&cfg)
        .arg("--dir")
        .arg(&mon)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "monitor: {}", stderr(&o));
    let records: Vec<Value> = std::fs::read_to_string(mon.join("windows.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(!records.is_empty());
    // The store's directory and its windows.jsonl plot the same timeline.
    let svg = dir.join("t.svg");
    let text = plot(&mon, &svg, &[]);
    let from_file = plot(&mon.join("windows.jsonl"), &dir.join("f.svg"), &[]);
    let doc = roxmltree::Document::parse(&text).unwrap();
    assert_eq!(
        by_id(&doc, "x-axis").attribute("data-scale"),
        Some("time"),
        "{text}"
    );
    let body = |t: &str| {
        t[t.find("<g id=\"x-axis\"").unwrap()..t.find("<text id=\"footer\"").unwrap()].to_string()
    };
    assert_eq!(body(&text), body(&from_file));
    // x: seconds since the epoch from the time ticks; y: log10 µs from the latency ticks.
    let xt = ticks(by_id(&doc, "x-axis"), "x1");
    let (x0, t0) = xt[0];
    let (x1, t1) = (xt[1].0, xt[1].1);
    let to_s = |x: f64| t0 + (x - x0) / (x1 - x0) * (t1 - t0);
    let yt = ticks(by_id(&doc, "y-axis"), "y1");
    let (ya, la) = (yt[0].0, yt[0].1.log10());
    let (yb, lb) = (yt[yt.len() - 1].0, yt[yt.len() - 1].1.log10());
    let to_us = |y: f64| 10f64.powf(la + (y - ya) / (yb - ya) * (lb - la));
    let cpus: Vec<_> = doc.descendants().filter(|n| has_class(n, "cpu")).collect();
    let mut want: BTreeMap<u64, Vec<(f64, f64)>> = BTreeMap::new();
    for r in &records {
        for c in r["cpus"].as_array().unwrap() {
            if c["samples"].as_u64().unwrap() > 0 {
                want.entry(c["cpu"].as_u64().unwrap()).or_default().push((
                    r["end_s"].as_f64().unwrap(),
                    c["max_ns"].as_f64().unwrap() / 1000.0,
                ));
            }
        }
    }
    assert_eq!(cpus.len(), want.len(), "one series per CPU");
    for (g, (cpu, w)) in cpus.iter().zip(&want) {
        assert_eq!(g.attribute("data-cpu"), Some(cpu.to_string().as_str()));
        let got: Vec<(f64, f64)> = g
            .children()
            .filter(|n| has_class(n, "series"))
            .flat_map(|p| {
                p.attribute("points")
                    .unwrap()
                    .split_whitespace()
                    .map(|xy| {
                        let (x, y) = xy.split_once(',').unwrap();
                        (to_s(x.parse().unwrap()), to_us(y.parse().unwrap()))
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        assert_eq!(got.len(), w.len(), "CPU {cpu}: one point per window");
        for ((gt, gm), (wt, wm)) in got.iter().zip(w) {
            assert!(
                (gt - wt).abs() < 0.05,
                "CPU {cpu}: window end {gt}, stored {wt}"
            );
            assert!(
                (gm.log10() - wm.log10()).abs() < 0.01,
                "CPU {cpu}: window max {gm} µs, stored {wm} µs"
            );
        }
    }
    assert_labels_inside_and_apart(&text);
}
