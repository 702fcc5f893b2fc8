//! redact-secrets: on PostToolUse, mask secrets in the tool's output before
//! the model reads it (AWS access key IDs, GitHub tokens, private key
//! blocks, and strings that look random enough to be keys), and tell the
//! person what was masked.
//!
//! The output is walked as JSON, so every shape works: Bash's
//! `{stdout, stderr}`, Read's file content, an MCP tool's content blocks, a
//! bare string. Only string values are scanned (object keys are not). One
//! pass over each string, no regular expressions: each event runs on a
//! fresh instance, where compiling a regex set would cost more than the
//! scan.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Deserialize;
use serde_json::Value;
use wasm_hooks_guest::{Event, Hook, Outcome, Result, Severity, export_hook};

#[derive(Deserialize)]
#[serde(default, deny_unknown_fields)]
struct Config {
    /// Mask strings that look random (the named kinds are always masked).
    high_entropy: bool,
    /// The shortest string judged by its randomness.
    min_length: usize,
    /// How random a string must look to be masked: its Shannon entropy as
    /// a share of the most a string of its length can have (0 to 1).
    min_randomness: f64,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            high_entropy: true,
            min_length: 20,
            min_randomness: 0.85,
        }
    }
}

/// What was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    AwsAccessKeyId,
    GithubToken,
    PrivateKey,
    HighEntropy,
}

impl Kind {
    /// The mark left in place of the secret.
    fn label(self) -> &'static str {
        match self {
            Self::AwsAccessKeyId => "aws-access-key-id",
            Self::GithubToken => "github-token",
            Self::PrivateKey => "private-key",
            Self::HighEntropy => "high-entropy-string",
        }
    }

    /// The kind, for the person.
    fn describe(self) -> &'static str {
        match self {
            Self::AwsAccessKeyId => "AWS access key ID",
            Self::GithubToken => "GitHub token",
            Self::PrivateKey => "private key",
            Self::HighEntropy => "high-entropy string",
        }
    }
}

/// How many secrets of each kind were masked.
type Found = BTreeMap<Kind, usize>;

struct RedactSecrets;

impl Hook for RedactSecrets {
    fn post_tool_use(event: &Event) -> Result<Outcome> {
        let Some(mut output) = event.tool_response::<Value>()? else {
            return Ok(Outcome::proceed());
        };
        let config: Config = wasm_hooks_guest::config()?;
        let mut found = Found::new();
        redact_value(&mut output, &config, &mut found);
        if found.is_empty() {
            return Ok(Outcome::proceed());
        }
        let tool = event.tool_name().unwrap_or("the tool");
        Ok(Outcome::modify_output(output)
            .with_user_message(Severity::Warning, summary(tool, &found)))
    }
}

/// "masked 2 secrets in the output of Bash: AWS access key ID, GitHub token".
fn summary(tool: &str, found: &Found) -> String {
    let total: usize = found.values().sum();
    let mut text = format!(
        "masked {total} secret{} in the output of {tool}:",
        if total == 1 { "" } else { "s" }
    );
    for (i, (kind, n)) in found.iter().enumerate() {
        let sep = if i == 0 { " " } else { ", " };
        let _ = write!(text, "{sep}{}", kind.describe());
        if *n > 1 {
            let _ = write!(text, " ×{n}");
        }
    }
    text
}

/// Mask the secrets in every string of `value`, in place.
fn redact_value(value: &mut Value, config: &Config, found: &mut Found) {
    match value {
        Value::String(text) => {
            if let Some(masked) = redact(text, config, found) {
                *text = masked;
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|v| redact_value(v, config, found)),
        Value::Object(fields) => fields
            .values_mut()
            .for_each(|v| redact_value(v, config, found)),
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// `text` with its secrets masked, or `None` when it has none.
fn redact(text: &str, config: &Config, found: &mut Found) -> Option<String> {
    let bytes = text.as_bytes();
    let mut masked = Masked::new(text, found);
    let mut i = 0;
    while i < bytes.len() {
        let pem = (bytes[i] == b'-')
            .then(|| private_key_block(text, i))
            .flatten();
        if let Some(end) = pem {
            masked.mask(i, end, Kind::PrivateKey);
            i = end;
        } else if is_token_byte(bytes[i]) {
            let end = i + bytes[i..].iter().take_while(|b| is_token_byte(**b)).count();
            scan_run(&mut masked, i, end, config);
            i = end;
        } else {
            i += 1;
        }
    }
    masked.finish()
}

/// Bytes of a token: base64 (both alphabets) and the separators of key
/// formats.
fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'_' | b'-')
}

/// One run of token bytes, `text[start..end]`: the known formats where a
/// word starts inside it, else the whole run if it looks random.
fn scan_run(masked: &mut Masked<'_, '_>, start: usize, end: usize, config: &Config) {
    let text = masked.text;
    let bytes = text.as_bytes();
    let mut i = start;
    let mut any = false;
    while i < end {
        let word_start = i == 0 || !bytes[i - 1].is_ascii_alphanumeric();
        if let Some((len, kind)) = word_start.then(|| known_format(&bytes[i..end])).flatten() {
            masked.mask(i, i + len, kind);
            any = true;
            i += len;
        } else {
            i += 1;
        }
    }
    // Base64 padding belongs to the string it ends.
    let padded = end + bytes[end..].iter().take_while(|b| **b == b'=').count();
    if !any && config.high_entropy && looks_random(&text[start..end], config) {
        masked.mask(start, padded, Kind::HighEntropy);
    }
}

/// The length and kind of a known secret format at the start of `run`.
fn known_format(run: &[u8]) -> Option<(usize, Kind)> {
    let alnum = |from: usize| {
        run[from..]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric())
            .count()
    };
    // AWS: a four-letter prefix, then 16 upper-case letters or digits.
    let aws_prefix = [b"AKIA", b"ASIA", b"ABIA", b"ACCA"]
        .iter()
        .any(|p| run.starts_with(*p))
        || (run.starts_with(b"A3T") && run.get(3).is_some_and(u8::is_ascii_alphanumeric));
    if aws_prefix && alnum(0) == 20 && run[..20].iter().all(|b| !b.is_ascii_lowercase()) {
        return Some((20, Kind::AwsAccessKeyId));
    }
    // GitHub: `ghp_` and kin, then at least 36 letters or digits; or a
    // fine-grained `github_pat_` token.
    let classic = [b"ghp_", b"gho_", b"ghu_", b"ghs_", b"ghr_"]
        .iter()
        .any(|p| run.starts_with(*p));
    if classic && alnum(4) >= 36 {
        return Some((4 + alnum(4), Kind::GithubToken));
    }
    if run.starts_with(b"github_pat_") {
        let body = run[11..]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
            .count();
        if body >= 22 {
            return Some((11 + body, Kind::GithubToken));
        }
    }
    None
}

/// Whether `run` looks like a random key: long enough, with upper- and
/// lower-case letters and digits, and an entropy close to the most its
/// length allows. Words, paths, identifiers, hex hashes and UUIDs fall
/// short of one or the other.
fn looks_random(run: &str, config: &Config) -> bool {
    let bytes = run.as_bytes();
    let n = bytes.len();
    if n < config.min_length
        || !bytes.iter().any(u8::is_ascii_uppercase)
        || !bytes.iter().any(u8::is_ascii_lowercase)
        || !bytes.iter().any(u8::is_ascii_digit)
    {
        return false;
    }
    let mut counts = [0u32; 128];
    for &b in bytes {
        counts[usize::from(b & 0x7f)] += 1;
    }
    let len = n as f64;
    let entropy: f64 = counts
        .iter()
        .filter(|c| **c > 0)
        .map(|&c| {
            let p = f64::from(c) / len;
            -p * p.log2()
        })
        .sum();
    // A string of n symbols has at most log2(n) bits per symbol, and a
    // base64 one at most 6.
    let most = len.min(64.0).log2();
    entropy >= config.min_randomness * most
}

/// The end of a PEM private key block starting at byte `at`, an ASCII
/// byte (`-----BEGIN … PRIVATE KEY-----` to its `-----END …-----`); a
/// block cut short runs to the end of the text.
fn private_key_block(text: &str, at: usize) -> Option<usize> {
    let rest = &text[at..];
    if !rest.starts_with("-----BEGIN ") {
        return None;
    }
    let header_end = rest[11..].find("-----")? + 11;
    if !rest[11..header_end].ends_with("PRIVATE KEY") {
        return None;
    }
    let body = header_end + 5;
    let Some(footer) = rest[body..].find("-----END ") else {
        return Some(text.len());
    };
    let footer = body + footer + 9;
    let end = rest[footer..]
        .find("-----")
        .map_or(rest.len(), |e| footer + e + 5);
    Some(at + end)
}

/// A copy of a text with spans replaced by marks (built only once the
/// first secret is found), counting what it masks.
struct Masked<'a, 'f> {
    text: &'a str,
    out: Option<String>,
    copied: usize,
    found: &'f mut Found,
}

impl<'a, 'f> Masked<'a, 'f> {
    fn new(text: &'a str, found: &'f mut Found) -> Self {
        Self {
            text,
            out: None,
            copied: 0,
            found,
        }
    }

    /// Replace `text[start..end]` with the mark of `kind`.
    fn mask(&mut self, start: usize, end: usize, kind: Kind) {
        let out = self
            .out
            .get_or_insert_with(|| String::with_capacity(self.text.len()));
        out.push_str(&self.text[self.copied..start]);
        let _ = write!(out, "[REDACTED:{}]", kind.label());
        self.copied = end;
        *self.found.entry(kind).or_default() += 1;
    }

    fn finish(self) -> Option<String> {
        let mut out = self.out?;
        out.push_str(&self.text[self.copied..]);
        Some(out)
    }
}

export_hook!(RedactSecrets);

#[cfg(test)]
mod tests {
    use super::*;

    fn masked(text: &str) -> (String, Found) {
        let mut found = Found::new();
        let out = redact(text, &Config::default(), &mut found).unwrap_or_else(|| text.to_owned());
        (out, found)
    }

    #[test]
    fn aws_key_ids_are_masked_at_word_starts_only() {
        let (out, found) = masked("id=AKIAIOSFODNN7EXAMPLE, next");
        assert_eq!(out, "id=[REDACTED:aws-access-key-id], next");
        assert_eq!(found[&Kind::AwsAccessKeyId], 1);
        // Too long, too short, or inside a word: not a key ID.
        for text in [
            "AKIAIOSFODNN7EXAMPLEX",
            "AKIA1234",
            "MYAKIAIOSFODNN7EXAMPLE",
        ] {
            assert_eq!(masked(text).0, text);
        }
    }

    #[test]
    fn github_tokens_are_masked_in_urls_and_assignments() {
        let token = "ghp_16C7e42F292c6912E7710c838347Ae178B4a";
        let (out, _) = masked(&format!("https://{token}@github.com/o/r.git"));
        assert_eq!(out, "https://[REDACTED:github-token]@github.com/o/r.git");
        let pat = "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEF";
        assert_eq!(
            masked(&format!("GH={pat}\n")).0,
            "GH=[REDACTED:github-token]\n"
        );
        assert_eq!(masked("ghp_short").0, "ghp_short");
    }

    #[test]
    fn private_key_blocks_are_masked_whole_even_when_cut_short() {
        let pem = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----";
        let (out, found) = masked(&format!("key:\n{pem}\ndone"));
        assert_eq!(out, "key:\n[REDACTED:private-key]\ndone");
        assert_eq!(found.len(), 1, "the body is not counted again");
        let (out, _) = masked("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7");
        assert_eq!(out, "[REDACTED:private-key]");
        let public = "-----BEGIN PUBLIC KEY-----\nabc\n-----END PUBLIC KEY-----";
        assert_eq!(masked(public).0, public);
    }

    #[test]
    fn random_strings_are_masked_and_ordinary_ones_kept() {
        let (out, found) =
            masked("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n");
        assert_eq!(
            out,
            "AWS_SECRET_ACCESS_KEY=[REDACTED:high-entropy-string]\n"
        );
        assert_eq!(found[&Kind::HighEntropy], 1);
        assert_eq!(
            masked("token: SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c==;").0,
            "token: [REDACTED:high-entropy-string];"
        );
        for ordinary in [
            "commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
            "id 550e8400-e29b-41d4-a716-446655440000",
            "/Users/Alice/Projects/App2/Sources/main.swift",
            "ApplicationController1Test HTTP2ConnectionHandlerFactoryImpl",
            "target x86_64-unknown-linux-gnu and wasm32-wasip2",
            "com/example/MyApplication2Kt TestCase2WithLongNameForThings",
        ] {
            assert_eq!(masked(ordinary).0, ordinary);
        }
        let off = Config {
            high_entropy: false,
            ..Config::default()
        };
        let mut found = Found::new();
        assert_eq!(
            redact(
                "k=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                &off,
                &mut found
            ),
            None
        );
    }

    #[test]
    fn every_string_of_the_output_is_scanned_and_the_shape_kept() {
        let mut output = serde_json::json!({
            "stdout": "AKIAIOSFODNN7EXAMPLE", "stderr": "", "interrupted": false,
            "content": [{"type": "text", "text": "ghp_16C7e42F292c6912E7710c838347Ae178B4a"}],
        });
        let mut found = Found::new();
        redact_value(&mut output, &Config::default(), &mut found);
        assert_eq!(output["stdout"], "[REDACTED:aws-access-key-id]");
        assert_eq!(output["content"][0]["text"], "[REDACTED:github-token]");
        assert_eq!(output["interrupted"], false);
        assert_eq!(
            summary("Bash", &found),
            "masked 2 secrets in the output of Bash: AWS access key ID, GitHub token"
        );
    }

    #[test]
    fn multibyte_text_around_secrets_is_kept() {
        let (out, _) = masked("clé → AKIAIOSFODNN7EXAMPLE ✓");
        assert_eq!(out, "clé → [REDACTED:aws-access-key-id] ✓");
    }
}
