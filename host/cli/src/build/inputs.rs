//! What a plugin is built from: the files of its folder that go into the
//! component (not `build/`, `target/`, `node_modules/`, `.git/`, caches,
//! fixtures, tests, hook files or docs). Two uses: their digest keys the build
//! cache of Python and JavaScript plugins, and the newest of them says
//! whether `build/` is older than its sources (which `test` refuses).

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use sha2::{Digest as _, Sha256};

/// Folders whose files are not built into the component (besides every
/// folder whose name starts with a dot: `.git`, `.venv`, `.pytest_cache`…).
const NOT_BUILT: &[&str] = &[
    "build",
    "target",
    "node_modules",
    "__pycache__",
    "fixtures",
    "dist",
    // Tests: run natively, never imported by the hook.
    "tests",
    "test",
    "__tests__",
];

/// Whether a file is a test (pytest's and unittest's `test_*.py`,
/// `*_test.py`, `conftest.py`; node's and the JS runners' `*.test.*` and
/// `*.spec.*`): not in the component, so changing one needs no new build.
fn is_test(name: &str) -> bool {
    let stem = name.split('.').next().unwrap_or(name);
    (name.ends_with(".py")
        && (stem.starts_with("test_") || stem.ends_with("_test") || stem == "conftest"))
        || name.contains(".test.")
        || name.contains(".spec.")
}

/// Whether a file of the folder's top level is built into the component.
fn built_from(name: &str) -> bool {
    !(name.starts_with("hooks.") || name.ends_with(".md") || name == "wasm-hooks.lock")
}

/// The source files of the plugin in `dir`, relative to it, sorted;
/// symbolic links are not followed.
pub(crate) fn sources(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    let mut pending = vec![PathBuf::new()];
    while let Some(relative) = pending.pop() {
        for entry in std::fs::read_dir(dir.join(&relative))? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let kind = entry.file_type()?;
            let path = relative.join(&name);
            let skipped = name.starts_with('.') && kind.is_dir()
                || NOT_BUILT.contains(&name.as_str())
                || name.ends_with(".egg-info");
            if kind.is_dir() && !skipped {
                pending.push(path);
            } else if kind.is_file()
                && !name.starts_with('.')
                && !is_test(&name)
                && (!relative.as_os_str().is_empty() || built_from(&name))
            {
                found.push(path);
            }
        }
    }
    found.sort();
    Ok(found)
}

/// A digest of the sources' names and bytes, and of `toolchain` (what
/// builds them, with its version).
pub(crate) fn digest(dir: &Path, toolchain: &str) -> std::io::Result<String> {
    let mut hash = Sha256::new();
    hash.update(toolchain.as_bytes());
    for file in sources(dir)? {
        let bytes = std::fs::read(dir.join(&file))?;
        hash.update(b"\0");
        hash.update(file.to_string_lossy().as_bytes());
        hash.update(b"\0");
        hash.update((bytes.len() as u64).to_le_bytes());
        hash.update(&bytes);
    }
    Ok(format!("{:x}", hash.finalize()))
}

/// A digest of one file's bytes (a JavaScript plugin's bundle, which holds
/// all it is built from), and of `toolchain`.
pub(crate) fn digest_of_file(path: &Path, toolchain: &str) -> std::io::Result<String> {
    let mut hash = Sha256::new();
    hash.update(toolchain.as_bytes());
    hash.update(b"\0");
    hash.update(std::fs::read(path)?);
    Ok(format!("{:x}", hash.finalize()))
}

/// A short digest of what this build of wasm-hooks itself puts into a
/// component beside a plugin's sources (its SDK's files, the glue it
/// generates): part of the build cache's key, so a wasm-hooks whose SDK
/// changed builds again even where its version number did not.
pub(crate) fn recipe(parts: &[&str]) -> String {
    let mut hash = Sha256::new();
    for part in parts {
        hash.update((part.len() as u64).to_le_bytes());
        hash.update(part.as_bytes());
    }
    format!("{:x}", hash.finalize())[..12].to_owned()
}

/// A source of the plugin in `dir` changed after its newest component in
/// `build/` was written (the last build; an older file there is left from
/// a build before): that source and that component.
pub(crate) fn newer_than_build(dir: &Path) -> Option<(PathBuf, PathBuf)> {
    let modified = |path: &Path| std::fs::metadata(path).and_then(|m| m.modified()).ok();
    let (component, built) = std::fs::read_dir(dir.join("build"))
        .ok()?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|e| e == "wasm"))
        .filter_map(|path| modified(&path).map(|time| (path, time)))
        .max_by_key(|(_, time)| *time)?;
    let (source, changed): (PathBuf, SystemTime) = sources(dir)
        .ok()?
        .into_iter()
        .filter_map(|file| modified(&dir.join(&file)).map(|time| (file, time)))
        .max_by_key(|(_, time)| *time)?;
    (changed > built).then(|| (dir.join(source), component))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_leave_out_builds_fixtures_hook_files_and_docs() {
        let dir = tempfile::tempdir().unwrap();
        for file in [
            "app.py",
            "pyproject.toml",
            "lib/util.py",
            "build/x.wasm",
            "fixtures/a.yaml",
            "hooks.json",
            "README.md",
            "__pycache__/app.pyc",
            ".pytest_cache/v/cache",
            "test_app.py",
            "lib/util_test.py",
            "conftest.py",
            "tests/test_more.py",
            "app.test.ts",
            "lib/util.spec.js",
        ] {
            let path = dir.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, file).unwrap();
        }
        let found: Vec<String> = sources(dir.path())
            .unwrap()
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        assert_eq!(found, ["app.py", "lib/util.py", "pyproject.toml"]);
        let before = digest(dir.path(), "t").unwrap();
        std::fs::write(dir.path().join("hooks.json"), "changed").unwrap();
        assert_eq!(digest(dir.path(), "t").unwrap(), before);
        std::fs::write(dir.path().join("lib/util.py"), "changed").unwrap();
        assert_ne!(digest(dir.path(), "t").unwrap(), before);
    }

    /// A change to what wasm-hooks itself bundles (the SDK, its glue) is a
    /// new recipe, so a new build; moving text between parts is too.
    #[test]
    fn the_recipe_follows_every_part() {
        let before = recipe(&["sdk", "entry"]);
        assert_eq!(recipe(&["sdk", "entry"]), before);
        assert_ne!(recipe(&["sdk!", "entry"]), before);
        assert_ne!(recipe(&["sdke", "ntry"]), before);
    }
}
