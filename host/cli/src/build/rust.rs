//! Building a Rust plugin crate: cargo for wasm32-wasip2, installing the
//! target with rustup if it is missing (and saying so), then copying each
//! component to `build/` beside `Cargo.toml`, where the hook file finds it
//! wherever `CARGO_TARGET_DIR` points. Cargo runs a crate's build script
//! (`build.rs`) and its dependencies' build scripts and procedural macros
//! on this machine, natively, with the person's rights: a crate that has
//! one of its own is said before it is built.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, bail};

use super::write::{plain_dir, replace_file};

const TARGET: &str = "wasm32-wasip2";

/// Build the crate of `manifest`; its components, as copied to `build/`.
pub(super) fn build(manifest: &Path, release: bool) -> anyhow::Result<Vec<PathBuf>> {
    if let Some(script) = build_script(manifest)? {
        eprintln!(
            "wasm-hooks: {} has a build script ({}): building runs it on this machine, natively and with your rights, as cargo runs its dependencies' build scripts and procedural macros; build only plugins whose source you would run",
            manifest.display(),
            script
        );
    }
    ensure_target()?;
    let components = cargo_build(manifest, release)?;
    if components.is_empty() {
        bail!(
            "the build made no .wasm: is the crate a `cdylib` (`[lib] crate-type = [\"cdylib\"]`)?"
        );
    }
    let stable = manifest.with_file_name("build");
    plain_dir(&stable)?;
    components
        .iter()
        .map(|built| {
            let copy = stable.join(built.file_name().unwrap_or_default());
            let bytes =
                std::fs::read(built).with_context(|| format!("reading {}", built.display()))?;
            replace_file(&copy, &bytes)?;
            Ok(copy)
        })
        .collect()
}

/// The crate's own build script, if it has one: `package.build` in its
/// manifest, else `build.rs` beside it (cargo's default); `build = false`
/// turns it off.
fn build_script(manifest: &Path) -> anyhow::Result<Option<String>> {
    let text = std::fs::read_to_string(manifest)
        .with_context(|| format!("reading {}", manifest.display()))?;
    let doc: toml::Table =
        toml::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", manifest.display()))?;
    match doc.get("package").and_then(|p| p.get("build")) {
        Some(toml::Value::String(script)) => Ok(Some(script.clone())),
        Some(toml::Value::Boolean(false)) => Ok(None),
        _ => Ok(manifest
            .with_file_name("build.rs")
            .is_file()
            .then(|| "build.rs".to_owned())),
    }
}

/// Install the wasm32-wasip2 target with rustup if it is not there.
fn ensure_target() -> anyhow::Result<()> {
    let installed = Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output();
    let Ok(installed) = installed else {
        eprintln!("wasm-hooks: rustup not found; assuming the {TARGET} target is installed");
        return Ok(());
    };
    if String::from_utf8_lossy(&installed.stdout)
        .lines()
        .any(|l| l.trim() == TARGET)
    {
        return Ok(());
    }
    eprintln!(
        "wasm-hooks: the {TARGET} target is missing; installing it (rustup target add {TARGET})"
    );
    let status = Command::new("rustup")
        .args(["target", "add", TARGET])
        .status()
        .context("running rustup")?;
    if !status.success() {
        bail!("`rustup target add {TARGET}` failed ({status})");
    }
    Ok(())
}

/// Run cargo; the `.wasm` files it produced (cargo's own messages go to
/// stderr as usual).
fn cargo_build(manifest: &Path, release: bool) -> anyhow::Result<Vec<PathBuf>> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args([
        "build",
        "--target",
        TARGET,
        "--message-format=json-render-diagnostics",
    ])
    .arg("--manifest-path")
    .arg(manifest)
    .stdout(Stdio::piped());
    if release {
        cmd.arg("--release");
    }
    let mut child = cmd.spawn().context("running cargo")?;
    let mut components = Vec::new();
    let stdout = child.stdout.take().context("cargo's stdout")?;
    for line in std::io::BufReader::new(stdout).lines() {
        let message: serde_json::Value = match serde_json::from_str(&line?) {
            Ok(message) => message,
            Err(_) => continue,
        };
        if message["reason"] != "compiler-artifact" {
            continue;
        }
        let files = message["filenames"].as_array().into_iter().flatten();
        components.extend(
            files
                .filter_map(serde_json::Value::as_str)
                .filter(|f| f.ends_with(".wasm"))
                .map(PathBuf::from),
        );
    }
    let status = child.wait()?;
    if !status.success() {
        bail!("cargo build failed ({status})");
    }
    Ok(components)
}
