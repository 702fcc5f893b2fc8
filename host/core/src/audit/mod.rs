//! The tamper-evident audit log: every dispatch, hook result, failure,
//! injection, approval request and decision, one JSON line each, each line
//! carrying the hash of the line before it ([`chain`] has the format and the
//! check).
//!
//! Writing is safe across threads and processes: a line is appended in one
//! write under an exclusive file lock, after re-reading the last line when
//! another writer moved the end of the file. A write that fails halfway is
//! cut back off. A half line left by a crash (power loss, a full disk) is
//! moved, on the next append, into a `recovered` record that keeps its text,
//! so the chain stays whole and nothing is lost. Secrets are redacted by a
//! [`Redactor`] before anything is written.
//!
//! After every append the head record beside the log (`<log>.head`) is
//! rewritten with the last record's number and hash; a writer that finds
//! the log not ending there (cut short, emptied, lengthened by something
//! else) says so in a `tampered` record before it appends. With an
//! [`AuditKey`], lines and head are sealed with it (HMAC-SHA256).
//!
//! A key seals a log from its first line. A writer under a key that finds
//! the log ending in a line not sealed with that key (written without it,
//! under another key, or a sealed log rewritten as a plain chain by
//! someone without it), or a head not sealed with it, says so in a
//! `tampered` record too and goes on sealing: it never vouches for what it
//! cannot check. A writer without a key refuses to append to a log that
//! ends sealed with one, since its lines would break it. To start sealing
//! a log kept so far without a key, start a new log.

mod chain;
mod head;
mod key;
mod redact;

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use serde::Serialize;
use serde_json::{Value, json};

pub use chain::{AuditLine, Break, CheckedLine, Verification, read, read_checked, verify};
pub use key::AuditKey;
pub use redact::{REDACTED, Redactor};

use chain::Carried;
use head::{Head, HeadFile};

use crate::event::{Event, EventName};
use crate::id::HookId;
use crate::outcome::{Outcome, TraceStatus};
use crate::spec::Misfit;

/// What an audit record is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum AuditKind {
    /// An event was dispatched: the event and the verdict.
    Dispatch,
    /// A hook answered.
    HookResult,
    /// A hook failed, and what its `on_failure` policy did.
    HookFailure,
    /// A background hook finished.
    Background,
    /// Context went to the agent.
    Injection,
    /// Context was refused (over the size cap).
    InjectionRefused,
    /// A hook asked the person to approve.
    ApprovalRequest,
    /// What the person (or the timeout, or the cache) decided.
    ApprovalDecision,
    /// A half line left by a crash, kept here.
    Recovered,
    /// A writer found the log not ending where its head said.
    Tampered,
}

impl AuditKind {
    /// The name written in the `kind` field.
    pub fn as_str(self) -> &'static str {
        match self {
            AuditKind::Dispatch => "dispatch",
            AuditKind::HookResult => "hook_result",
            AuditKind::HookFailure => "hook_failure",
            AuditKind::Background => "background",
            AuditKind::Injection => "injection",
            AuditKind::InjectionRefused => "injection_refused",
            AuditKind::ApprovalRequest => "approval_request",
            AuditKind::ApprovalDecision => "approval_decision",
            AuditKind::Recovered => "recovered",
            AuditKind::Tampered => chain::TAMPERED,
        }
    }
}

/// One record to append.
#[derive(Debug, Clone)]
pub struct AuditEntry {
    /// What it is about.
    pub kind: AuditKind,
    /// The agent's session id.
    pub session: String,
    /// The event concerned.
    pub event: Option<EventName>,
    /// The hook concerned.
    pub hook: Option<HookId>,
    /// The details (secrets are redacted on the way in).
    pub data: Value,
}

/// An append-only, hash-chained audit log file. Cheap to clone; clones
/// append to the same file.
#[derive(Debug, Clone)]
pub struct AuditLog {
    inner: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    path: PathBuf,
    redactor: Redactor,
    writer: Mutex<Writer>,
}

#[derive(Debug)]
struct Writer {
    file: File,
    head: HeadFile,
    key: Option<AuditKey>,
    /// The file's length after our last append, to notice other writers.
    len: Option<u64>,
    last_seq: u64,
    last_hash: String,
}

/// Positional reads go back this far at a time when looking for a line's
/// start.
const CHUNK: u64 = 64 * 1024;

impl AuditLog {
    /// Open (or create, with mode 0600, and its directory) the log at
    /// `path` and its head record; records are redacted by `redactor`,
    /// and sealed under `key` when one is given.
    ///
    /// # Errors
    /// When the files or their directory cannot be created or opened.
    pub fn open(
        path: impl Into<PathBuf>,
        redactor: Redactor,
        key: Option<AuditKey>,
    ) -> io::Result<Self> {
        let path = path.into();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .mode(0o600)
            .open(&path)?;
        let head = HeadFile::open(&path)?;
        Ok(Self {
            inner: Arc::new(Shared {
                path,
                redactor,
                writer: Mutex::new(Writer {
                    file,
                    head,
                    key,
                    len: None,
                    last_seq: 0,
                    last_hash: chain::GENESIS.to_owned(),
                }),
            }),
        })
    }

    /// The log's path.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// What it redacts records with.
    pub fn redactor(&self) -> &Redactor {
        &self.inner.redactor
    }

    /// Append one record.
    ///
    /// # Errors
    /// When the file cannot be locked, read or written; nothing half
    /// written is left behind.
    pub fn append(&self, mut entry: AuditEntry) -> io::Result<()> {
        self.inner.redactor.value(&mut entry.data);
        let mut w = self
            .inner
            .writer
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        w.file.lock()?;
        let result = w.append(entry, &self.inner.redactor, &self.inner.path);
        w.file.unlock()?;
        result
    }

    /// Append one record; a failure to write is logged, never raised: an
    /// audit problem must not stop the agent.
    pub fn record(&self, entry: AuditEntry) {
        if let Err(e) = self.append(entry) {
            tracing::error!(path = %self.inner.path.display(), "cannot write the audit log: {e}");
        }
    }

    /// Record one dispatch: the event, the verdict and the hooks that did
    /// not fit it with why (`skipped`, as `explain` says), then each hook
    /// that ran (background hooks are recorded when they finish).
    pub fn record_dispatch(&self, event: &Event, outcome: &Outcome, skipped: &[(&HookId, Misfit)]) {
        let session = event.session_id().to_owned();
        self.record(AuditEntry {
            kind: AuditKind::Dispatch,
            session: session.clone(),
            event: Some(event.name()),
            hook: outcome.decided_by.clone(),
            data: json!({
                "record": event.record(),
                "verdict": &outcome.verdict,
                "decided_by": &outcome.decided_by,
                "updated_input": &outcome.updated_input,
                "stop": &outcome.stop,
                "skipped": skipped
                    .iter()
                    .map(|(hook, because)| json!({"hook": hook, "because": because}))
                    .collect::<Vec<_>>(),
            }),
        });
        for entry in &outcome.trace {
            let kind = match entry.status {
                TraceStatus::Answered(_) => AuditKind::HookResult,
                TraceStatus::Failed { .. } => AuditKind::HookFailure,
                TraceStatus::Detached => continue,
            };
            self.record(AuditEntry {
                kind,
                session: session.clone(),
                event: Some(event.name()),
                hook: Some(entry.hook.clone()),
                // A trace entry is strings, numbers and JSON values.
                data: serde_json::to_value(entry).unwrap_or_default(),
            });
        }
    }
}

impl Writer {
    fn append(&mut self, entry: AuditEntry, redactor: &Redactor, path: &Path) -> io::Result<()> {
        let size = self.file.metadata()?.len();
        if self.len != Some(size) {
            self.resync(size, redactor, path)?;
        }
        self.write(entry)
    }

    /// Append one line at the end known to `resync` (or the last write).
    fn write(&mut self, entry: AuditEntry) -> io::Result<()> {
        let Some(before) = self.len else {
            return Err(io::Error::other("the end of the audit log is not known"));
        };
        let mut line = AuditLine {
            seq: self.last_seq + 1,
            time: crate::event::now_rfc3339(),
            session: entry.session,
            kind: entry.kind.as_str().to_owned(),
            event: entry.event.map(|e| e.as_str().to_owned()),
            hook: entry.hook.map(|h| h.as_str().to_owned()),
            data: entry.data,
            key: None,
            prev: std::mem::take(&mut self.last_hash),
        };
        let sealed = chain::seal(&mut line, self.key.as_ref());
        if let Err(e) = self.file.write_all(&sealed.text) {
            self.last_hash = line.prev;
            self.len = None;
            self.file.set_len(before)?;
            return Err(e);
        }
        self.last_seq = line.seq;
        self.last_hash = sealed.hash;
        self.len = Some(before + sealed.text.len() as u64);
        self.head.write(&Head::new(
            self.last_seq,
            &self.last_hash,
            self.key.as_ref(),
        ))
    }

    /// Pick up the chain where the file ends now (another writer may have
    /// appended), and move a half last line into a `recovered` record.
    ///
    /// # Errors
    /// Besides failing reads and writes: when this writer has no key and
    /// the log (`path`) ends in a line sealed with one; nothing is changed.
    fn resync(&mut self, size: u64, redactor: &Redactor, path: &Path) -> io::Result<()> {
        let ends_whole = size == 0 || self.read(size - 1, size)? == b"\n";
        let keep = if ends_whole {
            size
        } else {
            self.line_start(size)?
        };
        let last = if keep == 0 {
            None
        } else {
            let start = self.line_start(keep - 1)?;
            let last = self.read(start, keep - 1)?;
            Some(chain::carried(&last).unwrap_or_else(|| {
                tracing::warn!(
                    "the last line of the audit log is not a record; chaining on from its raw hash"
                );
                Carried {
                    seq: 0,
                    hash: crate::digest::sha256_hex(&last),
                    key: None,
                }
            }))
        };
        let sealed_by = last.as_ref().map(|last| last.key.clone());
        if let (None, Some(Some(sealed_by))) = (&self.key, &sealed_by) {
            return Err(io::Error::other(format!(
                "the audit log {} is sealed with key {sealed_by}; appending to it without that key would downgrade it (its new lines could not be vouched for): give the key (`audit_key` in the user's config, or --audit-key), or start a new log",
                path.display()
            )));
        }
        let partial = if ends_whole {
            Vec::new()
        } else {
            let text = self.read(keep, size)?;
            self.file.set_len(keep)?;
            text
        };
        (self.last_seq, self.last_hash) = last.map_or_else(
            || (0, chain::GENESIS.to_owned()),
            |last| (last.seq, last.hash),
        );
        self.len = Some(keep);
        let found = match sealed_by.and_then(|sealed_by| self.unsealed_end(sealed_by.as_deref())) {
            Some(downgraded) => Some(downgraded),
            None => self.head_mismatch(keep)?,
        };
        if let Some(found) = found {
            self.write(AuditEntry {
                kind: AuditKind::Tampered,
                session: String::new(),
                event: None,
                hook: None,
                data: found,
            })?;
        }
        if !partial.is_empty() {
            let text = redactor.text(&String::from_utf8_lossy(&partial));
            self.write(AuditEntry {
                kind: AuditKind::Recovered,
                session: String::new(),
                event: None,
                hook: None,
                data: json!({ "partial_line": text, "bytes": partial.len() }),
            })?;
        }
        Ok(())
    }

    /// What is wrong, for a writer under a key, with a log whose last line
    /// was sealed by `sealed_by` (no key, or another one), if anything.
    ///
    /// Such a log is written without the key, or is a sealed log someone
    /// without the key rewrote as a plain chain, head and all: the writer
    /// cannot tell which, so its first line sealed with the key must not
    /// vouch for those before it. It says so in a `tampered` record rather
    /// than refusing to append: a refusal would let anyone who can write
    /// the log silence it by rewriting it, and, as for a head mismatch,
    /// the evidence is kept in the log, where `verify` reports it.
    fn unsealed_end(&self, sealed_by: Option<&str>) -> Option<Value> {
        let key = self.key.as_ref()?;
        (sealed_by != Some(key.id())).then(|| {
            json!({
                "problem": format!(
                    "the log ended in a line not sealed with key {}: it was written without the key (or under another), or a sealed log was rewritten without the key; the key cannot vouch for the lines before this one",
                    key.id()
                ),
                "last_line_sealed_with": sealed_by,
            })
        })
    }

    /// What is wrong with the head record, when the log (`len` bytes of
    /// whole lines) does not end where it says, or the head cannot be
    /// believed under this writer's key.
    fn head_mismatch(&self, len: u64) -> io::Result<Option<Value>> {
        let ends_at = self.last_seq;
        Ok(match self.head.read()? {
            None if len == 0 => None,
            None => Some(json!({
                "problem": "the head record was missing",
                "log_ends_at": ends_at,
            })),
            Some(Err(why)) => Some(json!({ "problem": format!("the head record {why}") })),
            Some(Ok(head)) if head.seq == ends_at && head.hash == self.last_hash => head
                .unsound(self.key.as_ref())
                .map(|why| json!({ "problem": format!("the head record {why}") })),
            Some(Ok(head)) => Some(json!({
                "problem": "the log did not end where its head record said: records were cut from its end or added to it (or a crash fell between writing a record and its head)",
                "head_says": head.seq,
                "log_ends_at": ends_at,
            })),
        })
    }

    /// Where the line holding the byte before `end` starts: just after the
    /// last newline before `end`, or 0.
    fn line_start(&self, end: u64) -> io::Result<u64> {
        let mut pos = end;
        while pos > 0 {
            let from = pos.saturating_sub(CHUNK);
            let chunk = self.read(from, pos)?;
            if let Some(i) = chunk.iter().rposition(|&b| b == b'\n') {
                return Ok(from + i as u64 + 1);
            }
            pos = from;
        }
        Ok(0)
    }

    fn read(&self, from: u64, to: u64) -> io::Result<Vec<u8>> {
        let len = usize::try_from(to - from).map_err(io::Error::other)?;
        let mut buf = vec![0; len];
        self.file.read_exact_at(&mut buf, from)?;
        Ok(buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(n: u64) -> AuditEntry {
        AuditEntry {
            kind: AuditKind::Dispatch,
            session: "s1".into(),
            event: Some(EventName::PreToolUse),
            hook: None,
            data: json!({ "n": n }),
        }
    }

    fn verify_file(path: &Path) -> Verification {
        verify(path, None).unwrap()
    }

    #[test]
    fn appends_chain_across_reopen_and_other_writers() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("logs/audit.jsonl");
        let a = AuditLog::open(&path, Redactor::new([], &[]), None).unwrap();
        a.append(entry(1)).unwrap();
        // A second writer (as another process would be) in between.
        let b = AuditLog::open(&path, Redactor::new([], &[]), None).unwrap();
        b.append(entry(2)).unwrap();
        a.append(entry(3)).unwrap();
        drop((a, b));
        AuditLog::open(&path, Redactor::new([], &[]), None)
            .unwrap()
            .append(entry(4))
            .unwrap();
        assert_eq!(verify_file(&path), Verification::Intact { lines: 4 });
        let seqs: Vec<u64> = read(File::open(&path).unwrap())
            .unwrap()
            .iter()
            .map(|l| l.data["n"].as_u64().unwrap())
            .collect();
        assert_eq!(seqs, [1, 2, 3, 4]);
    }

    #[test]
    fn m7_a_writer_that_finds_the_log_emptied_says_so_in_the_log() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let log = AuditLog::open(&path, Redactor::new([], &[]), None).unwrap();
        for n in 1..=3 {
            log.append(entry(n)).unwrap();
        }
        std::fs::write(&path, "").unwrap();
        log.append(entry(4)).unwrap();
        let lines = read(File::open(&path).unwrap()).unwrap();
        assert_eq!(lines[0].kind, "tampered");
        assert_eq!(lines[0].data["head_says"], 3);
        assert_eq!(lines[1].data["n"], 4);
        assert!(matches!(
            verify_file(&path),
            Verification::Broken {
                line: 1,
                reason: Break::Reported(_)
            }
        ));
    }

    #[test]
    fn a_half_line_from_a_crash_is_kept_in_a_recovered_record() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let log = AuditLog::open(&path, Redactor::new([], &[]), None).unwrap();
        log.append(entry(1)).unwrap();
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(br#"{"seq":2,"time":"half"#).unwrap();
        assert!(matches!(
            verify_file(&path),
            Verification::Broken {
                line: 2,
                reason: Break::Truncated
            }
        ));
        log.append(entry(3)).unwrap();
        assert_eq!(verify_file(&path), Verification::Intact { lines: 3 });
        let lines = read(File::open(&path).unwrap()).unwrap();
        assert_eq!(lines[1].kind, "recovered");
        assert_eq!(lines[1].data["partial_line"], r#"{"seq":2,"time":"half"#);
    }

    #[test]
    fn secrets_are_redacted_before_writing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let redactor = Redactor::new(
            [("SERVICE_TOKEN".to_owned(), "s3cr3t-value-1".to_owned())],
            &[],
        );
        let log = AuditLog::open(&path, redactor, None).unwrap();
        let mut e = entry(1);
        e.data = json!({ "command": "deploy --token s3cr3t-value-1" });
        log.append(e).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("s3cr3t"), "{text}");
        assert!(text.contains("deploy --token [REDACTED]"), "{text}");
    }

    /// `path`'s records rewritten as a forger without the key would: a
    /// plain chain (the second record edited), head and all.
    fn rechain_without_the_key(path: &Path) {
        let mut text = Vec::new();
        let mut prev = chain::GENESIS.to_owned();
        for mut line in read(File::open(path).unwrap()).unwrap() {
            if line.seq == 2 {
                line.data = json!({ "n": "forged" });
            }
            line.prev = prev;
            let sealed = chain::seal(&mut line, None);
            text.extend_from_slice(&sealed.text);
            prev = sealed.hash;
        }
        std::fs::write(path, text).unwrap();
        HeadFile::open(path)
            .unwrap()
            .write(&Head::new(3, &prev, None))
            .unwrap();
    }

    #[test]
    fn a_keyed_writer_does_not_seal_over_a_log_rechained_without_the_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let key = AuditKey::generate(&dir.path().join("audit.key")).unwrap();
        let open = || AuditLog::open(&path, Redactor::new([], &[]), Some(key.clone())).unwrap();
        let log = open();
        for n in 1..=3 {
            log.append(entry(n)).unwrap();
        }
        rechain_without_the_key(&path);
        // The next writer under the key, in another process.
        open().append(entry(4)).unwrap();
        assert_eq!(
            verify(&path, Some(&key)).unwrap(),
            Verification::Broken {
                line: 1,
                reason: Break::Unsealed
            }
        );
        // And it said so, sealed, before its own record.
        let lines = read(File::open(&path).unwrap()).unwrap();
        assert_eq!(lines[3].kind, "tampered");
        assert_eq!(lines[3].key.as_deref(), Some(key.id()));
        assert_eq!(lines[3].data["last_line_sealed_with"], Value::Null);
        assert_eq!(lines[4].data["n"], 4);
        let checked = read_checked(&path, Some(&key)).unwrap();
        assert!(
            matches!(&checked[3].problem, Some(Break::Reported(what)) if what.contains("not sealed with key")),
            "{checked:?}"
        );
    }

    #[test]
    fn a_keyed_writer_does_not_seal_over_a_cut_log_whose_head_was_rewritten_without_the_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let key = AuditKey::generate(&dir.path().join("audit.key")).unwrap();
        let open = || AuditLog::open(&path, Redactor::new([], &[]), Some(key.clone())).unwrap();
        let log = open();
        for n in 1..=4 {
            log.append(entry(n)).unwrap();
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let kept: Vec<&str> = text.split_inclusive('\n').take(2).collect();
        std::fs::write(&path, kept.concat()).unwrap();
        let last = chain::carried(kept[1].trim_end().as_bytes()).unwrap();
        HeadFile::open(&path)
            .unwrap()
            .write(&Head::new(last.seq, &last.hash, None))
            .unwrap();
        open().append(entry(5)).unwrap();
        let lines = read(File::open(&path).unwrap()).unwrap();
        assert_eq!(lines[2].kind, "tampered");
        assert!(matches!(
            verify(&path, Some(&key)).unwrap(),
            Verification::Broken {
                line: 3,
                reason: Break::Reported(what)
            } if what.contains("not sealed with the key given")
        ));
    }

    #[test]
    fn a_writer_without_the_key_refuses_to_append_to_a_keyed_log() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let key = AuditKey::generate(&dir.path().join("audit.key")).unwrap();
        let sealed = AuditLog::open(&path, Redactor::new([], &[]), Some(key.clone())).unwrap();
        for n in 1..=2 {
            sealed.append(entry(n)).unwrap();
        }
        let before = std::fs::read(&path).unwrap();
        let keyless = AuditLog::open(&path, Redactor::new([], &[]), None).unwrap();
        let refused = keyless.append(entry(3)).unwrap_err().to_string();
        assert!(refused.contains(&path.display().to_string()), "{refused}");
        assert!(
            refused.contains(&format!("sealed with key {}", key.id())),
            "{refused}"
        );
        assert!(refused.contains("downgrade"), "{refused}");
        assert_eq!(std::fs::read(&path).unwrap(), before);
        assert_eq!(
            verify(&path, Some(&key)).unwrap(),
            Verification::Intact { lines: 2 }
        );
    }
}
