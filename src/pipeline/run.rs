//! The orchestration loop: stage → commit → review → accept, retry, escalate or stop.
//!
//! Every step is recorded before the next begins, so a killed run resumes from its record.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use git2::{Oid, Repository};
use serde_json::{json, Value};

use super::context::{prompt, stage_message, StageContext};
use super::record::{AttemptRecord, Recorder, RunState, RunStatus};
use super::stage::Stage;
use crate::arbiter::{feedback, review, ArbiterAnswer, ArbiterReview, Verdict};
use crate::config::{LoadedConfig, OnExhausted};
use crate::edit::{apply_blocks, parse_edit_blocks, render_failures};
use crate::git::worktree::{run_command, TempWorktree};
use crate::git::{self, GitError, TreeFiles};
use crate::model::{ChatRequest, ModelClient, ModelError};
use crate::task::outcome::{outcome_details, parse_meta, Outcome, StageMeta};
use crate::task::TaskSpec;

/// Drives one run.
pub struct Runner<'a> {
    /// The repository.
    pub repo: &'a Repository,
    /// Its work tree root (for prompt overrides and worktrees).
    pub repo_root: PathBuf,
    /// Effective configuration.
    pub loaded: &'a LoadedConfig,
    /// The model client.
    pub client: &'a ModelClient,
    /// Print progress on stderr.
    pub progress: bool,
    /// Whether commands (the verify command) may run: a trusted clone, or a command from
    /// the user's own configuration.
    pub verify_command: Option<(String, Duration)>,
    /// Why the verify command is not run, when it is not.
    pub verify_skipped: Option<String>,
    /// The active profile (`local`, ...), for the arbiter's fallback models.
    pub profile: Option<String>,
    /// Repository-map outlines computed so far in this process.
    pub outlines: super::context::OutlineCache,
}

/// Failures that stop the loop without a recorded outcome (git itself failing).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A git operation failed.
    #[error(transparent)]
    Git(#[from] GitError),
}

fn git_err(what: &str) -> impl Fn(git2::Error) -> GitError + '_ {
    move |source| GitError::Git {
        what: what.to_string(),
        source,
    }
}

fn oid(s: &str) -> Result<Oid, GitError> {
    Oid::from_str(s).map_err(git_err("parsing an object id"))
}

impl Runner<'_> {
    pub(crate) fn say(&self, msg: &str) {
        if self.progress {
            eprintln!("triad: {msg}");
        }
    }

    /// Moves the run's scratch branch to `to` if it still points at `from` (`None`: creates
    /// it); a branch moved by someone else is never overwritten.
    pub(crate) fn move_branch(
        &self,
        state: &RunState,
        to: Oid,
        from: Option<Oid>,
        why: &str,
    ) -> Result<(), GitError> {
        git::cas_ref(
            self.repo,
            &format!("refs/heads/{}", state.branch),
            to,
            from,
            &format!("triad: {why}"),
        )
    }

    /// Writes the first event and creates the scratch branch at the base.
    pub fn start(&self, state: &RunState) -> Result<(), RunError> {
        let mut rec = Recorder::open(self.repo, &state.run_id);
        rec.event(state, "start")?;
        self.move_branch(state, oid(&state.base)?, None, "start run")?;
        Ok(())
    }

    /// Runs stages until the run finishes or stops; the returned state says how.
    pub fn execute(&self, state: &mut RunState, spec: &TaskSpec) -> Result<(), RunError> {
        let stage = state
            .stages
            .get(state.current)
            .map_or("verify", |s| s.stage.as_str());
        if let Err(e) =
            crate::task::workflow::on_run_start(self.repo, &state.task, &state.run_id, stage)
        {
            tracing::warn!("could not record the task's state: {e}");
        }
        self.execute_stages(state, spec)?;
        if let Err(e) = crate::task::workflow::on_run_end(
            self.repo,
            &state.task,
            &state.run_id,
            state.status.as_str(),
            state.final_verdict().map(|v| v.as_str()),
        ) {
            tracing::warn!("could not record the task's state: {e}");
        }
        if matches!(
            state.status,
            RunStatus::Halted | RunStatus::RetriesExhausted
        ) {
            self.mark_stopped_tip(state);
        }
        Ok(())
    }

    /// A halted run's branch must not look clean to the pre-push gate: its tip gets a
    /// `run`-stage verdict line (HALT, or REJECT when retries ran out) unless the tip is
    /// the base (nothing new to push) or already carries that verdict.
    fn mark_stopped_tip(&self, state: &RunState) {
        let Ok(tip) = oid(state.tip()) else { return };
        if state.tip() == state.base {
            return;
        }
        let verdict = if state.status == RunStatus::Halted {
            Verdict::Halt
        } else {
            Verdict::Reject
        };
        let lines = crate::notes::read(self.repo, tip).unwrap_or_default();
        if crate::notes::effective(&lines).is_some_and(|e| e.verdict == verdict.as_str()) {
            return;
        }
        let line = json!({
            "v": 1, "kind": "review", "stage": "run", "stage_reviewed": "run",
            "run": state.run_id, "task": state.task, "verdict": verdict, "model_verdict": verdict,
            "floor": null, "issues": [], "alternatives": [], "confidence": 1.0,
            "reviewed_model": "the whole run", "arbiter_model": "git-triad (run outcome)",
            "reasoning": format!("the run stopped ({}): {}", state.status.as_str(), one_line(&state.message, "")),
            "token_cost": 0.0, "attempt": 0,
            "patch_id": crate::notes::patch_id(self.repo, tip).ok().flatten(),
            "commit": tip.to_string(), "ts": crate::notes::now_ts(),
        });
        if let Err(e) = crate::notes::append(self.repo, tip, &[line]) {
            tracing::error!("could not mark the halted run's tip {tip}: {e}");
        }
    }

    fn execute_stages(&self, state: &mut RunState, spec: &TaskSpec) -> Result<(), RunError> {
        let mut rec = Recorder::open(self.repo, &state.run_id);
        self.client
            .set_budget(state.budget_usd.map(|b| (b - state.cost_usd).max(0.0)));
        state.status = RunStatus::Running;
        loop {
            while state.current < state.stages.len() {
                let stage = state.stages[state.current].stage;
                let stage_rec = &state.stages[state.current];
                if stage_rec.attempts_in_epoch() > state.max_retries {
                    if !self.escalate(state, &mut rec)? {
                        return Ok(());
                    }
                    continue;
                }
                if stage == Stage::Verify && state.verify.is_none() {
                    self.run_verify(state, &mut rec)?;
                }
                let keep_going = self.attempt(state, &mut rec, spec)?;
                if !keep_going {
                    return Ok(());
                }
            }
            if state.reconcile.as_ref().is_some_and(|r| !r.done) {
                match self.reconcile_step(state, &mut rec, spec, true)? {
                    super::reconcile_step::Step::Rewound => continue,
                    super::reconcile_step::Step::Stopped => return Ok(()),
                    super::reconcile_step::Step::Done => {}
                }
            }
            break;
        }
        let fv = state.final_verdict();
        state.status = match fv {
            Some(Verdict::Flag) => RunStatus::Flagged,
            _ => RunStatus::Approved,
        };
        state.message = match fv {
            Some(v) => format!("all stages done; final verdict {v}"),
            None => "all stages done; no stage was reviewed (arbiter mode off)".into(),
        };
        rec.event(state, "finished")?;
        self.say(&state.message);
        Ok(())
    }

    fn run_verify(&self, state: &mut RunState, rec: &mut Recorder<'_>) -> Result<(), RunError> {
        let Some((cmd, timeout)) = &self.verify_command else {
            if let Some(why) = &self.verify_skipped {
                self.say(why);
            }
            return Ok(());
        };
        let tip = state.tip().to_string();
        self.say(&format!(
            "verify: running `{cmd}` in a temporary worktree at {}",
            &tip[..10.min(tip.len())]
        ));
        let outcome = match TempWorktree::add(&self.repo_root, &tip) {
            Ok(wt) => run_command(wt.path(), cmd, *timeout, 60),
            Err(e) => crate::git::worktree::CommandOutcome {
                command: cmd.clone(),
                exit_code: None,
                timed_out: false,
                tail: format!("could not create the worktree: {e}"),
                duration_ms: 0,
            },
        };
        self.say(&format!(
            "verify: exit {} in {} ms",
            outcome
                .exit_code
                .map_or("none".to_string(), |c| c.to_string()),
            outcome.duration_ms
        ));
        state.verify = Some(outcome);
        rec.event(state, "verify command ran")?;
        Ok(())
    }

    /// One attempt at the current stage. Returns false when the run stops.
    fn attempt(
        &self,
        state: &mut RunState,
        rec: &mut Recorder<'_>,
        spec: &TaskSpec,
    ) -> Result<bool, RunError> {
        let idx = state.current;
        let stage = state.stages[idx].stage;
        let role = stage.role();
        let n = state.stages[idx].attempts.len() as u32 + 1;
        let epoch_n = state.stages[idx].attempts_in_epoch() + 1;
        let parent = oid(state.tip())?;
        let parent_commit = self
            .repo
            .find_commit(parent)
            .map_err(git_err("reading the stage's parent"))?;
        let parent_tree = parent_commit
            .tree()
            .map_err(git_err("reading the stage's parent tree"))?;
        let files = TreeFiles::new(self.repo, parent_tree.clone());
        let base_tree = self
            .repo
            .find_commit(oid(&state.base)?)
            .and_then(|c| c.tree())
            .map_err(git_err("reading the base tree"))?;

        let previous_diff = if idx > 0 {
            let prev_parent = state.stages[..idx]
                .iter()
                .rev()
                .skip(1)
                .find_map(|s| s.commit.clone())
                .unwrap_or_else(|| state.base.clone());
            let t = self
                .repo
                .find_commit(oid(&prev_parent)?)
                .and_then(|c| c.tree())
                .map_err(git_err("reading a tree"))?;
            let d =
                git::diff_trees(self.repo, Some(&t), &parent_tree).map_err(git_err("diffing"))?;
            git::render_diff(&d, &|_, _| None)
        } else {
            String::new()
        };
        let changed_so_far: Vec<String> =
            git::diff_trees(self.repo, Some(&base_tree), &parent_tree)
                .map_err(git_err("diffing"))?
                .into_iter()
                .map(|f| f.path)
                .collect();
        let flags = feedback::flag_block(
            state
                .stages
                .get(idx.wrapping_sub(1))
                .map_or("previous", |s| s.stage.as_str()),
            &state.pending_flags,
        );
        let facts = match (&state.verify, stage) {
            (Some(v), Stage::Verify) => format!(
                "## Verify command result (a fact)\ncommand: {}\nexit code: {}\noutput tail:\n{}\n",
                v.command,
                v.exit_code
                    .map_or("none (killed)".to_string(), |c| c.to_string()),
                v.tail
            ),
            (None, Stage::Verify) => format!(
                "## Verify command\nnot run: {}\n",
                self.verify_skipped
                    .as_deref()
                    .unwrap_or("no verify command is configured")
            ),
            _ => String::new(),
        };
        let model_name = state.stages[idx].model().to_string();
        let model_cfg = self.loaded.config.models.get(&model_name);
        let ctx_chars = model_cfg.map_or(60_000, |m| {
            (m.context_window as usize)
                .saturating_mul(2)
                .clamp(4_000, 200_000)
        });
        let user = stage_message(&StageContext {
            stage,
            task: spec,
            files: &files,
            changed_so_far: &changed_so_far,
            previous_diff: &previous_diff,
            flags: &flags,
            feedback: &state.feedback,
            facts: &facts,
            char_budget: ctx_chars / 2,
            outlines: &self.outlines,
        });
        let system = format!(
            "{}\n\n{}",
            prompt(&self.loaded.config, role.as_str(), Some(&self.repo_root)),
            prompt(&self.loaded.config, "protocol", Some(&self.repo_root))
        );
        let max_tokens = self
            .loaded
            .config
            .roles
            .get(role)
            .max_output_tokens
            .unwrap_or(8192);
        let mut req = ChatRequest::new(Some(system), user, max_tokens);
        req.temperature = self.loaded.config.roles.get(role).temperature;

        if let Err(e) = crate::task::workflow::on_stage_start(
            self.repo,
            &state.task,
            &state.run_id,
            stage.as_str(),
        ) {
            tracing::warn!("could not record the task's state: {e}");
        }
        self.say(&format!(
            "[{}/{} {stage}] {model_name}, attempt {epoch_n} of {}",
            idx + 1,
            state.stages.len(),
            state.max_retries + 1
        ));
        let started = Instant::now();
        let candidates: Vec<String> =
            state.stages[idx].models[state.stages[idx].model_index..].to_vec();
        let completion = match self.client.chat(role, &candidates, &req).await_blocking() {
            Ok(c) => c,
            Err(e) => return self.model_failed(state, rec, e),
        };
        let (cost, tin, tout, lat) = totals(&completion.records);
        state.cost_usd += cost;
        state.tokens[0] += tin;
        state.tokens[1] += tout;
        rec.transcript(
            state,
            stage.as_str(),
            role.as_str(),
            &json!({
                "stage": stage, "role": role, "attempt": n, "model": completion.model,
                "request": {"system": req.system, "user": req.messages.first().map(|m| m.content.clone())},
                "response": completion.response.text,
                "calls": completion.records,
            }),
        );
        let actual_model = completion.model.clone();
        let mut attempt = AttemptRecord {
            n,
            model: actual_model.clone(),
            commit: None,
            verdict: None,
            arbiter_model: None,
            result: String::new(),
            detail: String::new(),
            cost_usd: cost,
            tokens: [tin, tout],
            latency_ms: lat,
        };
        self.say(&format!(
            "[{stage}] answered in {:.1} s, {} tokens, ${:.4}",
            started.elapsed().as_secs_f64(),
            tin + tout,
            cost
        ));

        // Understand the answer.
        let answer = completion.response.text.clone();
        let meta = match parse_meta(&answer) {
            Ok(m) => m,
            Err(why) => return self.retry_with(state, rec, attempt, "bad_answer", &why),
        };
        let blocks = match parse_edit_blocks(&answer) {
            Ok(b) => b,
            Err(e) => {
                let why = format!("an edit block could not be read: {e}");
                return self.retry_with(state, rec, attempt, "bad_answer", &why);
            }
        };
        if meta.outcome != Outcome::Approve {
            return self.stop_on_outcome(state, rec, attempt, &meta);
        }
        let applied = match apply_blocks(&files, &blocks, &|p| {
            spec.in_scope(p) && !p.starts_with(".triad/")
        }) {
            Ok(a) => a,
            Err(failures) => {
                let ok_count = blocks.len().saturating_sub(failures.len());
                let text = render_failures(&failures, ok_count);
                return self.retry_with(state, rec, attempt, "edits_failed", &text);
            }
        };
        if stage == Stage::Verify {
            state.implementation_summary = meta.implementation_summary.clone();
        }

        // Commit the stage from an in-memory tree.
        let tree = git::build_tree(self.repo, &parent_tree, &applied.files)?;
        let summary = one_line(&meta.summary, &format!("{stage} stage"));
        let message = format!(
            "triad({stage}): {summary}\n\nTriad-Run: {}\nTriad-Stage: {stage}\nTriad-Model: {actual_model}\nTriad-Attempt: {n}\n",
            state.run_id
        );
        let commit = git::commit(self.repo, tree, &[parent], &message)?;
        attempt.commit = Some(commit.to_string());

        if !state.stages[idx].reviewed {
            attempt.result = "accepted".into();
            attempt.detail = summary;
            return self.accept(state, rec, attempt, commit, None);
        }

        // Review by a different model.
        let review = match self.review(state, rec, spec, stage, &actual_model, commit, &meta) {
            Ok(r) => r,
            Err(e) => {
                state.stages[idx].attempts.push(attempt);
                rec.keep(commit);
                return self.model_failed(state, rec, e);
            }
        };
        attempt.verdict = Some(review.verdict);
        attempt.arbiter_model = Some(review.arbiter_model.clone());
        attempt.cost_usd += review.token_cost;
        self.say(&format!(
            "[{stage}] arbiter {}: {}{}",
            review.arbiter_model,
            review.verdict,
            review
                .floor
                .as_ref()
                .map(|f| format!(
                    " (raised from {} by deterministic evidence)",
                    review.model_verdict
                )
                .to_string()
                    + &format!(": {}", f.reasons.join("; ")))
                .unwrap_or_default()
        ));
        match review.verdict {
            Verdict::Approve | Verdict::Flag => {
                attempt.result = "accepted".into();
                attempt.detail = summary;
                if review.verdict == Verdict::Flag {
                    state.pending_flags = review.issues.clone();
                    state.all_flags.extend(review.issues.iter().cloned());
                    self.accept_with(state, rec, attempt, commit, Some(review.verdict))
                } else {
                    self.accept(state, rec, attempt, commit, Some(review.verdict))
                }
            }
            Verdict::Reject => {
                rec.keep(commit);
                let fb = feedback::reject_block(
                    epoch_n,
                    state.max_retries,
                    &review.issues,
                    &review.alternatives,
                );
                self.retry_with(state, rec, attempt, "rejected", &fb)
            }
            Verdict::Halt => {
                rec.keep(commit);
                attempt.result = "halted".into();
                attempt.detail = review.reasoning.clone();
                state.stages[idx].attempts.push(attempt);
                state.status = RunStatus::Halted;
                state.message = halt_message(stage, &review);
                rec.event(state, &format!("{stage} halted by the arbiter"))?;
                Ok(false)
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn review(
        &self,
        state: &mut RunState,
        rec: &mut Recorder<'_>,
        spec: &TaskSpec,
        stage: Stage,
        stage_model: &str,
        commit: Oid,
        meta: &StageMeta,
    ) -> Result<ArbiterReview, ModelError> {
        let idx = state.current;
        let repo = self.repo;
        let new_tree = repo.find_commit(commit).and_then(|c| c.tree()).ok();
        let old_oid = if stage == Stage::Verify {
            state.base.clone()
        } else {
            state.tip().to_string()
        };
        let old_tree = Oid::from_str(&old_oid)
            .ok()
            .and_then(|o| repo.find_commit(o).ok())
            .and_then(|c| c.tree().ok());
        let gathered = match &new_tree {
            Some(new) => crate::arbiter::gather::gather(repo, old_tree.as_ref(), new, None).ok(),
            None => None,
        };
        let (diff_text, findings) = gathered
            .map(|g| (g.diff_text, g.findings))
            .unwrap_or_default();
        // The arbiter: the stage's assigned one, then others that differ from the model
        // that actually produced the stage (a fallback may have changed it).
        let mut candidates: Vec<String> = state.stages[idx]
            .arbiter_model
            .clone()
            .into_iter()
            .collect();
        for m in self
            .loaded
            .role_models(crate::config::Role::Arbiter, self.profile.as_deref())
        {
            if !candidates.contains(&m) {
                candidates.push(m);
            }
        }
        candidates.retain(|m| m != stage_model);
        if candidates.is_empty() {
            return Err(ModelError::AllFailed {
                role: crate::config::Role::Arbiter,
                failures: vec![(
                    stage_model.to_string(),
                    "no arbiter model differs from the stage model".into(),
                )],
            });
        }
        let stage_notes = format!(
            "summary: {}\nconfidence: {}\nobjections: {}",
            meta.summary,
            meta.confidence
                .map_or("not given".to_string(), |c| format!("{c:.2}")),
            serde_json::to_string(&meta.objections).unwrap_or_default()
        );
        let input = review::ReviewInput {
            stage: stage.as_str(),
            reviewed_model: stage_model,
            task: &spec.render(),
            diff: &diff_text,
            stage_notes: &stage_notes,
            findings: &findings,
            previous_flags: &state.all_flags,
            verify: if stage == Stage::Verify {
                state.verify.as_ref()
            } else {
                None
            },
        };
        let system = prompt(&self.loaded.config, "arbiter", Some(&self.repo_root));
        let req = review::build_request(&system, &input);
        self.say(&format!("[{stage}] review by {}", candidates[0]));
        let result = self
            .client
            .chat_structured::<ArbiterAnswer>(crate::config::Role::Arbiter, &candidates, &req)
            .await_blocking()?;
        let (cost, tin, tout, _) = totals(&result.completion.records);
        state.cost_usd += cost;
        state.tokens[0] += tin;
        state.tokens[1] += tout;
        rec.transcript(
            state,
            stage.as_str(),
            "arbiter",
            &json!({"stage": stage, "role": "arbiter", "model": result.completion.model,
                    "request": {"user": req.messages.first().map(|m| m.content.clone())},
                    "response": result.json, "findings": findings, "calls": result.completion.records}),
        );
        let new_files = new_tree.map(|t| TreeFiles::new(repo, t));
        let read = |p: &str| new_files.as_ref().and_then(|f| f.text(p));
        let review = review::finish(
            stage.as_str(),
            stage_model,
            &result.completion.model,
            result.value,
            &read,
            &findings,
            if stage == Stage::Verify {
                state.verify.as_ref()
            } else {
                None
            },
            cost,
        );
        let patch = crate::notes::patch_id(repo, commit).ok().flatten();
        let mut line = serde_json::to_value(&review).unwrap_or(Value::Null);
        if let Value::Object(o) = &mut line {
            o.insert("v".into(), json!(1));
            o.insert("kind".into(), json!("review"));
            o.insert("run".into(), json!(state.run_id));
            o.insert("task".into(), json!(state.task));
            o.insert(
                "attempt".into(),
                json!(state.stages[idx].attempts.len() + 1),
            );
            o.insert("patch_id".into(), json!(patch));
            o.insert("commit".into(), json!(commit.to_string()));
            o.insert("ts".into(), json!(crate::notes::now_ts()));
            o.insert("stage_reviewed".into(), json!(stage));
        }
        if let Err(e) = crate::notes::append(repo, commit, &[line]) {
            tracing::error!("could not write the verdict note on {commit}: {e}");
        }
        Ok(review)
    }

    fn accept(
        &self,
        state: &mut RunState,
        rec: &mut Recorder<'_>,
        attempt: AttemptRecord,
        commit: Oid,
        verdict: Option<Verdict>,
    ) -> Result<bool, RunError> {
        state.pending_flags.clear();
        self.accept_with(state, rec, attempt, commit, verdict)
    }

    fn accept_with(
        &self,
        state: &mut RunState,
        rec: &mut Recorder<'_>,
        attempt: AttemptRecord,
        commit: Oid,
        verdict: Option<Verdict>,
    ) -> Result<bool, RunError> {
        let idx = state.current;
        let old_tip = oid(state.tip())?;
        let stage = state.stages[idx].stage;
        state.stages[idx].attempts.push(attempt);
        state.stages[idx].commit = Some(commit.to_string());
        state.stages[idx].verdict = verdict;
        state.feedback.clear();
        state.current += 1;
        self.move_branch(state, commit, Some(old_tip), &format!("{stage} accepted"))?;
        state.message = format!("{stage} accepted");
        rec.event(state, &format!("{stage} accepted"))?;
        Ok(true)
    }

    fn retry_with(
        &self,
        state: &mut RunState,
        rec: &mut Recorder<'_>,
        mut attempt: AttemptRecord,
        result: &str,
        feedback: &str,
    ) -> Result<bool, RunError> {
        let idx = state.current;
        let stage = state.stages[idx].stage;
        attempt.result = result.to_string();
        attempt.detail = one_line(feedback, result);
        self.say(&format!(
            "[{stage}] attempt {} {result}: {}",
            attempt.n, attempt.detail
        ));
        state.stages[idx].attempts.push(attempt);
        state.feedback = if feedback.starts_with("##") {
            feedback.to_string()
        } else {
            format!("## YOUR PREVIOUS ANSWER COULD NOT BE USED\n\n{feedback}\n")
        };
        rec.event(state, &format!("{stage} attempt {result}"))?;
        Ok(true)
    }

    fn stop_on_outcome(
        &self,
        state: &mut RunState,
        rec: &mut Recorder<'_>,
        mut attempt: AttemptRecord,
        meta: &StageMeta,
    ) -> Result<bool, RunError> {
        let idx = state.current;
        let stage = state.stages[idx].stage;
        attempt.result = "outcome".into();
        attempt.detail = meta.outcome.as_str().to_string();
        state.stages[idx].attempts.push(attempt);
        let details = outcome_details(meta);
        state.outcome = Some(json!({
            "stage": stage, "outcome": meta.outcome, "summary": meta.summary,
            "questions": meta.questions, "dependencies": meta.dependencies,
            "suggested_role": meta.suggested_role, "alternatives": meta.alternatives,
            "policy_refs": meta.policy_refs, "evidence_needed": meta.evidence_needed,
        }));
        // The arbiter-owned task state machine routes the outcome (seed 004): nothing is
        // silently dropped, every task keeps an owner and a next action.
        let decision = crate::task::workflow::on_stage_outcome(
            self.repo,
            &state.task,
            &state.run_id,
            stage.as_str(),
            meta,
        );
        let routed = match &decision {
            Ok(d) => {
                if let Some(o) = &mut state.outcome {
                    o["decision"] = serde_json::to_value(d).unwrap_or_default();
                }
                format!(
                    "\nThe arbiter routed the task: {}{}{}",
                    serde_json::to_value(d.decision)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string))
                        .unwrap_or_default(),
                    d.assigned_to
                        .as_deref()
                        .map(|a| format!(" to {a}"))
                        .unwrap_or_default(),
                    if d.note.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", d.note)
                    }
                )
            }
            Err(e) => {
                tracing::error!("could not record the task's outcome: {e}");
                String::new()
            }
        };
        if meta.outcome == Outcome::NeedsInfo {
            state.status = RunStatus::WaitingOnUser;
            state.message = format!(
                "the {stage} stage needs information before it can continue ({details}).{routed}\nAnswer with `git triad task answer {}`, then `git triad resume {}`",
                state.task, state.run_id
            );
        } else {
            state.status = RunStatus::Halted;
            state.message = format!(
                "the {stage} stage answered {} instead of doing the work: {details}{routed}\n`git triad task show {}` shows the task's state and next action",
                meta.outcome.as_str(),
                state.task
            );
        }
        rec.event(
            state,
            &format!("{stage} answered {}", meta.outcome.as_str()),
        )?;
        Ok(false)
    }

    pub(crate) fn model_failed(
        &self,
        state: &mut RunState,
        rec: &mut Recorder<'_>,
        e: ModelError,
    ) -> Result<bool, RunError> {
        let stage = state
            .stages
            .get(state.current)
            .map_or("reconcile", |s| s.stage.as_str());
        state.status = match e {
            ModelError::Budget(_) => RunStatus::BudgetExceeded,
            // A reviewer that cannot produce a valid verdict cannot approve anything: stop
            // for a human, as a HALT, rather than fail (resume would ask the same model).
            ModelError::SchemaViolation { .. } => RunStatus::Halted,
            _ => RunStatus::Failed,
        };
        state.message = match &e {
            ModelError::SchemaViolation { .. } => format!(
                "the {stage} step could not be completed: {e}. Without a valid answer nothing is approved. Options: choose a stronger model for that role (--arbiter-model, -c roles.arbiter.models=...) and run the task again"
            ),
            ModelError::Budget(_) => format!(
                "the {stage} stage stopped before crossing the budget: {e}. Continue with a higher cap: git triad resume {} --budget <USD>",
                state.run_id
            ),
            _ => format!(
                "the {stage} stage stopped: {e}. When the provider is back: git triad resume {}",
                state.run_id
            ),
        };
        rec.event(
            state,
            &format!("{stage} stopped: {}", state.status.as_str()),
        )?;
        Ok(false)
    }

    /// Retries are used up: halt, or rewind one stage with another model.
    fn escalate(&self, state: &mut RunState, rec: &mut Recorder<'_>) -> Result<bool, RunError> {
        let idx = state.current;
        let stage = state.stages[idx].stage;
        let tries = state.stages[idx].attempts_in_epoch();
        let policy = if state.on_exhausted == "rewind" {
            OnExhausted::Rewind
        } else {
            OnExhausted::Halt
        };
        if policy == OnExhausted::Halt {
            state.status = RunStatus::Halted;
            state.message = format!(
                "the {stage} stage failed {tries} attempts (the last: {}); stopping for a human. Options: `git triad resume {}` with other models (-c roles.{}.models=...), rewind by re-running the task, or abort",
                state.stages[idx].attempts.last().map_or("", |a| a.detail.as_str()),
                state.run_id,
                stage.role()
            );
            rec.event(state, &format!("{stage} retries exhausted: halt"))?;
            return Ok(false);
        }
        let Some(prev) = idx.checked_sub(1) else {
            return self.exhausted(state, rec, "there is no earlier stage to rewind to");
        };
        let p = &state.stages[prev];
        if p.model_index + 1 >= p.models.len() {
            let why = format!(
                "the {} role has no other model to rewind to",
                p.stage.role()
            );
            return self.exhausted(state, rec, &why);
        }
        let pstage = p.stage;
        let old_tip = oid(state.tip())?;
        state.stages[prev].model_index += 1;
        state.stages[prev].commit = None;
        state.stages[prev].verdict = None;
        state.stages[prev].epoch_start = state.stages[prev].attempts.len();
        state.stages[idx].epoch_start = state.stages[idx].attempts.len();
        state.current = prev;
        let accumulated = state.feedback.clone();
        state.feedback = format!(
            "## REWIND\nThe {stage} stage could not be completed on top of the previous {pstage} output; redo the {pstage} stage differently.\n\n{accumulated}"
        );
        let new_tip = oid(state.tip())?;
        self.move_branch(state, new_tip, Some(old_tip), "rewind")?;
        state.message = format!(
            "rewound to {pstage} with model {}",
            state.stages[prev].model()
        );
        self.say(&state.message);
        rec.event(state, &format!("rewind to {pstage}"))?;
        Ok(true)
    }

    fn exhausted(
        &self,
        state: &mut RunState,
        rec: &mut Recorder<'_>,
        why: &str,
    ) -> Result<bool, RunError> {
        let stage = state.stages[state.current].stage;
        state.status = RunStatus::RetriesExhausted;
        state.message = format!("the {stage} stage used up its retries and {why}");
        rec.event(state, "retries exhausted")?;
        Ok(false)
    }
}

fn halt_message(stage: Stage, r: &ArbiterReview) -> String {
    let mut s = format!(
        "the arbiter ({}) halted the pipeline at the {stage} stage: {}",
        r.arbiter_model,
        one_line(&r.reasoning, "no reasoning given")
    );
    for i in r.issues.iter().take(3) {
        s.push_str(&format!(
            "\n  - {} {}:{} {}",
            serde_json::to_value(i.severity)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            i.path,
            i.start_line.map_or("?".to_string(), |l| l.to_string()),
            i.description
        ));
    }
    s.push_str("\nOptions: rewind (re-run the task with other models: --architect/--implementer ...), change the model assignment, or abort (delete the branch). A human can clear the verdict with `git triad override`.");
    s
}

/// One line of at most 100 characters.
pub fn one_line(text: &str, fallback: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .unwrap_or(fallback);
    let mut s: String = line.chars().take(100).collect();
    if line.chars().count() > 100 {
        s.push('…');
    }
    s
}

pub(crate) fn totals(records: &[crate::model::budget::CallRecord]) -> (f64, u64, u64, u64) {
    records.iter().fold((0.0, 0, 0, 0), |acc, r| {
        (
            acc.0 + r.cost_usd,
            acc.1 + r.input_tokens,
            acc.2 + r.output_tokens,
            acc.3 + r.latency_ms,
        )
    })
}

/// Runs a future to completion from synchronous code on a small runtime.
pub(crate) trait BlockOn: std::future::Future + Sized {
    fn await_blocking(self) -> Self::Output {
        RUNTIME.with(|rt| rt.block_on(self))
    }
}

impl<F: std::future::Future> BlockOn for F {}

thread_local! {
    static RUNTIME: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current-thread tokio runtime can always be built");
}
