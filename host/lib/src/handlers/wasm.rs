//! The `wasm` hook kind as a hook file spells it: its fields, and how they
//! become a [`WasmHook`] (plugin loaded once per file and pin, grants
//! resolved, limits over the engine's defaults). Running plugins is
//! `wasm-hooks-wasm`'s job.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;
use wasm_hooks_core::Error;
use wasm_hooks_wasm::{
    GrantBase, Grants, LimitOverrides, Plugin, WasmHook, WasmLimits, WasmRuntime,
    WasmRuntimeBuilder,
};

use super::config_schema;
use super::kind::{BuildContext, Built, HookKind, HookProblem, string_list};

/// How wasm hooks get their runtime and resolve grants, and the plugins
/// loaded so far (each file and pin compiled once, however many hooks use
/// it).
pub(crate) struct WasmSetup {
    /// A runtime to share, if the embedder gave one; else made on the
    /// first wasm hook.
    pub(crate) runtime: Option<WasmRuntime>,
    /// How to make one otherwise.
    pub(crate) builder: WasmRuntimeBuilder,
    /// What `${PROJECT_DIR}` means in grants.
    pub(crate) project_dir: PathBuf,
    /// Default limits for every wasm hook.
    pub(crate) limits: WasmLimits,
    /// The most a hook file may ask for.
    pub(crate) ceilings: WasmLimits,
    plugins: HashMap<(PathBuf, Option<String>), Plugin>,
}

impl WasmSetup {
    /// A setup with nothing loaded yet.
    pub(crate) fn new(
        runtime: Option<WasmRuntime>,
        builder: WasmRuntimeBuilder,
        project_dir: PathBuf,
        limits: WasmLimits,
        ceilings: WasmLimits,
    ) -> Self {
        Self {
            runtime,
            builder,
            project_dir,
            limits,
            ceilings,
            plugins: HashMap::new(),
        }
    }

    /// The plugin at `path`, loaded once per file and pin.
    fn plugin(&mut self, path: &Path, sha256: Option<&str>) -> Result<Plugin, Error> {
        let key = (path.to_owned(), sha256.map(str::to_owned));
        if let Some(plugin) = self.plugins.get(&key) {
            return Ok(plugin.clone());
        }
        let runtime = match &self.runtime {
            Some(runtime) => runtime.clone(),
            None => {
                let runtime = self.builder.build()?;
                self.runtime = Some(runtime.clone());
                runtime
            }
        };
        // A project's plugin is never hot-reloaded: its grants were
        // weighed (and trusted) for these bytes; other bytes untrust the
        // project, and a host that checks trust builds its engine again.
        // A project that does not resolve holds nothing (an empty path
        // would hold everything).
        let inside = self.project_dir.canonicalize().is_ok_and(|project| {
            path.canonicalize()
                .is_ok_and(|plugin| plugin.starts_with(&project))
        });
        let plugin = if inside {
            runtime.load_unwatched(path, sha256)?
        } else {
            runtime.load_pinned(path, sha256)?
        };
        self.plugins.insert(key, plugin.clone());
        Ok(plugin)
    }
}

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
}

impl HookKind for WasmKind {
    const TYPES: &'static [&'static str] = &["wasm"];
    type Entry = WasmEntry;

    fn build(entry: WasmEntry, cx: &mut BuildContext<'_>) -> Result<Built, HookProblem> {
        if let Some(asked) = &entry.limits {
            unworkable_limit(asked)?;
        }
        let Some(plugin) = &entry.plugin else {
            return Err("a wasm hook needs `plugin`, the path of its .wasm component".into());
        };
        let plugin_path = cx.base.join(plugin);
        let sha256 = match &entry.sha256 {
            None => None,
            Some(Value::String(hex))
                if hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()) =>
            {
                Some(hex.to_ascii_lowercase())
            }
            Some(_) => return Err("`sha256` must be the plugin's sha256, 64 hex digits".into()),
        };
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
        let plugin = setup
            .plugin(&plugin_path, sha256.as_deref())
            .map_err(HookProblem::Load)?;
        let mut asked = entry.limits.unwrap_or_default();
        asked.timeout_ms = asked.timeout_ms.or(cx.timeout_ms);
        let (overrides, cut) = asked.capped(&setup.ceilings);
        let limits = setup.limits.with(&overrides);
        let config = entry
            .config
            .unwrap_or_else(|| Value::Object(serde_json::Map::new()));
        if let Some(schema) = plugin.config_schema() {
            let problems = config_schema::problems(&schema, &config);
            if !problems.is_empty() {
                return Err(HookProblem::Fields(problems));
            }
        }
        let default_name = plugin_path
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let identity = serde_json::json!({
            "plugin": plugin_path.canonicalize().unwrap_or_else(|_| plugin_path.clone()),
            "sha256": sha256,
            "config": config,
            "limits": limits,
            "grants": grants.to_string(),
        });
        let sandboxed = grants.read_only_within(&setup.project_dir) && !asks_env;
        let hook = WasmHook::new(plugin, &config, limits).with_grants(grants);
        let mut built =
            Built::new(Arc::new(hook), default_name, identity).executing(vec![plugin_path]);
        if !cut.is_empty() {
            built.caveats.push(format!(
                "limits cut to your ceilings (`ceilings` in your config): {}",
                cut.join(", ")
            ));
        }
        Ok(if sandboxed { built.sandboxed() } else { built })
    }
}
