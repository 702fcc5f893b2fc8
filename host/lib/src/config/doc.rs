//! The serde model of a hook file, shared by every shape and syntax (JSON,
//! YAML): what the text says, before any meaning is given to it. One
//! [`EntryDoc`] type covers groups and hook entries of all shapes, so that
//! unknown fields are rejected with their exact line and column; the loader
//! (`config/mod.rs`) decides what each entry is.

use std::fmt;
use std::marker::PhantomData;
use std::path::PathBuf;

use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use wasm_hooks_wasm::LimitOverrides;
use wasm_hooks_core::{EventPattern, OnFailure};

/// A whole hook file. Other top-level keys (a Claude Code settings file's
/// `permissions`, `env`, …) are ignored.
#[derive(Deserialize)]
pub(super) struct FileDoc {
    #[serde(default)]
    pub(super) hooks: HooksDoc,
}

/// The `hooks` value: a map from event patterns to lists (Claude Code's
/// shape, or profile-style YAML), or a flat list of entries that each name
/// their `event`.
pub(super) enum HooksDoc {
    ByEvent(Vec<(EventKey, Vec<EntryDoc>)>),
    Flat(Vec<EntryDoc>),
}

impl Default for HooksDoc {
    fn default() -> Self {
        Self::ByEvent(Vec::new())
    }
}

impl<'de> Deserialize<'de> for HooksDoc {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct HooksVisitor(PhantomData<()>);
        impl<'de> Visitor<'de> for HooksVisitor {
            type Value = HooksDoc;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map from event names to hook lists, or a list of hooks")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<HooksDoc, A::Error> {
                // Kept in file order: hooks on different events keep theirs.
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry()? {
                    entries.push(entry);
                }
                Ok(HooksDoc::ByEvent(entries))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<HooksDoc, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = seq.next_element()? {
                    entries.push(entry);
                }
                Ok(HooksDoc::Flat(entries))
            }
        }
        d.deserialize_any(HooksVisitor(PhantomData))
    }
}

/// An event pattern used as a key, with its text for error messages.
pub(super) struct EventKey {
    pub(super) text: String,
    pub(super) pattern: EventPattern,
}

impl<'de> Deserialize<'de> for EventKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        let pattern = EventPattern::parse(&text).map_err(serde::de::Error::custom)?;
        Ok(Self { text, pattern })
    }
}

/// The `type` of a hook entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum HandlerKind {
    Wasm,
    Command,
    Inline,
    /// Profile-style YAML's inline rule (`match`, `action`, `message`).
    Matcher,
    #[serde(alias = "llm")]
    Prompt,
    Http,
}

impl HandlerKind {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Self::Wasm => "wasm",
            Self::Command => "command",
            Self::Inline => "inline",
            Self::Matcher => "matcher",
            Self::Prompt => "prompt",
            Self::Http => "http",
        }
    }
}

/// One entry of any shape: a group (`matcher` + `hooks`), or a hook (its
/// `type` and fields; in the flat list also its `event`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct EntryDoc {
    // A group.
    pub(super) matcher: Option<String>,
    pub(super) hooks: Option<Vec<EntryDoc>>,
    // The flat list form.
    pub(super) event: Option<String>,
    // Every hook.
    #[serde(rename = "type")]
    pub(super) kind: Option<HandlerKind>,
    pub(super) name: Option<String>,
    pub(super) description: Option<String>,
    #[serde(default)]
    pub(super) priority: i32,
    #[serde(default = "enabled_default")]
    pub(super) enabled: bool,
    #[serde(default)]
    pub(super) on_failure: OnFailure,
    /// Seconds, as in Claude Code.
    pub(super) timeout: Option<f64>,
    pub(super) timeout_ms: Option<u64>,
    #[serde(rename = "async", default)]
    pub(super) background: bool,
    // wasm
    pub(super) plugin: Option<PathBuf>,
    pub(super) config: Option<Value>,
    pub(super) limits: Option<LimitOverrides>,
    pub(super) sha256: Option<Value>,
    pub(super) allow_read: Option<Value>,
    pub(super) allow_write: Option<Value>,
    // The other handler kinds (`env` is a wasm hook's too).
    pub(super) command: Option<Value>,
    pub(super) args: Option<Value>,
    pub(super) working_dir: Option<Value>,
    pub(super) env: Option<Value>,
    #[serde(alias = "inline_rules")]
    pub(super) rules: Option<Value>,
    #[serde(rename = "match")]
    pub(super) match_: Option<Value>,
    pub(super) action: Option<Value>,
    pub(super) message: Option<Value>,
    pub(super) prompt: Option<Value>,
    pub(super) model: Option<Value>,
    pub(super) provider: Option<Value>,
    pub(super) base_url: Option<Value>,
    pub(super) api_key_env: Option<Value>,
    pub(super) max_tokens: Option<Value>,
    pub(super) cache: Option<Value>,
    pub(super) url: Option<Value>,
    pub(super) headers: Option<Value>,
    #[serde(alias = "allowedEnvVars")]
    pub(super) allowed_env: Option<Value>,
}

fn enabled_default() -> bool {
    true
}

impl EntryDoc {
    /// The names of the hook fields this entry sets, beyond the group and
    /// event fields, for telling groups from hooks.
    pub(super) fn hook_fields(&self) -> Vec<&'static str> {
        let set = [
            ("type", self.kind.is_some()),
            ("name", self.name.is_some()),
            ("plugin", self.plugin.is_some()),
            ("config", self.config.is_some()),
            ("limits", self.limits.is_some()),
            ("sha256", self.sha256.is_some()),
            ("allow_read", self.allow_read.is_some()),
            ("allow_write", self.allow_write.is_some()),
            ("command", self.command.is_some()),
            ("args", self.args.is_some()),
            ("working_dir", self.working_dir.is_some()),
            ("env", self.env.is_some()),
            ("rules", self.rules.is_some()),
            ("match", self.match_.is_some()),
            ("action", self.action.is_some()),
            ("message", self.message.is_some()),
            ("prompt", self.prompt.is_some()),
            ("model", self.model.is_some()),
            ("provider", self.provider.is_some()),
            ("base_url", self.base_url.is_some()),
            ("api_key_env", self.api_key_env.is_some()),
            ("max_tokens", self.max_tokens.is_some()),
            ("cache", self.cache.is_some()),
            ("url", self.url.is_some()),
            ("headers", self.headers.is_some()),
            ("allowed_env", self.allowed_env.is_some()),
        ];
        set.into_iter()
            .filter(|(_, on)| *on)
            .map(|(f, _)| f)
            .collect()
    }

    /// The entry's type: as written, or `command` when it gives a command
    /// and no type (the flat list form of seed 003 does).
    pub(super) fn kind(&self) -> Option<HandlerKind> {
        self.kind
            .or_else(|| self.command.is_some().then_some(HandlerKind::Command))
    }
}
