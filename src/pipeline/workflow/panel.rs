//! What every panel workflow (several models answering the same task, some of whom may
//! drop out) says of its panel at the end of a run.

use crate::workflow_name::Workflow;

/// The end-of-run words for a panel of `total` models of which `standing` took part:
/// `<standing> <plural>`, or, when some dropped out (`gone`: how they are called and who),
/// `DEGRADED: <standing> of <total> <plural> (<label>: a, b)`. A degraded panel is never
/// presented as the full one.
pub(super) fn panel_words(
    standing: usize,
    total: usize,
    plural: &str,
    gone: Option<(&str, Vec<&str>)>,
) -> String {
    match gone {
        Some((label, who)) => format!(
            "DEGRADED: {standing} of {total} {plural} ({label}: {})",
            who.join(", ")
        ),
        None => format!("{standing} {plural}"),
    }
}

/// A panel workflow's line in the end-of-run summary: its name, what came of it (`None`:
/// nothing was chosen, said as `nothing`) and its panel ([`panel_words`]).
pub(super) fn summary_line(
    workflow: Workflow,
    outcome: Option<String>,
    nothing: &str,
    panel: &str,
) -> String {
    let name = workflow.as_str();
    format!(
        "  {name:<10} {} among {panel}\n",
        outcome.as_deref().unwrap_or(nothing)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_degraded_panel_says_so_and_who_is_gone() {
        assert_eq!(panel_words(3, 3, "candidates", None), "3 candidates");
        assert_eq!(
            panel_words(1, 3, "debaters", Some(("dropped out", vec!["a", "b"]))),
            "DEGRADED: 1 of 3 debaters (dropped out: a, b)"
        );
        assert_eq!(
            summary_line(Workflow::Parallel, None, "no winner", "2 candidates"),
            "  parallel   no winner among 2 candidates\n"
        );
    }
}
