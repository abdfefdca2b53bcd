//! What the model and the record are told about edit blocks that did not apply: the full
//! feedback for the retry, and one bounded line for `log`, stderr and `run.json`.

use super::failure::BlockFailure;

/// Feedback for the model about blocks that failed, in the order they appeared.
pub fn render_failures(failures: &[BlockFailure], applied_ok: usize) -> String {
    let mut s = String::from("## EDIT BLOCKS THAT DID NOT APPLY\n\n");
    s.push_str("None of your edits were applied: every block must apply before any is. Fix the blocks below and send the complete answer again.\n\n");
    // A flood of broken blocks gets a bounded answer: the first few, then a count.
    let shown = crate::bounded::LIST_ITEMS;
    for (i, f) in failures.iter().enumerate().take(shown) {
        s.push_str(&format!(
            "{}. {}: `{}` (block at answer line {})\n",
            i + 1,
            f.reason,
            f.path,
            f.answer_line
        ));
        if let Some(n) = &f.nearest {
            s.push_str("   The closest lines in the current file are:\n");
            for l in n.lines() {
                s.push_str(&format!("   {l}\n"));
            }
            s.push_str("   Copy SEARCH exactly from the file.\n");
        }
    }
    if failures.len() > shown {
        s.push_str(&format!(
            "… and {} more block(s) that did not apply; fix the ones above, then check the rest the same way.\n",
            failures.len() - shown
        ));
    }
    if applied_ok > 0 {
        s.push_str(&format!(
            "\n{applied_ok} other block(s) would have applied; send them again unchanged.\n"
        ));
    }
    s
}

/// Most refused blocks named in [`summarize_failures`].
const SUMMARY_ITEMS: usize = 3;

/// Most bytes of one refusal reason in [`summarize_failures`].
const SUMMARY_REASON_BYTES: usize = 200;

/// One line saying why blocks were refused, for the run record, `git triad log` and the
/// progress on stderr: the first few reasons, each bounded and before its path (whose middle
/// goes when it is long), then a count of the rest.
pub fn summarize_failures(failures: &[BlockFailure], applied_ok: usize) -> String {
    let reasons: Vec<String> = failures
        .iter()
        .take(SUMMARY_ITEMS)
        .map(|f| {
            let reason = f.reason.replace(['\n', '\r'], " ");
            format!(
                "{} (`{}`, line {})",
                crate::bounded::clip(&reason, SUMMARY_REASON_BYTES),
                // Already bounded, its middle left out (`edit::path::shown`).
                f.path.replace(['\n', '\r'], " "),
                f.answer_line
            )
        })
        .collect();
    let mut s = format!(
        "{} of {} edit block(s) refused, so none was applied: {}",
        failures.len(),
        failures.len() + applied_ok,
        reasons.join("; ")
    );
    if failures.len() > SUMMARY_ITEMS {
        s.push_str(&format!("; … and {} more", failures.len() - SUMMARY_ITEMS));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edit::EditBlock;

    fn block(path: &str, search: &str, replace: &str) -> EditBlock {
        EditBlock::at_line_one(path, search, replace)
    }

    #[test]
    fn a_flood_of_failures_is_rendered_briefly() {
        let long = format!("/{}", "p".repeat(20_000));
        let failures: Vec<BlockFailure> = (0..1_000)
            .map(|_| BlockFailure::of(&block(&long, "", "x\n"), "not found".into()))
            .collect();
        let text = render_failures(&failures, 0);
        assert!(text.len() < 16 * 1024, "{} bytes", text.len());
        assert!(text.contains("… and 990 more block(s)"), "{text}");
    }

    #[test]
    fn the_summary_of_refusals_is_one_bounded_line_with_the_reasons() {
        let long = format!("{}\nsecond line", "r".repeat(5_000));
        let mut failures: Vec<BlockFailure> = (0..7)
            .map(|i| BlockFailure::of(&block(&format!("f{i}.py"), "", ""), format!("reason {i}")))
            .collect();
        failures[1].reason = long;
        let s = summarize_failures(&failures, 2);
        assert!(s.starts_with("7 of 9 edit block(s) refused, so none was applied: reason 0 (`f0.py`, line 1); rrr"), "{s}");
        assert!(
            s.contains("reason 2 (`f2.py`, line 1); … and 4 more"),
            "{s}"
        );
        assert!(!s.contains('\n') && s.len() < 700, "{} bytes: {s}", s.len());
    }
}
