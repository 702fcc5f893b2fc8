//! The line format of the audit log and the check of its hash chain.
//!
//! Each line is one JSON object, its fields in a fixed order, ending with
//! `"prev"` (the hash of the line before, or [`GENESIS`] for the first) and
//! `"hash"`: the SHA-256 of the line as it reads with the `hash` field left
//! out. An edited line no longer matches its own hash; a deleted, inserted
//! or reordered line breaks the `prev` link of the line after it; a line
//! cut short is not JSON and has no newline.

use std::fmt;
use std::io::{BufRead, BufReader, Read};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::digest::sha256_hex;

/// The `prev` of the first line.
pub(crate) const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// The text that follows the body of a line: `,"hash":"<64 hex>"}`.
const HASH_SUFFIX_LEN: usize = r#","hash":""}"#.len() + 64;

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
    /// `approval_decision` or `recovered`.
    pub kind: String,
    /// The event concerned, when there is one.
    pub event: Option<String>,
    /// The hook concerned, when there is one.
    pub hook: Option<String>,
    /// The details, secrets redacted.
    pub data: Value,
    /// The hash of the previous line.
    pub prev: String,
}

/// A line's text (with its newline) and its hash.
pub(crate) struct Sealed {
    pub(crate) text: Vec<u8>,
    pub(crate) hash: String,
}

/// Serialize `line` and append its hash.
pub(crate) fn seal(line: &AuditLine) -> Sealed {
    // A struct of strings, numbers and JSON values always serializes.
    let mut text = serde_json::to_vec(line).unwrap_or_default();
    let hash = sha256_hex(&text);
    text.pop(); // the closing brace
    text.extend_from_slice(format!(r#","hash":"{hash}"}}"#).as_bytes());
    text.push(b'\n');
    Sealed { text, hash }
}

/// Why one line does not check out.
#[derive(Debug, Clone, PartialEq, Eq)]
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
        }
    }
}

/// The result of checking a whole log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verification {
    /// Every line checks out.
    Intact {
        /// How many lines.
        lines: u64,
    },
    /// The first line that does not.
    Broken {
        /// Its 1-based line number.
        line: u64,
        /// What is wrong with it.
        reason: Break,
    },
}

/// Check one line's own hash and parse it; returns the record and its hash.
pub(crate) fn open(text: &[u8]) -> Result<(AuditLine, String), Break> {
    match parse(text)? {
        (line, hash, true) => Ok((line, hash)),
        (_, _, false) => Err(Break::Edited),
    }
}

/// Parse one line: the record, the hash it carries, and whether that hash
/// is the line's own.
fn parse(text: &[u8]) -> Result<(AuditLine, String, bool), Break> {
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
    let own = sha256_hex(&unsealed) == hash;
    Ok((line, hash.to_owned(), own))
}

/// One line of a log as [`read_checked`] read it.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedLine {
    /// Its 1-based line number.
    pub number: u64,
    /// The record, when the line is one (an edited record still reads).
    pub record: Option<AuditLine>,
    /// What is wrong with this line, if anything.
    pub problem: Option<Break>,
    /// The line of the first break before it, if there was one: the chain
    /// no longer vouches for this line, however it reads.
    pub after_break: Option<u64>,
}

/// Every line of a log, each checked as [`verify`] checks it, for showing
/// the whole log without hiding anything: a broken line is kept with its
/// problem, and every line after the first break is marked as one the
/// chain no longer vouches for.
///
/// # Errors
/// Only when the log cannot be read.
pub fn read_checked(log: impl Read) -> std::io::Result<Vec<CheckedLine>> {
    let mut reader = BufReader::new(log);
    let mut prev = GENESIS.to_owned();
    let mut expected_seq = 1;
    let mut first_break = None;
    let mut lines = Vec::new();
    let mut text = Vec::new();
    for number in 1.. {
        text.clear();
        if reader.read_until(b'\n', &mut text)? == 0 {
            break;
        }
        let (record, problem) = match text.strip_suffix(b"\n") {
            None => (parse(&text).ok().map(|p| p.0), Some(Break::Truncated)),
            Some(content) => match parse(content) {
                Err(reason) => (None, Some(reason)),
                Ok((line, hash, own)) => {
                    let problem = if !own {
                        Some(Break::Edited)
                    } else if line.prev != prev || line.seq != expected_seq {
                        Some(Break::Unlinked {
                            expected_seq,
                            found_seq: line.seq,
                        })
                    } else {
                        None
                    };
                    prev = hash;
                    expected_seq = line.seq + 1;
                    (Some(line), problem)
                }
            },
        };
        lines.push(CheckedLine {
            number,
            record,
            after_break: first_break,
            problem: problem.clone(),
        });
        if problem.is_some() && first_break.is_none() {
            first_break = Some(number);
        }
    }
    Ok(lines)
}

/// Check the chain of a whole log, line by line.
///
/// # Errors
/// Only when the log cannot be read.
pub fn verify(log: impl Read) -> std::io::Result<Verification> {
    let mut reader = BufReader::new(log);
    let mut prev = GENESIS.to_owned();
    let mut expected_seq = 1;
    let mut number = 0;
    let mut text = Vec::new();
    loop {
        text.clear();
        if reader.read_until(b'\n', &mut text)? == 0 {
            return Ok(Verification::Intact { lines: number });
        }
        number += 1;
        let broken = |reason| Verification::Broken {
            line: number,
            reason,
        };
        let Some(content) = text.strip_suffix(b"\n") else {
            return Ok(broken(Break::Truncated));
        };
        let (line, hash) = match open(content) {
            Ok(opened) => opened,
            Err(reason) => return Ok(broken(reason)),
        };
        if line.prev != prev || line.seq != expected_seq {
            return Ok(broken(Break::Unlinked {
                expected_seq,
                found_seq: line.seq,
            }));
        }
        prev = hash;
        expected_seq += 1;
    }
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
        if let Ok((line, _)) = open(&text?) {
            records.push(line);
        }
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

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
            prev: prev.into(),
        }
    }

    fn chain(n: u64) -> Vec<u8> {
        let mut out = Vec::new();
        let mut prev = GENESIS.to_owned();
        for seq in 1..=n {
            let sealed = seal(&line(seq, &prev));
            out.extend_from_slice(&sealed.text);
            prev = sealed.hash;
        }
        out
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
        let sealed = seal(&line(1, GENESIS));
        let (opened, hash) = open(sealed.text.strip_suffix(b"\n").unwrap()).unwrap();
        assert_eq!(opened, line(1, GENESIS));
        assert_eq!(hash, sealed.hash);
    }

    #[test]
    fn an_intact_chain_verifies() {
        assert_eq!(
            verify(chain(3).as_slice()).unwrap(),
            Verification::Intact { lines: 3 }
        );
        assert_eq!(verify(&b""[..]).unwrap(), Verification::Intact { lines: 0 });
    }

    #[test]
    fn a_missing_hash_field_is_malformed() {
        let text = b"{\"seq\":1}\n";
        assert!(matches!(
            verify(&text[..]).unwrap(),
            Verification::Broken {
                line: 1,
                reason: Break::Malformed(_)
            }
        ));
    }
}
