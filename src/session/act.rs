//! Where an orchestrator's tools act: the session branch `triad/session/<id>`, checked out
//! in a worktree of its own under `$GIT_DIR/triad/sessions/<id>/work`, so the user's branch,
//! index and files are never touched; and git triad itself, called in this process on that
//! worktree for every command-shaped tool ([`super::product`]): a blocking subagent with a
//! context of its own.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;

use git2::Repository;
use serde_json::Value;

use super::product::{Product, Request};
use super::tools::{arg, args_list, clip_output};
use crate::privacy::Privacy;
use crate::task::spec::{self, Requirement, Scope, TaskSpec};

/// Lines `grep` answers at most.
const GREP_LINES: usize = 60;

/// The session branch of session `id`.
pub fn branch(id: &str) -> String {
    format!("triad/session/{id}")
}

fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "git {} failed: {}",
            args.first().unwrap_or(&""),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Makes sure session `id`'s worktree exists: created with its branch from `base` the first
/// time, checked out again from the branch when it was removed since.
pub fn ensure_worktree(repo: &Repository, id: &str, base: &str) -> Result<PathBuf, String> {
    let path = crate::git::paths::session_worktree(repo, id);
    if path.join(".git").exists() {
        return Ok(path);
    }
    let git_dir = repo.path().to_path_buf();
    let _ = git(&git_dir, &["worktree", "prune"]);
    let path_s = path.to_string_lossy().to_string();
    let branch = branch(id);
    let exists = repo.find_reference(&format!("refs/heads/{branch}")).is_ok();
    if exists {
        git(&git_dir, &["worktree", "add", "--quiet", &path_s, &branch])?;
    } else {
        git(
            &git_dir,
            &["worktree", "add", "--quiet", "-b", &branch, &path_s, base],
        )?;
    }
    Ok(path)
}

/// What the orchestrator's tools act on.
pub struct Workshop {
    /// The session's worktree.
    pub worktree: PathBuf,
    /// git triad itself, for the tools that are its commands (see [`Request`]).
    pub product: Arc<dyn Product>,
    /// What never reaches a model.
    pub privacy: Privacy,
    /// Hears what a command says while it works (a run's stage lines, without their
    /// `triad: ` prefix), for a screen to show; the answer is unchanged.
    pub progress: Option<Progress>,
}

/// A listener for the lines a tool's work says as it goes.
pub type Progress = super::product::Heard;

impl Workshop {
    /// Runs tool `name` (not a routing tool); `Err` is a failure the model is told.
    pub async fn call(&self, name: &str, args: &Value) -> Result<String, String> {
        let out = match Request::of(name, args)? {
            Some(req) => self.ask(req).await,
            None => match name {
                "list_files" => {
                    self.list_files(args.get("dir").and_then(Value::as_str).unwrap_or(""))
                }
                "read_file" => self.read_file(arg(args, "path")?),
                "grep" => self.grep(
                    arg(args, "pattern")?,
                    args.get("dir").and_then(Value::as_str).unwrap_or(""),
                ),
                "create_task" => self.create_task(args),
                other => Err(format!("there is no tool `{other}`")),
            },
        }?;
        Ok(clip_output(&out))
    }

    /// Has git triad do `req` on the worktree, off the session's async threads (a run
    /// blocks until it ends), passing a run's stage lines to [`Workshop::progress`].
    async fn ask(&self, req: Request) -> Result<String, String> {
        let product = Arc::clone(&self.product);
        let worktree = self.worktree.clone();
        let progress = self.progress.clone();
        let command = req.command();
        let heard: super::product::Heard = Arc::new(move |line: &str| {
            if let (Some(say), Some(step)) = (&progress, line.strip_prefix("triad: [")) {
                say(&format!("[{step}"));
            }
        });
        let answer = tokio::task::spawn_blocking(move || product.call(&worktree, &req, heard))
            .await
            .map_err(|e| format!("git triad {command} did not finish: {e}"))?;
        answer.told(command)
    }

    fn tree(&self) -> Result<(Repository, git2::Oid), String> {
        let repo = Repository::open(&self.worktree)
            .map_err(|e| format!("the session worktree cannot be opened: {e}"))?;
        let tree = repo
            .head()
            .and_then(|h| h.peel_to_tree())
            .map_err(|e| format!("the session branch has no tree: {e}"))?
            .id();
        Ok((repo, tree))
    }

    /// Every file path of the session branch under `dir`, with its blob, private ones left out.
    fn files(&self, dir: &str) -> Result<(Repository, Vec<(String, git2::Oid)>), String> {
        let (repo, tree) = self.tree()?;
        let dir = dir.trim().trim_matches('/');
        let mut out = Vec::new();
        {
            let tree = repo.find_tree(tree).map_err(|e| e.to_string())?;
            tree.walk(git2::TreeWalkMode::PreOrder, |root, entry| {
                if entry.kind() == Some(git2::ObjectType::Blob) {
                    let path = format!("{root}{}", entry.name().unwrap_or(""));
                    let under =
                        dir.is_empty() || path == dir || path.starts_with(&format!("{dir}/"));
                    if under && self.privacy.by_name(&path).is_none() {
                        out.push((path, entry.id()));
                    }
                }
                git2::TreeWalkResult::Ok
            })
            .map_err(|e| e.to_string())?;
        }
        Ok((repo, out))
    }

    fn list_files(&self, dir: &str) -> Result<String, String> {
        let (_, files) = self.files(dir)?;
        if files.is_empty() {
            return Ok(format!("no files under `{dir}`"));
        }
        Ok(files
            .into_iter()
            .map(|(p, _)| p)
            .collect::<Vec<_>>()
            .join("\n"))
    }

    fn read_file(&self, path: &str) -> Result<String, String> {
        let rel = crate::edit::check_path(path).map_err(|e| e.to_string())?;
        let (repo, tree) = self.tree()?;
        let blob = repo
            .find_tree(tree)
            .and_then(|t| t.get_path(Path::new(&rel)))
            .and_then(|e| repo.find_blob(e.id()))
            .map_err(|_| {
                format!("{rel} is not a file of the session branch (list_files shows them)")
            })?;
        if let Some(why) = self.privacy.check(&rel, Some(blob.content())) {
            return Err(format!(
                "{rel} is private and never shown to a model: {why}"
            ));
        }
        if blob.content().contains(&0) {
            return Err(format!("{rel} is a binary file"));
        }
        Ok(String::from_utf8_lossy(blob.content()).into_owned())
    }

    fn grep(&self, pattern: &str, dir: &str) -> Result<String, String> {
        if pattern.is_empty() {
            return Err("the pattern is empty".into());
        }
        let (repo, files) = self.files(dir)?;
        let mut hits = Vec::new();
        let mut more = 0usize;
        for (path, oid) in files {
            let Ok(blob) = repo.find_blob(oid) else {
                continue;
            };
            let bytes = blob.content();
            if bytes.contains(&0) || self.privacy.check(&path, Some(bytes)).is_some() {
                continue;
            }
            for (n, line) in String::from_utf8_lossy(bytes).lines().enumerate() {
                if line.contains(pattern) {
                    if hits.len() < GREP_LINES {
                        hits.push(format!(
                            "{path}:{}: {}",
                            n + 1,
                            crate::bounded::clip(line.trim_end(), 200)
                        ));
                    } else {
                        more += 1;
                    }
                }
            }
        }
        if hits.is_empty() {
            return Ok(format!("no line contains `{pattern}`"));
        }
        if more > 0 {
            hits.push(format!("… and {more} more lines"));
        }
        Ok(hits.join("\n"))
    }

    fn create_task(&self, args: &Value) -> Result<String, String> {
        let slug = arg(args, "slug")?;
        if !spec::valid_slug(slug) {
            return Err(format!(
                "`{slug}` is not a valid slug: use lowercase letters, digits and dashes"
            ));
        }
        let task = TaskSpec {
            id: slug.to_string(),
            title: arg(args, "title")?.to_string(),
            description: args
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            requirements: args_list(args, "requirements")
                .into_iter()
                .enumerate()
                .map(|(i, text)| Requirement {
                    id: format!("R{}", i + 1),
                    text,
                    files: Vec::new(),
                    functions: Vec::new(),
                })
                .collect(),
            acceptance: args_list(args, "acceptance"),
            examples: Vec::new(),
            scope: Scope {
                include: args_list(args, "include"),
                ..Scope::default()
            },
            verify: None,
        };
        if task.requirements.is_empty() {
            return Err("a task needs at least one requirement".into());
        }
        let text = toml::to_string(&task).map_err(|e| format!("cannot write the task: {e}"))?;
        let rel = spec::spec_path(slug);
        // The same checks a run makes when it reads the file.
        let parsed = TaskSpec::parse(&text, &rel, slug).map_err(|e| e.to_string())?;
        let empty = parsed.unfilled();
        if !empty.is_empty() {
            return Err(format!(
                "the task leaves empty what a run needs: {}",
                empty.join(", ")
            ));
        }
        let path = crate::fsguard::inside_repo(&self.worktree, &rel).map_err(|e| e.to_string())?;
        let replaced = path.exists();
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
        }
        std::fs::write(&path, &text).map_err(|e| e.to_string())?;
        git(&self.worktree, &["add", "--", &rel])?;
        if git(&self.worktree, &["diff", "--cached", "--quiet", "--", &rel]).is_ok() {
            return Ok(format!(
                "{rel} already says exactly this on the session branch; next: run_pipeline {{\"task\": \"{slug}\"}}"
            ));
        }
        let message = format!(
            "task: {} {slug}\n\nWritten by a git triad session orchestrator.",
            if replaced { "update" } else { "add" }
        );
        let mut argv = vec!["commit", "--quiet", "--no-verify", "-m", message.as_str()];
        if git(&self.worktree, &["config", "user.email"]).is_err() {
            argv.splice(
                0..0,
                [
                    "-c",
                    "user.name=git-triad",
                    "-c",
                    "user.email=git-triad@localhost",
                ],
            );
        }
        git(&self.worktree, &argv)?;
        let commit = git(&self.worktree, &["rev-parse", "--short", "HEAD"])?;
        Ok(format!(
            "{} {rel} with {} requirement(s), committed on the session branch as {}; next: run_pipeline {{\"task\": \"{slug}\"}}",
            if replaced { "updated" } else { "wrote" },
            task.requirements.len(),
            commit.trim()
        ))
    }
}
