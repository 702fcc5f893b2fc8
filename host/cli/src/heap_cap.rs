//! A cap on this process's heap: an allocation that would take the heap
//! past it fails, and Rust aborts on a failed allocation, which the `hook`
//! process answers with the hooks' failure ([`super::last_words`]): a
//! hostile hook file, schema or event meets a limit, never the kernel's
//! out-of-memory killer (whose SIGKILL nothing in the process can answer).
//! Plugins' linear memories are mapped by wasmtime, outside this heap, and
//! capped per store (`memory_mb`).
//!
//! The cap is [`MAX_HEAP_BYTES`], lowered (never raised) by
//! `WASM_HOOKS_MAX_HEAP_MB`; [`CappedHeap`] is the binary's global
//! allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The most heap the process may hold (`MAX_HEAP_BYTES`): 4 GiB.
pub(crate) const MAX_HEAP_BYTES: usize = 4 << 30;

/// The cap in force.
static CAP: AtomicUsize = AtomicUsize::new(MAX_HEAP_BYTES);

/// The heap held now.
static USED: AtomicUsize = AtomicUsize::new(0);

/// Lower the cap to `WASM_HOOKS_MAX_HEAP_MB` when that is set and lower.
pub(crate) fn lower_from_env() {
    let asked = std::env::var("WASM_HOOKS_MAX_HEAP_MB")
        .ok()
        .and_then(|mb| mb.parse::<usize>().ok())
        .map(|mb| mb.saturating_mul(1 << 20));
    if let Some(bytes) = asked {
        CAP.fetch_min(bytes, Ordering::Relaxed);
    }
}

/// The system allocator, within the cap.
pub(crate) struct CappedHeap;

// SAFETY: every call is passed to `System` unchanged; only an allocation
// that would pass the cap is refused (a null pointer, as the trait allows).
unsafe impl GlobalAlloc for CappedHeap {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as the caller promised for `layout`.
        within_cap(layout.size(), || unsafe { System.alloc(layout) })
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as the caller promised for `layout`.
        within_cap(layout.size(), || unsafe { System.alloc_zeroed(layout) })
    }

    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        // SAFETY: `block` came from this allocator with `layout`.
        unsafe { System.dealloc(block, layout) };
        USED.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, block: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let old = layout.size();
        if new_size > old && !take(new_size - old) {
            return std::ptr::null_mut();
        }
        // SAFETY: as the caller promised for `block`, `layout`, `new_size`.
        let moved = unsafe { System.realloc(block, layout, new_size) };
        if moved.is_null() {
            if new_size > old {
                USED.fetch_sub(new_size - old, Ordering::Relaxed);
            }
        } else if new_size < old {
            USED.fetch_sub(old - new_size, Ordering::Relaxed);
        }
        moved
    }
}

/// `allocate` `bytes`, counted against the cap: null, with nothing
/// counted, when they would pass it or the system has none.
fn within_cap(bytes: usize, allocate: impl FnOnce() -> *mut u8) -> *mut u8 {
    if !take(bytes) {
        return std::ptr::null_mut();
    }
    let block = allocate();
    if block.is_null() {
        USED.fetch_sub(bytes, Ordering::Relaxed);
    }
    block
}

/// Count `bytes` more against the cap; false (and nothing counted) when
/// they would pass it.
fn take(bytes: usize) -> bool {
    let before = USED.fetch_add(bytes, Ordering::Relaxed);
    if before.saturating_add(bytes) > CAP.load(Ordering::Relaxed) {
        USED.fetch_sub(bytes, Ordering::Relaxed);
        return false;
    }
    true
}
