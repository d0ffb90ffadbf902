//! Durations as cyclictest's `-D` writes them, minus its traps: a number of seconds
//! with an optional `s`, `m`, `h` or `d` suffix (any case); any other suffix is an
//! error instead of being silently ignored (rt-tests `parse_time_string`), and so is a
//! duration above [`MAX_SECS`] (cyclictest keeps `-D` in a C `int` of seconds and
//! passes it to `alarm(2)`; rtbench adds it to the monotonic clock in ns, which
//! [`MAX_SECS`] keeps far from `i64::MAX`).
//!
//! Also the one way a latency in **ns** is written for people in **µs** ([`us`]), in
//! the three forms the outputs need ([`UsStyle`]), all rounded the same way.

use std::time::Duration;

/// Longest duration, in seconds: 2^31 - 1 s (68 years, cyclictest's `int`). Its value
/// in ns (2.1 × 10^18) fits in an `i64` with room to add the clock's start.
pub const MAX_SECS: u64 = i32::MAX as u64;

/// Seconds per minute, hour and day (the `m`, `h` and `d` suffixes).
pub const SECS_PER_MIN: u64 = 60;
/// See [`SECS_PER_MIN`].
pub const SECS_PER_HOUR: u64 = 3600;
/// See [`SECS_PER_MIN`].
pub const SECS_PER_DAY: u64 = 86_400;

/// Parses `10`, `10s`, `5m`, `12h`, `1d` (also `M`, `H`, `D`), at most [`MAX_SECS`].
/// Returns the reason on error, e.g. for `5x` or `9223372037`.
pub fn parse(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    if num.is_empty()
        && t.strip_prefix('-')
            .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
    {
        return Err(
            "is negative; expected a number of seconds with an optional s, m, h or d suffix (e.g. 10s, 5m, 12h)"
                .into(),
        );
    }
    if num.is_empty() {
        return Err(
            "expected a number of seconds with an optional s, m, h or d suffix (e.g. 10s, 5m, 12h)"
                .into(),
        );
    }
    // The caller names the value; the message does not repeat it.
    let too_large = || format!("out of range: at most {MAX_SECS} s (68 years, as cyclictest's -D)");
    let n: u64 = num.parse().map_err(|_| too_large())?;
    let mult = match suffix {
        "" | "s" | "S" => 1,
        "m" | "M" => SECS_PER_MIN,
        "h" | "H" => SECS_PER_HOUR,
        "d" | "D" => SECS_PER_DAY,
        other if other.starts_with(['.', ',']) => {
            return Err(
                "fractions are not taken: expected a whole number with an optional s, m, h or d suffix (e.g. 90m for 1.5h)"
                    .into(),
            )
        }
        other => {
            return Err(format!(
                "unknown suffix '{}': expected s, m, h or d (e.g. 10s, 5m, 12h)",
                crate::error::echo(other)
            ))
        }
    };
    n.checked_mul(mult)
        .filter(|&s| s <= MAX_SECS)
        .map(Duration::from_secs)
        .ok_or_else(too_large)
}

/// `d` in ns as an `i64` for clock arithmetic: exact for every duration [`parse`]
/// accepts (at most [`MAX_SECS`]); a longer one saturates at `i64::MAX` (292 years),
/// never wraps to a negative or short time.
pub fn as_nanos_i64(d: Duration) -> i64 {
    i64::try_from(d.as_nanos()).unwrap_or(i64::MAX)
}

/// Formats a duration the way it was most likely written (`90s`, `5m`, `12h`, `1d`).
pub fn format(d: Duration) -> String {
    let s = d.as_secs();
    if s != 0 && s % SECS_PER_DAY == 0 {
        format!("{}d", s / SECS_PER_DAY)
    } else if s != 0 && s % SECS_PER_HOUR == 0 {
        format!("{}h", s / SECS_PER_HOUR)
    } else if s != 0 && s % SECS_PER_MIN == 0 {
        format!("{}m", s / SECS_PER_MIN)
    } else {
        format!("{s}s")
    }
}

/// Nanoseconds per µs, second and day, for [`us`].
const NS_PER_US: u64 = 1_000;
const NS_PER_SEC: u64 = 1_000_000_000;
const NS_PER_DAY: u64 = NS_PER_SEC * SECS_PER_DAY;

/// The form [`us`] writes a latency in: what the output around it needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UsStyle {
    /// Messages, journal text and limits, with the unit: `100 µs` when whole, one
    /// decimal below 10 ms (`2974.5 µs`), whole µs from 10 ms (`12346 µs`).
    Text,
    /// Table cells (`rtbench report`, `report --since`), no unit, at most 7
    /// characters so that a value never fills its column: one decimal below 10 ms,
    /// also when whole (`100.0`), whole µs below 10 s (`12346`), whole seconds marked
    /// `s` below 10^6 s (`123s`), then whole days marked `d` (2^64 - 1 ns is
    /// `213504d`).
    Cell,
    /// Plot labels and coordinates, no unit: whole when whole (`87`), two decimals
    /// below 10 µs (`1.23`, where a fast machine's latencies lie), one above (`12.3`).
    Label,
}

/// A latency in **ns** as **µs** text in `style` (see [`UsStyle`]). Every form rounds
/// half up, in integers (u128: no value wraps, no binary fraction tips a `…5` either
/// way).
pub fn us(ns: u64, style: UsStyle) -> String {
    let whole = ns % NS_PER_US == 0;
    match style {
        UsStyle::Text if whole => format!("{} µs", ns / NS_PER_US),
        UsStyle::Text if ns < 10_000 * NS_PER_US => format!("{} µs", fixed(ns, NS_PER_US, 1)),
        UsStyle::Text => format!("{} µs", fixed(ns, NS_PER_US, 0)),
        UsStyle::Cell if ns < 10_000 * NS_PER_US => fixed(ns, NS_PER_US, 1),
        // Below the value that rounds to 10^7 µs (8 digits).
        UsStyle::Cell if ns < 10 * NS_PER_SEC - NS_PER_US / 2 => fixed(ns, NS_PER_US, 0),
        UsStyle::Cell if ns < 1_000_000 * NS_PER_SEC - NS_PER_SEC / 2 => {
            format!("{}s", fixed(ns, NS_PER_SEC, 0))
        }
        UsStyle::Cell => format!("{}d", fixed(ns, NS_PER_DAY, 0)),
        UsStyle::Label if whole => (ns / NS_PER_US).to_string(),
        UsStyle::Label if ns < 10 * NS_PER_US => fixed(ns, NS_PER_US, 2),
        UsStyle::Label => fixed(ns, NS_PER_US, 1),
    }
}

/// `ns / unit` rounded half up to `decimals` decimals, as text.
fn fixed(ns: u64, unit: u64, decimals: u32) -> String {
    let scale = 10u128.pow(decimals);
    let unit = u128::from(unit);
    let v = (2 * u128::from(ns) * scale + unit) / (2 * unit);
    if decimals == 0 {
        v.to_string()
    } else {
        format!("{}.{:0w$}", v / scale, v % scale, w = decimals as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suffixes() {
        assert_eq!(parse("10").unwrap().as_secs(), 10);
        assert_eq!(parse("10s").unwrap().as_secs(), 10);
        assert_eq!(parse("5m").unwrap().as_secs(), 300);
        assert_eq!(parse("12H").unwrap().as_secs(), 43200);
        assert_eq!(parse("1d").unwrap().as_secs(), 86400);
        assert!(parse("5x").unwrap_err().contains("unknown suffix 'x'"));
        assert!(parse("1.5h")
            .unwrap_err()
            .starts_with("fractions are not taken"));
        assert!(parse("").is_err());
        assert!(parse("m").is_err());
        assert!(parse("1.5h").is_err());
        assert_eq!(format(Duration::from_secs(43200)), "12h");
        assert_eq!(format(Duration::from_secs(90)), "90s");
    }

    #[test]
    fn durations_that_would_wrap_the_stop_time_are_refused() {
        // 9223372037 s is more than i64::MAX ns: the stop time wrapped (found by tests/hostile/hostile_props.rs).
        for s in [
            "9223372037",
            "18446744073709551615s",
            "106751991167301d",
            "2147483648",
        ] {
            let e = parse(s).unwrap_err();
            assert!(e.contains("out of range"), "{e}");
        }
        assert_eq!(parse("2147483647").unwrap().as_secs(), MAX_SECS);
        assert_eq!(parse("24855d").unwrap().as_secs(), 24855 * SECS_PER_DAY);
        assert!(parse("24856d").is_err());
        assert!(parse("99999999999999999999999").is_err());
    }

    #[test]
    fn latencies_in_us_in_each_style() {
        use UsStyle::*;
        for (ns, text, cell, label) in [
            (0, "0 µs", "0.0", "0"),
            (100_000, "100 µs", "100.0", "100"),
            (1_234, "1.2 µs", "1.2", "1.23"),
            (1_235, "1.2 µs", "1.2", "1.24"),
            (1_250, "1.3 µs", "1.3", "1.25"),
            (12_345, "12.3 µs", "12.3", "12.3"),
            (2_974_049, "2974.0 µs", "2974.0", "2974.0"),
            (9_999_950, "10000.0 µs", "10000.0", "10000.0"),
            (12_345_678, "12346 µs", "12346", "12345.7"),
            (9_999_999_499, "9999999 µs", "9999999", "9999999.5"),
            (9_999_999_500, "10000000 µs", "10s", "9999999.5"),
            (123_456_789_000, "123456789 µs", "123s", "123456789"),
            (
                u64::MAX,
                "18446744073709552 µs",
                "213504d",
                "18446744073709551.6",
            ),
        ] {
            assert_eq!(us(ns, Text), text, "{ns}");
            assert_eq!(us(ns, Cell), cell, "{ns}");
            assert_eq!(us(ns, Label), label, "{ns}");
            assert!(us(ns, Cell).len() <= 7, "{ns}");
        }
    }
}
