//! Calendar arithmetic on seconds since the epoch, independent of the C library's
//! `time_t`: on armv7 glibc `time_t` is 32-bit, so dates after 2038-01-19 cannot go
//! through `localtime_r`/`gmtime_r` there (Howard Hinnant's `days_from_civil`
//! algorithms, proleptic Gregorian calendar, UTC).

/// Days since 1970-01-01 of the civil date `y-m-d`.
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date `(year, month 1..12, day 1..31)` of `z` days since 1970-01-01.
pub fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// UTC broken down: `(year, month, day, hour, minute, second, weekday 0 = Sunday)`.
pub fn utc_parts(secs: i64) -> (i64, i64, i64, i64, i64, i64, usize) {
    use crate::duration::{SECS_PER_DAY, SECS_PER_HOUR, SECS_PER_MIN};
    let (day, hour, min) = (
        SECS_PER_DAY as i64,
        SECS_PER_HOUR as i64,
        SECS_PER_MIN as i64,
    );
    let days = secs.div_euclid(day);
    let s = secs.rem_euclid(day);
    let (y, m, d) = civil_from_days(days);
    let wday = (days + 4).rem_euclid(7) as usize; // 1970-01-01 was a Thursday
    (y, m, d, s / hour, s / min % min, s % min, wday)
}

/// Month abbreviations as `%b` prints them in the C locale.
pub const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];
/// Weekday abbreviations as `%a` prints them in the C locale, Sunday first.
pub const WEEKDAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];

/// `%a, %d %b %Y %T +0000` for `secs`, computed without the C library.
pub fn rfc2822_utc(secs: i64) -> String {
    let (y, m, d, h, mi, s, wd) = utc_parts(secs);
    format!(
        "{}, {d:02} {} {y:04} {h:02}:{mi:02}:{s:02} +0000",
        WEEKDAYS[wd],
        MONTHS[(m - 1) as usize]
    )
}

/// `YYYY-MM-DDTHH:MM:SSZ` (ISO 8601, UTC) for `secs` since the epoch: the one date
/// format of every text rtbench prints (reports, `tune status`, the diagnostics
/// summary, the monitor's lines, plot titles); [`iso_ms`] is the same with the
/// milliseconds of one sample. The rt-tests JSON keeps its RFC 2822 dates
/// ([`rfc2822_utc`]) and file names keep [`utc_stamp`].
pub fn iso_s(secs: i64) -> String {
    let (y, m, d, h, mi, s, _) = utc_parts(secs);
    format!("{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
}

/// `%Y%m%dT%H%M%SZ` for `secs`, computed without the C library: the stamp in file
/// names (results files, bundles, a damaged state file set aside), which sorts by time
/// and has no `:`. Text for people uses [`iso_s`].
pub fn utc_stamp(secs: i64) -> String {
    let (y, m, d, h, mi, s, _) = utc_parts(secs);
    format!("{y:04}{m:02}{d:02}T{h:02}{mi:02}{s:02}Z")
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ` (ISO 8601, UTC, milliseconds) for `ns` since the epoch:
/// the time of one sample.
pub fn iso_ms(ns: i64) -> String {
    let secs = ns.div_euclid(1_000_000_000);
    let ms = ns.rem_euclid(1_000_000_000) / 1_000_000;
    let (y, m, d, h, mi, s, _) = utc_parts(secs);
    format!("{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{ms:03}Z")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_ms_of_a_sample() {
        assert_eq!(iso_ms(951_782_400_123_456_789), "2000-02-29T00:00:00.123Z");
        assert_eq!(iso_ms(-1), "1969-12-31T23:59:59.999Z");
    }

    #[test]
    fn known_dates() {
        assert_eq!(rfc2822_utc(0), "Thu, 01 Jan 1970 00:00:00 +0000");
        assert_eq!(utc_stamp(951_782_400), "20000229T000000Z");
        assert_eq!(iso_s(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(iso_s(4_102_444_799), "2099-12-31T23:59:59Z");
        // Past the 32-bit time_t limit (2038-01-19T03:14:07Z).
        assert_eq!(
            rfc2822_utc(4_102_444_799),
            "Thu, 31 Dec 2099 23:59:59 +0000"
        );
        assert_eq!(days_from_civil(2026, 11, 29), 20_786);
        assert_eq!(civil_from_days(20_786), (2026, 11, 29));
    }
}
