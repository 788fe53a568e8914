//! Uploaded documents: files in the uploads folder, indexed as soon as they arrive.

use crate::error::ApiError;
use crate::state::SharedState;
use crate::uploads::{checked_id, sanitize_name};
use axum::extract::{Multipart, Path, State};
use axum::http::StatusCode;
use axum::Json;
use serde::Serialize;
use serde_json::{json, Value};
use shiori_engine::IndexReport;
use std::collections::HashSet;
use std::path::PathBuf;
use std::time::UNIX_EPOCH;

#[derive(Debug, Serialize)]
pub struct DocumentInfo {
    pub id: String,
    pub size: u64,
    /// Seconds since the Unix epoch.
    pub modified: u64,
    pub indexed: bool,
}

/// `GET /api/documents`: every uploaded document, and how many files the index holds in all.
pub async fn list(State(state): State<SharedState>) -> Result<Json<Value>, ApiError> {
    let engine = state.engine();
    let uploads = state.uploads_dir.clone();
    let body = tokio::task::spawn_blocking(move || -> Result<Value, ApiError> {
        let indexed: HashSet<String> = engine.files()?.into_iter().collect();
        let entries = std::fs::read_dir(&uploads)
            .map_err(|e| ApiError::Internal(format!("{}: {e}", uploads.display())))?;
        let mut documents = Vec::new();
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            documents.push(info(&name, &entry.path(), &indexed));
        }
        documents.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(json!({"documents": documents, "indexed_files": indexed.len()}))
    })
    .await??;
    Ok(Json(body))
}

/// `GET /api/documents/{id}`: one upload with the chunks indexed from it.
pub async fn get_one(
    State(state): State<SharedState>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let id = checked_id(&id)?;
    let path = existing_upload(&state, &id)?;
    let engine = state.engine();
    let body = tokio::task::spawn_blocking(move || -> Result<Value, ApiError> {
        let key = path.display().to_string();
        let chunks = engine.file_chunks(&key)?;
        let indexed: HashSet<String> = std::iter::once(key)
            .filter(|_| !chunks.is_empty())
            .collect();
        Ok(json!({"document": info(&id, &path, &indexed), "chunks": chunks}))
    })
    .await??;
    Ok(Json(body))
}

/// `POST /api/documents` (multipart, one or more file parts): stores the files under sanitised
/// names, replacing same-named ones, and indexes them.
pub async fn upload(
    State(state): State<SharedState>,
    mut multipart: Multipart,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let limit_bytes = state.options.upload_limit_bytes;
    let multipart_error = |error: axum::extract::multipart::MultipartError| {
        if error.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::PayloadTooLarge { limit_bytes }
        } else {
            ApiError::BadRequest(format!("bad multipart body: {}", error.body_text()))
        }
    };
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    while let Some(field) = multipart.next_field().await.map_err(multipart_error)? {
        let Some(raw_name) = field.file_name().map(str::to_string) else {
            continue;
        };
        let name = sanitize_name(&raw_name)?;
        let bytes = field.bytes().await.map_err(multipart_error)?;
        files.push((name, bytes.to_vec()));
    }
    if files.is_empty() {
        return Err(ApiError::BadRequest(
            "no files in the upload: send multipart/form-data with file parts".into(),
        ));
    }
    let uploads = state.uploads_dir.clone();
    let stored: Vec<Value> = files
        .iter()
        .map(|(name, bytes)| json!({"id": name, "size": bytes.len()}))
        .collect();
    let report = state
        .write("upload", move |engine, progress| {
            for (name, bytes) in &files {
                save(&uploads, name, bytes)?;
            }
            Ok(engine.index(&[uploads], progress)?)
        })
        .await?;
    Ok((
        StatusCode::CREATED,
        Json(json!({"documents": stored, "report": report})),
    ))
}

/// `DELETE /api/documents/{id}`: removes the file and its chunks.
pub async fn delete(
    State(state): State<SharedState>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let id = checked_id(&id)?;
    let path = existing_upload(&state, &id)?;
    let uploads = state.uploads_dir.clone();
    let report: IndexReport = state
        .write("delete", move |engine, progress| {
            std::fs::remove_file(&path)
                .map_err(|e| ApiError::Internal(format!("{}: {e}", path.display())))?;
            Ok(engine.index(&[uploads], progress)?)
        })
        .await?;
    Ok(Json(json!({"deleted": id, "report": report})))
}

fn existing_upload(state: &SharedState, id: &str) -> Result<PathBuf, ApiError> {
    let path = state.uploads_dir.join(id);
    if path.is_file() {
        Ok(path)
    } else {
        Err(ApiError::NotFound(format!("no uploaded document {id:?}")))
    }
}

fn info(id: &str, path: &std::path::Path, indexed: &HashSet<String>) -> DocumentInfo {
    let metadata = std::fs::metadata(path).ok();
    DocumentInfo {
        id: id.to_string(),
        size: metadata.as_ref().map_or(0, |m| m.len()),
        modified: metadata
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_secs()),
        indexed: indexed.contains(&path.display().to_string()),
    }
}

/// Writes beside the target under a hidden name (walks skip it) and renames over it, so a
/// reindex never reads half a file.
fn save(dir: &std::path::Path, name: &str, bytes: &[u8]) -> Result<(), ApiError> {
    let temporary = dir.join(format!(".{name}.part"));
    let target = dir.join(name);
    std::fs::write(&temporary, bytes)
        .and_then(|()| std::fs::rename(&temporary, &target))
        .map_err(|e| ApiError::Internal(format!("{}: {e}", target.display())))
}
