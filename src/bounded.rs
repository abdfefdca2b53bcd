//! Bounds on text from outside (a model's answer, a server's error body, a model-chosen
//! path) before it is echoed into an error, a repair prompt, a run record or a terminal: a
//! hostile answer must not become megabytes in every place that quotes it.

/// Most bytes of one echoed item: an error line, a server message, a path.
pub const ITEM_BYTES: usize = 300;

/// Most items of a list of errors that are shown; the rest are only counted.
pub const LIST_ITEMS: usize = 10;

/// How far the rest of a list is counted before "more" stops being exact.
pub const COUNT_LIMIT: usize = 10_000;

/// `text` cut to at most `max` bytes (on a character boundary), saying how much was left
/// out when it was cut.
pub fn clip(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} more bytes)", &text[..end], text.len() - end)
}

/// `a`, `a and b`, `a, b and c`: items as a sentence lists them.
pub fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// Most bytes of a path shown in a message; a longer one loses its middle ([`path`]).
pub const PATH_BYTES: usize = 120;

/// `text` in at most about `max` bytes, its middle left out when it is longer: the start
/// and the end of a path both say something (where it is, what it is), and a message keeps
/// room for its reason.
pub fn elide(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let half = max / 2;
    let mut head = half;
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len() - half;
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    format!(
        "{}…({} bytes)…{}",
        &text[..head],
        tail - head,
        &text[tail..]
    )
}

/// A path as a message shows it: [`elide`]d to [`PATH_BYTES`].
pub fn path(p: &str) -> String {
    elide(p, PATH_BYTES)
}

/// At most [`LIST_ITEMS`] of `items`, each clipped to [`ITEM_BYTES`], then one line saying
/// how many more there were (counted up to [`COUNT_LIMIT`]). Consumes lazily: a list of a
/// million errors is never built.
pub fn list(items: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut items = items.into_iter();
    let mut out: Vec<String> = items
        .by_ref()
        .take(LIST_ITEMS)
        .map(|i| clip(&i, ITEM_BYTES))
        .collect();
    let rest = items.take(COUNT_LIMIT).count();
    match rest {
        0 => {}
        n if n == COUNT_LIMIT => out.push(format!("… and over {n} more")),
        n => out.push(format!("… and {n} more")),
    }
    out
}

/// `text` as one line of a nested listing at `depth`: indented by two spaces a level, or a
/// markdown bullet nested a level less (the top level of a markdown list has no indent).
/// Newlines in `text` become spaces, so one entry never breaks the listing.
pub fn indented(md: bool, depth: usize, text: &str) -> String {
    let text = text.replace('\n', " ");
    if md {
        format!("{}- {text}\n", "  ".repeat(depth.saturating_sub(1)))
    } else {
        format!("{}{text}\n", "  ".repeat(depth))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clips_on_character_boundaries() {
        assert_eq!(clip("short", 10), "short");
        assert_eq!(clip("ééé", 3), "é… (4 more bytes)");
        assert!(clip(&"x".repeat(1_000_000), 300).len() < 330);
    }

    #[test]
    fn long_paths_lose_their_middle_and_keep_both_ends() {
        assert_eq!(path("src/a.py"), "src/a.py");
        let long = format!("src/{}/deep/file.py", "d".repeat(5_000));
        let shown = path(&long);
        assert!(shown.len() < PATH_BYTES + 30, "{}", shown.len());
        assert!(
            shown.starts_with("src/ddd") && shown.ends_with("dd/deep/file.py"),
            "{shown}"
        );
        assert!(shown.contains("…(4897 bytes)…"), "{shown}");
        assert_eq!(elide("ééééé", 4), "é…(6 bytes)…é");
    }

    #[test]
    fn lists_show_a_few_and_count_the_rest() {
        let few = list((0..3).map(|i| i.to_string()));
        assert_eq!(few, ["0", "1", "2"]);
        let many = list((0..50_000).map(|i| format!("error {i}: {}", "y".repeat(10_000))));
        assert_eq!(many.len(), LIST_ITEMS + 1);
        assert_eq!(many.last().unwrap(), "… and over 10000 more");
        assert!(many.iter().map(String::len).sum::<usize>() < 4 * 1024);
        let some = list((0..15).map(|i| i.to_string()));
        assert_eq!(some.last().unwrap(), "… and 5 more");
    }
}
