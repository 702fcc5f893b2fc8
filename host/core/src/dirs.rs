//! Where per-user files go: the XDG base directories, one rule for the
//! hook files' config layer, the compile cache and the state of `hook`;
//! and which directories a variable may name when what is in them
//! chooses what runs ([`personal_dir`]): an agent passes a repository's
//! own variables to the hooks it runs (Claude Code, a repository's
//! `.claude/settings.json` `env`), so such a variable must not point
//! wasm-hooks at a folder the repository wrote.

use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

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

/// Why a directory a variable names is not honoured.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NotPersonal {
    /// A relative path: the agent's (or the repository's) working
    /// directory would choose it.
    #[error("not an absolute path")]
    Relative,
    /// Not a directory.
    #[error("not a directory")]
    NotADirectory,
    /// Owned by someone else than who must own it.
    #[error("owned by uid {found}, not {expected}")]
    Owner {
        /// Its owner.
        found: u32,
        /// Who must own it.
        expected: u32,
    },
    /// Its group or others may write it.
    #[error("writable by others (mode {0:o})")]
    WritableByOthers(u32),
    /// Inside a project: a folder with `.git` or `.wasm-hooks`, which a
    /// repository's own files fill.
    #[error("inside the project {0}")]
    InProject(PathBuf),
    /// For root, not under the system's own path.
    #[error("for root, only a directory under {0} counts")]
    NotUnder(&'static str),
}

/// Whose a directory must be for [`personal_dir`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// The person running wasm-hooks.
    Me,
    /// Root, and nobody else may write it: the organisation's managed
    /// layer. When the person is root (whose clone of a repository is
    /// root's too), only a directory under this path counts.
    Root(&'static str),
}

/// `path` if it may be honoured as a directory that chooses what runs:
/// absolute; a directory owned by `owner` that neither its group nor
/// others may write (a directory not made yet counts, as it will be made
/// this person's, mode 0700); and outside every project (no folder on
/// the way holds `.git` or `.wasm-hooks`).
///
/// # Errors
/// [`NotPersonal`], saying which of these it fails.
pub fn personal_dir(path: &Path, owner: Owner) -> Result<PathBuf, NotPersonal> {
    if !path.is_absolute() {
        return Err(NotPersonal::Relative);
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    let real = match std::fs::metadata(path) {
        Ok(meta) => {
            if !meta.is_dir() {
                return Err(NotPersonal::NotADirectory);
            }
            let expected = match owner {
                Owner::Me => me,
                Owner::Root(_) => 0,
            };
            if meta.uid() != expected {
                return Err(NotPersonal::Owner {
                    found: meta.uid(),
                    expected,
                });
            }
            if meta.mode() & 0o022 != 0 {
                return Err(NotPersonal::WritableByOthers(meta.mode() & 0o7777));
            }
            path.canonicalize().unwrap_or_else(|_| path.to_owned())
        }
        Err(_) if owner == Owner::Me => path.to_owned(),
        Err(_) => return Err(NotPersonal::NotADirectory),
    };
    if let Owner::Root(system) = owner
        && me == 0
        && !real.starts_with(system)
    {
        return Err(NotPersonal::NotUnder(system));
    }
    if let Some(project) = real
        .ancestors()
        .find(|dir| dir.join(".git").exists() || dir.join(".wasm-hooks").exists())
    {
        return Err(NotPersonal::InProject(project.to_owned()));
    }
    Ok(real)
}

/// The directory the variable `var` names, when it is set and
/// [`personal_dir`] honours it for `owner`; when it is set and refused,
/// none, with a warning naming the variable and why.
pub fn personal_dir_from_env(var: &str, owner: Owner) -> Option<PathBuf> {
    let value = std::env::var_os(var).filter(|v| !v.is_empty())?;
    match personal_dir(Path::new(&value), owner) {
        Ok(dir) => Some(dir),
        Err(why) => {
            tracing::warn!(
                "{var}={} ignored: {why} (a variable that chooses what runs must name a directory of your own, outside every project)",
                Path::new(&value).display()
            );
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    #[test]
    fn a_relative_path_a_shared_folder_or_a_projects_folder_is_not_personal() {
        let home = tempfile::tempdir().unwrap();
        let mine = home.path().join("cache");
        std::fs::create_dir(&mine).unwrap();
        std::fs::set_permissions(&mine, std::fs::Permissions::from_mode(0o700)).unwrap();
        assert_eq!(
            personal_dir(&mine, Owner::Me),
            Ok(mine.canonicalize().unwrap())
        );
        let later = home.path().join("not-yet");
        assert_eq!(personal_dir(&later, Owner::Me), Ok(later.clone()));

        assert_eq!(
            personal_dir(Path::new(".wh-cache"), Owner::Me),
            Err(NotPersonal::Relative)
        );
        std::fs::set_permissions(&mine, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert_eq!(
            personal_dir(&mine, Owner::Me),
            Err(NotPersonal::WritableByOthers(0o777))
        );

        let project = home.path().join("repo");
        std::fs::create_dir_all(project.join(".git")).unwrap();
        let inside = project.join("target/.wh-cache");
        std::fs::create_dir_all(&inside).unwrap();
        std::fs::set_permissions(&inside, std::fs::Permissions::from_mode(0o700)).unwrap();
        assert_eq!(
            personal_dir(&inside, Owner::Me),
            Err(NotPersonal::InProject(project.canonicalize().unwrap()))
        );
    }
}
