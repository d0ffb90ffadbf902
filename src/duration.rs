//! Durations as cyclictest's `-D` writes them, minus its trap: a number of seconds
//! with an optional `s`, `m`, `h` or `d` suffix (any case); any other suffix is an
//! error instead of being silently ignored (rt-tests `parse_time_string`).

use std::time::Duration;

/// Seconds per minute, hour and day (the `m`, `h` and `d` suffixes).
pub const SECS_PER_MIN: u64 = 60;
/// See [`SECS_PER_MIN`].
pub const SECS_PER_HOUR: u64 = 3600;
/// See [`SECS_PER_MIN`].
pub const SECS_PER_DAY: u64 = 86_400;

/// Parses `10`, `10s`, `5m`, `12h`, `1d` (also `M`, `H`, `D`). Returns the reason on
/// error, e.g. for `5x`.
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
    let n: u64 = num.parse().map_err(|_| format!("'{num}' is too large"))?;
    let mult = match suffix {
        "" | "s" | "S" => 1,
        "m" | "M" => SECS_PER_MIN,
        "h" | "H" => SECS_PER_HOUR,
        "d" | "D" => SECS_PER_DAY,
        other => {
            return Err(format!(
                "unknown suffix '{other}': expected s, m, h or d (e.g. 10s, 5m, 12h)"
            ))
        }
    };
    n.checked_mul(mult)
        .map(Duration::from_secs)
        .ok_or_else(|| format!("'{t}' is too large"))
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
        assert!(parse("").is_err());
        assert!(parse("m").is_err());
        assert!(parse("1.5h").is_err());
        assert_eq!(format(Duration::from_secs(43200)), "12h");
        assert_eq!(format(Duration::from_secs(90)), "90s");
    }
}
