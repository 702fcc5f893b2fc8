//! What the guest-language builders share: the WIT world they build
//! against, running a tool, and writing files only where they differ
//! (never through a symbolic link).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

use super::write::{plain_dir, replace_file};

/// The WIT world Python and JavaScript plugins are built against: the
/// newest.
const WIT: &str = include_str!("../../../../wit/0.2.0/hook.wit");

/// The folder holding [`WIT`] under the cache directory, for the tools.
pub(super) fn wit_dir(cache: &Path) -> anyhow::Result<PathBuf> {
    write_files(&cache.join("wit/0.2.0"), &[("hook.wit", WIT)])
}

/// `program` (a path inside `dir`), installed into `dir` by `install` first
/// if it is not there, saying so: `what` names the tool and where it comes
/// from.
pub(super) fn installed(
    dir: &Path,
    program: &str,
    what: &str,
    install: impl FnOnce(&Path) -> anyhow::Result<()>,
) -> anyhow::Result<PathBuf> {
    let program = dir.join(program);
    if program.is_file() {
        return Ok(program);
    }
    eprintln!(
        "wasm-hooks: installing {what} into {} (once)",
        dir.display()
    );
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    install(dir)?;
    if !program.is_file() {
        bail!("installed {what}, but {} is not there", program.display());
    }
    Ok(program)
}

/// Run `command`; `what` names it in the error.
pub(super) fn run(command: &mut Command, what: &str) -> anyhow::Result<()> {
    let status = command.status().with_context(|| what.to_owned())?;
    if !status.success() {
        bail!("{what} failed ({status})");
    }
    Ok(())
}

/// `files` written into `dir` where they differ or are not regular files
/// (a symbolic link is replaced, not read); `dir`, made if missing and
/// refused if it is a symbolic link.
pub(super) fn write_files(dir: &Path, files: &[(&str, &str)]) -> anyhow::Result<PathBuf> {
    plain_dir(dir)?;
    for (name, text) in files {
        let path = dir.join(name);
        let same = std::fs::symlink_metadata(&path).is_ok_and(|meta| meta.is_file())
            && std::fs::read_to_string(&path).ok().as_deref() == Some(text);
        if !same {
            replace_file(&path, text.as_bytes())?;
        }
    }
    Ok(dir.to_owned())
}
