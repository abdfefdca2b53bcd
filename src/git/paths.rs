//! The files git triad keeps in a repository's git directory, each named once, with whose
//! it is.
//!
//! A repository with linked worktrees (`git worktree add`) has one git directory per
//! worktree (`$GIT_DIR`, [`Repository::path`]) and one they all share (`$GIT_COMMON_DIR`,
//! [`Repository::commondir`]); without linked worktrees both are `.git`. What belongs to
//! one checkout lives in the first, what every checkout must see lives in the second:
//!
//! | path | scope | why |
//! |---|---|---|
//! | `triad/ledger.jsonl` | worktree | the cost of every call made from this checkout |
//! | `triad/notices/<name>` | worktree | a notice said once in this checkout |
//! | `triad/sessions/<id>/work` | worktree | a session's own worktree, made from this one |
//! | `TRIAD_ANSWERS` | worktree | the answers being edited, like git's `COMMIT_EDITMSG` |
//! | `triad/locks/<run>.lock` | shared | a run is one run whichever checkout resumes it |
//! | `triad/sandboxes/` | shared | temporary worktrees are the common directory's |
//! | `triad/init-config.json` | shared | `init` changes the repository's own config |
//! | `triad/gate-cache` | shared | facts the pre-push gate worked out once, by object id |
//!
//! Nothing here is ever committed, pushed or cloned.

use std::path::{Path, PathBuf};

use git2::Repository;

/// `$GIT_DIR/triad`: what belongs to the checkout `repo` is opened in.
fn worktree_dir(repo: &Repository) -> PathBuf {
    repo.path().join("triad")
}

/// `$GIT_COMMON_DIR/triad` of the common directory `common_dir`: what every checkout of
/// the repository shares.
fn shared_dir(common_dir: &Path) -> PathBuf {
    common_dir.join("triad")
}

/// The cost ledger the daily and monthly caps read, one JSON line per model call (per
/// worktree).
pub fn ledger(repo: &Repository) -> PathBuf {
    worktree_dir(repo).join("ledger.jsonl")
}

/// The marker that keeps the last line said under the notice `name`, so it is said once
/// (per worktree).
pub fn notice(repo: &Repository, name: &str) -> PathBuf {
    worktree_dir(repo).join("notices").join(name)
}

/// The worktree in which session `id`'s orchestrators work on its branch (per worktree).
pub fn session_worktree(repo: &Repository, id: &str) -> PathBuf {
    worktree_dir(repo).join("sessions").join(id).join("work")
}

/// The file the user's editor opens to answer a task's questions (per worktree, beside
/// git's own `COMMIT_EDITMSG`).
pub fn answers_draft(repo: &Repository) -> PathBuf {
    repo.path().join("TRIAD_ANSWERS")
}

/// The directory of the run locks (shared).
pub fn run_locks(repo: &Repository) -> PathBuf {
    shared_dir(repo.commondir()).join("locks")
}

/// The lock file of run `run_id`, which the process working on the run holds (shared).
pub fn run_lock(repo: &Repository, run_id: &str) -> PathBuf {
    run_locks(repo).join(format!("{run_id}.lock"))
}

/// The records of the temporary worktrees made for the box in the repository whose common
/// directory is `common_dir`, so leftovers of a killed process can be removed (shared).
pub fn sandbox_records(common_dir: &Path) -> PathBuf {
    shared_dir(common_dir).join("sandboxes")
}

/// What the pre-push gate worked out once and keeps by object id (a commit's patch id, what
/// a note blob says), in the repository whose common directory is `common_dir` (shared).
pub fn gate_cache(common_dir: &Path) -> PathBuf {
    shared_dir(common_dir).join("gate-cache")
}

/// What `git triad init` changed in the repository's git config, so `--uninstall` undoes
/// exactly that (shared).
pub fn init_record(repo: &Repository) -> PathBuf {
    shared_dir(repo.commondir()).join("init-config.json")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_linked_worktree_keeps_its_own_files_and_shares_the_rest() {
        let tmp = tempfile::tempdir().unwrap();
        let main = Repository::init(tmp.path().join("main")).unwrap();
        let sig = git2::Signature::now("t", "t@example.com").unwrap();
        let tree = main
            .find_tree(main.index().unwrap().write_tree().unwrap())
            .unwrap();
        main.commit(Some("HEAD"), &sig, &sig, "init", &tree, &[])
            .unwrap();
        main.worktree("other", &tmp.path().join("other"), None)
            .unwrap();
        let other = Repository::open(tmp.path().join("other")).unwrap();
        let (own, common) = (other.path().to_path_buf(), other.commondir().to_path_buf());
        assert_ne!(
            own, common,
            "a linked worktree has a git directory of its own"
        );

        for p in [
            ledger(&other),
            notice(&other, "roles"),
            session_worktree(&other, "s1"),
            answers_draft(&other),
        ] {
            assert!(p.starts_with(&own), "{} is this worktree's", p.display());
        }
        for p in [
            run_lock(&other, "r1"),
            sandbox_records(other.commondir()),
            init_record(&other),
        ] {
            assert!(
                p.starts_with(&common) && !p.starts_with(&own),
                "{} is shared",
                p.display()
            );
        }
        // The main checkout shares the common directory, and has files of its own.
        assert_eq!(
            main.commondir().canonicalize().unwrap(),
            common.canonicalize().unwrap()
        );
        assert!(!ledger(&main).starts_with(&own));
    }
}
