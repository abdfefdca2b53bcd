//! What the pre-push gate works out once and keeps: the patch id of a commit, and the
//! [`Summary`] of a note blob, each by object id, in `$GIT_COMMON_DIR/triad/gate-cache`.
//!
//! Neither can go stale: an object id names its content, a commit's patch id is a function
//! of its tree and its first parent's, and a note blob's summary is a function of its text
//! and of how this build reads notes, which the file's first line names ([`header`]: a file
//! written by a build that reads differently is thrown away whole). So a push of 10 000 noted
//! commits computes 10 000 diffs and reads 10 000 notes once, and afterwards looks them up.
//!
//! After the first line, the file is a run of fixed-layout records (a commit: `c`, its id, a
//! patch id or none; a note blob: `b`, its id, its summary), and only grows: new records are
//! appended in one write, so two gates running at once lose nothing. A record that does not
//! read (a write cut short) ends the reading, and the next save writes the file anew from
//! what did read. It lives in the git directory: never committed, pushed or cloned.

use std::io::Write as _;
use std::path::PathBuf;

use git2::Oid;

use super::idhash::IdMap;
use super::summary::{PatchKey, Summary};
use crate::verdict::Verdict;

/// The first line of the file: its format, the width of object ids in it, and the build and
/// reading rules its summaries were made with.
fn header(oid_len: usize) -> String {
    format!(
        "git-triad gate cache 2 oid {oid_len} {} rules {}\n",
        env!("CARGO_PKG_VERSION"),
        crate::notes::READ_RULES
    )
}

/// The facts kept, and those learned since they were read.
#[derive(Debug, Default)]
pub(crate) struct GateCache {
    path: Option<PathBuf>,
    patch_ids: IdMap<Oid, Option<PatchKey>>,
    summaries: IdMap<Oid, Summary>,
    /// The records that read, as read (written again when the file is written anew).
    kept: Vec<u8>,
    /// Records to add to the file.
    learned: Vec<u8>,
    /// The width of the object ids of the records.
    oid_len: Option<usize>,
    /// Whether the file must be written anew (absent, from another build, or cut short).
    fresh: bool,
}

/// A verdict as one byte (0: none).
fn verdict_byte(v: Option<Verdict>) -> u8 {
    v.map_or(0, |v| {
        1 + Verdict::ALL.iter().position(|a| *a == v).unwrap_or(0) as u8
    })
}

fn byte_verdict(b: u8) -> Option<Option<Verdict>> {
    match b {
        0 => Some(None),
        n => Verdict::ALL.get(usize::from(n) - 1).map(|v| Some(*v)),
    }
}

/// Verdicts as a bit set.
fn verdict_bits(vs: &[Verdict]) -> u8 {
    vs.iter()
        .fold(0, |bits, v| bits | (1 << (verdict_byte(Some(*v)) - 1)))
}

fn bits_verdicts(bits: u8) -> Vec<Verdict> {
    Verdict::ALL
        .into_iter()
        .enumerate()
        .filter(|(i, _)| bits & (1 << i) != 0)
        .map(|(_, v)| v)
        .collect()
}

const VALID: u8 = 1;
const OVERRIDES: u8 = 2;
const FAILS_CLOSED: u8 = 4;

/// Reads records from the front of `bytes`.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let out = self.bytes.get(self.at..self.at + n)?;
        self.at += n;
        Some(out)
    }

    fn byte(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }

    fn key(&mut self) -> Option<PatchKey> {
        self.take(32)?.try_into().ok()
    }
}

impl GateCache {
    /// Reads the cache at `path`; an absent, unreadable or foreign file is an empty cache.
    pub fn load(path: PathBuf) -> GateCache {
        let mut cache = GateCache {
            fresh: true,
            ..GateCache::default()
        };
        if let Ok(bytes) = std::fs::read(&path) {
            cache.read(&bytes);
        }
        cache.path = Some(path);
        cache
    }

    /// Takes the file's bytes in, as far as they read.
    fn read(&mut self, bytes: &[u8]) {
        let Some(eol) = bytes.iter().position(|b| *b == b'\n') else {
            return;
        };
        let Some(oid_len) = [20, 32]
            .into_iter()
            .find(|n| bytes[..=eol] == *header(*n).as_bytes())
        else {
            return;
        };
        self.oid_len = Some(oid_len);
        let body = &bytes[eol + 1..];
        let mut r = Reader { bytes: body, at: 0 };
        while r.at < body.len() {
            let start = r.at;
            if self.record(&mut r, oid_len).is_none() {
                // Cut short or garbled: keep what read, and write the file anew next time.
                self.kept = body[..start].to_vec();
                return;
            }
        }
        self.kept = body.to_vec();
        self.fresh = false;
    }

    /// Reads one record.
    fn record(&mut self, r: &mut Reader<'_>, oid_len: usize) -> Option<()> {
        let kind = r.byte()?;
        let id = Oid::from_bytes(r.take(oid_len)?).ok()?;
        match kind {
            b'c' => {
                let has = r.byte()?;
                let key = r.key()?;
                self.patch_ids.insert(id, (has == 1).then_some(key));
            }
            b'b' => {
                let relaxed = byte_verdict(r.byte()?)?;
                let strict = byte_verdict(r.byte()?)?;
                let flags = r.byte()?;
                let mentions = bits_verdicts(r.byte()?);
                let n = r.byte()?;
                let patch_ids = (0..n).map(|_| r.key()).collect::<Option<Vec<_>>>()?;
                self.summaries.insert(
                    id,
                    Summary {
                        relaxed,
                        strict,
                        valid: flags & VALID != 0,
                        overrides: flags & OVERRIDES != 0,
                        fails_closed: flags & FAILS_CLOSED != 0,
                        mentions,
                        patch_ids,
                    },
                );
            }
            _ => return None,
        }
        Some(())
    }

    /// Starts a record about `id`; `false` (and nothing written) when its width is not that
    /// of the file's ids.
    fn begin(&mut self, kind: u8, id: Oid) -> bool {
        let len = id.as_bytes().len();
        if *self.oid_len.get_or_insert(len) != len {
            return false;
        }
        self.learned.push(kind);
        self.learned.extend_from_slice(id.as_bytes());
        true
    }

    /// The patch id of `commit`, when known (`Some(None)`: its diff is empty).
    pub fn patch_id(&self, commit: Oid) -> Option<Option<PatchKey>> {
        self.patch_ids.get(&commit).copied()
    }

    /// Keeps the patch id of `commit`.
    pub fn learn_patch_id(&mut self, commit: Oid, pid: Option<PatchKey>) {
        if self.begin(b'c', commit) {
            self.learned.push(u8::from(pid.is_some()));
            self.learned.extend_from_slice(&pid.unwrap_or([0; 32]));
        }
        self.patch_ids.insert(commit, pid);
    }

    /// The summary of note blob `blob`, when known.
    pub fn summary(&self, blob: Oid) -> Option<&Summary> {
        self.summaries.get(&blob)
    }

    /// Keeps the summary of note blob `blob`.
    pub fn learn_summary(&mut self, blob: Oid, s: Summary) {
        // More patch ids than a byte counts are not kept: such a note is read each time.
        if s.patch_ids.len() <= usize::from(u8::MAX) && self.begin(b'b', blob) {
            let flags = (if s.valid { VALID } else { 0 })
                | (if s.overrides { OVERRIDES } else { 0 })
                | (if s.fails_closed { FAILS_CLOSED } else { 0 });
            self.learned.extend_from_slice(&[
                verdict_byte(s.relaxed),
                verdict_byte(s.strict),
                flags,
                verdict_bits(&s.mentions),
                s.patch_ids.len() as u8,
            ]);
            for key in &s.patch_ids {
                self.learned.extend_from_slice(key);
            }
        }
        self.summaries.insert(blob, s);
    }

    /// Adds what was learned to the file (or writes it anew, atomically, when it was absent,
    /// foreign or cut short). Nothing learned writes nothing.
    pub fn save(&mut self) -> std::io::Result<()> {
        let (Some(path), Some(oid_len)) = (&self.path, self.oid_len) else {
            return Ok(());
        };
        if self.learned.is_empty() {
            return Ok(());
        }
        let dir = path.parent().unwrap_or(std::path::Path::new("."));
        std::fs::create_dir_all(dir)?;
        if self.fresh {
            let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
            let mut all = header(oid_len).into_bytes();
            all.extend_from_slice(&self.kept);
            all.extend_from_slice(&self.learned);
            tmp.write_all(&all)?;
            tmp.persist(path).map_err(|e| e.error)?;
            self.fresh = false;
        } else {
            // One write of whole records: appends of two gates at once do not interleave.
            let mut file = std::fs::OpenOptions::new().append(true).open(path)?;
            file.write_all(&self.learned)?;
        }
        self.kept.append(&mut self.learned);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn oid(n: u8) -> Oid {
        Oid::from_bytes(&[n; 20]).unwrap()
    }

    fn summary(relaxed: Option<Verdict>, keys: &[PatchKey]) -> Summary {
        Summary {
            relaxed,
            strict: Some(Verdict::Halt),
            valid: true,
            overrides: true,
            fails_closed: false,
            mentions: vec![Verdict::Reject, Verdict::Halt],
            patch_ids: keys.to_vec(),
        }
    }

    #[test]
    fn facts_survive_a_save_and_a_foreign_or_torn_file_is_not_believed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("triad/gate-cache");
        let mut c = GateCache::load(path.clone());
        c.learn_patch_id(oid(1), Some([1; 32]));
        c.learn_patch_id(oid(2), None);
        let s3 = summary(Some(Verdict::Flag), &[[1; 32], [2; 32]]);
        c.learn_summary(oid(3), s3.clone());
        c.save().unwrap();
        let mut again = GateCache::load(path.clone());
        assert_eq!(again.patch_id(oid(1)), Some(Some([1; 32])));
        assert_eq!(again.patch_id(oid(2)), Some(None));
        assert_eq!(again.summary(oid(3)), Some(&s3));
        let s4 = summary(None, &[]);
        again.learn_summary(oid(4), s4.clone());
        again.save().unwrap();
        // A write cut short: what read before it still reads, and the next save mends it.
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.extend_from_slice(b"b\x05\x05");
        std::fs::write(&path, &bytes).unwrap();
        let mut torn = GateCache::load(path.clone());
        assert_eq!(torn.summary(oid(4)), Some(&s4));
        assert!(torn.fresh);
        torn.learn_patch_id(oid(5), None);
        torn.save().unwrap();
        let mended = GateCache::load(path.clone());
        assert!(!mended.fresh);
        assert_eq!(
            (mended.patch_id(oid(5)), mended.summaries.len()),
            (Some(None), 2)
        );
        // Another build's file is not read at all.
        let text = std::fs::read(&path).unwrap();
        let other = String::from_utf8_lossy(&text).replacen("cache 2", "cache 1", 1);
        std::fs::write(&path, other.as_bytes()).unwrap();
        let foreign = GateCache::load(path);
        assert!(foreign.patch_id(oid(1)).is_none() && foreign.fresh);
    }
}
