//! Every file an engine was built from (hook files and the places one
//! could appear, settings, the trust record, plugins, scripts, locks), as
//! they were: a long-lived host keeps its engine while they stay so, and
//! builds it again when one changes. Checking costs a `stat` per file; a
//! file whose `stat` changed is hashed, and only other bytes (or a file
//! that appeared or went) count as a change.

use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

use wasm_hooks_core::sha256_hex;

/// One input as it was.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Stamp {
    /// Not there.
    Absent,
    /// Written while an engine was built from it: which version the engine
    /// read is not known, so it is a change whatever is there next.
    Unknown,
    /// There, with this identity and these bytes.
    Present {
        dev: u64,
        ino: u64,
        len: u64,
        mtime_ns: i128,
        ctime_ns: i128,
        sha256: String,
        /// Whether the file had been changed long enough before it was
        /// stamped for its identity to be trusted: a file rewritten within
        /// the clock's granularity can keep its inode (reused), length and
        /// times, so a recent one is hashed on every check (git's "racily
        /// clean" files).
        settled: bool,
    },
}

/// How old a change must be when stamped for the identity to be trusted.
const SETTLED_AFTER_NS: i128 = 2_000_000_000;

impl Stamp {
    /// What is at `path` now; its hash only when `known` (the stamp it
    /// had) does not already match its identity.
    fn of(path: &Path, known: Option<&Stamp>) -> Stamp {
        let Ok(meta) = std::fs::metadata(path) else {
            return Stamp::Absent;
        };
        let (dev, ino, len) = (meta.dev(), meta.ino(), meta.len());
        let mtime_ns = i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec());
        let ctime_ns = i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec());
        let now_ns = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i128::try_from(d.as_nanos()).unwrap_or(i128::MAX));
        let settled = now_ns - mtime_ns.max(ctime_ns) > SETTLED_AFTER_NS;
        let identity = (dev, ino, len, mtime_ns, ctime_ns);
        if let Some(
            known @ Stamp::Present {
                sha256,
                settled: true,
                ..
            },
        ) = known
            && known.identity() == Some(identity)
        {
            return Stamp::Present {
                dev,
                ino,
                len,
                mtime_ns,
                ctime_ns,
                sha256: sha256.clone(),
                settled: true,
            };
        }
        let sha256 = if meta.is_file() {
            std::fs::read(path).map_or_else(|_| String::new(), |bytes| sha256_hex(&bytes))
        } else {
            String::new()
        };
        Stamp::Present {
            dev,
            ino,
            len,
            mtime_ns,
            ctime_ns,
            sha256,
            settled,
        }
    }

    /// Whether `self` and `other` are the same content (or both absent).
    fn same_content(&self, other: &Stamp) -> bool {
        match (self, other) {
            (Stamp::Absent, Stamp::Absent) => true,
            (Stamp::Present { sha256: a, .. }, Stamp::Present { sha256: b, .. }) => a == b,
            _ => false,
        }
    }

    /// Whether `self` and `other` are the same file as `stat` sees it (or
    /// both absent): a write, even of the same bytes, is another.
    fn same_identity(&self, other: &Stamp) -> bool {
        match (self, other) {
            (Stamp::Absent, Stamp::Absent) => true,
            _ => self.identity().is_some() && self.identity() == other.identity(),
        }
    }

    /// Device, inode, length, mtime and ctime, when the file is there.
    fn identity(&self) -> Option<(u64, u64, u64, i128, i128)> {
        match self {
            Stamp::Present {
                dev,
                ino,
                len,
                mtime_ns,
                ctime_ns,
                ..
            } => Some((*dev, *ino, *len, *mtime_ns, *ctime_ns)),
            _ => None,
        }
    }
}

/// The inputs of one engine, stamped.
#[derive(Debug, Clone, Default)]
pub struct InputStamps {
    stamps: Vec<(PathBuf, Stamp)>,
}

impl InputStamps {
    /// Stamp each of `paths` as it is now.
    pub fn of(paths: impl IntoIterator<Item = PathBuf>) -> Self {
        let mut paths: Vec<PathBuf> = paths.into_iter().collect();
        paths.sort();
        paths.dedup();
        Self {
            stamps: paths
                .into_iter()
                .map(|path| {
                    let stamp = Stamp::of(&path, None);
                    (path, stamp)
                })
                .collect(),
        }
    }

    /// These stamps, and `paths` not stamped yet, stamped now.
    pub fn with(mut self, paths: impl IntoIterator<Item = PathBuf>) -> Self {
        for path in paths {
            if !self.stamps.iter().any(|(known, _)| *known == path) {
                let stamp = Stamp::of(&path, None);
                self.stamps.push((path, stamp));
            }
        }
        self
    }

    /// The first input whose content changed (or that appeared or went)
    /// since it was stamped; inputs only touched are stamped again.
    pub fn changed(&mut self) -> Option<PathBuf> {
        for (path, stamp) in &mut self.stamps {
            let now = Stamp::of(path, Some(stamp));
            if !now.same_content(stamp) {
                return Some(path.clone());
            }
            *stamp = now;
        }
        None
    }

    /// Mark every file written since it was stamped as unknown, so that the
    /// next [`InputStamps::changed`] reports it: an engine built meanwhile
    /// may have read a version the stamp does not describe, and a file
    /// changed and changed back (`A`, `B`, `A`) has the stamp's content
    /// again while the engine holds `B`.
    pub(crate) fn unknown_if_written(&mut self) {
        for (path, stamp) in &mut self.stamps {
            if !Stamp::of(path, None).same_identity(stamp) {
                *stamp = Stamp::Unknown;
            }
        }
    }

    /// The stamped files.
    pub fn paths(&self) -> impl Iterator<Item = &Path> {
        self.stamps.iter().map(|(path, _)| path.as_path())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_touched_file_is_no_change_other_bytes_and_a_new_file_are() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("hooks.json");
        let later = dir.path().join("hooks.local.json");
        std::fs::write(&file, "{}").unwrap();
        let mut stamps = InputStamps::of([file.clone(), later.clone()]);
        assert_eq!(stamps.changed(), None);
        // The same bytes written again: a new identity, the same content.
        std::fs::write(&file, "{}").unwrap();
        assert_eq!(stamps.changed(), None);
        std::fs::write(&file, "{\"hooks\": {}}").unwrap();
        assert_eq!(stamps.changed(), Some(file.clone()));
        let mut stamps = InputStamps::of([file, later.clone()]);
        std::fs::write(&later, "{}").unwrap();
        assert_eq!(stamps.changed(), Some(later));
    }

    /// A file rewritten while an engine was built from it, then back to
    /// what was stamped (the engine may hold the middle version), is a
    /// change: the next check builds again.
    #[test]
    fn a_file_written_back_during_a_build_is_still_a_change() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("hooks.json");
        let write = |text: &str| {
            let temporary = file.with_extension("tmp");
            std::fs::write(&temporary, text).unwrap();
            std::fs::rename(&temporary, &file).unwrap();
        };
        write("{\"a\": 1}");
        let mut stamps = InputStamps::of([file.clone()]);
        // The build reads version B…
        write("{\"b\": 2}");
        // …and the file is back to A when the build ends.
        write("{\"a\": 1}");
        let mut unmarked = stamps.clone();
        assert_eq!(
            unmarked.changed(),
            None,
            "by content alone, nothing changed"
        );
        stamps.unknown_if_written();
        assert_eq!(stamps.changed(), Some(file.clone()));
        // Untouched since: no change.
        let mut settled = InputStamps::of([file]);
        settled.unknown_if_written();
        assert_eq!(settled.changed(), None);
    }
}
