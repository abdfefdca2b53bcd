//! The project's clock: the current time, its one text form, calendar days, and the
//! time-ordered ids of runs, chamber sessions and manager sessions.
//!
//! Every record git triad writes (verdict lines, run records, task history, the ledger) takes
//! its time from here, so they all sort and compare the same way. A leaf: it imports nothing
//! of the crate.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rand::Rng;

/// Seconds in a UTC day (no leap seconds, as unix time counts them).
pub const DAY_SECS: u64 = 86_400;

/// The current unix time in seconds (0 on a clock before 1970).
pub fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The current time as RFC 3339 UTC with milliseconds, e.g. `2026-11-22T02:54:30.123Z`.
pub fn now_ts() -> String {
    format_ts(SystemTime::now())
}

/// Formats a time as RFC 3339 UTC with milliseconds (fixed width, so strings sort by time).
pub fn format_ts(t: SystemTime) -> String {
    // Times before 1970 do not occur in records; clamp rather than fail.
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs();
    let millis = d.subsec_millis();
    let rem = secs % DAY_SECS;
    let (y, m, day) = civil_from_days((secs / DAY_SECS) as i64);
    format!(
        "{y:04}-{m:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

/// Formats a unix time (seconds) as [`format_ts`] does.
pub fn format_unix(unix: u64) -> String {
    format_ts(UNIX_EPOCH + Duration::from_secs(unix))
}

/// The date (UTC, `YYYY-MM-DD`) of a unix time.
pub fn date_of(unix: u64) -> String {
    format_unix(unix)[..10].to_string()
}

/// Unix time of 00:00 UTC on the day containing `t`.
pub fn day_start_unix(t: u64) -> u64 {
    t - t % DAY_SECS
}

/// Unix time of 00:00 UTC on the first day of the month containing `t`.
pub fn month_start_unix(t: u64) -> u64 {
    let days = (t / DAY_SECS) as i64;
    let (_, _, day_of_month) = civil_from_days(days);
    (days - (i64::from(day_of_month) - 1)) as u64 * DAY_SECS
}

/// A fresh run id: `YYYYMMDD-HHMMSS-xxxx` (UTC, plus randomness against collisions), so ids
/// sort by the time they were made.
pub fn new_run_id() -> String {
    let ts = now_ts(); // 2026-11-22T02:54:30.123Z
    let digits: String = ts.chars().filter(|c| c.is_ascii_digit()).collect();
    let (date, time) = (
        &digits[..8.min(digits.len())],
        &digits[8.min(digits.len())..14.min(digits.len())],
    );
    let suffix: u16 = rand::rng().random();
    format!("{date}-{time}-{suffix:04x}")
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian calendar
/// (Howard Hinnant's `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_rfc3339_millis_utc() {
        assert_eq!(format_ts(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let t = UNIX_EPOCH + Duration::from_millis(1_795_316_070_123);
        assert_eq!(format_ts(t), "2026-11-22T02:54:30.123Z");
        // A leap day.
        let t = UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(format_ts(t), "2000-02-29T00:00:00.000Z");
        assert_eq!(now_ts().len(), 24);
        assert_eq!(date_of(951_782_400 + 3_600), "2000-02-29");
    }

    #[test]
    fn day_and_month_start_at_midnight() {
        // 2026-11-22T10:00:00Z -> 2026-11-01T00:00:00Z
        assert_eq!(month_start_unix(1_795_305_600 + 36_000), 1_793_491_200);
        assert_eq!(day_start_unix(1_795_305_600 + 36_000), 1_795_305_600);
        // The 1st of a month is its own month start.
        assert_eq!(month_start_unix(1_793_491_200), 1_793_491_200);
    }

    #[test]
    fn run_ids_sort_by_time_and_differ() {
        let a = new_run_id();
        assert_eq!(a.len(), "20261122-025430-abcd".len(), "{a}");
        assert_eq!(&a[8..9], "-");
        let ids: std::collections::HashSet<String> = (0..50).map(|_| new_run_id()).collect();
        assert!(ids.len() > 1);
    }
}
