//! Makes command output comparable between runs and machines, for snapshots.
//!
//! Volatile parts become stable placeholders, in this order:
//! - literal strings the test knows (its temp root, the fake server's address), e.g. `[ROOT]`;
//! - any other path under the system temp directory or `/dev/shm`: `[TMP]`;
//! - run ids `YYYYMMDD-HHMMSS-xxxx`: `[RUN-1]`, `[RUN-2]`, … in order of first appearance;
//! - RFC 3339 timestamps (`2026-01-02T03:04:05.123Z`, also with a space or an offset): `[TIME]`;
//! - durations (`1.2 s`, `34 ms`, `5ms`, `0.3µs`): `[DUR]`;
//! - JSON members that hold a time: a duration (a name ending in `_ms` or `seconds`,
//!   `"latency_ms": 23`, `"seconds": 1.5`) becomes `[DUR]`, seconds since the epoch (ten digits, 2017 to 2049,
//!   `"started": 1767322800`) become `[UNIX-TIME]`;
//! - hex object ids (7–64 lowercase hex digits between word boundaries): `[OID-1]`, … in order
//!   of first appearance, a short id sharing the number of the long id it abbreviates. A token
//!   of decimal digits only (`1048576`, a context window) is a number, unless it abbreviates an
//!   object id the normalizer was told about ([`Normalizer::object_ids`]): one short commit id
//!   in 27 has no letter.
//! - calls made together end in any order: a run of consecutive lines saying a call ended
//!   (`chamber: model-a (panelist) answered in [DUR]`) is sorted.
//!
//! Numbering keeps "the same id twice" and "two different ids" apart in a snapshot without
//! depending on what the ids are.

use std::path::Path;

/// Replaces the volatile parts of command output with placeholders.
#[derive(Debug, Clone, Default)]
pub struct Normalizer {
    /// Exact strings and their placeholders, tried longest first.
    literals: Vec<(String, String)>,
    /// Full object ids known to exist, to recognize their all-digit abbreviations.
    objects: Vec<String>,
}

impl Normalizer {
    /// A normalizer with only the generic rules.
    pub fn new() -> Normalizer {
        Normalizer::default()
    }

    /// Also replaces `from` (exactly) with `to`. Empty strings are ignored.
    pub fn literal(mut self, from: impl Into<String>, to: impl Into<String>) -> Normalizer {
        let from = from.into();
        if !from.is_empty() {
            self.literals.push((from, to.into()));
            self.literals
                .sort_by_key(|(from, _)| std::cmp::Reverse(from.len()));
        }
        self
    }

    /// Also replaces `path` (as given and canonicalized, e.g. `/private/tmp` on macOS)
    /// with `to`.
    pub fn path(self, path: &Path, to: &str) -> Normalizer {
        let canonical = std::fs::canonicalize(path).ok();
        let mut n = self.literal(path.to_string_lossy(), to);
        if let Some(c) = canonical {
            n = n.literal(c.to_string_lossy(), to);
        }
        n
    }

    /// Also recognizes abbreviations of these object ids when they have no letter.
    pub fn object_ids(mut self, ids: impl IntoIterator<Item = String>) -> Normalizer {
        self.objects.extend(ids);
        self
    }

    /// The normalized text.
    pub fn apply(&self, text: &str) -> String {
        let mut s = text.to_string();
        for (from, to) in &self.literals {
            s = s.replace(from.as_str(), to);
        }
        s = temp_paths(&s);
        let mut runs = Numbered::new("RUN", false);
        s = scan(&s, |b, i| {
            run_id(b, i).map(|n| (n, runs.name(&b[i..i + n])))
        });
        s = scan(&s, |b, i| {
            timestamp(b, i).map(|n| (n, "[TIME]".to_string()))
        });
        s = scan(&s, |b, i| duration(b, i).map(|n| (n, "[DUR]".to_string())));
        s = timed_members(&s);
        let mut oids = Numbered::new("OID", true);
        s = scan(&s, |b, i| {
            let n = hex_id(b, i)?;
            let token = &b[i..i + n];
            let has_letter = token.iter().any(|c| c.is_ascii_alphabetic());
            let known = || self.objects.iter().any(|o| o.as_bytes().starts_with(token));
            (has_letter || oids.knows(token) || known()).then(|| (n, oids.name(token)))
        });
        together(&s)
    }
}

/// `text` with each run of consecutive "a call ended" lines sorted: the calls of a panel
/// are made together and may end in any order.
fn together(text: &str) -> String {
    let ended = |l: &str| l.ends_with('\n') && l.contains(") answered in [DUR]");
    let mut out: Vec<&str> = Vec::new();
    let mut run: Vec<&str> = Vec::new();
    for line in text.split_inclusive('\n') {
        if ended(line) {
            run.push(line);
            continue;
        }
        run.sort_unstable();
        out.append(&mut run);
        out.push(line);
    }
    run.sort_unstable();
    out.append(&mut run);
    out.concat()
}

/// Placeholders numbered by first appearance.
struct Numbered {
    label: &'static str,
    /// Whether a prefix of a seen value (an abbreviated id) is the same thing.
    prefixes: bool,
    seen: Vec<Vec<u8>>,
}

impl Numbered {
    fn new(label: &'static str, prefixes: bool) -> Numbered {
        Numbered {
            label,
            prefixes,
            seen: Vec::new(),
        }
    }

    /// Whether `seen` and `value` name the same thing.
    fn same(&self, seen: &[u8], value: &[u8]) -> bool {
        seen == value || (self.prefixes && (seen.starts_with(value) || value.starts_with(seen)))
    }

    /// Whether `value` (or what it abbreviates) already has a number.
    fn knows(&self, value: &[u8]) -> bool {
        self.seen.iter().any(|s| self.same(s, value))
    }

    /// The placeholder of `value`, numbered on first sight.
    fn name(&mut self, value: &[u8]) -> String {
        let n = match self.seen.iter().position(|s| self.same(s, value)) {
            Some(i) => {
                if value.len() > self.seen[i].len() {
                    self.seen[i] = value.to_vec();
                }
                i + 1
            }
            None => {
                self.seen.push(value.to_vec());
                self.seen.len()
            }
        };
        format!("[{}-{n}]", self.label)
    }
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Whether position `i` of `b` is the end of a word (end of text or a non-word byte).
fn ends_word(b: &[u8], i: usize) -> bool {
    i >= b.len() || !is_word(b[i])
}

/// Walks `text` and, at every position that starts a word, lets `matcher` claim a length and
/// a replacement. Only ASCII is ever matched, so UTF-8 stays whole.
fn scan(text: &str, mut matcher: impl FnMut(&[u8], usize) -> Option<(usize, String)>) -> String {
    let b = text.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let at_start = i == 0 || !is_word(b[i - 1]);
        if at_start && b[i].is_ascii() {
            if let Some((n, with)) = matcher(b, i) {
                out.extend_from_slice(with.as_bytes());
                i += n;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8(out).expect("only ASCII was replaced")
}

/// The length of a run of at least `min` and at most `max` bytes from `i` that satisfy `f`.
fn run_of(b: &[u8], i: usize, min: usize, max: usize, f: impl Fn(u8) -> bool) -> Option<usize> {
    let n = b[i.min(b.len())..]
        .iter()
        .take(max)
        .take_while(|&&c| f(c))
        .count();
    (n >= min).then_some(n)
}

fn digits(b: &[u8], i: usize, n: usize) -> bool {
    run_of(b, i, n, n, |c| c.is_ascii_digit()) == Some(n)
}

fn at(b: &[u8], i: usize, c: u8) -> bool {
    b.get(i) == Some(&c)
}

fn is_lower_hex(c: u8) -> bool {
    c.is_ascii_digit() || (b'a'..=b'f').contains(&c)
}

/// `YYYYMMDD-HHMMSS-xxxx`.
fn run_id(b: &[u8], i: usize) -> Option<usize> {
    let ok = digits(b, i, 8)
        && at(b, i + 8, b'-')
        && digits(b, i + 9, 6)
        && at(b, i + 15, b'-')
        && run_of(b, i + 16, 4, 4, is_lower_hex) == Some(4)
        && ends_word(b, i + 20);
    ok.then_some(20)
}

/// `YYYY-MM-DD[T ]HH:MM:SS[.fff][Z|±HH:MM]`.
fn timestamp(b: &[u8], i: usize) -> Option<usize> {
    let ok = digits(b, i, 4)
        && at(b, i + 4, b'-')
        && digits(b, i + 5, 2)
        && at(b, i + 7, b'-')
        && digits(b, i + 8, 2)
        && (at(b, i + 10, b'T') || at(b, i + 10, b' '))
        && digits(b, i + 11, 2)
        && at(b, i + 13, b':')
        && digits(b, i + 14, 2)
        && at(b, i + 16, b':')
        && digits(b, i + 17, 2);
    if !ok {
        return None;
    }
    let mut n = 19;
    if at(b, i + n, b'.') {
        if let Some(f) = run_of(b, i + n + 1, 1, 9, |c| c.is_ascii_digit()) {
            n += 1 + f;
        }
    }
    if at(b, i + n, b'Z') {
        n += 1;
    } else if (at(b, i + n, b'+') || at(b, i + n, b'-'))
        && digits(b, i + n + 1, 2)
        && at(b, i + n + 3, b':')
        && digits(b, i + n + 4, 2)
    {
        n += 6;
    }
    ends_word(b, i + n).then_some(n)
}

/// A number with a time unit: `1.2 s`, `34 ms`, `5ms`, `0.3µs`, `12 us`, `7 ns`.
fn duration(b: &[u8], i: usize) -> Option<usize> {
    let mut n = run_of(b, i, 1, 20, |c| c.is_ascii_digit())?;
    if at(b, i + n, b'.') {
        if let Some(f) = run_of(b, i + n + 1, 1, 20, |c| c.is_ascii_digit()) {
            n += 1 + f;
        }
    }
    if at(b, i + n, b' ') {
        n += 1;
    }
    for unit in ["ms", "µs", "us", "ns", "s"] {
        let u = unit.as_bytes();
        if b[i + n..].starts_with(u) && ends_word(b, i + n + u.len()) {
            return Some(n + u.len());
        }
    }
    None
}

/// The numbers of JSON members that are times: a duration (`"…_ms": N`, `"…seconds": N`)
/// and seconds since the epoch (`"…": N`, ten digits from 1500000000 to 2499999999: 2017
/// to 2049).
fn timed_members(text: &str) -> String {
    let b = text.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if let Some((value, n, with)) = timed_member(b, i) {
            out.extend_from_slice(&b[i..value]);
            out.extend_from_slice(with.as_bytes());
            i = value + n;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).expect("only ASCII was replaced")
}

/// At the closing quote `i` of a member name: where its number starts, its length and
/// what replaces it, when it is a time.
fn timed_member(b: &[u8], i: usize) -> Option<(usize, usize, &'static str)> {
    if !(at(b, i, b'"') && at(b, i + 1, b':')) {
        return None;
    }
    let mut j = i + 2;
    while at(b, j, b' ') {
        j += 1;
    }
    let mut n = run_of(b, j, 1, 20, |c| c.is_ascii_digit())?;
    let integer = n;
    if at(b, j + n, b'.') {
        n += 1 + run_of(b, j + n + 1, 0, 20, |c| c.is_ascii_digit()).unwrap_or(0);
    }
    if !ends_word(b, j + n) {
        return None;
    }
    if b[..i].ends_with(b"_ms") || b[..i].ends_with(b"seconds") {
        return Some((j, n, "[DUR]"));
    }
    let epoch = integer == 10 && n == 10 && (b'1'..=b'2').contains(&b[j]);
    let plausible =
        epoch && (b[j] == b'2' || b[j + 1] >= b'5') && (b[j] == b'1' || b[j + 1] < b'5');
    plausible.then_some((j, n, "[UNIX-TIME]"))
}

/// 7 to 64 lowercase hex digits between word boundaries.
fn hex_id(b: &[u8], i: usize) -> Option<usize> {
    let n = run_of(b, i, 7, 65, is_lower_hex)?;
    (n <= 64 && ends_word(b, i + n)).then_some(n)
}

/// Paths under the system temp directory (and `/dev/shm`) that no literal claimed.
fn temp_paths(text: &str) -> String {
    let mut roots: Vec<String> = vec!["/dev/shm/".into()];
    let tmp = std::env::temp_dir();
    for t in [Some(tmp.clone()), std::fs::canonicalize(&tmp).ok()]
        .into_iter()
        .flatten()
    {
        let mut t = t.to_string_lossy().into_owned();
        if !t.ends_with('/') {
            t.push('/');
        }
        roots.push(t);
    }
    roots.sort();
    roots.dedup();
    roots.sort_by_key(|r| std::cmp::Reverse(r.len()));
    let is_path = |c: char| c.is_ascii_alphanumeric() || "._-+~/".contains(c);
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    'outer: while !rest.is_empty() {
        for root in &roots {
            if rest.starts_with(root.as_str()) {
                let preceded_ok = out.chars().next_back().is_none_or(|c| !is_path(c));
                if preceded_ok {
                    let tail = &rest[root.len()..];
                    let n = tail.find(|c: char| !is_path(c)).unwrap_or(tail.len());
                    out.push_str("[TMP]");
                    rest = &tail[n..];
                    continue 'outer;
                }
            }
        }
        let c = rest.chars().next().unwrap();
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

#[test]
fn normalizer_replaces_only_the_volatile_parts() {
    let n = Normalizer::new().literal("/x/root", "[ROOT]");
    let cases = [
        ("run 20260102-030405-ab12 done", "run [RUN-1] done"),
        (
            "triad/add-sub/20260102-030405-ab12 and 20260102-030406-0f0f and 20260102-030405-ab12",
            "triad/add-sub/[RUN-1] and [RUN-2] and [RUN-1]",
        ),
        ("at 2026-01-02T03:04:05Z.", "at [TIME]."),
        ("at 2026-01-02T03:04:05.123456+02:00 x", "at [TIME] x"),
        ("at 2026-01-02 03:04:05 x", "at [TIME] x"),
        (
            "answered in 1.2 s, 34 ms, 5ms, (0.3µs)",
            "answered in [DUR], [DUR], [DUR], ([DUR])",
        ),
        (
            "3 stages, 12 tokens, $0.0012",
            "3 stages, 12 tokens, $0.0012",
        ),
        (
            "commit 0123456789abcdef0123456789abcdef01234567 is 0123456",
            "commit [OID-1] is [OID-1]",
        ),
        ("abc1234..def5678", "[OID-1]..[OID-2]"),
        ("added decade facade 123456", "added decade facade 123456"),
        ("context_window = 1048576", "context_window = 1048576"),
        ("/x/root/home/.config", "[ROOT]/home/.config"),
        (
            r#"{"latency_ms": 23, "started":1767322800, "max_ms": "7", "n": 5, "k": 1048576000}"#,
            r#"{"latency_ms": [DUR], "started":[UNIX-TIME], "max_ms": "7", "n": 5, "k": 1048576000}"#,
        ),
    ];
    for (input, want) in cases {
        assert_eq!(n.apply(input), want, "normalizing {input:?}");
    }
    let n = n.object_ids(["1234567890123456789012345678901234567890".to_string()]);
    assert_eq!(
        n.apply("commit 1234567 of 1048576"),
        "commit [OID-1] of 1048576"
    );
    let tmp = std::env::temp_dir().join(".tmpAbC123/scratch");
    assert_eq!(
        n.apply(&format!("see {}: gone", tmp.display())),
        "see [TMP]: gone"
    );
}
