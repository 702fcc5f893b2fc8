//! Building a JavaScript plugin: componentize-js (installed once from npm
//! into a folder under the cache directory) turns an entry module that
//! binds the folder's `app.js` (its default export, a `Hook` class) to the
//! host's imports into a component of the newest WIT world, with no
//! `wasi:http` import; it is then stamped with that world.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::toolchain::{installed, run, wit_dir, write_files};
use super::write::remove_symlink;

/// The module a JavaScript plugin's hook class is the default export of.
pub(crate) const APP: &str = "app.js";

/// The componentize-js release plugins are built with.
pub(super) const COMPONENTIZE_JS: &str = "0.23.0";

/// The JavaScript SDK's files (`wasm_hooks/`), as `new --lang js` writes
/// them into a plugin and `build` does when a plugin has none.
pub(crate) const SDK: &[(&str, &str)] = &[
    (
        "index.js",
        include_str!("../../../../guest-sdk/js/wasm_hooks/index.js"),
    ),
    (
        "index.d.ts",
        include_str!("../../../../guest-sdk/js/wasm_hooks/index.d.ts"),
    ),
    (
        "testing.js",
        include_str!("../../../../guest-sdk/js/wasm_hooks/testing.js"),
    ),
];

/// The module componentized: the host's imports given to the SDK, and the
/// plugin's class exported as the WIT `handler`.
const ENTRY: &str = "\
import * as host from 'wasm-hooks:hook/host@0.2.0';
import * as kv from 'wasm-hooks:hook/kv@0.2.0';
import { HookError, exportHook, setHost } from '../wasm_hooks/index.js';
import Handler from '../app.js';

setHost({
  config: () => host.config(),
  log: (level, message) => host.log(level, message),
  kvGet: (key) => kv.get(key),
  kvSet: (key, value) => {
    try {
      kv.set(key, value);
    } catch (e) {
      throw new HookError(`kv.set(${key}) refused: ${e?.payload ?? e}`);
    }
  },
});

export const handler = exportHook(Handler);
";

/// Build the plugin in `dir` into `dir/build/<folder name>.wasm` (`-` as
/// `_`); its path.
pub(super) fn build(dir: &Path, cache: &Path, name: &str) -> anyhow::Result<PathBuf> {
    let componentize = toolchain(cache)?;
    let wit = wit_dir(cache)?;
    let build = write_files(&dir.join("build"), &[("entry.js", ENTRY)])?;
    let out = build.join(format!("{name}.wasm"));
    remove_symlink(&out)?;
    run(
        Command::new(componentize)
            .arg(build.join("entry.js"))
            .arg("-w")
            .arg(&wit)
            .args(["-n", "hook", "-d", "http", "fetch-event", "-o"])
            .arg(&out),
        "componentize-js (its messages are above)",
    )?;
    Ok(out)
}

/// Write the SDK into the plugin (`wasm_hooks/`) when it has none: its
/// `app.js` imports it from there.
pub(super) fn ensure_sdk(dir: &Path) -> anyhow::Result<()> {
    if !dir.join("wasm_hooks/index.js").is_file() {
        eprintln!(
            "wasm-hooks: {} has no wasm_hooks/: writing the SDK {} there",
            dir.display(),
            env!("CARGO_PKG_VERSION")
        );
        write_files(&dir.join("wasm_hooks"), SDK)?;
    }
    Ok(())
}

/// The componentize-js program, installed with npm into a folder under the
/// cache directory first if it is not there.
fn toolchain(cache: &Path) -> anyhow::Result<PathBuf> {
    installed(
        &cache.join(format!("toolchains/componentize-js-{COMPONENTIZE_JS}")),
        "node_modules/.bin/componentize-js",
        &format!("componentize-js {COMPONENTIZE_JS} from npm (about 400 MB)"),
        |prefix| {
            run(
                Command::new("npm")
                    .args(["install", "--silent", "--no-audit", "--no-fund", "--prefix"])
                    .arg(prefix)
                    .arg(format!(
                        "@bytecodealliance/componentize-js@{COMPONENTIZE_JS}"
                    )),
                "installing componentize-js with npm (is Node.js installed?)",
            )
        },
    )
}
