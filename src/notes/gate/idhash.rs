//! Hash maps keyed by object ids and patch ids, which are uniformly random already: their
//! first eight bytes are the hash. SipHash (the standard hasher) over 20 or 32 bytes costs
//! more than the gate's whole lookup of a commit.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A map keyed by an object id or a patch id.
pub(crate) type IdMap<K, V> = HashMap<K, V, BuildHasherDefault<IdHasher>>;

/// Takes the first eight bytes written as the hash (length prefixes aside).
#[derive(Default)]
pub(crate) struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut first = [0u8; 8];
        let n = bytes.len().min(8);
        first[..n].copy_from_slice(&bytes[..n]);
        self.0 ^= u64::from_le_bytes(first);
    }

    fn write_usize(&mut self, _: usize) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_that_differ_anywhere_are_told_apart() {
        let mut m: IdMap<[u8; 32], u8> = IdMap::default();
        let (mut a, mut b) = ([7u8; 32], [7u8; 32]);
        b[31] = 8;
        m.insert(a, 1);
        m.insert(b, 2);
        assert_eq!((m[&a], m[&b]), (1, 2));
        a[0] = 0;
        assert!(!m.contains_key(&a));
        let oid = git2::Oid::from_bytes(&[3; 20]).unwrap();
        let mut o: IdMap<git2::Oid, u8> = IdMap::default();
        o.insert(oid, 1);
        assert_eq!(o.get(&oid), Some(&1));
    }
}
