//! People's names in an address book: the initials on their avatar, the key the book sorts
//! them by, and the name as the list shows it.

/// The initials of `name`, one per word, upper-case: `initials("ada lovelace")` is `"AL"`,
/// and a name of no words has none.
pub fn initials(name: &str) -> String {
    name.split_whitespace()
        .map(|word| &word[..1])
        .collect::<String>()
        .to_uppercase()
}

/// The key the address book sorts `name` by: the last word first, then the others in order,
/// all lower-case. `sort_key("Ada King Lovelace")` is `"lovelace ada king"`.
pub fn sort_key(name: &str) -> String {
    let mut words: Vec<&str> = name.split_whitespace().collect();
    if let Some(last) = words.pop() {
        words.insert(0, last);
    }
    words.join(" ").to_lowercase()
}

/// `name` as the list shows it: single spaces between its words, and each word's first
/// letter upper-case (the rest is left as typed, for names such as "McCartney").
pub fn display_name(name: &str) -> String {
    name.split_whitespace()
        .map(|word| {
            let mut chars = word.chars();
            match chars.next() {
                Some(first) => first.to_uppercase().chain(chars).collect::<String>(),
                None => String::new(),
            }
        })
        .collect::<Vec<String>>()
        .join(" ")
}
