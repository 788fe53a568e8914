//! Debian's Tesseract is built with OpenMP: every page it reads would start its own team of
//! busy-waiting threads outside the caller's thread pool. Measured on 2 cores beside another
//! reader, a page took 10.3 s of wall time with them and 2.5 s without, and they would take
//! cores from queries. Pages are read in parallel by the caller instead, so OpenMP is told to
//! run every parallel region on the thread that meets it.

use std::ffi::{c_int, CStr};

/// Allows no active parallel level: OpenMP then runs each region with one thread. It is the
/// one control that also binds regions with an explicit `num_threads` clause, as Tesseract's
/// are (`OMP_THREAD_LIMIT` is read only when the runtime loads, before `main`). Called by each
/// thread that starts an engine, since newer runtimes keep the setting per thread.
pub(crate) fn run_serially() {
    let name: &CStr = c"omp_set_max_active_levels";
    // SAFETY: looks a symbol up in the libraries already loaded; null when the Tesseract in
    // use was built without OpenMP.
    let symbol = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
    if symbol.is_null() {
        return;
    }
    // SAFETY: the OpenMP API declares `void omp_set_max_active_levels(int)`.
    let set_max_active_levels: extern "C" fn(c_int) = unsafe { std::mem::transmute(symbol) };
    set_max_active_levels(0);
}
