//! JSON results (`rtbench plot`, `rtbench compare`):
//! - rt-tests `file_version` 1 (`rt_write_json()` in rt-tests src/lib/rt-utils.c, the
//!   writer is src/report/json.rs): `"thread": {"0":
//!   {"histogram": {"<bucket>": count}, "cycles", "max", "cpu", ...}}`, buckets in µs (ns
//!   when `"resolution_in_ns": 1`). rtbench adds an `"rtbench"` object whose
//!   `threads[]` carry exact `p999_ns`/`max_ns`, `histogram_bucket_ns` and
//!   `histogram_overflows`, and whose `sysinfo` has the preemption model.
//! - a stored self-test result (`results::store::StoredRun`): per test and thread,
//!   histogram `[value_ns, count]` pairs, re-binned into 1-µs classes as cyclictest
//!   and OSADL use by [`super::stored`].

use super::{Curve, Histograms, Meta};
use crate::date::days_from_civil;
use crate::date::iso_s;
use crate::results::store::StoredRun;
use serde_json::Value;

/// Parses a JSON input (see the module doc). Errors are messages without the input name.
///
/// The rt-tests document is read through `serde_json::Value` and the stored result
/// through `StoredRun`, both already deserialized from text elsewhere in rtbench: typed
/// structs for rt-tests' keys would add their own deserializer code to the binary.
pub fn parse(text: &str, test: Option<&str>) -> Result<Histograms, String> {
    let (v, non_finite): (Value, Vec<String>) = match serde_json::from_str(text) {
        Ok(v) => (v, Vec::new()),
        Err(e) => {
            // cyclictest prints its figures with printf: a thread with 0 cycles has an
            // average of 0/0, written `"avg": -nan` (not JSON). Such bare words become
            // null, each named; anything else is still invalid JSON.
            let (fixed, words) = null_non_finite(text);
            match serde_json::from_str(&fixed) {
                Ok(v) if !words.is_empty() => (v, words),
                _ => return Err(format!("invalid JSON ({e})")),
            }
        }
    };
    if v.get("file_version").is_some() && v.get("thread").is_some() {
        let mut plot = rt_tests(&v)?;
        if !non_finite.is_empty() {
            keep_measured(&mut plot, &non_finite)?;
        }
        Ok(plot)
    } else if v.get("rtbench_version").is_some() && v.get("tests").is_some() {
        drop(v);
        let run: StoredRun = serde_json::from_str(text)
            .map_err(|e| format!("not a stored self-test result: {e}"))?;
        super::stored::plot(&run, test)
    } else {
        Err(format!(
            "JSON without \"file_version\"/\"thread\" or \"rtbench_version\"/\"tests\"; {}",
            super::EXPECTED
        ))
    }
}

/// `text` with every bare `nan`, `-nan`, `inf`, `-inf` (any case, `infinity` too)
/// outside strings replaced by `null`, and each as `"KEY": WORD` (the key before it).
fn null_non_finite(text: &str) -> (String, Vec<String>) {
    let mut out = String::with_capacity(text.len());
    let mut words = Vec::new();
    let (mut in_str, mut esc) = (false, false);
    let mut last_str = String::new();
    let mut cur = String::new();
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if in_str {
            out.push(c);
            if esc {
                esc = false;
            } else if c == '\\' {
                esc = true;
            } else if c == '"' {
                in_str = false;
                last_str = std::mem::take(&mut cur);
            } else {
                cur.push(c);
            }
            continue;
        }
        if c == '"' {
            in_str = true;
            out.push(c);
            continue;
        }
        if c == '-' || c.is_ascii_alphabetic() {
            let start = i;
            let mut end = i + c.len_utf8();
            while let Some(&(j, d)) = chars.peek() {
                if !d.is_ascii_alphabetic() {
                    break;
                }
                end = j + d.len_utf8();
                chars.next();
            }
            let word = &text[start..end];
            let bare = word.trim_start_matches('-').to_ascii_lowercase();
            if matches!(bare.as_str(), "nan" | "inf" | "infinity") {
                words.push(format!(
                    "\"{}\": {}",
                    crate::error::echo_part(&last_str),
                    word
                ));
                out.push_str("null");
            } else {
                out.push_str(word);
            }
            continue;
        }
        out.push(c);
    }
    (out, words)
}

/// Leaves out of `plot` the threads that measured nothing (0 cycles: cyclictest's
/// `"avg": -nan`), saying so in the format line; an error naming the cause when no
/// thread measured anything. `words` are the non-finite figures found.
fn keep_measured(plot: &mut Histograms, words: &[String]) -> Result<(), String> {
    let empty: Vec<usize> = plot
        .curves
        .iter()
        .filter(|c| c.buckets.is_empty() && c.overflows == 0)
        .map(|c| c.thread)
        .collect();
    let cause = format!(
        "not-a-number figures ({}) of threads with 0 cycles",
        words.join(", ")
    );
    if empty.len() == plot.curves.len() {
        return Err(format!("no thread measured anything: {cause}"));
    }
    plot.curves.retain(|c| !empty.contains(&c.thread));
    if !empty.is_empty() {
        let list: Vec<String> = empty.iter().map(usize::to_string).collect();
        plot.meta.format = format!(
            "{}; thread {} left out: {cause}",
            plot.meta.format,
            list.join(", ")
        );
    }
    Ok(())
}

fn text_at(v: Option<&Value>, key: &str) -> Option<String> {
    v?.get(key)?.as_str().map(str::to_string)
}

fn u64_at(v: Option<&Value>, key: &str) -> Option<u64> {
    v?.get(key)?.as_u64()
}

/// An rt-tests `file_version` 1 document already parsed (see the module doc). Errors
/// are messages without the input name.
pub fn rt_tests(doc: &Value) -> Result<Histograms, String> {
    let unit_ns: u64 = if doc.get("resolution_in_ns").and_then(Value::as_u64) == Some(1) {
        1
    } else {
        1000
    };
    let ext = doc.get("rtbench").filter(|e| e.is_object());
    let cmdline = text_at(Some(doc), "cmdline:");
    let range_ns = match cmdline.as_deref().and_then(histogram_size) {
        Some(n) => Some(n.checked_mul(unit_ns).ok_or_else(|| {
            format!("\"cmdline:\": -h {n} is out of range (more than 2^64 - 1 ns)")
        })?),
        None => None,
    };
    let thread_map = doc["thread"]
        .as_object()
        .ok_or("\"thread\" is not an object")?;
    let mut threads: Vec<(usize, &Value)> = Vec::new();
    for (k, t) in thread_map {
        let i = k.parse().map_err(|_| {
            format!(
                "\"thread\" key \"{}\" is not a thread number",
                crate::error::echo(k)
            )
        })?;
        threads.push((i, t));
    }
    threads.sort_by_key(|t| t.0);
    let ext_threads = ext.and_then(|e| e.get("threads")).and_then(Value::as_array);
    let mut curves = Vec::new();
    for (i, t) in threads {
        let x = ext_threads.and_then(|v| {
            v.iter()
                .find(|x| x.get("thread").and_then(Value::as_u64) == Some(i as u64))
        });
        curves.push(curve(i, t, x, unit_ns, range_ns)?);
    }
    Ok(Histograms {
        meta: meta(doc, ext, cmdline),
        curves,
    })
}

/// Thread `i`'s curve from its rt-tests entry `t` and rtbench's extension `x` (exact
/// p99.9 and maximum, bucket width, overflows): buckets of `unit_ns` (1000; 1 with `-N`)
/// unless `x` says otherwise, the histogram's range `range_ns`.
fn curve(
    i: usize,
    t: &Value,
    x: Option<&Value>,
    unit_ns: u64,
    range_ns: Option<u64>,
) -> Result<Curve, String> {
    // rt-tests <= 2.6 (and rtbench) write `"histogram": {}` without -h; an empty
    // one is a histogram only where rtbench says it ran with -h.
    let Some(hist) = t
        .get("histogram")
        .and_then(Value::as_object)
        .filter(|h| !h.is_empty() || u64_at(x, "histogram_bucket_ns").is_some())
    else {
        return Err(format!(
            "thread {i} has no histogram: run rtbench cyclic or cyclictest with -h US"
        ));
    };
    let bucket_ns = u64_at(x, "histogram_bucket_ns").unwrap_or(unit_ns);
    if bucket_ns == 0 {
        return Err(format!(
            "thread {i}: \"histogram_bucket_ns\": 0 is out of range (at least 1 ns)"
        ));
    }
    let mut buckets = Vec::new();
    let mut binned = 0u64;
    for (k, n) in hist {
        let (Ok(b), Some(n)) = (k.parse::<u64>(), n.as_u64()) else {
            return Err(format!(
                "thread {i}: histogram entry \"{}\": {} is not a bucket count",
                crate::error::echo(k),
                crate::error::echo(&n.to_string())
            ));
        };
        // The bucket's lower bound and its end, in ns, must fit in 64 bits.
        let lo = b
            .checked_mul(bucket_ns)
            .filter(|lo| lo.checked_add(bucket_ns).is_some())
            .ok_or_else(|| {
                format!(
                    "thread {i}: histogram bucket {k} is out of range ({k} × {bucket_ns} ns \
                     is more than 2^64 - 1 ns)"
                )
            })?;
        binned = binned.checked_add(n).ok_or_else(|| {
            format!(
                "thread {i}: histogram entry \"{}\": count {n} takes the samples past \
                 2^64 - 1 (out of range)",
                crate::error::echo(k)
            )
        })?;
        if n > 0 {
            buckets.push((lo, n));
        }
    }
    buckets.sort_unstable();
    let cycles = u64_at(Some(t), "cycles").unwrap_or(binned);
    let overflows = u64_at(x, "histogram_overflows").unwrap_or(cycles.saturating_sub(binned));
    if binned.checked_add(overflows).is_none() {
        return Err(format!(
            "thread {i}: {overflows} histogram overflows take the samples past 2^64 - 1 \
             (out of range)"
        ));
    }
    let max_ns = match (u64_at(x, "max_ns"), u64_at(Some(t), "max")) {
        (Some(ns), _) => ns,
        (None, Some(m)) => m.checked_mul(unit_ns).ok_or_else(|| {
            format!("thread {i}: \"max\": {m} is out of range (more than 2^64 - 1 ns)")
        })?,
        (None, None) => buckets.last().map_or(0, |b| b.0),
    };
    Ok(Curve {
        thread: i,
        cpu: t
            .get("cpu")
            .and_then(Value::as_i64)
            .and_then(|c| usize::try_from(c).ok()),
        bucket_ns,
        buckets,
        overflows,
        range_ns,
        max_ns,
        p999_ns: u64_at(x, "p999_ns"),
        run: None,
    })
}

/// What an rt-tests document (`doc`, with rtbench's extension `ext`) says about the
/// run: host, kernel with its preemption model, date, duration, test, command, load.
fn meta(doc: &Value, ext: Option<&Value>, cmdline: Option<String>) -> Meta {
    let si = doc.get("sysinfo");
    let preempt = text_at(ext.and_then(|e| e.get("sysinfo")), "preempt_model")
        .or_else(|| (u64_at(si, "realtime") == Some(1)).then(|| "PREEMPT_RT".to_string()));
    let kernel = text_at(si, "release").map(|r| {
        let mut k = r;
        for extra in [preempt, text_at(si, "machine")].into_iter().flatten() {
            k.push(' ');
            k.push_str(&extra);
        }
        k
    });
    let start = text_at(Some(doc), "start_time");
    let end = text_at(Some(doc), "end_time");
    let duration_s = match (
        start.as_deref().and_then(parse_rfc2822),
        end.as_deref().and_then(parse_rfc2822),
    ) {
        (Some(a), Some(b)) if b >= a => b.checked_sub(a).map(|d| d as f64),
        _ => None,
    };
    let format = if ext.is_some() {
        "rtbench cyclic --json"
    } else {
        "cyclictest --json"
    };
    let mut test = text_at(ext, "test").unwrap_or_else(|| "cyclictest".into());
    if ext
        .and_then(|e| e.get("interrupted"))
        .and_then(Value::as_bool)
        == Some(true)
    {
        test.push_str(" (interrupted)");
    }
    Meta {
        format: format.into(),
        host: text_at(si, "nodename"),
        kernel,
        // rt-tests writes RFC 2822; the plot says it as every rtbench text does.
        date: start.map(|s| parse_rfc2822(&s).map_or(s, iso_s)),
        test: Some(test),
        command: cmdline,
        duration_s,
        load: ext.and_then(|e| e.get("load")).map(load_text),
        ..Meta::default()
    }
}

/// The `"rtbench"` object's `"load"` (null: none; `{spec, cmd, cpus, ...}`) as text.
fn load_text(l: &Value) -> String {
    if l.is_null() {
        return "none".into();
    }
    let parts: Vec<String> = [text_at(Some(l), "spec"), text_at(Some(l), "cmd")]
        .into_iter()
        .flatten()
        .filter(|s| !s.is_empty())
        .collect();
    let mut s = if parts.is_empty() {
        "yes".to_string()
    } else {
        parts.join(" + ")
    };
    if let Some(c) = text_at(Some(l), "cpus").filter(|c| !c.is_empty()) {
        s.push_str(" on CPUs ");
        s.push_str(&c);
    }
    s
}

/// The `-h`/`-H` bucket count from a cyclictest or rtbench command line
/// (`-h 400`, `-h400`, `--histogram 400`, `--histogram=400`, same for `-H`/`--histofall`).
pub fn histogram_size(cmdline: &str) -> Option<u64> {
    let words: Vec<&str> = cmdline.split_whitespace().collect();
    for (i, w) in words.iter().enumerate() {
        for flag in ["--histogram", "--histofall", "-h", "-H"] {
            let Some(rest) = w.strip_prefix(flag) else {
                continue;
            };
            let value = if rest.is_empty() {
                words.get(i + 1).copied()
            } else {
                Some(rest.strip_prefix('=').unwrap_or(rest))
            };
            if let Some(n) = value.and_then(|v| v.parse().ok()) {
                return Some(n);
            }
        }
    }
    None
}

/// Seconds since the epoch of rt-tests' `start_time` (`"Sun, 29 Nov 2026 22:09:25
/// +0000"`, strftime `%a, %d %b %Y %T %z`); `None` when it is not that shape: the
/// fields must be in range (year 0..=9999, day 1..=31, hour 0..=23, minute 0..=59,
/// second 0..=60, zone ±HHMM in ASCII digits), so the arithmetic cannot overflow.
pub fn parse_rfc2822(s: &str) -> Option<i64> {
    let w: Vec<&str> = s.split_whitespace().collect();
    let w = if w.first()?.ends_with(',') {
        &w[1..]
    } else {
        &w[..]
    };
    let [day, mon, year, time, zone] = w else {
        return None;
    };
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let m = MONTHS.iter().position(|x| x == mon)? as i64 + 1;
    let field = |s: &str, max: i64| -> Option<i64> {
        // Digits only (no sign, no white space), at most 4 of them.
        (!s.is_empty() && s.len() <= 4 && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
            .filter(|v| *v <= max)
    };
    let hms: Vec<&str> = time.split(':').collect();
    let [h, mi, se] = hms[..] else { return None };
    let (h, mi, se) = (field(h, 23)?, field(mi, 59)?, field(se, 60)?);
    // The zone is `+HHMM`/`-HHMM`: split by bytes only after checking they are ASCII.
    let (sign, z) = match zone.as_bytes() {
        [b'+', z @ ..] => (1, z),
        [b'-', z @ ..] => (-1, z),
        _ => return None,
    };
    let [a, b, c, d] = *z else { return None };
    let digit = |x: u8| x.is_ascii_digit().then(|| i64::from(x - b'0'));
    let (zh, zm) = (digit(a)? * 10 + digit(b)?, digit(c)? * 10 + digit(d)?);
    let (year, day) = (field(year, 9999)?, field(day, 31).filter(|d| *d >= 1)?);
    let days = days_from_civil(year, m, day);
    Some(days * 86_400 + h * 3600 + mi * 60 + se - sign * (zh * 3600 + zm * 60))
}

// Howard Hinnant's civil-calendar algorithms (proleptic Gregorian).
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_round_trip_with_libc() {
        for secs in [0i64, 951_782_400, 1_795_900_000, 4_102_444_799] {
            // rfc2822() formats in local time with its offset; parsing must undo both.
            let s = crate::report::json::rfc2822(secs);
            assert_eq!(parse_rfc2822(&s), Some(secs), "{s}");
        }
        assert_eq!(iso_s(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso_s(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(
            parse_rfc2822("Sun, 29 Nov 2026 22:09:25 +0130").unwrap() % 60,
            25
        );
        assert_eq!(parse_rfc2822("yesterday"), None);
    }

    #[test]
    fn the_header_says_rt_tests_start_time_in_rtbench_s_date_format() {
        let doc = r#"{"file_version": 1, "start_time": "Tue, 01 Dec 2026 20:17:47 +0000",
            "thread": {"0": {"cycles": 1, "min": 1, "max": 1, "avg": 1.0, "cpu": 0,
            "histogram": {"1": 1}}}}"#;
        let p = parse(doc, None).unwrap();
        assert_eq!(p.meta.date.as_deref(), Some("2026-12-01T20:17:47Z"));
    }

    #[test]
    fn histogram_size_from_command_lines() {
        assert_eq!(histogram_size("cyclictest -m -S -h 400 -q"), Some(400));
        assert_eq!(histogram_size("rtbench cyclic -H30"), Some(30));
        assert_eq!(histogram_size("x --histogram=200"), Some(200));
        assert_eq!(histogram_size("x --histofall 7 -q"), Some(7));
        assert_eq!(histogram_size("rtbench cyclic -q --help"), None);
    }

    #[test]
    fn json_without_histogram_says_how_to_get_one() {
        let doc = r#"{"file_version": 1, "thread": {"0": {"cycles": 10, "min": 1, "max": 9, "avg": 2.0, "cpu": 0, "node": -1}}}"#;
        let e = parse(doc, None).unwrap_err();
        assert!(e.contains("thread 0 has no histogram"), "{e}");
        assert!(e.contains("-h US"), "{e}");
        // rt-tests 2.4 (and rtbench) without -h: an empty histogram object.
        let doc = r#"{"file_version": 1, "thread": {"0": {"histogram": {}, "cycles": 10, "min": 1, "max": 9, "avg": 2.0, "cpu": 0, "node": -1}}}"#;
        let e = parse(doc, None).unwrap_err();
        assert!(e.contains("thread 0 has no histogram"), "{e}");
    }
}
