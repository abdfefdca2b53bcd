"""fix-fahrenheit: to_fahrenheit is right on values the tests never gave, to_celsius is
untouched, and the tests are the base's."""
import sys

from _base import assertions_kept, cargo_hidden_test

tree = sys.argv[1]
assertions_kept(tree, "thermo", "tests/convert.rs")
sys.exit(cargo_hidden_test(tree, "hidden_fahrenheit", """
use thermo::{to_celsius, to_fahrenheit};

#[test]
fn hidden() {
    assert_eq!(to_fahrenheit(-40.0), -40.0);
    assert!((to_fahrenheit(37.0) - 98.6).abs() < 1e-9);
    assert_eq!(to_fahrenheit(10.0), 50.0);
    assert_eq!(to_celsius(50.0), 10.0);
    for c in [-17.5, 0.25, 36.6, 1000.0] {
        assert!((to_celsius(to_fahrenheit(c)) - c).abs() < 1e-9);
    }
}
"""))
