use shiori_core::FusionKind;
use std::collections::HashMap;

/// A candidate after fusion, with the scores each retriever gave it.
#[derive(Debug, Clone, PartialEq)]
pub struct Fused {
    pub key: u64,
    pub score: f32,
    pub dense: Option<f32>,
    pub bm25: Option<f32>,
}

/// Merges two rankings (each best first) into one, best first.
///
/// RRF adds `1 / (rrf_k + rank)` per list (rank from 1). Weighted min-max normalises each list
/// over its candidates and adds `alpha * dense + (1 - alpha) * bm25`; a list that misses a
/// candidate contributes 0 for it.
pub fn fuse(
    dense: &[(u64, f32)],
    bm25: &[(u64, f32)],
    kind: FusionKind,
    rrf_k: f32,
    alpha: f32,
) -> Vec<Fused> {
    let mut merged: HashMap<u64, Fused> = HashMap::with_capacity(dense.len() + bm25.len());
    fn entry(merged: &mut HashMap<u64, Fused>, key: u64) -> &mut Fused {
        merged.entry(key).or_insert(Fused {
            key,
            score: 0.0,
            dense: None,
            bm25: None,
        })
    }
    let contributions = |list: &[(u64, f32)], weight: f32| -> Vec<(u64, f32, f32)> {
        match kind {
            FusionKind::Rrf => list
                .iter()
                .enumerate()
                .map(|(rank, (key, raw))| (*key, *raw, 1.0 / (rrf_k + rank as f32 + 1.0)))
                .collect(),
            FusionKind::Weighted => {
                let (min, max) = list.iter().fold((f32::MAX, f32::MIN), |(lo, hi), (_, s)| {
                    (lo.min(*s), hi.max(*s))
                });
                let span = max - min;
                list.iter()
                    .map(|(key, raw)| {
                        let normalised = if span > f32::EPSILON {
                            (raw - min) / span
                        } else {
                            1.0
                        };
                        (*key, *raw, weight * normalised)
                    })
                    .collect()
            }
        }
    };
    for (key, raw, contribution) in contributions(dense, alpha) {
        let fused = entry(&mut merged, key);
        fused.dense = Some(raw);
        fused.score += contribution;
    }
    for (key, raw, contribution) in contributions(bm25, 1.0 - alpha) {
        let fused = entry(&mut merged, key);
        fused.bm25 = Some(raw);
        fused.score += contribution;
    }
    let mut fused: Vec<Fused> = merged.into_values().collect();
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

    #[test]
    fn rrf_rewards_agreement() {
        let dense = [(1, 0.9), (2, 0.8), (3, 0.7)];
        let bm25 = [(2, 12.0), (4, 11.0), (1, 3.0)];
        let fused = fuse(&dense, &bm25, FusionKind::Rrf, 60.0, 0.5);
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
        let dense_heavy = fuse(&dense, &bm25, FusionKind::Weighted, 60.0, 0.8);
        assert_eq!(dense_heavy[0].key, 1);
        assert!((dense_heavy[0].score - 0.8).abs() < 1e-6);
        let bm25_heavy = fuse(&dense, &bm25, FusionKind::Weighted, 60.0, 0.2);
        assert_eq!(bm25_heavy[0].key, 2);
    }

    #[test]
    fn empty_lists_fuse_to_nothing() {
        assert!(fuse(&[], &[], FusionKind::Rrf, 60.0, 0.5).is_empty());
        let only_bm25 = fuse(&[], &[(7, 1.0)], FusionKind::Weighted, 60.0, 0.5);
        assert_eq!(only_bm25.len(), 1);
        assert_eq!(only_bm25[0].dense, None);
    }
}
