//! The task reads and updates every front end calls: the task list as `task list` shows it
//! (recorded tasks, merged results marked executed first, and committed TaskSpecs with no
//! record yet, each with why it cannot be used when it does not parse) and a person's
//! answers to a task waiting on them. Typed: the command line renders them, a session's
//! tool gets them back as they are.

use git2::Repository;

use crate::task::state::HistoryEntry;
use crate::task::{answers, lifecycle, store, Task, TaskError, TaskState};

/// One task of the list.
#[derive(Debug, Clone)]
pub struct Listed {
    /// The task as its record says (a fresh `OPEN` task for a TaskSpec with no record).
    pub task: Task,
    /// Whether the task has a record (`false`: only its TaskSpec is committed).
    pub recorded: bool,
    /// Why its TaskSpec cannot be used, when it does not parse (clipped to 300 bytes).
    pub problem: Option<String>,
}

/// Every task of `repo`, by slug: the recorded ones (an approved task whose result was
/// merged is marked executed first) and each committed TaskSpec with no record yet.
pub fn list(repo: &Repository) -> Result<Vec<Listed>, TaskError> {
    let mut tasks: Vec<Listed> = Vec::new();
    for t in store::list(repo)? {
        let task = match t.state {
            TaskState::Approved => lifecycle::refresh(repo, &t.slug)?.unwrap_or(t),
            _ => t,
        };
        tasks.push(Listed {
            task,
            recorded: true,
            problem: None,
        });
    }
    for slug in lifecycle::spec_slugs(repo) {
        if !tasks.iter().any(|l| l.task.slug == slug) {
            tasks.push(Listed {
                problem: spec_problem(repo, &slug),
                task: Task::open(&slug, ""),
                recorded: false,
            });
        }
    }
    tasks.sort_by(|a, b| a.task.slug.cmp(&b.task.slug));
    Ok(tasks)
}

/// Task `slug` as it stands (a merged result marks it executed first): its record, a fresh
/// `OPEN` task when only its TaskSpec is committed, `None` when there is neither.
pub fn find(repo: &Repository, slug: &str) -> Result<Option<(Task, Vec<HistoryEntry>)>, TaskError> {
    lifecycle::refresh(repo, slug)?;
    if let Some(rec) = store::load(repo, slug)? {
        return Ok(Some((rec.task, rec.history)));
    }
    Ok(lifecycle::spec_exists(repo, slug).then(|| (Task::open(slug, ""), Vec::new())))
}

/// Records `text` (`Q:`/`A:` lines) as `by`'s answers to task `slug`, which must be waiting
/// on them; answers the task, back at the stage that asked.
pub fn answer(repo: &Repository, slug: &str, text: &str, by: &str) -> Result<Task, TaskError> {
    let Some((task, _)) = find(repo, slug)? else {
        return Err(TaskError::Unknown(slug.to_string()));
    };
    if task.state != TaskState::WaitingOnUser {
        return Err(TaskError::NotWaiting {
            slug: task.slug,
            state: task.state,
        });
    }
    let given = answers::read(text, &task.questions)?;
    lifecycle::answer(repo, slug, given, by)
}

/// Why the committed TaskSpec of `slug` cannot be used (`None`: it parses): read from the
/// working tree, else from HEAD.
fn spec_problem(repo: &Repository, slug: &str) -> Option<String> {
    let path = crate::task::spec::spec_path(slug);
    let from_tree = repo
        .workdir()
        .and_then(|root| crate::fsguard::read_to_string(root, &path).ok());
    let text = match from_tree {
        Some(text) => text,
        None => {
            let tree = repo.head().ok()?.peel_to_tree().ok()?;
            let entry = tree.get_path(std::path::Path::new(&path)).ok()?;
            let blob = repo.find_blob(entry.id()).ok()?;
            match std::str::from_utf8(blob.content()) {
                Ok(t) => t.to_string(),
                Err(_) => return Some("it is not UTF-8 text".into()),
            }
        }
    };
    crate::task::TaskSpec::parse(&text, &path, slug)
        .err()
        .map(|e| crate::bounded::clip(&e.to_string(), 300))
}
