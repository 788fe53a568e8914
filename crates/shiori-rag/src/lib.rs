//! Answer pipelines: from retrieved chunks to an `Answer` with sources. The extractive pipeline
//! needs no LLM: it answers with the best chunk, or refuses when nothing is relevant enough.

mod extractive;

pub use extractive::{extractive_answer, Relevance, REFUSAL_TEXT};
