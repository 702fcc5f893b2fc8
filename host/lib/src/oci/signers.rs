//! Who may sign plugins, and whether they must: `plugin_signers` (public
//! key files) in the user's or the organisation's settings, and
//! `require_signed_plugins` in any layer. A project may require signatures
//! but never adds a signer for itself; when the organisation requires
//! them, only its own keys count.

use super::OciError;
use super::signature::PublicKey;

/// The keys plugins are checked against, and whether a signature is
/// needed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SignerPolicy {
    /// Keys from the user's and the organisation's settings.
    pub keys: Vec<PublicKey>,
    /// Whether every plugin pulled must carry a signature by one of
    /// `keys`.
    pub required: bool,
    /// Whether the organisation requires it: then local plugin files
    /// outside its own layer do not run.
    pub required_by_organisation: bool,
}

impl SignerPolicy {
    /// The policy from key files (`(file, key)` pairs read by the settings
    /// loader) and the layers' requirements. Any configured key means
    /// signatures are checked.
    pub fn new(keys: Vec<PublicKey>, required: bool, required_by_organisation: bool) -> Self {
        Self {
            required: required || required_by_organisation || !keys.is_empty(),
            keys,
            required_by_organisation,
        }
    }

    /// Why nothing can be pulled when signatures are required and no key
    /// is set, and what to do (a teammate who has not added the team's
    /// key yet).
    pub fn no_keys(&self) -> String {
        format!(
            "signed plugins are required ({}), but you have no signer keys (`plugin_signers` in your settings), so no signature can be trusted: add the public key of whoever publishes these plugins (`plugin_signers: [~/.config/wasm-hooks/team.pub]` in ~/.config/wasm-hooks/config.yaml), then run `wasm-hooks pull`",
            if self.required_by_organisation {
                "by the organisation"
            } else {
                "by the project's or your `require_signed_plugins`"
            }
        )
    }

    /// The keys' fingerprints, for messages.
    pub fn fingerprints(&self) -> Vec<String> {
        self.keys.iter().map(PublicKey::fingerprint).collect()
    }
}

/// A key file named by `plugin_signers`, read.
///
/// # Errors
/// When it cannot be read or is not a P-256 public key, naming the file.
pub fn read_key(path: &std::path::Path) -> Result<PublicKey, OciError> {
    let in_file = |why: String| OciError::KeyFile {
        path: path.to_owned(),
        why,
    };
    let pem = std::fs::read(path).map_err(|e| in_file(format!("cannot read it: {e}")))?;
    PublicKey::from_pem(&pem).map_err(|e| in_file(e.to_string()))
}
