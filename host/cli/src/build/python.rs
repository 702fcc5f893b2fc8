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
//! build. A wheel installs without running any of its code; a local path,
//! a URL or a VCS checkout would be built by its own build backend, with
//! the person's rights, so such a requirement is refused unless the person
//! passes `--allow-local-dependencies` (and is told what then runs); pip
//! runs isolated from the environment's `PIP_*` variables and config
//! files, which a repository could set.

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

/// Build the plugin in `dir` into `dir/build/<name>.wasm` (its
/// dependencies from the package index only unless `local_dependencies`);
/// its path.
pub(super) fn build(
    dir: &Path,
    cache: &Path,
    name: &str,
    local_dependencies: bool,
) -> anyhow::Result<PathBuf> {
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
    let deps = fetch_dependencies(dir, &build, &componentize, local_dependencies)?;
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
fn fetch_dependencies(
    dir: &Path,
    build: &Path,
    componentize: &Path,
    local_dependencies: bool,
) -> anyhow::Result<PathBuf> {
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
    // A requirement is a name and versions from PyPI: never a pip option
    // (a cloned repository's `--log=~/.bashrc`); a URL, a path or a VCS
    // checkout only when the person says so.
    if let Some(bad) = wanted.iter().find(|w| w.starts_with('-')) {
        bail!(
            "{}: `[project] dependencies`: `{bad}` is not a requirement (a name and versions, as `bashlex>=0.18`)",
            dir.join("pyproject.toml").display()
        );
    }
    let built_here: Vec<&String> = wanted.iter().filter(|w| !from_the_index(w)).collect();
    if let Some(bad) = built_here.first()
        && !local_dependencies
    {
        bail!(
            "{}: `[project] dependencies`: `{bad}` is not a requirement from PyPI (a name and versions, as `bashlex>=0.18`): a local path, URL or VCS checkout is built by its own build backend, which would run on this machine with your rights; `wasm-hooks build --allow-local-dependencies` takes it if you trust it",
            dir.join("pyproject.toml").display()
        );
    }
    for local in &built_here {
        eprintln!(
            "wasm-hooks: `{local}` is not from the package index: its build backend runs on this machine with your rights (--allow-local-dependencies)"
        );
    }
    let pip = componentize.with_file_name("pip");
    eprintln!(
        "wasm-hooks: fetching {} from PyPI (pure-Python wheels)",
        wanted.join(", ")
    );
    let out = Command::new(pip)
        .args([
            "--isolated",
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

/// Whether `requirement` names a distribution of the package index: a
/// name, optional extras, version specifiers and an environment marker
/// (PEP 508), nothing that points anywhere else (`name @ url`, a path,
/// `file:`, `git+`).
fn from_the_index(requirement: &str) -> bool {
    static PEP_508: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        let name = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?";
        let extras = r"(?:\[\s*[A-Za-z0-9._-]+(?:\s*,\s*[A-Za-z0-9._-]+)*\s*\])?";
        let version = r"(?:~=|===|==|!=|<=|>=|<|>)\s*[A-Za-z0-9.*+!_-]+";
        let versions = format!(r"(?:\(?\s*{version}(?:\s*,\s*{version})*\s*\)?)?");
        let marker = r#"(?:;[A-Za-z0-9_.\s'"<>=!~()-]*)?"#;
        regex::Regex::new(&format!(r"^\s*{name}\s*{extras}\s*{versions}\s*{marker}$"))
            .expect("a valid pattern")
    });
    PEP_508.is_match(requirement)
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

#[cfg(test)]
mod tests {
    use super::from_the_index;

    #[test]
    fn only_requirements_from_the_index_are_taken_without_asking() {
        for ok in [
            "sqlparse==0.6.1",
            "bashlex>=0.18",
            "requests[socks] >=2, <3",
            "attrs",
            "tomli; python_version < '3.11'",
        ] {
            assert!(from_the_index(ok), "{ok}");
        }
        for built_here in [
            "./evilpkg",
            "evilpkg @ file:///tmp/evilpkg",
            "file:///tmp/evilpkg",
            "git+https://example.com/evil.git",
            "/abs/path/pkg",
            "pkg @ https://example.com/pkg.tar.gz",
            "../up",
        ] {
            assert!(!from_the_index(built_here), "{built_here}");
        }
    }
}
