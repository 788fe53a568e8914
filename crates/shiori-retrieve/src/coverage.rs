//! Sentence coverage, the refusal's reader-level signal: how much of what the question asks one
//! sentence of the first-ranked chunk says. The retrievers' signals judge whole chunks, and a
//! chunk on the question's topic that never answers it (the unanswerable questions of a QA set,
//! written about the same article) scores as well there as one that does.

use shiori_analysis::text::{each_term, sentence_ranges, terms};

/// How many of the first ranked chunks a term's rarity is counted over, whatever `top_k` says,
/// so the refusal model reads the signal on the scale it was fitted on.
pub const COVERAGE_DEPTH: usize = 10;

/// The share of `question`'s term weight that the best sentence of `ranked[0]` holds. A term
/// weighs `ln((n + 1) / (m + 0.5))` when `m` of the first `n` ranked chunks hold it (at most
/// [`COVERAGE_DEPTH`]): a word every candidate shares says little about which one answers.
/// 0 without a ranked chunk or a question term.
pub fn sentence_coverage(question: &str, ranked: &[&str]) -> f32 {
    let Some(first) = ranked.first() else {
        return 0.0;
    };
    let asked: Vec<String> = terms(question).into_iter().collect();
    let sentences: Vec<Vec<bool>> = sentence_ranges(first)
        .into_iter()
        .map(|range| held(&asked, &first[range]))
        .collect();
    // The first chunk holds what its sentences hold: no term runs across a sentence's end.
    let mut holding: Vec<u32> = (0..asked.len())
        .map(|term| u32::from(sentences.iter().any(|held| held[term])))
        .collect();
    let ranked = &ranked[..ranked.len().min(COVERAGE_DEPTH)];
    for text in &ranked[1..] {
        for (count, held) in holding.iter_mut().zip(held(&asked, text)) {
            *count += u32::from(held);
        }
    }
    let chunks = ranked.len() as f32;
    let weights: Vec<f32> = holding
        .iter()
        .map(|&count| ((chunks + 1.0) / (count as f32 + 0.5)).ln())
        .collect();
    let total: f32 = weights.iter().sum();
    if total <= 0.0 {
        return 0.0;
    }
    let best = sentences
        .iter()
        .map(|held| {
            held.iter()
                .zip(&weights)
                .filter_map(|(held, weight)| held.then_some(*weight))
                .sum::<f32>()
        })
        .fold(0.0, f32::max);
    best / total
}

/// Which of `asked` occur in `text`.
fn held(asked: &[String], text: &str) -> Vec<bool> {
    let mut found = vec![false; asked.len()];
    each_term(text, |term| {
        if let Some(index) = asked.iter().position(|asked| asked == term) {
            found[index] = true;
        }
    });
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sentence_holding_every_question_term_covers_it_whole() {
        let ranked = [
            "Refunds take five days. The VPN server is vpn.example.",
            "Other text.",
        ];
        let coverage = sentence_coverage("Which VPN server?", &ranked);
        assert!((coverage - 1.0).abs() < 1e-6, "{coverage}");
    }

    #[test]
    fn terms_split_over_two_sentences_count_only_the_better_one() {
        let ranked = ["The VPN is fast. The server sits in Osaka.", "Unrelated."];
        let coverage = sentence_coverage("VPN server", &ranked);
        assert!(
            (coverage - 0.5).abs() < 1e-6,
            "equal rarity, one of two: {coverage}"
        );
    }

    #[test]
    fn a_term_every_candidate_holds_weighs_less_than_a_rare_one() {
        let ranked = [
            "Kumo pricing is monthly.",
            "Kumo support answers by mail.",
            "Kumo status page.",
        ];
        // Of four terms weighed over three chunks: "pricing" is in one (ln(4/1.5)), "kumo" in
        // all three (ln(4/3.5)), "refunds" in none (ln(4/0.5)).
        let rare = sentence_coverage("pricing refunds", &ranked);
        let expected = (4f32 / 1.5).ln() / ((4f32 / 1.5).ln() + (4f32 / 0.5).ln());
        assert!((rare - expected).abs() < 1e-6, "{rare} vs {expected}");
        let common = sentence_coverage("Kumo refunds", &ranked);
        let expected = (4f32 / 3.5).ln() / ((4f32 / 3.5).ln() + (4f32 / 0.5).ln());
        assert!((common - expected).abs() < 1e-6, "{common} vs {expected}");
        assert!(common < rare);
    }

    #[test]
    fn japanese_is_matched_by_character_bigrams() {
        let question = "北海道に梅雨はありますか";
        let answering = [
            "梅雨は雨季の一種である。北海道には梅雨がない。",
            "東京の天気。",
        ];
        let off_topic = [
            "東京の天気。",
            "梅雨は雨季の一種である。北海道には梅雨がない。",
        ];
        let covered = sentence_coverage(question, &answering);
        assert!(
            covered > 0.15,
            "北海, 海道, 道に and 梅雨 of its bigrams: {covered}"
        );
        assert_eq!(sentence_coverage(question, &off_topic), 0.0);
    }

    #[test]
    fn nothing_ranked_or_nothing_asked_covers_nothing() {
        assert_eq!(sentence_coverage("VPN server", &[]), 0.0);
        assert_eq!(sentence_coverage("the of", &["The VPN."]), 0.0);
    }

    #[test]
    fn only_the_first_ranked_chunks_weigh_the_terms() {
        let mut ranked = vec!["VPN server"; COVERAGE_DEPTH];
        let capped = sentence_coverage("VPN refunds", &ranked);
        ranked.extend(["refunds"; 20]);
        assert_eq!(sentence_coverage("VPN refunds", &ranked), capped);
    }
}
