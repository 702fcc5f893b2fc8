//! The example plugins in Python and JavaScript, built once per test
//! binary (`wasm-hooks build`, which also compiles them ahead into the
//! tests' compile cache), for the modules that need them.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::support;

/// The example plugin `name` (Python or JS) built once per test binary,
/// from a copy of its folder; `build` compiles it ahead into the tests'
/// compile cache ([`toolchain_cache`]), so no event of a test waits on
/// its compile.
pub fn built_example(name: &str) -> PathBuf {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    static JS: OnceLock<PathBuf> = OnceLock::new();
    let cell = if name.ends_with("-py") { &PYTHON } else { &JS };
    cell.get_or_init(|| {
        // Kept between runs beside the guests' build (not a temporary
        // directory left behind by every run).
        let dir = support::workspace_root()
            .join("target/plugins/built-examples")
            .join(name);
        let _ = std::fs::remove_dir_all(&dir);
        example_copy(name, &dir);
        let out = Command::new(env!("CARGO_BIN_EXE_wasm-hooks"))
            .current_dir(&dir)
            .arg("build")
            .env("WASM_HOOKS_CACHE_DIR", support::toolchain_cache())
            .env("XDG_CONFIG_HOME", "/nonexistent")
            .output()
            .unwrap();
        assert!(out.status.success(), "wasm-hooks build {name}: {out:?}");
        let wasm = dir
            .join("build")
            .join(format!("{}.wasm", name.replace('-', "_")));
        assert!(wasm.is_file(), "{} was built", wasm.display());
        wasm
    })
    .clone()
}

/// The example plugin `name` copied to `dir`, without its build and with
/// its npm dependencies installed (`npm ci`), ready for `wasm-hooks build`.
pub fn example_copy(name: &str, dir: &Path) {
    copy_dir(
        &support::workspace_root().join("example-plugins").join(name),
        dir,
    );
    let _ = std::fs::remove_dir_all(dir.join("build"));
    if dir.join("package-lock.json").is_file() {
        support::npm_ci(dir);
    }
}

/// `from`'s files and folders copied into `to`.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}
