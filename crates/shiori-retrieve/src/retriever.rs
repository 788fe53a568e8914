use crate::coverage::{sentence_coverage, COVERAGE_DEPTH};
use crate::refusal::decide;
use crate::signals::{in_another_language, relevance_signals, SIGNAL_DEPTH};
use crate::{decay_factor, fuse, fusion::sort_best_first, Fused, MissedScores};
use shiori_core::{
    Access, Chunk, EmbedError, Embedder, Filters, FusionKind, Hit, Retrieval, RetrievalConfig,
    RetrievalMode, RetrievalStages,
};
use shiori_store::{DocumentStore, StoreError};
use std::collections::{HashMap, HashSet};
use std::time::Instant;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum RetrieveError {
    #[error("embedding the query failed: {0}")]
    Embed(#[from] EmbedError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Runs retrieval over one store with one embedder.
pub struct Retriever<'a> {
    pub store: &'a dyn DocumentStore,
    pub embedder: &'a dyn Embedder,
}

impl Retriever<'_> {
    /// Ranks chunks for `query`. The query is embedded in every mode, BM25 included: the
    /// refusal decision needs the dense candidates.
    pub fn retrieve(
        &self,
        query: &str,
        config: &RetrievalConfig,
        filters: &Filters,
    ) -> Result<Retrieval, RetrieveError> {
        let mut retrievals = self.retrieve_each(query, config, std::slice::from_ref(filters))?;
        Ok(retrievals.remove(0))
    }

    /// Ranks chunks for `query` once per filter set (the stages of a two-stage search),
    /// embedding the query once for all of them: the first result carries the embedding time.
    /// The first set's BM25 search runs while the query is embedded, since neither needs the
    /// other: a hybrid query then waits for the slower of the two rather than their sum.
    pub fn retrieve_each(
        &self,
        query: &str,
        config: &RetrievalConfig,
        filter_sets: &[Filters],
    ) -> Result<Vec<Retrieval>, RetrieveError> {
        let Some(first_filters) = filter_sets.first() else {
            return Ok(Vec::new());
        };
        let started = Instant::now();
        let retrieve =
            tracing::info_span!("retrieve", mode = ?config.mode, stages = filter_sets.len());
        let _entered = retrieve.enter();
        let depth = search_depth(config);
        let (embedded, first_bm25) = std::thread::scope(|scope| {
            let bm25 = scope.spawn(|| {
                // Its own thread: the span names its parent, which that thread has not entered.
                let _span = tracing::info_span!(parent: &retrieve, "bm25_search").entered();
                timed(|| self.store.keyword_search(query, depth, first_filters))
            });
            let embedded = tracing::info_span!("embed_query").in_scope(|| self.embed(query));
            let bm25 = bm25
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (embedded, bm25)
        });
        let (vector, embed_ms) = embedded?;
        let mut first_bm25 = Some(first_bm25);
        let mut stage_started = started;
        let mut retrievals = Vec::with_capacity(filter_sets.len());
        for filters in filter_sets {
            let (dense, dense_ms) = tracing::info_span!("dense_search")
                .in_scope(|| timed(|| self.store.dense_search(&vector, depth, filters)));
            let (bm25, bm25_ms) = match first_bm25.take() {
                Some(found) => found,
                None => tracing::info_span!("bm25_search")
                    .in_scope(|| timed(|| self.store.keyword_search(query, depth, filters))),
            };
            let lists = Lists {
                dense: dense?,
                bm25: bm25?,
                stages: RetrievalStages {
                    dense_ms,
                    bm25_ms,
                    ..RetrievalStages::default()
                },
            };
            let embed_ms = if retrievals.is_empty() { embed_ms } else { 0.0 };
            let mut retrieval = tracing::info_span!("fuse_and_rank")
                .in_scope(|| self.rank(query, &vector, lists, embed_ms, config, &filters.access))?;
            // Embedding and BM25 overlap, so what retrieval took is the wall time beyond the
            // embedding: the two still add up to the time the caller waited.
            retrieval.retrieve_ms = (elapsed_ms(stage_started) - embed_ms).max(0.0);
            stage_started = Instant::now();
            retrievals.push(retrieval);
        }
        Ok(retrievals)
    }

    /// The query's vector and the milliseconds embedding it took.
    fn embed(&self, query: &str) -> Result<(Vec<f32>, f64), RetrieveError> {
        let started = Instant::now();
        let vector = self.embedder.embed_query(query)?;
        Ok((vector, elapsed_ms(started)))
    }

    fn rank(
        &self,
        query: &str,
        vector: &[f32],
        lists: Lists,
        embed_ms: f64,
        config: &RetrievalConfig,
        access: &Access,
    ) -> Result<Retrieval, RetrieveError> {
        let candidates = config.candidates.max(config.top_k);
        let Lists {
            dense,
            bm25,
            mut stages,
        } = lists;
        let across_languages = self.written_apart(query, dense.first())?;
        // A question over pages in the other language shares none of their words: BM25 ranks
        // the few pages that happen to quote one (an English README above the Japanese rules
        // an English question asks about), so the embedding ranks alone, and the exact scores
        // of what each list missed are not looked up.
        let mode = match config.mode {
            RetrievalMode::Hybrid if across_languages => RetrievalMode::Dense,
            mode => mode,
        };
        let missed = match (mode, config.fusion) {
            (RetrievalMode::Hybrid, FusionKind::Normalised | FusionKind::Adaptive) => self
                .missed_scores(
                    query,
                    access,
                    vector,
                    [&dense, &bm25].map(|list| &list[..list.len().min(candidates)]),
                    &mut stages,
                )?,
            _ => MissedScores::default(),
        };
        let mut lap = Instant::now();
        let mut stage_ms = |into: &mut f64| {
            *into += elapsed_ms(lap);
            lap = Instant::now();
        };
        let mut signals = relevance_signals(query, &dense, &bm25);
        if let Some(signals) = signals.as_mut() {
            signals.cross_language = f32::from(u8::from(across_languages));
        }
        let mut fused = match mode {
            RetrievalMode::Dense => single(&dense[..dense.len().min(candidates)], |f, s| {
                f.dense = Some(s)
            }),
            RetrievalMode::Bm25 => {
                single(&bm25[..bm25.len().min(candidates)], |f, s| f.bm25 = Some(s))
            }
            RetrievalMode::Hybrid => fuse(&dense, &bm25, &missed, config, signals.as_ref()),
        };

        stage_ms(&mut stages.fuse_ms);
        // The sentence coverage reads the first COVERAGE_DEPTH ranked chunks whatever top_k is.
        let ranked = config.top_k.max(COVERAGE_DEPTH);
        let mut chunks = if let Some(decay) = &config.time_decay {
            // Decay can reorder anything among the candidates, so weigh them all before cutting.
            let chunks = self.load_chunks(&fused)?;
            let now = now_seconds();
            for f in &mut fused {
                if let Some(chunk) = chunks.get(&f.key) {
                    f.score *= decay_factor(decay, chunk.modified, now);
                }
            }
            sort_best_first(&mut fused);
            fused.truncate(ranked);
            chunks
        } else {
            fused.truncate(ranked);
            self.load_chunks(&fused)?
        };
        let mut hits: Vec<Hit> = fused
            .iter()
            .filter_map(|f| {
                chunks.remove(&f.key).map(|chunk| Hit {
                    chunk,
                    score: f.score,
                    dense_score: f.dense,
                    bm25_score: f.bm25,
                })
            })
            .collect();
        stage_ms(&mut stages.fetch_ms);
        if let Some(signals) = signals.as_mut() {
            let texts: Vec<&str> = hits.iter().map(|hit| hit.chunk.text.as_str()).collect();
            signals.sentence_coverage = sentence_coverage(query, &texts);
        }
        let verdict = decide(signals.as_ref(), config.refusal, self.embedder.model_id());
        hits.truncate(config.top_k);
        stage_ms(&mut stages.fuse_ms);
        Ok(Retrieval {
            hits,
            signals,
            verdict,
            embed_ms,
            retrieve_ms: 0.0,
            stages,
            reranked: None,
            query_vector: Some(vector.to_vec()),
        })
    }

    /// The exact scores, from the store, of the candidates each list missed among the
    /// `[dense, bm25]` candidates: two lookups per query, each of at most `candidates` keys,
    /// timed into that retriever's stage.
    fn missed_scores(
        &self,
        query: &str,
        access: &Access,
        vector: &[f32],
        [dense, bm25]: [&[(u64, f32)]; 2],
        stages: &mut RetrievalStages,
    ) -> Result<MissedScores, RetrieveError> {
        let (dense_scores, dense_ms) =
            timed(|| self.store.dense_scores(vector, &missed_by(dense, bm25)));
        let (bm25_scores, bm25_ms) = timed(|| {
            self.store
                .keyword_scores(query, &missed_by(bm25, dense), access)
        });
        stages.dense_ms += dense_ms;
        stages.bm25_ms += bm25_ms;
        Ok(MissedScores {
            dense: dense_scores?.into_iter().collect(),
            bm25: bm25_scores?.into_iter().collect(),
        })
    }

    /// Whether the dense retriever's best chunk (`best`) is written in another language than
    /// `query`: one chunk read from the store.
    fn written_apart(&self, query: &str, best: Option<&(u64, f32)>) -> Result<bool, RetrieveError> {
        let Some(&(key, _)) = best else {
            return Ok(false);
        };
        let chunks = self.store.chunks(&[key])?;
        Ok(chunks
            .first()
            .is_some_and(|(_, chunk)| in_another_language(query, &chunk.text)))
    }

    fn load_chunks(&self, fused: &[Fused]) -> Result<HashMap<u64, Chunk>, RetrieveError> {
        let keys: Vec<u64> = fused.iter().map(|f| f.key).collect();
        Ok(self.store.chunks(&keys)?.into_iter().collect())
    }
}

/// Both candidate lists of one search, with what each took.
struct Lists {
    dense: Vec<(u64, f32)>,
    bm25: Vec<(u64, f32)>,
    stages: RetrievalStages,
}

/// How deep each list is searched: its candidates, and at least what the relevance signals
/// read. Both lists are searched in every mode: the signals need them.
fn search_depth(config: &RetrievalConfig) -> usize {
    config.candidates.max(config.top_k).max(SIGNAL_DEPTH)
}

/// The keys of `other` that `list` does not hold.
fn missed_by(list: &[(u64, f32)], other: &[(u64, f32)]) -> Vec<u64> {
    let found: HashSet<u64> = list.iter().map(|(key, _)| *key).collect();
    other
        .iter()
        .map(|(key, _)| *key)
        .filter(|key| !found.contains(key))
        .collect()
}

/// What `search` returned and the milliseconds it took.
fn timed<T>(search: impl FnOnce() -> T) -> (T, f64) {
    let started = Instant::now();
    let found = search();
    (found, elapsed_ms(started))
}

fn single(list: &[(u64, f32)], mark: impl Fn(&mut Fused, f32)) -> Vec<Fused> {
    list.iter()
        .map(|(key, score)| {
            let mut fused = Fused {
                key: *key,
                score: *score,
                dense: None,
                bm25: None,
            };
            mark(&mut fused, *score);
            fused
        })
        .collect()
}

fn elapsed_ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1000.0
}

fn now_seconds() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_misses_the_other_lists_keys_it_does_not_hold() {
        let dense = [(1, 0.9), (2, 0.8), (3, 0.7)];
        let bm25 = [(3, 12.0), (4, 9.0), (1, 2.0), (5, 1.0)];
        assert_eq!(missed_by(&dense, &bm25), [4, 5]);
        assert_eq!(missed_by(&bm25, &dense), [2]);
        assert!(missed_by(&dense, &dense).is_empty());
    }
}
