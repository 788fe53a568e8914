//! Two-stage results: the current project's hits first, then those of related projects.

use shiori_core::Retrieval;

/// Merges a search of the current project (`primary`) with one of related projects
/// (`secondary`) into `top_k` hits: the primary hits first, in their order, then secondary ones.
/// Up to `related_hits` places are kept for secondary hits when there are any, so a related
/// project's answer still shows when the current project fills the list; places either side
/// leaves empty go to the other. Each stage's scores keep their own scale.
pub fn merge_two_stage(
    primary: Retrieval,
    secondary: Retrieval,
    top_k: usize,
    related_hits: usize,
) -> Retrieval {
    let kept_for_related = related_hits.min(secondary.hits.len()).min(top_k);
    let from_primary = primary.hits.len().min(top_k - kept_for_related);
    let from_secondary = secondary.hits.len().min(top_k - from_primary);
    // Something relevant in either stage is enough to answer; the primary stage speaks first.
    let (signals, verdict) = if primary.verdict.refused && !secondary.verdict.refused {
        (secondary.signals, secondary.verdict)
    } else {
        (primary.signals, primary.verdict)
    };
    let hits = primary
        .hits
        .into_iter()
        .take(from_primary)
        .chain(secondary.hits.into_iter().take(from_secondary))
        .collect();
    Retrieval {
        hits,
        signals,
        verdict,
        embed_ms: primary.embed_ms + secondary.embed_ms,
        retrieve_ms: primary.retrieve_ms + secondary.retrieve_ms,
        stages: primary.stages.plus(&secondary.stages),
        reranked: None,
        query_vector: primary.query_vector,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shiori_core::{Chunk, Hit, RelevanceVerdict};
    use std::collections::BTreeMap;

    fn hit(id: &str, score: f32) -> Hit {
        Hit {
            chunk: Chunk {
                chunk_id: id.into(),
                doc_id: id.into(),
                title: String::new(),
                source: String::new(),
                text: String::new(),
                index: 0,
                total: 1,
                modified: 0,
                content_hash: String::new(),
                metadata: BTreeMap::new(),
            },
            score,
            dense_score: None,
            bm25_score: None,
        }
    }

    /// A stage's result; `relevant` names the stage in its verdict's reason.
    fn retrieved(ids: &[&str], relevant: Option<&str>) -> Retrieval {
        Retrieval {
            hits: ids.iter().map(|id| hit(id, 0.5)).collect(),
            signals: None,
            verdict: RelevanceVerdict {
                refused: relevant.is_none(),
                reason: relevant.unwrap_or("refused").to_string(),
            },
            embed_ms: 1.0,
            retrieve_ms: 2.0,
            stages: Default::default(),
            reranked: None,
            query_vector: None,
        }
    }

    fn ids(merged: &Retrieval) -> Vec<&str> {
        merged
            .hits
            .iter()
            .map(|h| h.chunk.chunk_id.as_str())
            .collect()
    }

    #[test]
    fn current_project_first_with_places_kept_for_related_ones() {
        let merged = merge_two_stage(
            retrieved(&["p1", "p2", "p3", "p4", "p5"], Some("primary")),
            retrieved(&["s1", "s2", "s3"], Some("secondary")),
            5,
            2,
        );
        assert_eq!(ids(&merged), ["p1", "p2", "p3", "s1", "s2"]);
        assert_eq!(
            merged.verdict.reason, "primary",
            "the primary stage speaks first"
        );
        assert_eq!((merged.embed_ms, merged.retrieve_ms), (2.0, 4.0));
    }

    #[test]
    fn places_one_side_leaves_empty_go_to_the_other() {
        let few_primary = merge_two_stage(
            retrieved(&["p1"], None),
            retrieved(&["s1", "s2", "s3", "s4", "s5"], Some("secondary")),
            4,
            2,
        );
        assert_eq!(ids(&few_primary), ["p1", "s1", "s2", "s3"]);
        assert!(
            !few_primary.verdict.refused,
            "a relevant related project answers"
        );
        let no_related = merge_two_stage(
            retrieved(&["p1", "p2", "p3", "p4"], Some("primary")),
            retrieved(&[], None),
            3,
            2,
        );
        assert_eq!(ids(&no_related), ["p1", "p2", "p3"]);
        let all_related = merge_two_stage(
            retrieved(&["p1"], None),
            retrieved(&["s1", "s2"], None),
            1,
            5,
        );
        assert_eq!(ids(&all_related), ["s1"]);
        assert!(all_related.verdict.refused);
    }
}
