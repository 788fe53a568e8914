//! `shiori restore`: a verified backup into a new or empty data directory, never over one in use.

use super::files::{io_at, staging_dir, sync_parent};
use super::{BackupError, Manifest};
use crate::{Engine, EngineError, StoreKind};
use serde::Serialize;
use shiori_core::Access;
use shiori_models::assets::ShioriHome;
use std::path::Path;
use std::time::Instant;

/// What `shiori restore` did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RestoreReport {
    pub store: StoreKind,
    pub files: usize,
    pub bytes: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chunks: Option<u64>,
    /// The BM25 and vector indexes came from the backup (else they were rebuilt from the tables).
    pub derived_indexes_copied: bool,
    /// Why the derived indexes were rebuilt, when they were.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rebuilt: Option<String>,
    pub elapsed_ms: f64,
}

/// Restores the backup in `src` into `data_dir`, which must not exist or be empty. The files are
/// checked against the manifest, copied beside `data_dir`, opened (rebuilding the derived indexes
/// when the backup carries none) and only then renamed into place.
pub fn restore(
    src: &Path,
    data_dir: &Path,
    home: &ShioriHome,
) -> Result<RestoreReport, EngineError> {
    let started = Instant::now();
    let manifest = Manifest::verified(src)?;
    refuse_non_empty(data_dir)?;
    let staging = staging_dir(data_dir, "restore")?;
    for file in &manifest.files {
        let to = staging.path().join(&file.path);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).map_err(io_at(parent))?;
        }
        let from = src.join(&file.path);
        std::fs::copy(&from, &to).map_err(io_at(&from))?;
    }
    let rebuilt = match manifest.chunks {
        Some(_) => open_once(staging.path(), home)?,
        None => None,
    };
    if data_dir.exists() {
        std::fs::remove_dir(data_dir).map_err(io_at(data_dir))?;
    }
    let kept = staging.keep();
    std::fs::rename(&kept, data_dir).map_err(io_at(data_dir))?;
    sync_parent(data_dir)?;
    Ok(RestoreReport {
        store: manifest.store,
        files: manifest.files.len(),
        bytes: manifest.files.iter().map(|file| file.bytes).sum(),
        chunks: manifest.chunks,
        derived_indexes_copied: manifest.derived_indexes,
        rebuilt,
        elapsed_ms: started.elapsed().as_secs_f64() * 1000.0,
    })
}

/// A data directory that holds anything may be in use: restore never writes into one.
fn refuse_non_empty(data_dir: &Path) -> Result<(), BackupError> {
    match std::fs::read_dir(data_dir).map(|mut entries| entries.next().is_some()) {
        Ok(true) => Err(BackupError::NotEmpty(data_dir.display().to_string())),
        Ok(false) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(error) => Err(io_at(data_dir)(error)),
    }
}

/// Opens the restored store, which checks its derived indexes against the tables and rebuilds
/// them if they are absent or do not match; returns why it rebuilt them.
fn open_once(dir: &Path, home: &ShioriHome) -> Result<Option<String>, EngineError> {
    let engine = Engine::open(dir, home)?;
    Ok(engine.stats(&Access::Everything)?.last_rebuild)
}
