//! Getting a locked plugin into the store, and pinning a reference in the
//! first place: resolve, check the artifact, verify the signature the
//! person's settings ask for, fetch the component, store it whole. And the
//! way back: publish a component (and its signature).

use std::path::{Path, PathBuf};
use std::time::Duration;

use wasm_hooks_wasm::PluginInfo;

use super::artifact::{self, Descriptor};
use super::error::OciError;
use super::lock::LockEntry;
use super::reference::PluginRef;
use super::registry::Registry;
use super::signature::{self, SigningKey};
use super::signers::SignerPolicy;
use super::store::PluginStore;

/// The largest component pulled (a Python guest is ~19 MB).
pub const MAX_PLUGIN_BYTES: u64 = 256 * 1024 * 1024;

/// Pulls plugins into a store under a signer policy.
#[derive(Debug, Clone)]
pub struct Fetcher {
    /// Where components go.
    pub store: PluginStore,
    /// Who must have signed them.
    pub signers: SignerPolicy,
    /// The most each registry call may take.
    pub deadline: Duration,
    /// The largest component taken.
    pub max_bytes: u64,
}

impl Fetcher {
    /// A fetcher into `store` under `signers`.
    pub fn new(store: PluginStore, signers: SignerPolicy, deadline: Duration) -> Self {
        Self {
            store,
            signers,
            deadline,
            max_bytes: MAX_PLUGIN_BYTES,
        }
    }

    /// The stored component `entry` pins, when it is there and (if
    /// signatures are needed) known to be signed by a trusted key.
    pub fn stored(&self, entry: &LockEntry) -> Option<PathBuf> {
        let signed = !self.signers.required || {
            let verified = self.store.verified_signers(&entry.digest, &entry.component);
            self.signers
                .fingerprints()
                .iter()
                .any(|key| verified.contains(key))
        };
        (signed && self.store.has(&entry.component)).then(|| self.store.component(&entry.component))
    }

    /// Make sure the component `entry` pins for `reference` is stored
    /// (pulling and verifying it if not), and return its path.
    ///
    /// # Errors
    /// When it cannot be pulled, is not what the lock pins, or is not
    /// signed as the settings require; nothing is stored then.
    pub async fn ensure(
        &self,
        reference: &PluginRef,
        entry: &LockEntry,
    ) -> Result<PathBuf, OciError> {
        if let Some(path) = self.stored(entry) {
            return Ok(path);
        }
        let registry = Registry::new(reference, self.deadline);
        let layer = self
            .check_manifest(&registry, reference, &entry.digest)
            .await?;
        if layer.digest != entry.component || layer.size != entry.size {
            return Err(OciError::Refused(format!(
                "{reference}: the lock pins manifest {} to component {} ({} bytes), but that manifest's component is {} ({} bytes): the lock was edited by hand or is not this registry's; run `wasm-hooks update {reference}` to pin it again",
                entry.digest, entry.component, entry.size, layer.digest, layer.size
            )));
        }
        self.verify_signature(&registry, reference, &entry.digest, &entry.component)
            .await?;
        self.fetch_component(&registry, reference, &layer).await
    }

    /// Resolve `reference` now (its tag's current digest), pull and verify
    /// it, and return the lock entry that pins it.
    ///
    /// # Errors
    /// As [`Fetcher::ensure`].
    pub async fn resolve(&self, reference: &PluginRef) -> Result<LockEntry, OciError> {
        let registry = Registry::new(reference, self.deadline);
        let digest = registry.resolve(reference).await?;
        let layer = self.check_manifest(&registry, reference, &digest).await?;
        let signer = self
            .verify_signature(&registry, reference, &digest, &layer.digest)
            .await?;
        let path = self.fetch_component(&registry, reference, &layer).await?;
        let world = PluginInfo::read(&path)
            .map(|info| info.wit)
            .unwrap_or_default();
        Ok(LockEntry {
            digest,
            component: layer.digest,
            size: layer.size,
            world,
            signer,
        })
    }

    /// The component layer of the manifest `digest`, checked to be a wasm
    /// artifact.
    async fn check_manifest(
        &self,
        registry: &Registry,
        reference: &PluginRef,
        digest: &str,
    ) -> Result<Descriptor, OciError> {
        let bytes = registry.manifest(reference, digest).await?;
        artifact::wasm_layer(&bytes)
            .map_err(|e| OciError::Registry(format!("{reference} ({digest}): {e}")))
    }

    async fn fetch_component(
        &self,
        registry: &Registry,
        reference: &PluginRef,
        layer: &Descriptor,
    ) -> Result<PathBuf, OciError> {
        if self.store.has(&layer.digest) {
            return Ok(self.store.component(&layer.digest));
        }
        let bytes = registry.blob(reference, layer, self.max_bytes).await?;
        // Its own error (a digest mismatch, a store that cannot be
        // written), not the registry's.
        self.store.put(&layer.digest, &bytes)
    }

    /// The fingerprint of a trusted key that signed `digest`, when the
    /// settings ask for signatures (recorded in the store); none when they
    /// do not.
    async fn verify_signature(
        &self,
        registry: &Registry,
        reference: &PluginRef,
        digest: &str,
        component: &str,
    ) -> Result<Option<String>, OciError> {
        if !self.signers.required {
            return Ok(None);
        }
        if self.signers.keys.is_empty() {
            return Err(OciError::Refused(format!(
                "{reference}: {}",
                self.signers.no_keys()
            )));
        }
        let tag = signature::signature_tag(digest);
        let Some(bytes) = registry.manifest_at_tag(reference, &tag).await? else {
            return Err(OciError::Refused(format!(
                "{reference} ({digest}) is not signed (no `{tag}` in the registry), and your settings require signed plugins: publish it with `wasm-hooks publish … --key KEY`"
            )));
        };
        let layers = signature::signature_layers(&bytes)
            .map_err(|e| OciError::Registry(format!("{reference}: {e}")))?;
        for (layer, sig) in &layers {
            let payload = registry
                .blob(reference, layer, signature::MAX_PAYLOAD_BYTES)
                .await?;
            if let Some(key) = signature::signer(&self.signers.keys, &payload, sig, digest) {
                let fingerprint = key.fingerprint();
                self.store.record_signer(digest, component, &fingerprint)?;
                return Ok(Some(fingerprint));
            }
        }
        Err(OciError::Refused(format!(
            "{reference} ({digest}) carries {} signature(s), none by a key you trust ({}): refused",
            layers.len(),
            self.signers.fingerprints().join(", ")
        )))
    }
}

/// What `publish` pushed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Published {
    /// The manifest's digest.
    pub digest: String,
    /// The component's digest.
    pub component: String,
    /// The signing key's fingerprint, if signed.
    pub signer: Option<String>,
}

/// Push the component at `wasm` to `reference` (which names a tag) in the
/// CNCF Wasm layout, and sign it with `key` if given.
///
/// # Errors
/// When the file is not a component, the reference names no tag, or the
/// registry refuses.
pub async fn publish(
    wasm: &Path,
    reference: &PluginRef,
    key: Option<&SigningKey>,
    deadline: Duration,
) -> Result<Published, OciError> {
    let Some(tag) = reference.as_reference().tag().map(str::to_owned) else {
        return Err(OciError::Registry(format!(
            "{reference}: publish to a tag (`…:1.0.0`), not a digest"
        )));
    };
    let info = PluginInfo::read(wasm).map_err(|e| OciError::Registry(e.to_string()))?;
    let bytes = std::fs::read(wasm)
        .map_err(|e| OciError::Registry(format!("cannot read {}: {e}", wasm.display())))?;
    let name = wasm.file_name().unwrap_or_default().to_string_lossy();
    let packed = artifact::pack(&bytes, &name, &info.imports, &info.exports);
    let registry = Registry::new(reference, deadline);
    let component = registry.push_blob(reference, bytes).await?;
    registry.push_blob(reference, packed.config).await?;
    let digest = registry
        .push_manifest(reference, &tag, packed.manifest.to_bytes())
        .await?;
    let signer = match key {
        None => None,
        Some(key) => Some(push_signature(&registry, reference, &digest, key).await?),
    };
    Ok(Published {
        digest,
        component,
        signer,
    })
}

/// Sign `digest` and add the signature to its `.sig` tag, keeping every
/// layer already there as it is (other keys' signatures, keyless ones with
/// their certificates), as cosign does.
async fn push_signature(
    registry: &Registry,
    reference: &PluginRef,
    digest: &str,
    key: &SigningKey,
) -> Result<String, OciError> {
    let tag = signature::signature_tag(digest);
    let mut layers = match registry.manifest_at_tag(reference, &tag).await? {
        Some(bytes) => signature::all_layers(&bytes).map_err(|e| {
            OciError::Registry(format!("{reference}: the signatures already at `{tag}` cannot be read, so none is added: {e}"))
        })?,
        None => Vec::new(),
    };
    let signed = signature::sign(key, &reference.repository_name(), digest);
    let payload_digest = registry
        .push_blob(reference, signed.payload.clone())
        .await?;
    layers.push(Descriptor {
        media_type: signature::SIGNATURE_LAYER_MEDIA_TYPE.to_owned(),
        digest: payload_digest,
        size: signed.payload.len() as u64,
        annotations: Some([(signature::SIGNATURE_ANNOTATION.to_owned(), signed.signature)].into()),
    });
    let (config, manifest) = signature::signature_manifest(&layers);
    registry.push_blob(reference, config).await?;
    registry
        .push_manifest(reference, &tag, manifest.to_bytes())
        .await?;
    Ok(key.public_key().fingerprint())
}
