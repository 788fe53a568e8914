//! The IPADIC vibrato dictionary, built from Debian's mecab-ipadic sources.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::command::run;
use super::error::{io_at, AssetError};
use super::{ShioriHome, IPADIC_PACKAGE, IPADIC_SOURCE_DIR};

/// Makes sure the IPADIC vibrato dictionary is in `home` and returns its path.
///
/// Installs the `mecab-ipadic` Debian package when its sources are missing, then builds the
/// dictionary (the builder writes beside the target and renames, so no half-written file).
pub fn fetch_ipadic(home: &ShioriHome, log: &mut dyn FnMut(&str)) -> Result<PathBuf, AssetError> {
    let target = home.ipadic_dictionary();
    if target.is_file() {
        log(&format!(
            "IPADIC dictionary already at {}",
            target.display()
        ));
        return Ok(target);
    }
    let source = Path::new(IPADIC_SOURCE_DIR);
    let marker = source.join("matrix.def");
    if !marker.is_file() {
        install_package(log)?;
        if !marker.is_file() {
            return Err(AssetError::Missing {
                path: marker,
                step: format!("apt-get install {IPADIC_PACKAGE}"),
            });
        }
    }
    if let Some(parent) = target.parent() {
        std::fs::create_dir_all(parent).map_err(io_at(parent))?;
    }
    log(&format!(
        "building the IPADIC dictionary from {}",
        source.display()
    ));
    shiori_analysis::build_ipadic_dictionary(source, &target).map_err(|e| {
        AssetError::Dictionary {
            path: target.clone(),
            detail: e.to_string(),
        }
    })?;
    log(&format!("IPADIC dictionary built at {}", target.display()));
    Ok(target)
}

/// `apt-get install`, refreshing the package lists once if the first try fails (a fresh machine
/// often has none).
fn install_package(log: &mut dyn FnMut(&str)) -> Result<(), AssetError> {
    let install = || {
        let mut command = Command::new("apt-get");
        command
            .args(["install", "-y", IPADIC_PACKAGE])
            .env("DEBIAN_FRONTEND", "noninteractive");
        command
    };
    if let Err(first) = run(&mut install(), log) {
        log(&format!("{first}; updating package lists and retrying"));
        run(
            Command::new("apt-get")
                .arg("update")
                .env("DEBIAN_FRONTEND", "noninteractive"),
            log,
        )?;
        run(&mut install(), log)?;
    }
    Ok(())
}
