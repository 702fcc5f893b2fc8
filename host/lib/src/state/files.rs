//! Files of state kept on disk (the directory store's, trust's): a
//! private directory, and a safe file name for any key.

use std::path::Path;

use wasm_hooks_core::sha256_hex;

/// The file name for `key` (a session id, or a session and a hook): its
/// hash, so that any id makes a safe name, with `extension`.
pub(crate) fn file_name(key: &str, extension: &str) -> String {
    format!("{}.{extension}", &sha256_hex(key.as_bytes())[..32])
}

/// Create `dir` (and its parents) readable by the user only.
pub(crate) fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}
