//! Dates of the Gregorian calendar: leap years, the length of a month, the day of the year.

/// Whether `year` is a leap year: one divisible by 4, except the centuries, except every
/// fourth century (2000 and 2024 are leap years, 1900 and 2023 are not).
pub fn is_leap(year: i32) -> bool {
    year % 4 == 0 && (year % 100 != 0 && year % 400 == 0)
}

/// The number of days in `month` (1 for January to 12 for December) of `year`, or `None` for
/// a month that does not exist.
pub fn days_in_month(year: i32, month: u32) -> Option<u32> {
    Some(match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap(year) => 29,
        2 => 28,
        _ => return None,
    })
}

/// The day of the year of a date, from 1 on 1 January to 365 (366 in a leap year) on
/// 31 December, or `None` for a date that does not exist (30 February, month 13, day 0).
pub fn day_of_year(year: i32, month: u32, day: u32) -> Option<u32> {
    let length = days_in_month(year, month)?;
    if day == 0 || day > length {
        return None;
    }
    let before: u32 = (1..month).filter_map(|m| days_in_month(year, m)).sum();
    Some(before + day)
}

/// The number of days in `year`: 366 in a leap year, else 365.
pub fn days_in_year(year: i32) -> u32 {
    if is_leap(year) {
        366
    } else {
        365
    }
}
