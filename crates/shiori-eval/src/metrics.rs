use std::collections::HashMap;

/// Retrieval scores of one query at cut-off 10 (hits also at 1 and 5).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RankingScores {
    pub ndcg: f64,
    pub recall: f64,
    pub precision: f64,
    pub reciprocal_rank: f64,
    pub hit_at_1: f64,
    pub hit_at_5: f64,
    pub hit_at_10: f64,
}

const CUTOFF: usize = 10;

/// Scores a ranking of document ids (best first; repeated ids count once, at their best rank)
/// against graded relevance. nDCG uses linear gains, as trec_eval and BEIR do.
pub fn score_ranking(ranked: &[String], relevant: &HashMap<String, u32>) -> RankingScores {
    let mut seen = std::collections::HashSet::new();
    let top: Vec<&str> = ranked
        .iter()
        .map(String::as_str)
        .filter(|id| seen.insert(*id))
        .take(CUTOFF)
        .collect();
    let grade = |id: &str| relevant.get(id).copied().unwrap_or(0);
    let discount = |rank: usize| 1.0 / ((rank + 2) as f64).log2();
    let dcg: f64 = top
        .iter()
        .enumerate()
        .map(|(rank, id)| grade(id) as f64 * discount(rank))
        .sum();
    let mut ideal: Vec<u32> = relevant.values().copied().collect();
    ideal.sort_unstable_by(|a, b| b.cmp(a));
    let idcg: f64 = ideal
        .iter()
        .take(CUTOFF)
        .enumerate()
        .map(|(rank, g)| *g as f64 * discount(rank))
        .sum();
    let first_relevant = top.iter().position(|id| grade(id) > 0);
    let found = top.iter().filter(|id| grade(id) > 0).count();
    let hit_within = |k: usize| f64::from(u8::from(first_relevant.is_some_and(|r| r < k)));
    RankingScores {
        ndcg: if idcg > 0.0 { dcg / idcg } else { 0.0 },
        recall: if relevant.is_empty() {
            0.0
        } else {
            found as f64 / relevant.len() as f64
        },
        precision: found as f64 / CUTOFF as f64,
        reciprocal_rank: first_relevant.map_or(0.0, |r| 1.0 / (r + 1) as f64),
        hit_at_1: hit_within(1),
        hit_at_5: hit_within(5),
        hit_at_10: hit_within(10),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn perfect_ranking_scores_one() {
        let relevant = HashMap::from([("a".to_string(), 1)]);
        let scores = score_ranking(&ids(&["a", "b"]), &relevant);
        assert_eq!(scores.ndcg, 1.0);
        assert_eq!(scores.recall, 1.0);
        assert_eq!(scores.precision, 0.1);
        assert_eq!(scores.reciprocal_rank, 1.0);
        assert_eq!(scores.hit_at_1, 1.0);
    }

    #[test]
    fn graded_ndcg_and_ranks_match_hand_computation() {
        let relevant = HashMap::from([("a".to_string(), 2), ("b".to_string(), 1)]);
        // b at rank 1, a at rank 3 (x repeated counts once).
        let scores = score_ranking(&ids(&["b", "x", "x", "a"]), &relevant);
        let dcg = 1.0 + 2.0 / 4f64.log2();
        let idcg = 2.0 + 1.0 / 3f64.log2();
        assert!((scores.ndcg - dcg / idcg).abs() < 1e-12);
        assert_eq!(scores.reciprocal_rank, 1.0);
        assert_eq!(scores.recall, 1.0);
        let late = score_ranking(&ids(&["x", "y", "a"]), &relevant);
        assert!((late.reciprocal_rank - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!((late.hit_at_1, late.hit_at_5), (0.0, 1.0));
        assert_eq!(late.recall, 0.5);
    }

    #[test]
    fn nothing_found_scores_zero() {
        let relevant = HashMap::from([("a".to_string(), 1)]);
        assert_eq!(
            score_ranking(&ids(&["b"]), &relevant),
            RankingScores::default()
        );
    }
}
