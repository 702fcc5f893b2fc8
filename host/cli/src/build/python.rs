//! Building a Python plugin: componentize-py (installed once from PyPI into
//! a venv under the cache directory) turns the folder's `app.py`, with the
//! wasm-hooks Python SDK and the dependencies its `pyproject.toml` names,
//! into a component of the newest WIT world.
//!
//! The dependencies are fetched from PyPI into `build/python-deps/` as
//! pure-Python wheels only (a package with native code cannot run in a
//! component, and is refused by name), and componentize-py is pointed at
//! that folder alone: left to itself it would also bundle whatever the
//! machine's Python has installed, and a teammate without it could not
//! build.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, bail};

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
    let mut command = Command::new(&componentize);
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
    let deps = fetch_dependencies(dir, &build, &componentize)?;
    command.env("VIRTUAL_ENV", deps);
    let out = build.join(format!("{name}.wasm"));
    remove_symlink(&out)?;
    command.arg("app").arg("-o").arg(&out);
    run(
        &mut command,
        "componentize-py (its messages are above; for a `ModuleNotFoundError` of a package from PyPI, name it in pyproject.toml's `[project] dependencies`)",
    )?;
    Ok(out)
}

/// The dependencies of `pyproject.toml`'s `[project] dependencies`,
/// installed into `build/python-deps/lib/python/site-packages` (made anew) as
/// pure-Python wheels from PyPI, with the pip of componentize-py's venv;
/// that folder.
fn fetch_dependencies(dir: &Path, build: &Path, componentize: &Path) -> anyhow::Result<PathBuf> {
    let deps = std::path::absolute(build.join("python-deps"))?;
    if deps.exists() {
        std::fs::remove_dir_all(&deps).with_context(|| format!("emptying {}", deps.display()))?;
    }
    // Where componentize-py looks in a venv (`$VIRTUAL_ENV/lib/*/site-packages`).
    let site = deps.join("lib/python/site-packages");
    std::fs::create_dir_all(&site).with_context(|| format!("creating {}", site.display()))?;
    let wanted = declared_dependencies(dir)?;
    if wanted.is_empty() {
        return Ok(deps);
    }
    // A requirement is a name and versions from PyPI: not a pip option (a
    // cloned repository's `--log=~/.bashrc`), not a URL or path (`@`).
    if let Some(bad) = wanted
        .iter()
        .find(|w| w.starts_with('-') || w.contains('@'))
    {
        bail!(
            "{}: `[project] dependencies`: `{bad}` is not a requirement from PyPI (a name and versions, as `bashlex>=0.18`)",
            dir.join("pyproject.toml").display()
        );
    }
    let pip = componentize.with_file_name("pip");
    eprintln!(
        "wasm-hooks: fetching {} from PyPI (pure-Python wheels)",
        wanted.join(", ")
    );
    let out = Command::new(pip)
        .args([
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--target",
        ])
        .arg(&site)
        .args([
            "--only-binary=:all:",
            "--platform",
            "any",
            "--implementation",
            "py",
            "--abi",
            "none",
            "--",
        ])
        .args(&wanted)
        .output()
        .context("running pip")?;
    if out.status.success() {
        return Ok(deps);
    }
    let said = String::from_utf8_lossy(&out.stderr);
    if let Some(name) = said
        .lines()
        .find_map(|l| l.split("No matching distribution found for ").nth(1))
    {
        bail!(
            "{}: `[project] dependencies`: `{}`: no pure-Python wheel found on PyPI (a package with native code, which cannot run in a component; or a misspelt name, or no network)",
            dir.join("pyproject.toml").display(),
            name.trim()
        );
    }
    bail!("pip could not fetch {}: {}", wanted.join(", "), said.trim());
}

/// `[project] dependencies` of the plugin's `pyproject.toml` (none without
/// one).
fn declared_dependencies(dir: &Path) -> anyhow::Result<Vec<String>> {
    let path = dir.join("pyproject.toml");
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let doc: toml::Table =
        toml::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let Some(list) = doc.get("project").and_then(|p| p.get("dependencies")) else {
        return Ok(Vec::new());
    };
    let list = list.as_array().with_context(|| {
        format!(
            "{}: `[project] dependencies` must be a list of requirements",
            path.display()
        )
    })?;
    list.iter()
        .map(|d| {
            d.as_str().map(str::to_owned).with_context(|| {
                format!(
                    "{}: `[project] dependencies`: `{d}` is not a requirement string",
                    path.display()
                )
            })
        })
        .collect()
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
