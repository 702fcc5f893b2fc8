//! The CNCF Wasm OCI artifact layout (the one `wkg oci push` writes): an
//! OCI image manifest whose config is `application/vnd.wasm.config.v0+json`
//! and whose one layer is the component, `application/wasm`. Written here
//! with a fixed `created`, so one component always makes one manifest
//! digest; read here from any tool that follows the layout.

use super::OciError;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::reference::is_sha256_digest;
use wasm_hooks_core::sha256_hex;

/// An OCI image manifest's media type.
pub const MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
/// The wasm config's media type.
pub const CONFIG_MEDIA_TYPE: &str = "application/vnd.wasm.config.v0+json";
/// The component layer's media type.
pub const LAYER_MEDIA_TYPE: &str = "application/wasm";
/// What `created` says in every config written here: the digest must not
/// change with the clock.
const FIXED_CREATED: &str = "1970-01-01T00:00:00Z";

/// The most bytes a manifest may have (real ones are under 4 KiB).
pub const MAX_MANIFEST_BYTES: usize = 64 * 1024;

/// One blob a manifest points to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Descriptor {
    /// Its media type.
    pub media_type: String,
    /// `sha256:…` of its bytes.
    pub digest: String,
    /// Its size in bytes.
    pub size: u64,
    /// Its annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<std::collections::BTreeMap<String, String>>,
}

impl Descriptor {
    fn of(media_type: &str, bytes: &[u8]) -> Self {
        Self {
            media_type: media_type.to_owned(),
            digest: format!("sha256:{}", sha256_hex(bytes)),
            size: bytes.len() as u64,
            annotations: None,
        }
    }
}

/// An OCI image manifest, as far as this engine reads or writes one.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    /// Always 2.
    pub schema_version: u32,
    /// [`MANIFEST_MEDIA_TYPE`].
    #[serde(default)]
    pub media_type: Option<String>,
    /// The config blob.
    pub config: Descriptor,
    /// The layers.
    pub layers: Vec<Descriptor>,
    /// Its annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<std::collections::BTreeMap<String, String>>,
}

impl Manifest {
    /// The manifest's bytes as pushed (its digest is their sha256).
    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("a manifest serializes")
    }
}

/// A component packed as an artifact: the blobs and the manifest to push.
#[derive(Debug)]
pub struct Packed {
    /// The config blob.
    pub config: Vec<u8>,
    /// The manifest.
    pub manifest: Manifest,
}

/// The artifact of `wasm` (a component named `file_name`) whose imports
/// and exports are these.
pub fn pack(wasm: &[u8], file_name: &str, imports: &[String], exports: &[String]) -> Packed {
    let layer_digest = format!("sha256:{}", sha256_hex(wasm));
    let config = serde_json::json!({
        "created": FIXED_CREATED,
        "author": null,
        "architecture": "wasm",
        "os": "wasip2",
        "layerDigests": [layer_digest],
        "component": {"exports": exports, "imports": imports, "target": null},
    });
    let config = serde_json::to_vec(&config).expect("a config serializes");
    let mut layer = Descriptor::of(LAYER_MEDIA_TYPE, wasm);
    layer.annotations = Some(
        [(
            "org.opencontainers.image.title".to_owned(),
            file_name.to_owned(),
        )]
        .into(),
    );
    let manifest = Manifest {
        schema_version: 2,
        media_type: Some(MANIFEST_MEDIA_TYPE.to_owned()),
        config: Descriptor::of(CONFIG_MEDIA_TYPE, &config),
        layers: vec![layer],
        annotations: None,
    };
    Packed { config, manifest }
}

/// The component layer of a pulled manifest, if it is a wasm artifact.
///
/// # Errors
/// What makes it something else (an image, an index, two layers…), in
/// words.
pub fn wasm_layer(manifest_bytes: &[u8]) -> Result<Descriptor, OciError> {
    let value: Value = serde_json::from_slice(manifest_bytes)
        .map_err(|e| OciError::NotWasm(format!("the manifest is not JSON ({e})")))?;
    let media_type = value.get("mediaType").and_then(Value::as_str);
    if value.get("manifests").is_some() {
        return Err(OciError::NotWasm(format!(
            "it is an image index ({}), not a wasm component",
            media_type.unwrap_or("no mediaType")
        )));
    }
    let manifest: Manifest = serde_json::from_value(value).map_err(|e| {
        OciError::NotWasm(format!("the manifest is not an OCI image manifest ({e})"))
    })?;
    if manifest
        .media_type
        .as_deref()
        .is_some_and(|t| t != MANIFEST_MEDIA_TYPE)
    {
        return Err(OciError::NotWasm(format!(
            "its media type is `{}`, expected `{MANIFEST_MEDIA_TYPE}`",
            manifest.media_type.unwrap_or_default()
        )));
    }
    if manifest.config.media_type != CONFIG_MEDIA_TYPE {
        return Err(OciError::NotWasm(format!(
            "it is not a wasm component: its config is `{}`, expected `{CONFIG_MEDIA_TYPE}` (the CNCF Wasm OCI artifact layout)",
            manifest.config.media_type
        )));
    }
    let [layer] = manifest.layers.as_slice() else {
        return Err(OciError::NotWasm(format!(
            "a wasm artifact has exactly one layer, this has {}",
            manifest.layers.len()
        )));
    };
    if layer.media_type != LAYER_MEDIA_TYPE {
        return Err(OciError::NotWasm(format!(
            "its layer is `{}`, expected `{LAYER_MEDIA_TYPE}`",
            layer.media_type
        )));
    }
    if !is_sha256_digest(&layer.digest) {
        return Err(OciError::NotWasm(format!(
            "its layer digest `{}` is not `sha256:` and 64 hex digits",
            layer.digest
        )));
    }
    Ok(layer.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_component_always_packs_to_the_same_manifest_digest() {
        let one = pack(
            b"\0asm",
            "a.wasm",
            &["wasi:cli/environment@0.2.0".into()],
            &[],
        );
        let two = pack(
            b"\0asm",
            "a.wasm",
            &["wasi:cli/environment@0.2.0".into()],
            &[],
        );
        assert_eq!(one.manifest.to_bytes(), two.manifest.to_bytes());
        assert_eq!(wasm_layer(&one.manifest.to_bytes()).unwrap().size, 4);
    }

    #[test]
    fn a_manifest_that_is_not_a_wasm_artifact_is_refused_saying_what_it_is() {
        let mut image = pack(b"x", "a.wasm", &[], &[]).manifest;
        image.config.media_type = "application/vnd.oci.image.config.v1+json".into();
        assert!(
            wasm_layer(&image.to_bytes())
                .unwrap_err()
                .to_string()
                .contains("not a wasm component")
        );
        let index = br#"{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[]}"#;
        assert!(
            wasm_layer(index)
                .unwrap_err()
                .to_string()
                .contains("image index")
        );
        assert!(
            wasm_layer(b"<html>")
                .unwrap_err()
                .to_string()
                .contains("not JSON")
        );
        let mut two = pack(b"x", "a.wasm", &[], &[]).manifest;
        two.layers.push(two.layers[0].clone());
        assert!(
            wasm_layer(&two.to_bytes())
                .unwrap_err()
                .to_string()
                .contains("exactly one layer")
        );
    }
}
