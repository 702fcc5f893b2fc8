//! The contract between the hook-file loader and the hook kinds: each kind
//! names its `type`s, owns the serde struct of its own fields, and builds
//! its handler from it. The loader (`config`) reads only the fields every
//! hook has (`name`, `priority`, `on_failure`, `timeout`, `async`, …), picks
//! the kind by `type`, checks the remaining fields against the kind's struct
//! and hands them over: it knows no kind's fields.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserializer;
use serde::de::value::Error as ProbeError;
use serde::de::{DeserializeOwned, Error as _, Visitor};
use serde_json::{Map, Value};
use wasm_hooks_core::{Error, Handler};

use wasm_hooks_wasm::GrantError;

use crate::RequestEnv;
use crate::config::scope::Scope;

use super::defaults::CommandDefaults;
use super::defaults::PromptDefaults;
use super::egress::HttpSettings;
use super::mcp_servers::McpServers;
use super::setup::SetupError;
use super::wasm_setup::WasmSetup;

/// One kind of hook as a hook file spells it.
pub(crate) trait HookKind {
    /// The `type` names it answers to, the canonical one first.
    const TYPES: &'static [&'static str];
    /// A field whose presence means this kind when an entry has no `type`
    /// (the flat list of seed 003 gives a `command` and no type).
    const IMPLIED_BY: Option<&'static str> = None;
    /// Its own fields of a hook entry. Unknown fields are rejected before
    /// it is deserialized, so the struct needs no `deny_unknown_fields`,
    /// but must be a plain struct (its field list is read from serde).
    type Entry: DeserializeOwned + schemars::JsonSchema;
    /// The handler, its default name and its identity.
    ///
    /// # Errors
    /// A [`HookProblem`] saying what is wrong with the entry.
    fn build(entry: Self::Entry, cx: &mut BuildContext<'_>) -> Result<Built, HookProblem>;
}

/// What a kind makes of one entry.
pub(crate) struct Built {
    /// What runs.
    pub(crate) handler: Arc<dyn Handler>,
    /// The hook's name when the entry gives none.
    pub(crate) default_name: String,
    /// What makes two entries of this kind the same hook (resolved paths,
    /// effective limits…); the name is only a label.
    pub(crate) identity: Value,
    /// The files it runs or reads as code (a plugin, a script, an MCP
    /// server's program and its `.mcp.json`): trusting a project trusts
    /// these as they are.
    pub(crate) executes: Vec<PathBuf>,
    /// Whether it may run in a project nobody trusted: it runs no program
    /// of the project's outside the sandbox, reaches no network, and reads
    /// nothing but the project (inline rules; wasm hooks whose only grant
    /// is the project, read-only, with no environment).
    pub(crate) sandboxed: bool,
    /// Where it does less than the entry asks (see
    /// [`wasm_hooks_core::HookSpec::caveats`]).
    pub(crate) caveats: Vec<String>,
    /// The event-record fields it reads by name (an inline rule's
    /// `tool_input.command`), for the lint that finds fields no event has.
    pub(crate) reads: Vec<String>,
    /// What it runs that trust cannot pin (a variable it cannot expand, a
    /// package runner), each in a few words.
    pub(crate) unpinned: Vec<String>,
    /// What the person should hear when the file is read (a plugin not
    /// built yet), shown by `validate` whether or not the file loads.
    pub(crate) warnings: Vec<String>,
}

impl Built {
    /// A hook that runs no file of its own and may not run in an untrusted
    /// project (say otherwise with [`Built::executing`] and
    /// [`Built::sandboxed`]).
    pub(crate) fn new(handler: Arc<dyn Handler>, default_name: String, identity: Value) -> Self {
        Self {
            handler,
            default_name,
            identity,
            executes: Vec::new(),
            sandboxed: false,
            caveats: Vec::new(),
            reads: Vec::new(),
            unpinned: Vec::new(),
            warnings: Vec::new(),
        }
    }

    /// This hook, running or reading these files as code.
    pub(crate) fn executing(mut self, files: Vec<PathBuf>) -> Self {
        self.executes = files;
        self
    }

    /// This hook, safe to run in an untrusted project.
    pub(crate) fn sandboxed(mut self) -> Self {
        self.sandboxed = true;
        self
    }
}

/// Why an entry could not become a handler.
pub(crate) enum HookProblem {
    /// A problem with the entry itself.
    Message(String),
    /// Problems with fields: each one's dotted path below the entry
    /// (`limits.fuel`, `config.patterns[2]`) and what is wrong.
    Fields(Vec<(String, String)>),
    /// A problem loading what it names (a plugin).
    Load(Error),
}

impl From<String> for HookProblem {
    fn from(message: String) -> Self {
        Self::Message(message)
    }
}

impl From<SetupError> for HookProblem {
    fn from(e: SetupError) -> Self {
        Self::Message(e.to_string())
    }
}

impl From<GrantError> for HookProblem {
    fn from(e: GrantError) -> Self {
        Self::Message(e.to_string())
    }
}

impl From<&str> for HookProblem {
    fn from(message: &str) -> Self {
        Self::Message(message.to_owned())
    }
}

/// What the kinds share while one set of hook files is loaded: engine-wide
/// defaults, the wasm runtime and compiled plugins, the HTTP client.
pub(crate) struct KindSettings {
    /// Wasm hooks' runtime, grants' base and default limits.
    pub(crate) wasm: WasmSetup,
    /// Command hooks' defaults.
    pub(crate) commands: CommandDefaults,
    /// Prompt hooks' defaults.
    pub(crate) prompts: PromptDefaults,
    /// What HTTP and prompt hooks may call, and their client.
    pub(crate) http: HttpSettings,
    /// MCP servers, one process each, shared by their hooks.
    pub(crate) mcp: McpServers,
    /// The request's own variables, for what hooks start and read.
    pub(crate) env: RequestEnv,
}

/// What a kind may use while it builds one entry.
pub(crate) struct BuildContext<'a> {
    /// The shared settings and caches.
    pub(crate) settings: &'a mut KindSettings,
    /// The hook file's directory: relative paths start here.
    pub(crate) base: &'a Path,
    /// The entry's `timeout`/`timeout_ms`, in milliseconds.
    pub(crate) timeout_ms: Option<u64>,
    /// Whose hook file it is.
    pub(crate) scope: Scope,
}

impl BuildContext<'_> {
    /// Whether the hook file is a project's (see [`refuse_code_loading`]).
    pub(crate) fn is_project(&self) -> bool {
        self.scope == Scope::Project
    }
}

/// One kind, type-erased for the loader's table.
pub(crate) struct KindEntry {
    /// See [`HookKind::TYPES`].
    pub(crate) types: &'static [&'static str],
    /// See [`HookKind::IMPLIED_BY`].
    pub(crate) implied_by: Option<&'static str>,
    /// The names of its fields.
    pub(crate) fields: fn() -> &'static [&'static str],
    /// The JSON Schema of its own fields (an object schema).
    pub(crate) schema: fn() -> Value,
    /// Deserialize its fields and build.
    pub(crate) build: fn(Map<String, Value>, &mut BuildContext<'_>) -> Result<Built, FieldsError>,
}

impl KindEntry {
    /// The table entry of kind `K`.
    pub(crate) const fn of<K: HookKind>() -> Self {
        Self {
            types: K::TYPES,
            implied_by: K::IMPLIED_BY,
            fields: field_names::<K::Entry>,
            schema: entry_schema::<K::Entry>,
            build: build_kind::<K>,
        }
    }

    /// The canonical `type` name.
    pub(crate) fn name(&self) -> &'static str {
        self.types[0]
    }
}

/// The JSON Schema of `E`, as JSON.
fn entry_schema<E: schemars::JsonSchema>() -> Value {
    serde_json::to_value(schemars::schema_for!(E)).unwrap_or_default()
}

/// Why a kind's fields did not become a handler.
pub(crate) enum FieldsError {
    /// A field of the wrong shape: its path in the entry (`limits.fuel`) and
    /// what serde said.
    Field {
        /// Dotted path below the entry.
        path: String,
        /// The complaint.
        message: String,
    },
    /// The entry deserialized, but the kind refused it.
    Problem(HookProblem),
}

fn build_kind<K: HookKind>(
    fields: Map<String, Value>,
    cx: &mut BuildContext<'_>,
) -> Result<Built, FieldsError> {
    let entry: K::Entry =
        crate::tracked::from_value(&Value::Object(fields)).map_err(|e| FieldsError::Field {
            path: e.path().to_string(),
            message: e.into_inner().to_string(),
        })?;
    K::build(entry, cx).map_err(FieldsError::Problem)
}

/// The field names serde knows for struct `T` (aliases included), read by
/// asking `T` to deserialize itself from a probe that only records them.
fn field_names<T: DeserializeOwned>() -> &'static [&'static str] {
    let mut fields: &'static [&'static str] = &[];
    // The probe always fails: only what it recorded matters.
    let _ = T::deserialize(FieldProbe(&mut fields));
    fields
}

/// A deserializer that records the fields a struct asks for and fails.
struct FieldProbe<'a>(&'a mut &'static [&'static str]);

impl<'de> Deserializer<'de> for FieldProbe<'_> {
    type Error = ProbeError;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, ProbeError> {
        Err(ProbeError::custom("a hook kind's entry must be a struct"))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, ProbeError> {
        *self.0 = fields;
        Err(ProbeError::custom("fields recorded"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
        byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map
        enum identifier ignored_any
    }
}

/// A field holding an object of string values, as pairs (none when absent).
pub(crate) fn string_map(
    value: Option<&Value>,
    field: &str,
) -> Result<Vec<(String, String)>, HookProblem> {
    let wrong = || HookProblem::Message(format!("`{field}` must map names to strings"));
    match value {
        None => Ok(Vec::new()),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_owned())))
            .collect::<Option<_>>()
            .ok_or_else(wrong),
        Some(_) => Err(wrong()),
    }
}

/// Variables that make a program load code from elsewhere (a search path,
/// a start-up file, a preloaded library, options an interpreter reads):
/// set in a hook's `env`, they run code no trust record pins.
const CODE_LOADING_VARIABLES: &[&str] = &[
    "PATH",
    "BASH_ENV",
    "ENV",
    "SHELLOPTS",
    "BASHOPTS",
    "PS4",
    "PROMPT_COMMAND",
    "IFS",
    "CDPATH",
    "ZDOTDIR",
    "HOME",
    "XDG_CONFIG_HOME",
    "NODE_OPTIONS",
    "NODE_PATH",
    "PYTHONPATH",
    "PYTHONSTARTUP",
    "PYTHONHOME",
    "PYTHONUSERBASE",
    "PERL5LIB",
    "PERL5OPT",
    "PERLLIB",
    "RUBYLIB",
    "RUBYOPT",
    "GEM_HOME",
    "GEM_PATH",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS",
    "CLASSPATH",
    "MAKEFLAGS",
    "MAKEFILES",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_EXEC_PATH",
    "GCONV_PATH",
];

/// Prefixes of more such variables (`LD_PRELOAD`, `DYLD_INSERT_LIBRARIES`,
/// exported shell functions, npm's and git's configuration).
const CODE_LOADING_PREFIXES: &[&str] = &["LD_", "DYLD_", "BASH_FUNC_", "npm_config_", "GIT_CONFIG"];

/// Whether the variable `name` makes a program load code from elsewhere.
pub(crate) fn loads_code(name: &str) -> bool {
    CODE_LOADING_VARIABLES.contains(&name)
        || CODE_LOADING_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// Refuse, in a hook of a project's layer, an `env` (the hook file's
/// `field`) that sets a variable which loads code: trust pins the files a
/// hook runs, and such a variable would run others.
pub(crate) fn refuse_code_loading(
    env: &[(String, String)],
    field: &str,
    from_project: bool,
) -> Result<(), HookProblem> {
    if !from_project {
        return Ok(());
    }
    match env
        .iter()
        .map(|(name, _)| name)
        .find(|name| loads_code(name))
    {
        Some(name) => Err(HookProblem::Message(format!(
            "`{field}.{}`: a project's hook may not set a variable that loads code (trust cannot pin what it runs); set it in your own hook file if you mean it",
            wasm_hooks_core::Shown(name)
        ))),
        None => Ok(()),
    }
}

/// A field holding a list of strings (none when absent).
pub(crate) fn string_list(value: Option<&Value>, field: &str) -> Result<Vec<String>, HookProblem> {
    let wrong = || HookProblem::Message(format!("`{field}` must be a list of strings"));
    match value {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| i.as_str().map(str::to_owned))
            .collect::<Option<_>>()
            .ok_or_else(wrong),
        Some(_) => Err(wrong()),
    }
}

/// A field that must be a string when present.
pub(crate) fn optional_text(
    value: Option<&Value>,
    field: &str,
) -> Result<Option<String>, HookProblem> {
    match value {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(HookProblem::Message(format!("`{field}` must be a string"))),
    }
}

/// A field that must be `true` or `false` when present (false when absent).
pub(crate) fn optional_flag(value: Option<&Value>, field: &str) -> Result<bool, HookProblem> {
    match value {
        None => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(HookProblem::Message(format!(
            "`{field}` must be true or false"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;

    #[derive(Deserialize)]
    #[allow(dead_code, reason = "only its field list is read")]
    struct Probed {
        plugin: String,
        #[serde(alias = "allowedEnvVars")]
        allowed_env: Vec<String>,
    }

    #[test]
    fn the_probe_reads_a_structs_fields_and_aliases() {
        let fields = field_names::<Probed>();
        assert!(fields.contains(&"plugin"), "{fields:?}");
        assert!(fields.contains(&"allowed_env"), "{fields:?}");
        assert!(fields.contains(&"allowedEnvVars"), "{fields:?}");
    }
}
