//! The relevance signals of one query, computed from the candidates both retrievers returned
//! (all but the sentence coverage, which needs the ranked chunks' text).

use crate::fusion::Spread;
use shiori_analysis::{detect_script, Script};
use shiori_core::RelevanceSignals;

/// How many candidates of each list the signals look at, whatever `[retrieval] candidates`
/// says: z-scores and means over a fixed depth keep the calibrated refusal model's inputs on
/// the scale it was fitted on.
pub const SIGNAL_DEPTH: usize = 50;

/// How many of each list's first candidates `overlap` compares.
const OVERLAP_DEPTH: usize = 10;

/// The signals of `query` given its dense and BM25 candidates (each best first, scores raw);
/// `None` when the dense retriever found nothing, so there is no evidence of relevance.
pub fn relevance_signals(
    query: &str,
    dense: &[(u64, f32)],
    bm25: &[(u64, f32)],
) -> Option<RelevanceSignals> {
    let dense = &dense[..dense.len().min(SIGNAL_DEPTH)];
    let bm25 = &bm25[..bm25.len().min(SIGNAL_DEPTH)];
    let (best_key, best_cosine) = *dense.first()?;
    let bm25_spread = Spread::of(bm25);
    let best_bm25 = bm25.first().map_or(0.0, |(_, score)| *score);
    Some(RelevanceSignals {
        best_cosine,
        cosine_margin: dense.get(1).map_or(0.0, |(_, second)| best_cosine - second),
        cosine_z: Spread::of(dense).standardise(best_cosine),
        bm25_z: bm25_spread.standardise(best_bm25),
        bm25_relative: bm25_spread.relative(best_bm25),
        bm25_gap: match bm25 {
            [(_, first), (_, second), ..] if *first > f32::EPSILON => (first - second) / first,
            _ => 0.0,
        },
        agreement: bm25
            .iter()
            .position(|(key, _)| *key == best_key)
            .map_or(0.0, |index| 1.0 / (index + 1) as f32),
        query_length: (1.0 + query.chars().count() as f32).ln(),
        japanese: if detect_script(query) == Script::Japanese {
            1.0
        } else {
            0.0
        },
        overlap: overlap(dense, bm25),
        bm25_coverage: (bm25.len() as f32 / dense.len() as f32).min(1.0),
        // Read from the ranked chunks' text once they are fused and fetched (`coverage.rs`).
        sentence_coverage: 0.0,
        cross_language: 0.0,
    })
}

/// Whether `text` is written in another script than `query` (Japanese against Latin).
pub fn in_another_language(query: &str, text: &str) -> bool {
    detect_script(text) != detect_script(query)
}

/// The share of BM25's first [`OVERLAP_DEPTH`] candidates among the dense retriever's first
/// [`OVERLAP_DEPTH`].
fn overlap(dense: &[(u64, f32)], bm25: &[(u64, f32)]) -> f32 {
    let dense = &dense[..dense.len().min(OVERLAP_DEPTH)];
    let shared = bm25
        .iter()
        .take(OVERLAP_DEPTH)
        .filter(|(key, _)| dense.iter().any(|(other, _)| other == key))
        .count();
    shared as f32 / OVERLAP_DEPTH as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_follow_both_lists() {
        let dense = [(1, 0.9), (2, 0.8), (3, 0.7)];
        let bm25 = [(2, 30.0), (1, 20.0), (4, 10.0)];
        let signals = relevance_signals("vpn", &dense, &bm25).unwrap();
        assert_eq!(signals.best_cosine, 0.9);
        assert!((signals.cosine_margin - 0.1).abs() < 1e-6);
        let deviation = (0.02f32 / 3.0).sqrt();
        assert!((signals.cosine_z - 0.1 / deviation).abs() < 1e-4);
        let bm25_deviation = (200.0f32 / 3.0).sqrt();
        assert!((signals.bm25_z - 10.0 / bm25_deviation).abs() < 1e-4);
        assert!((signals.bm25_relative - 0.5).abs() < 1e-6);
        assert!((signals.bm25_gap - 1.0 / 3.0).abs() < 1e-6);
        assert_eq!(signals.agreement, 0.5, "the dense best is BM25's second");
        assert!((signals.query_length - 4f32.ln()).abs() < 1e-6);
        assert_eq!(signals.japanese, 0.0);
        assert_eq!(
            signals.overlap, 0.2,
            "1 and 2 are among both lists' first ten"
        );
        assert_eq!(signals.bm25_coverage, 1.0);
    }

    #[test]
    fn coverage_falls_when_fewer_chunks_match_a_term_than_the_dense_list_holds() {
        let dense: Vec<(u64, f32)> = (0..20).map(|i| (i, 0.9 - i as f32 * 0.01)).collect();
        let signals = relevance_signals("q", &dense, &[(3, 5.0), (12, 2.0)]).unwrap();
        assert_eq!(signals.bm25_coverage, 0.1);
        assert_eq!(signals.overlap, 0.1, "12 is not among the dense first ten");
        let none = relevance_signals("q", &dense, &[]).unwrap();
        assert_eq!((none.bm25_coverage, none.overlap), (0.0, 0.0));
    }

    #[test]
    fn a_japanese_question_is_marked_whatever_english_words_it_quotes() {
        let dense = [(1, 0.9)];
        let japanese = relevance_signals("VPNの接続先サーバーはどこですか？", &dense, &[]).unwrap();
        assert_eq!(japanese.japanese, 1.0);
        let english = relevance_signals("Where is the Kintai system?", &dense, &[]).unwrap();
        assert_eq!(english.japanese, 0.0);
    }

    #[test]
    fn a_question_over_a_page_in_the_other_language_is_in_another_language() {
        let page = "通勤手当は月額10,000円を上限とする。";
        assert!(in_another_language(
            "What is the commuting allowance cap?",
            page
        ));
        assert!(!in_another_language("通勤手当の上限は？", page));
        assert!(in_another_language(
            "通勤手当の上限は？",
            "The cap is 10,000 yen."
        ));
        assert!(!in_another_language(
            "What is the cap?",
            "The cap is 10,000 yen."
        ));
    }

    #[test]
    fn signals_do_not_depend_on_the_bm25_scale() {
        let dense = [(1, 0.9), (2, 0.8)];
        let bm25 = [(2, 3.0), (3, 2.0), (4, 1.5)];
        let tenfold = bm25.map(|(key, score)| (key, 10.0 * score));
        let a = relevance_signals("q", &dense, &bm25).unwrap();
        let b = relevance_signals("q", &dense, &tenfold).unwrap();
        for (x, y) in [
            (a.bm25_z, b.bm25_z),
            (a.bm25_relative, b.bm25_relative),
            (a.bm25_gap, b.bm25_gap),
        ] {
            assert!((x - y).abs() < 1e-5);
        }
        assert_eq!(a.agreement, 0.0, "BM25 did not find the dense best");
    }

    #[test]
    fn no_dense_candidate_gives_no_signals_and_no_bm25_gives_zeros() {
        assert_eq!(relevance_signals("q", &[], &[(1, 2.0)]), None);
        let alone = relevance_signals("q", &[(1, 0.5)], &[]).unwrap();
        assert_eq!(
            (
                alone.cosine_margin,
                alone.cosine_z,
                alone.bm25_z,
                alone.agreement
            ),
            (0.0, 0.0, 0.0, 0.0)
        );
    }

    #[test]
    fn only_the_first_candidates_count() {
        let many: Vec<(u64, f32)> = (0..200).map(|i| (i, 1.0 - i as f32 * 0.001)).collect();
        let signals = relevance_signals("q", &many, &many).unwrap();
        let capped = relevance_signals("q", &many[..SIGNAL_DEPTH], &many[..SIGNAL_DEPTH]).unwrap();
        assert_eq!(signals, capped);
    }
}
