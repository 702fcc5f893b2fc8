//! Talking to one registry: `oci-client` underneath, with what a guard's
//! source needs on top: every call bounded by a deadline, every manifest
//! and blob capped in size and checked against the digest it was asked
//! for, plain HTTP only for this machine's loopback, and errors in words
//! that name the reference.

use std::future::Future;
use std::time::Duration;

use futures_util::StreamExt as _;
use oci_client::client::{ClientConfig, ClientProtocol};
use oci_client::errors::OciDistributionError;
use oci_client::manifest::OciDescriptor;
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference, RegistryOperation};

use super::artifact::{Descriptor, MANIFEST_MEDIA_TYPE, MAX_MANIFEST_BYTES};
use super::error::OciError;
use super::reference::PluginRef;
use wasm_hooks_core::sha256_hex;

/// The registry (`HOST[:PORT]`) the credentials below are for: they are
/// sent to it and to no other (a lock or hook file may name any host);
/// every other registry is spoken to anonymously.
pub const HOST_VARIABLE: &str = "WASM_HOOKS_REGISTRY_HOST";
/// The variables that hold that registry's user name and password (Basic
/// auth, or the credentials a token is fetched with).
pub const USERNAME_VARIABLE: &str = "WASM_HOOKS_REGISTRY_USERNAME";
/// See [`USERNAME_VARIABLE`].
pub const PASSWORD_VARIABLE: &str = "WASM_HOOKS_REGISTRY_PASSWORD";

/// The media types a manifest is asked for in.
const ACCEPTED: &[&str] = &[
    MANIFEST_MEDIA_TYPE,
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.docker.distribution.manifest.v2+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
];

/// A client for the registry of one reference.
pub struct Registry {
    client: Client,
    /// For manifests, read with a cap (oci-client reads them whole).
    http: reqwest::Client,
    scheme: &'static str,
    auth: RegistryAuth,
    deadline: Duration,
    /// The pull token of the repository (none where it takes none),
    /// asked for once: `oci-client` asks the registry again on every
    /// `auth`.
    pull_token: tokio::sync::OnceCell<Option<String>>,
}

impl Registry {
    /// A client for `reference`'s registry, each call bounded by
    /// `deadline`.
    pub fn new(reference: &PluginRef, deadline: Duration) -> Self {
        let (protocol, scheme) = if reference.is_loopback() {
            (
                ClientProtocol::HttpsExcept(vec![reference.registry().to_owned()]),
                "http",
            )
        } else {
            (ClientProtocol::Https, "https")
        };
        let client = Client::new(ClientConfig {
            protocol,
            platform_resolver: None,
            connect_timeout: Some(deadline),
            read_timeout: Some(deadline),
            user_agent: concat!("wasm-hooks/", env!("CARGO_PKG_VERSION")),
            ..Default::default()
        });
        let for_this_host = std::env::var(HOST_VARIABLE)
            .is_ok_and(|host| host.eq_ignore_ascii_case(reference.registry()));
        let auth = match (
            std::env::var(USERNAME_VARIABLE),
            std::env::var(PASSWORD_VARIABLE),
        ) {
            (Ok(user), Ok(password)) if for_this_host && !user.is_empty() => {
                RegistryAuth::Basic(user, password)
            }
            _ => RegistryAuth::Anonymous,
        };
        let http = reqwest::Client::builder()
            .connect_timeout(deadline)
            .read_timeout(deadline)
            .user_agent(concat!("wasm-hooks/", env!("CARGO_PKG_VERSION")))
            .https_only(scheme == "https")
            .build()
            .unwrap_or_default();
        Self {
            client,
            http,
            scheme,
            auth,
            deadline,
            pull_token: tokio::sync::OnceCell::new(),
        }
    }

    /// `work`, or an error saying it took longer than the deadline.
    async fn timed<T>(
        &self,
        what: &str,
        work: impl Future<Output = Result<T, OciDistributionError>>,
    ) -> Result<T, OciError> {
        match tokio::time::timeout(self.deadline, work).await {
            Ok(result) => result.map_err(|e| OciError::Registry(format!("{what}: {}", words(&e)))),
            Err(_) => Err(OciError::Registry(format!(
                "{what}: the registry did not answer within {} s",
                self.deadline.as_secs_f64()
            ))),
        }
    }

    /// The manifest digest `reference` names now: its own digest, or what
    /// its tag points to.
    ///
    /// # Errors
    /// When the registry cannot say.
    pub async fn resolve(&self, reference: &PluginRef) -> Result<String, OciError> {
        if let Some(digest) = reference.digest() {
            return Ok(digest.to_owned());
        }
        let bytes = self
            .manifest_at(
                reference.as_reference(),
                &format!("cannot resolve {reference}"),
            )
            .await?;
        Ok(format!("sha256:{}", sha256_hex(&bytes)))
    }

    /// The bytes of the manifest `digest` of `reference`'s repository,
    /// checked against it.
    ///
    /// # Errors
    /// When it cannot be fetched, is too big or is other bytes.
    pub async fn manifest(&self, reference: &PluginRef, digest: &str) -> Result<Vec<u8>, OciError> {
        let bytes = self
            .manifest_at(
                &reference.at_digest(digest),
                &format!("cannot fetch the manifest of {reference} ({digest})"),
            )
            .await?;
        let actual = format!("sha256:{}", sha256_hex(&bytes));
        if actual != digest {
            return Err(OciError::Registry(format!(
                "the registry answered {reference} ({digest}) with a manifest whose digest is {actual}: refused"
            )));
        }
        Ok(bytes)
    }

    /// The manifest at `tag` of `reference`'s repository, or none when
    /// the registry has no such tag.
    ///
    /// # Errors
    /// When the registry fails otherwise.
    pub async fn manifest_at_tag(
        &self,
        reference: &PluginRef,
        tag: &str,
    ) -> Result<Option<Vec<u8>>, OciError> {
        let what = format!(
            "cannot fetch {}/{}:{tag}",
            reference.registry(),
            reference.repository()
        );
        self.fetch_manifest(&reference.at_tag(tag), &what).await
    }

    async fn manifest_at(&self, at: &Reference, what: &str) -> Result<Vec<u8>, OciError> {
        self.fetch_manifest(at, what)
            .await?
            .ok_or_else(|| OciError::Registry(format!("{what}: the registry has no such manifest")))
    }

    /// The repository's pull token (oci-client keeps it for its own
    /// requests too), asked for on first use.
    async fn pull_auth(&self, at: &Reference) -> Result<Option<String>, OciError> {
        self.pull_token
            .get_or_try_init(|| async {
                self.client
                    .auth(at, &self.auth, RegistryOperation::Pull)
                    .await
                    .map_err(|e| OciError::Registry(words(&e)))
            })
            .await
            .cloned()
    }

    /// The manifest `at`, read up to [`MAX_MANIFEST_BYTES`] and no
    /// further (a hostile registry cannot fill the memory); none on a 404.
    async fn fetch_manifest(
        &self,
        at: &Reference,
        what: &str,
    ) -> Result<Option<Vec<u8>>, OciError> {
        let fetch = async {
            let token = self.pull_auth(at).await?;
            let url = format!(
                "{}://{}/v2/{}/manifests/{}",
                self.scheme,
                at.resolve_registry(),
                at.repository(),
                at.digest().or(at.tag()).unwrap_or("latest")
            );
            let mut request = self
                .http
                .get(url)
                .header(reqwest::header::ACCEPT, ACCEPTED.join(", "));
            request = match (token, &self.auth) {
                (Some(token), _) => request.bearer_auth(token),
                (None, RegistryAuth::Basic(user, password)) => {
                    request.basic_auth(user, Some(password))
                }
                (None, _) => request,
            };
            let mut response = request
                .send()
                .await
                .map_err(|e| OciError::Registry(e.to_string()))?;
            let status = response.status();
            if status == reqwest::StatusCode::NOT_FOUND {
                return Ok(None);
            }
            let mut body = Vec::new();
            while let Some(chunk) = response
                .chunk()
                .await
                .map_err(|e| OciError::Registry(e.to_string()))?
            {
                if body.len() + chunk.len() > MAX_MANIFEST_BYTES {
                    return Err(OciError::Registry(format!(
                        "the manifest is over the {MAX_MANIFEST_BYTES}-byte limit"
                    )));
                }
                body.extend_from_slice(&chunk);
            }
            if status == reqwest::StatusCode::UNAUTHORIZED {
                return Err(OciError::Registry(format!(
                    "the registry refused the request (401; credentials go only to the registry {HOST_VARIABLE} names)"
                )));
            }
            if !status.is_success() {
                let text = String::from_utf8_lossy(&body[..body.len().min(200)]).into_owned();
                return Err(OciError::Registry(format!(
                    "the registry answered {status}: {text}"
                )));
            }
            Ok(Some(body))
        };
        match tokio::time::timeout(self.deadline, fetch).await {
            Ok(result) => {
                result.map_err(|e| OciError::Registry(format!("{what}: {}", shown(&e.to_string()))))
            }
            Err(_) => Err(OciError::Registry(format!(
                "{what}: the registry did not answer within {} s",
                self.deadline.as_secs_f64()
            ))),
        }
    }

    /// The blob `layer` of `reference`'s repository: at most `max` bytes,
    /// exactly its descriptor's size, and bytes whose sha256 is its digest.
    ///
    /// # Errors
    /// When it cannot be fetched, is bigger than `max` or than its
    /// descriptor says, or is other bytes.
    pub async fn blob(
        &self,
        reference: &PluginRef,
        layer: &Descriptor,
        max: u64,
    ) -> Result<Vec<u8>, OciError> {
        let what = format!("cannot fetch {} of {reference}", layer.digest);
        if layer.size > max {
            return Err(OciError::Registry(format!(
                "{what}: it is {} bytes, over the {max}-byte limit of a plugin",
                layer.size
            )));
        }
        let at = reference.at_digest(&layer.digest);
        let descriptor = OciDescriptor {
            media_type: layer.media_type.clone(),
            digest: layer.digest.clone(),
            size: layer.size as i64,
            ..Default::default()
        };
        let fetch = async {
            // Pulling needs a token on registries that hand them out.
            self.pull_auth(&at).await?;
            let mut stream = self
                .client
                .pull_blob_stream(&at, &descriptor)
                .await
                .map_err(|e| OciError::Registry(words(&e)))?;
            if stream.content_length.is_some_and(|n| n != layer.size) {
                return Err(OciError::Registry(format!(
                    "the registry sends {} bytes, the manifest says {}",
                    stream.content_length.unwrap_or_default(),
                    layer.size
                )));
            }
            // Grown as bytes come: the manifest's word is not memory.
            let mut bytes = Vec::new();
            while let Some(chunk) = stream.next().await {
                let chunk = chunk.map_err(|e| {
                    OciError::Registry(format!(
                        "its bytes are not {}: refused, nothing stored ({e})",
                        layer.digest
                    ))
                })?;
                if (bytes.len() + chunk.len()) as u64 > layer.size {
                    return Err(OciError::Registry(format!(
                        "the registry sends more than the manifest's {} bytes",
                        layer.size
                    )));
                }
                bytes.extend_from_slice(&chunk);
            }
            if bytes.len() as u64 != layer.size {
                return Err(OciError::Registry(format!(
                    "the registry sent {} of {} bytes",
                    bytes.len(),
                    layer.size
                )));
            }
            Ok(bytes)
        };
        let bytes = match tokio::time::timeout(self.deadline, fetch).await {
            Ok(result) => result.map_err(|e| OciError::Registry(format!("{what}: {e}")))?,
            Err(_) => {
                return Err(OciError::Registry(format!(
                    "{what}: the registry did not send it within {} s",
                    self.deadline.as_secs_f64()
                )));
            }
        };
        let actual = format!("sha256:{}", sha256_hex(&bytes));
        if actual != layer.digest {
            return Err(OciError::Registry(format!(
                "{what}: its bytes hash to {actual}: refused, nothing stored"
            )));
        }
        Ok(bytes)
    }

    /// Push `bytes` as a blob of `reference`'s repository.
    ///
    /// # Errors
    /// When the registry refuses it.
    pub async fn push_blob(
        &self,
        reference: &PluginRef,
        bytes: Vec<u8>,
    ) -> Result<String, OciError> {
        let digest = format!("sha256:{}", sha256_hex(&bytes));
        let at = reference.at_digest(&digest);
        self.timed(&format!("cannot push a blob to {reference}"), async {
            self.client
                .auth(&at, &self.auth, RegistryOperation::Push)
                .await?;
            self.client.push_blob(&at, bytes, &digest).await
        })
        .await?;
        Ok(digest)
    }

    /// Push `manifest` to `reference`'s repository at `tag`, returning its
    /// digest.
    ///
    /// # Errors
    /// When the registry refuses it.
    pub async fn push_manifest(
        &self,
        reference: &PluginRef,
        tag: &str,
        manifest: Vec<u8>,
    ) -> Result<String, OciError> {
        let digest = format!("sha256:{}", sha256_hex(&manifest));
        let at = reference.at_tag(tag);
        self.timed(&format!("cannot push the manifest of {reference}"), async {
            self.client
                .auth(&at, &self.auth, RegistryOperation::Push)
                .await?;
            self.client
                .push_manifest_raw(
                    &at,
                    manifest,
                    reqwest::header::HeaderValue::from_static(MANIFEST_MEDIA_TYPE),
                )
                .await
        })
        .await?;
        Ok(digest)
    }
}

/// A registry's words, made safe to show: control characters escaped,
/// cut short.
fn shown(text: &str) -> String {
    let escaped = wasm_hooks_core::escape_controls(text);
    escaped.chars().take(300).collect()
}

/// A registry client's error, in a few words.
fn words(e: &OciDistributionError) -> String {
    match e {
        OciDistributionError::UnauthorizedError { .. }
        | OciDistributionError::AuthenticationFailure(_) => format!(
            "the registry refused the request (credentials, {USERNAME_VARIABLE} and {PASSWORD_VARIABLE}, go only to the registry {HOST_VARIABLE} names): {}",
            shown(&e.to_string())
        ),
        e => shown(&e.to_string()),
    }
}
