//! Uploaded documents: files in the uploads folder, indexed as soon as they arrive.

use super::index::require_admin;
use crate::error::ApiError;
use crate::state::SharedState;
use crate::uploads::{checked_id, clear_pending, mark_pending, sanitize_name};
use axum::extract::rejection::QueryRejection;
use axum::extract::{Multipart, Path, Query, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use shiori_core::{check_group_name, joined_groups, split_groups, Access, GROUPS_KEY};
use shiori_engine::{write_groups_file, Engine, IndexFailure, IndexReport, Reader, UploadInfo};
use std::path::PathBuf;

/// `GET /api/documents`: every uploaded document, and how many files the index holds in all.
/// A key sees only the uploads it may read a chunk of, and counts only such files.
pub async fn list(
    State(state): State<SharedState>,
    Extension(reader): Extension<Reader>,
) -> Result<Json<Value>, ApiError> {
    let engine = state.engine();
    let uploads = state.uploads_dir.clone();
    let body = tokio::task::spawn_blocking(move || -> Result<Value, ApiError> {
        let listing = engine.uploads(&uploads, &reader.access)?;
        Ok(json!({"documents": listing.documents, "indexed_files": listing.indexed_files}))
    })
    .await??;
    Ok(Json(body))
}

/// `GET /api/documents/{id}`: one upload with the chunks indexed from it; a 404, as for a
/// name never uploaded, when the key may read none of them.
pub async fn get_one(
    State(state): State<SharedState>,
    Extension(reader): Extension<Reader>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let id = checked_id(&id)?;
    let path = state.uploads_dir.join(&id);
    let engine = state.engine();
    let body = tokio::task::spawn_blocking(move || -> Result<Value, ApiError> {
        // A name never uploaded runs the same lookup as an upload the key may not read, so the
        // time of the 404 does not tell them apart.
        let key = path.display().to_string();
        let chunks = engine.file_chunks(&key, &reader.access)?;
        let hidden = chunks.is_empty() && reader.access != Access::Everything;
        if hidden || !path.is_file() {
            return Err(no_upload(&id));
        }
        let document = UploadInfo::of(&id, &path, !chunks.is_empty());
        Ok(json!({"document": document, "chunks": chunks}))
    })
    .await??;
    Ok(Json(body))
}

/// `GET /api/document?id=...`: which indexed document to read.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DocumentParams {
    id: String,
}

/// `GET /api/document?id=...`: an indexed document, uploaded or not, as the key may read it: its
/// chunks in order, with shown paths. `id` is anything a source shows of it (see
/// [`Engine::document`]): a file's path names every page of a PDF, a source such as
/// `report.pdf p.3` one page. A 404, worded as for an id nothing was indexed under, when the key
/// may read none of it.
pub async fn indexed(
    State(state): State<SharedState>,
    Extension(reader): Extension<Reader>,
    params: Result<Query<DocumentParams>, QueryRejection>,
) -> Result<Json<Value>, ApiError> {
    let Query(DocumentParams { id }) = params.map_err(|rejection| {
        ApiError::BadRequest(format!(
            "{}: send ?id= with a document id, chunk id or source as a source shows it",
            rejection.body_text()
        ))
    })?;
    let engine = state.engine();
    let wanted = id.clone();
    let chunks =
        tokio::task::spawn_blocking(move || engine.document(&wanted, &reader.access)).await??;
    if chunks.is_empty() {
        return Err(ApiError::NotFound(format!("no indexed document {id:?}")));
    }
    Ok(Json(json!({"id": id, "chunks": chunks})))
}

/// `POST /api/documents?replace=true`: whether an upload may replace a file of the same name.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UploadParams {
    #[serde(default)]
    replace: bool,
}

const INDEXED: &str = "indexed";
const FAILED: &str = "failed";

/// What became of one uploaded file.
#[derive(Debug, Serialize)]
pub struct UploadOutcome {
    pub id: String,
    pub size: usize,
    /// `indexed` (its chunks are searchable), or `failed` (nothing of it was indexed and the
    /// file was not kept).
    pub status: &'static str,
    /// Why it failed, or what of it could not be read (a bad JSONL line) when indexed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// `POST /api/documents` (multipart, one or more file parts): stores the files under sanitised
/// names and indexes them. 201 when every file was indexed; 422 when any was not (that file is
/// not kept, and the body says why per file). A name already uploaded is a 409 unless
/// `?replace=true`; two parts with one name are a 400. Nothing is stored when the request is
/// refused.
pub async fn upload(
    State(state): State<SharedState>,
    Extension(reader): Extension<Reader>,
    Query(params): Query<UploadParams>,
    multipart: Multipart,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    require_admin(&reader, "upload")?;
    let (files, groups) = read_files(multipart, state.options.upload_limit_bytes).await?;
    let uploads = state.uploads_dir.clone();
    for (name, _) in &files {
        if !params.replace && uploads.join(name).exists() {
            return Err(ApiError::Conflict(format!(
                "a document named {name:?} is already uploaded: send ?replace=true to replace it"
            )));
        }
    }
    let (outcomes, report) = state
        .write("upload", move |engine, progress| {
            let names = || files.iter().map(|(name, _)| name.as_str());
            mark_pending(&uploads, names())?;
            for (name, bytes) in &files {
                save_groups(&uploads.join(name), groups.as_deref())?;
                save(&uploads, name, bytes)?;
            }
            let indexed = engine.index(std::slice::from_ref(&uploads), progress);
            // The write ended (a failure is reported); only a process that dies leaves a mark.
            clear_pending(&uploads, names());
            let mut report = indexed?;
            let outcomes = outcomes_of(engine, &files, &uploads, &mut report)?;
            let failed: Vec<&UploadOutcome> =
                outcomes.iter().filter(|o| o.status == FAILED).collect();
            if !failed.is_empty() {
                for outcome in failed {
                    std::fs::remove_file(uploads.join(&outcome.id))
                        .map_err(|e| ApiError::Internal(format!("{}: {e}", outcome.id)))?;
                    save_groups(&uploads.join(&outcome.id), None)?;
                }
                // Drops whatever an earlier version of a failed file left in the index.
                let cleanup = engine.index(&[uploads], progress)?;
                report.files_removed += cleanup.files_removed;
                report.chunks_removed += cleanup.chunks_removed;
            }
            Ok((outcomes, report))
        })
        .await?;
    let status = if outcomes.iter().all(|o| o.status == INDEXED) {
        StatusCode::CREATED
    } else {
        StatusCode::UNPROCESSABLE_ENTITY
    };
    Ok((
        status,
        Json(json!({"documents": outcomes, "report": report})),
    ))
}

/// The file parts of an upload, under sanitised, distinct names, and the groups its `groups`
/// field names (comma-separated), in stored form.
async fn read_files(
    mut multipart: Multipart,
    limit_bytes: usize,
) -> Result<(Vec<(String, Vec<u8>)>, Option<String>), ApiError> {
    let multipart_error = |error: axum::extract::multipart::MultipartError| {
        if error.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::PayloadTooLarge { limit_bytes }
        } else {
            ApiError::BadRequest(format!("bad multipart body: {}", error.body_text()))
        }
    };
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    let mut groups = None;
    while let Some(field) = multipart.next_field().await.map_err(multipart_error)? {
        let Some(raw_name) = field.file_name().map(str::to_string) else {
            if field.name() == Some(GROUPS_KEY) {
                groups = Some(field.text().await.map_err(multipart_error)?);
            }
            continue;
        };
        let name = sanitize_name(&raw_name)?;
        if files.iter().any(|(seen, _)| *seen == name) {
            return Err(ApiError::BadRequest(format!(
                "two parts of the upload are both named {name:?}"
            )));
        }
        let bytes = field.bytes().await.map_err(multipart_error)?;
        files.push((name, bytes.to_vec()));
    }
    if files.is_empty() {
        return Err(ApiError::BadRequest(
            "no files in the upload: send multipart/form-data with file parts".into(),
        ));
    }
    Ok((files, groups.map(|raw| checked_groups(&raw)).transpose()?))
}

fn checked_groups(raw: &str) -> Result<String, ApiError> {
    for group in split_groups(raw) {
        check_group_name(group)
            .map_err(|message| ApiError::BadRequest(format!("groups: {message}")))?;
    }
    Ok(joined_groups(split_groups(raw)))
}

/// Records the groups of the upload at `path` beside it (none: readable by every key).
fn save_groups(path: &std::path::Path, groups: Option<&str>) -> Result<(), ApiError> {
    write_groups_file(path, groups)
        .map_err(|e| ApiError::Internal(format!("{}: {e}", path.display())))
}

/// Each uploaded file's outcome: indexed when it has chunks in the index. The report keeps only
/// the failures of this upload's files, named by their ids, so neither older failures nor
/// server paths reach the client.
fn outcomes_of(
    engine: &Engine,
    files: &[(String, Vec<u8>)],
    uploads: &std::path::Path,
    report: &mut IndexReport,
) -> Result<Vec<UploadOutcome>, ApiError> {
    let failures = std::mem::take(&mut report.failures);
    let mut outcomes = Vec::with_capacity(files.len());
    for (name, bytes) in files {
        let path = uploads.join(name).display().to_string();
        let reasons_in = |list: &[IndexFailure]| {
            list.iter()
                .filter(|failure| failure.path == path)
                .map(|failure| engine.shown_paths().redact(&failure.reason))
                .collect::<Vec<_>>()
                .join("; ")
        };
        let indexed = !engine.file_chunks(&path, &Access::Everything)?.is_empty();
        let mut reason = reasons_in(&failures);
        if reason.is_empty() && !indexed {
            // A file indexed with nothing in it (a blank one) is reported by a warning.
            reason = reasons_in(&report.warnings);
        }
        if !reason.is_empty() {
            report.failures.push(IndexFailure {
                path: name.clone(),
                reason: reason.clone(),
            });
        }
        outcomes.push(UploadOutcome {
            id: name.clone(),
            size: bytes.len(),
            status: if indexed { INDEXED } else { FAILED },
            reason: match (reason.is_empty(), indexed) {
                (false, _) => Some(reason),
                (true, false) => Some("nothing in it could be indexed".into()),
                (true, true) => None,
            },
        });
    }
    // Warnings (a `.groups` file naming no key's group, say) name the file where it is kept.
    engine.shown_paths().show_failures(&mut report.warnings);
    Ok(outcomes)
}

/// `DELETE /api/documents/{id}`: removes the file and its chunks.
pub async fn delete(
    State(state): State<SharedState>,
    Extension(reader): Extension<Reader>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    require_admin(&reader, "delete documents")?;
    let id = checked_id(&id)?;
    let path = existing_upload(&state, &id)?;
    let uploads = state.uploads_dir.clone();
    let report: IndexReport = state
        .write("delete", move |engine, progress| {
            std::fs::remove_file(&path)
                .map_err(|e| ApiError::Internal(format!("{}: {e}", path.display())))?;
            save_groups(&path, None)?;
            let mut report = engine.index(&[uploads], progress)?;
            engine.shown_paths().show_report(&mut report);
            Ok(report)
        })
        .await?;
    Ok(Json(json!({"deleted": id, "report": report})))
}

fn existing_upload(state: &SharedState, id: &str) -> Result<PathBuf, ApiError> {
    let path = state.uploads_dir.join(id);
    if path.is_file() {
        Ok(path)
    } else {
        Err(no_upload(id))
    }
}

fn no_upload(id: &str) -> ApiError {
    ApiError::NotFound(format!("no uploaded document {id:?}"))
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
