//! What a plugin file is, read without compiling it: its size and sha256,
//! the WIT package the SDK stamped into it, what it imports and exports, and
//! so which capabilities it could even ask for.

use std::path::{Path, PathBuf};

use serde::Serialize;
use wasmparser::{Parser, Payload};

use super::abi;
use super::world;
use wasm_hooks_core::Error;
use wasm_hooks_core::sha256_hex;

/// A plugin file, described.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PluginInfo {
    /// The file.
    pub path: PathBuf,
    /// Its size in bytes.
    pub size: u64,
    /// Its sha256, hex.
    pub sha256: String,
    /// The WIT packages stamped into it by the guest SDK (none for a
    /// component built without the SDK).
    pub wit: Vec<String>,
    /// Whether every stamp is one this host can run.
    pub compatible: bool,
    /// The component's imports, by name.
    pub imports: Vec<String>,
    /// The component's exports, by name.
    pub exports: Vec<String>,
    /// The JSON Schema of its `config` it carries, if any (the text, as a
    /// string, if it is not JSON).
    pub config_schema: Option<serde_json::Value>,
}

impl PluginInfo {
    /// Read the plugin at `path`.
    ///
    /// # Errors
    /// [`Error::Plugin`] when the file cannot be read, is not a component,
    /// or is malformed.
    pub fn read(path: &Path) -> Result<Self, Error> {
        let fail = |message: String| Error::Plugin {
            path: path.to_owned(),
            message,
        };
        let bytes = std::fs::read(path).map_err(|e| fail(format!("cannot read it: {e}")))?;
        abi::require_component(&bytes).map_err(fail)?;
        let sections =
            abi::sections(&bytes).map_err(|e| fail(format!("malformed component: {e}")))?;
        let wit = sections.wit_stamps;
        let (imports, exports) =
            outer_names(&bytes).map_err(|e| fail(format!("malformed component: {e}")))?;
        Ok(Self {
            path: path.to_owned(),
            size: bytes.len() as u64,
            sha256: sha256_hex(&bytes),
            compatible: wit.iter().all(|s| world::served(s)),
            wit,
            imports,
            exports,
            config_schema: sections
                .config_schema
                .map(|text| serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text))),
        })
    }

    /// What the imports let the plugin ask for, one line each; an import
    /// this host does not provide is named as such.
    pub fn capabilities(&self) -> Vec<String> {
        let mut found: Vec<String> = Vec::new();
        for import in &self.imports {
            let what = CAPABILITIES
                .iter()
                .find(|(prefix, _)| import.starts_with(prefix))
                .map_or_else(
                    || format!("`{import}`: not provided by this host, the plugin cannot load"),
                    |(_, what)| (*what).to_owned(),
                );
            if !found.contains(&what) {
                found.push(what);
            }
        }
        found
    }
}

/// Import prefixes and what they give a plugin on this host.
const CAPABILITIES: &[(&str, &str)] = &[
    (
        "wasm-hooks:hook/host",
        "host: log lines and its hook's config",
    ),
    (
        "wasi:filesystem/",
        "files: only directories granted by allow_read / allow_write",
    ),
    (
        "wasi:cli/environment",
        "environment: only variables granted by env",
    ),
    ("wasi:sockets/", "network: always refused in this version"),
    (
        "wasi:cli/std",
        "stdio: empty stdin, stdout and stderr captured",
    ),
    ("wasi:cli/terminal", "stdio: never a terminal"),
    ("wasi:cli/exit", "exit: ends the call as a failure"),
    (
        "wasm-hooks:hook/types",
        "types: shared definitions, nothing to call",
    ),
    (
        "wasm-hooks:hook/kv",
        "kv: a small store of its own per session, kept by the host (WIT 0.1.1 and later)",
    ),
    ("wasi:clocks/", "clocks"),
    ("wasi:random/", "random numbers"),
    ("wasi:io/", "streams (for stdio and files)"),
];

/// The names the outermost component imports and exports (not those of
/// the modules and components nested in it).
fn outer_names(bytes: &[u8]) -> Result<(Vec<String>, Vec<String>), wasmparser::BinaryReaderError> {
    let (mut imports, mut exports) = (Vec::new(), Vec::new());
    let mut depth = 0usize;
    for payload in Parser::new(0).parse_all(bytes) {
        match payload? {
            Payload::ModuleSection { .. } | Payload::ComponentSection { .. } => depth += 1,
            Payload::End(_) => depth = depth.saturating_sub(1),
            Payload::ComponentImportSection(reader) if depth == 0 => {
                for import in reader {
                    imports.push(import?.name.name.to_owned());
                }
            }
            Payload::ComponentExportSection(reader) if depth == 0 => {
                for export in reader {
                    exports.push(export?.name.name.to_owned());
                }
            }
            _ => {}
        }
    }
    Ok((imports, exports))
}
