"""add-max: max_value is right on cases the task never gave, under cargo test."""
import sys

from _base import cargo_hidden_test

sys.exit(cargo_hidden_test(sys.argv[1], "hidden_max", """
use ministats::max_value;

#[test]
fn hidden() {
    assert_eq!(max_value(&[1.0, 3.5, 2.0]), Some(3.5));
    assert_eq!(max_value(&[-2.0, -7.0]), Some(-2.0));
    assert_eq!(max_value(&[4.0]), Some(4.0));
    assert_eq!(max_value(&[]), None);
}
"""))
