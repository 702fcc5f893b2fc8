//! What one call was refused (the shadows of the WASI filesystem in
//! `refusals.rs` record it here), and the empty directory a guest
//! sees as `/`.

use wasmtime_wasi::filesystem::Dir;
use wasmtime_wasi::p2::bindings::filesystem::types;
use wasmtime_wasi::{FsPerms, OpenMode};

/// The directory every call sees as `/`: opened once per runtime, read-only,
/// and removed at once, so it is empty and stays so (nothing can be created
/// in a removed directory).
#[derive(Default)]
pub(crate) struct SandboxRoot {
    /// Made when a guest first asks for its preopens: most never do, and a
    /// process answering one event pays for no directory it does not use
    /// (a `mkdir`, an `rmdir` and a close, 0.37 ms on ext4).
    dir: std::sync::OnceLock<Dir>,
}

impl SandboxRoot {
    /// The empty directory: made, opened and removed on first use.
    pub(super) fn dir(&self) -> std::io::Result<Dir> {
        if let Some(dir) = self.dir.get() {
            return Ok(dir.clone());
        }
        let made = tempfile::Builder::new()
            .prefix("wasm-hooks-sandbox-root-")
            .tempdir()?;
        let file = std::fs::File::open(made.path())?;
        made.close()?;
        let dir = Dir::new(file, FsPerms::ReadOnly, OpenMode::READ, false);
        Ok(self.dir.get_or_init(|| dir).clone())
    }
}

/// One call's refused paths, and the guest path of each preopened
/// descriptor.
pub(crate) struct Refusals {
    pub(super) root: std::sync::Arc<SandboxRoot>,
    /// The root's descriptor, once the guest has asked for its preopens
    /// (none when `/` itself is granted).
    pub(super) root_rep: Option<u32>,
    /// The guest path of each preopened descriptor.
    pub(super) preopened: Vec<(u32, String)>,
    /// What was refused, each once, in the order refused.
    pub(crate) refused: Vec<Refusal>,
}

/// One refused call.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Refusal {
    /// `open` or `stat`.
    pub(crate) what: &'static str,
    /// The path, as the guest named it.
    pub(crate) path: String,
    /// Why, in words.
    pub(crate) why: &'static str,
}

/// Why a path outside every grant is refused.
const OUTSIDE: &str = "not within the grants";
/// Why cap-std refused a path on a granted directory.
const NOT_ALLOWED: &str =
    "not allowed by the grants (it leads out of a granted directory, or writes to a read-only one)";

/// Why an open of a FIFO, socket or device is refused.
const NOT_A_FILE: &str =
    "not a regular file or directory (a FIFO, socket or device could block the host)";

/// How many distinct refusals one call remembers; more are not reported.
const MAX_REMEMBERED: usize = 32;

impl Refusals {
    /// Nothing refused yet; `root` is preopened as `/` when the guest asks.
    pub(crate) fn new(root: &std::sync::Arc<SandboxRoot>) -> Self {
        Self {
            root: std::sync::Arc::clone(root),
            root_rep: None,
            preopened: Vec::new(),
            refused: Vec::new(),
        }
    }

    fn remember(&mut self, what: &'static str, path: String, why: &'static str) {
        let refusal = Refusal { what, path, why };
        if self.refused.len() < MAX_REMEMBERED && !self.refused.contains(&refusal) {
            self.refused.push(refusal);
        }
    }

    /// `path` as the guest named it: joined to the guest path of the
    /// preopen `dir`, if it is one (wasi-libc opens from preopens), else as
    /// given.
    fn guest_path(&self, dir: u32, path: &str) -> String {
        match self.preopened.iter().find(|(rep, _)| *rep == dir) {
            Some((_, base)) => format!("{}/{path}", base.trim_end_matches('/')),
            None => path.to_owned(),
        }
    }

    /// If `dir` is the sandbox root, refuse `path` and remember it.
    pub(super) fn outside_grants(&mut self, dir: u32, what: &'static str, path: &str) -> bool {
        let outside = self.root_rep == Some(dir);
        if outside {
            self.remember(what, self.guest_path(dir, path), OUTSIDE);
        }
        outside
    }

    /// Remember the refused open of `path`, which names a FIFO, socket or
    /// device.
    pub(super) fn not_a_file(&mut self, dir: u32, path: &str) {
        self.remember("open", self.guest_path(dir, path), NOT_A_FILE);
    }

    /// Remember a refusal by cap-std on a granted descriptor (a `..` or
    /// symlink escape, a write to a read-only grant).
    pub(super) fn escaped(
        &mut self,
        error: &types::ErrorCode,
        dir: u32,
        what: &'static str,
        path: &str,
    ) {
        if matches!(
            error,
            types::ErrorCode::NotPermitted | types::ErrorCode::Access
        ) {
            self.remember(what, self.guest_path(dir, path), NOT_ALLOWED);
        }
    }
}
