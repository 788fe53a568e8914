//! `manifest.json`: the last file a backup writes, listing every other file with its size and
//! sha256. Restore accepts a folder only when the manifest is there and every file matches it.

use super::files::io_at;
use super::BackupError;
use crate::StoreKind;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::Path;

/// The layout this build writes and reads.
pub const FORMAT: u32 = 1;
const MANIFEST: &str = "manifest.json";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub format: u32,
    /// Seconds since the Unix epoch when the backup started.
    pub created: u64,
    pub store: StoreKind,
    pub commits: Option<u64>,
    pub chunks: Option<u64>,
    pub derived_indexes: bool,
    pub files: Vec<ManifestFile>,
}

/// One file of a backup, by its path inside it (`/`-separated).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestFile {
    pub path: String,
    pub bytes: u64,
    pub sha256: String,
}

impl Manifest {
    pub(super) fn new(store: StoreKind, created: u64) -> Manifest {
        Manifest {
            format: FORMAT,
            created,
            store,
            commits: None,
            chunks: None,
            derived_indexes: false,
            files: Vec::new(),
        }
    }

    /// Writes the manifest into `dir` and flushes it and the folder to disk. It is written under
    /// another name and renamed: a backup killed while it writes the manifest leaves none,
    /// never a partial one that restore would read as a damaged backup, not an unfinished one.
    pub(super) fn write(&self, dir: &Path) -> Result<(), BackupError> {
        let path = dir.join(MANIFEST);
        let partial = dir.join(format!("{MANIFEST}.partial"));
        let text = serde_json::to_vec_pretty(self).map_err(BackupError::Manifest)?;
        let mut file = std::fs::File::create(&partial).map_err(io_at(&partial))?;
        file.write_all(&text)
            .and_then(|()| file.sync_all())
            .map_err(io_at(&partial))?;
        std::fs::rename(&partial, &path).map_err(io_at(&path))?;
        std::fs::File::open(dir)
            .and_then(|folder| folder.sync_all())
            .map_err(io_at(dir))
    }

    /// Reads the manifest of the backup in `dir` and checks every file it lists.
    pub fn verified(dir: &Path) -> Result<Manifest, BackupError> {
        let path = dir.join(MANIFEST);
        let text = match std::fs::read(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Err(BackupError::NoManifest(dir.display().to_string()))
            }
            Err(error) => return Err(io_at(&path)(error)),
        };
        let manifest: Manifest = serde_json::from_slice(&text).map_err(BackupError::Manifest)?;
        if manifest.format != FORMAT {
            return Err(BackupError::Format(manifest.format));
        }
        for file in &manifest.files {
            check_file(dir, file)?;
        }
        Ok(manifest)
    }
}

fn check_file(dir: &Path, file: &ManifestFile) -> Result<(), BackupError> {
    let damaged = |why: String| BackupError::Damaged {
        path: file.path.clone(),
        why,
    };
    // A path that leaves the backup is not one a backup wrote.
    if file
        .path
        .split('/')
        .any(|part| part.is_empty() || part == "." || part == "..")
    {
        return Err(damaged("not a path inside the backup".into()));
    }
    let (bytes, sha256) = match hash(&dir.join(&file.path), false) {
        Ok(found) => found,
        Err(error) => return Err(damaged(error.to_string())),
    };
    if bytes != file.bytes || sha256 != file.sha256 {
        return Err(damaged(format!("{bytes} bytes with sha256 {sha256}")));
    }
    Ok(())
}

/// Every file under `dir`, hashed and flushed to disk, sorted by path.
pub(super) fn list_files(dir: &Path) -> Result<Vec<ManifestFile>, BackupError> {
    let mut files = Vec::new();
    collect(dir, "", &mut files)?;
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

fn collect(dir: &Path, prefix: &str, files: &mut Vec<ManifestFile>) -> Result<(), BackupError> {
    for entry in std::fs::read_dir(dir).map_err(io_at(dir))? {
        let entry = entry.map_err(io_at(dir))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = format!("{prefix}{name}");
        let kind = entry.file_type().map_err(io_at(&entry.path()))?;
        if kind.is_dir() {
            collect(&entry.path(), &format!("{path}/"), files)?;
        } else if kind.is_file() {
            let (bytes, sha256) = hash(&entry.path(), true).map_err(io_at(&entry.path()))?;
            files.push(ManifestFile {
                path,
                bytes,
                sha256,
            });
        }
    }
    Ok(())
}

/// The size and sha256 of the file at `path`, flushed to disk first when `sync`.
fn hash(path: &Path, sync: bool) -> std::io::Result<(u64, String)> {
    let mut file = std::fs::File::open(path)?;
    if sync {
        file.sync_all()?;
    }
    let mut hasher = Sha256::new();
    let bytes = std::io::copy(&mut file, &mut hasher)?;
    let sha256 = hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    Ok((bytes, sha256))
}
