//! Refused means refused: a plugin's open or stat of a path outside its
//! grants is answered "access denied" (not "not found") and named in the
//! hook's trace, with the grants.
//!
//! wasi-libc resolves an absolute path against the preopened directory with
//! the longest matching prefix, and fails inside the guest, unseen by the
//! host, when none matches. So the preopen list a guest asks for also holds
//! an empty directory as `/` (the [`SandboxRoot`](super::refused::SandboxRoot)): a path outside the
//! grants then reaches the host on that descriptor, where the shadowed
//! `open-at` and `stat-at` refuse it and remember the path. Paths under a
//! grant reach the granted descriptor and are untouched; a `..` or symlink
//! escape from one is refused by cap-std, and remembered too. A guest that
//! never asks for its preopens (most never touch a file) costs nothing.
//!
//! An open under a grant of anything but a regular file or a directory (a
//! FIFO, a socket, a device) is refused and remembered as well, before it
//! is opened: opening a FIFO no one writes to blocks a host thread for
//! good, past the plugin's deadline and past the host's shutdown.

use wasmtime::StoreContextMut;
use wasmtime::component::{Linker, Resource};
use wasmtime_wasi::filesystem::{Descriptor, WasiFilesystemView};
use wasmtime_wasi::p2::bindings::filesystem::{preopens, types};

use super::state::HostState;

/// The interfaces wasmtime-wasi 48 links (WASI 0.2.12); a guest built
/// against any 0.2.x resolves to them. If these names stopped matching,
/// the shadows would not be used and `tests/hostile.rs`'s refusal tests
/// would fail.
const TYPES: &str = "wasi:filesystem/types@0.2.12";
const PREOPENS: &str = "wasi:filesystem/preopens@0.2.12";

/// The guest path of the sandbox root.
const ROOT: &str = "/";

/// Shadow the WASI functions that see a path outside the grants: the
/// preopen list (to add the root), `open-at` and `stat-at`.
pub(crate) fn add_to_linker(linker: &mut Linker<HostState>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    shadow_preopens(linker)?;
    shadow_open_at(linker)?;
    shadow_stat_at(linker)?;
    linker.allow_shadowing(false);
    Ok(())
}

/// `get-directories`: the granted directories, and the root as `/` unless
/// `/` itself is granted; each one's descriptor is remembered.
fn shadow_preopens(linker: &mut Linker<HostState>) -> wasmtime::Result<()> {
    linker.instance(PREOPENS)?.func_wrap_async(
        "get-directories",
        |mut store: StoreContextMut<'_, HostState>, (): ()| {
            Box::new(async move {
                let state = store.data_mut();
                let root = state.refusals.root.dir().map_err(|e| {
                    wasmtime::format_err!("making the sandbox's empty root directory: {e}")
                })?;
                let mut fs = state.filesystem();
                let mut dirs = preopens::Host::get_directories(&mut fs)?;
                let mut root_rep = None;
                if !dirs.iter().any(|(_, path)| path == ROOT) {
                    let root = fs.table.push(Descriptor::Dir(root))?;
                    root_rep = Some(root.rep());
                    dirs.push((root, ROOT.to_owned()));
                }
                state.refusals.root_rep = root_rep;
                state.refusals.preopened = dirs
                    .iter()
                    .map(|(dir, path)| (dir.rep(), path.clone()))
                    .collect();
                Ok((dirs,))
            })
        },
    )
}

/// The guest's answer to a path call on a granted descriptor: WASI's error
/// code for a failure, which is remembered when it is a refusal.
fn answer<T>(
    state: &mut HostState,
    dir: u32,
    what: &'static str,
    path: &str,
    result: wasmtime_wasi::p2::FsResult<T>,
) -> wasmtime::Result<Result<T, types::ErrorCode>> {
    let error = match result {
        Ok(value) => return Ok(Ok(value)),
        Err(e) => types::Host::convert_error_code(&mut state.filesystem(), e)?,
    };
    state.refusals.escaped(&error, dir, what, path);
    Ok(Err(error))
}

/// Whether `path` on the descriptor `dir`, its last symlink followed as
/// the open would (per `path_flags`), is neither a regular file nor a
/// directory: a FIFO, a socket or a device, whose open can block a host
/// thread for good. A symlink is only seen when not followed, and then the
/// open refuses it without blocking. A path that cannot be stat'ed is left
/// to the open, which fails the same way or creates a regular file.
///
/// This is checked before the open, not on the opened file, because the
/// open itself is what blocks; wasmtime-wasi opens with options of its own
/// (no `O_NONBLOCK`) on a handle it keeps private. So whoever swaps the
/// file for a FIFO between this stat and the open (a host process, or a
/// plugin running beside this one with a write grant on the directory)
/// still wins the race; this guest cannot, as it does not run between the
/// two. wasmtime-wasi reports a FIFO or a socket as of unknown type.
async fn may_block_the_open(
    state: &mut HostState,
    dir: u32,
    path_flags: types::PathFlags,
    path: &str,
) -> bool {
    let stat = types::HostDescriptor::stat_at(
        &mut state.filesystem(),
        Resource::new_borrow(dir),
        path_flags,
        path.to_owned(),
    )
    .await;
    stat.is_ok_and(|found| {
        !matches!(
            found.type_,
            types::DescriptorType::RegularFile
                | types::DescriptorType::Directory
                | types::DescriptorType::SymbolicLink
        )
    })
}

fn shadow_open_at(linker: &mut Linker<HostState>) -> wasmtime::Result<()> {
    linker.instance(TYPES)?.func_wrap_async(
        "[method]descriptor.open-at",
        |mut store: StoreContextMut<'_, HostState>,
         (dir, path_flags, path, open_flags, flags): (
            Resource<Descriptor>,
            types::PathFlags,
            String,
            types::OpenFlags,
            types::DescriptorFlags,
        )| {
            Box::new(async move {
                let state = store.data_mut();
                let rep = dir.rep();
                if state.refusals.outside_grants(rep, "open", &path) {
                    return Ok((Err(types::ErrorCode::Access),));
                }
                if may_block_the_open(state, rep, path_flags, &path).await {
                    state.refusals.not_a_file(rep, &path);
                    return Ok((Err(types::ErrorCode::Access),));
                }
                let opened = types::HostDescriptor::open_at(
                    &mut state.filesystem(),
                    dir,
                    path_flags,
                    path.clone(),
                    open_flags,
                    flags,
                )
                .await;
                Ok((answer(state, rep, "open", &path, opened)?,))
            })
        },
    )
}

fn shadow_stat_at(linker: &mut Linker<HostState>) -> wasmtime::Result<()> {
    linker.instance(TYPES)?.func_wrap_async(
        "[method]descriptor.stat-at",
        |mut store: StoreContextMut<'_, HostState>,
         (dir, path_flags, path): (Resource<Descriptor>, types::PathFlags, String)| {
            Box::new(async move {
                let state = store.data_mut();
                let rep = dir.rep();
                if state.refusals.outside_grants(rep, "stat", &path) {
                    return Ok((Err(types::ErrorCode::Access),));
                }
                let stat = types::HostDescriptor::stat_at(
                    &mut state.filesystem(),
                    dir,
                    path_flags,
                    path.clone(),
                )
                .await;
                Ok((answer(state, rep, "stat", &path, stat)?,))
            })
        },
    )
}
