//! The answer a `hook` process writes if it aborts while answering: Rust
//! aborts on running out of memory, on a stack overflow and on a panic
//! while panicking, and an agent takes a hook that died without an answer
//! for "no opinion". While [`arm`]ed, a SIGABRT handler writes the answer
//! prepared beforehand (the hooks' failure: a block on an event that
//! guards an action) with `write(2)` and exits with its code; it allocates
//! nothing and takes no lock. A SIGKILL (the kernel's out-of-memory
//! killer) cannot be caught: `wasm-hooks-hook`, the parent an installed
//! hook runs under, answers for that one.

use std::ptr;
use std::sync::Once;
use std::sync::atomic::{AtomicPtr, Ordering};

use super::hook::HookReply;

/// An answer ready to be written from a signal handler.
struct Prepared {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    exit: libc::c_int,
}

/// The armed answer, or null.
static ARMED: AtomicPtr<Prepared> = AtomicPtr::new(ptr::null_mut());

/// Disarms on drop.
#[must_use = "the answer is armed only while this is held"]
pub(crate) struct Armed(());

impl Drop for Armed {
    fn drop(&mut self) {
        // Not freed: an abort on another thread may be reading it (one
        // answer per process, a few kilobytes).
        ARMED.store(ptr::null_mut(), Ordering::SeqCst);
    }
}

/// Write `reply` and exit with its code should this process abort before
/// the returned guard is dropped.
pub(crate) fn arm(reply: HookReply) -> Armed {
    static HANDLER: Once = Once::new();
    HANDLER.call_once(|| {
        // SAFETY: a zeroed sigaction is a valid "no flags, empty mask"
        // value; `on_abort` is an `extern "C" fn(c_int)`, the handler type
        // `sa_sigaction` takes without SA_SIGINFO.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_abort as extern "C" fn(libc::c_int) as libc::sighandler_t;
            // Once: a second abort (from the handler itself) is fatal.
            action.sa_flags = libc::SA_RESETHAND;
            libc::sigaction(libc::SIGABRT, &action, ptr::null_mut());
        }
    });
    let prepared = Box::new(Prepared {
        stdout: reply.stdout.into_bytes(),
        stderr: reply.stderr.into_bytes(),
        exit: libc::c_int::from(reply.exit),
    });
    ARMED.store(Box::into_raw(prepared), Ordering::SeqCst);
    Armed(())
}

/// The SIGABRT handler: the armed answer, then `_exit`; without one, it
/// returns and `abort` goes on to end the process as usual.
extern "C" fn on_abort(_signal: libc::c_int) {
    let prepared = ARMED.load(Ordering::SeqCst);
    // The deadline's watchdog may be answering already (it exits at once).
    if prepared.is_null() || !super::deadline::claim() {
        return;
    }
    // SAFETY: an armed pointer came from `Box::into_raw` and is never
    // freed. write(2) and _exit(2) are async-signal-safe.
    unsafe {
        let prepared = &*prepared;
        super::deadline::write_all(1, &prepared.stdout);
        super::deadline::write_all(2, &prepared.stderr);
        libc::_exit(prepared.exit);
    }
}
