//! The arbiter as one service: who may judge, the call, and the finished review.
//!
//! `git triad run` (every reviewed stage and the reconciliation) and `git triad review` ask
//! through here, so the cross-model rule, the structured call and the accounting of what the
//! judgement cost are written once.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use super::gather::Prepared;
use super::request::{build_request, Brief, ReviewInput};
use super::review::{finish, Checks};
use super::schema::Coverage;
use super::schema::{ArbiterAnswer, ArbiterReview, Floor};
use crate::code::Finding;
use crate::config::Role;
use crate::model::{ChatRequest, Exchange, ModelClient, ModelError, Spend};

/// The models that may judge work produced by a model: the assigned one first, then the
/// role's list, never one `is_reviewed` says is the reviewed model (by name, or by what goes
/// on the wire: a fallback may have changed which model produced the work, so this is checked
/// against the model that really answered).
pub fn candidates(
    assigned: Option<&str>,
    role_list: &[String],
    is_reviewed: &dyn Fn(&str) -> bool,
) -> Vec<String> {
    let mut out: Vec<String> = assigned.map(str::to_string).into_iter().collect();
    for m in role_list {
        if !out.contains(m) {
            out.push(m.clone());
        }
    }
    out.retain(|m| !is_reviewed(m));
    out
}

/// A structured judgement and what it cost.
#[derive(Debug, Clone)]
pub struct Judged<T> {
    /// The typed answer.
    pub value: T,
    /// The registry name of the model that answered.
    pub model: String,
    /// The request and the raw answer, for the run record's transcript.
    pub exchange: Exchange,
    /// What the call cost.
    pub spend: Spend,
}

/// A finished review of a change and what it cost.
#[derive(Debug, Clone)]
pub struct Reviewed {
    /// The review: verdict after the floor, issues re-anchored, tool findings included.
    pub review: ArbiterReview,
    /// The requests and the raw answers, for the run record's transcript: one, or one a
    /// part for a change reviewed in parts.
    pub exchanges: Vec<Exchange>,
    /// What the call cost.
    pub spend: Spend,
    /// The verdict the deterministic evidence imposes by itself, whether or not it raised
    /// the model's (the review records a floor only when it did): a verdict the facts
    /// already set is not in doubt.
    pub facts: Option<Floor>,
}

/// Reviews a prepared change: `judges` in turn (see [`candidates`]), with the arbiter
/// prompt `config` sets (a prompt file read only inside `root`, the repository). The one
/// review call every reviewed stage of a run and `git triad review` make: what differs
/// between them is the evidence they prepare and who may judge, never how the judge is
/// asked or its answer checked.
pub async fn review_change(
    client: &ModelClient,
    judges: Vec<String>,
    config: &crate::config::Config,
    root: Option<&std::path::Path>,
    prepared: &Prepared<'_>,
    brief: &Brief<'_>,
) -> Result<Reviewed, ModelError> {
    let system = crate::config::prompt(config, "arbiter", root);
    Arbiter::new(client, judges)
        .review(&system, prepared, brief)
        .await
}

/// The arbiter: a model client and the models allowed to judge.
pub struct Arbiter<'a> {
    client: &'a ModelClient,
    candidates: Vec<String>,
}

impl<'a> Arbiter<'a> {
    /// An arbiter choosing among `candidates` (see [`candidates`]); with none, every call
    /// fails with the reason, before any request.
    pub fn new(client: &'a ModelClient, candidates: Vec<String>) -> Self {
        Arbiter { client, candidates }
    }

    /// The model that will be asked first.
    pub fn first(&self) -> Option<&str> {
        self.candidates.first().map(String::as_str)
    }

    /// Asks for a structured judgement (the reconciliation uses this with its own schema).
    pub async fn judge<T: DeserializeOwned + JsonSchema>(
        &self,
        req: &ChatRequest,
        reviewed_model: &str,
    ) -> Result<Judged<T>, ModelError> {
        if self.candidates.is_empty() {
            return Err(ModelError::AllFailed {
                role: Role::Arbiter,
                purpose: None,
                failures: vec![crate::model::Failure::other(
                    reviewed_model,
                    "no arbiter model differs from the reviewed model",
                )],
            });
        }
        let result = self
            .client
            .chat_structured::<T>(Role::Arbiter, &self.candidates, req)
            .await?;
        let spend = result.completion.spend();
        let exchange = Exchange::structured(req, &result);
        Ok(Judged {
            value: result.value,
            model: result.completion.model,
            exchange,
            spend,
        })
    }

    /// Reviews a prepared change: asks the model ([`Self::ask`]) and checks its answer
    /// against the facts ([`Asked::finish`]). A change whose request does not fit the first
    /// reviewer's known window is reviewed in parts by file groups, each within the window,
    /// and merged into one review (see [`super::parts`]); every review carries its coverage
    /// receipt.
    pub async fn review(
        &self,
        system_prompt: &str,
        prepared: &Prepared<'_>,
        brief: &Brief<'_>,
    ) -> Result<Reviewed, ModelError> {
        let input = prepared.input(brief);
        let whole = build_request(system_prompt, &input);
        let all: Vec<String> = prepared
            .gathered
            .sections
            .iter()
            .map(|(p, _)| p.clone())
            .collect();
        // Files whose content the reviewer never sees, in one request or in parts.
        let unseen = super::coverage::unseen(&prepared.gathered.files);
        let seen = |p: &str| !unseen.iter().any(|u| u.path == p);
        let split = match self.first() {
            Some(first) => {
                let room = self.client.room(first, &whole)?;
                (room.window.known && !room.fits())
                    .then(|| self.client.estimator(first).map(|e| (room, e)))
                    .transpose()?
            }
            None => None,
        };
        let Some((room, estimator)) = split else {
            let asked = self.ask(system_prompt, &input).await?;
            let mut reviewed = prepared.with_checks(brief, |checks| asked.finish(checks));
            let coverage = Coverage {
                reviewed: all.iter().filter(|p| seen(p)).cloned().collect(),
                left_out: unseen.clone(),
                parts: 1,
            };
            super::coverage::apply(&mut reviewed.review, coverage);
            return Ok(reviewed);
        };
        // What every part's request holds besides its diff, and what a part may add.
        let bare = ReviewInput {
            diff: "",
            ..prepared.input(brief)
        };
        let overhead = estimator.request_tokens(&build_request(system_prompt, &bare))
            + estimator.tokens(&super::parts::header(99, 99));
        let budget = room
            .window
            .context
            .saturating_sub(overhead + u64::from(room.min_answer()));
        let plan = super::parts::plan(&prepared.gathered.sections, budget, &estimator);
        if plan.parts.is_empty() {
            // Not even one file fits beside the task: the client refuses it with the figures.
            let asked = self.ask(system_prompt, &input).await?;
            return Ok(prepared.with_checks(brief, |checks| asked.finish(checks)));
        }
        let count = plan.parts.len();
        let mut reviews = Vec::new();
        let mut exchanges = Vec::new();
        let mut spend = Spend::default();
        let mut reviewed = Vec::new();
        for (n, part) in plan.parts.iter().enumerate() {
            let paths: Vec<&str> = part
                .iter()
                .map(|&i| prepared.gathered.sections[i].0.as_str())
                .collect();
            let mut diff = super::parts::header(n + 1, count);
            for &i in part {
                diff.push_str(&prepared.gathered.sections[i].1);
            }
            // A finding goes with its file's part; one about no file, with the first.
            let findings: Vec<Finding> = prepared
                .findings()
                .iter()
                .filter(|f| paths.contains(&f.path.as_str()) || (n == 0 && !all.contains(&f.path)))
                .cloned()
                .collect();
            let part_input = ReviewInput {
                diff: &diff,
                findings: &findings,
                ..prepared.input(brief)
            };
            let asked = self.ask(system_prompt, &part_input).await?;
            let r = prepared.with_findings(brief, &findings, |checks| asked.finish(checks));
            spend += r.spend;
            exchanges.extend(r.exchanges);
            reviews.push(r.review);
            reviewed.extend(paths.iter().filter(|p| seen(p)).map(|p| p.to_string()));
        }
        let mut left_out = plan.left_out;
        left_out.extend(unseen.iter().cloned());
        let coverage = Coverage {
            reviewed,
            left_out,
            parts: count as u32,
        };
        let review = super::parts::merge(reviews, coverage)
            .expect("a plan with parts gives at least one review");
        Ok(Reviewed {
            review,
            exchanges,
            spend,
            facts: super::floor::floor(prepared.findings(), brief.verify),
        })
    }

    /// Asks for a review of a change (the request from `input`); [`Asked::finish`] then
    /// checks the answer against the facts. Two steps, so the probes, which run the
    /// reviewed code, run outside the model call.
    pub async fn ask(
        &self,
        system_prompt: &str,
        input: &ReviewInput<'_>,
    ) -> Result<Asked, ModelError> {
        let req = build_request(system_prompt, input);
        let judged = self
            .judge::<ArbiterAnswer>(&req, input.brief.reviewed_model)
            .await?;
        Ok(Asked {
            stage: input.brief.stage.to_string(),
            reviewed_model: input.brief.reviewed_model.to_string(),
            judged,
        })
    }
}

/// A review answered by a model and not yet checked against the facts.
#[derive(Debug, Clone)]
pub struct Asked {
    stage: String,
    reviewed_model: String,
    judged: Judged<ArbiterAnswer>,
}

impl Asked {
    /// Completes the review (see [`finish`]): the answer re-anchored, its probes run, the
    /// tool findings added and the deterministic floor applied.
    pub fn finish(self, checks: &Checks<'_>) -> Reviewed {
        let review = finish(
            &self.stage,
            &self.reviewed_model,
            &self.judged.model,
            self.judged.value,
            checks,
            self.judged.spend.cost_usd,
        );
        Reviewed {
            review,
            exchanges: vec![self.judged.exchange],
            spend: self.judged.spend,
            facts: super::floor::floor(checks.findings, checks.verify),
        }
    }
}

/// A review from the deterministic checks alone (`git triad review --no-model`): FLAG when
/// a tool found anything below critical, the floor for the rest.
pub fn facts_only(stage: &str, changed_files: usize, checks: &Checks<'_>) -> ArbiterReview {
    let findings = checks.findings;
    let model_verdict = if findings.iter().any(|f| f.severity != "critical") {
        super::Verdict::Flag
    } else {
        super::Verdict::Approve
    };
    let answer = ArbiterAnswer {
        verdict: model_verdict,
        confidence: 1.0,
        reasoning: format!(
            "deterministic checks only: {} finding(s) in {changed_files} changed file(s)",
            findings.len(),
        ),
        issues: vec![],
        alternatives: vec![],
    };
    let mut r = finish(stage, "human", "none (--no-model)", answer, checks, 0.0);
    r.model_verdict = model_verdict;
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reviewed_model_never_judges_itself() {
        let list = vec!["a".to_string(), "b".to_string(), "c".to_string()];
        let is_a = |m: &str| m == "a";
        assert_eq!(candidates(Some("b"), &list, &is_a), ["b", "c"]);
        assert_eq!(candidates(Some("a"), &list, &is_a), ["b", "c"]);
        assert_eq!(
            candidates(None, &["a".to_string()], &is_a),
            Vec::<String>::new()
        );
    }
}
