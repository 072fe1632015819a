//! The binary's allocator for parsed trees: tree-sitter's C allocations go to mimalloc (a
//! parsed tree is millions of small nodes, allocated and freed by C code that otherwise calls
//! glibc's `malloc`); Rust's own allocations stay on the system allocator.
//!
//! Measured on this project's machine (docs/decisions.md, "The binary's allocator"): glibc
//! keeps the pages of freed trees in its arenas, so a `serve` run's RSS after large searches
//! stays near its peak, and its `malloc`/`free` are about a tenth of a parse-bound search's
//! CPU. Rust's allocations are few and large (a file's bytes, its text): glibc maps and unmaps
//! those at once, where mimalloc as the global allocator held them for its purge delay and a
//! small `call` peaked 5–15 MB higher. The library crates choose no allocator: a harness that
//! links them keeps its own.
//!
//! mimalloc is built with `no_thp` (the workspace's `libmimalloc-sys` features): on a machine
//! whose transparent huge pages are `madvise`, its default asks for 2 MiB pages, and a `call`
//! process's peak RSS grew from 35 MB to 46 MB on Django.

/// Route tree-sitter's allocations to mimalloc. Called first in `main`, before any tree-sitter
/// object exists (a tree allocated by one allocator must be freed by the same one).
#[cfg(feature = "astgrep")]
pub fn trees_in_mimalloc() {
    use libmimalloc_sys::{mi_calloc, mi_free, mi_malloc, mi_realloc};
    use std::ffi::c_void;

    // tree-sitter requires that an allocation never returns null: out of memory aborts, as
    // its own default allocator does.
    fn checked(p: *mut c_void, size: usize) -> *mut c_void {
        if p.is_null() && size != 0 {
            std::process::abort();
        }
        p
    }
    #[allow(unsafe_code)]
    unsafe extern "C" fn malloc(size: usize) -> *mut c_void {
        // SAFETY: mi_malloc has malloc's contract.
        checked(unsafe { mi_malloc(size) }, size)
    }
    #[allow(unsafe_code)]
    unsafe extern "C" fn calloc(n: usize, size: usize) -> *mut c_void {
        // SAFETY: mi_calloc has calloc's contract.
        checked(unsafe { mi_calloc(n, size) }, n.saturating_mul(size))
    }
    #[allow(unsafe_code)]
    unsafe extern "C" fn realloc(p: *mut c_void, size: usize) -> *mut c_void {
        // SAFETY: `p` came from these functions (installed before any tree-sitter object).
        checked(unsafe { mi_realloc(p, size) }, size)
    }
    #[allow(unsafe_code)]
    unsafe extern "C" fn free(p: *mut c_void) {
        // SAFETY: `p` came from these functions, or is null.
        unsafe { mi_free(p) }
    }
    #[allow(unsafe_code)]
    // SAFETY: one allocator family, never null for a non-zero size, malloc's alignment;
    // installed once, first in `main`, before any tree-sitter object exists.
    unsafe {
        agent_tools::astgrep::set_tree_allocator(agent_tools::astgrep::TreeAllocator {
            malloc,
            calloc,
            realloc,
            free,
        });
    }
}

/// Without the `astgrep` family no tree is ever parsed.
#[cfg(not(feature = "astgrep"))]
pub fn trees_in_mimalloc() {}
