//! Where per-user files go: the XDG base directories, one rule for the
//! hook files' config layer, the compile cache and the state of `hook`.

use std::path::PathBuf;

/// The XDG base directory named by `var` (`XDG_CONFIG_HOME`,
/// `XDG_CACHE_HOME`, `XDG_STATE_HOME`) when it is set and not empty, else
/// `$HOME/<home_relative>` (`.config`, `.cache`, `.local/state`); none
/// without either.
///
/// # Examples
/// ```
/// let dir = wasm_hooks_core::xdg_dir("XDG_NO_SUCH_VARIABLE", ".cache");
/// if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
///     assert_eq!(dir, Some(std::path::Path::new(&home).join(".cache")));
/// }
/// ```
pub fn xdg_dir(var: &str, home_relative: &str) -> Option<PathBuf> {
    let set = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    set(var)
        .map(PathBuf::from)
        .or_else(|| set("HOME").map(|home| PathBuf::from(home).join(home_relative)))
}
