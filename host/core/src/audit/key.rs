//! The secret an audit log can be sealed with: each line's hash and the
//! head record become HMAC-SHA256s under it, so that rewriting the log
//! (re-chaining it after an edit, or moving its head) needs the key, which
//! lives outside the log.

use std::fmt;
use std::io;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::digest::sha256_hex;

/// The fewest characters a key file may hold.
const MIN_KEY_LEN: usize = 32;

/// An audit log key, read from a file of its own.
#[derive(Clone)]
pub struct AuditKey {
    secret: Vec<u8>,
    id: String,
}

impl fmt::Debug for AuditKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuditKey").field("id", &self.id).finish()
    }
}

impl AuditKey {
    /// Read the key in `path`: at least 32 characters (surrounding
    /// whitespace left out), in a file only its owner may read.
    ///
    /// # Errors
    /// When the file cannot be read, others may read it, or the key is too
    /// short.
    pub fn load(path: &Path) -> io::Result<Self> {
        let invalid = |why: String| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("audit key {}: {why}", path.display()),
            )
        };
        let mode = std::fs::metadata(path)?.permissions().mode();
        if mode & 0o077 != 0 {
            return Err(invalid(format!(
                "others may read it (mode {:o}); `chmod 600` it",
                mode & 0o777
            )));
        }
        let text = std::fs::read(path)?;
        let secret = text.trim_ascii().to_vec();
        if secret.len() < MIN_KEY_LEN {
            return Err(invalid(format!(
                "too short: {} characters where at least {MIN_KEY_LEN} are needed (`wasm-hooks audit key FILE` makes one)",
                secret.len()
            )));
        }
        Ok(Self::from_secret(secret))
    }

    /// Make a new random key (32 bytes, as hex) in a new file at `path`,
    /// readable by its owner only.
    ///
    /// # Errors
    /// When `path` exists or cannot be written, or no randomness is to be
    /// had.
    pub fn generate(path: &Path) -> io::Result<Self> {
        let mut bytes = [0u8; 32];
        getrandom::getrandom(&mut bytes).map_err(|e| io::Error::other(e.to_string()))?;
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path)?;
        io::Write::write_all(&mut file, format!("{hex}\n").as_bytes())?;
        Ok(Self::from_secret(hex.into_bytes()))
    }

    fn from_secret(secret: Vec<u8>) -> Self {
        let id = sha256_hex(&secret)[..16].to_owned();
        Self { secret, id }
    }

    /// The key's name in the lines it sealed: the start of its SHA-256,
    /// which says which key to use and nothing of the key.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The HMAC-SHA256 of `bytes` under this key, in lowercase hex.
    pub(crate) fn seal_hex(&self, bytes: &[u8]) -> String {
        // HMAC takes a key of any length.
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.secret).expect("any key length");
        mac.update(bytes);
        mac.finalize()
            .into_bytes()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generated_key_loads_as_itself_and_seals_differently_from_another() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.key");
        let made = AuditKey::generate(&path).unwrap();
        let loaded = AuditKey::load(&path).unwrap();
        assert_eq!(made.id(), loaded.id());
        assert_eq!(made.seal_hex(b"line"), loaded.seal_hex(b"line"));
        let other = AuditKey::generate(&dir.path().join("other.key")).unwrap();
        assert_ne!(other.seal_hex(b"line"), made.seal_hex(b"line"));
        assert!(AuditKey::generate(&path).is_err(), "never overwrites a key");
    }

    #[test]
    fn a_short_or_shared_key_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let short = dir.path().join("short.key");
        std::fs::write(&short, "abc\n").unwrap();
        std::fs::set_permissions(&short, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(
            AuditKey::load(&short)
                .unwrap_err()
                .to_string()
                .contains("too short")
        );
        let shared = dir.path().join("shared.key");
        std::fs::write(&shared, "a".repeat(64)).unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(
            AuditKey::load(&shared)
                .unwrap_err()
                .to_string()
                .contains("chmod 600")
        );
    }
}
