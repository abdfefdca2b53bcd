//! Building solutions in a parallel exploration: the request a candidate is given, the
//! candidates' calls made together, and an answer turned into a commit on top of a parent
//! (edit blocks applied as in a normal attempt, in memory, within the task's scope, never
//! to a private file).

use git2::{Oid, Tree};

use crate::config::{prompt, EditFormat};
use crate::edit::summarize_failures;
use crate::git::{self, Context as _, FileStat, TreeFiles};
use crate::model::ChatRequest;
use crate::pipeline::answer::{apply_answer, read_answer, writes_whole_files, ReadAnswer};
use crate::pipeline::context::{stage_message, StageContext};
use crate::pipeline::run::{Run, RunError};
use crate::pipeline::stage::Stage;
use crate::task::outcome::Outcome;

/// A solution committed from an answer.
pub(super) struct Built {
    /// Its commit, on top of the parent it was built on.
    pub commit: Oid,
    /// The answer's one-line summary.
    pub summary: String,
    /// What it changed.
    pub changed: Vec<FileStat>,
}

/// What a request is made of besides the files: which prompt, what it is shown of earlier
/// work, and how many characters of file contents fit.
pub(super) struct Ask<'a> {
    /// The role prompt (`candidate`, `synthesizer`).
    pub role: &'a str,
    /// The change it builds on (the winner's own diff, for the synthesis).
    pub previous_diff: &'a str,
    /// What else it must know (the other candidates, for the synthesis).
    pub feedback: &'a str,
    /// Characters of file contents: the smallest budget among the models asked, so every
    /// candidate is given the identical message.
    pub char_budget: usize,
}

impl Run<'_> {
    /// Characters of file contents that fit every one of `models`.
    pub(in crate::pipeline::run) fn char_budget(&self, models: &[String]) -> usize {
        let config = &self.env.config.config;
        models
            .iter()
            .map(|m| crate::pipeline::context::file_char_budget(config, m) * 2)
            .min()
            .unwrap_or(60_000)
            / 2
    }

    /// The request for `model` to write a solution on top of `parent`. The user message
    /// depends only on `parent` and `ask`; the system prompt only on the model's edit
    /// format.
    pub(super) fn explore_request(
        &self,
        model: &str,
        parent: &Tree<'_>,
        ask: &Ask<'_>,
    ) -> Result<ChatRequest, RunError> {
        let repo = self.env.repo;
        let files = TreeFiles::new(repo, parent.clone());
        let base = self.base_tree()?;
        let changed: Vec<String> = git::diff_trees(repo, Some(&base), parent)
            .ctx("diffing")?
            .iter()
            .map(|f| f.path.clone())
            .collect();
        let user = stage_message(&StageContext {
            stage: Stage::Implement,
            task: &self.spec,
            files: &files,
            changed_so_far: &changed,
            previous_diff: ask.previous_diff,
            flags: "",
            feedback: ask.feedback,
            facts: "",
            char_budget: ask.char_budget,
            hunks: &|_| None,
            outlines: &self.outlines,
            privacy: &self.privacy,
        });
        let config = &self.env.config.config;
        let root = self.env.repo_root();
        let protocol = match config.models.get(model).map(|m| m.edit_format) {
            Some(EditFormat::Whole) => "protocol-whole",
            _ => "protocol",
        };
        let system = format!(
            "{}\n\n{}",
            prompt(config, ask.role, Some(&root)),
            prompt(config, protocol, Some(&root))
        );
        let role_cfg = config.roles.get(Stage::Implement.role());
        let mut req = ChatRequest::new(
            Some(system),
            user,
            role_cfg.max_output_tokens.unwrap_or(8192),
        );
        req.temperature = role_cfg.temperature;
        Ok(req)
    }

    /// Turns `model`'s answer into a commit on top of `parent` (`what` names it in the
    /// commit message: `candidate`, `synthesis`). `Ok(Err(why))` when the answer cannot be
    /// used: no metadata, another outcome than APPROVE, edits that do not apply, or (unless
    /// `may_be_empty`) no change at all.
    pub(super) fn build_answer(
        &self,
        model: &str,
        parent: Oid,
        answer: &str,
        what: &str,
        may_be_empty: bool,
    ) -> Result<Result<Built, String>, RunError> {
        let repo = self.env.repo;
        let parent_tree = repo
            .find_commit(parent)
            .and_then(|c| c.tree())
            .ctx("reading a solution's parent tree")?;
        let whole = writes_whole_files(&self.env.config.config, model);
        let ReadAnswer { meta, blocks } = match read_answer(answer, whole) {
            Ok(a) => a,
            Err(why) => return Ok(Err(why)),
        };
        if meta.outcome != Outcome::Approve {
            return Ok(Err(format!("it answered {}", meta.outcome.as_str())));
        }
        let files = TreeFiles::new(repo, parent_tree.clone());
        let applied = match apply_answer(&files, &self.privacy, &self.spec, &blocks) {
            Ok(a) => a,
            Err(failures) => {
                let ok = blocks.len().saturating_sub(failures.len());
                return Ok(Err(summarize_failures(&failures, ok)));
            }
        };
        let tree = match git::build_tree(repo, &parent_tree, &applied.files) {
            Ok(t) => t,
            Err(e) => return Ok(Err(format!("its files cannot be stored: {e}"))),
        };
        let new_tree = repo.find_tree(tree).ctx("reading a solution tree")?;
        let diff = git::diff_trees(repo, Some(&parent_tree), &new_tree).ctx("diffing")?;
        let changed = FileStat::of(&diff);
        if changed.is_empty() && !may_be_empty {
            return Ok(Err("no edit changed a file".into()));
        }
        let summary = crate::pipeline::record::one_line(&meta.summary, what);
        let message = format!(
            "triad({what}): {summary}\n\nTriad-Run: {}\nTriad-Stage: {what}\nTriad-Model: {model}\n",
            self.state.run_id
        );
        let commit = git::commit(repo, tree, &[parent], &message)?;
        Ok(Ok(Built {
            commit,
            summary,
            changed,
        }))
    }
}

pub(in crate::pipeline::run) use crate::model::fanout::join_all;

/// A branch name part for a model: what a ref may hold, the rest replaced by `-`.
pub(super) fn ref_safe(model: &str) -> String {
    let s: String = model
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    s.trim_matches('-').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::run::BlockOn;

    #[test]
    fn join_all_waits_for_all_at_once_and_keeps_order() {
        let slow = |ms: u64, v: u32| async move {
            tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
            v
        };
        let out = join_all(vec![slow(30, 1), slow(10, 2), slow(20, 3)]).await_blocking();
        assert_eq!(out, vec![1, 2, 3]);
    }

    #[test]
    fn model_names_become_ref_parts() {
        assert_eq!(ref_safe("llama3:8b"), "llama3-8b");
        assert_eq!(ref_safe("claude-3.5"), "claude-3-5");
        assert_eq!(ref_safe("model-a"), "model-a");
    }
}
