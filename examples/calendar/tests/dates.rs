use calendar::{day_of_year, days_in_month, days_in_year, is_leap};

#[test]
fn leap_years() {
    assert!(is_leap(2024));
    assert!(is_leap(2000));
    assert!(!is_leap(1900));
    assert!(!is_leap(2023));
}

#[test]
fn month_lengths() {
    assert_eq!(days_in_month(2023, 1), Some(31));
    assert_eq!(days_in_month(2023, 4), Some(30));
    assert_eq!(days_in_month(2023, 2), Some(28));
    assert_eq!(days_in_month(2024, 2), Some(29));
    assert_eq!(days_in_month(2023, 13), None);
}

#[test]
fn days_of_the_year() {
    assert_eq!(day_of_year(2023, 1, 1), Some(1));
    assert_eq!(day_of_year(2023, 3, 1), Some(60));
    assert_eq!(day_of_year(2024, 3, 1), Some(61));
    assert_eq!(day_of_year(2023, 2, 29), None);
    assert_eq!(days_in_year(2024), 366);
}
