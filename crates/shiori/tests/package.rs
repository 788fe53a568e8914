//! The Debian package end to end (issue 51): `scripts/test-deb.sh` builds it from this test's
//! binary (no second build), installs it, runs its service, asks a question, purges it and checks
//! that nothing is left outside /var/lib/shiori. It fails, never skips, where dpkg or root is
//! missing.

use std::path::Path;
use std::process::Command;

#[test]
fn the_deb_installs_serves_a_question_and_purges_cleanly() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/test-deb.sh");
    let output = Command::new("bash")
        .arg(&script)
        .arg(env!("CARGO_BIN_EXE_shiori"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    eprintln!("{stdout}");
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("nothing left outside /var/lib/shiori"),
        "{stdout}"
    );
}
