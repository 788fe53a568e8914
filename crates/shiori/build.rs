//! Links the `shiori` binary with packed relative relocations (DT_RELR) where the C library
//! supports them. The binary is position-independent, and its 84,000 relative relocations
//! otherwise fill a 2 MB table the loader reads, and keeps resident, at every start: packed,
//! `shiori --version` peaks at 11.5 MB instead of 16.4, and SmolLM2's `bench generate` at
//! 153.5 MB instead of 158.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let linux_gnu = std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux")
        && std::env::var("CARGO_CFG_TARGET_ENV").as_deref() == Ok("gnu");
    if linux_gnu && libc_reads_packed_relocations() {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// Whether the C library the linker finds (glibc 2.36 or later) can load DT_RELR: a binary
/// linked with them needs its `GLIBC_ABI_DT_RELR` version, and would not start without it.
fn libc_reads_packed_relocations() -> bool {
    let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let Ok(output) = Command::new(compiler)
        .arg("-print-file-name=libc.so.6")
        .output()
    else {
        return false;
    };
    let path = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim());
    std::fs::read(path).is_ok_and(|bytes| {
        bytes
            .windows(b"GLIBC_ABI_DT_RELR".len())
            .any(|window| window == b"GLIBC_ABI_DT_RELR")
    })
}
