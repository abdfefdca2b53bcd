//! Object ids as stored in records: hex text in JSON, parsed in one place.
//!
//! Records keep the id as text (SHA-1 today, SHA-256 tomorrow: 40 or 64 hex digits), so a
//! record written by one build reads in another whatever the hash of the repository.

use git2::Oid;
use serde::{Deserialize, Serialize};

use super::GitError;

/// A commit or blob id as recorded in a run record or note.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ObjectId(String);

impl ObjectId {
    /// The id as libgit2 knows it; a record holding something else is an error that names it.
    pub fn oid(&self) -> Result<Oid, GitError> {
        Oid::from_str(&self.0).map_err(|source| GitError::Git {
            what: format!("reading the recorded object id `{}`", self.0),
            source,
        })
    }

    /// The full hex text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The first ten hex digits, as shown to people.
    pub fn short(&self) -> &str {
        &self.0[..10.min(self.0.len())]
    }
}

impl From<Oid> for ObjectId {
    fn from(oid: Oid) -> Self {
        ObjectId(oid.to_string())
    }
}

impl std::fmt::Display for ObjectId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_as_plain_hex_text() {
        let oid = Oid::from_str("1011974793f18699c1b5e1354404d90b21277902").unwrap();
        let id = ObjectId::from(oid);
        assert_eq!(serde_json::to_string(&id).unwrap(), format!("\"{oid}\""));
        assert_eq!(id.oid().unwrap(), oid);
        assert_eq!(id.short(), "1011974793");
        let bad: ObjectId = serde_json::from_str("\"not-hex\"").unwrap();
        assert!(bad.oid().unwrap_err().to_string().contains("not-hex"));
    }
}
