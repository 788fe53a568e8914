//! How near in meaning an answer candidate is to the question: the embedder's cosine between
//! the question, embedded as a query, and the candidate, embedded as a passage under its
//! source's title. Shared words choose the sentence that repeats the question ("submit your
//! timecard each week by the end of the day on Friday" for "what days does a Tock week run?");
//! the embedder, trained to find the passage that answers a query, finds the one that answers
//! it ("a week beginning on Sunday and ending on Saturday").

use shiori_core::{embedding_input, EmbedError, Embedder};
use std::cell::RefCell;

/// How near a candidate is in meaning to the newest question alone, which decides among a
/// source's sentences (as its words do), and to the question as retrieval searched it, which
/// decides between sources: "What about the Starter plan?" after a question on the Business
/// plan's rate limits quotes the Starter plan's rate limit, not its price.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Nearness {
    pub newest: f64,
    pub searched: f64,
}

/// The question's vectors, against which candidates are weighed.
pub(crate) struct Meaning<'e> {
    embedder: &'e dyn Embedder,
    newest: Vec<f32>,
    /// The question as retrieval searched it, when it is more than the newest question (a
    /// follow-up that leans on the questions before it comes with them, a line each).
    searched: Option<Vec<f32>>,
    /// The embedder's first failure to embed candidates, for the answer's trace.
    failure: RefCell<Option<EmbedError>>,
}

impl<'e> Meaning<'e> {
    /// The meaning of `question`: its first line is the newest question, the lines after it
    /// the questions it leans on. `searched`: `question`'s vector when retrieval already
    /// embedded it (`Retrieval::query_vector`), so it is not embedded twice.
    pub(crate) fn of(
        embedder: &'e dyn Embedder,
        question: &str,
        searched: Option<&[f32]>,
    ) -> Result<Meaning<'e>, EmbedError> {
        let searched = match searched {
            Some(vector) => vector.to_vec(),
            None => embedder.embed_query(question)?,
        };
        let newest = question.lines().next().unwrap_or_default();
        let (newest, searched) = match question.trim() == newest.trim() {
            true => (searched, None),
            false => (embedder.embed_query(newest)?, Some(searched)),
        };
        Ok(Meaning {
            embedder,
            newest,
            searched,
            failure: RefCell::new(None),
        })
    }

    /// What failed when candidates were embedded, once: the answer's trace says so.
    pub(crate) fn take_failure(&self) -> Option<EmbedError> {
        self.failure.borrow_mut().take()
    }

    /// Each `(title, candidate)`'s cosines with the question, the candidate read under its
    /// source's title (`Pages › New York › Getting in`) as a chunk is embedded under its own
    /// ([`embedding_input`]): a sentence alone often names nothing
    /// of its topic ("It is on floor 55."). `None` when the embedder fails (kept for
    /// [`Meaning::take_failure`]): the words alone weigh the candidates then.
    pub(crate) fn nearness(&self, candidates: &[(&str, &str)]) -> Option<Vec<Nearness>> {
        let texts: Vec<String> = candidates
            .iter()
            .map(|(title, candidate)| embedding_input(title.trim(), candidate))
            .collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        match self.embedder.embed_passages(&refs) {
            Ok(vectors) => Some(
                vectors
                    .iter()
                    .map(|vector| {
                        let newest = dot(vector, &self.newest);
                        let searched = self
                            .searched
                            .as_ref()
                            .map_or(newest, |searched| dot(vector, searched));
                        Nearness { newest, searched }
                    })
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
