//! Writing into a plugin's folder without writing through a symbolic link
//! planted there: a cloned repository's `build/`, or its `build/x.wasm`,
//! may be a link to a file of the person's (`~/.bashrc`) that a plain
//! write would overwrite. Files are replaced, never written in place;
//! folders that are links are refused.

use std::io::Write as _;
use std::path::Path;

use anyhow::{Context, bail};

/// `bytes` as the file at `path`: written to a new file beside it (never
/// an existing one), then renamed over `path`, which replaces a symbolic
/// link there rather than its target.
pub(super) fn replace_file(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let name = path
        .file_name()
        .with_context(|| format!("{} names no file", path.display()))?;
    let temporary = path.with_file_name(format!(
        ".{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temporary)
        .with_context(|| format!("creating {}", temporary.display()))?;
    let written = file.write_all(bytes);
    drop(file);
    if let Err(e) = written.and_then(|()| std::fs::rename(&temporary, path)) {
        // Nothing half-written is left behind; the error told is the write's.
        let _ = std::fs::remove_file(&temporary);
        return Err(e).with_context(|| format!("writing {}", path.display()));
    }
    Ok(())
}

/// Make sure `dir` is a folder of its own to write into: created when
/// missing, refused when it is a symbolic link (or not a folder).
pub(super) fn plain_dir(dir: &Path) -> anyhow::Result<()> {
    match std::fs::symlink_metadata(dir) {
        Ok(meta) if meta.file_type().is_symlink() => bail!(
            "{} is a symbolic link; refusing to write through it",
            dir.display()
        ),
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => bail!("{} is not a folder", dir.display()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))
        }
        Err(e) => Err(e).with_context(|| format!("reading {}", dir.display())),
    }
}

/// Remove a symbolic link at `path` (the link, not its target), so that a
/// tool writing its output there makes a file of its own.
pub(super) fn remove_symlink(path: &Path) -> anyhow::Result<()> {
    let linked = std::fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_symlink());
    if linked {
        std::fs::remove_file(path)
            .with_context(|| format!("removing the symbolic link {}", path.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replace_file_replaces_a_symlink_and_leaves_its_target_alone() {
        let dir = tempfile::tempdir().unwrap();
        let secret = dir.path().join("bashrc");
        std::fs::write(&secret, "the person's own").unwrap();
        let output = dir.path().join("plugin.wasm");
        std::os::unix::fs::symlink(&secret, &output).unwrap();
        replace_file(&output, b"built").unwrap();
        assert_eq!(
            std::fs::read_to_string(&secret).unwrap(),
            "the person's own"
        );
        assert!(!output.symlink_metadata().unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_to_string(&output).unwrap(), "built");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 2, "no temporary file left: {names:?}");
    }

    #[test]
    fn a_symlinked_build_folder_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        let build = dir.path().join("build");
        std::os::unix::fs::symlink(&elsewhere, &build).unwrap();
        let message = plain_dir(&build).unwrap_err().to_string();
        assert!(
            message.contains("build is a symbolic link; refusing to write through it"),
            "{message}"
        );
        let fresh = dir.path().join("fresh/build");
        plain_dir(&fresh).unwrap();
        assert!(fresh.is_dir(), "a missing folder is made");
    }

    #[test]
    fn a_symlink_at_a_tools_output_is_removed_not_its_target() {
        let dir = tempfile::tempdir().unwrap();
        let secret = dir.path().join("id_rsa");
        std::fs::write(&secret, "key").unwrap();
        let output = dir.path().join("plugin.wasm");
        std::os::unix::fs::symlink(&secret, &output).unwrap();
        remove_symlink(&output).unwrap();
        assert!(output.symlink_metadata().is_err(), "the link is gone");
        assert_eq!(std::fs::read_to_string(&secret).unwrap(), "key");
        remove_symlink(&secret).unwrap();
        assert!(secret.is_file(), "a plain file is left alone");
    }
}
