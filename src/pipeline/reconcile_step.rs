//! The reconciliation step of a run: facts, the reconciliation arbiter, the note, and the
//! one REJECT rewind (seed 000 §B11.5).

use git2::Oid;
use serde_json::json;

use super::context::prompt;
use super::reconcile::{self, ImplementationSummary, ReconcileAnswer};
use super::record::{Recorder, RunState, RunStatus};
use super::run::{totals, BlockOn, RunError, Runner};
use super::stage::Stage;
use crate::arbiter::Verdict;
use crate::config::Role;
use crate::git::{self, GitError};
use crate::task::TaskSpec;

/// What the step decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// The run rewound to a stage; keep looping.
    Rewound,
    /// The run stopped (HALT, second REJECT, provider failure).
    Stopped,
    /// Reconciliation finished; the run can complete.
    Done,
}

fn oid(s: &str) -> Result<Oid, GitError> {
    Oid::from_str(s).map_err(|source| GitError::Git {
        what: "parsing an object id".into(),
        source,
    })
}

impl Runner<'_> {
    /// Reconciles the finished change. With `may_rewind`, a REJECT rewinds once.
    pub fn reconcile_step(
        &self,
        state: &mut RunState,
        rec: &mut Recorder<'_>,
        spec: &TaskSpec,
        may_rewind: bool,
    ) -> Result<Step, RunError> {
        let final_commit = oid(state.tip())?;
        let summary: Option<ImplementationSummary> = state
            .implementation_summary
            .as_ref()
            .and_then(|v| serde_json::from_value(v.clone()).ok());
        let facts = reconcile::facts(
            self.repo,
            oid(&state.base)?,
            final_commit,
            spec,
            summary.as_ref(),
        )
        .map_err(|source| GitError::Git {
            what: "checking the implementation summary".into(),
            source,
        })?;
        let floor = reconcile::floor(&facts);
        let scaffold = match state.stages[0].commit.as_deref() {
            Some(arch) => {
                let base_tree = self
                    .repo
                    .find_commit(oid(&state.base)?)
                    .and_then(|c| c.tree())
                    .ok();
                let arch_tree = self
                    .repo
                    .find_commit(oid(arch)?)
                    .and_then(|c| c.tree())
                    .ok();
                match (base_tree, arch_tree) {
                    (Some(b), Some(a)) => git::diff_trees(self.repo, Some(&b), &a)
                        .map(|d| git::render_diff(&d, &|_, _| None))
                        .unwrap_or_default(),
                    _ => String::new(),
                }
            }
            None => String::new(),
        };
        let verifier_model = state.stages[3]
            .attempts
            .last()
            .map(|a| a.model.clone())
            .unwrap_or_else(|| state.stages[3].model().to_string());
        let mut candidates: Vec<String> = state
            .reconcile
            .as_ref()
            .and_then(|r| r.model.clone())
            .into_iter()
            .collect();
        if candidates.is_empty() {
            candidates = self
                .loaded
                .role_models(Role::Arbiter, self.profile.as_deref());
        }
        candidates.retain(|m| *m != verifier_model);
        let system = prompt(&self.loaded.config, "reconciler", Some(&self.repo_root));
        let req = reconcile::build_request(
            &system,
            spec,
            state.implementation_summary.as_ref(),
            &facts,
            &scaffold,
        );
        self.say(&format!(
            "[reconcile] {} checks the result against the TaskSpec",
            candidates.first().map_or("(no model)", String::as_str)
        ));
        let result = match self
            .client
            .chat_structured::<ReconcileAnswer>(Role::Arbiter, &candidates, &req)
            .await_blocking()
        {
            Ok(r) => r,
            Err(e) => {
                self.model_failed(state, rec, e)?;
                return Ok(Step::Stopped);
            }
        };
        let (cost, tin, tout, _) = totals(&result.completion.records);
        state.cost_usd += cost;
        state.tokens[0] += tin;
        state.tokens[1] += tout;
        let answer = result.value;
        let verdict = match &floor {
            Some((v, _)) => answer.verdict.max(*v),
            None => answer.verdict,
        };
        rec.transcript(
            state,
            "reconcile",
            "arbiter",
            &json!({"stage": "reconcile", "model": result.completion.model, "facts": facts,
                    "request": {"user": req.messages.first().map(|m| m.content.clone())},
                    "response": result.json, "calls": result.completion.records}),
        );
        let line = reconcile::note_line(
            &state.run_id,
            &state.task,
            verdict,
            &answer,
            floor.as_ref(),
            &facts,
            &result.completion.model,
            &verifier_model,
            cost,
        );
        let mut line = line;
        line["patch_id"] = json!(crate::notes::patch_id(self.repo, final_commit)
            .ok()
            .flatten());
        line["commit"] = json!(final_commit.to_string());
        if let Err(e) = crate::notes::append(self.repo, final_commit, &[line]) {
            tracing::error!("could not write the reconciliation note on {final_commit}: {e}");
        }
        self.say(&format!(
            "[reconcile] {}: {}{}",
            result.completion.model,
            verdict,
            floor
                .as_ref()
                .filter(|(v, _)| *v > answer.verdict)
                .map(|(_, r)| format!(
                    " (raised from {} by facts: {})",
                    answer.verdict,
                    r.join("; ")
                ))
                .unwrap_or_default()
        ));
        let r = state.reconcile.get_or_insert_with(Default::default);
        r.verdict = Some(verdict);
        match verdict {
            Verdict::Approve | Verdict::Flag => {
                r.done = true;
                rec.event(state, &format!("reconciliation {verdict}"))?;
                Ok(Step::Done)
            }
            Verdict::Reject if may_rewind && !r.rewound => {
                r.rewound = true;
                let target = if answer.rewind_to == "refactor" {
                    Stage::Refactor
                } else {
                    Stage::Implement
                };
                let old_tip = oid(state.tip())?;
                for s in &mut state.stages[target.index()..] {
                    s.commit = None;
                    s.verdict = None;
                    s.epoch_start = s.attempts.len();
                }
                state.current = target.index();
                state.verify = None;
                state.implementation_summary = None;
                state.feedback =
                    reconcile::feedback(&answer, floor.as_ref().map_or(&[][..], |(_, r)| &r[..]));
                let new_tip = oid(state.tip())?;
                self.move_branch(state, new_tip, Some(old_tip), "reconciliation rewind")?;
                state.message =
                    format!("reconciliation REJECT: rewinding to the {target} stage once");
                self.say(&state.message);
                rec.event(state, &format!("reconciliation reject: rewind to {target}"))?;
                Ok(Step::Rewound)
            }
            Verdict::Reject | Verdict::Halt => {
                state.status = RunStatus::Halted;
                state.message = format!(
                    "reconciliation {verdict}{}: {}\nGaps:\n{}\nOptions: fix by hand on the branch, re-run the task, or override with `git triad override`.",
                    if verdict == Verdict::Reject { " after its one retry" } else { "" },
                    super::run::one_line(&answer.reasoning, "the output does not match the TaskSpec"),
                    reconcile::feedback(&answer, floor.as_ref().map_or(&[][..], |(_, r)| &r[..]))
                );
                rec.event(state, &format!("reconciliation {verdict}"))?;
                Ok(Step::Stopped)
            }
        }
    }

    /// `git triad reconcile <run-id>`: reconciles a finished run again, without rewinding.
    pub fn reconcile_again(
        &self,
        state: &mut RunState,
        spec: &TaskSpec,
    ) -> Result<Option<Verdict>, RunError> {
        let mut rec = Recorder::open(self.repo, &state.run_id);
        let status = state.status;
        let message = state.message.clone();
        state.reconcile.get_or_insert_with(Default::default).done = false;
        let step = self.reconcile_step(state, &mut rec, spec, false)?;
        let verdict = state.reconcile.as_ref().and_then(|r| r.verdict);
        if step != Step::Stopped || verdict.is_some() {
            // The run itself stays finished; only the verdict is new.
            state.status = if matches!(verdict, Some(Verdict::Reject | Verdict::Halt)) {
                RunStatus::Halted
            } else if status == RunStatus::Halted {
                status
            } else {
                match state.final_verdict() {
                    Some(Verdict::Flag) => RunStatus::Flagged,
                    _ => RunStatus::Approved,
                }
            };
            if state.status != RunStatus::Halted {
                state.message = message;
            }
            rec.event(state, "reconciled again")?;
        }
        Ok(verdict)
    }
}
