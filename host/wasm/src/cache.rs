//! The on-disk cache of compiled plugins, so a fresh process deserializes a
//! plugin (well under a millisecond) instead of compiling it (hundreds).
//!
//! An entry is `<dir>/<compiler>-<engine key>/<plugin sha256>.cwasm`: the
//! compiler (`cranelift` or `winch`, see `tier`) and the engine key, which
//! covers wasmtime's version and every setting that changes compiled code
//! (`Engine::precompile_compatibility_hash`), name the directory; the
//! plugin's hash covers its bytes, so a stale entry is never looked up.
//! Entries are written to a temporary file and renamed into place, so a
//! concurrent reader sees a whole entry or none; who compiles an entry
//! holds its lock ([`EntryLock`], `<entry>.lock`), so two processes never
//! compile the same plugin with the same compiler at once. Each entry is wasmtime's artifact followed by a
//! trailer: a magic tag, the artifact's length and its CRC-32
//! (hardware-accelerated; it guards against damage, the file's ownership
//! against tampering). A truncated or corrupt file is recompiled, never
//! deserialized. An entry is made durable (synced) before it is renamed
//! into place, and checked whole once: its `<entry>.checked` sidecar then
//! holds its identity (device, inode, length, change times), and a later
//! load of the same file skips reading all of it (for a Python plugin,
//! 40 MB: most of a cold process's start). A good entry is mapped, not
//! read: only the pages a call touches are ever loaded, which is what makes
//! a cold process cheap.
//! Entries owned by another user, or writable by others, are ignored too
//! (deserializing trusts the bytes to be wasmtime's own). Beside the
//! entries, `digests/` remembers each plugin file's sha256 (see
//! `digests`).

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use wasmtime::Engine;
use wasmtime::component::Component;

use super::digests::{
    DigestIndex, FileId, is_abandoned, is_temporary, owned_by_me_only, read_dir_if_any,
};
use super::survey::CacheSurvey;

/// The tag that starts every trailer; the version changes with the layout.
const MAGIC: &[u8; 8] = b"WHCACHE2";
/// The trailer: the tag, the artifact's length (u64) and CRC-32 (u32),
/// little-endian.
const TRAILER_LEN: usize = MAGIC.len() + 8 + 4;

/// A directory of compiled plugins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompileCache {
    dir: PathBuf,
    digests: DigestIndex,
}

impl CompileCache {
    /// A cache in `dir` (created, mode 0700, on first write).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        let dir = dir.into();
        Self {
            digests: DigestIndex::new(&dir),
            dir,
        }
    }

    /// The plugins' digests, remembered beside the entries.
    pub(super) fn digests(&self) -> &DigestIndex {
        &self.digests
    }

    /// The default directory: `$WASM_HOOKS_CACHE_DIR` when it names a
    /// directory of the person's own outside every project
    /// ([`wasm_hooks_core::personal_dir`]: the agent may hand a
    /// repository's variables to its hooks, and a cache entry is native
    /// code), else `$XDG_CACHE_HOME/wasm-hooks`, else
    /// `~/.cache/wasm-hooks`; none when none of these is set.
    pub fn default_dir() -> Option<PathBuf> {
        wasm_hooks_core::personal_dir_from_env("WASM_HOOKS_CACHE_DIR", wasm_hooks_core::Owner::Me)
            .or_else(|| {
                wasm_hooks_core::xdg_dir("XDG_CACHE_HOME", ".cache").map(|d| d.join("wasm-hooks"))
            })
    }

    /// The cache directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the entry of a plugin with hash `plugin_sha256` compiled by an
    /// engine with key `engine_key` lives.
    pub(crate) fn entry(&self, engine_key: &str, plugin_sha256: &str) -> PathBuf {
        self.dir
            .join(engine_key)
            .join(format!("{plugin_sha256}.cwasm"))
    }

    /// The compiled component at `entry`: `Ok(None)` when there is none,
    /// `Err` when there is one that cannot be used (the caller recompiles
    /// and overwrites it).
    pub(crate) fn load(&self, engine: &Engine, entry: &Path) -> Result<Option<Component>, String> {
        let file = match std::fs::File::open(entry) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("cannot open it: {e}")),
        };
        let meta = file
            .metadata()
            .map_err(|e| format!("cannot stat it: {e}"))?;
        if !owned_by_me_only(&meta) {
            return Err("owned by another user or writable by others: not trusted".into());
        }
        let identity = FileId::of_meta(&meta).text();
        if !checked_before(entry, &identity) {
            // SAFETY: entries are only ever replaced by renaming a new file
            // over them, never written in place, so the mapped bytes cannot
            // change.
            let bytes =
                unsafe { memmap2::Mmap::map(&file) }.map_err(|e| format!("cannot map it: {e}"))?;
            checked_artifact(&bytes)?;
            mark_checked(entry, &identity);
        }
        // SAFETY: the file holds byte for byte what `Component::serialize`
        // wrote (its length and CRC match the trailer), only this user can
        // write it, and its key includes the engine's compatibility hash;
        // wasmtime re-checks the version and settings, and ignores the
        // trailer after the artifact.
        unsafe { Component::deserialize_file(engine, entry) }
            .map(Some)
            .map_err(|e| format!("incompatible entry: {e:#}"))
    }

    /// Write `component` as the entry at `entry`, atomically.
    ///
    /// # Errors
    /// When the directory or the file cannot be written.
    pub(crate) fn store(&self, entry: &Path, component: &Component) -> std::io::Result<()> {
        let payload = component.serialize().map_err(std::io::Error::other)?;
        let dir = entry.parent().unwrap_or(&self.dir);
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
        let mut file = tempfile::NamedTempFile::new_in(dir)?;
        file.write_all(&payload)?;
        file.write_all(&trailer(&payload))?;
        // On disk before its name is: a crash never leaves a whole name
        // over bytes that did not make it.
        file.as_file().sync_all()?;
        file.persist(entry).map_err(|e| e.error)?;
        // Written whole from these bytes: as good as checked.
        if let Ok(meta) = std::fs::metadata(entry) {
            mark_checked(entry, &FileId::of_meta(&meta).text());
        }
        Ok(())
    }
}

/// The sidecar that says an entry was checked whole, as it was then.
fn checked_mark(entry: &Path) -> PathBuf {
    let mut name = entry.as_os_str().to_owned();
    name.push(".checked");
    PathBuf::from(name)
}

/// Whether `entry`, whose identity is `identity`, was checked whole as it
/// is: its sidecar (this user's own) holds that identity.
fn checked_before(entry: &Path, identity: &str) -> bool {
    let mark = checked_mark(entry);
    std::fs::symlink_metadata(&mark).is_ok_and(|meta| meta.is_file() && owned_by_me_only(&meta))
        && std::fs::read_to_string(&mark).is_ok_and(|text| text == identity)
}

/// Say `entry`, whose identity is `identity`, was checked whole (a
/// failure only costs the next load a check).
fn mark_checked(entry: &Path, identity: &str) {
    let mark = checked_mark(entry);
    let written = tempfile::NamedTempFile::new_in(mark.parent().unwrap_or(Path::new(".")))
        .and_then(|mut file| {
            file.write_all(identity.as_bytes())?;
            file.persist(&mark).map(drop).map_err(|e| e.error)
        });
    if let Err(e) = written {
        tracing::debug!(entry = %entry.display(), "compile cache: cannot mark it checked: {e}");
    }
}

impl CompileCache {
    /// What the cache holds for the engines whose keys are `optimizing`
    /// and `baseline` (see `tier`), its digest records included. Winch's
    /// entries for which Cranelift's is there are superseded: never loaded
    /// again.
    pub(crate) fn survey(
        &self,
        optimizing: &str,
        baseline: Option<&str>,
    ) -> std::io::Result<CacheSurvey> {
        let mut survey = CacheSurvey::default();
        for dir in read_dir_if_any(&self.dir)? {
            let Some(name) = dir.file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            if name == optimizing || Some(name) == baseline {
                for file in read_dir_if_any(&dir)? {
                    if is_temporary(&file) {
                        if is_abandoned(&file) {
                            survey.temporary.push(file);
                        }
                        continue;
                    }
                    if file
                        .extension()
                        .is_some_and(|e| e == "lock" || e == "checked")
                    {
                        continue;
                    }
                    let superseded = name != optimizing
                        && file
                            .file_name()
                            .is_some_and(|entry| self.dir.join(optimizing).join(entry).is_file());
                    if superseded {
                        survey.superseded.push(file);
                    } else {
                        survey.entries += 1;
                        survey.entries_bytes += std::fs::metadata(&file).map_or(0, |m| m.len());
                    }
                }
            } else if is_engine_dir(name) && dir.is_dir() {
                survey.other_engines_bytes += bytes_in(&dir);
                survey.other_engines.push(dir);
            }
        }
        self.digests.survey(&mut survey)?;
        Ok(survey)
    }
}

/// Whether `name` is an engine's directory: `<compiler>-<16 hex digits>`,
/// or the 16 hex digits alone of the layout before compilers were named.
fn is_engine_dir(name: &str) -> bool {
    let hash = ["cranelift-", "winch-"]
        .iter()
        .find_map(|compiler| name.strip_prefix(compiler))
        .unwrap_or(name);
    hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The lock of one cache entry, held while it is compiled: a file beside
/// it (`<entry>.lock`), locked with `flock`, released when dropped or when
/// its process ends however it ends. Lock files stay (removing one could
/// let a third process lock a new file while the second holds the old).
#[derive(Debug)]
pub(crate) struct EntryLock(#[allow(dead_code, reason = "held for its lock")] std::fs::File);

impl EntryLock {
    /// The lock of `entry`, waiting for whoever holds it.
    ///
    /// # Errors
    /// When the lock file cannot be made or locked.
    pub(crate) fn wait(entry: &Path) -> std::io::Result<Self> {
        let file = Self::file(entry)?;
        file.lock()?;
        Ok(Self(file))
    }

    /// The lock of `entry` if nobody holds it.
    ///
    /// # Errors
    /// When the lock file cannot be made or locked.
    pub(crate) fn try_take(entry: &Path) -> std::io::Result<Option<Self>> {
        let file = Self::file(entry)?;
        match file.try_lock() {
            Ok(()) => Ok(Some(Self(file))),
            Err(std::fs::TryLockError::WouldBlock) => Ok(None),
            Err(std::fs::TryLockError::Error(e)) => Err(e),
        }
    }

    /// The lock file of `entry`, made (mode 0600, its directory 0700) if
    /// missing.
    fn file(entry: &Path) -> std::io::Result<std::fs::File> {
        if let Some(dir) = entry.parent() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)?;
        }
        let mut name = entry.as_os_str().to_owned();
        name.push(".lock");
        std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(PathBuf::from(name))
    }
}

/// The bytes of the files directly in `dir`.
fn bytes_in(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|f| f.ok()?.metadata().ok())
        .map(|m| m.len())
        .sum()
}

/// The trailer that follows this artifact.
fn trailer(artifact: &[u8]) -> Vec<u8> {
    let mut trailer = MAGIC.to_vec();
    trailer.extend_from_slice(&(artifact.len() as u64).to_le_bytes());
    trailer.extend_from_slice(&crc32fast::hash(artifact).to_le_bytes());
    trailer
}

/// Check an entry's trailer against its artifact.
fn checked_artifact(bytes: &[u8]) -> Result<(), String> {
    let Some(split) = bytes.len().checked_sub(TRAILER_LEN) else {
        return Err("not a wasm-hooks cache entry (or cut short)".into());
    };
    let (artifact, tail) = bytes.split_at(split);
    if &tail[..MAGIC.len()] != MAGIC {
        return Err("not a wasm-hooks cache entry (or cut short)".into());
    }
    if tail != trailer(artifact).as_slice() {
        return Err("length or checksum mismatch: the entry is damaged".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn damaged_entries_are_refused_before_deserializing() {
        let artifact = b"compiled code".to_vec();
        let mut entry = artifact.clone();
        entry.extend_from_slice(&trailer(&artifact));
        checked_artifact(&entry).unwrap();
        let mut flipped = entry.clone();
        flipped[0] ^= 1;
        assert!(checked_artifact(&flipped).unwrap_err().contains("damaged"));
        assert!(
            checked_artifact(&entry[1..])
                .unwrap_err()
                .contains("damaged")
        );
        assert!(
            checked_artifact(&entry[..entry.len() - 1])
                .unwrap_err()
                .contains("cut short")
        );
        assert!(
            checked_artifact(b"\0asm")
                .unwrap_err()
                .contains("cut short")
        );
    }
}
