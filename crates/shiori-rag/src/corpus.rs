use shiori_core::{ChatError, Retrieval};
use thiserror::Error;

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
    #[error("unknown pipeline {0:?}; expected one of: {names}", names = crate::PipelineKind::names())]
    UnknownPipeline(String),
    #[error("the answer was cancelled")]
    Cancelled,
    #[error("the answer model ran out of time")]
    OutOfTime,
}
