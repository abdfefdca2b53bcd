//! Plain text tables for the terminal: the one column layout of `models`, `usage`, the cost
//! estimate and the fitness report. A leaf of [`crate::report`].

/// Rows as left-aligned columns separated by two spaces; the last column is not padded and
/// no line ends in spaces. Widths count characters.
pub fn render_table<const N: usize>(rows: &[[String; N]]) -> String {
    let mut widths = [0usize; N];
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    let mut s = String::new();
    for row in rows {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i + 1 == N {
                line.push_str(cell);
            } else {
                line.push_str(&format!("{cell:<w$}  ", w = widths[i]));
            }
        }
        s.push_str(line.trim_end());
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_align_by_characters_and_lines_have_no_trailing_spaces() {
        let rows = [
            ["model".to_string(), "é-cost".to_string(), "".to_string()],
            ["a".to_string(), "1".to_string(), "last".to_string()],
        ];
        assert_eq!(render_table(&rows), "model  é-cost\na      1       last\n");
    }
}
