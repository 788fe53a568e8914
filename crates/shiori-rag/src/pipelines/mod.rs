//! Each pipeline as an explicit sequence of steps over a [`Run`](crate::run::Run).

mod agentic;
mod calculator;
mod crag;
mod iterative;
mod multi_query;
mod reflective;

pub(crate) use agentic::agentic;
pub(crate) use crag::{crag, fusion_crag};
pub(crate) use iterative::iterative;
pub(crate) use multi_query::{decompose, fusion, hyde};
pub(crate) use reflective::reflective;

use crate::corpus::RagError;
use crate::run::Run;
use shiori_core::{Answer, Hit, Source};

/// retrieve → the sentences that answer, or refuse when nothing is relevant enough.
pub(crate) fn extractive(run: &mut Run, question: &str) -> Result<Answer, RagError> {
    let retrieval = run.retrieve(question, run.params().top_k)?;
    Ok(run.extractive(question, &retrieval))
}

/// retrieve → answer from numbered sources → check citations.
pub(crate) fn basic(run: &mut Run, question: &str) -> Result<Answer, RagError> {
    let retrieval = run.retrieve(question, run.params().top_k)?;
    run.generate(question, sources(&retrieval.hits))
}

pub(crate) fn sources(hits: &[Hit]) -> Vec<Source> {
    hits.iter().map(Source::from).collect()
}
