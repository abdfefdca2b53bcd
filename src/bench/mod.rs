//! Running the task set on models: each build task asked exactly as a run asks its stage,
//! each review case reviewed exactly as a run's arbiter reviews a stage, every answer graded
//! by facts ([`grade`]) and summed into one [`FitnessEntry`] per model and role, with each
//! reviewer's [`selfpref`] figure beside it. The bench sits above [`crate::pipeline`], so it
//! measures the code runs use; what it measures is kept, and used, below it
//! ([`crate::routing`]).
//!
//! Infrastructure failures are not verdicts: a model that cannot be reached is skipped with
//! the reason and nothing is recorded for it, rather than scoring 0. A budget stop keeps the
//! entries already complete and records nothing partial.

pub mod grade;
pub mod selfpref;

use std::collections::BTreeMap;
use std::path::Path;

use crate::arbiter::gather::TaskBrief;
use crate::arbiter::review::Probes;
use crate::arbiter::service::Arbiter;
use crate::clock::date_of;
use crate::config::{prompt, Config, EditFormat, Role};
use crate::git::GitError;
use crate::model::budget::BudgetExceeded;
use crate::model::{ModelClient, ModelError, Spend};
use crate::pipeline::context::{file_char_budget, stage_request, OutlineCache, StageContext};
use crate::pipeline::Stage;
use crate::privacy::Privacy;
use crate::routing::store::{Figures, FitnessEntry, TaskFigure};
use crate::routing::tasks::{BuildTask, CaseClass, ReviewCase, TaskSet, TASK_SET_VERSION};
use grade::{grade_build, grade_review, Workspace};

/// A build answer the facts failed, with the change its edits made: what
/// [`selfpref`] has the reviewers judge.
#[derive(Debug, Clone)]
pub struct FailedAnswer {
    /// The model that wrote it.
    pub author: String,
    /// The task id.
    pub task: String,
    /// What its edits wrote: path → whole new content.
    pub files: BTreeMap<String, String>,
}

/// What to measure.
#[derive(Debug, Clone)]
pub struct BenchRequest {
    /// Registry names of the models.
    pub models: Vec<String>,
    /// The roles to measure them in.
    pub roles: Vec<Role>,
    /// The tasks.
    pub tasks: TaskSet,
    /// Answers asked for each task (models are not deterministic).
    pub repeat: u32,
}

/// The roles a review case measures: a verifier, like the arbiter, judges finished work,
/// and both are graded on the same reviews (measured once, recorded for each).
pub const REVIEW_ROLES: [Role; 2] = [Role::Arbiter, Role::Verifier];

/// One graded answer, as it is reported while the bench runs.
#[derive(Debug)]
pub struct Graded<'a> {
    /// The model.
    pub model: &'a str,
    /// `architect`, `implementer`, `refactorer`, or `review` (arbiter and verifier).
    pub measures: &'a str,
    /// The result.
    pub figure: &'a TaskFigure,
}

/// Hears of progress.
pub trait BenchObserver {
    /// An answer was graded.
    fn graded(&self, g: &Graded<'_>);
    /// A model was skipped (unreachable, unknown), with why.
    fn skipped(&self, model: &str, why: &str);
    /// A reviewer's self-preference was measured.
    fn self_preference(&self, _model: &str, _figure: &str) {}
}

/// What a bench produced.
#[derive(Debug, Default)]
pub struct BenchOutcome {
    /// Complete measurements, one per model and role.
    pub entries: Vec<FitnessEntry>,
    /// Models not measured, with why.
    pub skipped: Vec<(String, String)>,
    /// The bench stopped here before crossing a budget.
    pub budget: Option<BudgetExceeded>,
    /// What every call cost.
    pub spend: Spend,
}

/// Why one model's measurement ended early.
pub(super) enum Stop {
    /// Its provider failed: skip the model.
    Unreachable(String),
    /// A cap was reached: stop the bench.
    Budget(BudgetExceeded),
    /// The bench's own git work failed.
    Git(GitError),
}

impl From<GitError> for Stop {
    fn from(e: GitError) -> Self {
        Stop::Git(e)
    }
}

/// The bench: a model client (with its budget and ledger) and the configuration the
/// requests are built from.
pub struct Bench<'a> {
    /// Calls the models.
    pub client: &'a ModelClient,
    /// The effective configuration (prompts, edit formats, role settings).
    pub config: &'a Config,
    /// The work tree whose prompt overrides apply, if any.
    pub root: Option<&'a Path>,
    /// Hears of progress.
    pub observer: &'a dyn BenchObserver,
}

impl Bench<'_> {
    /// Runs `req` and returns the measurements; `now` (unix seconds) dates them.
    pub async fn run(&self, req: &BenchRequest, now: u64) -> Result<BenchOutcome, GitError> {
        let mut out = BenchOutcome::default();
        let privacy = Privacy::from_config(self.config);
        let mut failed: Vec<FailedAnswer> = Vec::new();
        'models: for model in &req.models {
            let resolved = match self.client.resolve(model) {
                Ok(m) => m,
                Err(e) => {
                    self.skip(&mut out, model, &e.to_string());
                    continue;
                }
            };
            if let Some(why) = self.client.unavailable_reason(&resolved) {
                self.skip(&mut out, model, &why);
                continue;
            }
            let entry = |role: Role, figures: Figures, results: Vec<TaskFigure>| FitnessEntry {
                model: model.clone(),
                provider: resolved.provider_name.clone(),
                wire_id: resolved.wire_id().to_string(),
                role,
                task_set: TASK_SET_VERSION,
                tasks: req.tasks.name.clone(),
                repeat: req.repeat,
                measured_at: now,
                date: date_of(now),
                figures,
                results,
            };
            let mut measured = Vec::new();
            for role in [Role::Architect, Role::Implementer, Role::Refactorer] {
                let tasks: Vec<&BuildTask> =
                    req.tasks.build.iter().filter(|t| t.role == role).collect();
                if !req.roles.contains(&role) || tasks.is_empty() {
                    continue;
                }
                match self
                    .build_role(
                        model,
                        role,
                        &tasks,
                        req.repeat,
                        &privacy,
                        &mut out,
                        &mut failed,
                    )
                    .await
                {
                    Ok((f, r)) => measured.push(entry(role, f, r)),
                    Err(stop) => match self.stopped(&mut out, model, stop)? {
                        true => break 'models,
                        false => continue 'models,
                    },
                }
            }
            let review_roles: Vec<Role> = REVIEW_ROLES
                .into_iter()
                .filter(|r| req.roles.contains(r))
                .collect();
            if !review_roles.is_empty() && !req.tasks.review.is_empty() {
                match self
                    .review_cases(model, &req.tasks.review, req.repeat, &privacy, &mut out)
                    .await
                {
                    Ok((f, r)) => {
                        for role in review_roles {
                            measured.push(entry(role, f.clone(), r.clone()));
                        }
                    }
                    Err(stop) => match self.stopped(&mut out, model, stop)? {
                        true => break 'models,
                        false => continue 'models,
                    },
                }
            }
            out.entries.extend(measured);
        }
        if out.budget.is_none() {
            self.self_preferences(req, &failed, &privacy, &mut out)
                .await?;
        }
        Ok(out)
    }

    /// Measures the self-preference of every model measured as a reviewer, when there are
    /// failing answers of its own and of other models to judge (else no call is made).
    async fn self_preferences(
        &self,
        req: &BenchRequest,
        failed: &[FailedAnswer],
        privacy: &Privacy,
        out: &mut BenchOutcome,
    ) -> Result<(), GitError> {
        let mut reviewers: Vec<String> = out
            .entries
            .iter()
            .filter(|e| REVIEW_ROLES.contains(&e.role))
            .map(|e| e.model.clone())
            .collect();
        reviewers.dedup();
        for reviewer in reviewers {
            let own = failed.iter().any(|f| f.author == reviewer);
            let others = failed.iter().any(|f| f.author != reviewer);
            if !(own && others) {
                continue;
            }
            let mut spend = Spend::default();
            let result = self
                .self_preference(&reviewer, failed, &req.tasks.build, privacy, &mut spend)
                .await;
            out.spend += spend;
            match result {
                Ok(figure) => {
                    self.observer.self_preference(&reviewer, &figure.describe());
                    for e in out
                        .entries
                        .iter_mut()
                        .filter(|e| e.model == reviewer && REVIEW_ROLES.contains(&e.role))
                    {
                        e.figures.self_preference = Some(figure.clone());
                    }
                }
                Err(Stop::Budget(b)) => {
                    out.budget = Some(b);
                    break;
                }
                // Its reviews are already measured; only this figure is missing.
                Err(Stop::Unreachable(why)) => self
                    .observer
                    .self_preference(&reviewer, &format!("not measured: {why}")),
                Err(Stop::Git(e)) => return Err(e),
            }
        }
        Ok(())
    }

    fn skip(&self, out: &mut BenchOutcome, model: &str, why: &str) {
        self.observer.skipped(model, why);
        out.skipped.push((model.to_string(), why.to_string()));
    }

    /// Handles a stop: `Ok(true)` ends the bench (budget), `Ok(false)` skips the model.
    fn stopped(&self, out: &mut BenchOutcome, model: &str, stop: Stop) -> Result<bool, GitError> {
        match stop {
            Stop::Unreachable(why) => {
                self.skip(out, model, &why);
                Ok(false)
            }
            Stop::Budget(b) => {
                out.budget = Some(b);
                Ok(true)
            }
            Stop::Git(e) => Err(e),
        }
    }

    #[allow(clippy::too_many_arguments)]
    async fn build_role(
        &self,
        model: &str,
        role: Role,
        tasks: &[&BuildTask],
        repeat: u32,
        privacy: &Privacy,
        out: &mut BenchOutcome,
        failed: &mut Vec<FailedAnswer>,
    ) -> Result<(Figures, Vec<TaskFigure>), Stop> {
        let mut figures = Figures::default();
        let mut results = Vec::new();
        let whole = self
            .config
            .models
            .get(model)
            .is_some_and(|m| m.edits(model) == EditFormat::Whole);
        for task in tasks {
            for _ in 0..repeat.max(1) {
                let ws = Workspace::for_build(task)?;
                let files = ws.files()?;
                let (previous_diff, changed_so_far) = ws.previous_change()?;
                let stage = stage_for(role);
                let outlines = OutlineCache::default();
                let request = stage_request(
                    self.config,
                    self.root,
                    model,
                    &StageContext {
                        changed_so_far: &changed_so_far,
                        previous_diff: &previous_diff,
                        ..StageContext::new(
                            stage,
                            &task.spec,
                            &files,
                            file_char_budget(self.config, model),
                            &outlines,
                            privacy,
                        )
                    },
                );
                let completion = self
                    .client
                    .chat(role, &[model.to_string()], &request)
                    .await
                    .map_err(stop_of)?;
                let spend = completion.spend();
                out.spend += spend;
                let graded = grade_build(
                    &ws,
                    task,
                    &completion.response.text,
                    whole,
                    privacy,
                    &self.config.sandbox,
                )?;
                figures.attempts += 1;
                figures.passed += u32::from(graded.passed);
                figures.edits_applied += u32::from(graded.edits_applied);
                figures.unusable += u32::from(!graded.answer_read);
                if graded.edits_applied && !graded.passed && !graded.written.is_empty() {
                    failed.push(FailedAnswer {
                        author: model.to_string(),
                        task: task.id.clone(),
                        files: graded.written.clone(),
                    });
                }
                let figure = task_figure(&task.id, graded.passed, graded.detail, spend);
                add_spend(&mut figures, spend);
                self.observer.graded(&Graded {
                    model,
                    measures: role.as_str(),
                    figure: &figure,
                });
                results.push(figure);
            }
        }
        figures.compute_score();
        Ok((figures, results))
    }

    async fn review_cases(
        &self,
        model: &str,
        cases: &[ReviewCase],
        repeat: u32,
        privacy: &Privacy,
        out: &mut BenchOutcome,
    ) -> Result<(Figures, Vec<TaskFigure>), Stop> {
        let mut figures = Figures::default();
        let mut results = Vec::new();
        let system = prompt(self.config, "arbiter", self.root);
        for case in cases {
            for _ in 0..repeat.max(1) {
                let ws = Workspace::for_review(case)?;
                let prepared = ws.prepared(privacy)?;
                let task = TaskBrief::of(&case.spec);
                let brief = task.brief("implement", "another model");
                let arbiter = Arbiter::new(self.client, vec![model.to_string()]);
                // An answer that breaks the schema was still paid for: what it cost is read
                // from the client's records, not from a review that does not exist.
                let calls_before = self.client.records().len();
                // The same answer derived twice: as runs derive it (probes run, a claim
                // about behaviour stands on a confirmed probe) and as if probes did not exist.
                let (graded, without) = match arbiter.ask(&system, &prepared.input(&brief)).await {
                    Ok(asked) => {
                        let bare = prepared.with_checks_as(&brief, Some(Probes::Ignored), |c| {
                            asked.clone().finish(c)
                        });
                        let probed = prepared.with_checks(&brief, |c| asked.finish(c));
                        (
                            grade_review(case, Ok(&probed.review)),
                            grade_review(case, Ok(&bare.review)),
                        )
                    }
                    Err(ModelError::SchemaViolation { errors, .. }) => {
                        let g = grade_review(case, Err(&errors.join("; ")));
                        (g.clone(), g)
                    }
                    Err(e) => return Err(stop_of(e)),
                };
                let w = figures.without_probes.get_or_insert_with(Default::default);
                if case.class == CaseClass::Clean {
                    w.false_positives += u32::from(without.false_positive);
                    w.flagged_clean += u32::from(without.flagged_clean);
                } else {
                    w.caught += u32::from(without.caught);
                }
                let spend = Spend::of(&self.client.records()[calls_before..]);
                out.spend += spend;
                figures.attempts += 1;
                let passed = if case.class == CaseClass::Clean {
                    figures.clean += 1;
                    let ok = graded.verdict.is_some() && !graded.false_positive;
                    figures.clean_ok += u32::from(ok);
                    figures.false_positives += u32::from(graded.false_positive);
                    figures.flagged_clean += u32::from(graded.flagged_clean);
                    ok
                } else {
                    figures.bugs += 1;
                    figures.caught += u32::from(graded.caught);
                    graded.caught
                };
                figures.unusable += u32::from(graded.verdict.is_none());
                let figure = task_figure(&case.id, passed, graded.detail, spend);
                add_spend(&mut figures, spend);
                self.observer.graded(&Graded {
                    model,
                    measures: "review",
                    figure: &figure,
                });
                results.push(figure);
            }
        }
        figures.compute_score();
        Ok((figures, results))
    }
}

/// The stage a build task of `role` is asked as.
pub fn stage_for(role: Role) -> Stage {
    match role {
        Role::Architect => Stage::Architect,
        Role::Refactorer => Stage::Refactor,
        Role::Verifier => Stage::Verify,
        Role::Implementer
        | Role::Arbiter
        | Role::Tiebreaker
        | Role::Manager
        | Role::Orchestrator => Stage::Implement,
    }
}

pub(super) fn stop_of(e: ModelError) -> Stop {
    match e {
        ModelError::Budget(b) => Stop::Budget(b),
        other => Stop::Unreachable(other.to_string()),
    }
}

fn task_figure(task: &str, passed: bool, detail: String, spend: Spend) -> TaskFigure {
    TaskFigure {
        task: task.to_string(),
        passed,
        detail,
        input_tokens: spend.input_tokens,
        output_tokens: spend.output_tokens,
        latency_ms: spend.latency_ms,
        cost_usd: spend.cost_usd,
    }
}

fn add_spend(f: &mut Figures, s: Spend) {
    f.input_tokens += s.input_tokens;
    f.output_tokens += s.output_tokens;
    f.latency_ms += s.latency_ms;
    f.cost_usd += s.cost_usd;
}
