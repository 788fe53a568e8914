//! Answer pipelines by name. The registry in [`Pipelines::default`] is the one place a request's
//! `pipeline` is dispatched; the generative pipelines plug in there.

use crate::error::ApiError;
use serde::{Deserialize, Serialize};
use shiori_core::{Filters, RetrievalConfig, RetrievalMode, Source, Timings, Usage};
use shiori_engine::{AskOptions, Engine, EngineError};
use shiori_rag::{extractive_answer, PipelineKind, Relevance};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

/// The pipeline a query without `pipeline` runs.
pub const DEFAULT_PIPELINE: &str = "extractive";
/// Longest question accepted, in characters.
const MAX_QUESTION_CHARS: usize = 2_000;
const MAX_TOP_K: usize = 50;

/// `POST /api/query`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueryRequest {
    pub question: String,
    pub pipeline: Option<String>,
    pub top_k: Option<usize>,
    pub threshold: Option<f32>,
    #[serde(default)]
    pub filters: Filters,
    pub mode: Option<RetrievalMode>,
    /// Overrides `[retrieval] two_stage` (it applies with `filters.projects`).
    pub two_stage: Option<bool>,
}

impl QueryRequest {
    /// The retrieval settings of this request over the configured ones; rejects bad values.
    pub fn retrieval(&self, base: &RetrievalConfig) -> Result<RetrievalConfig, ApiError> {
        if self.question.trim().is_empty() {
            return Err(ApiError::BadRequest("`question` is empty".into()));
        }
        if self.question.chars().count() > MAX_QUESTION_CHARS {
            return Err(ApiError::BadRequest(format!(
                "`question` is longer than {MAX_QUESTION_CHARS} characters"
            )));
        }
        if let Some(top_k) = self.top_k.filter(|k| !(1..=MAX_TOP_K).contains(k)) {
            return Err(ApiError::BadRequest(format!(
                "`top_k` must be between 1 and {MAX_TOP_K}, got {top_k}"
            )));
        }
        if let Some(threshold) = self
            .threshold
            .filter(|t| !t.is_finite() || !(-1.0..=1.0).contains(t))
        {
            return Err(ApiError::BadRequest(format!(
                "`threshold` is a cosine similarity between -1 and 1, got {threshold}"
            )));
        }
        Ok(RetrievalConfig {
            top_k: self.top_k.unwrap_or(base.top_k),
            threshold: self.threshold.unwrap_or(base.threshold),
            mode: self.mode.unwrap_or(base.mode),
            two_stage: self.two_stage.unwrap_or(base.two_stage),
            ..base.clone()
        })
    }
}

/// `[n]` in the answer text points at `sources[source_index]`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Citation {
    pub marker: usize,
    pub source_index: usize,
    pub doc_id: String,
    pub chunk_id: String,
}

/// One step of a pipeline run, as the page's trace list shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceStep {
    pub step: String,
    pub detail: String,
    pub ms: f64,
}

/// What `POST /api/query` answers (and the `done` event of a stream carries).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QueryResponse {
    pub answer: String,
    pub refused: bool,
    pub pipeline: String,
    pub sources: Vec<Source>,
    pub citations: Vec<Citation>,
    pub trace: Vec<TraceStep>,
    pub usage: Usage,
    pub cost_usd: f64,
    pub timings_ms: Timings,
}

/// What a pipeline reports while it runs; streamed as server-sent events.
#[derive(Debug, Clone)]
pub enum PipelineEvent {
    Step(TraceStep),
    Token(String),
}

/// Parameters of one run, validated.
pub struct PipelineQuery<'a> {
    pub question: &'a str,
    pub retrieval: RetrievalConfig,
    pub filters: &'a Filters,
}

/// An answer pipeline: from a question to a [`QueryResponse`], reporting steps and tokens.
pub trait Pipeline: Send + Sync {
    fn name(&self) -> &str;
    fn run(
        &self,
        engine: &Engine,
        query: &PipelineQuery<'_>,
        events: &mut dyn FnMut(PipelineEvent),
    ) -> Result<QueryResponse, EngineError>;
}

/// The pipelines this server runs, by name.
pub struct Pipelines {
    by_name: BTreeMap<String, Arc<dyn Pipeline>>,
}

impl Default for Pipelines {
    /// Every pipeline this build has.
    fn default() -> Pipelines {
        let mut all: Vec<Arc<dyn Pipeline>> = vec![Arc::new(Extractive)];
        all.extend(
            PipelineKind::ALL
                .into_iter()
                .filter(|kind| *kind != PipelineKind::Extractive)
                .map(|kind| Arc::new(Generative(kind)) as Arc<dyn Pipeline>),
        );
        Pipelines {
            by_name: all.into_iter().map(|p| (p.name().to_string(), p)).collect(),
        }
    }
}

impl Pipelines {
    pub fn names(&self) -> Vec<&str> {
        self.by_name.keys().map(String::as_str).collect()
    }

    /// The pipeline called `name` (the default when `None`); 400 listing the known ones otherwise.
    pub fn get(&self, name: Option<&str>) -> Result<Arc<dyn Pipeline>, ApiError> {
        let name = name.unwrap_or(DEFAULT_PIPELINE);
        self.by_name.get(name).cloned().ok_or_else(|| {
            ApiError::BadRequest(format!(
                "unknown pipeline {name:?}; known pipelines: {}",
                self.names().join(", ")
            ))
        })
    }
}

/// Answers with the best chunk, cited as `[1]`, or refuses below the dense-cosine threshold.
struct Extractive;

impl Pipeline for Extractive {
    fn name(&self) -> &str {
        "extractive"
    }

    fn run(
        &self,
        engine: &Engine,
        query: &PipelineQuery<'_>,
        events: &mut dyn FnMut(PipelineEvent),
    ) -> Result<QueryResponse, EngineError> {
        let started = Instant::now();
        let mut trace = Vec::new();
        let mut record = |step: TraceStep, events: &mut dyn FnMut(PipelineEvent)| {
            events(PipelineEvent::Step(step.clone()));
            trace.push(step);
        };

        let retrieved = engine.search(query.question, &query.retrieval, query.filters)?;
        let best = retrieved
            .best_dense
            .map_or("no dense score".to_string(), |c| {
                format!("best dense cosine {c:.3}")
            });
        record(
            TraceStep {
                step: "retrieve".into(),
                detail: format!(
                    "{} retrieval: {} hit(s), {best}",
                    mode_name(query.retrieval.mode),
                    retrieved.hits.len()
                ),
                ms: retrieved.embed_ms + retrieved.retrieve_ms,
            },
            events,
        );

        let answer_started = Instant::now();
        let relevance = Relevance {
            best_dense: retrieved.best_dense,
            threshold: query.retrieval.threshold,
        };
        let answer = extractive_answer(&retrieved.hits, relevance, Timings::default());
        let verdict = if answer.refused { "refuse" } else { "answer" };
        record(
            TraceStep {
                step: "threshold".into(),
                detail: format!(
                    "{best} against threshold {:.3}: {verdict}",
                    query.retrieval.threshold
                ),
                ms: 0.0,
            },
            events,
        );

        let (text, citations) = match answer.sources.first() {
            Some(source) if !answer.refused => (
                format!("{} [1]", answer.answer),
                vec![Citation {
                    marker: 1,
                    source_index: 0,
                    doc_id: source.doc_id.clone(),
                    chunk_id: source.chunk_id.clone(),
                }],
            ),
            _ => (answer.answer.clone(), Vec::new()),
        };
        let answer_ms = answer_started.elapsed().as_secs_f64() * 1000.0;
        let detail = match citations.first() {
            Some(citation) => format!("answered with the best chunk, {}", citation.chunk_id),
            None => "refused: nothing relevant enough".to_string(),
        };
        record(
            TraceStep {
                step: "extract".into(),
                detail,
                ms: answer_ms,
            },
            events,
        );
        for piece in text.split_inclusive(' ') {
            events(PipelineEvent::Token(piece.to_string()));
        }

        Ok(QueryResponse {
            answer: text,
            refused: answer.refused,
            pipeline: self.name().to_string(),
            sources: answer.sources,
            citations,
            trace,
            usage: Usage::default(),
            cost_usd: 0.0,
            timings_ms: Timings {
                embed_ms: retrieved.embed_ms,
                retrieve_ms: retrieved.retrieve_ms,
                answer_ms,
                total_ms: started.elapsed().as_secs_f64() * 1000.0,
            },
        })
    }
}

/// A generation pipeline of `shiori-rag` run through the engine with the configured chat models
/// (each degrades to the extractive answer, and says so in its trace, when none is configured).
/// Steps and answer text are reported once the run is over: the pipelines return whole answers.
struct Generative(PipelineKind);

impl Pipeline for Generative {
    fn name(&self) -> &str {
        self.0.name()
    }

    fn run(
        &self,
        engine: &Engine,
        query: &PipelineQuery<'_>,
        events: &mut dyn FnMut(PipelineEvent),
    ) -> Result<QueryResponse, EngineError> {
        let options = AskOptions {
            pipeline: Some(self.0.name().to_string()),
            rerank: false,
        };
        let answer = engine.ask_with(query.question, &query.retrieval, query.filters, &options)?;
        let trace: Vec<TraceStep> = answer
            .trace
            .steps
            .iter()
            .map(|step| TraceStep {
                step: step.step.clone(),
                detail: match &step.model {
                    Some(model) => format!("{model}: {} → {}", step.input, step.output),
                    None => format!("{} → {}", step.input, step.output),
                },
                ms: step.ms,
            })
            .collect();
        for step in &trace {
            events(PipelineEvent::Step(step.clone()));
        }
        for piece in answer.answer.split_inclusive(' ') {
            events(PipelineEvent::Token(piece.to_string()));
        }
        let citations = answer
            .citations
            .iter()
            .map(|c| Citation {
                marker: c.number,
                source_index: c.number.saturating_sub(1),
                doc_id: c.doc_id.clone(),
                chunk_id: c.chunk_id.clone(),
            })
            .collect();
        Ok(QueryResponse {
            answer: answer.answer,
            refused: answer.refused,
            pipeline: answer.trace.pipeline,
            sources: answer.sources,
            citations,
            trace,
            usage: answer.usage,
            cost_usd: answer.cost_usd,
            timings_ms: answer.timings_ms,
        })
    }
}

fn mode_name(mode: RetrievalMode) -> &'static str {
    match mode {
        RetrievalMode::Bm25 => "bm25",
        RetrievalMode::Dense => "dense",
        RetrievalMode::Hybrid => "hybrid",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(json: serde_json::Value) -> Result<QueryRequest, serde_json::Error> {
        serde_json::from_value(json)
    }

    #[test]
    fn unknown_pipelines_are_refused_with_the_known_names() {
        let pipelines = Pipelines::default();
        assert_eq!(pipelines.get(None).unwrap().name(), "extractive");
        assert_eq!(pipelines.get(Some("crag")).unwrap().name(), "crag");
        let error = pipelines.get(Some("telepathy")).err().unwrap();
        assert_eq!(error.status(), axum::http::StatusCode::BAD_REQUEST);
        assert!(
            error
                .to_string()
                .contains("known pipelines: agentic, basic"),
            "{error}"
        );
    }

    #[test]
    fn validates_overrides_and_rejects_unknown_fields() {
        let base = RetrievalConfig::default();
        let ok = request(serde_json::json!({"question": "vpn?", "top_k": 3, "mode": "bm25"}))
            .unwrap()
            .retrieval(&base)
            .unwrap();
        assert_eq!((ok.top_k, ok.mode), (3, RetrievalMode::Bm25));
        assert_eq!(ok.threshold, base.threshold);
        for bad in [
            serde_json::json!({"question": "  "}),
            serde_json::json!({"question": "q", "top_k": 0}),
            serde_json::json!({"question": "q", "threshold": 1.5}),
        ] {
            let error = request(bad.clone()).unwrap().retrieval(&base).unwrap_err();
            assert_eq!(error.status(), axum::http::StatusCode::BAD_REQUEST, "{bad}");
        }
        assert!(request(serde_json::json!({"question": "q", "topk": 3})).is_err());
    }
}
