//! Answer pipelines: from a question to an `Answer` with sources, citations and a trace. The
//! extractive pipeline needs no LLM: it quotes the sentences of the best sources that answer
//! the question, or refuses when nothing is relevant enough. The others are explicit step
//! graphs over chat models (basic, RAG-Fusion, decompose, HyDE, CRAG, fusion+CRAG, iterative,
//! agentic, reflective), each step recorded with its model, tokens, cost and time; a fallback
//! chain runs them in turn until one answers. Pipelines reach the index only through the
//! [`Corpus`] trait, so this crate knows nothing of the store.

mod answer_step;
mod asked;
mod asks;
mod attribution;
mod budget;
mod case;
mod chain;
mod citations;
mod conversation;
mod corpus;
mod events;
mod extractive;
mod follow_up;
mod fuse;
mod gate;
mod kind;
mod markup;
mod meaning;
mod pipelines;
mod prompts;
mod run;
mod sentences;
#[cfg(test)]
mod test_support;
mod verify;

pub use citations::{check_citations, CheckedCitations};
pub use conversation::recent_turns;
pub use corpus::{Corpus, RagError};
pub use events::{AnswerEvent, Listener};
pub use extractive::{refuses, REFUSAL_TEXT};
pub use follow_up::searched as follow_up_searched;
pub use kind::PipelineKind;
pub use run::{Models, PipelineParams, Pipelines, CANNOT_ANSWER_TEXT};
