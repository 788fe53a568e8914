//! Retrieval: turns a query into ranked chunks. Runs the dense and BM25 retrievers over a store,
//! fuses their rankings (RRF or weighted), applies time decay and metadata filters; merges two-stage (project, then related projects)
//! results.

mod decay;
mod fusion;
mod retriever;
mod two_stage;

pub use decay::decay_factor;
pub use fusion::{fuse, Fused};
pub use retriever::{RetrieveError, Retrieved, Retriever};
pub use two_stage::merge_two_stage;
