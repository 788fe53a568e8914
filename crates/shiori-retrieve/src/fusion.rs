use crate::gate_model::GATE;
use shiori_core::{FusionKind, RelevanceSignals, RetrievalConfig};
use std::collections::HashMap;

/// A candidate after fusion, with the scores each retriever gave it.
#[derive(Debug, Clone, PartialEq)]
pub struct Fused {
    pub key: u64,
    pub score: f32,
    pub dense: Option<f32>,
    pub bm25: Option<f32>,
}

/// Where a candidate stood in one retriever's list.
#[derive(Clone, Copy)]
struct Placing {
    /// From 1.
    rank: usize,
    raw: f32,
}

/// The score range of one retriever's list.
struct Range {
    min: f32,
    max: f32,
}

impl Range {
    fn of(list: &[(u64, f32)]) -> Range {
        if list.is_empty() {
            return Range { min: 0.0, max: 0.0 };
        }
        let (min, max) = list.iter().fold((f32::MAX, f32::MIN), |(lo, hi), (_, s)| {
            (lo.min(*s), hi.max(*s))
        });
        Range { min, max }
    }

    fn normalise(&self, raw: f32) -> f32 {
        let span = self.max - self.min;
        if span > f32::EPSILON {
            (raw - self.min) / span
        } else {
            1.0
        }
    }
}

/// What each retriever scores the candidates only the other one found, by key: where normalised
/// fusion finds a candidate's score in the list that missed it. A key the BM25 scores leave out
/// matches no query term.
#[derive(Debug, Default)]
pub struct MissedScores {
    pub dense: HashMap<u64, f32>,
    pub bm25: HashMap<u64, f32>,
}

/// The mean and standard deviation of one retriever's scores over its candidates.
pub(crate) struct Spread {
    mean: f32,
    deviation: f32,
}

impl Spread {
    pub(crate) fn of(list: &[(u64, f32)]) -> Spread {
        if list.is_empty() {
            return Spread {
                mean: 0.0,
                deviation: 0.0,
            };
        }
        let count = list.len() as f32;
        let mean = list.iter().map(|(_, s)| s).sum::<f32>() / count;
        let variance = list.iter().map(|(_, s)| (s - mean).powi(2)).sum::<f32>() / count;
        Spread {
            mean,
            deviation: variance.sqrt(),
        }
    }

    /// How many standard deviations `raw` lies above the mean; 0 when the scores do not spread.
    pub(crate) fn standardise(&self, raw: f32) -> f32 {
        if self.deviation > f32::EPSILON {
            (raw - self.mean) / self.deviation
        } else {
            0.0
        }
    }

    /// How far `raw` lies above the mean, as a fraction of the mean; 0 when the mean is 0.
    pub(crate) fn relative(&self, raw: f32) -> f32 {
        if self.mean > f32::EPSILON {
            (raw - self.mean) / self.mean
        } else {
            0.0
        }
    }
}

/// Merges two rankings (each best first) into one, best first, by `config.fusion`. The
/// candidates are the first `candidates` (at least `top_k`) of each list.
///
/// - RRF adds `1 / (rrf_k + rank)` per list (rank from 1); a list that misses a candidate adds 0.
/// - Weighted min-max normalises each list over its candidates and adds
///   `alpha * dense + (1 - alpha) * bm25`; a list that misses a candidate adds 0.
/// - Normalised adds the cosine's z-score over the dense candidates to `normalised_bm25_weight`
///   times the BM25 score's excess over the BM25 candidates' mean, as a fraction of that mean.
///   Neither depends on the scale of its scores; the BM25 ratio keeps how far a clear lexical
///   match stands out. A candidate one list misses gets its own score there from `missed`: for
///   BM25, 0 when no term matches it.
/// - Adaptive is normalised fusion with the BM25 weight of this query: the fitted gate's
///   (`gate.rs`) reading of the query's `signals`.
/// - Linear adds the raw scores, `dense cosine + bm25_weight * bm25`. A candidate one list misses
///   scored at most that list's last candidate there, so it gets that score.
pub fn fuse(
    dense: &[(u64, f32)],
    bm25: &[(u64, f32)],
    missed: &MissedScores,
    config: &RetrievalConfig,
    signals: Option<&RelevanceSignals>,
) -> Vec<Fused> {
    let candidates = config.candidates.max(config.top_k);
    let (dense, bm25) = (
        &dense[..dense.len().min(candidates)],
        &bm25[..bm25.len().min(candidates)],
    );
    let mut placings: HashMap<u64, (Option<Placing>, Option<Placing>)> =
        HashMap::with_capacity(dense.len() + bm25.len());
    for (index, (key, raw)) in dense.iter().enumerate() {
        placings.entry(*key).or_default().0 = Some(Placing {
            rank: index + 1,
            raw: *raw,
        });
    }
    for (index, (key, raw)) in bm25.iter().enumerate() {
        placings.entry(*key).or_default().1 = Some(Placing {
            rank: index + 1,
            raw: *raw,
        });
    }
    let (dense_range, bm25_range) = (Range::of(dense), Range::of(bm25));
    let (dense_spread, bm25_spread) = (Spread::of(dense), Spread::of(bm25));
    let normalised_bm25_weight = match config.fusion {
        FusionKind::Adaptive => GATE.bm25_weight(signals),
        _ => config.normalised_bm25_weight,
    };
    let score = |key: u64, dense: Option<Placing>, bm25: Option<Placing>| -> f32 {
        match config.fusion {
            FusionKind::Rrf => [dense, bm25]
                .into_iter()
                .flatten()
                .map(|p| 1.0 / (config.rrf_k + p.rank as f32))
                .sum(),
            FusionKind::Weighted => {
                dense.map_or(0.0, |p| config.alpha * dense_range.normalise(p.raw))
                    + bm25.map_or(0.0, |p| (1.0 - config.alpha) * bm25_range.normalise(p.raw))
            }
            FusionKind::Normalised | FusionKind::Adaptive => {
                // A candidate the store no longer holds has no cosine: the lowest candidate's
                // stands in.
                let dense = dense.map_or_else(
                    || missed.dense.get(&key).copied().unwrap_or(dense_range.min),
                    |p| p.raw,
                );
                // No term matches a key the BM25 scores leave out: its score is 0. The true 0
                // also fuses better than the BM25 candidates' lowest score, which bounds it
                // (jsquad-valid nDCG@10 0.9556 against 0.9554; msmarco-5k 0.8082 either way).
                let bm25 =
                    bm25.map_or_else(|| missed.bm25.get(&key).copied().unwrap_or(0.0), |p| p.raw);
                dense_spread.standardise(dense)
                    + normalised_bm25_weight * bm25_spread.relative(bm25)
            }
            FusionKind::Linear => {
                dense.map_or(dense_range.min, |p| p.raw)
                    + config.bm25_weight * bm25.map_or(bm25_range.min, |p| p.raw)
            }
        }
    };
    let mut fused: Vec<Fused> = placings
        .into_iter()
        .map(|(key, (dense, bm25))| Fused {
            key,
            score: score(key, dense, bm25),
            dense: dense.map(|p| p.raw),
            bm25: bm25.map(|p| p.raw),
        })
        .collect();
    sort_best_first(&mut fused);
    fused
}

/// Sorts by score, best first; ties broken by key so results are deterministic.
pub(crate) fn sort_best_first(fused: &mut [Fused]) {
    fused.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.key.cmp(&b.key)));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(fusion: FusionKind, alpha: f32, bm25_weight: f32) -> RetrievalConfig {
        RetrievalConfig {
            fusion,
            rrf_k: 60.0,
            alpha,
            bm25_weight,
            ..RetrievalConfig::default()
        }
    }

    /// `fuse` with nothing looked up for missed candidates and no relevance signals.
    fn fuse_plain(
        dense: &[(u64, f32)],
        bm25: &[(u64, f32)],
        fusion: FusionKind,
        alpha: f32,
        bm25_weight: f32,
    ) -> Vec<Fused> {
        let config = config(fusion, alpha, bm25_weight);
        fuse(dense, bm25, &MissedScores::default(), &config, None)
    }

    fn missed(dense: &[(u64, f32)], bm25: &[(u64, f32)]) -> MissedScores {
        MissedScores {
            dense: dense.iter().copied().collect(),
            bm25: bm25.iter().copied().collect(),
        }
    }

    #[test]
    fn rrf_rewards_agreement() {
        let dense = [(1, 0.9), (2, 0.8), (3, 0.7)];
        let bm25 = [(2, 12.0), (4, 11.0), (1, 3.0)];
        let fused = fuse_plain(&dense, &bm25, FusionKind::Rrf, 0.5, 0.0);
        assert_eq!(fused[0].key, 2, "rank 2 + rank 1 beats rank 1 + rank 3");
        assert!((fused[0].score - (1.0 / 62.0 + 1.0 / 61.0)).abs() < 1e-6);
        assert_eq!(fused[1].key, 1);
        assert_eq!(fused[0].dense, Some(0.8));
        assert_eq!(fused[0].bm25, Some(12.0));
        assert_eq!(fused.len(), 4);
        let dense_only = fused.iter().find(|f| f.key == 3).unwrap();
        assert_eq!((dense_only.dense, dense_only.bm25), (Some(0.7), None));
    }

    #[test]
    fn weighted_follows_alpha() {
        let dense = [(1, 0.9), (2, 0.5)];
        let bm25 = [(2, 10.0), (1, 2.0)];
        let dense_heavy = fuse_plain(&dense, &bm25, FusionKind::Weighted, 0.8, 0.0);
        assert_eq!(dense_heavy[0].key, 1);
        assert!((dense_heavy[0].score - 0.8).abs() < 1e-6);
        let bm25_heavy = fuse_plain(&dense, &bm25, FusionKind::Weighted, 0.2, 0.0);
        assert_eq!(bm25_heavy[0].key, 2);
    }

    #[test]
    fn linear_adds_raw_scores_and_floors_what_a_list_missed() {
        let dense = [(1, 0.90), (2, 0.88), (3, 0.80)];
        let bm25 = [(2, 40.0), (4, 30.0), (1, 10.0)];
        let fused = fuse_plain(&dense, &bm25, FusionKind::Linear, 0.0, 0.01);
        let score = |key: u64| fused.iter().find(|f| f.key == key).unwrap().score;
        assert!((score(2) - (0.88 + 0.40)).abs() < 1e-6);
        assert!((score(1) - (0.90 + 0.10)).abs() < 1e-6);
        assert!(
            (score(4) - (0.80 + 0.30)).abs() < 1e-6,
            "dense missed 4: the dense list's last score stands in"
        );
        assert!(
            (score(3) - (0.80 + 0.10)).abs() < 1e-6,
            "BM25 missed 3: the BM25 list's last score stands in"
        );
        assert_eq!(
            fused.iter().map(|f| f.key).collect::<Vec<_>>(),
            [2, 4, 1, 3]
        );
        let dense_only = fuse_plain(&dense, &bm25, FusionKind::Linear, 0.0, 0.0);
        assert_eq!(dense_only[0].key, 1, "weight 0 ranks by cosine alone");
    }

    #[test]
    fn normalised_ignores_each_lists_scale() {
        let dense = [(1, 0.90), (2, 0.86), (3, 0.80)];
        let bm25 = [(2, 40.0), (4, 30.0), (1, 20.0)];
        let config = RetrievalConfig {
            fusion: FusionKind::Normalised,
            normalised_bm25_weight: 2.0,
            ..RetrievalConfig::default()
        };
        let fused = fuse(&dense, &bm25, &missed(&[(4, 0.70)], &[]), &config, None);
        let scaled_bm25 = bm25.map(|(key, score)| (key, 3.0 * score));
        let shift = |score: f32| 0.5 * score - 0.1;
        let shifted_dense = dense.map(|(key, score)| (key, shift(score)));
        let shifted_missed = missed(&[(4, shift(0.70))], &[]);
        let rescaled = fuse(&shifted_dense, &scaled_bm25, &shifted_missed, &config, None);
        for (a, b) in fused.iter().zip(&rescaled) {
            assert_eq!(a.key, b.key);
            assert!((a.score - b.score).abs() < 1e-4, "{a:?} {b:?}");
        }
        let mean = (0.90 + 0.86 + 0.80) / 3.0;
        let deviation =
            (((0.90f32 - mean).powi(2) + (0.86f32 - mean).powi(2) + (0.80f32 - mean).powi(2))
                / 3.0)
                .sqrt();
        let dense_z = |raw: f32| (raw - mean) / deviation;
        let score = |key: u64| fused.iter().find(|f| f.key == key).unwrap().score;
        assert!((score(2) - (dense_z(0.86) + 2.0 * (40.0 - 30.0) / 30.0)).abs() < 1e-4);
        assert!(
            (score(4) - dense_z(0.70)).abs() < 1e-4,
            "dense missed 4: its own cosine counts; 30 is the BM25 mean"
        );
        assert!(
            (score(3) - (dense_z(0.80) - 2.0)).abs() < 1e-4,
            "no term matches 3: its BM25 score, 0, lies one mean below the mean; weight 2"
        );
        assert_eq!(fused[0].key, 2);
    }

    #[test]
    fn adaptive_is_normalised_at_the_gates_weight_for_the_query() {
        let dense = [(1, 0.90), (2, 0.86), (3, 0.80)];
        let bm25 = [(2, 40.0), (4, 30.0), (1, 20.0)];
        let lookups = missed(&[(4, 0.70)], &[(3, 0.0)]);
        let adaptive = |signals: &RelevanceSignals| {
            let config = RetrievalConfig {
                fusion: FusionKind::Adaptive,
                ..RetrievalConfig::default()
            };
            fuse(&dense, &bm25, &lookups, &config, Some(signals))
        };
        let normalised = |weight: f32| {
            let config = RetrievalConfig {
                fusion: FusionKind::Normalised,
                normalised_bm25_weight: weight,
                ..RetrievalConfig::default()
            };
            fuse(&dense, &bm25, &lookups, &config, None)
        };
        for overlap in [0.0, 0.5, 1.0] {
            let signals = RelevanceSignals {
                overlap,
                bm25_coverage: 1.0,
                ..RelevanceSignals::default()
            };
            let weight = GATE.bm25_weight(Some(&signals));
            assert_eq!(adaptive(&signals), normalised(weight), "{overlap}");
        }
    }

    #[test]
    fn normalised_scores_a_missed_candidate_by_its_own_score() {
        let config = RetrievalConfig {
            fusion: FusionKind::Normalised,
            normalised_bm25_weight: 1.0,
            candidates: 2,
            top_k: 2,
            ..RetrievalConfig::default()
        };
        let dense = [(1, 0.90), (2, 0.80), (3, 0.75), (4, 0.40)];
        let bm25 = [(3, 30.0), (5, 10.0), (1, 6.0), (6, 2.0)];
        let store = missed(&[(3, 0.70), (5, 0.40)], &[(1, 6.0)]);
        let fused = fuse(&dense, &bm25, &store, &config, None);
        let keys: Vec<u64> = fused.iter().map(|f| f.key).collect();
        assert_eq!(
            keys.len(),
            4,
            "the candidates are the first 2 of each list: {keys:?}"
        );
        let dense_z = |raw: f32| (raw - 0.85) / 0.05;
        let bm25_relative = |raw: f32| (raw - 20.0) / 20.0;
        let score = |key: u64| fused.iter().find(|f| f.key == key).unwrap().score;
        assert!((score(1) - (dense_z(0.90) + bm25_relative(6.0))).abs() < 1e-4);
        assert!(
            (score(3) - (dense_z(0.70) + bm25_relative(30.0))).abs() < 1e-4,
            "the missed scores count, not the list below the candidates"
        );
        assert!(
            (score(2) - (dense_z(0.80) + bm25_relative(0.0))).abs() < 1e-4,
            "no term matches 2: its BM25 score is 0"
        );
        assert!((score(5) - (dense_z(0.40) + bm25_relative(10.0))).abs() < 1e-4);
        let best = fused.iter().find(|f| f.key == 1).unwrap();
        assert_eq!(
            (best.dense, best.bm25),
            (Some(0.90), None),
            "only candidates carry their list's score"
        );
    }

    #[test]
    fn empty_lists_fuse_to_nothing() {
        for kind in [
            FusionKind::Rrf,
            FusionKind::Weighted,
            FusionKind::Normalised,
            FusionKind::Adaptive,
            FusionKind::Linear,
        ] {
            assert!(fuse_plain(&[], &[], kind, 0.5, 0.003).is_empty());
            let only_bm25 = fuse_plain(&[], &[(7, 1.0)], kind, 0.5, 0.003);
            assert_eq!(only_bm25.len(), 1);
            assert_eq!(only_bm25[0].dense, None);
            assert!(only_bm25[0].score.is_finite(), "{kind:?}");
        }
    }
}
