//! The head record beside an audit log (`<log>.head`): the number and hash
//! of the last record written, rewritten after every append. A log cut
//! short, emptied, or lengthened by something else no longer ends where
//! its head says. Under a key the head carries an HMAC, so that moving it
//! needs the key too.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::key::AuditKey;

/// What the head says was written last.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Head {
    /// The last record's number.
    pub(crate) seq: u64,
    /// Its hash.
    pub(crate) hash: String,
    /// The key that sealed the head, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) key: Option<String>,
    /// The seal under that key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) mac: Option<String>,
}

/// The head file of the log at `log`.
pub(crate) fn path_of(log: &Path) -> PathBuf {
    let mut name = log.as_os_str().to_owned();
    name.push(".head");
    PathBuf::from(name)
}

impl Head {
    /// The head for record `seq` with `hash`, sealed under `key` if any.
    pub(crate) fn new(seq: u64, hash: &str, key: Option<&AuditKey>) -> Self {
        Self {
            seq,
            hash: hash.to_owned(),
            key: key.map(|k| k.id().to_owned()),
            mac: key.map(|k| k.seal_hex(sealed_text(seq, hash).as_bytes())),
        }
    }

    /// Read the head of `log`: none when there is no head file, or an
    /// empty one.
    ///
    /// # Errors
    /// When the file cannot be read; a head that is not one is
    /// `Ok(Some(Err(why)))`.
    pub(crate) fn read(log: &Path) -> io::Result<Option<Result<Self, String>>> {
        match std::fs::read(path_of(log)) {
            Ok(text) => Ok(parse(&text)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Why this head cannot be believed under `key`, if it cannot.
    pub(crate) fn unsound(&self, key: Option<&AuditKey>) -> Option<String> {
        match (&self.key, key) {
            (None, None) => None,
            (None, Some(_)) => Some("is not sealed with the key given: it was rewritten".into()),
            (Some(id), Some(key)) if id == key.id() => {
                let expected = key.seal_hex(sealed_text(self.seq, &self.hash).as_bytes());
                (self.mac.as_deref() != Some(&expected))
                    .then(|| "does not match its seal: it was forged".into())
            }
            (Some(id), _) => Some(format!(
                "is sealed with key {id}, which was not given (--audit-key): it cannot be checked"
            )),
        }
    }
}

/// A head file's text as a head: none when it is empty (made, never
/// written).
fn parse(text: &[u8]) -> Option<Result<Head, String>> {
    let text = text.trim_ascii();
    (!text.is_empty())
        .then(|| serde_json::from_slice(text).map_err(|e| format!("is not a head record ({e})")))
}

/// The text a head's seal covers.
fn sealed_text(seq: u64, hash: &str) -> String {
    format!("head {seq} {hash}")
}

/// The open head file of a log, rewritten in place after each append.
#[derive(Debug)]
pub(crate) struct HeadFile {
    file: File,
}

impl HeadFile {
    /// Open (or create, mode 0600) the head file of `log`.
    pub(crate) fn open(log: &Path) -> io::Result<Self> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(path_of(log))?;
        Ok(Self { file })
    }

    /// The head as the file holds it now: none when it is empty.
    pub(crate) fn read(&self) -> io::Result<Option<Result<Head, String>>> {
        let len = usize::try_from(self.file.metadata()?.len()).map_err(io::Error::other)?;
        let mut text = vec![0; len];
        self.file.read_exact_at(&mut text, 0)?;
        Ok(parse(&text))
    }

    /// Replace the head with `head`.
    pub(crate) fn write(&self, head: &Head) -> io::Result<()> {
        // A struct of strings and numbers always serializes.
        let mut text = serde_json::to_vec(head).unwrap_or_default();
        text.push(b'\n');
        self.file.write_all_at(&text, 0)?;
        self.file.set_len(text.len() as u64)
    }
}
