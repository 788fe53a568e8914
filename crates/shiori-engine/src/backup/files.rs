//! File operations of a backup: copying folders, the staging folder beside a destination, and
//! making a rename durable.

use super::BackupError;
use std::path::{Path, PathBuf};
use tempfile::TempDir;

/// Wraps an I/O error with the path it happened at, for `map_err`.
pub(super) fn io_at(path: &Path) -> impl FnOnce(std::io::Error) -> BackupError {
    let path = path.display().to_string();
    move |source| BackupError::Io { path, source }
}

/// A hidden folder beside `dest` (so the final rename stays on one file system), removed unless
/// kept.
pub(super) fn staging_dir(dest: &Path, what: &str) -> Result<TempDir, BackupError> {
    let parent = parent_of(dest);
    std::fs::create_dir_all(&parent).map_err(io_at(&parent))?;
    let name = dest
        .file_name()
        .map_or("data".into(), |name| name.to_string_lossy());
    tempfile::Builder::new()
        .prefix(&format!(".{name}.{what}-"))
        .tempdir_in(&parent)
        .map_err(io_at(&parent))
}

fn parent_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Copies the folder `from` into `to`, leaving out entries `skip` names at any depth; links
/// are not followed.
pub(super) fn copy_tree(
    from: &Path,
    to: &Path,
    skip: &dyn Fn(&str) -> bool,
) -> Result<(), BackupError> {
    std::fs::create_dir_all(to).map_err(io_at(to))?;
    for entry in std::fs::read_dir(from).map_err(io_at(from))? {
        let entry = entry.map_err(io_at(from))?;
        let name = entry.file_name();
        if skip(&name.to_string_lossy()) {
            continue;
        }
        let kind = entry.file_type().map_err(io_at(&entry.path()))?;
        if kind.is_dir() {
            copy_tree(&entry.path(), &to.join(&name), skip)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), to.join(&name)).map_err(io_at(&entry.path()))?;
        }
    }
    Ok(())
}

/// Makes the rename of `path` durable: its parent folder's entry is written out.
pub(super) fn sync_parent(path: &Path) -> Result<(), BackupError> {
    let parent = parent_of(path);
    std::fs::File::open(&parent)
        .and_then(|folder| folder.sync_all())
        .map_err(io_at(&parent))
}
