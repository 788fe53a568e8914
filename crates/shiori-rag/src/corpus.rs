use shiori_core::{ChatError, Hit};
use thiserror::Error;

/// What one retrieval returned.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Retrieval {
    pub hits: Vec<Hit>,
    /// The best dense cosine of the query, for the extractive refusal.
    pub best_dense: Option<f32>,
    pub embed_ms: f64,
    pub retrieve_ms: f64,
}

/// Where pipelines retrieve from: the engine binds its store, retrieval settings and filters;
/// tests bind a fixed list. Any `Fn(&str, usize) -> Result<Retrieval, RagError>` is one.
pub trait Corpus: Sync {
    /// The best `k` chunks for `query`.
    fn retrieve(&self, query: &str, k: usize) -> Result<Retrieval, RagError>;
}

impl<F> Corpus for F
where
    F: Fn(&str, usize) -> Result<Retrieval, RagError> + Sync,
{
    fn retrieve(&self, query: &str, k: usize) -> Result<Retrieval, RagError> {
        self(query, k)
    }
}

#[derive(Debug, Error)]
pub enum RagError {
    #[error("retrieval failed")]
    Retrieval(#[source] Box<dyn std::error::Error + Send + Sync>),
    #[error(transparent)]
    Chat(#[from] ChatError),
    #[error("reranking failed: {0}")]
    Rerank(String),
    #[error("unknown pipeline {0:?}; expected one of: {names}", names = crate::PipelineKind::names())]
    UnknownPipeline(String),
    #[error("the answer was cancelled")]
    Cancelled,
}
