//! What a wasm hook may touch beyond its own memory: the directories it may
//! read or write and the environment variables it may see. Everything else
//! is denied: no other file, no socket, no name lookup, an empty stdin.
//!
//! A hook file grants them per hook:
//! `allow_read: ["${PROJECT_DIR}"]`, `allow_write: ["${PROJECT_DIR}/out"]`,
//! `env: ["LANG"]`. Directories are expanded (`${PROJECT_DIR}`, `${HOME}`, a
//! leading `~`), made absolute against the hook file's directory, must exist,
//! and are preopened through cap-std at the same absolute path inside the
//! sandbox, so the paths an event carries (`cwd`, `transcript_path`) can be
//! opened as they are. cap-std refuses `..` escapes and symlinks that lead
//! out of a granted directory. Environment values are read once, at load.

use std::path::{Component, Path, PathBuf};

use wasmtime_wasi::{FsPerms, WasiCtxBuilder};

/// The capabilities granted to one wasm hook. The default grants nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Grants {
    /// Directories preopened, with whether they are writable.
    dirs: Vec<GrantedDir>,
    /// Environment variables passed through, with their values at load.
    env: Vec<(String, String)>,
}

/// One preopened directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantedDir {
    /// The directory, host and guest path alike.
    pub path: PathBuf,
    /// Whether the plugin may create, change and delete files in it.
    pub writable: bool,
}

/// Where grant paths are expanded and resolved.
#[derive(Clone)]
pub struct GrantBase<'a> {
    /// What `${PROJECT_DIR}` stands for.
    pub project_dir: &'a Path,
    /// Where relative paths start (the hook file's directory).
    pub relative_to: &'a Path,
    /// A variable's value (the process's environment, or a request's own
    /// over it), for the `env` grants.
    pub variable: &'a dyn Fn(&str) -> Option<String>,
}

impl std::fmt::Debug for GrantBase<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GrantBase")
            .field("project_dir", &self.project_dir)
            .field("relative_to", &self.relative_to)
            .finish_non_exhaustive()
    }
}

/// A grant that cannot be resolved, naming the field and entry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GrantError {
    /// A path that cannot be expanded (an unknown `${VARIABLE}`, …).
    #[error("{field}[{index}]: {message}")]
    BadPath {
        /// `allow_read` or `allow_write`.
        field: &'static str,
        /// The entry's place in the list.
        index: usize,
        /// What is wrong.
        message: String,
    },
    /// A path that is not an existing directory.
    #[error("{field}[{index}]: `{}` is not a directory (grants name existing directories)", path.display())]
    NotADirectory {
        /// `allow_read` or `allow_write`.
        field: &'static str,
        /// The entry's place in the list.
        index: usize,
        /// The path, expanded.
        path: PathBuf,
    },
    /// An `env` entry that is not a variable name.
    #[error("env[{index}]: `{name}` is not a variable name")]
    BadVariable {
        /// The entry's place in the list.
        index: usize,
        /// The name given.
        name: String,
    },
}

impl Grants {
    /// Grants from a hook entry's `allow_read`, `allow_write` and `env`
    /// lists. A directory in both lists is writable.
    ///
    /// # Errors
    /// A [`GrantError`] naming the field and entry (`allow_read[1]`): an
    /// unknown `${VARIABLE}`, a path that is not a directory, a variable
    /// name that is not a valid one.
    pub fn resolve(
        read: &[String],
        write: &[String],
        env: &[String],
        base: &GrantBase<'_>,
    ) -> Result<Self, GrantError> {
        let mut dirs: Vec<GrantedDir> = Vec::new();
        for (field, list, writable) in [("allow_write", write, true), ("allow_read", read, false)] {
            for (index, raw) in list.iter().enumerate() {
                let path = expand(raw, base).map_err(|message| GrantError::BadPath {
                    field,
                    index,
                    message,
                })?;
                if !path.is_dir() {
                    return Err(GrantError::NotADirectory { field, index, path });
                }
                if !dirs.iter().any(|d| d.path == path) {
                    dirs.push(GrantedDir { path, writable });
                }
            }
        }
        let mut vars = Vec::new();
        for (index, name) in env.iter().enumerate() {
            if name.is_empty() || name.contains(['=', '\0']) {
                return Err(GrantError::BadVariable {
                    index,
                    name: name.clone(),
                });
            }
            if let Some(value) = (base.variable)(name) {
                vars.push((name.clone(), value));
            }
        }
        Ok(Self { dirs, env: vars })
    }

    /// The granted directories.
    pub fn dirs(&self) -> &[GrantedDir] {
        &self.dirs
    }

    /// Whether every granted directory is read-only and inside `dir`, with
    /// symbolic links resolved on both sides (a grant of a link that leads
    /// out of `dir` is outside it). No grant at all is inside.
    pub fn read_only_within(&self, dir: &Path) -> bool {
        let Ok(dir) = dir.canonicalize() else {
            return self.dirs.is_empty();
        };
        self.dirs.iter().all(|granted| {
            !granted.writable
                && granted
                    .path
                    .canonicalize()
                    .is_ok_and(|real| real.starts_with(&dir))
        })
    }

    /// The names of the variables passed through (those set at load).
    pub fn env_names(&self) -> impl Iterator<Item = &str> {
        self.env.iter().map(|(name, _)| name.as_str())
    }

    /// Add the grants to a WASI context being built. Network use stays off:
    /// wasmtime-wasi denies TCP, UDP and name lookups unless enabled
    /// (`tests/hostile.rs` checks it against a listening port).
    ///
    /// # Errors
    /// When a granted directory can no longer be opened.
    pub(crate) fn apply(&self, wasi: &mut WasiCtxBuilder) -> Result<(), String> {
        wasi.envs(&self.env);
        for dir in &self.dirs {
            let perms = if dir.writable {
                FsPerms::ReadWrite
            } else {
                FsPerms::ReadOnly
            };
            let guest = dir.path.to_string_lossy();
            wasi.preopened_dir(&dir.path, &guest, perms)
                .map_err(|e| format!("cannot open granted `{}`: {e:#}", dir.path.display()))?;
        }
        Ok(())
    }
}

impl std::fmt::Display for Grants {
    /// `read /a, write /b, env LANG`, or `nothing`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts: Vec<String> = self
            .dirs
            .iter()
            .map(|d| {
                let mode = if d.writable { "write" } else { "read" };
                format!("{mode} {}", d.path.display())
            })
            .collect();
        if !self.env.is_empty() {
            parts.push(format!(
                "env {}",
                self.env_names().collect::<Vec<_>>().join(" ")
            ));
        }
        if parts.is_empty() {
            f.write_str("nothing")
        } else {
            f.write_str(&parts.join(", "))
        }
    }
}

/// Expand `${PROJECT_DIR}`, `${HOME}` and a leading `~`, make the path
/// absolute (against the current directory if the base is relative) and
/// remove `.` and `..` lexically.
fn expand(raw: &str, base: &GrantBase<'_>) -> Result<PathBuf, String> {
    let home = || std::env::var("HOME").map_err(|_| "HOME is not set".to_owned());
    let mut text = String::new();
    let mut rest = raw;
    if rest == "~" || rest.starts_with("~/") {
        text.push_str(&home()?);
        rest = &rest[1..];
    }
    while let Some(start) = rest.find("${") {
        text.push_str(&rest[..start]);
        let Some(len) = rest[start..].find('}') else {
            return Err(format!("`{raw}` has an unclosed `${{`"));
        };
        match &rest[start + 2..start + len] {
            "PROJECT_DIR" => text.push_str(&base.project_dir.to_string_lossy()),
            "HOME" => text.push_str(&home()?),
            other => {
                return Err(format!(
                    "unknown variable `${{{other}}}` in `{raw}` (use ${{PROJECT_DIR}}, ${{HOME}} or ~)"
                ));
            }
        }
        rest = &rest[start + len + 1..];
    }
    text.push_str(rest);
    let path = base.relative_to.join(text);
    // The sandbox mounts the directory at this path: it must be absolute
    // for the plugin's absolute paths to resolve.
    let path = std::path::absolute(&path).map_err(|e| format!("`{raw}`: {e}"))?;
    let mut clean = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                clean.pop();
            }
            Component::CurDir => {}
            other => clean.push(other),
        }
    }
    Ok(clean)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base(dir: &Path) -> GrantBase<'_> {
        GrantBase {
            project_dir: dir,
            relative_to: dir,
            variable: &|name| std::env::var(name).ok(),
        }
    }

    #[test]
    fn variables_and_relative_paths_are_expanded() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("out")).unwrap();
        let b = base(dir.path());
        assert_eq!(
            expand("${PROJECT_DIR}/out", &b).unwrap(),
            dir.path().join("out")
        );
        assert_eq!(expand("out/./x/..", &b).unwrap(), dir.path().join("out"));
        let home = PathBuf::from(std::env::var("HOME").unwrap());
        assert_eq!(expand("~", &b).unwrap(), home);
        assert_eq!(expand("${HOME}/x", &b).unwrap(), home.join("x"));
        let err = expand("${TMP}/x", &b).unwrap_err();
        assert!(err.contains("unknown variable `${TMP}`"), "{err}");
        assert!(
            expand("${PROJECT_DIR", &b)
                .unwrap_err()
                .contains("unclosed")
        );
    }

    #[test]
    fn write_wins_over_read_and_missing_dirs_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let b = base(dir.path());
        let d = dir.path().to_string_lossy().into_owned();
        let both = std::slice::from_ref(&d);
        let g = Grants::resolve(both, both, &[], &b).unwrap();
        assert_eq!(g.dirs().len(), 1);
        assert!(g.dirs()[0].writable);
        let err = Grants::resolve(&["nope".into()], &[], &[], &b).unwrap_err();
        assert!(
            matches!(
                err,
                GrantError::NotADirectory {
                    field: "allow_read",
                    index: 0,
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains("not a directory"), "{err}");
        let err = Grants::resolve(&[], &[], &["A=B".into()], &b).unwrap_err();
        assert_eq!(err.to_string(), "env[0]: `A=B` is not a variable name");
    }

    #[test]
    fn display_lists_what_is_granted() {
        let dir = tempfile::tempdir().unwrap();
        let b = base(dir.path());
        assert_eq!(Grants::default().to_string(), "nothing");
        let g = Grants::resolve(
            &[".".into()],
            &[],
            &["PATH".into(), "NOT_SET_X1".into()],
            &b,
        )
        .unwrap();
        assert_eq!(
            g.to_string(),
            format!("read {}, env PATH", dir.path().display())
        );
    }
}
