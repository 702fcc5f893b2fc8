//! Content hashes shared by the audit chain, plugin keys and pins.

use sha2::{Digest, Sha256};

/// The SHA-256 of `bytes`, in lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    format!("{:x}", Sha256::digest(bytes))
}
