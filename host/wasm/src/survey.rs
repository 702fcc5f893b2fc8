//! [`CacheSurvey`]: what a compile cache holds for one engine and what of
//! it is stale, filled in by the cache (entries, other engines' directories)
//! and by the digest index (records).

use std::path::PathBuf;

/// What a compile cache holds for one engine, and what of it is stale.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct CacheSurvey {
    /// How many entries this engine has.
    pub entries: u64,
    /// The bytes of those entries.
    pub entries_bytes: u64,
    /// Directories of other engines (another wasmtime version or other
    /// settings): never looked up by this build.
    pub other_engines: Vec<PathBuf>,
    /// The bytes in those directories.
    pub other_engines_bytes: u64,
    /// How many digest records there are.
    pub records: usize,
    /// Digest records whose file is gone or changed.
    pub stale_records: Vec<PathBuf>,
    /// Temporary files of writes that never finished (older than an hour).
    pub temporary: Vec<PathBuf>,
    /// Winch's entries for plugins Cranelift has compiled since: never
    /// loaded again.
    pub superseded: Vec<PathBuf>,
}

impl CacheSurvey {
    /// Whether there is anything to prune.
    pub fn is_clean(&self) -> bool {
        self.other_engines.is_empty()
            && self.stale_records.is_empty()
            && self.temporary.is_empty()
            && self.superseded.is_empty()
    }

    /// Remove what this survey found stale: other engines' directories,
    /// digest records that no longer match their file, abandoned temporary
    /// files, superseded baseline entries. This engine's entries stay.
    ///
    /// # Errors
    /// When something cannot be removed (what was removed before stays
    /// removed).
    pub fn prune(&self) -> std::io::Result<()> {
        for dir in &self.other_engines {
            std::fs::remove_dir_all(dir)?;
        }
        for file in self
            .stale_records
            .iter()
            .chain(&self.temporary)
            .chain(&self.superseded)
        {
            match std::fs::remove_file(file) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
        Ok(())
    }
}
