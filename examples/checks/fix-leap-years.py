"""fix-leap-years: is_leap follows the Gregorian rule on every year from 1 to 4000 (and on
years before 1), month lengths and days of the year follow it, and the tests are the
base's."""
import sys

from _base import assertions_kept, cargo_hidden_test

tree = sys.argv[1]
assertions_kept(tree, "calendar", "tests/dates.rs")
sys.exit(cargo_hidden_test(tree, "hidden_leap_years", """
use calendar::{day_of_year, days_in_month, days_in_year, is_leap};

#[test]
fn hidden() {
    for year in -400..=4000 {
        let want = if year % 400 == 0 {
            true
        } else if year % 100 == 0 {
            false
        } else {
            year % 4 == 0
        };
        assert_eq!(is_leap(year), want, "is_leap({year})");
        assert_eq!(days_in_month(year, 2), Some(if want { 29 } else { 28 }));
        assert_eq!(days_in_year(year), if want { 366 } else { 365 });
        assert_eq!(day_of_year(year, 12, 31), Some(days_in_year(year)));
    }
    assert_eq!(day_of_year(2024, 2, 29), Some(60));
    assert_eq!(day_of_year(1600, 2, 29), Some(60));
    assert_eq!(day_of_year(2100, 2, 29), None);
    assert_eq!(days_in_month(2024, 0), None);
}
"""))
