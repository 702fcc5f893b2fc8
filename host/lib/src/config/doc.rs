//! The serde model of a hook file, shared by every shape and syntax (JSON,
//! YAML): what the text says, before any meaning is given to it. One
//! [`EntryDoc`] type covers groups and hook entries of all shapes; a hook
//! kind's own fields are kept aside for the kind (`handlers::kind`), and the
//! loader (`config/mod.rs`) decides what each entry is.

use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use wasm_hooks_core::{Enforcement, EventPattern, OnFailure};

/// A whole hook file. Its other top-level keys are kept by name: the loader
/// refuses them in a hook file, and leaves them to the agent in an agent's
/// settings file (Claude Code's `permissions`, `env`, …).
#[derive(Deserialize)]
pub(super) struct FileDoc {
    #[serde(default)]
    pub(super) hooks: HooksDoc,
    /// The JSON Schema an editor checks the file against.
    #[serde(rename = "$schema")]
    pub(super) _schema: Option<String>,
    /// Whether the file's hooks are acted on (`enforce`), told the person
    /// only (`warn`) or only recorded (`dryrun`), where an entry does not
    /// say.
    pub(super) enforcement: Option<Enforcement>,
    #[serde(flatten)]
    pub(super) other: std::collections::BTreeMap<String, serde::de::IgnoredAny>,
}

/// The top-level keys of a hook file.
pub(super) const FILE_KEYS: &[&str] = &["hooks", "$schema", "enforcement"];

/// A value read on its own, so that what is wrong with it is reported
/// without hiding what is wrong elsewhere: each field that does not read is
/// noted (where, what) and left out, and the rest is read, so one pass
/// finds every bad field of an entry. `value` is `None` when even that
/// fails (the value is not an object, or the problem is nested deeper).
pub(super) struct Lenient<T> {
    pub(super) value: Option<T>,
    pub(super) misreads: Vec<Misread>,
}

/// The most bad fields one value is read around.
const MAX_MISREADS: usize = 16;

/// Why a [`Lenient`] value did not read.
pub(super) struct Misread {
    /// Where inside the value, as serde_path_to_error writes it.
    pub(super) path: String,
    pub(super) message: String,
}

impl<'de, T: serde::de::DeserializeOwned> Deserialize<'de> for Lenient<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut value = Value::deserialize(d)?;
        let mut misreads = Vec::new();
        loop {
            let error = match crate::tracked::from_value(&value) {
                Ok(read) => {
                    return Ok(Self {
                        value: Some(read),
                        misreads,
                    });
                }
                Err(e) => e,
            };
            let path = error.path().to_string();
            misreads.push(Misread {
                message: error.into_inner().to_string(),
                path: path.clone(),
            });
            // Leave out a bad field of this object and read the rest.
            let left_out = match &mut value {
                Value::Object(map) if misreads.len() < MAX_MISREADS => map.remove(&path).is_some(),
                _ => false,
            };
            if !left_out {
                return Ok(Self {
                    value: None,
                    misreads,
                });
            }
        }
    }
}

/// The `hooks` value: a map from event patterns to lists (Claude Code's
/// shape, or profile-style YAML), or a flat list of entries that each name
/// their `event`.
pub(super) enum HooksDoc {
    ByEvent(Vec<(EventKey, Lenient<Vec<Lenient<EntryDoc>>>)>),
    Flat(Vec<Lenient<EntryDoc>>),
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

/// An event pattern used as a key, with its text for error messages; an
/// unknown event is kept as its message, for the loader to report.
pub(super) struct EventKey {
    pub(super) text: String,
    pub(super) pattern: Result<EventPattern, String>,
}

impl<'de> Deserialize<'de> for EventKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        let pattern = EventPattern::parse(&text).map_err(|e| e.to_string());
        Ok(Self { text, pattern })
    }
}

/// One entry of any shape: a group (`matcher` + `hooks`), or a hook (its
/// `type`, the fields every hook has, and its kind's own fields; in the flat
/// list also its `event`).
#[derive(Deserialize, schemars::JsonSchema)]
pub(super) struct EntryDoc {
    // A group.
    pub(super) matcher: Option<String>,
    #[schemars(skip)]
    pub(super) hooks: Option<Vec<Lenient<EntryDoc>>>,
    // The flat list form.
    pub(super) event: Option<String>,
    // Every hook.
    #[serde(rename = "type")]
    pub(super) kind: Option<String>,
    pub(super) name: Option<String>,
    pub(super) description: Option<String>,
    #[serde(default)]
    pub(super) priority: i32,
    #[serde(default = "enabled_default")]
    pub(super) enabled: bool,
    /// What a failure (crash, timeout, limit, bad answer) does: `warn`
    /// (the default), `block` or `ignore`. (`None`: left at the default.)
    #[serde(default, alias = "onFailure")]
    pub(super) on_failure: Option<OnFailure>,
    /// Whether its answers are acted on: `enforce`, `warn` or `dryrun`
    /// (`None`: the file's, the layer's, else `enforce`).
    pub(super) enforcement: Option<Enforcement>,
    /// Claude Code's permission-rule condition (`Bash(git *)`).
    #[serde(rename = "if")]
    pub(super) condition: Option<String>,
    /// What Claude Code shows while the hook runs; wasm-hooks shows no
    /// status line, so it is read and left alone.
    #[serde(rename = "statusMessage")]
    pub(super) _status_message: Option<String>,
    /// Seconds, as in Claude Code.
    pub(super) timeout: Option<f64>,
    pub(super) timeout_ms: Option<u64>,
    #[serde(rename = "async", default)]
    pub(super) background: bool,
    /// Claude Code's background hook whose block wakes the model later.
    #[serde(rename = "asyncRewake", default)]
    pub(super) async_rewake: bool,
    /// A background hook's deadline, in milliseconds.
    #[serde(rename = "asyncTimeout")]
    pub(super) async_timeout: Option<u64>,
    /// Run once per session.
    #[serde(default)]
    pub(super) once: bool,
    /// A PreToolUse hook whose matcher fits `Bash` also sees a shell
    /// command run another way (Claude Code's PreSkillShellCommand) as a
    /// `Bash` call; `false` keeps it to tool calls.
    #[serde(default = "enabled_default")]
    pub(super) every_shell: bool,
    /// The kind's own fields (and anything unknown), checked against the
    /// kind once `type` is known.
    #[serde(flatten)]
    #[schemars(skip)]
    pub(super) fields: Map<String, Value>,
}

/// The fields [`EntryDoc`] reads for every hook, beside the kind's own.
pub(super) const COMMON_FIELDS: &[&str] = &[
    "type",
    "name",
    "description",
    "priority",
    "enabled",
    "on_failure",
    "onFailure",
    "enforcement",
    "if",
    "statusMessage",
    "timeout",
    "timeout_ms",
    "async",
    "asyncRewake",
    "asyncTimeout",
    "once",
    "every_shell",
];

fn enabled_default() -> bool {
    true
}

impl EntryDoc {
    /// What happens when the hook fails: as set, else the default.
    pub(super) fn on_failure(&self) -> OnFailure {
        self.on_failure.unwrap_or_default()
    }

    /// Whether the hook runs in the background (`async`, or `asyncRewake`,
    /// which implies it).
    pub(super) fn runs_in_background(&self) -> bool {
        self.background || self.async_rewake
    }

    /// The hook fields this entry sets (its `type`, `name` and kind fields),
    /// for telling groups from hooks.
    pub(super) fn hook_fields(&self) -> Vec<&str> {
        let named = [("type", self.kind.is_some()), ("name", self.name.is_some())];
        named
            .into_iter()
            .filter(|(_, on)| *on)
            .map(|(f, _)| f)
            .chain(self.fields.keys().map(String::as_str))
            .collect()
    }
}
