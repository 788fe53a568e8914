//! Reads about the server itself: stats, health, metrics, the OpenAPI document and the page.

use super::index::require_admin;
use crate::error::ApiError;
use crate::progress::ProgressSnapshot;
use crate::state::LastReindex;
use crate::state::SharedState;
use axum::extract::State;
use axum::http::header;
use axum::response::{Html, IntoResponse};
use axum::Extension;
use axum::Json;
use serde::Serialize;
use serde_json::{json, Value};
use shiori_core::{Access, RetrievalConfig};
use shiori_engine::{PipelineKind, Reader};
use shiori_store::StoreStats;

const OPENAPI: &str = include_str!("../openapi.json");
const PAGE: &str = include_str!("../assets/index.html");
const SCRIPT: &str = include_str!("../assets/app.js");
const STYLE: &str = include_str!("../assets/style.css");
const FAVICON: &str = include_str!("../assets/favicon.svg");

/// `GET /api/stats`.
#[derive(Debug, Serialize)]
pub struct StatsResponse {
    #[serde(flatten)]
    pub index: StoreStats,
    pub retrieval: RetrievalConfig,
    pub pipelines: Vec<PipelineKind>,
    /// What a query without `pipeline` runs (`[pipeline] default`).
    pub default_pipeline: PipelineKind,
    /// The `[llm.models]` name that answers; `None` when the pipelines answer extractively.
    pub answer_model: Option<String>,
    /// The running write and the last one: an admin key's only, since when a write ran and
    /// what it wrote tells of files other keys may not read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reindex: Option<ProgressSnapshot>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_reindex: Option<LastReindex>,
}

/// `GET /api/stats`: embedder, dimension, counts, pipelines and the last write.
pub async fn stats(
    State(state): State<SharedState>,
    Extension(reader): Extension<Reader>,
) -> Result<Json<StatsResponse>, ApiError> {
    let engine = state.engine();
    let admin = reader.admin;
    let retrieval = engine.config.retrieval.clone();
    let default_pipeline = engine.config.pipeline.default;
    let answer_model = engine.config.answer_model().map(str::to_string);
    let mut index = tokio::task::spawn_blocking(move || engine.stats(&reader.access)).await??;
    // The database's addresses are the operator's business.
    if !admin {
        index.replicas.clear();
    }
    Ok(Json(StatsResponse {
        index,
        retrieval,
        pipelines: PipelineKind::ALL.to_vec(),
        default_pipeline,
        answer_model,
        reindex: admin.then(|| state.progress.snapshot()),
        last_reindex: state
            .last_reindex
            .lock()
            .ok()
            .and_then(|last| last.clone())
            .filter(|_| admin),
    }))
}

pub async fn healthz() -> Json<Value> {
    Json(json!({"status": "ok"}))
}

/// `GET /metrics`: Prometheus text. It counts the whole index, so with keys configured only an
/// admin key reads it.
pub async fn metrics(
    State(state): State<SharedState>,
    Extension(reader): Extension<Reader>,
) -> Result<impl IntoResponse, ApiError> {
    require_admin(&reader, "read the metrics")?;
    let engine = state.engine();
    let stats = tokio::task::spawn_blocking(move || engine.stats(&Access::Everything))
        .await
        .ok()
        .and_then(Result::ok);
    Ok((
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        state.metrics.render(stats.as_ref()),
    ))
}

pub async fn openapi() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "application/json")], OPENAPI)
}

pub async fn page() -> Html<&'static str> {
    Html(PAGE)
}

pub async fn script() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        SCRIPT,
    )
}

pub async fn style() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], STYLE)
}

/// The page's icon, a bookmark (shiori): at `/favicon.svg`, which the page links, and at
/// `/favicon.ico`, which browsers ask for on their own.
pub async fn favicon() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "image/svg+xml")], FAVICON)
}

pub async fn not_found() -> ApiError {
    ApiError::NotFound("no such route".into())
}

pub async fn method_not_allowed() -> ApiError {
    ApiError::MethodNotAllowed
}
