//! BM25 inputs: the terms Shiori's own analyzers cut from chunks and queries, counted per field,
//! so the database ranks Japanese and English exactly as the embedded tantivy index does.

use shiori_analysis::{
    analyzers, query_terms, skips_covered_unigrams, JapaneseTokenization, ENGLISH_ANALYZER,
    JAPANESE_BIGRAM_ANALYZER,
};
use std::collections::BTreeMap;
use tantivy::tokenizer::{TextAnalyzer, TokenStream};

/// Slots in `chunks.term_lengths` and values of `chunk_terms.field`; stored, so never renumbered.
pub(crate) const FIELDS: usize = 3;

/// Bigrams match any substring: at half weight they add recall without outranking whole-word
/// matches (the embedded index's weight).
const BIGRAM_BOOST: f32 = 0.5;

fn field_id(analyzer: &str) -> i16 {
    match analyzer {
        ENGLISH_ANALYZER => 0,
        JAPANESE_BIGRAM_ANALYZER => 1,
        _ => 2,
    }
}

/// One chunk's terms in one field: its length (a BM25 input) and each term's frequency.
pub(crate) struct FieldTerms {
    pub field: i16,
    pub length: i32,
    pub frequencies: BTreeMap<String, i32>,
}

/// One analyzed field: its id, its weight, how text becomes terms, and whether queries leave
/// out the unigrams their bigrams cover.
struct AnalyzedField {
    field: i16,
    boost: f32,
    analyzer: TextAnalyzer,
    skip_covered_unigrams: bool,
}

/// The analyzer set of a store; every chunk is analysed by all of them.
pub(crate) struct Analyzers {
    fields: Vec<AnalyzedField>,
}

impl Analyzers {
    pub(crate) fn new(japanese: &JapaneseTokenization) -> Analyzers {
        let fields = analyzers(japanese)
            .into_iter()
            .map(|(name, analyzer)| AnalyzedField {
                field: field_id(name),
                boost: if name == JAPANESE_BIGRAM_ANALYZER {
                    BIGRAM_BOOST
                } else {
                    1.0
                },
                analyzer,
                skip_covered_unigrams: skips_covered_unigrams(name, japanese),
            })
            .collect();
        Analyzers { fields }
    }

    /// The fields chunks are indexed in.
    pub(crate) fn field_ids(&self) -> impl Iterator<Item = i16> + '_ {
        self.fields.iter().map(|field| field.field)
    }

    /// Terms of a chunk's title and text, analysed as one text like the embedded index does.
    pub(crate) fn chunk_terms(&self, title: &str, text: &str) -> Vec<FieldTerms> {
        let body = format!("{title}\n{text}");
        self.fields
            .iter()
            .map(|field| {
                let mut frequencies = BTreeMap::new();
                let mut length = 0;
                for_each_token(&field.analyzer, &body, |term| {
                    length += 1;
                    *frequencies.entry(term.to_string()).or_insert(0) += 1;
                });
                FieldTerms {
                    field: field.field,
                    length,
                    frequencies,
                }
            })
            .collect()
    }

    /// `(field, term, boost)` of each distinct query term per field.
    pub(crate) fn query_terms(&self, query: &str) -> Vec<(i16, String, f32)> {
        self.fields
            .iter()
            .flat_map(|field| {
                query_terms(&field.analyzer, query, field.skip_covered_unigrams)
                    .into_iter()
                    .map(|term| (field.field, term, field.boost))
            })
            .collect()
    }
}

fn for_each_token(analyzer: &TextAnalyzer, text: &str, mut visit: impl FnMut(&str)) {
    let mut analyzer = analyzer.clone();
    let mut stream = analyzer.token_stream(text);
    while let Some(token) = stream.next() {
        visit(&token.text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_terms_per_field_and_dedups_query_terms() {
        let analyzers = Analyzers::new(&JapaneseTokenization::Bigram);
        let fields = analyzers.chunk_terms("Rust", "Rust runs fast. 国際空港");
        let english = fields.iter().find(|f| f.field == 0).unwrap();
        assert_eq!(english.frequencies.get("rust"), Some(&2));
        assert_eq!(english.length, 4);
        let bigrams = fields.iter().find(|f| f.field == 1).unwrap();
        assert!(
            bigrams.frequencies.contains_key("国際"),
            "{:?}",
            bigrams.frequencies
        );

        let query = analyzers.query_terms("rust Rust 空港");
        assert_eq!(
            query
                .iter()
                .filter(|(field, term, _)| *field == 0 && term == "rust")
                .count(),
            1
        );
        assert!(query
            .iter()
            .any(|(field, term, boost)| *field == 1 && term == "空港" && *boost == 0.5));
    }
}
