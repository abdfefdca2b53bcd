//! Spreadsheet cell references: column letters ("A", "Z", "AA", ...) and cell names ("B7").

/// The letters of column `number`, counting columns from 1: 1 is "A", 26 is "Z", 27 is "AA",
/// 28 is "AB", 702 is "ZZ" and 703 is "AAA". Column 0 does not exist and has no letters.
pub fn column_name(number: u32) -> String {
    let mut letters = Vec::new();
    let mut rest = number;
    while rest > 0 {
        letters.push(b'A' + ((rest - 1) % 26) as u8);
        rest /= 26;
    }
    letters.reverse();
    String::from_utf8(letters).expect("ASCII capital letters")
}

/// The number of the column named `letters`, upper or lower case ("A" is 1, "ab" is 28), or
/// `None` when they are not all ASCII letters, are empty, or name a column past `u32::MAX`.
pub fn column_number(letters: &str) -> Option<u32> {
    if letters.is_empty() || !letters.bytes().all(|b| b.is_ascii_alphabetic()) {
        return None;
    }
    letters.bytes().try_fold(0u32, |number, b| {
        let digit = u32::from(b.to_ascii_uppercase() - b'A') + 1;
        number.checked_mul(26)?.checked_add(digit)
    })
}

/// The name of the cell at `row` and `column` (both counted from 1): `cell_name(7, 2)` is "B7".
pub fn cell_name(row: u32, column: u32) -> String {
    format!("{}{row}", column_name(column))
}

/// The (row, column) of a cell name such as "B7" or "aa10", or `None` when `name` is not
/// letters followed by a row number from 1.
pub fn parse_cell(name: &str) -> Option<(u32, u32)> {
    let split = name.find(|c: char| c.is_ascii_digit())?;
    let (letters, digits) = name.split_at(split);
    let row: u32 = digits.parse().ok().filter(|&r| r > 0)?;
    Some((row, column_number(letters)?))
}
