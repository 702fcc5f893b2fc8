//! The sha256 of each plugin file as last read, remembered by the file's
//! identity, so that a fresh process whose compiled entry is in the cache
//! never reads nor hashes the plugin itself (a third of a cached load).
//!
//! A record is `<cache dir>/digests/<hash of the path>`: one line with the
//! file's device, inode, length, modification and change times, this
//! host's WIT package (the record also says the file's WIT stamps fit it)
//! and the sha256, and a second with the path (so that a record whose file
//! is gone or changed can be pruned). Any write to the file moves its change time, which no
//! unprivileged process can set back, so a changed file never matches its
//! old record. A file changed less than a second before it was read is not
//! recorded: a second write within the clock's resolution could otherwise
//! go unseen. Records are trusted like cache entries: only when this user
//! owns them and nobody else can write them.

use std::fs::Metadata;
use std::io::{Read as _, Write as _};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use super::survey::CacheSurvey;
use super::world::WIT_PACKAGE;
use wasm_hooks_core::sha256_hex;

/// The third line of a record: the plugin's config schema, or that it
/// carries none.
const SCHEMA: &str = "config-schema ";
const NO_SCHEMA: &str = "no-config-schema";

/// How long a file must have been left alone before its digest is
/// recorded.
const SETTLED: Duration = Duration::from_secs(1);

/// What tells one version of a file from another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct FileId {
    dev: u64,
    ino: u64,
    len: u64,
    mtime_ns: i128,
    ctime_ns: i128,
}

impl FileId {
    /// The identity of the file at `path` now.
    pub(super) fn of(path: &Path) -> std::io::Result<Self> {
        Ok(Self::of_meta(&std::fs::metadata(path)?))
    }

    /// The identity of a file with this metadata.
    pub(super) fn of_meta(meta: &Metadata) -> Self {
        let ns = |secs: i64, nanos: i64| i128::from(secs) * 1_000_000_000 + i128::from(nanos);
        Self {
            dev: meta.dev(),
            ino: meta.ino(),
            len: meta.len(),
            mtime_ns: ns(meta.mtime(), meta.mtime_nsec()),
            ctime_ns: ns(meta.ctime(), meta.ctime_nsec()),
        }
    }

    /// The identity in words, as a sidecar keeps it.
    pub(super) fn text(&self) -> String {
        format!(
            "{} {} {} {} {}",
            self.dev, self.ino, self.len, self.mtime_ns, self.ctime_ns
        )
    }

    /// Whether the file was last changed long enough ago to be recorded.
    fn settled(&self) -> bool {
        let now = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as i128);
        now - self.ctime_ns >= SETTLED.as_nanos() as i128
    }

    /// The start of this version's record, up to the sha256.
    fn key(&self) -> String {
        format!(
            "{} {} {} {} {} {WIT_PACKAGE} ",
            self.dev, self.ino, self.len, self.mtime_ns, self.ctime_ns
        )
    }
}

/// The digests recorded in a compile cache's directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct DigestIndex {
    dir: PathBuf,
}

impl DigestIndex {
    /// The index of the cache in `cache_dir`.
    pub(super) fn new(cache_dir: &Path) -> Self {
        Self {
            dir: cache_dir.join("digests"),
        }
    }

    fn record(&self, plugin: &Path) -> PathBuf {
        let mut name = sha256_hex(plugin.as_os_str().as_encoded_bytes());
        name.truncate(32);
        self.dir.join(name)
    }

    /// The sha256 of the plugin at `plugin` when its record matches `id`,
    /// and the config schema the plugin carries (a record without the
    /// schema line is not used).
    pub(super) fn lookup(&self, plugin: &Path, id: &FileId) -> Option<(String, Option<Arc<str>>)> {
        let mut file = std::fs::File::open(self.record(plugin)).ok()?;
        if !owned_by_me_only(&file.metadata().ok()?) {
            return None;
        }
        let mut text = String::new();
        file.read_to_string(&mut text).ok()?;
        let mut lines = text.strip_prefix(&id.key())?.lines();
        let sha256 = lines.next()?;
        let _path = lines.next()?;
        let schema = match lines.next()? {
            NO_SCHEMA => None,
            line => Some(Arc::from(line.strip_prefix(SCHEMA)?)),
        };
        (sha256.len() == 64 && sha256.bytes().all(|b| b.is_ascii_hexdigit()))
            .then(|| (sha256.to_owned(), schema))
    }

    /// Record that the plugin at `plugin`, as of `id` (taken before it was
    /// read), has this sha256. Failures are only logged: the index saves
    /// time, it is never needed.
    pub(super) fn remember(
        &self,
        plugin: &Path,
        id: &FileId,
        sha256: &str,
        config_schema: Option<&str>,
    ) {
        if !id.settled() {
            return;
        }
        let write = || -> std::io::Result<()> {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&self.dir)?;
            let mut file = tempfile::NamedTempFile::new_in(&self.dir)?;
            writeln!(file, "{}{sha256}", id.key())?;
            file.write_all(plugin.as_os_str().as_bytes())?;
            writeln!(file)?;
            match config_schema {
                // One line: the schema as compact JSON (valid JSON text
                // has no raw newline outside strings, and strings none).
                Some(schema) => match serde_json::from_str::<serde_json::Value>(schema) {
                    Ok(value) => writeln!(file, "{SCHEMA}{value}")?,
                    Err(_) => writeln!(file, "{SCHEMA}{}", schema.replace('\n', " "))?,
                },
                None => writeln!(file, "{NO_SCHEMA}")?,
            }
            file.persist(self.record(plugin)).map_err(|e| e.error)?;
            Ok(())
        };
        if let Err(e) = write() {
            tracing::debug!(plugin = %plugin.display(), "digest index: cannot write: {e}");
        }
    }

    /// Add to `survey` every record, those of them that no longer match
    /// their file (gone, changed, or recorded by a host of another WIT
    /// version), and abandoned temporary files.
    pub(super) fn survey(&self, survey: &mut CacheSurvey) -> std::io::Result<()> {
        for path in read_dir_if_any(&self.dir)? {
            if is_temporary(&path) {
                if is_abandoned(&path) {
                    survey.temporary.push(path);
                }
                continue;
            }
            survey.records += 1;
            if !record_matches_its_file(&path) {
                survey.stale_records.push(path);
            }
        }
        Ok(())
    }
}

/// Whether the record at `record` still describes the file it names.
fn record_matches_its_file(record: &Path) -> bool {
    let Ok(text) = std::fs::read(record) else {
        return false;
    };
    let mut lines = text.split(|b| *b == b'\n');
    let (Some(first), Some(path)) = (lines.next(), lines.next()) else {
        return false;
    };
    let plugin = Path::new(std::ffi::OsStr::from_bytes(path));
    FileId::of(plugin).is_ok_and(|id| first.starts_with(id.key().as_bytes()))
}

/// Whether `path` is a temporary file of an unfinished (or crashed) write.
pub(super) fn is_temporary(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|name| name.as_encoded_bytes().starts_with(b".tmp"))
}

/// Whether a temporary file has sat for so long (an hour) that no write in
/// progress can own it.
pub(super) fn is_abandoned(path: &Path) -> bool {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .is_ok_and(|t| t.elapsed().is_ok_and(|age| age > Duration::from_secs(3600)))
}

/// The paths in `dir`; none when it does not exist.
pub(super) fn read_dir_if_any(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    match std::fs::read_dir(dir) {
        Ok(entries) => entries.map(|e| e.map(|e| e.path())).collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

/// Whether this user owns the file and nobody else may write it.
pub(super) fn owned_by_me_only(meta: &Metadata) -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    meta.uid() == me && meta.mode() & 0o022 == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_gives_back_the_sha256_and_the_config_schema() {
        let dir = tempfile::tempdir().unwrap();
        let index = DigestIndex::new(dir.path());
        let plugin = dir.path().join("plugin.wasm");
        std::fs::write(&plugin, b"x").unwrap();
        // A version changed long ago, so that it is recorded.
        let id = FileId {
            ctime_ns: 0,
            ..FileId::of(&plugin).unwrap()
        };
        let sha = "a".repeat(64);
        index.remember(&plugin, &id, &sha, Some("{\n \"type\": \"object\"\n}"));
        let (found, schema) = index.lookup(&plugin, &id).unwrap();
        assert_eq!(found, sha);
        assert_eq!(schema.as_deref(), Some(r#"{"type":"object"}"#));
        index.remember(&plugin, &id, &sha, None);
        assert_eq!(index.lookup(&plugin, &id), Some((sha, None)));
        // A record of an older build, without the schema line, is not used.
        std::fs::write(
            index.record(&plugin),
            format!("{}{}\n/p\n", id.key(), "a".repeat(64)),
        )
        .unwrap();
        assert_eq!(index.lookup(&plugin, &id), None);
    }
}
