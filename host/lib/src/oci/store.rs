//! The content-addressed store of pulled plugins, in the user's cache
//! (`$XDG_CACHE_HOME/wasm-hooks/plugins`): each component under its
//! sha256, written only after its bytes were checked against the digest it
//! was pulled by, and renamed into place whole. Beside them, for each
//! manifest digest, the fingerprints of the keys whose signatures on it
//! were verified: the store is the person's, a lock is the repository's,
//! so only the store may say a plugin was signed.

use super::OciError;
use std::collections::BTreeSet;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use wasm_hooks_core::sha256_hex;

/// The plugin store.
#[derive(Debug, Clone)]
pub struct PluginStore {
    dir: PathBuf,
}

impl PluginStore {
    /// A store in `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The user's store (`WASM_HOOKS_PLUGIN_STORE` when it names a
    /// directory of the person's own outside every project, see
    /// [`wasm_hooks_core::personal_dir`], else
    /// `$XDG_CACHE_HOME/wasm-hooks/plugins`), if there is a home. A folder
    /// a repository wrote must not be able to vouch for a signature.
    pub fn default_dir() -> Option<PathBuf> {
        wasm_hooks_core::personal_dir_from_env(
            "WASM_HOOKS_PLUGIN_STORE",
            wasm_hooks_core::Owner::Me,
        )
        .or_else(|| {
            wasm_hooks_core::xdg_dir("XDG_CACHE_HOME", ".cache")
                .map(|d| d.join("wasm-hooks").join("plugins"))
        })
    }

    /// Where the component with `digest` (`sha256:…`) is, if stored.
    pub fn component(&self, digest: &str) -> PathBuf {
        self.dir
            .join("sha256")
            .join(format!("{}.wasm", digest.trim_start_matches("sha256:")))
    }

    /// Whether the component with `digest` is stored.
    pub fn has(&self, digest: &str) -> bool {
        self.component(digest).is_file()
    }

    /// Store `bytes` as the component `digest`.
    ///
    /// # Errors
    /// When their sha256 is not `digest` (nothing is written), or the
    /// store cannot be written.
    pub fn put(&self, digest: &str, bytes: &[u8]) -> Result<PathBuf, OciError> {
        let actual = format!("sha256:{}", sha256_hex(bytes));
        if actual != digest {
            return Err(OciError::DigestMismatch {
                actual,
                expected: digest.to_owned(),
            });
        }
        let path = self.component(digest);
        write_whole(&path, bytes).map_err(|source| OciError::Store {
            dir: self.dir.clone(),
            source,
        })?;
        Ok(path)
    }

    fn signers_file(&self, manifest: &str) -> PathBuf {
        self.dir
            .join("signed")
            .join(format!("{}.json", manifest.trim_start_matches("sha256:")))
    }

    /// The fingerprints of keys whose signatures on the manifest
    /// `manifest` were verified here, when that manifest's component is
    /// `component` (a lock cannot pair a signed manifest with other bytes).
    pub fn verified_signers(&self, manifest: &str, component: &str) -> BTreeSet<String> {
        std::fs::read(self.signers_file(manifest))
            .ok()
            .and_then(|bytes| serde_json::from_slice::<SignedRecord>(&bytes).ok())
            .filter(|record| record.component == component)
            .map(|record| record.signers)
            .unwrap_or_default()
    }

    /// Record that `signer` signed `manifest`, whose component is
    /// `component`.
    ///
    /// # Errors
    /// [`OciError::Store`] when the store cannot be written.
    pub fn record_signer(
        &self,
        manifest: &str,
        component: &str,
        signer: &str,
    ) -> Result<(), OciError> {
        let mut signers = self.verified_signers(manifest, component);
        if signers.insert(signer.to_owned()) {
            let record = SignedRecord {
                component: component.to_owned(),
                signers,
            };
            let bytes = serde_json::to_vec(&record).map_err(std::io::Error::from);
            bytes
                .and_then(|bytes| write_whole(&self.signers_file(manifest), &bytes))
                .map_err(|source| OciError::Store {
                    dir: self.dir.clone(),
                    source,
                })?;
        }
        Ok(())
    }
}

/// What the store knows of one signed manifest.
#[derive(serde::Serialize, serde::Deserialize)]
struct SignedRecord {
    component: String,
    signers: BTreeSet<String>,
}

/// Write `bytes` to `path` through a temporary file in its directory,
/// synced and renamed over it: a reader sees the old file or the new one,
/// never half of one.
pub(super) fn write_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    file.write_all(bytes)?;
    file.as_file().sync_all()?;
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blob_whose_bytes_do_not_match_its_digest_is_refused_and_not_stored() {
        let dir = tempfile::tempdir().unwrap();
        let store = PluginStore::new(dir.path());
        let digest = format!("sha256:{}", sha256_hex(b"good"));
        assert!(
            store
                .put(&digest, b"evil")
                .unwrap_err()
                .to_string()
                .contains("refused")
        );
        assert!(!store.has(&digest));
        assert_eq!(
            std::fs::read(store.put(&digest, b"good").unwrap()).unwrap(),
            b"good"
        );
        let manifest = format!("sha256:{}", "m".repeat(0) + &"1".repeat(64));
        assert!(store.verified_signers(&manifest, &digest).is_empty());
        store.record_signer(&manifest, &digest, "sha256:k").unwrap();
        assert!(
            store
                .verified_signers(&manifest, &digest)
                .contains("sha256:k")
        );
        // A lock that pairs the signed manifest with other bytes gets nothing.
        assert!(store.verified_signers(&manifest, "sha256:other").is_empty());
    }
}
