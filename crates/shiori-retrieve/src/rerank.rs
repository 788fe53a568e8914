//! Reordering a retrieval with a reranker. It belongs to the retrieval stage: the engine
//! reranks what it retrieves before any pipeline sees it, for answers and `search --rerank`
//! alike.

use shiori_core::{RerankError, Reranked, Reranker, Retrieval};
use std::time::Instant;

/// Reorders `retrieval`'s hits by the reranker's scores for `query`, which replace their
/// scores, and notes the reranker on it.
pub fn rerank(
    reranker: &dyn Reranker,
    query: &str,
    mut retrieval: Retrieval,
) -> Result<Retrieval, RerankError> {
    let started = Instant::now();
    let hits = &mut retrieval.hits;
    if hits.len() >= 2 {
        let passages: Vec<&str> = hits.iter().map(|hit| hit.chunk.text.as_str()).collect();
        let scores = reranker.score(query, &passages)?;
        if scores.len() != hits.len() {
            return Err(RerankError::Model(format!(
                "{}: {} scores for {} passages",
                reranker.name(),
                scores.len(),
                hits.len()
            )));
        }
        for (hit, score) in hits.iter_mut().zip(scores) {
            hit.score = score;
        }
        hits.sort_by(|a, b| b.score.total_cmp(&a.score));
    }
    retrieval.reranked = Some(Reranked {
        by: reranker.name().to_string(),
        ms: started.elapsed().as_secs_f64() * 1000.0,
    });
    Ok(retrieval)
}

#[cfg(test)]
mod tests {
    use super::*;
    use shiori_core::{Chunk, Hit, RelevanceVerdict};
    use std::collections::BTreeMap;

    /// Scores a passage by its length, or gives one score too few.
    struct ByLength {
        short_by_one: bool,
    }

    impl Reranker for ByLength {
        fn name(&self) -> &str {
            "by-length"
        }

        fn score(&self, _query: &str, passages: &[&str]) -> Result<Vec<f32>, RerankError> {
            let skip = usize::from(self.short_by_one);
            Ok(passages.iter().skip(skip).map(|p| p.len() as f32).collect())
        }
    }

    fn retrieval(texts: &[&str]) -> Retrieval {
        let hits = texts
            .iter()
            .map(|text| Hit {
                chunk: Chunk {
                    chunk_id: (*text).into(),
                    doc_id: (*text).into(),
                    title: String::new(),
                    source: String::new(),
                    text: (*text).into(),
                    index: 0,
                    total: 1,
                    modified: 0,
                    content_hash: String::new(),
                    metadata: BTreeMap::new(),
                },
                score: 1.0,
                dense_score: None,
                bm25_score: None,
            })
            .collect();
        Retrieval {
            hits,
            signals: None,
            verdict: RelevanceVerdict {
                refused: false,
                reason: String::new(),
            },
            embed_ms: 0.0,
            retrieve_ms: 0.0,
            stages: Default::default(),
            reranked: None,
            query_vector: None,
        }
    }

    #[test]
    fn reorders_by_the_rerankers_scores_and_notes_it() {
        let reranker = ByLength {
            short_by_one: false,
        };
        let reranked = rerank(&reranker, "q", retrieval(&["a", "ccc", "bb"])).unwrap();
        let order: Vec<(&str, f32)> = reranked
            .hits
            .iter()
            .map(|hit| (hit.chunk.text.as_str(), hit.score))
            .collect();
        assert_eq!(order, [("ccc", 3.0), ("bb", 2.0), ("a", 1.0)]);
        assert_eq!(reranked.reranked.unwrap().by, "by-length");
    }

    #[test]
    fn a_score_missing_is_an_error() {
        let reranker = ByLength { short_by_one: true };
        let error = rerank(&reranker, "q", retrieval(&["a", "bb"])).unwrap_err();
        assert!(
            error.to_string().contains("1 scores for 2 passages"),
            "{error}"
        );
    }
}
