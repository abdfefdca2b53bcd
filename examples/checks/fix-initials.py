"""fix-initials: initials takes the first letter of every word, whatever its script and
however many bytes it has, never panics, and leaves the other functions as they were; the
tests are the base's."""
import sys

from _base import assertions_kept, cargo_hidden_test

tree = sys.argv[1]
assertions_kept(tree, "contacts", "tests/names.rs")
sys.exit(cargo_hidden_test(tree, "hidden_initials", """
use contacts::{display_name, initials, sort_key};

#[test]
fn hidden() {
    for (name, want) in [
        ("Łukasz Żak", "ŁŻ"), ("ñandú", "Ñ"), ("李 小龍", "李小"), ("Ödön von Horváth", "ÖVH"),
        ("jean-paul sartre", "JS"), ("X Æ", "XÆ"), ("\\tzoë\\n", "Z"), ("   ", ""),
        ("a b c d", "ABCD"), ("o'brien", "O"),
    ] {
        assert_eq!(initials(name), want, "initials({name:?})");
    }
    assert_eq!(sort_key("Émile Zola"), "zola émile");
    assert_eq!(display_name("émile  zola"), "Émile Zola");
}
"""))
