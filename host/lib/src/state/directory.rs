//! [`DirectoryStore`]: the session state of a process per event
//! (`wasm-hooks hook`), in a private directory: a `once` mark is an empty
//! file created exclusively (of two events racing, one makes it), a
//! counter a small file removed when it is 0. It keeps no maps: in a
//! process per event, a plugin's `kv` values last one event.

use std::path::PathBuf;

use wasm_hooks_core::{MapChange, SessionStore, StoreError};

use super::files::{create_private_dir, file_name};

/// Session state in files under one directory (`marks/`, `counts/`).
#[derive(Debug, Clone)]
pub struct DirectoryStore {
    dir: PathBuf,
}

impl DirectoryStore {
    /// A store in `dir` (made, readable by the user only, on first write).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    fn file(&self, kind: &str, key: &str) -> PathBuf {
        self.dir.join(kind).join(file_name(key, kind))
    }
}

fn failed(path: &std::path::Path, e: &std::io::Error) -> StoreError {
    StoreError::Unreachable(format!("{}: {e}", path.display()))
}

impl SessionStore for DirectoryStore {
    fn set_once(&self, key: &str) -> Result<bool, StoreError> {
        let file = self.file("marks", key);
        let parent = file.parent().unwrap_or(&self.dir);
        let created = create_private_dir(parent).and_then(|()| {
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&file)
        });
        match created {
            Ok(_) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
            Err(e) => Err(failed(&file, &e)),
        }
    }

    fn count(&self, key: &str) -> Result<u32, StoreError> {
        let file = self.file("counts", key);
        match std::fs::read_to_string(&file) {
            Ok(text) => Ok(text.trim().parse().unwrap_or(0)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(0),
            Err(e) => Err(failed(&file, &e)),
        }
    }

    fn set_count(&self, key: &str, value: u32) -> Result<(), StoreError> {
        let file = self.file("counts", key);
        let written = if value == 0 {
            std::fs::remove_file(&file).or_else(|e| match e.kind() {
                std::io::ErrorKind::NotFound => Ok(()),
                _ => Err(e),
            })
        } else {
            create_private_dir(file.parent().unwrap_or(&self.dir))
                .and_then(|()| std::fs::write(&file, value.to_string()))
        };
        written.map_err(|e| failed(&file, &e))
    }

    fn map_get(&self, _: &str, _: &str) -> Result<Option<String>, StoreError> {
        Err(StoreError::NoMaps)
    }

    fn map_commit(&self, _: &str, _: &MapChange, _: usize) -> Result<bool, StoreError> {
        Err(StoreError::NoMaps)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_and_counts_outlive_the_process_and_a_zero_count_leaves_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let store = DirectoryStore::new(dir.path().join("state"));
        assert_eq!(store.set_once("s1:greet"), Ok(true));
        let again = DirectoryStore::new(dir.path().join("state"));
        assert_eq!(again.set_once("s1:greet"), Ok(false), "another process");
        assert_eq!(store.count("stops:s1"), Ok(0));
        store.set_count("stops:s1", 2).unwrap();
        assert_eq!(again.count("stops:s1"), Ok(2));
        store.set_count("stops:s1", 0).unwrap();
        let left = std::fs::read_dir(dir.path().join("state/counts")).unwrap();
        assert_eq!(left.count(), 0);
        assert_eq!(store.map_get("m", "k"), Err(StoreError::NoMaps));
    }
}
