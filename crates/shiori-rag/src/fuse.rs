//! Reciprocal Rank Fusion of the hit lists several queries retrieved.

use shiori_core::Hit;
use std::collections::HashMap;

/// Fuses ranked lists by `sum 1 / (rrf_k + rank)` per chunk; the best `limit` first.
pub fn rrf(lists: &[Vec<Hit>], rrf_k: f32, limit: usize) -> Vec<Hit> {
    let mut fused: HashMap<&str, (f32, &Hit)> = HashMap::new();
    for list in lists {
        for (rank, hit) in list.iter().enumerate() {
            let entry = fused
                .entry(hit.chunk.chunk_id.as_str())
                .or_insert((0.0, hit));
            entry.0 += 1.0 / (rrf_k + rank as f32 + 1.0);
            if hit.dense_score > entry.1.dense_score {
                entry.1 = hit;
            }
        }
    }
    let mut ranked: Vec<(f32, &Hit)> = fused.into_values().collect();
    ranked.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then_with(|| a.1.chunk.chunk_id.cmp(&b.1.chunk.chunk_id))
    });
    ranked
        .into_iter()
        .take(limit)
        .map(|(score, hit)| Hit {
            score,
            ..hit.clone()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::hit;

    #[test]
    fn rewards_chunks_found_by_several_queries() {
        let lists = vec![
            vec![hit("a", 0.9), hit("b", 0.8)],
            vec![hit("c", 0.7), hit("b", 0.6)],
        ];
        let fused = rrf(&lists, 60.0, 2);
        assert_eq!(fused[0].chunk.doc_id, "b");
        assert_eq!(fused.len(), 2);
        assert_eq!(fused[0].dense_score, Some(0.8));
    }
}
