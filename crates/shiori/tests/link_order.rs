//! The binary opens its code with the functions a local answer runs (`link-order.txt`, handed to
//! the linker by the build script), so a process touches few pages of code.

use std::collections::HashSet;
use std::process::Command;

/// The code symbols of `binary` (functions, named once per address), in address order.
fn functions_by_address(binary: &str) -> Vec<(u64, String)> {
    let output = Command::new("nm")
        .args(["--defined-only", "--numeric-sort"])
        .arg(binary)
        .output()
        .expect("nm (binutils, which the C++ build needs) lists the binary's symbols");
    assert!(output.status.success(), "nm failed on {binary}");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| {
            let mut fields = line.splitn(3, ' ');
            let address = u64::from_str_radix(fields.next()?, 16).ok()?;
            let kind = fields.next()?;
            let name = fields.next()?;
            matches!(kind, "t" | "T" | "w" | "W").then(|| (address, name.to_string()))
        })
        .collect()
}

#[test]
fn the_functions_of_a_local_answer_open_the_binarys_code() {
    let listed: HashSet<&str> = include_str!("../link-order.txt").lines().collect();
    let functions = functions_by_address(env!("CARGO_BIN_EXE_shiori"));
    // An address is listed when any of its names is (aliases and folded copies share one).
    let listed_addresses: HashSet<u64> = functions
        .iter()
        .filter(|(_, name)| listed.contains(name.as_str()))
        .map(|&(address, _)| address)
        .collect();
    // The C and C++ names alone hold from build to build.
    assert!(
        listed_addresses.len() > listed.len() / 2,
        "only {} of the {} listed functions are in the binary",
        listed_addresses.len(),
        listed.len()
    );
    let first_unlisted = functions
        .iter()
        .position(|(address, _)| !listed_addresses.contains(address))
        .expect("the binary has functions no local answer runs");
    let stray: Vec<&str> = functions[first_unlisted..]
        .iter()
        .filter(|(address, _)| listed_addresses.contains(address))
        .map(|(_, name)| name.as_str())
        .take(5)
        .collect();
    assert!(
        stray.is_empty(),
        "listed functions placed after {}, as {stray:?}: the linker did not take the order",
        functions[first_unlisted].1
    );
}
