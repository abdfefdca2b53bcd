"""fix-last-window: every window is summed on series the tests never gave, and the tests are
the base's."""
import sys

from _base import assertions_kept, cargo_hidden_test

tree = sys.argv[1]
assertions_kept(tree, "movingsum", "src/lib.rs")
sys.exit(cargo_hidden_test(tree, "hidden_windows", """
use movingsum::{moving_average, window_sums};

#[test]
fn hidden() {
    assert_eq!(window_sums(&[5], 1), vec![5]);
    assert_eq!(window_sums(&[1, 2, 3], 3), vec![6]);
    assert_eq!(window_sums(&[1, 2, 3, 4, 5], 1), vec![1, 2, 3, 4, 5]);
    assert_eq!(window_sums(&[1, -1, 4, 0], 3), vec![4, 3]);
    assert_eq!(window_sums(&[], 1), Vec::<i64>::new());
    assert_eq!(window_sums(&[1, 2], 3), Vec::<i64>::new());
    assert_eq!(window_sums(&[1, 2], 0), Vec::<i64>::new());
    assert_eq!(moving_average(&[1, 3, 5, 7], 2), vec![2.0, 4.0, 6.0]);
}
"""))
