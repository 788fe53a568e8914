//! `POST /api/backup`: an admin's online backup of the data directory while it serves, through
//! the same engine call as `shiori backup`. Backups go into the data directory's `backups/`
//! folder under a name the server picks, so a request never chooses where the server writes.

use super::index::require_admin;
use crate::error::ApiError;
use crate::state::SharedState;
use axum::extract::State;
use axum::{Extension, Json};
use serde::Serialize;
use shiori_engine::{BackupReport, Reader};
use std::time::{SystemTime, UNIX_EPOCH};

/// The folder of the data directory that holds the server's backups.
pub const BACKUPS_DIR: &str = "backups";

#[derive(Debug, Serialize)]
pub struct BackupResponse {
    /// The backup's folder under `backups/` in the data directory.
    pub name: String,
    #[serde(flatten)]
    pub report: BackupReport,
}

pub async fn backup(
    State(state): State<SharedState>,
    Extension(reader): Extension<Reader>,
) -> Result<Json<BackupResponse>, ApiError> {
    require_admin(&reader, "back up the index")?;
    let data_dir = state.engine().data_dir().to_path_buf();
    let since_epoch = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let name = format!(
        "shiori-{}-{:03}",
        since_epoch.as_secs(),
        since_epoch.subsec_millis()
    );
    let dest = data_dir.join(BACKUPS_DIR).join(&name);
    let report =
        tokio::task::spawn_blocking(move || shiori_engine::backup(&data_dir, &dest)).await??;
    Ok(Json(BackupResponse { name, report }))
}
