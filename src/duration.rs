//! Durations as cyclictest's `-D` writes them, minus its traps: a number of seconds
//! with an optional `s`, `m`, `h` or `d` suffix (any case); any other suffix is an
//! error instead of being silently ignored (rt-tests `parse_time_string`), and so is a
//! duration above [`MAX_SECS`] (cyclictest keeps `-D` in a C `int` of seconds and
//! passes it to `alarm(2)`; rtbench adds it to the monotonic clock in ns, which
//! [`MAX_SECS`] keeps far from `i64::MAX`).

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
    if num.is_empty() {
        return Err(
            "expected a number of seconds with an optional s, m, h or d suffix (e.g. 10s, 5m, 12h)"
                .into(),
        );
    }
    let too_large =
        || format!("'{t}' is out of range: at most {MAX_SECS} s (68 years, as cyclictest's -D)");
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
                "unknown suffix '{other}': expected s, m, h or d (e.g. 10s, 5m, 12h)"
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
            assert!(e.contains("out of range") && e.contains(s), "{e}");
        }
        assert_eq!(parse("2147483647").unwrap().as_secs(), MAX_SECS);
        assert_eq!(parse("24855d").unwrap().as_secs(), 24855 * SECS_PER_DAY);
        assert!(parse("24856d").is_err());
        assert!(parse("99999999999999999999999").is_err());
    }
}
