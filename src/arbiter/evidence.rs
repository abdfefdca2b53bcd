//! A change's evidence, computed once per tree pair and handed to whoever needs it.
//!
//! Running code is the dear part of a review's facts: the behaviour diff calls the changed
//! functions on both trees, in the box. A run's building stage takes it to hold an attempt
//! to the facts (a refactor that changes results, a call that now raises), and the
//! arbiter's review of the same attempt needs it again as a fact it is shown: the same two
//! trees, the same changed lines, the same inputs. [`Behaviours`] keeps what was taken, so
//! the second asker gets the first one's diff instead of running the code again.

use std::cell::RefCell;

use git2::Oid;

use crate::probe::{BehaviourDiff, ChangedLines, ProbeRunner};

/// What one behaviour diff was taken on: the two trees, the lines of the change the
/// runner knows (a review withholds private files, so its lines may be fewer), and the
/// inputs given beside the generated ones.
#[derive(PartialEq, Eq)]
struct Pair {
    base: Oid,
    new: Oid,
    changed: ChangedLines,
    examples: Vec<String>,
}

/// The behaviour diffs taken so far, by what they were taken on. Meant to live as long as
/// one caller's probe settings do (a run, one `git triad review`): the settings decide
/// whether and how the code runs, and are not part of the key.
#[derive(Default)]
pub struct Behaviours {
    taken: RefCell<Vec<(Pair, Taken)>>,
}

/// What [`ProbeRunner::behaviour`] answered: nothing to run, the diff, or why not.
type Taken = Option<Result<BehaviourDiff, String>>;

impl Behaviours {
    /// The behaviour diff of `runner`'s change with `examples` among the inputs (see
    /// [`ProbeRunner::behaviour`]), taken at most once per tree pair.
    pub fn of(&self, runner: &ProbeRunner<'_>, examples: &[String]) -> Taken {
        let Some((base, new, changed)) = runner.pair() else {
            return runner.behaviour(examples);
        };
        let pair = Pair {
            base,
            new,
            changed: changed.clone(),
            examples: examples.to_vec(),
        };
        if let Some((_, taken)) = self.taken.borrow().iter().find(|(p, _)| *p == pair) {
            return taken.clone();
        }
        let taken = runner.behaviour(examples);
        self.taken.borrow_mut().push((pair, taken.clone()));
        taken
    }

    /// How many diffs were taken (each tree pair once).
    pub fn taken(&self) -> usize {
        self.taken.borrow().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::{ProbePolicy, ProbeSettings};

    const MEAN: &str = "def mean(xs):\n    total = 0\n    for x in xs:\n        total += x\n    return total / len(xs)\n";

    /// A repository with `stats.py` at its base, and the tree of a one-line bug in it.
    fn pair() -> (tempfile::TempDir, git2::Repository, Oid, Oid) {
        let dir = tempfile::tempdir().unwrap();
        let repo = git2::Repository::init(dir.path()).unwrap();
        let tree = |text: &str| {
            let blob = repo.blob(text.as_bytes()).unwrap();
            let mut b = repo.treebuilder(None).unwrap();
            b.insert("stats.py", blob, 0o100644).unwrap();
            b.write().unwrap()
        };
        let (base, new) = (tree(MEAN), tree(&MEAN.replace("in xs:", "in xs[1:]:")));
        (dir, repo, base, new)
    }

    /// The building stage's check and the review of one attempt ask for the same tree
    /// pair's behaviour: the code runs once, and both get the same diff; another pair or
    /// other changed lines are another diff.
    #[test]
    fn a_tree_pairs_behaviour_is_taken_once_for_every_asker() {
        let (_d, repo, base, new) = pair();
        let changed: ChangedLines = [("stats.py".to_string(), (2..=4).collect())].into();
        let runner = |changed: &ChangedLines| {
            crate::probe::ProbeRunner::new(
                &repo,
                repo.find_tree(new).unwrap(),
                ProbePolicy::Run(ProbeSettings::for_repo(&repo, None, Default::default())),
            )
            .about_change(changed.clone(), Some(repo.find_tree(base).unwrap()))
        };
        let behaviours = Behaviours::default();
        let first = behaviours.of(&runner(&changed), &[]).unwrap().unwrap();
        assert!(!first.differences.is_empty(), "{first:?}");
        let second = behaviours.of(&runner(&changed), &[]).unwrap().unwrap();
        assert_eq!(first, second);
        assert_eq!(behaviours.taken(), 1);
        let fewer: ChangedLines = [("stats.py".to_string(), [3].into())].into();
        behaviours.of(&runner(&fewer), &[]);
        behaviours.of(&runner(&changed), &["mean([5])".to_string()]);
        assert_eq!(behaviours.taken(), 3);
    }
}
