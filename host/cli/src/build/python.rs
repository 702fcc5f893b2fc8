//! Building a Python plugin: componentize-py (installed once from PyPI into
//! a venv under the cache directory) turns the folder's `app.py`, with the
//! wasm-hooks Python SDK, into a component of the newest WIT world.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::toolchain::{installed, run, wit_dir, write_files};
use super::write::{plain_dir, remove_symlink};

/// The module a Python plugin's `Handler` class lives in.
pub(crate) const APP: &str = "app.py";

/// The componentize-py release plugins are built with.
pub(super) const COMPONENTIZE_PY: &str = "0.25.1";

/// The Python SDK's files (package `wasm_hooks`), as `new --lang python`
/// writes them into a plugin and `build` uses them when a plugin has none.
pub(crate) const SDK: &[(&str, &str)] = &[
    (
        "__init__.py",
        include_str!("../../../../guest-sdk/python/wasm_hooks/__init__.py"),
    ),
    (
        "_host.py",
        include_str!("../../../../guest-sdk/python/wasm_hooks/_host.py"),
    ),
    (
        "_wit.py",
        include_str!("../../../../guest-sdk/python/wasm_hooks/_wit.py"),
    ),
    (
        "testing.py",
        include_str!("../../../../guest-sdk/python/wasm_hooks/testing.py"),
    ),
];

/// Build the plugin in `dir` into `dir/build/<name>.wasm`; its path.
pub(super) fn build(dir: &Path, cache: &Path, name: &str) -> anyhow::Result<PathBuf> {
    let componentize = toolchain(cache)?;
    let wit = wit_dir(cache)?;
    let mut command = Command::new(componentize);
    command
        .arg("-d")
        .arg(&wit)
        .args(["-w", "hook", "componentize", "-p"]);
    command.arg(dir);
    // The plugin's own copy of the SDK (from `new`) wins; else this build's.
    if !dir.join("wasm_hooks/__init__.py").is_file() {
        let sdk = cache.join(format!("sdk/python/{}", env!("CARGO_PKG_VERSION")));
        write_files(&sdk.join("wasm_hooks"), SDK)?;
        command.arg("-p").arg(sdk);
    }
    let build = dir.join("build");
    plain_dir(&build)?;
    let out = build.join(format!("{name}.wasm"));
    remove_symlink(&out)?;
    command.arg("app").arg("-o").arg(&out);
    run(&mut command, "componentize-py (its messages are above)")?;
    Ok(out)
}

/// The componentize-py program, installed into a venv under the cache
/// directory first if it is not there.
fn toolchain(cache: &Path) -> anyhow::Result<PathBuf> {
    installed(
        &cache.join(format!("toolchains/componentize-py-{COMPONENTIZE_PY}")),
        "bin/componentize-py",
        &format!("componentize-py {COMPONENTIZE_PY} from PyPI"),
        |venv| {
            let python = std::env::var_os("WASM_HOOKS_PYTHON").unwrap_or_else(|| "python3".into());
            run(
                Command::new(&python).arg("-m").arg("venv").arg(venv),
                "making a Python venv (is python3 installed?)",
            )?;
            run(
                Command::new(venv.join("bin/pip")).args([
                    "install",
                    "--quiet",
                    &format!("componentize-py=={COMPONENTIZE_PY}"),
                ]),
                "installing componentize-py with pip",
            )
        },
    )
}
