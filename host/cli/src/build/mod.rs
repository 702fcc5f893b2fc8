//! `wasm-hooks build [DIR]`: build a plugin, whatever its language — a
//! Rust crate (`Cargo.toml`: cargo for wasm32-wasip2), a Python one
//! (`app.py`: componentize-py) or a JavaScript one (`app.js`:
//! componentize-js) — installing the toolchain it needs and saying what it
//! installs, then print each component's path, size, sha256 and WIT world,
//! and compile it ahead into the compile cache (so its first event loads
//! it from there). Python and JavaScript components are stamped with their
//! world, as the Rust SDK stamps its plugins. Nothing is written through a symbolic
//! link in the plugin's folder (see `write`).

pub(crate) mod inputs;
mod js;
mod python;
mod rust;
mod toolchain;
mod write;

pub(crate) use js::SDK as JS_SDK;
pub(crate) use python::SDK as PYTHON_SDK;

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::Args;
use wasm_hooks::cli_support::PluginInfo;

use super::hook_files::CacheArgs;
use super::{Exit, compile};

/// Arguments of `wasm-hooks build`.
#[derive(Debug, Args)]
pub(crate) struct BuildArgs {
    /// The plugin's folder: a Rust crate (`Cargo.toml`), a Python plugin
    /// (`app.py`) or a JavaScript one (`app.js`).
    #[arg(value_name = "DIR", default_value = ".")]
    dir: PathBuf,

    /// Build a Rust plugin in debug mode instead of release.
    #[arg(long)]
    debug: bool,

    /// Let a Python plugin's `[project] dependencies` name a local path, a
    /// URL or a VCS checkout (by default only requirements from the
    /// package index are taken, as pure-Python wheels): such a dependency
    /// is built by its own build backend, which runs on this machine with
    /// your rights.
    #[arg(long)]
    allow_local_dependencies: bool,

    /// Where toolchains are installed (componentize-py, componentize-js):
    /// the compile cache's directory.
    #[command(flatten)]
    cache: CacheArgs,
}

pub(crate) fn run(args: BuildArgs) -> anyhow::Result<Exit> {
    let schema = config_schema(&args.dir)?.is_some();
    let components = components(
        &args.dir,
        !args.debug,
        &args.cache,
        args.allow_local_dependencies,
    )?;
    for path in &components {
        let info = PluginInfo::read(path)?;
        println!("{}", path.display());
        println!("  size:   {} bytes", info.size);
        println!("  sha256: {}", info.sha256);
        let world = if info.wit.is_empty() {
            "no wasm-hooks stamp (not built with the guest SDK)".to_owned()
        } else {
            info.wit.join(", ")
        };
        println!("  world:  {world}");
        if schema {
            println!(
                "  config: checked at load against {CONFIG_SCHEMA} (carried in the component)"
            );
        }
    }
    let runtime = compile::ahead_runtime(&args.cache)?;
    let failures = compile::plugins_ahead(&runtime, components.iter().map(|p| (p.as_path(), None)));
    if let Some(failure) = failures.first() {
        bail!("{failure}");
    }
    Ok(Exit::GoOn)
}

/// Build the plugin in `dir` (a release build of a Rust one unless
/// `release` is false; a Python one's dependencies from the package index
/// only unless `local_dependencies`), its config schema embedded; the
/// components' paths.
pub(crate) fn components(
    dir: &Path,
    release: bool,
    cache: &CacheArgs,
    local_dependencies: bool,
) -> anyhow::Result<Vec<PathBuf>> {
    // Absolute: the tools run elsewhere, and esbuild takes a bare relative
    // path for a package name.
    let dir = &std::path::absolute(dir)?;
    let components = if dir.join("Cargo.toml").is_file() {
        rust::build(&dir.join("Cargo.toml"), release)?
    } else if dir.join(python::APP).is_file() {
        let sdk: Vec<&str> = python::SDK.iter().map(|(_, text)| *text).collect();
        let toolchain = format!(
            "componentize-py {}, dependencies from PyPI only, recipe {}",
            python::COMPONENTIZE_PY,
            inputs::recipe(&sdk)
        );
        let from = BuiltFrom::Sources;
        let build = |dir: &Path, cache: &Path, name: &str| {
            python::build(dir, cache, name, local_dependencies)
        };
        vec![cached_build(
            dir,
            &cache.dir()?,
            (from, &toolchain),
            &build,
        )?]
    } else if let Some(app) = js::app(dir) {
        let toolchain = format!(
            "componentize-js {} + esbuild {}",
            js::COMPONENTIZE_JS,
            js::ESBUILD
        );
        js::require_installed_dependencies(dir)?;
        js::ensure_sdk(dir)?;
        let cache = cache.dir()?;
        let bundle = js::bundle(dir, app, &cache)?;
        let from = BuiltFrom::Bundle(&bundle);
        vec![cached_build(dir, &cache, (from, &toolchain), &js::build)?]
    } else {
        bail!(
            "{} is not a plugin folder: a Rust plugin has a Cargo.toml, a Python one an {}, a JavaScript or TypeScript one an {} (`wasm-hooks new --lang rust|python|js|ts NAME` makes one)",
            dir.display(),
            python::APP,
            js::APPS.join(" or "),
        );
    };
    if let Some(schema) = config_schema(dir)? {
        for path in &components {
            let mut bytes = std::fs::read(path)?;
            wasm_hooks::cli_support::embed_config_schema(&mut bytes, &schema);
            write::replace_file(path, &bytes)?;
        }
    }
    Ok(components)
}

/// The file a plugin folder declares its `config`'s JSON Schema in.
const CONFIG_SCHEMA: &str = "config.schema.json";

/// The plugin's config schema, if its folder has one: checked to be a JSON
/// Schema, as compact JSON.
fn config_schema(dir: &Path) -> anyhow::Result<Option<String>> {
    let path = dir.join(CONFIG_SCHEMA);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let schema = wasm_hooks::schema::check_config_schema(&text)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    Ok(Some(schema))
}

/// What keys a cached build.
enum BuiltFrom<'a> {
    /// The plugin folder's sources ([`inputs::sources`]).
    Sources,
    /// The bundle of everything the plugin imports (JavaScript: [`js::bundle`]).
    Bundle(&'a Path),
}

/// A Python or JavaScript plugin's component, built by `build` (stamped
/// with the newest WIT world) or, when these exact sources (for
/// JavaScript, this exact bundle) were built before with this toolchain
/// and SDK, that build again: componentize-py
/// and componentize-js write other bytes on every run (their snapshots
/// hold the random seeds and clocks of the run), and a rebuild of
/// unchanged sources must not change the sha256 a hook file, a lock or
/// trust pinned.
fn cached_build(
    dir: &Path,
    cache: &Path,
    (from, toolchain): (BuiltFrom<'_>, &str),
    build: &dyn Fn(&Path, &Path, &str) -> anyhow::Result<PathBuf>,
) -> anyhow::Result<PathBuf> {
    let name = name(dir)?;
    let label = format!("{toolchain}, SDK {}, {name}", env!("CARGO_PKG_VERSION"));
    let key = match from {
        BuiltFrom::Sources => inputs::digest(dir, &label),
        BuiltFrom::Bundle(bundle) => inputs::digest_of_file(bundle, &label),
    }
    .with_context(|| format!("reading the sources of {}", dir.display()))?;
    let builds = cache.join("builds");
    std::fs::create_dir_all(&builds)?;
    // The same sources built at once elsewhere: this one waits for that
    // build and takes it.
    let _building = toolchain::locked(&builds.join(format!("{key}.lock")))?;
    let kept = builds.join(format!("{key}.wasm"));
    let out = dir.join("build").join(format!("{name}.wasm"));
    if let Ok(bytes) = std::fs::read(&kept) {
        write::plain_dir(&dir.join("build"))?;
        write::remove_symlink(&out)?;
        write::replace_file(&out, &bytes)?;
        eprintln!(
            "wasm-hooks: these sources were built before with {toolchain}: the same component again (a new run of {toolchain} would write other bytes)"
        );
        return Ok(out);
    }
    let built = stamped(build(dir, cache, &name)?)?;
    write::replace_file(&kept, &std::fs::read(&built)?)?;
    Ok(built)
}

/// A Python or JavaScript plugin's component name, `-` as `_`: the name
/// its manifest gives (`pyproject.toml`'s `[project] name`,
/// `package.json`'s `name`, without an npm scope), else its folder's.
pub(crate) fn name(dir: &Path) -> anyhow::Result<String> {
    let from_manifest = manifest_name(dir)?;
    let name = match from_manifest {
        Some(name) => name,
        None => std::path::absolute(dir)?
            .file_name()
            .map_or_else(|| "plugin".to_owned(), |n| n.to_string_lossy().into_owned()),
    };
    Ok(name.replace('-', "_"))
}

/// The name in the plugin's `pyproject.toml` or `package.json`, if it has
/// one.
fn manifest_name(dir: &Path) -> anyhow::Result<Option<String>> {
    let pyproject = dir.join("pyproject.toml");
    let package = dir.join("package.json");
    let (path, name) = if pyproject.is_file() {
        let text = std::fs::read_to_string(&pyproject)?;
        let doc: toml::Table =
            toml::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", pyproject.display()))?;
        let name = doc
            .get("project")
            .and_then(|p| p.get("name"))
            .and_then(|n| n.as_str())
            .map(str::to_owned);
        (pyproject, name)
    } else if package.is_file() {
        let text = std::fs::read_to_string(&package)?;
        let doc: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| anyhow::anyhow!("{}: {e}", package.display()))?;
        let name = doc["name"]
            .as_str()
            .map(|n| n.rsplit('/').next().unwrap_or(n).to_owned());
        (package, name)
    } else {
        return Ok(None);
    };
    match name {
        Some(name)
            if !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.') =>
        {
            Ok(Some(name.replace('.', "_")))
        }
        Some(name) => bail!(
            "{}: the name `{name}` cannot name a component (letters, digits, `-`, `_` and `.` only)",
            path.display()
        ),
        None => bail!(
            "{}: no name (the component is named after it: `{}`)",
            path.display(),
            if path.ends_with("pyproject.toml") {
                "[project] name = \"my-guard\""
            } else {
                "\"name\": \"my-guard\""
            }
        ),
    }
}

/// `component` stamped with the newest WIT world; its path.
fn stamped(component: PathBuf) -> anyhow::Result<PathBuf> {
    let mut bytes = std::fs::read(&component)?;
    wasm_hooks::cli_support::stamp_wit(&mut bytes, wasm_hooks::cli_support::WIT_PACKAGE);
    write::replace_file(&component, &bytes)?;
    Ok(component)
}
