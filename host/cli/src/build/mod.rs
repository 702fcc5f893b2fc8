//! `wasm-hooks build [DIR]`: build a plugin, whatever its language — a
//! Rust crate (`Cargo.toml`: cargo for wasm32-wasip2) or a Python one
//! (`app.py`: componentize-py) — installing the toolchain it needs and
//! saying what it installs, then print each component's path, size,
//! sha256 and WIT world.

mod python;
mod rust;

pub(crate) use python::SDK as PYTHON_SDK;

use std::path::PathBuf;

use anyhow::bail;
use clap::Args;
use wasm_hooks::PluginInfo;

use super::Exit;
use super::hook_files::CacheArgs;

/// Arguments of `wasm-hooks build`.
#[derive(Debug, Args)]
pub(crate) struct BuildArgs {
    /// The plugin's folder: a Rust crate (`Cargo.toml`) or a Python plugin
    /// (`app.py`).
    #[arg(value_name = "DIR", default_value = ".")]
    dir: PathBuf,

    /// Build a Rust plugin in debug mode instead of release.
    #[arg(long)]
    debug: bool,

    /// Where toolchains are installed (componentize-py): the compile
    /// cache's directory.
    #[command(flatten)]
    cache: CacheArgs,
}

pub(crate) fn run(args: BuildArgs) -> anyhow::Result<Exit> {
    let components = if args.dir.join("Cargo.toml").is_file() {
        rust::build(&args.dir.join("Cargo.toml"), !args.debug)?
    } else if args.dir.join(python::APP).is_file() {
        vec![python::build(&args.dir, &args.cache.dir()?)?]
    } else {
        bail!(
            "{} is not a plugin folder: a Rust plugin has a Cargo.toml, a Python one an {} (`wasm-hooks new --lang rust|python NAME` makes one)",
            args.dir.display(),
            python::APP
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
