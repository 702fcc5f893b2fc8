//! `wasm-hooks new [--lang rust|python|js|ts] NAME`: a plugin that builds on
//! the first try (`wasm-hooks build`) — the hook, a hook file using it
//! (which passes `validate --deny-warnings`), the schema of its config,
//! policy-test fixtures, native tests of its logic (Python, JS), a README.
//! The templates are `host/cli/templates/plugin/` (Rust, and what every
//! language shares), `python-plugin/` and `js-plugin/`; a plugin gets its
//! own copy of its language's SDK. Only the SDK's own regular files are copied (never a
//! symbolic link's target), and every file is written new, never through
//! an existing link.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};

use super::Exit;
use super::build::{JS_SDK, PYTHON_SDK};

/// The languages a plugin can be written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Lang {
    /// A crate using `wasm-hooks-guest`, built by cargo.
    Rust,
    /// An `app.py` using the `wasm_hooks` package, built by componentize-py.
    Python,
    /// An `app.js` ES module using `wasm_hooks/index.js`, bundled by
    /// esbuild and built by componentize-js.
    Js,
    /// An `app.ts` module using `wasm_hooks/index.js` and its types, with
    /// an npm dependency, built as JavaScript is.
    Ts,
}

/// Arguments of `wasm-hooks new`.
#[derive(Debug, Args)]
pub(crate) struct NewArgs {
    /// The plugin's name (letters, digits, `-` and `_`).
    name: String,

    /// The language to write it in.
    #[arg(long, value_enum, default_value_t = Lang::Rust)]
    lang: Lang,

    /// Where to create it [default: a new directory NAME here].
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,

    /// Use the guest SDK at this path, a `guest-sdk/` folder (a checkout's
    /// or a copy of one). A Rust plugin depends on it there [default: a
    /// copy of this program's SDK in the plugin, `wasm-hooks-guest/`]; a
    /// Python or JS plugin gets a copy of its `python/wasm_hooks/` or
    /// `js/wasm_hooks/` [default: this program's].
    #[arg(long, value_name = "DIR", conflicts_with = "sdk_version")]
    sdk_path: Option<PathBuf>,

    /// Depend on this version of the published `wasm-hooks-guest` (Rust
    /// only: the Python and JS SDKs are copied into the plugin).
    #[arg(long, value_name = "VERSION")]
    sdk_version: Option<String>,
}

/// The fixtures, the same for every language (the hooks answer alike).
const FIXTURE: (&str, &str) = (
    "fixtures/basic.yaml",
    include_str!("../templates/plugin/fixture.yaml.tmpl"),
);

/// The hook file, the same for every language: the guard blocks when it
/// fails, so it passes `validate --deny-warnings`.
const HOOK_FILE: (&str, &str) = (
    "hooks.json",
    include_str!("../templates/plugin/hooks.json.tmpl"),
);

/// The schema of the config every language's hook reads (`build` embeds
/// it; hosts check each hook's `config` against it).
const CONFIG_SCHEMA: (&str, &str) = (
    "config.schema.json",
    include_str!("../templates/plugin/config.schema.json.tmpl"),
);

const RUST_TEMPLATES: &[(&str, &str)] = &[
    (
        "Cargo.toml",
        include_str!("../templates/plugin/Cargo.toml.tmpl"),
    ),
    (
        "src/lib.rs",
        include_str!("../templates/plugin/lib.rs.tmpl"),
    ),
    HOOK_FILE,
    CONFIG_SCHEMA,
    FIXTURE,
    (
        "README.md",
        include_str!("../templates/plugin/README.md.tmpl"),
    ),
    (
        ".gitignore",
        include_str!("../templates/plugin/gitignore.tmpl"),
    ),
];

const PYTHON_TEMPLATES: &[(&str, &str)] = &[
    (
        "app.py",
        include_str!("../templates/python-plugin/app.py.tmpl"),
    ),
    (
        "test_app.py",
        include_str!("../templates/python-plugin/test_app.py.tmpl"),
    ),
    (
        "pyproject.toml",
        include_str!("../templates/python-plugin/pyproject.toml.tmpl"),
    ),
    HOOK_FILE,
    CONFIG_SCHEMA,
    FIXTURE,
    (
        "README.md",
        include_str!("../templates/python-plugin/README.md.tmpl"),
    ),
    (
        ".gitignore",
        include_str!("../templates/python-plugin/gitignore.tmpl"),
    ),
];

const TS_TEMPLATES: &[(&str, &str)] = &[
    ("app.ts", include_str!("../templates/ts-plugin/app.ts.tmpl")),
    (
        "app.test.ts",
        include_str!("../templates/ts-plugin/app.test.ts.tmpl"),
    ),
    (
        "package.json",
        include_str!("../templates/ts-plugin/package.json.tmpl"),
    ),
    (
        "tsconfig.json",
        include_str!("../templates/ts-plugin/tsconfig.json.tmpl"),
    ),
    HOOK_FILE,
    CONFIG_SCHEMA,
    FIXTURE,
    (
        "README.md",
        include_str!("../templates/ts-plugin/README.md.tmpl"),
    ),
    (
        ".gitignore",
        include_str!("../templates/ts-plugin/gitignore.tmpl"),
    ),
];

const JS_TEMPLATES: &[(&str, &str)] = &[
    ("app.js", include_str!("../templates/js-plugin/app.js.tmpl")),
    (
        "app.test.js",
        include_str!("../templates/js-plugin/app.test.js.tmpl"),
    ),
    (
        "package.json",
        include_str!("../templates/js-plugin/package.json.tmpl"),
    ),
    HOOK_FILE,
    CONFIG_SCHEMA,
    FIXTURE,
    (
        "README.md",
        include_str!("../templates/js-plugin/README.md.tmpl"),
    ),
    (
        ".gitignore",
        include_str!("../templates/js-plugin/gitignore.tmpl"),
    ),
];

pub(crate) fn run(args: NewArgs) -> anyhow::Result<Exit> {
    let name = &args.name;
    let valid = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !valid {
        bail!(
            "`{name}` is not a crate name: use letters, digits, `-` and `_`, starting with a letter"
        );
    }
    let dir = args.dir.clone().unwrap_or_else(|| PathBuf::from(name));
    if dir.exists() && std::fs::read_dir(&dir)?.next().is_some() {
        bail!("{} exists and is not empty", dir.display());
    }
    // The component is named after the plugin's manifest (`Cargo.toml`,
    // `pyproject.toml`, `package.json`), which holds the name given here.
    let file = name.replace('-', "_");
    let (templates, sdk, note) = match args.lang {
        Lang::Rust => {
            let (sdk, note) = sdk_dependency(&args)?;
            (RUST_TEMPLATES, sdk, note)
        }
        Lang::Python => (PYTHON_TEMPLATES, String::new(), String::new()),
        Lang::Js => (JS_TEMPLATES, String::new(), String::new()),
        Lang::Ts => (TS_TEMPLATES, String::new(), String::new()),
    };
    // The SDK is read (and may be refused) before anything is written.
    let sdk_files = sdk_copy(&args)?;
    let filled = templates.iter().map(|(path, template)| {
        let text = template
            .replace("{{name}}", name)
            .replace("{{file}}", &file)
            .replace("{{sdk}}", &sdk)
            .replace("{{sdk_note}}", &note)
            .replace("{{sdk_version}}", env!("CARGO_PKG_VERSION"));
        ((*path).to_owned(), Cow::Owned(text))
    });
    // The SDK's files are copies, not templates: written as they are.
    for (path, text) in filled.chain(sdk_files) {
        let target = dir.join(path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        create_file(&target, &text)?;
    }
    let what = match args.lang {
        Lang::Rust => "the plugin crate",
        Lang::Python => "the Python plugin",
        Lang::Js => "the JavaScript plugin",
        Lang::Ts => "the TypeScript plugin",
    };
    println!("created {what} {name} in {}", dir.display());
    let install = if args.lang == Lang::Ts {
        "npm install && npm test && "
    } else {
        ""
    };
    println!(
        "  cd {} && {install}wasm-hooks build && wasm-hooks test",
        dir.display()
    );
    Ok(Exit::GoOn)
}

/// The Rust SDK crate (`wasm-hooks-guest`) as this program carries it: a
/// Rust plugin gets a copy (`wasm-hooks-guest/`) unless told to depend on
/// another, so that it builds anywhere with nothing but crates.io.
const RUST_SDK: &[(&str, &str)] = &[
    ("Cargo.toml", include_str!("../../../guest-sdk/Cargo.toml")),
    ("src/lib.rs", include_str!("../../../guest-sdk/src/lib.rs")),
    (
        "src/error.rs",
        include_str!("../../../guest-sdk/src/error.rs"),
    ),
    (
        "src/event.rs",
        include_str!("../../../guest-sdk/src/event.rs"),
    ),
    (
        "src/hook.rs",
        include_str!("../../../guest-sdk/src/hook.rs"),
    ),
    (
        "src/outcome.rs",
        include_str!("../../../guest-sdk/src/outcome.rs"),
    ),
    (
        "src/testing.rs",
        include_str!("../../../guest-sdk/src/testing.rs"),
    ),
    (
        "src/tools.rs",
        include_str!("../../../guest-sdk/src/tools.rs"),
    ),
    (
        "wit/0.2.0/hook.wit",
        include_str!("../../../guest-sdk/wit/0.2.0/hook.wit"),
    ),
];

/// Where a Rust plugin's copy of the SDK goes.
const RUST_SDK_FOLDER: &str = "wasm-hooks-guest";

/// The plugin's copy of its SDK: a Python or JS plugin's `wasm_hooks/…`
/// (this program's, or the one in `--sdk-path`); a Rust plugin's
/// `wasm-hooks-guest/` crate unless `--sdk-path` or `--sdk-version` names
/// another to depend on.
fn sdk_copy(args: &NewArgs) -> anyhow::Result<Vec<(String, Cow<'static, str>)>> {
    let (sdk, folder) = match args.lang {
        Lang::Rust if args.sdk_path.is_some() || args.sdk_version.is_some() => {
            return Ok(Vec::new());
        }
        Lang::Rust => {
            return Ok(RUST_SDK
                .iter()
                .map(|(file, text)| (format!("{RUST_SDK_FOLDER}/{file}"), Cow::Borrowed(*text)))
                .collect());
        }
        Lang::Python => (PYTHON_SDK, "python/wasm_hooks"),
        Lang::Js | Lang::Ts => (JS_SDK, "js/wasm_hooks"),
    };
    if let Some(version) = &args.sdk_version {
        bail!(
            "--sdk-version {version}: only a Rust plugin depends on a published SDK; a Python or JS plugin gets a copy of the SDK (this program's, {}, or --sdk-path DIR's `{folder}/`)",
            env!("CARGO_PKG_VERSION")
        );
    }
    sdk.iter()
        .map(|(file, text)| {
            let text = match &args.sdk_path {
                None => Cow::Borrowed(*text),
                Some(root) => Cow::Owned(sdk_file(root, folder, file)?),
            };
            Ok((format!("wasm_hooks/{file}"), text))
        })
        .collect()
}

/// The text of `folder/file` in the SDK at `root` (`--sdk-path`), refused
/// unless it is a regular file at exactly that place: a checkout's SDK
/// file linked to `~/.ssh/id_rsa` must not be copied into a plugin.
fn sdk_file(root: &Path, folder: &str, file: &str) -> anyhow::Result<String> {
    let path = root.join(folder).join(file);
    let reading = || {
        format!(
            "--sdk-path {}: reading {} (a guest-sdk folder holds `{folder}/{file}`)",
            root.display(),
            path.display()
        )
    };
    let found = path.canonicalize().with_context(reading)?;
    let expected = root
        .canonicalize()
        .with_context(reading)?
        .join(folder)
        .join(file);
    if found != expected || !found.is_file() {
        bail!(
            "--sdk-path {}: {} is not a regular file of the SDK (a symbolic link, or a special file); refusing to copy it",
            root.display(),
            path.display()
        );
    }
    std::fs::read_to_string(&found).with_context(reading)
}

/// `text` as a new file at `path`: never an existing file, nor one a
/// symbolic link there points to.
pub(crate) fn create_file(path: &Path, text: &str) -> anyhow::Result<()> {
    use std::io::Write as _;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .and_then(|mut file| file.write_all(text.as_bytes()))
        .with_context(|| format!("writing {}", path.display()))
}

/// The `wasm-hooks-guest` dependency line, and a sentence for the README.
fn sdk_dependency(args: &NewArgs) -> anyhow::Result<(String, String)> {
    if let Some(version) = &args.sdk_version {
        return Ok((
            format!("wasm-hooks-guest = \"{version}\""),
            format!("the published crate, version {version}."),
        ));
    }
    Ok(match &args.sdk_path {
        Some(path) => {
            let path = std::path::absolute(path)?;
            let path = path.canonicalize().unwrap_or(path);
            (
                format!(
                    "wasm-hooks-guest = {{ path = {:?} }}",
                    path.display().to_string()
                ),
                "the SDK at a path of this machine (`--sdk-path`): the plugin builds only where that path is.".to_owned(),
            )
        }
        None => (
            format!("wasm-hooks-guest = {{ path = \"{RUST_SDK_FOLDER}\" }}"),
            format!(
                "a copy of the SDK in `{RUST_SDK_FOLDER}/` (commit it: the plugin then builds anywhere, with nothing but crates.io). Once `wasm-hooks-guest` is on crates.io, `wasm-hooks-guest = \"0.1\"` can replace it."
            ),
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every language's scaffold ships the config schema, and its hook
    /// file's guard blocks when it fails and has a `config` that fits the
    /// schema (a misspelt key does not).
    #[test]
    fn every_scaffold_ships_a_config_schema_its_hook_file_fits() {
        for templates in [RUST_TEMPLATES, PYTHON_TEMPLATES, JS_TEMPLATES, TS_TEMPLATES] {
            let file = |name: &str| -> serde_json::Value {
                let (_, text) = templates.iter().find(|(path, _)| *path == name).unwrap();
                serde_json::from_str(&text.replace("{{name}}", "x").replace("{{file}}", "x"))
                    .unwrap()
            };
            let schema = file("config.schema.json");
            let hook = file("hooks.json")["hooks"]["PreToolUse"][0]["hooks"][0].clone();
            assert_eq!(hook["on_failure"], "block");
            let validator = jsonschema::validator_for(&schema).unwrap();
            assert!(validator.is_valid(&hook["config"]), "{hook}");
            assert!(!validator.is_valid(&serde_json::json!({"blokced": ["sudo"]})));
        }
    }
}
