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
    // One build installs it; another one starting meanwhile waits for it.
    let parent = dir.parent().unwrap_or(dir);
    std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    let mut lock_name = dir.file_name().unwrap_or_default().to_os_string();
    lock_name.push(".lock");
    let _installing = locked(&parent.join(lock_name))?;
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

/// An exclusive lock on the file `path` (made if missing, never through a
/// symbolic link), held until the file is dropped: so that two builds at
/// once do not install one tool twice, or build the same sources twice;
/// the second waits, then takes what the first made.
pub(super) fn locked(path: &Path) -> anyhow::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .with_context(|| format!("opening the lock {}", path.display()))?;
    file.lock()
        .with_context(|| format!("waiting for the lock {}", path.display()))?;
    Ok(file)
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
