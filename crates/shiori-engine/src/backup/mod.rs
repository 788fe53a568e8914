//! Online backup and restore of a data directory, the one implementation behind `shiori
//! backup`, `shiori restore` and `POST /api/backup`.
//!
//! A backup is a folder: the embedded store's tables (a consistent copy taken with SQLite's
//! online backup API while the store is in use), its BM25 and vector indexes when they match
//! that copy's commit, `shiori.toml`, the uploads and the connectors' mirrors, and last a
//! `manifest.json` listing every file with its size and sha256. It is built under a temporary
//! name beside the destination and renamed into place only when whole, so a backup stopped at any
//! point (even by `kill -9`) leaves nothing at the destination and nothing restore accepts.

mod files;
mod manifest;
mod restore;

pub use manifest::{Manifest, ManifestFile, FORMAT};
pub use restore::{restore, RestoreReport};

use crate::{Config, StoreKind, CONFIG_FILE};
use files::{copy_tree, io_at, staging_dir};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};
use thiserror::Error;

/// What a backup holds besides the store: the uploads folder and the connectors' mirrors
/// (their files and manifests; downloads in progress are left out).
const COPIED_FOLDERS: [&str; 2] = ["uploads", "sources"];

/// Why a backup or restore did not happen; nothing is left at the destination when it did not.
#[derive(Debug, Error)]
pub enum BackupError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{0} already exists: a backup never overwrites one")]
    Exists(String),
    #[error(
        "{0} is not a finished backup: it has no manifest.json (an interrupted backup leaves none)"
    )]
    NoManifest(String),
    #[error("the backup's manifest.json is unreadable: {0}")]
    Manifest(#[source] serde_json::Error),
    #[error("backup format {0} is not one this build reads (it reads {FORMAT})")]
    Format(u32),
    #[error("{path} in the backup does not match its manifest ({why}): the backup is damaged or incomplete")]
    Damaged { path: String, why: String },
    #[error(
        "{0} is not empty: restore only into a new or empty data directory (it may be in use)"
    )]
    NotEmpty(String),
}

/// What `shiori backup` wrote.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BackupReport {
    pub store: StoreKind,
    /// The store's commit the copy holds (embedded store).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commits: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chunks: Option<u64>,
    /// Whether the BM25 and vector indexes were copied (else restore rebuilds them).
    pub derived_indexes: bool,
    pub files: usize,
    pub bytes: u64,
    pub elapsed_ms: f64,
}

/// Backs up the data directory `data_dir`, in use or not, into the new folder `dest`.
pub fn backup(data_dir: &Path, dest: &Path) -> Result<BackupReport, crate::EngineError> {
    let started = Instant::now();
    let config = Config::load(data_dir)?;
    if dest.exists() {
        return Err(BackupError::Exists(dest.display().to_string()).into());
    }
    let staging = staging_dir(dest, "backup")?;
    let mut manifest = Manifest::new(config.store.kind, unix_now());
    if config.store.kind == StoreKind::Embedded && data_dir.join("shiori.sqlite").is_file() {
        let snapshot = shiori_store_embedded::snapshot(data_dir, staging.path())?;
        manifest.commits = Some(snapshot.commits);
        manifest.chunks = Some(snapshot.chunks);
        manifest.derived_indexes = snapshot.derived;
    }
    copy_data(data_dir, staging.path())?;
    manifest.files = manifest::list_files(staging.path())?;
    manifest.write(staging.path())?;
    let kept: PathBuf = staging.keep();
    std::fs::rename(&kept, dest).map_err(io_at(dest))?;
    files::sync_parent(dest)?;
    Ok(BackupReport {
        store: manifest.store,
        commits: manifest.commits,
        chunks: manifest.chunks,
        derived_indexes: manifest.derived_indexes,
        files: manifest.files.len(),
        bytes: manifest.files.iter().map(|file| file.bytes).sum(),
        elapsed_ms: started.elapsed().as_secs_f64() * 1000.0,
    })
}

/// Copies `shiori.toml`, the uploads and the mirrors into `to`.
fn copy_data(data_dir: &Path, to: &Path) -> Result<(), BackupError> {
    let config = data_dir.join(CONFIG_FILE);
    if config.is_file() {
        std::fs::copy(&config, to.join(CONFIG_FILE)).map_err(io_at(&config))?;
    }
    for folder in COPIED_FOLDERS {
        let from = data_dir.join(folder);
        if from.is_dir() {
            copy_tree(&from, &to.join(folder), &|name| name == "partial")?;
        }
    }
    Ok(())
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}
