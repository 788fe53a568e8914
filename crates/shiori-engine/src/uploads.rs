//! The uploads folder as a reader sees it: the files uploaded through the server, each with
//! whether it is indexed, limited to those the reader may read a chunk of.

use crate::{Engine, EngineError};
use serde::Serialize;
use shiori_core::Access;
use std::collections::HashSet;
use std::path::Path;
use std::time::UNIX_EPOCH;

/// One uploaded file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UploadInfo {
    pub id: String,
    pub size: u64,
    /// Seconds since the Unix epoch.
    pub modified: u64,
    pub indexed: bool,
}

impl UploadInfo {
    /// The upload `id` stored at `path`.
    pub fn of(id: &str, path: &Path, indexed: bool) -> UploadInfo {
        let metadata = std::fs::metadata(path).ok();
        UploadInfo {
            id: id.to_string(),
            size: metadata.as_ref().map_or(0, |m| m.len()),
            modified: metadata
                .and_then(|m| m.modified().ok())
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_secs()),
            indexed,
        }
    }
}

/// The uploads a reader may see, and how many files of the whole index it may read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UploadListing {
    pub documents: Vec<UploadInfo>,
    pub indexed_files: usize,
}

impl Engine {
    /// The files in the uploads folder `dir`, by name, that `access` may read a chunk of (every
    /// one for a reader of everything, indexed or not); hidden files (group records, files
    /// being written) are left out.
    pub fn uploads(&self, dir: &Path, access: &Access) -> Result<UploadListing, EngineError> {
        let indexed: HashSet<String> = self.files(access)?.into_iter().collect();
        let entries = std::fs::read_dir(dir).map_err(|source| EngineError::Io {
            path: dir.display().to_string(),
            source,
        })?;
        let mut documents = Vec::new();
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let is_indexed = indexed.contains(&entry.path().display().to_string());
            if name.starts_with('.') || !(is_indexed || *access == Access::Everything) {
                continue;
            }
            documents.push(UploadInfo::of(&name, &entry.path(), is_indexed));
        }
        documents.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(UploadListing {
            documents,
            indexed_files: indexed.len(),
        })
    }
}
