//! What can go wrong with an OCI plugin before any registry is asked: a
//! reference, a manifest, the store, a key.

use std::path::PathBuf;

/// Why a reference, a manifest, a stored component or a key is refused,
/// in words that name what was expected.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OciError {
    /// Not a reference this engine can pull.
    #[error("{0}")]
    Reference(String),
    /// The manifest is not a wasm component's (an image, an index, two
    /// layers…).
    #[error("{0}")]
    NotWasm(String),
    /// Bytes whose sha256 is not the digest they were pulled as.
    #[error("its bytes hash to {actual}, not {expected}: refused, nothing stored")]
    DigestMismatch {
        /// What they hash to.
        actual: String,
        /// The digest asked for.
        expected: String,
    },
    /// The store cannot be written.
    #[error("cannot store it in {}: {source}", dir.display())]
    Store {
        /// The store's directory.
        dir: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Not a key of the kind plugins are signed with (ECDSA P-256, PEM).
    #[error("{0}")]
    Key(String),
    /// The registry cannot be reached within the deadline, refuses, or
    /// answers with what is not the plugin asked for.
    #[error("{0}")]
    Registry(String),
    /// The plugin is not what the lock pins, or not signed as the settings
    /// require: refused, nothing stored.
    #[error("{0}")]
    Refused(String),
    /// A key file that cannot be read, or holds no such key.
    #[error("{}: {why}", path.display())]
    KeyFile {
        /// The file.
        path: PathBuf,
        /// Why.
        why: String,
    },
}
