use sheets::{cell_name, column_name, column_number, parse_cell};

#[test]
fn first_columns() {
    assert_eq!(column_name(1), "A");
    assert_eq!(column_name(2), "B");
    assert_eq!(column_name(26), "Z");
}

#[test]
fn two_letter_columns() {
    assert_eq!(column_name(27), "AA");
    assert_eq!(column_name(28), "AB");
    assert_eq!(column_name(52), "AZ");
}

#[test]
fn numbers_of_columns() {
    assert_eq!(column_number("A"), Some(1));
    assert_eq!(column_number("ab"), Some(28));
    assert_eq!(column_number("A1"), None);
    assert_eq!(column_number(""), None);
}

#[test]
fn cells() {
    assert_eq!(cell_name(7, 2), "B7");
    assert_eq!(parse_cell("AA10"), Some((10, 27)));
    assert_eq!(parse_cell("B0"), None);
    assert_eq!(parse_cell("7B"), None);
}
