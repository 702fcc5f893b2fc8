//! `oci://HOST[:PORT]/REPO:TAG` and `oci://HOST[:PORT]/REPO@sha256:DIGEST`:
//! a wasm hook's `plugin` when it comes from a registry.

use super::OciError;
use oci_client::Reference;

/// The scheme that marks a plugin as a registry reference.
pub const SCHEME: &str = "oci://";

/// A plugin in a registry, as a hook file names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginRef {
    text: String,
    reference: Reference,
}

impl PluginRef {
    /// Whether `plugin` names a registry reference rather than a file.
    pub fn is_oci(plugin: &str) -> bool {
        plugin.starts_with(SCHEME)
    }

    /// Parse `text` (`oci://…`).
    ///
    /// # Errors
    /// Why it is not a reference this engine can pull, in words naming
    /// the expected form.
    pub fn parse(text: &str) -> Result<Self, OciError> {
        let expected = "expected `oci://HOST[:PORT]/REPOSITORY:TAG` or `oci://HOST[:PORT]/REPOSITORY@sha256:DIGEST`";
        let Some(rest) = text.strip_prefix(SCHEME) else {
            return Err(OciError::Reference(format!(
                "`{text}` is not an OCI reference: {expected}"
            )));
        };
        // A bare `repo:tag` would mean Docker Hub: a guard's source is
        // named in full, never guessed.
        let host = rest.split('/').next().unwrap_or_default();
        if !rest.contains('/') || !(host.contains('.') || host.contains(':') || host == "localhost")
        {
            return Err(OciError::Reference(format!(
                "`{text}` names no registry host: {expected} (for example `oci://ghcr.io/team/guard:1.0`)"
            )));
        }
        let reference: Reference = rest.parse().map_err(|e| {
            OciError::Reference(format!(
                "`{text}` is not a valid reference ({e}): {expected}"
            ))
        })?;
        let last = rest.rsplit('/').next().unwrap_or_default();
        if !last.contains(':') && !last.contains('@') {
            return Err(OciError::Reference(format!(
                "`{text}` names no tag or digest: {expected}"
            )));
        }
        if let Some(digest) = reference.digest()
            && !is_sha256_digest(digest)
        {
            return Err(OciError::Reference(format!(
                "`{text}`: the digest must be `sha256:` and 64 lowercase hex digits"
            )));
        }
        Ok(Self {
            text: text.to_owned(),
            reference,
        })
    }

    /// The reference as written (the lock's key).
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// `HOST[:PORT]`.
    pub fn registry(&self) -> &str {
        self.reference.resolve_registry()
    }

    /// The repository inside the registry.
    pub fn repository(&self) -> &str {
        self.reference.repository()
    }

    /// The digest the reference itself pins, if it does.
    pub fn digest(&self) -> Option<&str> {
        self.reference.digest()
    }

    /// `HOST[:PORT]/REPOSITORY`: what a cosign signature's
    /// `docker-reference` names.
    pub fn repository_name(&self) -> String {
        format!("{}/{}", self.registry(), self.repository())
    }

    /// The reference as the registry client takes it (tag and/or digest).
    pub fn as_reference(&self) -> &Reference {
        &self.reference
    }

    /// The same repository at `digest`.
    pub fn at_digest(&self, digest: &str) -> Reference {
        Reference::with_digest(
            self.registry().to_owned(),
            self.repository().to_owned(),
            digest.to_owned(),
        )
    }

    /// The same repository at `tag`.
    pub fn at_tag(&self, tag: &str) -> Reference {
        Reference::with_tag(
            self.registry().to_owned(),
            self.repository().to_owned(),
            tag.to_owned(),
        )
    }

    /// Whether the registry is this machine (`127.0.0.1`, `localhost`,
    /// `[::1]`), which is spoken to over plain HTTP as Docker does.
    pub fn is_loopback(&self) -> bool {
        let host = self.registry();
        let host = host
            .strip_prefix('[')
            .and_then(|h| h.split_once(']').map(|(h, _)| h))
            .unwrap_or_else(|| host.rsplit_once(':').map_or(host, |(h, _)| h));
        host == "localhost"
            || host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    }
}

impl std::fmt::Display for PluginRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// Whether `digest` is `sha256:` and 64 lowercase hex digits.
pub fn is_sha256_digest(digest: &str) -> bool {
    digest.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tag_and_a_digest_reference_parse_with_their_host_and_port() {
        let r = PluginRef::parse("oci://127.0.0.1:5000/hooks/no-rm:1.0").unwrap();
        assert_eq!(r.registry(), "127.0.0.1:5000");
        assert_eq!(r.repository(), "hooks/no-rm");
        assert_eq!(r.repository_name(), "127.0.0.1:5000/hooks/no-rm");
        assert!(r.is_loopback());
        let d = format!("sha256:{}", "a".repeat(64));
        let r = PluginRef::parse(&format!("oci://ghcr.io/team/guard@{d}")).unwrap();
        assert_eq!(r.digest(), Some(d.as_str()));
        assert!(!r.is_loopback());
    }

    #[test]
    fn a_reference_without_a_host_tag_or_valid_digest_is_refused_with_the_expected_form() {
        for bad in [
            "hooks/no-rm:1.0",
            "oci://no-rm:1.0",
            "oci://team/guard:1.0",
            "oci://127.0.0.1:5000/hooks/no-rm",
            "oci://127.0.0.1:5000/hooks/no-rm@sha256:abc",
        ] {
            let e = PluginRef::parse(bad).unwrap_err().to_string();
            assert!(
                e.contains("expected `oci://") || e.contains("sha256:"),
                "{bad}: {e}"
            );
        }
    }
}
