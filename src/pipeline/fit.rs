//! What a stage prompt keeps when the model's window cannot hold it all.
//!
//! Each file in scope steps down, least important first, from its full text to the hunks the
//! run changed in it (with their enclosing symbols; a file the run has not changed has none),
//! then to its line in the repository map with its outline, then to its bare path, and last
//! out of the map. The steps go in a fixed order over all files: every full text goes before
//! anything else; then the previous stage's diff becomes its list of files; then the map of
//! the files that matter less (neither changed by the run nor named by the TaskSpec) narrows
//! to bare paths; only then do the hunks of the files that matter go to their outlines, and
//! last every outline to a path, every path out. What was left out is said in the prompt and
//! kept in the run record ([`LeftOut`]).
//!
//! Importance: files the run changed so far come first, then files the TaskSpec names, then
//! the smaller before the larger.

use serde::{Deserialize, Serialize};

/// How much of a file a prompt shows, richest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Its whole text.
    Full,
    /// The hunks the run changed in it, each with its enclosing symbol.
    Hunks,
    /// Its repository-map line with its outline.
    Outline,
    /// Its path alone.
    Path,
    /// Nothing.
    Dropped,
}

/// One file in scope as the prompt could show it.
#[derive(Debug, Clone)]
pub struct Item {
    /// Its path.
    pub path: String,
    /// Its repository-map line (path and outline, or why it has none), newline included.
    pub map_line: String,
    /// Its full-text block, when it has text to show.
    pub full: Option<String>,
    /// Its hunks block, when the run changed it.
    pub hunks: Option<String>,
    /// Whether the run changed it or the TaskSpec names it: its hunks outlast the outlines
    /// of the files that do not matter as much.
    pub important: bool,
}

impl Item {
    /// The richest level the file has.
    fn top(&self) -> Level {
        if self.full.is_some() {
            Level::Full
        } else {
            Level::Outline
        }
    }

    /// Bytes the file takes in the prompt at `level`, the line that says it was shortened
    /// included.
    fn cost(&self, level: Level) -> usize {
        let noted = self.path.len() + 2;
        match level {
            Level::Full => self.map_line.len() + self.full.as_ref().map_or(0, String::len),
            Level::Hunks => {
                self.map_line.len() + self.hunks.as_ref().map_or(0, String::len) + noted
            }
            Level::Outline if self.top() == Level::Outline => self.map_line.len(),
            Level::Outline => self.map_line.len() + noted,
            Level::Path => self.path.len() + 1,
            Level::Dropped => 0,
        }
    }
}

/// One step down, in the fixed order.
#[derive(Debug, Clone, Copy)]
enum Step {
    /// Every file at the first level, least important first, to the second; with `true`,
    /// only the files that are not [`Item::important`].
    Down(Level, Level, bool),
    /// The previous stage's diff to its list of files.
    DiffToFiles,
}

const STEPS: [Step; 6] = [
    Step::Down(Level::Full, Level::Hunks, false),
    Step::DiffToFiles,
    Step::Down(Level::Outline, Level::Path, true),
    Step::Down(Level::Hunks, Level::Outline, false),
    Step::Down(Level::Outline, Level::Path, false),
    Step::Down(Level::Path, Level::Dropped, false),
];

/// Bytes kept for the headings of the "left out" section.
const NOTE_RESERVE: usize = 400;

/// The levels chosen for a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Per item, in the order given.
    pub levels: Vec<Level>,
    /// Whether the previous stage's diff is shown as its list of files only.
    pub diff_as_files: bool,
}

/// Chooses what to show of `items` (most important first) so that the prompt takes at most
/// `limit` bytes, given `fixed` bytes that cannot shrink and a previous diff of
/// `diff.0` bytes whose file list takes `diff.1`. Full texts together take at most
/// `text_budget` bytes, whatever the window allows. When even the barest plan is over the
/// limit, it is returned anyway: the request is then refused before it is sent, with its
/// figures.
pub fn plan(
    items: &[Item],
    fixed: usize,
    diff: (usize, usize),
    limit: usize,
    text_budget: usize,
) -> Plan {
    // Full texts within the caller's budget, most important first; a file over it shows
    // its hunks when they fit, else its outline.
    let mut text_left = text_budget;
    let mut levels: Vec<Level> = items
        .iter()
        .map(|it| {
            let Some(full) = &it.full else {
                return Level::Outline;
            };
            if full.len() <= text_left {
                text_left -= full.len();
                return Level::Full;
            }
            match &it.hunks {
                Some(h) if h.len() <= text_left => {
                    text_left -= h.len();
                    Level::Hunks
                }
                _ => Level::Outline,
            }
        })
        .collect();
    let files: usize = levels.iter().zip(items).map(|(l, it)| it.cost(*l)).sum();
    let shortened = levels.iter().zip(items).any(|(l, it)| *l > it.top());
    let mut size = fixed + files + diff.0 + if shortened { NOTE_RESERVE } else { 0 };
    let mut noted = shortened;
    let mut diff_as_files = false;
    for step in STEPS {
        if size <= limit {
            break;
        }
        if !noted {
            size += NOTE_RESERVE;
            noted = true;
        }
        let (from, to, lesser_only) = match step {
            Step::Down(from, to, lesser_only) => (from, to, lesser_only),
            Step::DiffToFiles => {
                if diff.1 < diff.0 {
                    diff_as_files = true;
                    size = size - diff.0 + diff.1;
                }
                continue;
            }
        };
        for (idx, it) in items.iter().enumerate().rev() {
            if size <= limit {
                break;
            }
            if levels[idx] != from || (lesser_only && it.important) {
                continue;
            }
            // A file without hunks (or with hunks no smaller than its text) goes straight
            // to its outline.
            let next = match (to, &it.hunks, &it.full) {
                (Level::Hunks, Some(h), Some(f)) if h.len() < f.len() => Level::Hunks,
                (Level::Hunks, _, _) => Level::Outline,
                (other, _, _) => other,
            };
            size = size - it.cost(levels[idx]) + it.cost(next);
            levels[idx] = next;
        }
    }
    Plan {
        levels,
        diff_as_files,
    }
}

/// What a stage prompt left out for lack of room, as the prompt says it and the run record
/// keeps it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeftOut {
    /// Files shown as the hunks the run changed in them, not in full.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub as_hunks: Vec<String>,
    /// Files shown by their outline in the repository map only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub as_outline: Vec<String>,
    /// Files listed by their path only.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub path_only: usize,
    /// Files in scope not listed at all.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unlisted: usize,
    /// Whether the previous stage's change was shown as its list of files only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub previous_diff: bool,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl LeftOut {
    /// What `plan` left out of `items`.
    pub fn of(items: &[Item], plan: &Plan) -> LeftOut {
        let mut out = LeftOut {
            previous_diff: plan.diff_as_files,
            ..LeftOut::default()
        };
        for (it, level) in items.iter().zip(&plan.levels) {
            match level {
                Level::Full => {}
                Level::Hunks => out.as_hunks.push(it.path.clone()),
                Level::Outline if it.top() == Level::Full => out.as_outline.push(it.path.clone()),
                Level::Outline => {}
                Level::Path => out.path_only += 1,
                Level::Dropped => out.unlisted += 1,
            }
        }
        out.as_hunks.sort();
        out.as_outline.sort();
        out
    }

    /// Whether everything was shown.
    pub fn is_empty(&self) -> bool {
        self == &LeftOut::default()
    }

    /// The parts, one phrase each (`2 files shown as their changed hunks: a.py, b.py`).
    fn parts(&self) -> Vec<String> {
        let mut parts = Vec::new();
        let files = |n: usize| {
            if n == 1 {
                "1 file".to_string()
            } else {
                format!("{n} files")
            }
        };
        if !self.as_hunks.is_empty() {
            parts.push(format!(
                "{} shown as the hunks this run changed, not in full: {}",
                files(self.as_hunks.len()),
                self.as_hunks.join(", ")
            ));
        }
        if !self.as_outline.is_empty() {
            parts.push(format!(
                "{} shown by their outline only: {}",
                files(self.as_outline.len()),
                self.as_outline.join(", ")
            ));
        }
        if self.path_only > 0 {
            parts.push(format!("{} listed by path only", files(self.path_only)));
        }
        if self.unlisted > 0 {
            parts.push(format!("{} in scope not listed", files(self.unlisted)));
        }
        if self.previous_diff {
            parts.push("the previous stage's change shown as its list of files".to_string());
        }
        parts
    }

    /// The prompt's section, empty when nothing was left out.
    pub fn section(&self) -> String {
        if self.is_empty() {
            return String::new();
        }
        let mut s = String::from(
            "\n## Left out for lack of room\nYour context window cannot hold everything; not shown:\n",
        );
        for p in self.parts() {
            s.push_str(&format!("- {p}\n"));
        }
        s.push_str(
            "Do not edit what you were not shown in full: SEARCH blocks must copy lines exactly.\n",
        );
        s
    }

    /// One line for `git triad log`.
    pub fn describe(&self) -> String {
        format!("left out for lack of room: {}", self.parts().join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(path: &str, text: usize, hunks: Option<usize>) -> Item {
        Item {
            path: path.into(),
            map_line: format!("{path}: def f (1-2)\n"),
            full: Some("x".repeat(text)),
            hunks: hunks.map(|n| "h".repeat(n)),
            important: path != "other.py",
        }
    }

    fn size(items: &[Item], plan: &Plan, fixed: usize) -> usize {
        let files: usize = items
            .iter()
            .zip(&plan.levels)
            .map(|(it, l)| it.cost(*l))
            .sum();
        fixed + files + NOTE_RESERVE
    }

    #[test]
    fn everything_fits_and_nothing_is_left_out() {
        let items = vec![item("a.py", 100, Some(10)), item("b.py", 100, None)];
        let plan = plan(&items, 50, (30, 10), usize::MAX, usize::MAX);
        assert_eq!(plan.levels, [Level::Full, Level::Full]);
        assert!(LeftOut::of(&items, &plan).is_empty());
        assert_eq!(LeftOut::of(&items, &plan).section(), "");
    }

    #[test]
    fn full_texts_go_first_then_the_diff_then_lesser_outlines_then_hunks() {
        let items = vec![
            item("changed.py", 5_000, Some(300)),
            item("named.py", 3_000, None),
            item("other.py", 4_000, None),
        ];
        // Room for the changed file in full only.
        let p = plan(&items, 1_000, (800, 40), 7_500, usize::MAX);
        assert_eq!(p.levels, [Level::Full, Level::Outline, Level::Outline]);
        assert!(!p.diff_as_files);
        // Less room: the changed file goes to its hunks.
        let p = plan(&items, 1_000, (800, 40), 3_000, usize::MAX);
        assert_eq!(p.levels, [Level::Hunks, Level::Outline, Level::Outline]);
        assert!(!p.diff_as_files);
        assert!(size(&items, &p, 1_800) <= 3_000);
        // Less still: the previous diff goes to its file list, then the outline of the file
        // that matters less, and only then the hunks.
        let p = plan(&items, 1_000, (800, 40), 2_000, usize::MAX);
        assert_eq!(p.levels, [Level::Hunks, Level::Outline, Level::Outline]);
        assert!(p.diff_as_files);
        let p = plan(&items, 1_000, (800, 40), 1_820, usize::MAX);
        assert_eq!(p.levels, [Level::Hunks, Level::Outline, Level::Path]);
        let p = plan(&items, 1_000, (800, 40), 1_600, usize::MAX);
        assert_eq!(p.levels, [Level::Outline, Level::Outline, Level::Path]);
        let left = LeftOut::of(&items, &p);
        assert_eq!(left.as_outline, ["changed.py", "named.py"]);
        assert_eq!(left.path_only, 1);
        assert!(left.section().contains("the previous stage's change"));
        // Nearly nothing: bare paths, then nothing, least important first.
        let p = plan(&items, 1_000, (800, 40), 1_500, usize::MAX);
        assert_eq!(p.levels, [Level::Outline, Level::Path, Level::Path]);
        let p = plan(&items, 1_000, (800, 40), 1_000, usize::MAX);
        assert_eq!(p.levels, [Level::Dropped; 3]);
        let left = LeftOut::of(&items, &p);
        assert_eq!(left.unlisted, 3);
        assert!(left.describe().contains("3 files in scope not listed"));
    }

    #[test]
    fn the_callers_text_budget_caps_full_texts_whatever_the_window() {
        let items = vec![item("a.py", 600, Some(50)), item("b.py", 600, None)];
        let p = plan(&items, 0, (0, 0), usize::MAX, 700);
        assert_eq!(p.levels, [Level::Full, Level::Outline]);
        let p = plan(&items, 0, (0, 0), usize::MAX, 100);
        assert_eq!(p.levels, [Level::Hunks, Level::Outline]);
    }
}
