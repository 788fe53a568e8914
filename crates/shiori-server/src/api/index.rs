//! Writes to the index as a whole: reindexing the configured sources and evaluation runs
//! (which index the dataset's corpus first).

use crate::error::ApiError;
use crate::json::ApiJson;
use crate::progress::ProgressSnapshot;
use crate::state::SharedState;
use axum::extract::State;
use axum::{Extension, Json};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use shiori_core::{Access, Refusal, RetrievalConfig, RetrievalMode};
use shiori_engine::{check_retrieval, refusal_override, EvalRun, IndexReport, IndexTarget, Reader};
use shiori_eval::{sweep_grid, sweep_thresholds, EvalReport, SweepRow};
use std::time::Instant;

/// Documents a failure shows of what came back, best first.
const FAILURE_DOCS: usize = 3;

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
pub async fn reindex_status(State(state): State<SharedState>) -> Json<ProgressSnapshot> {
    Json(state.progress.snapshot())
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
    let retrieval = RetrievalConfig {
        refusal: refusal_override(request.refusal, request.threshold)?
            .unwrap_or(engine.config.retrieval.refusal),
        mode: request.mode.unwrap_or(engine.config.retrieval.mode),
        ..engine.config.retrieval.clone()
    };
    check_retrieval(&retrieval)?;
    drop(engine);
    let body = state
        .write("eval", move |engine, progress| {
            let mut run =
                engine.evaluate(&dataset, &retrieval, &Access::Everything, None, progress)?;
            let shown = engine.shown_paths();
            run.report.dataset = shown.show(&run.report.dataset);
            Ok(EvalResponse {
                failures: failures(&run),
                threshold_sweep: sweep_thresholds(&run.dataset, &run.outcomes, &sweep_grid()),
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
}

/// Queries the engine got wrong: an answerable one refused or with a wrong first document, an
/// unanswerable one answered.
fn failures(run: &EvalRun) -> Vec<Value> {
    run.dataset
        .queries
        .iter()
        .zip(&run.outcomes)
        .filter_map(|(query, outcome)| {
            let top_is_relevant = outcome
                .ranked_doc_ids
                .first()
                .is_some_and(|id| query.relevant.get(id).is_some_and(|grade| *grade > 0));
            let reason = match (query.answerable, outcome.refused) {
                (true, true) => "refused an answerable question",
                (true, false) if !query.relevant.is_empty() && !top_is_relevant => {
                    "the first document is not relevant"
                }
                (false, false) => "answered an unanswerable question",
                _ => return None,
            };
            let mut gold: Vec<&String> = query.relevant.keys().collect();
            gold.sort();
            let mut got: Vec<&String> = Vec::new();
            for id in &outcome.ranked_doc_ids {
                if !got.contains(&id) {
                    got.push(id);
                }
                if got.len() == FAILURE_DOCS {
                    break;
                }
            }
            Some(json!({
                "id": query.id,
                "question": query.text,
                "reason": reason,
                "gold": {
                    "answerable": query.answerable,
                    "doc_ids": gold,
                    "answers": query.answers,
                },
                "got": {
                    "refused": outcome.refused,
                    "doc_ids": got,
                    "best_dense": outcome.best_dense,
                    "top_text": outcome.top_text,
                },
            }))
        })
        .collect()
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
