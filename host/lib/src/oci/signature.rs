//! Cosign's keyed signatures, as `cosign sign --key` writes them and
//! `cosign verify --key` reads them: beside the artifact, the tag
//! `sha256-<hex>.sig` holds one layer per signature; each layer is the
//! "simple signing" payload naming the manifest digest, and its annotation
//! `dev.cosignproject.cosign/signature` is the ECDSA P-256 / SHA-256
//! signature (DER, base64) of exactly those bytes. Keys are PKCS#8 (private)
//! and SubjectPublicKeyInfo (public) PEM files, which openssl, cosign
//! (`import-key-pair`) and this engine all read.

use super::OciError;
use aws_lc_rs::encoding::AsDer;
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{
    ECDSA_P256_SHA256_ASN1, ECDSA_P256_SHA256_ASN1_SIGNING, EcdsaKeyPair, KeyPair,
    UnparsedPublicKey,
};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{PrivatePkcs8KeyDer, SubjectPublicKeyInfoDer};
use serde_json::Value;

use super::artifact::{Descriptor, MANIFEST_MEDIA_TYPE, Manifest};
use wasm_hooks_core::sha256_hex;

/// A signature layer's media type.
pub const SIGNATURE_LAYER_MEDIA_TYPE: &str = "application/vnd.dev.cosign.simplesigning.v1+json";
/// The annotation that carries the signature.
pub const SIGNATURE_ANNOTATION: &str = "dev.cosignproject.cosign/signature";
/// The `critical.type` of a cosign payload.
const PAYLOAD_TYPE: &str = "cosign container image signature";
/// The config media type cosign's signature manifests have.
const SIGNATURE_CONFIG_MEDIA_TYPE: &str = "application/vnd.oci.image.config.v1+json";
/// The most signature layers read (cosign reads 1000).
pub const MAX_SIGNATURES: usize = 16;
/// The most bytes one payload may have.
pub const MAX_PAYLOAD_BYTES: u64 = 64 * 1024;

/// The tag that holds the signatures of the manifest `digest`.
pub fn signature_tag(digest: &str) -> String {
    format!("{}.sig", digest.replacen(':', "-", 1))
}

/// A key that may sign plugins, from its public PEM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicKey {
    spki: Vec<u8>,
}

impl PublicKey {
    /// The key in `pem` (`-----BEGIN PUBLIC KEY-----`, P-256).
    ///
    /// # Errors
    /// When it is not a PEM public key of a P-256 ECDSA key.
    pub fn from_pem(pem: &[u8]) -> Result<Self, OciError> {
        let der = SubjectPublicKeyInfoDer::from_pem_slice(pem).map_err(|e| {
            OciError::Key(format!(
                "not a PEM public key (`-----BEGIN PUBLIC KEY-----`): {e}"
            ))
        })?;
        let key = Self {
            spki: der.as_ref().to_vec(),
        };
        // A key that cannot verify anything is refused now, not at pull.
        if !is_p256_spki(&key.spki) {
            return Err(OciError::Key("not an ECDSA P-256 public key (the kind cosign generate-key-pair and `wasm-hooks keygen` make)".to_owned()));
        }
        Ok(key)
    }

    /// `sha256:` of the key's DER: how locks and messages name a signer.
    pub fn fingerprint(&self) -> String {
        format!("sha256:{}", sha256_hex(&self.spki))
    }

    /// The key as PEM.
    pub fn to_pem(&self) -> String {
        pem("PUBLIC KEY", &self.spki)
    }

    fn verifies(&self, payload: &[u8], signature: &[u8]) -> bool {
        UnparsedPublicKey::new(&ECDSA_P256_SHA256_ASN1, &self.spki)
            .verify(payload, signature)
            .is_ok()
    }
}

/// Whether `spki` is an EC public key on P-256 (its algorithm identifiers).
fn is_p256_spki(spki: &[u8]) -> bool {
    // id-ecPublicKey 1.2.840.10045.2.1, prime256v1 1.2.840.10045.3.1.7.
    const EC_PUBLIC_KEY: &[u8] = &[0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01];
    const P256: &[u8] = &[0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07];
    let has = |needle: &[u8]| spki.windows(needle.len()).any(|w| w == needle);
    has(EC_PUBLIC_KEY) && has(P256)
}

/// A private key that signs plugins.
#[derive(Debug)]
pub struct SigningKey {
    pair: EcdsaKeyPair,
}

impl SigningKey {
    /// The key in `pem` (PKCS#8, `-----BEGIN PRIVATE KEY-----`, P-256).
    ///
    /// # Errors
    /// When it is not one.
    pub fn from_pem(pem: &[u8]) -> Result<Self, OciError> {
        let der = PrivatePkcs8KeyDer::from_pem_slice(pem).map_err(|e| {
            OciError::Key(format!(
                "not an unencrypted PKCS#8 PEM private key (`-----BEGIN PRIVATE KEY-----`): {e}"
            ))
        })?;
        let pair =
            EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, der.secret_pkcs8_der())
                .map_err(|e| OciError::Key(format!("not an ECDSA P-256 private key: {e}")))?;
        Ok(Self { pair })
    }

    /// A new key: its private PEM (PKCS#8) and the key itself.
    ///
    /// # Errors
    /// When the system cannot make one.
    pub fn generate() -> Result<(String, Self), OciError> {
        let pkcs8 =
            EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, &SystemRandom::new())
                .map_err(|e| OciError::Key(format!("cannot generate a key: {e}")))?;
        let text = pem("PRIVATE KEY", pkcs8.as_ref());
        Self::from_pem(text.as_bytes()).map(|key| (text, key))
    }

    /// Its public half.
    pub fn public_key(&self) -> PublicKey {
        let der = self
            .pair
            .public_key()
            .as_der()
            .expect("a P-256 public key encodes");
        PublicKey {
            spki: der.as_ref().to_vec(),
        }
    }

    /// The signature of `payload`, DER.
    fn sign(&self, payload: &[u8]) -> Vec<u8> {
        self.pair
            .sign(&SystemRandom::new(), payload)
            .expect("ECDSA signing does not fail")
            .as_ref()
            .to_vec()
    }
}

/// `der` as a PEM block labelled `label`.
fn pem(label: &str, der: &[u8]) -> String {
    let body = STANDARD.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for line in body.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(line).expect("base64 is ASCII"));
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

/// The simple-signing payload for `manifest_digest` in `repository`
/// (`HOST[:PORT]/REPO`), byte for byte as cosign writes it.
pub fn payload(repository: &str, manifest_digest: &str) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "critical": {
            "identity": {"docker-reference": repository},
            "image": {"docker-manifest-digest": manifest_digest},
            "type": PAYLOAD_TYPE,
        },
        "optional": null,
    }))
    .expect("a payload serializes")
}

/// One signature: its payload and the base64 signature over it.
#[derive(Debug, Clone)]
pub struct Signed {
    /// The payload's bytes.
    pub payload: Vec<u8>,
    /// The annotation's value.
    pub signature: String,
}

/// Sign `manifest_digest` of `repository` with `key`.
pub fn sign(key: &SigningKey, repository: &str, manifest_digest: &str) -> Signed {
    let payload = payload(repository, manifest_digest);
    let signature = STANDARD.encode(key.sign(&payload));
    Signed { payload, signature }
}

/// The signature manifest holding these layers (each a payload with its
/// annotations), and the config blob it points to, to push first.
pub fn signature_manifest(layers: &[Descriptor]) -> (Vec<u8>, Manifest) {
    let diff_ids: Vec<&str> = layers.iter().map(|d| d.digest.as_str()).collect();
    let config = serde_json::to_vec(&serde_json::json!({
        "architecture": "",
        "created": "0001-01-01T00:00:00Z",
        "history": [{"created": "0001-01-01T00:00:00Z"}],
        "os": "",
        "rootfs": {"type": "layers", "diff_ids": diff_ids},
        "config": {},
    }))
    .expect("a config serializes");
    let layers = layers.to_vec();
    let manifest = Manifest {
        schema_version: 2,
        media_type: Some(MANIFEST_MEDIA_TYPE.to_owned()),
        config: Descriptor {
            media_type: SIGNATURE_CONFIG_MEDIA_TYPE.to_owned(),
            digest: format!("sha256:{}", sha256_hex(&config)),
            size: config.len() as u64,
            annotations: None,
        },
        layers,
        annotations: None,
    };
    (config, manifest)
}

/// Every layer of a signature manifest, as it is.
///
/// # Errors
/// When it is not an OCI image manifest.
pub fn all_layers(manifest_bytes: &[u8]) -> Result<Vec<Descriptor>, String> {
    let manifest: Manifest = serde_json::from_slice(manifest_bytes)
        .map_err(|e| format!("not an OCI image manifest ({e})"))?;
    Ok(manifest.layers)
}

/// The payload layers of a signature manifest, with their signatures:
/// at most [`MAX_SIGNATURES`], each of the simple-signing type, small.
///
/// # Errors
/// When it is not a signature manifest.
pub fn signature_layers(manifest_bytes: &[u8]) -> Result<Vec<(Descriptor, String)>, String> {
    let manifest: Manifest = serde_json::from_slice(manifest_bytes)
        .map_err(|e| format!("the signature manifest is not an OCI image manifest ({e})"))?;
    Ok(manifest
        .layers
        .into_iter()
        .filter(|l| l.media_type == SIGNATURE_LAYER_MEDIA_TYPE && l.size <= MAX_PAYLOAD_BYTES)
        .filter_map(|l| {
            let signature = l.annotations.as_ref()?.get(SIGNATURE_ANNOTATION)?.clone();
            Some((l, signature))
        })
        .take(MAX_SIGNATURES)
        .collect())
}

/// The key among `keys` that signed `payload` with `signature` (base64),
/// if the payload names `manifest_digest`.
pub fn signer<'k>(
    keys: &'k [PublicKey],
    payload: &[u8],
    signature: &str,
    manifest_digest: &str,
) -> Option<&'k PublicKey> {
    let claims: Value = serde_json::from_slice(payload).ok()?;
    let critical = claims.get("critical")?;
    if critical.get("type")?.as_str()? != PAYLOAD_TYPE
        || critical
            .pointer("/image/docker-manifest-digest")?
            .as_str()?
            != manifest_digest
    {
        return None;
    }
    let signature = STANDARD.decode(signature.trim()).ok()?;
    keys.iter().find(|key| key.verifies(payload, &signature))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A signature cosign itself made (sigstore-rs's test data): the
    /// verify path must accept what the real tool writes.
    const COSIGN_PUBLIC_KEY: &str = "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAENptdY/l3nB0yqkXLBWkZWQwo6+cu\nOSWS1X9vPavpiQOoTTGC0xX57OojUadxF1cdQmrsiReWg2Wn4FneJfa8xw==\n-----END PUBLIC KEY-----\n";
    const COSIGN_DIGEST: &str =
        "sha256:f3cfc9d0dbf931d3db4685ec659b7ac68e2a578219da4aae65427886e649b06b";
    const COSIGN_SIGNATURE: &str = "MEUCIQD6q/COgzOyW0YH1Dk+CCYSt4uAhm3FDHUwvPI55zwnlwIgE0ZK58ZOWpZw8YVmBapJhBqCfdPekIknimuO0xH8Jh8=";

    #[test]
    fn a_signature_cosign_made_verifies_and_our_payload_is_byte_for_byte_cosigns() {
        let key = PublicKey::from_pem(COSIGN_PUBLIC_KEY.as_bytes()).unwrap();
        let payload = payload("registry-testing.svc.lan/busybox", COSIGN_DIGEST);
        assert_eq!(
            String::from_utf8(payload.clone()).unwrap(),
            format!(
                "{{\"critical\":{{\"identity\":{{\"docker-reference\":\"registry-testing.svc.lan/busybox\"}},\"image\":{{\"docker-manifest-digest\":\"{COSIGN_DIGEST}\"}},\"type\":\"cosign container image signature\"}},\"optional\":null}}"
            )
        );
        let keys = [key];
        assert!(signer(&keys, &payload, COSIGN_SIGNATURE, COSIGN_DIGEST).is_some());
        let other = format!("sha256:{}", "0".repeat(64));
        assert!(signer(&keys, &payload, COSIGN_SIGNATURE, &other).is_none());
    }

    #[test]
    fn a_signature_by_an_unknown_key_or_over_other_bytes_does_not_verify() {
        let (_, ours) = SigningKey::generate().unwrap();
        let (_, theirs) = SigningKey::generate().unwrap();
        let digest = format!("sha256:{}", "1".repeat(64));
        let signed = sign(&ours, "127.0.0.1:5000/hooks/x", &digest);
        let trusted = [ours.public_key()];
        assert!(signer(&trusted, &signed.payload, &signed.signature, &digest).is_some());
        let strangers = [theirs.public_key()];
        assert!(signer(&strangers, &signed.payload, &signed.signature, &digest).is_none());
        let mut tampered = signed.payload.clone();
        tampered[10] ^= 1;
        assert!(signer(&trusted, &tampered, &signed.signature, &digest).is_none());
    }

    #[test]
    fn keys_round_trip_through_pem_and_a_non_p256_key_is_refused() {
        let (private, key) = SigningKey::generate().unwrap();
        assert!(SigningKey::from_pem(private.as_bytes()).is_ok());
        let public = key.public_key();
        assert_eq!(
            PublicKey::from_pem(public.to_pem().as_bytes()).unwrap(),
            public
        );
        assert!(PublicKey::from_pem(b"not a key").is_err());
        assert!(SigningKey::from_pem(public.to_pem().as_bytes()).is_err());
    }
}
