//! `wasm-hooks build [DIR]`: build a plugin, whatever its language — a
//! Rust crate (`Cargo.toml`: cargo for wasm32-wasip2), a Python one
//! (`app.py`: componentize-py) or a JavaScript one (`app.js`:
//! componentize-js) — installing the toolchain it needs and saying what it
//! installs, then print each component's path, size, sha256 and WIT world.
//! Python and JavaScript components are stamped with their world, as the
//! Rust SDK stamps its plugins. Nothing is written through a symbolic
//! link in the plugin's folder (see `write`).

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
use wasm_hooks::PluginInfo;

use super::Exit;
use super::hook_files::CacheArgs;

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

    /// Where toolchains are installed (componentize-py, componentize-js):
    /// the compile cache's directory.
    #[command(flatten)]
    cache: CacheArgs,
}

pub(crate) fn run(args: BuildArgs) -> anyhow::Result<Exit> {
    let schema = config_schema(&args.dir)?.is_some();
    for path in components(&args.dir, !args.debug, &args.cache)? {
        let info = PluginInfo::read(&path)?;
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
    Ok(Exit::GoOn)
}

/// Build the plugin in `dir` (a release build of a Rust one unless
/// `release` is false), its config schema embedded; the components' paths.
pub(crate) fn components(
    dir: &Path,
    release: bool,
    cache: &CacheArgs,
) -> anyhow::Result<Vec<PathBuf>> {
    let components = if dir.join("Cargo.toml").is_file() {
        rust::build(&dir.join("Cargo.toml"), release)?
    } else if dir.join(python::APP).is_file() {
        vec![stamped(python::build(dir, &cache.dir()?, &name(dir)?)?)?]
    } else if dir.join(js::APP).is_file() {
        vec![stamped(js::build(dir, &cache.dir()?, &name(dir)?)?)?]
    } else {
        bail!(
            "{} is not a plugin folder: a Rust plugin has a Cargo.toml, a Python one an {}, a JavaScript one an {} (`wasm-hooks new --lang rust|python|js NAME` makes one)",
            dir.display(),
            python::APP,
            js::APP
        );
    };
    if let Some(schema) = config_schema(dir)? {
        for path in &components {
            let mut bytes = std::fs::read(path)?;
            wasm_hooks::embed_config_schema(&mut bytes, &schema);
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
    let schema = wasm_hooks::check_config_schema(&text)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    Ok(Some(schema))
}

/// A plugin's component name: its folder's, `-` as `_`.
fn name(dir: &Path) -> anyhow::Result<String> {
    Ok(std::path::absolute(dir)?.file_name().map_or_else(
        || "plugin".to_owned(),
        |n| n.to_string_lossy().replace('-', "_"),
    ))
}

/// `component` stamped with the newest WIT world; its path.
fn stamped(component: PathBuf) -> anyhow::Result<PathBuf> {
    let mut bytes = std::fs::read(&component)?;
    wasm_hooks::stamp_wit(&mut bytes, wasm_hooks::WIT_PACKAGE);
    write::replace_file(&component, &bytes)?;
    Ok(component)
}
