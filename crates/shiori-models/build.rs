//! Tells the tests whether the CPU building them runs the AVX-512 BF16 kernel, so that its test
//! is reported as ignored on other CPUs instead of passing without running.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(host_runs_avx512bf16)");
    println!("cargo::rerun-if-changed=build.rs");
    let target_is_x86_64 = std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("x86_64");
    if target_is_x86_64 && host_runs_avx512bf16() {
        println!("cargo::rustc-cfg=host_runs_avx512bf16");
    }
}

#[cfg(target_arch = "x86_64")]
fn host_runs_avx512bf16() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bf16")
}

#[cfg(not(target_arch = "x86_64"))]
fn host_runs_avx512bf16() -> bool {
    false
}
