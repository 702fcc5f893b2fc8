//! Where a daemon listens and who may talk to it.
//!
//! A daemon answers only for the processes it stands in for: the same
//! build of `wasm-hooks` (the executable's file, not only its version),
//! the same user, the same environment and the same working directory.
//! All of them go into its key, but the variables an agent sets per
//! session or per event ([`REQUEST_VARIABLES`]), which each request brings
//! along instead, and its socket is named by the key, so a
//! `hook` process finds only a daemon that would answer exactly as it
//! would itself. Sockets live in `$XDG_RUNTIME_DIR/wasm-hooks/`, a
//! directory only the user may enter; without `$XDG_RUNTIME_DIR` there is
//! no daemon.

use std::ffi::OsString;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::PathBuf;

use std::hash::{DefaultHasher, Hasher};

/// The environment variable that chooses how `hook` reaches a daemon; it
/// does not change an answer, so it is left out of the key.
pub(crate) const OWN_VARIABLES: &str = "WASM_HOOKS_DAEMON";

/// Also left out of the key: what shells set for themselves and which no
/// answer depends on, bash's `$_` (the path of the command being run; the
/// executable's is in the key already) and `$SHLVL` (which differs between
/// a shell's foreground and background jobs).
const SHELL_VARIABLES: [&str; 2] = ["_", "SHLVL"];

/// Variables the agents set per session or per event, which no answer of
/// the engine's own depends on: left out of the key, and sent with each
/// request instead, for the hooks to see as the caller had them (set or
/// unset; see `wasm_hooks::RequestEnv`). So one daemon serves every
/// session of an agent. Measured in hook processes (tests/fixtures/*/
/// hook-environment.md): Claude Code 2.1.332's session id, pid, messaging
/// socket and token, notes directory, env file and effort, which differ
/// between sessions or come on some events only; Gemini CLI 0.61's session
/// id and plans directory; Copilot CLI's per-call trace context;
/// OpenCode's pid (which the plugin's commands inherit); and the shell's
/// `PWD`. (Codex 0.169 sets none.)
pub(crate) const REQUEST_VARIABLES: &[&str] = &[
    "CLAUDE_CODE_CHILD_NOTES_DIR",
    "CLAUDE_CODE_MESSAGING_SOCKET",
    "CLAUDE_CODE_MESSAGING_TOKEN",
    "CLAUDE_CODE_SESSION_ID",
    "CLAUDE_EFFORT",
    "CLAUDE_ENV_FILE",
    "CLAUDE_PID",
    "COPILOT_TRACEPARENT",
    "GEMINI_PLANS_DIR",
    "GEMINI_SESSION_ID",
    "OLDPWD",
    "OPENCODE_PID",
    "PWD",
];

/// Of [`REQUEST_VARIABLES`], those that change on every event (Copilot
/// CLI's trace context): left out of the key of an engine the daemon keeps,
/// which gets each event's before it answers it. (An MCP server an engine
/// started keeps the values it started with.)
pub(crate) const PER_EVENT_VARIABLES: &[&str] = &["COPILOT_TRACEPARENT"];

/// This process's [`REQUEST_VARIABLES`], each with its value or unset;
/// `None` when a value is not UTF-8 (no daemon then: the request could not
/// carry it).
pub(crate) fn request_variables() -> Option<Vec<(String, Option<String>)>> {
    REQUEST_VARIABLES
        .iter()
        .map(|name| match std::env::var_os(name) {
            None => Some(((*name).to_owned(), None)),
            Some(value) => Some(((*name).to_owned(), Some(value.into_string().ok()?))),
        })
        .collect()
}

/// A daemon's socket, lock file and key.
#[derive(Debug, Clone)]
pub(crate) struct Place {
    /// The socket it listens on.
    pub(crate) socket: PathBuf,
    /// The file a starting daemon locks, so that one runs per key; it holds
    /// the daemon's pid.
    pub(crate) lock: PathBuf,
    /// A 128-bit hash (hex) of everything an answer depends on besides
    /// the request itself.
    pub(crate) key: String,
}

impl Place {
    /// The place of the daemon for this process, creating (or checking)
    /// the socket directory: `Ok(None)` without `$XDG_RUNTIME_DIR`.
    ///
    /// # Errors
    /// When the directory cannot be made, is not the user's own, or others
    /// may enter it; or when the executable or working directory cannot be
    /// read.
    pub(crate) fn of_this_process() -> Result<Option<Self>, String> {
        let exe = std::env::current_exe().map_err(|e| format!("finding the executable: {e}"))?;
        Self::of(&exe)
    }

    /// The place of the daemon a `hook` process of the executable `exe`
    /// (in this process's user, environment and directory) would use.
    ///
    /// # Errors
    /// As [`Place::of_this_process`].
    pub(crate) fn of(exe: &std::path::Path) -> Result<Option<Self>, String> {
        let Some(runtime_dir) = runtime_dir() else {
            return Ok(None);
        };
        let dir = PathBuf::from(runtime_dir).join("wasm-hooks");
        private_dir(&dir)?;
        let key = key(exe)?;
        Ok(Some(Self {
            socket: dir.join(format!("{key}.sock")),
            lock: dir.join(format!("{key}.lock")),
            key,
        }))
    }
}

/// `$XDG_RUNTIME_DIR`, where daemons' sockets live; none (so no daemon)
/// when it is unset or empty.
pub(crate) fn runtime_dir() -> Option<std::ffi::OsString> {
    std::env::var_os("XDG_RUNTIME_DIR").filter(|dir| !dir.is_empty())
}

/// Make `dir` (mode 0700) if it is missing, and check that it is a
/// directory of this user's that no one else may enter.
fn private_dir(dir: &std::path::Path) -> Result<(), String> {
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(format!("making {}: {e}", dir.display())),
    }
    let meta = std::fs::symlink_metadata(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    if !meta.is_dir() {
        return Err(format!("{} is not a directory", dir.display()));
    }
    if meta.uid() != effective_uid() {
        return Err(format!(
            "{} belongs to user {}, not to this one",
            dir.display(),
            meta.uid()
        ));
    }
    if meta.permissions().mode() & 0o077 != 0 {
        return Err(format!(
            "{} may be entered by other users (mode {:o}); it must be 0700",
            dir.display(),
            meta.permissions().mode() & 0o777
        ));
    }
    Ok(())
}

/// The key: this build (the executable file: its path, device, inode,
/// size and modification time; not its change time, which a hard link to
/// it or a `chmod` moves without changing a byte), the user, the
/// working directory and the environment (less [`OWN_VARIABLES`],
/// [`SHELL_VARIABLES`] and [`REQUEST_VARIABLES`]), and what else a hook process inherits that the
/// daemon cannot set per request ([`inherited`]: umask, resource limits,
/// groups), hashed by two differently seeded SipHashes.
///
/// Not a cryptographic hash, on purpose: only this user can make a socket
/// in the directory, so the key guards against mix-ups, not forgery; and
/// sha2 would ask the CPU for its features first (`cpuid`, a trap to the
/// hypervisor in a VM), on the path of every `hook` process.
fn key(exe: &std::path::Path) -> Result<String, String> {
    let meta = std::fs::metadata(exe).map_err(|e| format!("{}: {e}", exe.display()))?;
    let cwd = std::env::current_dir().map_err(|e| format!("finding the current directory: {e}"))?;
    let mut hashers = [DefaultHasher::new(), DefaultHasher::new()];
    hashers[1].write(b"the second half");
    let mut field = |bytes: &[u8]| {
        for hasher in &mut hashers {
            hasher.write_usize(bytes.len());
            hasher.write(bytes);
        }
    };
    field(b"wasm-hooks daemon 1");
    field(env!("CARGO_PKG_VERSION").as_bytes());
    field(exe.as_os_str().as_encoded_bytes());
    for number in [
        meta.dev(),
        meta.ino(),
        meta.size(),
        meta.mtime().cast_unsigned(),
        meta.mtime_nsec().cast_unsigned(),
        u64::from(effective_uid()),
    ] {
        field(&number.to_le_bytes());
    }
    field(cwd.as_os_str().as_encoded_bytes());
    for number in inherited() {
        field(&number.to_le_bytes());
    }
    let mut env: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(name, _)| {
            name != OWN_VARIABLES
                && !SHELL_VARIABLES.iter().any(|v| name == v)
                && !REQUEST_VARIABLES.iter().any(|v| name == v)
        })
        .collect();
    env.sort();
    for (name, value) in &env {
        field(name.as_encoded_bytes());
        field(value.as_encoded_bytes());
    }
    let [first, second] = hashers.map(|h| h.finish());
    Ok(format!("{first:016x}{second:016x}"))
}

/// What a hook run by this process inherits besides its environment, and
/// a daemon (one process for many requests) cannot change per request:
/// the umask, every resource limit, the effective group and the groups.
/// A caller with another of these gets a daemon of its own.
fn inherited() -> Vec<u64> {
    // Read, not set and put back: umask(2) is the whole process's, and
    // another thread could create a file in between.
    let mask = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|l| l.starts_with("Umask:"))?;
            u64::from_str_radix(line["Umask:".len()..].trim(), 8).ok()
        })
        .unwrap_or(u64::MAX);
    let mut numbers = vec![mask];
    for resource in [
        libc::RLIMIT_AS,
        libc::RLIMIT_CORE,
        libc::RLIMIT_CPU,
        libc::RLIMIT_DATA,
        libc::RLIMIT_FSIZE,
        libc::RLIMIT_MEMLOCK,
        libc::RLIMIT_NOFILE,
        libc::RLIMIT_NPROC,
        libc::RLIMIT_STACK,
    ] {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: `limit` is a valid rlimit for getrlimit(2) to fill.
        unsafe { libc::getrlimit(resource, &raw mut limit) };
        numbers.extend([limit.rlim_cur, limit.rlim_max]);
    }
    // SAFETY: getegid(2) has no preconditions; getgroups(2) writes at most
    // the length given into a buffer of that length.
    unsafe {
        numbers.push(u64::from(libc::getegid()));
        // Sized by asking first: a fixed buffer too small gets -1.
        let count = usize::try_from(libc::getgroups(0, std::ptr::null_mut())).unwrap_or(0);
        let mut groups = vec![0 as libc::gid_t; count];
        let n = libc::getgroups(
            libc::c_int::try_from(count).unwrap_or(0),
            groups.as_mut_ptr(),
        );
        groups.truncate(usize::try_from(n).unwrap_or(0));
        numbers.extend(groups.iter().map(|g| u64::from(*g)));
    }
    numbers
}

/// This process's effective user id.
pub(crate) fn effective_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// The user id of the process at the other end of a Unix socket, as the
/// kernel recorded it when the connection was made (`SO_PEERCRED`).
///
/// # Errors
/// When the socket cannot say.
pub(crate) fn peer_uid(socket: &impl AsRawFd) -> std::io::Result<u32> {
    let mut credentials = libc::ucred {
        pid: 0,
        uid: u32::MAX,
        gid: u32::MAX,
    };
    let mut length = libc::socklen_t::try_from(std::mem::size_of::<libc::ucred>())
        .expect("ucred is a few bytes");
    // SAFETY: the file descriptor is a live socket borrowed for the call;
    // `credentials` and `length` are valid for writes of `length` bytes.
    let status = unsafe {
        libc::getsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            std::ptr::from_mut(&mut credentials).cast(),
            &raw mut length,
        )
    };
    if status != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(credentials.uid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_peer_of_a_socket_is_known_by_its_user_id() {
        let (ours, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
        assert_eq!(peer_uid(&ours).unwrap(), effective_uid());
        assert_eq!(peer_uid(&theirs).unwrap(), effective_uid());
        // A file is not a socket: the kernel cannot say, and nothing is
        // taken for granted.
        let file = tempfile::tempfile().unwrap();
        assert!(peer_uid(&file).is_err());
    }

    #[test]
    fn the_key_changes_with_the_executable_and_is_named_by_hex() {
        let this = std::env::current_exe().unwrap();
        let here = key(&this).unwrap();
        assert_eq!(here.len(), 32);
        assert!(here.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_eq!(key(&this).unwrap(), here, "the same process, the same key");
        assert_ne!(key(std::path::Path::new("/bin/sh")).unwrap(), here);
        a_caller_with_other_limits_gets_a_daemon_of_its_own(&this, &here);
    }

    /// A daemon runs hooks with the limits (and umask) of whoever started
    /// it: another caller's must not be answered by it. (Part of the test
    /// above: the limits are the process's, and tests run side by side.)
    fn a_caller_with_other_limits_gets_a_daemon_of_its_own(this: &std::path::Path, before: &str) {
        let mut core = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: valid rlimit values for get/setrlimit(2); the core-dump
        // size is put back as it was.
        unsafe {
            libc::getrlimit(libc::RLIMIT_CORE, &raw mut core);
            let lowered = libc::rlimit {
                rlim_cur: if core.rlim_cur == 0 { 1 } else { 0 },
                rlim_max: core.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_CORE, &raw const lowered) != 0 {
                return; // A hard limit of 0 here: nothing to change it to.
            }
        }
        let other = key(this).unwrap();
        // SAFETY: as above.
        unsafe { libc::setrlimit(libc::RLIMIT_CORE, &raw const core) };
        assert_ne!(other, before);
        assert_eq!(key(this).unwrap(), before);
    }
}
