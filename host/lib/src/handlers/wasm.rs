//! The `wasm` hook kind as a hook file spells it: its fields, and how they
//! become a [`WasmHook`] (plugin loaded once per file and pin, grants
//! resolved, limits over the engine's defaults). Running plugins is
//! `wasm-hooks-wasm`'s job.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;
use wasm_hooks_wasm::{GrantBase, Grants, InstancePolicy, LimitOverrides, WasmHook};

use super::config_schema;
use super::deferred_wasm::{DeferredWasm, HookParts, Pinned, Source};
use super::kind::{BuildContext, Built, HookKind, HookProblem, string_list};
use super::wasm_setup::WasmSetup;
use crate::config::scope::Scope;
use crate::oci::{Lock, PluginRef};

/// The most a first-use pull may take when the hook gives no `timeout`:
/// within the event's own deadline (30 s by default) and an agent's.
const FIRST_USE_PULL: Duration = Duration::from_secs(20);

/// The `wasm` kind.
pub(crate) struct WasmKind;

/// Refuse a limit no plugin can run under: zero fuel, memory, time or
/// answer size would make every call fail, and the hook fail open or shut
/// on every event.
fn unworkable_limit(asked: &LimitOverrides) -> Result<(), HookProblem> {
    let zero = [
        ("limits.fuel", asked.fuel),
        ("limits.memory_mb", asked.memory_mb),
        ("limits.timeout_ms", asked.timeout_ms),
        ("limits.max_result_kb", asked.max_result_kb),
    ]
    .into_iter()
    .find(|(_, value)| *value == Some(0));
    match zero {
        Some((path, _)) => Err(HookProblem::Fields(vec![(
            path.to_owned(),
            "0 leaves the plugin nothing to run with, so every call would fail; leave it out for the default".to_owned(),
        )])),
        None => Ok(()),
    }
}

/// A wasm hook's own fields.
#[derive(Deserialize, schemars::JsonSchema)]
pub(crate) struct WasmEntry {
    /// The component, relative to the hook file.
    plugin: Option<PathBuf>,
    /// Handed to the plugin through `host.config`.
    #[schemars(with = "Option<serde_json::Map<String, Value>>")]
    config: Option<Value>,
    /// Overrides of the engine's default limits.
    limits: Option<LimitOverrides>,
    /// The plugin's expected sha256.
    #[schemars(with = "Option<String>")]
    sha256: Option<Value>,
    /// Directories granted read-only.
    #[schemars(with = "Option<Vec<String>>")]
    allow_read: Option<Value>,
    /// Directories granted read-write.
    #[schemars(with = "Option<Vec<String>>")]
    allow_write: Option<Value>,
    /// Environment variables passed through.
    #[schemars(with = "Option<Vec<String>>")]
    env: Option<Value>,
    /// `fresh` (the default): a new instance for every event; `reuse`: a
    /// warm one kept between events in `serve` and other long-lived hosts
    /// (its memory carries over; replaced after a trap, a limit or 1,000
    /// calls).
    instance: Option<InstancePolicy>,
}

impl HookKind for WasmKind {
    const TYPES: &'static [&'static str] = &["wasm"];
    type Entry = WasmEntry;

    fn build(entry: WasmEntry, cx: &mut BuildContext<'_>) -> Result<Built, HookProblem> {
        if let Some(asked) = &entry.limits {
            unworkable_limit(asked)?;
        }
        let source = plugin_source(&entry, cx)?;
        let setup = &mut cx.settings.wasm;
        let env = string_list(entry.env.as_ref(), "env")?;
        let asks_env = !env.is_empty();
        let grants = Grants::resolve(
            &string_list(entry.allow_read.as_ref(), "allow_read")?,
            &string_list(entry.allow_write.as_ref(), "allow_write")?,
            &env,
            &GrantBase {
                project_dir: &setup.project_dir,
                relative_to: cx.base,
                variable: &|name| cx.settings.env.var(name),
            },
        )?;
        let mut asked = entry.limits.unwrap_or_default();
        asked.timeout_ms = asked.timeout_ms.or(cx.timeout_ms);
        let (overrides, cut) = asked.capped(&setup.ceilings);
        let limits = setup.limits.with(&overrides);
        let config = entry
            .config
            .unwrap_or_else(|| Value::Object(serde_json::Map::new()));
        let sandboxed = grants.read_only_within(&setup.project_dir) && !asks_env;
        let mut identity = serde_json::json!({
            "plugin": source.identity(),
            "config": config,
            "limits": limits,
            "grants": grants.to_string(),
        });
        // Named only when not the default, so that a copy of the hook in
        // another layer that does not say it (written before the field
        // existed) is still the same hook, and runs once.
        let instance = entry.instance.unwrap_or_default();
        if instance != InstancePolicy::Fresh {
            identity["instance"] = serde_json::json!(instance);
        }
        let default_name = source.default_name();
        let executes = vec![source.trusted_file()];
        let may_pull = if cx.scope == Scope::Project {
            setup.registry.project_may_pull.clone()
        } else {
            Arc::new(AtomicBool::new(true))
        };
        let parts = HookParts {
            config,
            limits,
            grants,
            instance,
            layer: cx.scope.name(),
        };
        let (handler, warning) = handler(
            source,
            parts,
            setup,
            may_pull,
            cx.timeout_ms,
            cx.scope == Scope::Project,
        )?;
        let mut built = Built::new(handler, default_name, identity).executing(executes);
        built.warnings.extend(warning);
        if !cut.is_empty() {
            built.caveats.push(format!(
                "limits cut to your ceilings (`ceilings` in your config): {}",
                cut.join(", ")
            ));
        }
        Ok(if sandboxed { built.sandboxed() } else { built })
    }
}

/// Where the entry's plugin is: a file relative to the hook file, or an
/// `oci://` reference the lock pins.
fn plugin_source(
    entry: &WasmEntry,
    cx: &mut BuildContext<'_>,
) -> Result<PluginSource, HookProblem> {
    let Some(plugin) = &entry.plugin else {
        return Err(
            "a wasm hook needs `plugin`, the path of its .wasm component or an `oci://` reference"
                .into(),
        );
    };
    let sha256 = match &entry.sha256 {
        None => None,
        Some(Value::String(hex))
            if hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()) =>
        {
            Some(hex.to_ascii_lowercase())
        }
        Some(_) => return Err("`sha256` must be the plugin's sha256, 64 hex digits".into()),
    };
    let text = plugin.to_string_lossy();
    if PluginRef::is_oci(&text) {
        return registry_source(&text, sha256, cx);
    }
    let path = cx.base.join(plugin);
    if cx.settings.wasm.registry.signed_only && cx.scope != Scope::Managed {
        return Ok(PluginSource::Broken {
            why: "the organisation requires every wasm plugin to come from a registry, signed by one of its keys: publish it (`wasm-hooks publish DIR oci://…/NAME:TAG --key KEY`) and name it `oci://…`".to_owned(),
            file: path,
        });
    }
    Ok(PluginSource::File { path, sha256 })
}

/// The hook's handler: the plugin loaded now when it is on this machine,
/// else one that loads it on the first event that reaches it (with the
/// warning that says so).
fn handler(
    source: PluginSource,
    parts: HookParts,
    setup: &mut WasmSetup,
    may_pull: Arc<AtomicBool>,
    timeout_ms: Option<u64>,
    from_project: bool,
) -> Result<(Arc<dyn wasm_hooks_core::Handler>, Option<String>), HookProblem> {
    if let Some((path, pin)) = source.ready() {
        let plugin = setup
            .plugin(&path, pin.as_deref())
            .map_err(HookProblem::Load)?;
        if let Some(schema) = plugin.config_schema() {
            let problems = config_schema::problems(&schema, &parts.config);
            if !problems.is_empty() {
                return Err(HookProblem::Fields(problems));
            }
        }
        let hook = WasmHook::new(plugin, &parts.config, parts.limits)
            .with_kv_layer(parts.layer)
            .with_grants(parts.grants)
            .with_instances(parts.instance);
        return Ok((Arc::new(hook), None));
    }
    let runtime = setup.runtime().map_err(HookProblem::Load)?;
    let deferred = source.deferred(may_pull, timeout_ms, from_project);
    let warning = deferred.to_string();
    Ok((
        Arc::new(DeferredWasm::new(deferred, runtime, parts)),
        Some(warning),
    ))
}

/// Where one hook's plugin is.
enum PluginSource {
    /// A file, relative to the hook file.
    File {
        path: PathBuf,
        sha256: Option<String>,
    },
    /// A registry reference the lock beside the hook file pins.
    Registry { pinned: Box<Pinned>, lock: PathBuf },
    /// None to be had, for this reason (`file` is what trust records).
    Broken { why: String, file: PathBuf },
}

impl PluginSource {
    /// What makes two hooks run the same plugin: the file and pin, or the
    /// reference and the digests the lock pins.
    fn identity(&self) -> Value {
        match self {
            Self::File { path, sha256 } => serde_json::json!({
                "file": path.canonicalize().unwrap_or_else(|_| path.clone()),
                "sha256": sha256,
            }),
            Self::Registry { pinned, .. } => serde_json::json!({
                "reference": pinned.reference.as_str(),
                "digest": pinned.entry.digest,
                "component": pinned.entry.component,
            }),
            Self::Broken { why, .. } => serde_json::json!({ "broken": why }),
        }
    }

    /// The name a hook gets when the entry gives none.
    fn default_name(&self) -> String {
        match self {
            Self::File { path, .. } => path
                .file_stem()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned(),
            Self::Broken { file, .. } => file
                .file_stem()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned(),
            Self::Registry { pinned, .. } => pinned
                .reference
                .repository()
                .rsplit('/')
                .next()
                .unwrap_or_default()
                .to_owned(),
        }
    }

    /// The file trust records: the plugin itself, or the lock that pins it
    /// (never the store: what runs is what the lock says).
    fn trusted_file(&self) -> PathBuf {
        match self {
            Self::File { path, .. } => path.clone(),
            Self::Registry { lock, .. } => lock.clone(),
            Self::Broken { file, .. } => file.clone(),
        }
    }

    /// The file to load now and its pin, when it is on this machine.
    fn ready(&self) -> Option<(PathBuf, Option<String>)> {
        match self {
            // A file that is not a plugin folder's build output is loaded
            // now, and a typo in its path is the file's error, as ever.
            Self::File { path, sha256 } => (path.exists() || build_folder(path).is_none())
                .then(|| (path.clone(), sha256.clone())),
            Self::Registry { pinned, .. } => pinned
                .fetcher
                .stored(&pinned.entry)
                .map(|path| (path, Some(pinned.entry.component_hex().to_owned()))),
            Self::Broken { .. } => None,
        }
    }

    /// The source of a hook that loads its plugin on first use.
    fn deferred(
        self,
        may_pull: Arc<AtomicBool>,
        timeout_ms: Option<u64>,
        from_project: bool,
    ) -> Source {
        match self {
            Self::File { path, sha256 } => {
                let remedy = build_remedy(&path);
                Source::File {
                    path,
                    sha256,
                    remedy,
                    from_project,
                }
            }
            Self::Broken { why, .. } => Source::Broken(why),
            Self::Registry { pinned, .. } => Source::Registry {
                pinned,
                may_pull,
                deadline: timeout_ms.map_or(FIRST_USE_PULL, Duration::from_millis),
            },
        }
    }
}

/// The plugin folder whose `build/` holds `path`, if there is one.
fn build_folder(path: &Path) -> Option<&Path> {
    path.ancestors()
        .find(|dir| dir.file_name().is_some_and(|name| name == "build"))
        .and_then(Path::parent)
        .filter(|folder| folder.is_dir())
}

/// The command that makes a missing local plugin: `wasm-hooks build` of
/// the folder its `build/` is in.
fn build_remedy(path: &Path) -> String {
    match build_folder(path) {
        Some(folder) => format!(
            "build it with `wasm-hooks build {}`",
            folder
                .canonicalize()
                .unwrap_or_else(|_| folder.to_owned())
                .display()
        ),
        None => "build it, or fix `plugin`".to_owned(),
    }
}

/// The registry plugin `text` names, pinned by the lock beside the hook
/// file.
fn registry_source(
    text: &str,
    sha256: Option<String>,
    cx: &mut BuildContext<'_>,
) -> Result<PluginSource, HookProblem> {
    let field = |message: String| HookProblem::Fields(vec![("plugin".to_owned(), message)]);
    let reference = PluginRef::parse(text).map_err(|e| field(e.to_string()))?;
    let lock_path = Lock::path_in(cx.base);
    // What follows fails this hook alone (by its `on_failure`), never the
    // file and every other guard in it.
    let broken = |why: String| {
        Ok(PluginSource::Broken {
            why,
            file: lock_path.clone(),
        })
    };
    let lock_flag = match lock_path.parent() {
        Some(dir) if dir.file_name().is_some_and(|d| d == ".wasm-hooks") => String::new(),
        Some(dir) => format!(" --lock {}", dir.display()),
        None => String::new(),
    };
    let pinned = match cx.settings.wasm.lock(&lock_path) {
        Ok(lock) => lock.plugins.get(reference.as_str()).cloned(),
        Err(e) => return broken(e.clone()),
    };
    let Some(entry) = pinned else {
        return broken(format!(
            "`{reference}` is not pinned in {}: run `wasm-hooks add {reference}{lock_flag}` to pin it",
            lock_path.display()
        ));
    };
    if reference.digest().is_some_and(|d| d != entry.digest) {
        return broken(format!(
            "the lock pins `{reference}` to {}, not the digest it names: run `wasm-hooks update {reference}{lock_flag}`",
            entry.digest
        ));
    }
    if sha256
        .as_deref()
        .is_some_and(|hex| hex != entry.component_hex())
    {
        return Err(HookProblem::Fields(vec![(
            "sha256".to_owned(),
            format!(
                "the lock pins `{reference}` to component {}, not this sha256",
                entry.component
            ),
        )]));
    }
    let fetcher = if cx.scope == Scope::Project {
        cx.settings.wasm.registry.project_fetcher.clone()
    } else {
        cx.settings.wasm.registry.fetcher.clone()
    };
    let Some(fetcher) = fetcher else {
        return broken(
            "there is no plugin store (no $HOME or $XDG_CACHE_HOME) to pull registry plugins into"
                .to_owned(),
        );
    };
    Ok(PluginSource::Registry {
        pinned: Box::new(Pinned {
            reference,
            entry,
            fetcher,
        }),
        lock: lock_path,
    })
}
