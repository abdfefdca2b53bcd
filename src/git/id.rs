//! Object ids as stored in records: hex text in JSON, parsed in one place.
//!
//! Records keep the id as text (40 hex digits in SHA-1 repositories, 64 in SHA-256 ones), so
//! a record reads the same whatever the hash of the repository.

use git2::{ObjectFormat, Oid};
use serde::{Deserialize, Serialize};

use super::GitError;

/// A commit or blob id as recorded in a run record or note.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ObjectId(String);

impl ObjectId {
    /// The id as libgit2 knows it; a record holding something else is an error that names it.
    pub fn oid(&self) -> Result<Oid, GitError> {
        parse_oid(&self.0).map_err(|source| GitError::Git {
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

/// Parses a full object id of either width: 64 hex digits are a SHA-256 id, anything else
/// is read as SHA-1 (so a malformed id fails with libgit2's own message).
///
/// `git2::Oid::from_str` alone always parses SHA-1 and rejects a 64-digit id, so every id
/// that comes from text (records, hook input, git's output) goes through here.
pub fn parse_oid(hex: &str) -> Result<Oid, git2::Error> {
    let format = match hex.len() {
        SHA256_HEX_LEN => ObjectFormat::Sha256,
        _ => ObjectFormat::Sha1,
    };
    Oid::from_str_ext(hex, format)
}

/// The length of a SHA-256 object id in hex digits.
const SHA256_HEX_LEN: usize = 64;

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

    #[test]
    fn sha256_ids_parse_at_their_full_width() {
        let hex = "0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9";
        let oid = parse_oid(hex).unwrap();
        assert_eq!(oid.object_format(), ObjectFormat::Sha256);
        assert_eq!(oid.to_string(), hex);
        assert_eq!(ObjectId::from(oid).oid().unwrap(), oid);
        let sha1 = parse_oid(&hex[..40]).unwrap();
        assert_eq!(sha1.object_format(), ObjectFormat::Sha1);
        // Between the two widths is neither.
        assert!(parse_oid(&hex[..50]).is_err());
    }
}
