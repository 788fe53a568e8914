//! Retrieval: turns a query into ranked chunks. Runs the dense and BM25 retrievers over a store,
//! fuses their rankings, applies time decay and metadata filters, decides whether anything
//! retrieved is relevant enough to answer from (`refusal.rs`, reading how much of the question
//! one ranked sentence covers from `coverage.rs`), and merges two-stage (project, then related
//! projects) results.

mod calibration;
mod coverage;
mod decay;
mod fusion;
mod gate;
mod gate_model;
mod refusal;
mod refusal_model;
mod rerank;
mod retriever;
mod signals;
mod two_stage;

pub use calibration::{features, RefusalModel, FEATURES};
pub use decay::decay_factor;
pub use fusion::{fuse, Fused, MissedScores};
pub use refusal::{decide, default_cosine};
pub use rerank::rerank;
pub use retriever::{RetrieveError, Retriever};
pub use signals::{relevance_signals, SIGNAL_DEPTH};
pub use two_stage::merge_two_stage;
