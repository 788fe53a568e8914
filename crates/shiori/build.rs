//! Links the `shiori` binary with packed relative relocations (DT_RELR) where the C library
//! supports them. The binary is position-independent, and its 84,000 relative relocations
//! otherwise fill a 2 MB table the loader reads, and keeps resident, at every start: packed,
//! `shiori --version` peaks at 11.5 MB instead of 16.4, and SmolLM2's `bench generate` at
//! 153.5 MB instead of 158.
//!
//! Where the linker takes a symbol ordering file, it also places the functions a local answer
//! runs (`link-order.txt`) side by side at the start of the code. The kernel maps code 64 KiB
//! around each page a process touches, so functions scattered over 30 MB of code kept 6.7 MiB
//! of it resident; packed into 1.3 MB, they keep 1.4 MiB, and SmolLM2's `bench generate` peaks
//! 5.5 MB lower.

use std::path::PathBuf;
use std::process::Command;

/// The functions a local answer runs, in the order the linker places them (see
/// `scripts/link-order.sh`).
const LINK_ORDER: &str = "link-order.txt";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let linux_gnu = std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux")
        && std::env::var("CARGO_CFG_TARGET_ENV").as_deref() == Ok("gnu");
    if linux_gnu && libc_reads_packed_relocations() {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    println!("cargo:rerun-if-changed={LINK_ORDER}");
    if linux_gnu && linker_orders_symbols() {
        // Read when the script runs, not baked in when it was compiled: a build script
        // compiled for another checkout sharing the target directory is reused here.
        let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default();
        let order = PathBuf::from(manifest_dir).join(LINK_ORDER);
        println!(
            "cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}",
            order.display()
        );
        // The list was made from one build; a name this build lacks (a Rust hash of another
        // compiler, a function changed since) is skipped, not an error.
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
}

/// Whether the linker this build uses (LLD, rustc's default on x86-64 Linux since 1.90) takes
/// `--symbol-ordering-file`: a one-line program is linked with it, through the same rustc,
/// flags and linker as the binary.
fn linker_orders_symbols() -> bool {
    let (Ok(rustc), Ok(out), Ok(target)) = (
        std::env::var("RUSTC"),
        std::env::var("OUT_DIR"),
        std::env::var("TARGET"),
    ) else {
        return false;
    };
    let out = PathBuf::from(out);
    let (source, order) = (out.join("probe.rs"), out.join("probe-order.txt"));
    if std::fs::write(&source, "fn main() {}\n").is_err()
        || std::fs::write(&order, "main\n").is_err()
    {
        return false;
    }
    let mut probe = Command::new(rustc);
    probe
        .args(["--crate-type=bin", "--target", &target, "-o"])
        .arg(out.join("probe"))
        .arg(format!(
            "-Clink-arg=-Wl,--symbol-ordering-file={}",
            order.display()
        ))
        .arg(&source);
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    probe.args(flags.split('\x1f').filter(|flag| !flag.is_empty()));
    if let Ok(linker) = std::env::var("RUSTC_LINKER") {
        probe.arg(format!("-Clinker={linker}"));
    }
    probe
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
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
