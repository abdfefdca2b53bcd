"""fix-column-names: column_name is the inverse of column_number on every column up to
three letters and on columns the tests never gave (Excel's last, XFD; past ZZZ), and the
tests are the base's."""
import sys

from _base import assertions_kept, cargo_hidden_test

tree = sys.argv[1]
assertions_kept(tree, "sheets", "tests/cells.rs")
sys.exit(cargo_hidden_test(tree, "hidden_column_names", """
use sheets::{cell_name, column_name, column_number, parse_cell};

#[test]
fn hidden() {
    for (number, want) in [
        (53, "BA"), (78, "BZ"), (676, "YZ"), (702, "ZZ"), (703, "AAA"), (728, "AAZ"),
        (16384, "XFD"), (18278, "ZZZ"), (18279, "AAAA"), (u32::MAX, "MWLQKWU"),
    ] {
        assert_eq!(column_name(number), want, "column_name({number})");
    }
    for number in 1..=20_000 {
        assert_eq!(column_number(&column_name(number)), Some(number), "column {number}");
    }
    assert_eq!(column_name(0), "");
    assert_eq!(cell_name(1, 26), "Z1");
    assert_eq!(parse_cell(&cell_name(99, 104)), Some((99, 104)));
}
"""))
