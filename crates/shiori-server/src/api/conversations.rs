//! `/api/conversations`: start, list, read and delete conversations; `POST /api/query` with a
//! `conversation_id` asks their next question. Transport only: the engine keeps them.

use crate::error::ApiError;
use crate::state::SharedState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use serde_json::{json, Value};
use shiori_core::{Conversation, ConversationId};
use shiori_engine::{Engine, Reader};
use std::sync::Arc;

/// `POST /api/conversations`: a new, empty conversation; 201 with its `id`.
/// It belongs to the key that started it: no other key can read, continue or delete it.
pub async fn start(
    State(state): State<SharedState>,
    Extension(reader): Extension<Reader>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let id = blocking(&state, move |engine| {
        Ok(engine.start_conversation(reader.owner.as_deref())?)
    })
    .await?;
    Ok((StatusCode::CREATED, Json(json!({ "id": id }))))
}

/// `GET /api/conversations`: every conversation (id, title, turns, created and updated times),
/// most recently updated first.
pub async fn list(
    State(state): State<SharedState>,
    Extension(reader): Extension<Reader>,
) -> Result<Json<Value>, ApiError> {
    let conversations = blocking(&state, move |engine| {
        Ok(engine.conversations(reader.owner.as_deref())?)
    })
    .await?;
    Ok(Json(json!({ "conversations": conversations })))
}

/// `GET /api/conversations/{id}`: one conversation with its turns.
pub async fn get_one(
    State(state): State<SharedState>,
    Extension(reader): Extension<Reader>,
    Path(id): Path<String>,
) -> Result<Json<Conversation>, ApiError> {
    let id = path_id(&id)?;
    let conversation = blocking(&state, move |engine| {
        Ok(engine.conversation(&id, reader.owner.as_deref())?)
    })
    .await?;
    Ok(Json(conversation))
}

/// `DELETE /api/conversations/{id}`.
pub async fn delete(
    State(state): State<SharedState>,
    Extension(reader): Extension<Reader>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let id = path_id(&id)?;
    let deleted = id.clone();
    blocking(&state, move |engine| {
        Ok(engine.delete_conversation(&id, reader.owner.as_deref())?)
    })
    .await?;
    Ok(Json(json!({ "deleted": deleted })))
}

/// An id in a path names no conversation unless it is one's id.
fn path_id(id: &str) -> Result<ConversationId, ApiError> {
    ConversationId::parse(id)
        .map_err(|_| ApiError::NotFound(format!("no conversation with conversation_id {id:?}")))
}

async fn blocking<T: Send + 'static>(
    state: &SharedState,
    work: impl FnOnce(&Engine) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    let engine: Arc<Engine> = state.engine();
    tokio::task::spawn_blocking(move || work(&engine)).await?
}
