//! Numeric option values read as rt-tests reads them: cyclictest and pmqtest convert
//! every number with `atoi(3)` (that is `strtol(3)` in base 10), so leading white space
//! is skipped and anything after the digits is ignored — `-h 3500` passed as one
//! argument (rteval does that) gives the value `" 3500"`, which is 3500; `-i100us` is
//! 100. Three deliberate differences, all refusals of what C would silently misread: a
//! value without any digits is an error instead of 0, a value outside the target
//! type is an error instead of being truncated to `int` (glibc's `atoi` returns
//! `(int) strtol(…)`, so `-i 4294967297` would run with an interval of 1 µs), and, for
//! an option in µs ([`us_arg`]), another unit or a fraction after the number (`-i 1ms`,
//! which `atoi` reads as 1 µs).
//!
//! The functions here are clap value parsers (`value_parser = number::u64_arg`); their
//! error text follows clap's `invalid value 'V' for '--flag <X>': …`.

/// C's `isspace` in the "C" locale: space, `\t`, `\n`, `\v`, `\f`, `\r`.
fn c_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\u{0b}' | '\u{0c}' | '\r')
}

/// The leading integer of `s` as `strtol(s, NULL, 10)` finds it: white space, an
/// optional `+`/`-`, decimal digits; the rest is ignored. `Err` when there are no
/// digits, or the number does not fit in an `i128` (it then fits no option either).
pub fn leading_integer(s: &str) -> Result<i128, String> {
    let t = s.trim_start_matches(c_space);
    let (negative, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return Err("expected a number".into());
    }
    let mut n: i128 = 0;
    for d in t[..digits].bytes() {
        n = n
            .checked_mul(10)
            .and_then(|n| n.checked_add(i128::from(d - b'0')))
            .ok_or("number too large")?;
    }
    Ok(if negative { -n } else { n })
}

/// What follows the number in `s` when it cannot be µs: text that starts with a
/// letter other than `u`/`µ` (`1ms`, `2s`, `1msec`, `5 m`) or a fraction (`1.5`). For
/// an option in µs, `atoi` reads `-i 1ms` as 1 µs — a thousand times the rate meant,
/// at SCHED_FIFO — so that is refused ([`us_arg`]); `us`, `usec` and any other
/// trailing text (`1000,`) are ignored as cyclictest ignores them.
fn not_micros(s: &str) -> Option<&str> {
    let t = s.trim_start_matches(c_space);
    let t = t.strip_prefix(['+', '-']).unwrap_or(t);
    let rest = t.trim_start_matches(|c: char| c.is_ascii_digit());
    let word = rest.trim_start_matches(c_space);
    let mut chars = word.chars();
    let bad = match chars.next() {
        Some('u' | 'U' | 'µ') => false,
        Some(c) if c.is_alphabetic() => true,
        Some('.' | ',') => chars.next().is_some_and(|c| c.is_ascii_digit()),
        _ => false,
    };
    bad.then_some(rest.trim_matches(c_space))
}

macro_rules! c_number_parser {
    ($(#[$doc:meta])* $name:ident, $t:ty) => {
        $(#[$doc])*
        pub fn $name(s: &str) -> Result<$t, String> {
            let n = leading_integer(s)?;
            <$t>::try_from(n).map_err(|_| {
                format!("{n} is out of range ({}..{})", <$t>::MIN, <$t>::MAX)
            })
        }
    };
}

c_number_parser!(
    /// An unsigned 64-bit value (intervals in µs, loops, thresholds) read as `atoi`
    /// does (see the module documentation).
    u64_arg,
    u64
);
c_number_parser!(
    /// A count or size (`-h` buckets, `-t` threads) read as `atoi` does.
    usize_arg,
    usize
);
c_number_parser!(
    /// A signed value (`-p`, checked for 0..99 later) read as `atoi` does.
    i64_arg,
    i64
);
c_number_parser!(
    /// A C `int` (`--latency`, the PM QoS target in µs) read as `atoi` does.
    i32_arg,
    i32
);

/// A time in µs of a cyclictest/pmqtest option (`-i`, `-d`, `-b`, `-h`/`-H` bucket
/// count in µs) read as `atoi` does, except that another unit or a fraction after the
/// number is refused (`not_micros`).
pub fn us_arg(s: &str) -> Result<u64, String> {
    let n = u64_arg(s)?;
    match not_micros(s) {
        Some(rest) => Err(format!(
            "'{}' after {n} is not read (atoi would take {n} µs); write the value in µs",
            crate::error::echo_part(rest)
        )),
        None => Ok(n),
    }
}

/// [`us_arg`] for a count of 1-µs buckets (`-h`, `-H`).
pub fn us_usize_arg(s: &str) -> Result<usize, String> {
    let n = us_arg(s)?;
    usize::try_from(n).map_err(|_| format!("{n} is out of range (0..{})", usize::MAX))
}

/// A threshold of rtbench's own options (`--explain`), **µs**: a whole number, with an
/// optional `us`/`µs` suffix, and nothing else. Not read as `atoi` does: these options
/// have no rt-tests spelling to stay compatible with, and `--explain 1s` or `2e3` read
/// as 1 or 2 µs would trip on every sample. `Err` names what was expected.
pub fn own_us_arg(s: &str) -> Result<u64, String> {
    let t = s.trim();
    if negative(t) {
        return Err("is negative; expected a whole number of µs (e.g. 100 or 100us)".into());
    }
    let digits = t
        .strip_suffix("us")
        .or_else(|| t.strip_suffix("µs"))
        .unwrap_or(t);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err("expected a whole number of µs (e.g. 100 or 100us)".into());
    }
    digits
        .parse()
        .map_err(|_| format!("{digits} is out of range (0..{})", u64::MAX))
}

/// Whether `t` is written as a negative number (`-1`, `-1d`, `-inf`): a value clap took
/// for an option (`allow_negative_numbers`, `allow_hyphen_values`) that the message
/// should call negative rather than "not a number".
pub fn negative(t: &str) -> bool {
    t.strip_prefix('-')
        .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit() || c == '.' || c == 'i'))
}

/// A whole number of rtbench's own options (`monitor -i`): decimal digits and nothing
/// else (no `atoi` reading: these have no rt-tests spelling), a negative one said to
/// be negative. `Err` says what was expected.
pub fn whole_u64(s: &str) -> Result<u64, String> {
    let t = s.trim();
    if negative(t) {
        return Err("is negative; expected a whole number".into());
    }
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return Err("expected a whole number".into());
    }
    t.parse()
        .map_err(|_| format!("out of range (0..{})", u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn another_unit_after_microseconds_is_refused_us_and_other_text_ignored() {
        assert!(us_arg("1ms").unwrap_err().contains("'ms'"));
        for bad in [
            " 2s", "5 m", "1msec", "1.5ms", "1ms,", "1 ms.", "2secs", "1mins", "1.5",
        ] {
            assert!(us_arg(bad).is_err(), "{bad}");
        }
        assert!(us_usize_arg("10NS").is_err());
        for (good, n) in [
            ("100us", 100),
            ("100usec", 100),
            (" 3500", 3500),
            ("1000,", 1000),
        ] {
            assert_eq!(us_arg(good), Ok(n), "{good}");
        }
        // Counts and seconds (pmqtest's -T 5s, -l 3s) keep atoi's reading.
        assert_eq!(u64_arg("5s"), Ok(5));
    }

    #[test]
    fn negative_values_of_own_options_are_called_negative() {
        assert_eq!(
            whole_u64("-1"),
            Err("is negative; expected a whole number".into())
        );
        assert_eq!(whole_u64(" 50"), Ok(50));
        assert!(whole_u64("5x").is_err());
        assert!(own_us_arg("-5").unwrap_err().starts_with("is negative"));
        assert!(negative("-inf") && negative("-1d") && !negative("--json") && !negative("-a"));
    }

    #[test]
    fn reads_like_strtol() {
        assert_eq!(u64_arg("3500"), Ok(3500));
        assert_eq!(u64_arg(" 3500"), Ok(3500));
        assert_eq!(u64_arg("\t\n 12"), Ok(12));
        assert_eq!(u64_arg("100us"), Ok(100));
        assert_eq!(u64_arg("+7"), Ok(7));
        assert_eq!(i64_arg("-5"), Ok(-5));
        assert_eq!(i64_arg("007"), Ok(7));
        assert_eq!(u64_arg("1 000"), Ok(1));
    }

    #[test]
    fn refuses_what_atoi_would_read_as_0_or_wrap() {
        assert_eq!(u64_arg("abc"), Err("expected a number".into()));
        assert_eq!(u64_arg(""), Err("expected a number".into()));
        assert_eq!(u64_arg(" - 5"), Err("expected a number".into()));
        assert_eq!(
            u64_arg("-1"),
            Err(format!("-1 is out of range (0..{})", u64::MAX))
        );
        assert!(i32_arg("4294967297").unwrap_err().contains("out of range"));
        assert_eq!(
            u64_arg("99999999999999999999999999999999999999999"),
            Err("number too large".into())
        );
    }

    proptest! {
        /// Any u64 written with leading white space, a `+`, leading zeros and trailing
        /// junk that does not start with a digit reads back as itself.
        #[test]
        fn round_trips_with_c_decorations(
            n in any::<u64>(),
            ws in "[ \t]{0,3}",
            plus in any::<bool>(),
            zeros in 0usize..3,
            junk in "([a-zA-Z%][a-zA-Z0-9 ]{0,4})?",
        ) {
            let s = format!("{ws}{}{}{n}{junk}", if plus { "+" } else { "" }, "0".repeat(zeros));
            prop_assert_eq!(u64_arg(&s), Ok(n));
        }
    }

    #[test]
    fn own_thresholds_are_whole_microseconds_and_nothing_else() {
        assert_eq!(own_us_arg("100"), Ok(100));
        assert_eq!(own_us_arg(" 100us"), Ok(100));
        assert_eq!(own_us_arg("100µs"), Ok(100));
        for bad in [
            "1s", "100ms", "100ns", "2e3", "0.5", "0x10", "-5", "", "us", "abc", "1 00",
        ] {
            let e = own_us_arg(bad).unwrap_err();
            assert!(e.contains("whole number of µs"), "{bad}: {e}");
        }
        assert!(own_us_arg("99999999999999999999")
            .unwrap_err()
            .contains("out of range"));
    }
}
