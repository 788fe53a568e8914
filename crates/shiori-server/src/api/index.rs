//! Writes to the index as a whole: reindexing the configured sources and evaluation runs
//! (which index the dataset's corpus first).

use crate::error::ApiError;
use crate::json::ApiJson;
use crate::progress::ProgressSnapshot;
use crate::state::SharedState;
use axum::extract::State;
use axum::{Extension, Json};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use shiori_core::{Access, Refusal, RetrievalMode};
use shiori_engine::{IndexReport, IndexTarget, Reader, RetrievalOverrides};
use shiori_eval::{EvalReport, SweepRow, TargetRow};
use std::time::Instant;

#[derive(Debug, Serialize)]
pub struct ReindexResponse {
    /// The folders and files walked, as shown paths.
    pub sources: Vec<String>,
    pub report: IndexReport,
    pub embedding: EmbeddingUsage,
    pub timings_ms: ReindexTimings,
}

#[derive(Debug, Serialize)]
pub struct EmbeddingUsage {
    pub model: String,
    /// Chunks the model embedded in this run.
    pub chunks_embedded: usize,
    /// Chunks whose vectors came from the embedding cache.
    pub chunks_cached: usize,
}

#[derive(Debug, Serialize)]
pub struct ReindexTimings {
    pub index_ms: f64,
    /// Indexing plus opening the fresh reader and swapping it in.
    pub total_ms: f64,
}

/// `POST /api/reindex`: every project, the configured sources and the uploads folder; 409 while
/// another write runs. Queries keep being served from the previous index until the new one is in.
pub async fn reindex(
    State(state): State<SharedState>,
    Extension(reader): Extension<Reader>,
) -> Result<Json<ReindexResponse>, ApiError> {
    require_admin(&reader, "reindex")?;
    let started = Instant::now();
    let uploads = state.uploads_dir.clone();
    let (sources, report, model) = state
        .write("reindex", move |engine, progress| {
            let mut targets = engine.configured_targets();
            targets.push(IndexTarget::Paths(vec![uploads]));
            let shown = engine.shown_paths().clone();
            let mut sources = Vec::new();
            for target in &targets {
                let paths = engine.target_paths(target)?;
                sources.extend(paths.iter().map(|p| shown.show(&p.display().to_string())));
            }
            let mut report = engine.index_targets(&targets, progress)?;
            shown.show_report(&mut report);
            Ok((sources, report, engine.embedder().model_id().to_string()))
        })
        .await?;
    Ok(Json(ReindexResponse {
        sources,
        embedding: EmbeddingUsage {
            model,
            chunks_embedded: report.chunks_embedded,
            chunks_cached: report.chunks_cached,
        },
        timings_ms: ReindexTimings {
            index_ms: report.elapsed_ms,
            total_ms: started.elapsed().as_secs_f64() * 1000.0,
        },
        report,
    }))
}

/// `GET /api/reindex`: progress of the running write, if any.
pub async fn reindex_status(
    State(state): State<SharedState>,
    Extension(reader): Extension<Reader>,
) -> Result<Json<ProgressSnapshot>, ApiError> {
    require_admin(&reader, "follow a write")?;
    Ok(Json(state.progress.snapshot()))
}

/// `POST /api/eval` overrides; the dataset itself comes from `[eval] dataset` in shiori.toml,
/// never from the request, so clients cannot make the server read arbitrary paths.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EvalRequest {
    refusal: Option<Refusal>,
    threshold: Option<f32>,
    mode: Option<RetrievalMode>,
}

/// `POST /api/eval`: the evaluator's metrics, the failures and the threshold trade-off.
pub async fn eval(
    State(state): State<SharedState>,
    Extension(reader): Extension<Reader>,
    ApiJson(request): ApiJson<EvalRequest>,
) -> Result<Json<EvalResponse>, ApiError> {
    require_admin(&reader, "evaluate")?;
    let engine = state.engine();
    let dataset = engine
        .config
        .eval_dataset(engine.data_dir())
        .ok_or_else(|| {
            ApiError::BadRequest(
                "no evaluation set configured: set `[eval] dataset = \"...\"` in shiori.toml"
                    .into(),
            )
        })?;
    let retrieval = engine.retrieval(&RetrievalOverrides {
        refusal: request.refusal,
        threshold: request.threshold,
        mode: request.mode,
        ..RetrievalOverrides::default()
    })?;
    drop(engine);
    let body = state
        .write("eval", move |engine, progress| {
            let mut run =
                engine.evaluate(&dataset, &retrieval, &Access::Everything, None, progress)?;
            let shown = engine.shown_paths();
            run.report.dataset = shown.show(&run.report.dataset);
            let sweeps = engine.sweeps(&run);
            Ok(EvalResponse {
                failures: run.failures(),
                threshold_sweep: sweeps.thresholds,
                refusal_sweep: sweeps.targets,
                dataset: shown.show(&dataset.display().to_string()),
                refusal: retrieval.refusal,
                mode: retrieval.mode,
                report: run.report,
            })
        })
        .await?;
    Ok(Json(body))
}

#[derive(Debug, Serialize)]
pub struct EvalResponse {
    /// The dataset folder, as a shown path.
    pub dataset: String,
    pub refusal: Refusal,
    pub mode: RetrievalMode,
    pub report: EvalReport,
    pub failures: Vec<Value>,
    pub threshold_sweep: Vec<SweepRow>,
    /// Answer rate and no-answer accuracy at each calibrated target, as `shiori eval
    /// --sweep-threshold` shows them.
    pub refusal_sweep: Vec<TargetRow>,
}

/// Writes and evaluations see every document: only an admin key (or the machine's owner) may
/// run them.
pub(crate) fn require_admin(reader: &Reader, what: &str) -> Result<(), ApiError> {
    if reader.admin {
        Ok(())
    } else {
        Err(ApiError::Forbidden(format!("only an admin key may {what}")))
    }
}
