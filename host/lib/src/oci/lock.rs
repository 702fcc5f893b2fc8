//! `wasm-hooks.lock`, beside the hook file and committed with it: every
//! OCI reference the file names, pinned to the manifest digest it resolved
//! to, with the component's digest and size, its WIT world and who signed
//! it. The engine loads only what the lock pins, so a moved tag changes
//! nothing until `wasm-hooks update`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::reference::is_sha256_digest;

/// The lock's file name, in the hook file's directory.
pub const LOCK_FILE: &str = "wasm-hooks.lock";
/// The format this engine writes and reads.
const VERSION: u32 = 1;

/// One pinned plugin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockEntry {
    /// The manifest's digest (`sha256:…`): what is pulled.
    pub digest: String,
    /// The component's digest (`sha256:…`): what is loaded.
    pub component: String,
    /// The component's size in bytes.
    pub size: u64,
    /// The WIT packages the component was built against.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub world: Vec<String>,
    /// The fingerprint of the key whose signature was verified, if one
    /// was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signer: Option<String>,
}

impl LockEntry {
    /// The component's sha256, hex (the pin the runtime checks).
    pub fn component_hex(&self) -> &str {
        self.component.trim_start_matches("sha256:")
    }
}

/// A lock file's contents.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lock {
    version: u32,
    /// Each reference, as the hook file writes it, and its pin.
    pub plugins: BTreeMap<String, LockEntry>,
}

/// A lock that cannot be read, in words naming the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}{}: {message}", line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct LockError {
    /// The lock.
    pub path: PathBuf,
    /// The line, when one is to blame.
    pub line: Option<usize>,
    /// What is wrong, and what was expected.
    pub message: String,
}

impl Lock {
    /// The lock beside the hook file in `dir`.
    pub fn path_in(dir: &Path) -> PathBuf {
        dir.join(LOCK_FILE)
    }

    /// The lock at `path`; an empty one when there is none.
    ///
    /// # Errors
    /// A lock that cannot be read, is not JSON of this shape, or holds a
    /// digest that is not one (a hand edit), naming the file, the line and
    /// the reference.
    pub fn read(path: &Path) -> Result<Self, LockError> {
        let fail = |line: Option<usize>, message: String| LockError {
            path: path.to_owned(),
            line,
            message,
        };
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(e) => return Err(fail(None, format!("cannot read it: {e}"))),
        };
        let mut de = serde_json::Deserializer::from_str(&text);
        let lock: Self = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let line = Some(e.inner().line());
            fail(line, format!("`{}`: {}", e.path(), e.inner()))
        })?;
        if lock.version != VERSION {
            return Err(fail(
                None,
                format!(
                    "`version` is {}, this wasm-hooks reads {VERSION}",
                    lock.version
                ),
            ));
        }
        for (reference, entry) in &lock.plugins {
            let line = text
                .find(&format!("\"{reference}\""))
                .map(|at| text[..at].lines().count());
            for (field, digest) in [("digest", &entry.digest), ("component", &entry.component)] {
                if !is_sha256_digest(digest) {
                    return Err(fail(
                        line,
                        format!(
                            "`plugins.{reference}.{field}` is `{digest}`, expected `sha256:` and 64 lowercase hex digits (edited by hand? `wasm-hooks update {reference}` writes it again)"
                        ),
                    ));
                }
            }
        }
        Ok(lock)
    }

    /// Write the lock to `path` whole (a temporary file renamed over it),
    /// so a reader never sees half of it.
    ///
    /// # Errors
    /// When it cannot be written.
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        let mut text = serde_json::to_string_pretty(&Self {
            version: VERSION,
            plugins: self.plugins.clone(),
        })?;
        text.push('\n');
        super::store::write_whole(path, text.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> LockEntry {
        LockEntry {
            digest: format!("sha256:{}", "a".repeat(64)),
            component: format!("sha256:{}", "b".repeat(64)),
            size: 10,
            world: vec!["wasm-hooks:plugin@0.2.0".into()],
            signer: None,
        }
    }

    #[test]
    fn a_lock_round_trips_and_a_missing_one_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let path = Lock::path_in(dir.path());
        assert_eq!(Lock::read(&path).unwrap(), Lock::default());
        let mut lock = Lock::default();
        lock.plugins.insert("oci://127.0.0.1:1/x:1".into(), entry());
        lock.write(&path).unwrap();
        assert_eq!(Lock::read(&path).unwrap().plugins, lock.plugins);
    }

    #[test]
    fn a_lock_edited_by_hand_into_a_bad_digest_names_the_file_line_and_reference() {
        let dir = tempfile::tempdir().unwrap();
        let path = Lock::path_in(dir.path());
        let mut lock = Lock::default();
        lock.plugins.insert("oci://127.0.0.1:1/x:1".into(), entry());
        lock.write(&path).unwrap();
        let text = std::fs::read_to_string(&path)
            .unwrap()
            .replace(&"a".repeat(64), "abc");
        std::fs::write(&path, text).unwrap();
        let e = Lock::read(&path).unwrap_err().to_string();
        assert!(
            e.contains("wasm-hooks.lock:4") && e.contains("oci://127.0.0.1:1/x:1.digest"),
            "{e}"
        );
        std::fs::write(&path, "{\"version\":1,\"plugins\":{\"r\":{\"digest\":1}}}").unwrap();
        let e = Lock::read(&path).unwrap_err().to_string();
        assert!(e.contains("plugins.r.digest"), "{e}");
    }
}
