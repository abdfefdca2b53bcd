"""fix-teens: 11, 12 and 13 take "th" in every hundred, the rest go by the last digit, and
the tests are the base's."""
import sys

from _base import assertions_kept, cargo_hidden_test

tree = sys.argv[1]
assertions_kept(tree, "ordinals", "tests/ordinals.rs")
sys.exit(cargo_hidden_test(tree, "hidden_teens", """
use ordinals::{ordinal, suffix};

#[test]
fn hidden() {
    for (n, want) in [
        (0, "0th"), (101, "101st"), (102, "102nd"), (103, "103rd"), (111, "111th"),
        (112, "112th"), (113, "113th"), (1011, "1011th"), (14, "14th"), (22, "22nd"),
        (123, "123rd"), (1000, "1000th"), (u64::MAX - 4, "18446744073709551611th"),
    ] {
        assert_eq!(ordinal(n), want);
    }
    assert_eq!(suffix(31), "st");
}
"""))
