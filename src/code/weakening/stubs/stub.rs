//! A replacement of a function as the tests write it, a call an assertion makes, when the
//! one reaches the other, and the finding it is.

use super::super::weakened_finding;
use crate::code::Finding;

/// A replacement of a function, as the tests write it.
pub(super) struct Stub {
    /// Its line.
    pub(super) line: u32,
    /// What it says, by meaning (the base's replacements are no finding).
    pub(super) key: String,
    /// How it is written.
    pub(super) shown: String,
    /// What it replaces.
    pub(super) target: Target,
    /// The line range of the test it is confined to, or `None` for the whole file.
    pub(super) scope: Option<(u32, u32)>,
}

/// What a replacement replaces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Target {
    /// Every call through a bare name (`add`, or `calc` of `calc.add`).
    Name(String),
    /// The function `name` of the module or class `owner` (`calc`, `pkg.calc`, `Calc`).
    Member { owner: String, name: String },
}

/// A call an assertion makes on its computed side.
pub(super) struct Call {
    /// The callee as written (`add`, `calc.add`).
    pub(super) written: String,
    /// Its first segment.
    pub(super) first: String,
    /// Its owner through the file's imports (`calc` for `add` imported from `calc`), and
    /// its last segment.
    pub(super) member: Option<(String, String)>,
    /// The assertion, as written.
    pub(super) assertion: String,
    /// The assertion's line.
    pub(super) line: u32,
    /// The assertion's `path:line`.
    pub(super) at: String,
}

impl Call {
    /// Whether a replacement of `target` is what this call reaches.
    pub(super) fn replaced_by(&self, target: &Target) -> bool {
        match target {
            Target::Name(n) => self.first == *n,
            Target::Member { owner, name } => self.member.as_ref().is_some_and(|(o, m)| {
                m == name
                    && (o == owner
                        || o.ends_with(&format!(".{owner}"))
                        || owner.ends_with(&format!(".{o}")))
            }),
        }
    }
}

/// The finding of a replacement that an assertion's call goes through.
pub(super) fn replaced(path: &str, stub: &Stub, call: &Call) -> Finding {
    weakened_finding(
        path,
        stub.line,
        format!(
            "the change replaces `{}`, which the assertion {} ({}) calls, with {} in the tests: the assertion checks the stub, not the code",
            call.written, call.assertion, call.at, stub.shown
        ),
    )
}
