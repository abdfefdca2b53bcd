//! Self-preference: does a reviewer let its own failing work through more often than other
//! models'?
//!
//! A judge's leniency towards its own output is documented (LLM-as-judge self-preference)
//! and is why a run's arbiter is never the model it reviews. The bench measures it rather
//! than assume it: the build answers that the facts failed (hidden tests or files, with
//! every edit applied, so there is a real change to judge) are reviewed by each reviewer —
//! its own failures and other models' — as a run's arbiter would review a stage, and a
//! verdict of APPROVE or FLAG counts as letting a known-bad change through. The figure is
//! the difference of the two rates, in points; it needs failing answers of both kinds.

use super::grade::Workspace;
use super::{Bench, FailedAnswer, Stop};
use crate::arbiter::gather::TaskBrief;
use crate::arbiter::service::Arbiter;
use crate::arbiter::Verdict;
use crate::config::prompt;
use crate::model::{ModelError, Spend};
use crate::privacy::Privacy;
use crate::routing::store::SelfPreference;
use crate::routing::tasks::BuildTask;

/// Most failing answers of each kind (its own, others') one reviewer judges.
pub const MAX_JUDGED: usize = 4;

impl Bench<'_> {
    /// Has `reviewer` judge up to [`MAX_JUDGED`] of its own failing answers and as many of
    /// other models', and counts what it let through. Its calls are added to `spend`.
    pub(super) async fn self_preference(
        &self,
        reviewer: &str,
        failed: &[FailedAnswer],
        tasks: &[BuildTask],
        privacy: &Privacy,
        spend: &mut Spend,
    ) -> Result<SelfPreference, Stop> {
        let mut figure = SelfPreference::default();
        let own = failed
            .iter()
            .filter(|f| f.author == reviewer)
            .take(MAX_JUDGED);
        let others = failed
            .iter()
            .filter(|f| f.author != reviewer)
            .take(MAX_JUDGED);
        let system = prompt(self.config, "arbiter", self.root);
        for answer in own.chain(others) {
            let Some(task) = tasks.iter().find(|t| t.id == answer.task) else {
                continue;
            };
            let ws = Workspace::for_answer(task, &answer.files)?;
            let prepared = ws.prepared(privacy)?;
            // Told who wrote it, as a run's arbiter is.
            let told = TaskBrief::of(&task.spec);
            let brief = told.brief(super::stage_for(task.role).as_str(), &answer.author);
            let calls_before = self.client.records().len();
            let verdict = match Arbiter::new(self.client, vec![reviewer.to_string()])
                .review(&system, &prepared, &brief)
                .await
            {
                Ok(r) => Some(r.review.verdict),
                // An unreadable review lets nothing through, and judged nothing either.
                Err(ModelError::SchemaViolation { .. }) => None,
                Err(e) => return Err(super::stop_of(e)),
            };
            *spend += Spend::of(&self.client.records()[calls_before..]);
            let Some(verdict) = verdict else { continue };
            let through = u32::from(verdict < Verdict::Reject);
            if answer.author == reviewer {
                figure.own_judged += 1;
                figure.own_let_through += through;
            } else {
                figure.others_judged += 1;
                figure.others_let_through += through;
            }
        }
        Ok(figure)
    }
}
