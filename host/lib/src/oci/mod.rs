//! Plugins from OCI registries: references (`oci://…`), the CNCF Wasm
//! artifact layout, the lock that pins them, the store they are pulled
//! into, and cosign-compatible signatures checked against the person's
//! keys.

mod artifact;
mod error;
mod fetch;
mod lock;
mod reference;
mod registry;
mod signature;
mod signers;
mod store;

pub use artifact::{CONFIG_MEDIA_TYPE, LAYER_MEDIA_TYPE};
pub use error::OciError;
pub use fetch::{Fetcher, MAX_PLUGIN_BYTES, Published, publish};
pub use lock::{LOCK_FILE, Lock, LockEntry, LockError};
pub use reference::PluginRef;
pub use registry::{HOST_VARIABLE, PASSWORD_VARIABLE, USERNAME_VARIABLE};
pub use signature::{PublicKey, SigningKey, signature_tag};
pub use signers::{SignerPolicy, read_key};
pub use store::PluginStore;
