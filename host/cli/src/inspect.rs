//! `wasm-hooks inspect`: what a plugin file is, without running it.

use std::fmt::Write as _;
use std::path::PathBuf;

use clap::Args;
use serde::Serialize;
use wasm_hooks::cli_support::PluginInfo;
use wasm_hooks::cli_support::WIT_PACKAGE;

use super::hook_files::CacheArgs;
use super::{Exit, report};

/// Arguments of `wasm-hooks inspect`.
#[derive(Debug, Args)]
pub(crate) struct InspectArgs {
    /// Plugin components (.wasm) to describe.
    #[arg(required = true, value_name = "PLUGIN")]
    plugins: Vec<PathBuf>,

    #[command(flatten)]
    cache: CacheArgs,

    /// Print JSON, one object per plugin in a list.
    #[arg(long)]
    json: bool,
}

/// One plugin's description, with the capabilities and the cache entry.
#[derive(Serialize)]
struct Described {
    #[serde(flatten)]
    info: PluginInfo,
    capabilities: Vec<String>,
    cached: Option<PathBuf>,
}

pub(crate) fn run(args: InspectArgs) -> anyhow::Result<Exit> {
    let runtime = args.cache.runtime_options().build()?;
    let mut described = Vec::new();
    let mut failed = false;
    for path in &args.plugins {
        match PluginInfo::read(path) {
            Ok(info) => {
                let cached = runtime
                    .cache_entry(&info.sha256)
                    .filter(|entry| entry.exists());
                described.push(Described {
                    capabilities: info.capabilities(),
                    info,
                    cached,
                });
            }
            Err(e) => {
                failed = true;
                eprintln!("wasm-hooks: {e}");
            }
        }
    }
    if args.json {
        report::print(&(serde_json::to_string_pretty(&described)? + "\n"))?;
    } else {
        report::print(&described.iter().map(human).collect::<Vec<_>>().join("\n"))?;
    }
    Ok(if failed { Exit::Failed } else { Exit::GoOn })
}

fn human(d: &Described) -> String {
    let info = &d.info;
    let mut out = format!("{}\n", info.path.display());
    let _ = writeln!(out, "  size:    {} bytes", info.size);
    let _ = writeln!(out, "  sha256:  {}", info.sha256);
    let world = if info.wit.is_empty() {
        "no wasm-hooks stamp (not built with the guest SDK)".to_owned()
    } else if info.compatible {
        format!("{} (this host runs {WIT_PACKAGE})", info.wit.join(", "))
    } else {
        format!(
            "{} — NOT compatible with this host's {WIT_PACKAGE}",
            info.wit.join(", ")
        )
    };
    let _ = writeln!(out, "  world:   {world}");
    let _ = writeln!(out, "  exports: {}", info.exports.join(", "));
    let _ = writeln!(out, "  imports:");
    for import in &info.imports {
        let _ = writeln!(out, "    {import}");
    }
    match &info.config_schema {
        Some(schema) => {
            let text = serde_json::to_string_pretty(schema).unwrap_or_default();
            let _ = writeln!(out, "  config schema:");
            for line in text.lines() {
                let _ = writeln!(out, "    {line}");
            }
        }
        None => {
            let _ = writeln!(
                out,
                "  config schema: none (its `config` is not checked at load)"
            );
        }
    }
    let _ = writeln!(out, "  can ask for:");
    for capability in &d.capabilities {
        let _ = writeln!(out, "    {capability}");
    }
    let _ = writeln!(
        out,
        "  compiled: {}",
        d.cached.as_ref().map_or_else(
            || "not in the compile cache".to_owned(),
            |entry| format!("cached at {}", entry.display())
        )
    );
    out
}
