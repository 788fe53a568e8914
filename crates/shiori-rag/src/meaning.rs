//! How near in meaning an answer candidate is to the question: the embedder's cosine between
//! the question, embedded as a query, and the candidate, embedded as a passage under its
//! source's title. Shared words choose the sentence that repeats the question ("submit your
//! timecard each week by the end of the day on Friday" for "what days does a Tock week run?");
//! the embedder, trained to find the passage that answers a query, finds the one that answers
//! it ("a week beginning on Sunday and ending on Saturday").

use shiori_core::{EmbedError, Embedder};
use std::cell::RefCell;

/// The question's vector, against which candidates are weighed.
pub(crate) struct Meaning<'e> {
    embedder: &'e dyn Embedder,
    question: Vec<f32>,
    /// The embedder's first failure to embed candidates, for the answer's trace.
    failure: RefCell<Option<EmbedError>>,
}

impl<'e> Meaning<'e> {
    /// The meaning of the newest question (the first line of `question`).
    pub(crate) fn of(
        embedder: &'e dyn Embedder,
        question: &str,
    ) -> Result<Meaning<'e>, EmbedError> {
        let newest = question.lines().next().unwrap_or_default();
        Ok(Meaning {
            embedder,
            question: embedder.embed_query(newest)?,
            failure: RefCell::new(None),
        })
    }

    /// What failed when candidates were embedded, once: the answer's trace says so.
    pub(crate) fn take_failure(&self) -> Option<EmbedError> {
        self.failure.borrow_mut().take()
    }

    /// Each `(title, candidate)`'s cosine with the question, the candidate read under its
    /// source's title (`Pages › New York › Getting in`): a sentence alone often names nothing
    /// of its topic ("It is on floor 55."). `None` when the embedder fails (kept for
    /// [`Meaning::take_failure`]): the words alone weigh the candidates then.
    pub(crate) fn nearness(&self, candidates: &[(&str, &str)]) -> Option<Vec<f64>> {
        let texts: Vec<String> = candidates
            .iter()
            .map(|(title, candidate)| match title.trim() {
                "" => candidate.to_string(),
                title => format!("{title}: {candidate}"),
            })
            .collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        match self.embedder.embed_passages(&refs) {
            Ok(vectors) => Some(
                vectors
                    .iter()
                    .map(|vector| dot(vector, &self.question))
                    .collect(),
            ),
            Err(error) => {
                self.failure.borrow_mut().get_or_insert(error);
                None
            }
        }
    }
}

fn dot(a: &[f32], b: &[f32]) -> f64 {
    a.iter().zip(b).map(|(x, y)| f64::from(x * y)).sum()
}
