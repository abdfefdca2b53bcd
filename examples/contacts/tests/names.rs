use contacts::{display_name, initials, sort_key};

#[test]
fn initials_of_plain_names() {
    assert_eq!(initials("ada lovelace"), "AL");
    assert_eq!(initials("  Grace   Brewster Hopper "), "GBH");
    assert_eq!(initials(""), "");
}

#[test]
fn initials_of_accented_names() {
    assert_eq!(initials("Émile Zola"), "ÉZ");
    assert_eq!(initials("björk"), "B");
}

#[test]
fn sorting() {
    assert_eq!(sort_key("Ada King Lovelace"), "lovelace ada king");
    assert_eq!(sort_key("Plato"), "plato");
}

#[test]
fn display() {
    assert_eq!(display_name("  paul   McCartney"), "Paul McCartney");
    assert_eq!(display_name("élise"), "Élise");
}
