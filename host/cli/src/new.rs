//! `wasm-hooks new NAME`: a plugin crate that builds for wasm32-wasip2 on
//! the first try — the hook, a hook file using it, policy-test fixtures,
//! a README. The templates are `host/templates/plugin/`.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::Args;

use super::Exit;

/// Arguments of `wasm-hooks new`.
#[derive(Debug, Args)]
pub(crate) struct NewArgs {
    /// The plugin's crate name (letters, digits, `-` and `_`).
    name: String,

    /// Where to create it [default: a new directory NAME here].
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,

    /// Depend on the guest SDK at this path [default: this checkout's
    /// `guest-sdk/` when there is one, else the published crate].
    #[arg(long, value_name = "DIR", conflicts_with = "sdk_version")]
    sdk_path: Option<PathBuf>,

    /// Depend on this version of the published `wasm-hooks-guest`.
    #[arg(long, value_name = "VERSION")]
    sdk_version: Option<String>,
}

const TEMPLATES: &[(&str, &str)] = &[
    (
        "Cargo.toml",
        include_str!("../templates/plugin/Cargo.toml.tmpl"),
    ),
    (
        "src/lib.rs",
        include_str!("../templates/plugin/lib.rs.tmpl"),
    ),
    (
        "hooks.json",
        include_str!("../templates/plugin/hooks.json.tmpl"),
    ),
    (
        "fixtures/basic.yaml",
        include_str!("../templates/plugin/fixture.yaml.tmpl"),
    ),
    (
        "README.md",
        include_str!("../templates/plugin/README.md.tmpl"),
    ),
    (
        ".gitignore",
        include_str!("../templates/plugin/gitignore.tmpl"),
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
    let (sdk, note) = sdk_dependency(&args)?;
    let file = name.replace('-', "_");
    for (path, template) in TEMPLATES {
        let text = template
            .replace("{{name}}", name)
            .replace("{{file}}", &file)
            .replace("{{sdk}}", &sdk)
            .replace("{{sdk_note}}", &note);
        let target = dir.join(path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        std::fs::write(&target, text).with_context(|| format!("writing {}", target.display()))?;
    }
    println!("created the plugin crate {name} in {}", dir.display());
    println!(
        "  cd {} && wasm-hooks build && wasm-hooks test",
        dir.display()
    );
    Ok(Exit::GoOn)
}

/// The `wasm-hooks-guest` dependency line, and a sentence for the README.
fn sdk_dependency(args: &NewArgs) -> anyhow::Result<(String, String)> {
    let publish = "`wasm-hooks-guest = \"0.1\"` from crates.io";
    if let Some(version) = &args.sdk_version {
        return Ok((
            format!("wasm-hooks-guest = \"{version}\""),
            format!("the published crate, version {version}."),
        ));
    }
    let checkout = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../guest-sdk");
    let path = match &args.sdk_path {
        Some(path) => Some(path.clone()),
        None => checkout.join("Cargo.toml").is_file().then_some(checkout),
    };
    Ok(match path {
        Some(path) => {
            let path = std::path::absolute(&path)?;
            let path = path.canonicalize().unwrap_or(path);
            (
                format!(
                    "wasm-hooks-guest = {{ path = {:?} }}",
                    path.display().to_string()
                ),
                format!(
                    "a path to a wasm-hooks checkout. To build elsewhere, replace it with {publish}."
                ),
            )
        }
        None => (
            "wasm-hooks-guest = \"0.1\"".to_owned(),
            format!("{publish}."),
        ),
    })
}
