//! `wasm-hooks build [DIR]`: build a plugin, whatever its language — a
//! Rust crate (`Cargo.toml`: cargo for wasm32-wasip2), a Python one
//! (`app.py`: componentize-py) or a JavaScript one (`app.js`:
//! componentize-js) — installing the toolchain it needs and saying what it
//! installs, then print each component's path, size, sha256 and WIT world.
//! Python and JavaScript components are stamped with their world, as the
//! Rust SDK stamps its plugins.

mod js;
mod python;
mod rust;
mod toolchain;

pub(crate) use js::SDK as JS_SDK;
pub(crate) use python::SDK as PYTHON_SDK;

use std::path::{Path, PathBuf};

use anyhow::bail;
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
    let dir = &args.dir;
    let components = if dir.join("Cargo.toml").is_file() {
        rust::build(&dir.join("Cargo.toml"), !args.debug)?
    } else if dir.join(python::APP).is_file() {
        vec![stamped(python::build(
            dir,
            &args.cache.dir()?,
            &name(dir)?,
        )?)?]
    } else if dir.join(js::APP).is_file() {
        vec![stamped(js::build(dir, &args.cache.dir()?, &name(dir)?)?)?]
    } else {
        bail!(
            "{} is not a plugin folder: a Rust plugin has a Cargo.toml, a Python one an {}, a JavaScript one an {} (`wasm-hooks new --lang rust|python|js NAME` makes one)",
            dir.display(),
            python::APP,
            js::APP
        );
    };
    for path in components {
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
    }
    Ok(Exit::GoOn)
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
    std::fs::write(&component, bytes)?;
    Ok(component)
}
