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

use crate::asks::asks;
use crate::corpus::RagError;
use crate::run::Run;
use shiori_core::{Answer, Hit, Source};

/// retrieve → the sentences that answer, or refuse when nothing is relevant enough. A question
/// of several asks ([`asks`]) retrieves and quotes for each.
pub(crate) fn extractive(run: &mut Run, question: &str) -> Result<Answer, RagError> {
    let k = run.params().top_k;
    let mut each = Vec::new();
    for ask in asks(question) {
        let retrieval = run.retrieve(&ask, k)?;
        each.push((ask, retrieval));
    }
    Ok(run.extractive(&each))
}

/// retrieve → answer from numbered sources → check citations.
pub(crate) fn basic(run: &mut Run, question: &str) -> Result<Answer, RagError> {
    let retrieval = run.retrieve(question, run.params().top_k)?;
    run.generate(question, sources(&retrieval.hits))
}

pub(crate) fn sources(hits: &[Hit]) -> Vec<Source> {
    hits.iter().map(Source::from).collect()
}
