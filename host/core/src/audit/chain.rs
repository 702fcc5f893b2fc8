//! The line format of the audit log and the check of its hash chain.
//!
//! Each line is one JSON object, its fields in a fixed order, ending with
//! `"prev"` (the hash of the line before, or [`GENESIS`] for the first) and
//! `"hash"`: the SHA-256 of the line as it reads with the `hash` field left
//! out, or, for a line sealed under an [`AuditKey`] (named in its `key`
//! field), the HMAC-SHA256 under that key. An edited line no longer matches
//! its own hash; a deleted, inserted or reordered line breaks the `prev`
//! link of the line after it; a line cut short is not JSON and has no
//! newline; a log cut short, emptied or lengthened no longer ends where its
//! head record says (`head`); and under a key, none of that can be hidden
//! by re-chaining without the key.
//!
//! Under a key every line must be sealed with it, the first as much as the
//! last: a plain chain at the start of a log cannot be told apart from a
//! sealed log that someone without the key rewrote as one (the lines it
//! replaced are gone), so the key vouches for no line it did not seal.

use std::fmt;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::head::Head;
use super::key::AuditKey;
use crate::digest::sha256_hex;

/// The `prev` of the first line.
pub(crate) const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// The text that follows the body of a line: `,"hash":"<64 hex>"}`.
const HASH_SUFFIX_LEN: usize = r#","hash":""}"#.len() + 64;

/// The kind of the record a writer adds when it finds the log does not
/// end where its head says.
pub(crate) const TAMPERED: &str = "tampered";

/// One record as written (everything but `hash`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditLine {
    /// 1 for the first record of the file, then one more per line.
    pub seq: u64,
    /// When it was written, RFC 3339.
    pub time: String,
    /// The agent's session id (empty when the event had none).
    pub session: String,
    /// What happened: `dispatch`, `hook_result`, `hook_failure`,
    /// `background`, `injection`, `injection_refused`, `approval_request`,
    /// `approval_decision`, `recovered` or `tampered`.
    pub kind: String,
    /// The event concerned, when there is one.
    pub event: Option<String>,
    /// The hook concerned, when there is one.
    pub hook: Option<String>,
    /// The details, secrets redacted.
    pub data: Value,
    /// The id of the key that sealed the line, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The hash of the previous line.
    pub prev: String,
}

/// A line's text (with its newline) and its hash.
pub(crate) struct Sealed {
    pub(crate) text: Vec<u8>,
    pub(crate) hash: String,
}

/// The hash of a line's text: under `key`, or plain SHA-256.
fn digest(text: &[u8], key: Option<&AuditKey>) -> String {
    key.map_or_else(|| sha256_hex(text), |key| key.seal_hex(text))
}

/// Serialize `line` and append its hash, under `key` when given (the
/// line's `key` field is set to match).
pub(crate) fn seal(line: &mut AuditLine, key: Option<&AuditKey>) -> Sealed {
    line.key = key.map(|k| k.id().to_owned());
    // A struct of strings, numbers and JSON values always serializes.
    let mut text = serde_json::to_vec(line).unwrap_or_default();
    let hash = digest(&text, key);
    text.pop(); // the closing brace
    text.extend_from_slice(format!(r#","hash":"{hash}"}}"#).as_bytes());
    text.push(b'\n');
    Sealed { text, hash }
}

/// Why one line, or the end of the log, does not check out.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Break {
    /// The last line has no newline: the file was cut short.
    Truncated,
    /// The line is not a record of this format.
    Malformed(String),
    /// The line's content does not match its own hash: it was edited.
    Edited,
    /// The line's `prev` is not the hash of the line before it.
    Unlinked {
        /// The sequence number the line should have had.
        expected_seq: u64,
        /// The sequence number it has.
        found_seq: u64,
    },
    /// The line is sealed with a key that was not given.
    KeyNotGiven {
        /// The key's id.
        key: String,
    },
    /// The line is not sealed with the key given, as every line of a log
    /// checked under a key must be.
    Unsealed,
    /// The line comes after the last record the head vouches for.
    PastHead {
        /// The head's last record.
        head_seq: u64,
    },
    /// The log ends before the record its head says was written last.
    TailMissing {
        /// The head's last record.
        written: u64,
        /// The log's last record.
        found: u64,
    },
    /// The log's record numbered as the head's last is another one.
    Rewritten {
        /// The record number.
        seq: u64,
    },
    /// The log has records but no head record.
    NoHead,
    /// The head record cannot be believed.
    HeadUnsound(String),
    /// A writer found the log not ending where its head said, and said so
    /// in this record.
    Reported(String),
}

impl fmt::Display for Break {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Break::Truncated => {
                f.write_str("cut short (no newline at its end): the file was truncated")
            }
            Break::Malformed(why) => write!(f, "not an audit record: {why}"),
            Break::Edited => {
                f.write_str("changed after it was written (its content does not match its hash)")
            }
            Break::Unlinked {
                expected_seq,
                found_seq,
            } if expected_seq == found_seq => f.write_str(
                "does not follow the line before it (it carries the hash of another line): a line before it was changed and the chain rewritten, or lines were swapped",
            ),
            Break::Unlinked {
                expected_seq,
                found_seq,
            } => write!(
                f,
                "is numbered {found_seq} where {expected_seq} was due: a line was deleted, inserted or moved"
            ),
            Break::KeyNotGiven { key } => write!(
                f,
                "sealed with key {key}, which was not given (--audit-key): it cannot be checked"
            ),
            Break::Unsealed => f.write_str(
                "not sealed with the key: written without the key, or the log was rewritten without it (a sealed log downgraded to a plain chain)",
            ),
            Break::PastHead { head_seq } => write!(
                f,
                "comes after record {head_seq}, the last one the head record vouches for: appended by something other than wasm-hooks"
            ),
            Break::TailMissing { written, found } => write!(
                f,
                "the log ends at record {found}, but its head record says {written} were written: records were cut from its end"
            ),
            Break::Rewritten { seq } => write!(
                f,
                "record {seq} is not the one the head record vouches for: the log was rewritten"
            ),
            Break::NoHead => f.write_str(
                "the head record beside the log (`<log>.head`) is missing: the end of the log cannot be vouched for",
            ),
            Break::HeadUnsound(why) => write!(f, "the head record {why}"),
            Break::Reported(what) => write!(f, "a writer found the log tampered with: {what}"),
        }
    }
}

/// The result of checking a whole log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verification {
    /// Every line checks out, and the log ends where its head says.
    Intact {
        /// How many lines.
        lines: u64,
    },
    /// The first line that does not (one past the last line when the end
    /// of the log is what is wrong).
    Broken {
        /// Its 1-based line number.
        line: u64,
        /// What is wrong with it.
        reason: Break,
    },
}

/// How a line's own hash checks out.
enum Own {
    Sound,
    Edited,
    KeyNotGiven(String),
}

/// Parse one line: the record, the hash it carries, and how that hash
/// checks out under `key`.
fn parse(text: &[u8], key: Option<&AuditKey>) -> Result<(AuditLine, String, Own), Break> {
    let malformed = |why: &str| Break::Malformed(why.to_owned());
    let Some(split) = text.len().checked_sub(HASH_SUFFIX_LEN) else {
        return Err(malformed("too short"));
    };
    let (body, suffix) = text.split_at(split);
    let suffix = std::str::from_utf8(suffix).map_err(|_| malformed("not UTF-8"))?;
    let hash = suffix
        .strip_prefix(r#","hash":""#)
        .and_then(|s| s.strip_suffix(r#""}"#))
        .filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))
        .ok_or_else(|| malformed("no `hash` field at its end"))?;
    let mut unsealed = body.to_vec();
    unsealed.push(b'}');
    let line: AuditLine = serde_json::from_slice(&unsealed)
        .map_err(|e| Break::Malformed(format!("not a JSON record ({e})")))?;
    let own = match (&line.key, key) {
        (None, _) => digest(&unsealed, None) == hash,
        (Some(id), Some(key)) if id == key.id() => digest(&unsealed, Some(key)) == hash,
        (Some(id), _) => return Ok((line.clone(), hash.to_owned(), Own::KeyNotGiven(id.clone()))),
    };
    let own = if own { Own::Sound } else { Own::Edited };
    Ok((line, hash.to_owned(), own))
}

/// What a line carries, unchecked: where a writer chains on.
pub(crate) struct Carried {
    /// The line's number.
    pub(crate) seq: u64,
    /// Its hash.
    pub(crate) hash: String,
    /// The id of the key it says sealed it, when it says one did.
    pub(crate) key: Option<String>,
}

/// What the line `text` carries, when it is a record.
pub(crate) fn carried(text: &[u8]) -> Option<Carried> {
    parse(text, None).ok().map(|(line, hash, _)| Carried {
        seq: line.seq,
        hash,
        key: line.key,
    })
}

/// One line of a log as [`read_checked`] read it.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedLine {
    /// Its 1-based line number (one past the last line for a problem with
    /// the end of the log).
    pub number: u64,
    /// The record, when the line is one (an edited record still reads).
    pub record: Option<AuditLine>,
    /// What is wrong with this line, if anything.
    pub problem: Option<Break>,
    /// The line of the first break before it, if there was one: the chain
    /// no longer vouches for this line, however it reads.
    pub after_break: Option<u64>,
}

/// Checks a log line by line, then its end against its head.
struct Checker<'k> {
    key: Option<&'k AuditKey>,
    head: Option<Result<Head, String>>,
    prev: String,
    expected_seq: u64,
    last_seq: u64,
    number: u64,
    /// The line the head vouches for, once read.
    head_line: Option<u64>,
    first_break: Option<u64>,
}

impl<'k> Checker<'k> {
    /// A checker under `key`, against `head` (one that cannot be believed
    /// under `key` vouches for no line).
    fn new(key: Option<&'k AuditKey>, head: Option<Result<Head, String>>) -> Self {
        let head = head.map(|head| {
            head.and_then(|head| match head.unsound(key) {
                Some(why) => Err(why),
                None => Ok(head),
            })
        });
        Self {
            key,
            head,
            prev: GENESIS.to_owned(),
            expected_seq: 1,
            last_seq: 0,
            number: 0,
            head_line: None,
            first_break: None,
        }
    }

    fn head(&self) -> Option<&Head> {
        self.head.as_ref().and_then(|h| h.as_ref().ok())
    }

    /// Check the next line (with its newline, if it has one).
    fn line(&mut self, text: &[u8]) -> CheckedLine {
        self.number += 1;
        let (record, problem) = match text.strip_suffix(b"\n") {
            None => (
                parse(text, self.key).ok().map(|p| p.0),
                Some(Break::Truncated),
            ),
            Some(content) => match parse(content, self.key) {
                Err(reason) => (None, Some(reason)),
                Ok((line, hash, own)) => {
                    let problem = self.problem(&line, &hash, own);
                    self.prev = hash;
                    self.expected_seq = line.seq + 1;
                    self.last_seq = line.seq;
                    (Some(line), problem)
                }
            },
        };
        self.checked(self.number, record, problem)
    }

    fn problem(&mut self, line: &AuditLine, hash: &str, own: Own) -> Option<Break> {
        let past_head = self.head_line.is_some();
        if self
            .head()
            .is_some_and(|head| head.seq == line.seq && head.hash == hash)
        {
            self.head_line = Some(self.number);
        }
        let unsealed = self.key.is_some() && line.key.is_none();
        match own {
            Own::Edited => Some(Break::Edited),
            Own::KeyNotGiven(key) => Some(Break::KeyNotGiven { key }),
            Own::Sound if line.prev != self.prev || line.seq != self.expected_seq => {
                Some(Break::Unlinked {
                    expected_seq: self.expected_seq,
                    found_seq: line.seq,
                })
            }
            Own::Sound if unsealed => Some(Break::Unsealed),
            Own::Sound if past_head => Some(Break::PastHead {
                head_seq: self.head().map_or(0, |h| h.seq),
            }),
            Own::Sound if line.kind == TAMPERED => Some(Break::Reported(line.data.to_string())),
            Own::Sound => None,
        }
    }

    fn checked(
        &mut self,
        number: u64,
        record: Option<AuditLine>,
        problem: Option<Break>,
    ) -> CheckedLine {
        let line = CheckedLine {
            number,
            record,
            after_break: self.first_break,
            problem,
        };
        if line.problem.is_some() && self.first_break.is_none() {
            self.first_break = Some(number);
        }
        line
    }

    /// The problem with the end of the log, if there is one.
    fn end(&mut self) -> Option<CheckedLine> {
        let problem = match &self.head {
            None if self.number == 0 => None,
            None => Some(Break::NoHead),
            Some(Err(why)) => Some(Break::HeadUnsound(why.clone())),
            Some(Ok(_)) if self.head_line.is_some() => None,
            Some(Ok(head)) if self.last_seq < head.seq || self.number == 0 => {
                Some(Break::TailMissing {
                    written: head.seq,
                    found: self.last_seq,
                })
            }
            Some(Ok(head)) => Some(Break::Rewritten { seq: head.seq }),
        }?;
        Some(self.checked(self.number + 1, None, Some(problem)))
    }
}

/// Every line of the log at `path`, each checked as [`verify`] checks it,
/// then the end of the log against its head, for showing the whole log
/// without hiding anything: a broken line is kept with its problem, every
/// line after the first break is marked as one the chain no longer vouches
/// for, and a problem with the end of the log comes last, with no record.
///
/// # Errors
/// Only when the log or its head cannot be read.
pub fn read_checked(path: &Path, key: Option<&AuditKey>) -> std::io::Result<Vec<CheckedLine>> {
    let mut checker = Checker::new(key, Head::read(path)?);
    let mut reader = BufReader::new(std::fs::File::open(path)?);
    let mut lines = Vec::new();
    let mut text = Vec::new();
    loop {
        text.clear();
        if reader.read_until(b'\n', &mut text)? == 0 {
            break;
        }
        lines.push(checker.line(&text));
    }
    lines.extend(checker.end());
    Ok(lines)
}

/// Check the chain of the log at `path`, line by line, then its end
/// against its head record; lines sealed under a key need `key`.
///
/// # Errors
/// Only when the log or its head cannot be read.
pub fn verify(path: &Path, key: Option<&AuditKey>) -> std::io::Result<Verification> {
    let mut checker = Checker::new(key, Head::read(path)?);
    let mut reader = BufReader::new(std::fs::File::open(path)?);
    let mut text = Vec::new();
    loop {
        text.clear();
        if reader.read_until(b'\n', &mut text)? == 0 {
            break;
        }
        if let Some(reason) = checker.line(&text).problem {
            return Ok(Verification::Broken {
                line: checker.number,
                reason,
            });
        }
    }
    Ok(match checker.end() {
        Some(end) => Verification::Broken {
            line: end.number,
            reason: end.problem.unwrap_or(Break::NoHead),
        },
        None => Verification::Intact {
            lines: checker.number,
        },
    })
}

/// Every record of a log, in order, for reading (not checking) it; lines
/// that are not records are skipped ([`read_checked`] keeps and marks
/// them).
///
/// # Errors
/// Only when the log cannot be read.
pub fn read(log: impl Read) -> std::io::Result<Vec<AuditLine>> {
    let mut records = Vec::new();
    for text in BufReader::new(log).split(b'\n') {
        if let Ok((line, _, _)) = parse(&text?, None) {
            records.push(line);
        }
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::head::HeadFile;
    use super::*;

    fn line(seq: u64, prev: &str) -> AuditLine {
        AuditLine {
            seq,
            time: "2026-11-21T10:00:00Z".into(),
            session: "s".into(),
            kind: "dispatch".into(),
            event: Some("PreToolUse".into()),
            hook: None,
            data: json!({"k": "v"}),
            key: None,
            prev: prev.into(),
        }
    }

    /// A log of `n` lines sealed under `key`, with its head, in `dir`.
    fn log(dir: &Path, n: u64, key: Option<&AuditKey>) -> std::path::PathBuf {
        std::fs::create_dir_all(dir).unwrap();
        let path = dir.join("audit.jsonl");
        let mut out = Vec::new();
        let mut prev = GENESIS.to_owned();
        for seq in 1..=n {
            let sealed = seal(&mut line(seq, &prev), key);
            out.extend_from_slice(&sealed.text);
            prev = sealed.hash;
        }
        std::fs::write(&path, out).unwrap();
        if n > 0 {
            HeadFile::open(&path)
                .unwrap()
                .write(&Head::new(n, &prev, key))
                .unwrap();
        }
        path
    }

    fn broken(path: &Path, key: Option<&AuditKey>) -> (u64, Break) {
        match verify(path, key).unwrap() {
            Verification::Broken { line, reason } => (line, reason),
            intact => panic!("{intact:?}"),
        }
    }

    #[test]
    fn l9_a_break_in_the_chain_says_what_happened_in_words() {
        let swapped = Break::Unlinked {
            expected_seq: 5,
            found_seq: 5,
        }
        .to_string();
        assert!(!swapped.contains("expected 5"), "{swapped}");
        assert!(swapped.contains("chain rewritten"), "{swapped}");
        let gap = Break::Unlinked {
            expected_seq: 5,
            found_seq: 7,
        }
        .to_string();
        assert!(gap.contains("numbered 7 where 5 was due"), "{gap}");
    }

    #[test]
    fn a_sealed_line_opens_to_itself() {
        let mut written = line(1, GENESIS);
        let sealed = seal(&mut written, None);
        let (opened, hash, own) = parse(sealed.text.strip_suffix(b"\n").unwrap(), None).unwrap();
        assert_eq!(opened, written);
        assert_eq!(hash, sealed.hash);
        assert!(matches!(own, Own::Sound));
    }

    #[test]
    fn an_intact_chain_with_its_head_verifies() {
        let dir = tempfile::tempdir().unwrap();
        let path = log(dir.path(), 3, None);
        assert_eq!(
            verify(&path, None).unwrap(),
            Verification::Intact { lines: 3 }
        );
        let empty = log(&dir.path().join("empty"), 0, None);
        assert_eq!(
            verify(&empty, None).unwrap(),
            Verification::Intact { lines: 0 }
        );
    }

    #[test]
    fn a_missing_hash_field_is_malformed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        std::fs::write(&path, b"{\"seq\":1}\n").unwrap();
        assert!(matches!(broken(&path, None), (1, Break::Malformed(_))));
    }

    #[test]
    fn m7_a_removed_tail_an_emptied_log_and_an_appended_line_are_caught_by_the_head() {
        let dir = tempfile::tempdir().unwrap();
        let path = log(dir.path(), 4, None);
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        std::fs::write(&path, lines[..2].concat()).unwrap();
        assert_eq!(
            broken(&path, None),
            (
                3,
                Break::TailMissing {
                    written: 4,
                    found: 2
                }
            )
        );
        std::fs::write(&path, "").unwrap();
        assert!(matches!(
            broken(&path, None),
            (1, Break::TailMissing { written: 4, .. })
        ));
        // A line chained onto the last one, as a forger without the head
        // would write it.
        let last_hash = carried(lines[3].trim_end().as_bytes()).unwrap().hash;
        let forged = seal(&mut line(5, &last_hash), None);
        std::fs::write(&path, [text.as_bytes(), &forged.text].concat()).unwrap();
        assert_eq!(broken(&path, None), (5, Break::PastHead { head_seq: 4 }));
        std::fs::remove_file(super::super::head::path_of(&path)).unwrap();
        assert_eq!(broken(&path, None), (6, Break::NoHead));
    }

    #[test]
    fn m7_under_a_key_a_rewritten_chain_and_a_moved_head_are_caught() {
        let dir = tempfile::tempdir().unwrap();
        let key = AuditKey::generate(&dir.path().join("key")).unwrap();
        let path = log(dir.path(), 3, Some(&key));
        assert_eq!(
            verify(&path, Some(&key)).unwrap(),
            Verification::Intact { lines: 3 }
        );
        // Without the key the lines cannot be checked, and it says so.
        assert!(matches!(
            broken(&path, None),
            (1, Break::KeyNotGiven { .. })
        ));
        // A forger rewrites the head without the key, the log left whole.
        let last_hash = carried(
            std::fs::read_to_string(&path)
                .unwrap()
                .lines()
                .next_back()
                .unwrap()
                .as_bytes(),
        )
        .unwrap()
        .hash;
        HeadFile::open(&path)
            .unwrap()
            .write(&Head::new(3, &last_hash, None))
            .unwrap();
        assert!(matches!(
            broken(&path, Some(&key)),
            (4, Break::HeadUnsound(why)) if why.contains("not sealed with the key")
        ));
        // Or re-chains an edited log without the key, head and all.
        let mut forged = Vec::new();
        let mut prev = GENESIS.to_owned();
        for seq in 1..=3 {
            let mut edited = line(seq, &prev);
            edited.data = json!({"k": "forged"});
            let sealed = seal(&mut edited, None);
            forged.extend_from_slice(&sealed.text);
            prev = sealed.hash;
        }
        std::fs::write(&path, forged).unwrap();
        HeadFile::open(&path)
            .unwrap()
            .write(&Head::new(3, &prev, None))
            .unwrap();
        assert_eq!(broken(&path, Some(&key)), (1, Break::Unsealed));
        // Or moves a sealed head back to an earlier line it copied.
        let path = log(&dir.path().join("b"), 3, Some(&key));
        let text = std::fs::read_to_string(&path).unwrap();
        let first = text.lines().next().unwrap();
        let hash = carried(first.as_bytes()).unwrap().hash;
        let mut head = Head::new(3, &hash, Some(&key));
        head.seq = 1;
        HeadFile::open(&path).unwrap().write(&head).unwrap();
        assert!(matches!(
            broken(&path, Some(&key)),
            (4, Break::HeadUnsound(why)) if why.contains("forged")
        ));
    }

    #[test]
    fn under_a_key_a_plain_line_is_a_break_before_the_sealed_ones_as_after() {
        let dir = tempfile::tempdir().unwrap();
        let key = AuditKey::generate(&dir.path().join("key")).unwrap();
        // Lines sealed by `keys` in turn, chained, with a head sealed with
        // the key: a downgraded start sealed over, or a plain line appended.
        let written = |name: &str, keys: [Option<&AuditKey>; 3]| {
            let path = dir.path().join(name);
            let mut out = Vec::new();
            let mut prev = GENESIS.to_owned();
            for (seq, sealer) in (1..).zip(keys) {
                let sealed = seal(&mut line(seq, &prev), sealer);
                out.extend_from_slice(&sealed.text);
                prev = sealed.hash;
            }
            std::fs::write(&path, out).unwrap();
            HeadFile::open(&path)
                .unwrap()
                .write(&Head::new(3, &prev, Some(&key)))
                .unwrap();
            path
        };
        let sealed_over = written("sealed-over", [None, None, Some(&key)]);
        assert_eq!(broken(&sealed_over, Some(&key)), (1, Break::Unsealed));
        let appended = written("appended", [Some(&key), None, Some(&key)]);
        assert_eq!(broken(&appended, Some(&key)), (2, Break::Unsealed));
    }
}
