//! Building a JavaScript or TypeScript plugin. An entry module binds the
//! folder's `app.js` or `app.ts` (its default export, a `Hook` class) to
//! the host's imports; esbuild bundles it with everything it imports (the
//! SDK, npm packages from `node_modules/`), TypeScript's types stripped;
//! componentize-js turns the bundle into a component of the newest WIT
//! world, with no `wasi:http` import; it is then stamped with that world.
//! Both tools are installed once from npm into folders under the cache
//! directory.
//!
//! componentize-js runs the module's top level at build time (a snapshot
//! is taken after it), where no random numbers may be asked for: a package
//! that calls `Math.random()` when imported (`shell-quote` does) would stop
//! the build. So the bundle starts with a seeded `Math.random` that the
//! first event replaces with the real one.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, bail};

use super::toolchain::{installed, run, wit_dir, write_files};
use super::write::remove_symlink;

/// The modules a JavaScript or TypeScript plugin's hook class may be the
/// default export of, in the order they are looked for.
pub(crate) const APPS: [&str; 2] = ["app.ts", "app.js"];

/// The esbuild release plugins are bundled with.
pub(super) const ESBUILD: &str = "0.28.2";

/// The module of the plugin in `dir`, if it is a JavaScript or TypeScript
/// one.
pub(crate) fn app(dir: &Path) -> Option<&'static str> {
    APPS.into_iter().find(|app| dir.join(app).is_file())
}

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
    (
        "testing.d.ts",
        include_str!("../../../../guest-sdk/js/wasm_hooks/testing.d.ts"),
    ),
];

/// The module bundled: the host's imports given to the SDK, and the
/// plugin's class (`APP`) exported as the WIT `handler`, which puts the
/// real `Math.random` back on the first event.
const ENTRY: &str = "\
import * as host from 'wasm-hooks:hook/host@0.2.0';
import * as kv from 'wasm-hooks:hook/kv@0.2.0';
import { HookError, exportHook, setHost } from '../wasm_hooks/index.js';
import Handler from '../APP';

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

const hook = exportHook(Handler);

export const handler = {
  handle(event) {
    if (globalThis.__wasmHooksRandom) {
      Math.random = globalThis.__wasmHooksRandom;
      delete globalThis.__wasmHooksRandom;
    }
    return hook.handle(event);
  },
};
";

/// The first lines of the bundle: `Math.random` seeded (a xorshift) while
/// the top level runs at build time; the real one kept for the first
/// event.
const SEEDED_RANDOM: &str = "globalThis.__wasmHooksRandom = Math.random; \
Math.random = (() => { let s = 0x2545f491; return () => { s ^= s << 13; s ^= s >>> 17; s ^= s << 5; return (s >>> 0) / 4294967296; }; })();";

/// The hook methods, for the check that none is `async`.
const METHODS: &str = "dispatch|other|preToolUse|postToolUse|postToolUseFailure|userPromptSubmit|permissionRequest|notification|stop|subagentStop|sessionStart|sessionEnd";

/// Bundle the plugin in `dir` with everything it imports into
/// `dir/build/bundle.js`; its path. esbuild writes the same bundle for the
/// same code, so the bundle keys the build cache: exactly what goes into
/// the component (an import from outside the folder, a package updated in
/// `node_modules/`, this build's SDK and glue), and nothing else (a test
/// file).
pub(super) fn bundle(dir: &Path, app: &str, cache: &Path) -> anyhow::Result<PathBuf> {
    refuse_async_methods(&dir.join(app))?;
    let esbuild = esbuild(cache)?;
    let build = write_files(
        &dir.join("build"),
        &[("entry.js", &ENTRY.replace("APP", app))],
    )?;
    let bundle = build.join("bundle.js");
    remove_symlink(&bundle)?;
    run(
        Command::new(esbuild)
            .arg(build.join("entry.js"))
            .args([
                "--bundle",
                "--format=esm",
                "--platform=neutral",
                "--main-fields=module,main",
                "--external:wasm-hooks:*",
                "--log-level=warning",
            ])
            .arg(format!("--banner:js={SEEDED_RANDOM}"))
            .arg(format!("--outfile={}", bundle.display()))
            .current_dir(dir),
        "esbuild, bundling the plugin with what it imports (its messages are above; an npm package not found: run `npm install`)",
    )?;
    Ok(bundle)
}

/// Build the plugin in `dir`, bundled ([`bundle`]), into
/// `dir/build/<name>.wasm`; its path.
pub(super) fn build(dir: &Path, cache: &Path, name: &str) -> anyhow::Result<PathBuf> {
    let componentize = toolchain(cache)?;
    let wit = wit_dir(cache)?;
    let build = dir.join("build");
    let bundle = build.join("bundle.js");
    let out = build.join(format!("{name}.wasm"));
    remove_symlink(&out)?;
    run(
        Command::new(componentize)
            .arg(&bundle)
            .arg("-w")
            .arg(&wit)
            .args(["-n", "hook", "-d", "http", "fetch-event", "-o"])
            .arg(&out),
        "componentize-js (its messages are above)",
    )?;
    Ok(out)
}

/// Refuse a hook method declared `async`, naming its line: a hook answers
/// at once, and a component has no event loop to wait for a Promise in.
fn refuse_async_methods(app: &Path) -> anyhow::Result<()> {
    let text =
        std::fs::read_to_string(app).with_context(|| format!("reading {}", app.display()))?;
    match async_method(&text) {
        Some((line, method)) => bail!(
            "{}:{line}: `{method}` is async: a hook answers at once, and a component has no event loop to wait for a Promise in; make it a plain method",
            app.display(),
        ),
        None => Ok(()),
    }
}

/// The first hook method `source` declares `async` (in JavaScript's or
/// TypeScript's forms: `async m(`, `override async m(`, `async *m(`,
/// `m = async (…) =>`): its line and name.
fn async_method(source: &str) -> Option<(usize, String)> {
    let pattern = regex::Regex::new(&format!(
        r"^\s*(?:(?:public|protected|private|override|static)\s+)*async\s*\*?\s*({METHODS})\s*[<(]|\b({METHODS})\s*=\s*async\b"
    ))
    .expect("a valid pattern");
    source.lines().enumerate().find_map(|(at, line)| {
        let found = pattern.captures(line)?;
        let method = found.get(1).or_else(|| found.get(2))?;
        Some((at + 1, method.as_str().to_owned()))
    })
}

/// Refuse to bundle before `npm install`: every package of `package.json`'s
/// `dependencies` must be in a `node_modules/` of the folder or one above
/// it (where Node.js and esbuild look), else the build stops naming the
/// first one missing (not esbuild's "Could not resolve"), even when these
/// sources were built before: a build behaves the same on every machine.
pub(super) fn require_installed_dependencies(dir: &Path) -> anyhow::Result<()> {
    let manifest = dir.join("package.json");
    let text = match std::fs::read_to_string(&manifest) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e).with_context(|| format!("reading {}", manifest.display())),
    };
    let parsed: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", manifest.display()))?;
    let Some(wanted) = parsed.get("dependencies").and_then(|d| d.as_object()) else {
        return Ok(());
    };
    let absolute = std::path::absolute(dir)?;
    let installed = |package: &str| {
        absolute.ancestors().any(|folder| {
            folder
                .join("node_modules")
                .join(package)
                .join("package.json")
                .is_file()
        })
    };
    match wanted.keys().find(|package| !installed(package)) {
        Some(missing) => bail!(
            "{}: `{missing}` is a dependency, but it is not installed in node_modules/: run `npm install` (or `npm ci`) in {} first",
            manifest.display(),
            dir.display()
        ),
        None => Ok(()),
    }
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
    npm_tool(
        cache,
        ("componentize-js", COMPONENTIZE_JS, "about 400 MB"),
        &format!("@bytecodealliance/componentize-js@{COMPONENTIZE_JS}"),
    )
}

/// The esbuild program, installed likewise.
fn esbuild(cache: &Path) -> anyhow::Result<PathBuf> {
    npm_tool(
        cache,
        ("esbuild", ESBUILD, "about 10 MB"),
        &format!("esbuild@{ESBUILD}"),
    )
}

/// The program `name` (version, size) of the npm `package`, installed with
/// npm into a folder of its own under the cache directory first if it is
/// not there.
fn npm_tool(
    cache: &Path,
    (name, version, size): (&str, &str, &str),
    package: &str,
) -> anyhow::Result<PathBuf> {
    installed(
        &cache.join(format!("toolchains/{name}-{version}")),
        &format!("node_modules/.bin/{name}"),
        &format!("{name} {version} from npm ({size})"),
        |prefix| {
            run(
                Command::new("npm")
                    .args(["install", "--silent", "--no-audit", "--no-fund", "--prefix"])
                    .arg(prefix)
                    .arg(package),
                &format!("installing {name} with npm (is Node.js installed?)"),
            )
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn async_methods_are_found_in_javascripts_and_typescripts_forms() {
        for source in [
            "  async preToolUse(event) {",
            "  override async preToolUse(event: Event): Promise<Outcome> {",
            "  public async preToolUse(event) {",
            "  async *preToolUse(event) {",
            "  async preToolUse<T>(event) {",
            "  preToolUse = async (event) => {",
        ] {
            assert_eq!(
                async_method(&format!("class H {{\n{source}\n}}")),
                Some((2, "preToolUse".to_owned())),
                "{source}"
            );
        }
        assert_eq!(
            async_method("  preToolUse(event) { return asyncThing(); }"),
            None
        );
        assert_eq!(
            async_method("  async helper(x) {"),
            None,
            "not a hook method"
        );
    }

    #[test]
    fn every_method_the_sdk_dispatches_to_is_checked() {
        let sdk = SDK.iter().find(|(name, _)| *name == "index.js").unwrap().1;
        let table = sdk.split("const METHODS = {").nth(1).unwrap();
        let table = table.split("};").next().unwrap();
        let checked: Vec<&str> = METHODS.split('|').collect();
        for method in table.split('\'').skip(1).step_by(2) {
            assert!(checked.contains(&method), "{method}");
        }
    }
}
