//! The TaskSpec a run starts from: committed at HEAD, unmodified, filled in.

use git2::{Repository, Status};

use crate::pipeline::start::StartError;
use crate::task::{spec, TaskSpec};

/// Loads the TaskSpec as committed at HEAD, refusing an untracked or modified one; returns
/// the spec, its blob id and HEAD (the run's base).
pub fn committed_task(
    repo: &Repository,
    slug: &str,
) -> Result<(TaskSpec, git2::Oid, git2::Oid), StartError> {
    if !spec::valid_slug(slug) {
        return Err(StartError::BadSlug(slug.to_string()));
    }
    let path = spec::spec_path(slug);
    let head = repo
        .head()
        .ok()
        .and_then(|h| h.peel_to_commit().ok())
        .ok_or(StartError::NoCommits)?;
    let status = repo.status_file(std::path::Path::new(&path)).ok();
    let tree = head.tree()?;
    let entry = tree.get_path(std::path::Path::new(&path));
    match (entry, status) {
        (Err(_), Some(s)) if s.contains(Status::WT_NEW) || s.contains(Status::INDEX_NEW) => {
            Err(StartError::SpecNotCommitted { path })
        }
        (Err(_), _) => Err(StartError::NoSuchTask {
            slug: slug.to_string(),
            path,
        }),
        (Ok(_), Some(s)) if !s.is_empty() && s != Status::CURRENT => {
            Err(StartError::SpecModified { path })
        }
        (Ok(entry), _) => {
            let blob = repo.find_blob(entry.id())?;
            let text = std::str::from_utf8(blob.content())
                .map_err(|_| StartError::SpecNotText { path: path.clone() })?;
            let spec = TaskSpec::parse(text, &path, slug)?;
            let fields = spec.unfilled();
            if !fields.is_empty() {
                return Err(StartError::SpecUnfilled { path, fields });
            }
            Ok((spec, entry.id(), head.id()))
        }
    }
}
