use super::*;
use std::collections::HashMap;

fn open(dir: &Path, japanese: &JapaneseTokenization) -> TantivyKeywordIndex {
    match TantivyKeywordIndex::open(dir, japanese) {
        Ok(index) => index,
        Err(e) => panic!("open failed: {e}"),
    }
}

fn keys(index: &TantivyKeywordIndex, query: &str) -> Vec<u64> {
    match index.search(query, 10, None) {
        Ok(hits) => hits.into_iter().map(|(key, _)| key).collect(),
        Err(e) => panic!("search failed: {e}"),
    }
}

const CHUNKS: &[(u64, &str, &str)] = &[
    (
        1,
        "梅雨",
        "梅雨は東アジアの広範囲においてみられる特有の気象現象である。",
    ),
    (
        2,
        "関西国際空港",
        "関西国際空港は大阪湾の人工島にある国際空港で、1994年に開港した。",
    ),
    (
        3,
        "Rust",
        "Rust is a systems programming language focused on memory safety.",
    ),
    (
        4,
        "Tokio",
        "Tokio is an asynchronous runtime for the Rust programming language.",
    ),
];

fn filled(dir: &Path) -> Result<TantivyKeywordIndex, IndexError> {
    let mut index = open(dir, &JapaneseTokenization::Bigram);
    index.add(CHUNKS)?;
    index.persist()?;
    Ok(index)
}

/// Refining the other terms' best chunks gives each the score one query of all the terms
/// would; a collection where the words find fewer chunks than the refined depth ranks by
/// one query of every term; a query of Latin bigrams alone still finds chunks.
#[test]
fn latin_bigrams_refine_to_the_scores_of_one_whole_query() -> Result<(), IndexError> {
    let dir = tempfile::tempdir().map_err(|e| io(Path::new("tmp"), e))?;
    let index = filled(dir.path())?;
    let query = "Rust programming runtimes";
    let scoring = Scoring::new(&index, None);
    let searcher = &scoring.searcher;
    let (matching, refining) = index.query_terms(searcher, query);
    assert!(!matching.is_empty() && !refining.is_empty());
    let found = top_documents(&scoring, &copied(&matching), 10, None)?;
    let refined = refine(&scoring, &refining, found)?;
    let must_and_should = BooleanQuery::new(
        std::iter::once((Occur::Must, Box::new(copied(&matching)) as Box<dyn Query>))
            .chain(refining.iter().map(|(o, q)| (*o, q.box_clone())))
            .collect(),
    );
    let expected = top_documents(&scoring, &must_and_should, 10, None)?;
    assert_eq!(refined.len(), expected.len());
    for ((score, address), (expected_score, expected_address)) in refined.iter().zip(&expected) {
        assert_eq!(address, expected_address);
        assert!(
            (score - expected_score).abs() < 1e-4,
            "{score} vs {expected_score}"
        );
    }

    let every_term = BooleanQuery::new(matching.into_iter().chain(refining).collect());
    let whole = top_documents(&scoring, &every_term, 10, None)?;
    let hits = index.search(query, 10, None)?;
    assert_eq!(
        hits.len(),
        whole.len(),
        "four chunks: fewer than the refined depth"
    );
    for ((_, score), (expected_score, _)) in hits.iter().zip(&whole) {
        assert!(
            (score - expected_score).abs() < 1e-4,
            "{score} vs {expected_score}"
        );
    }

    // A stop word has no English term, only bigrams, and they find chunks.
    let (english, bigrams) = index.query_terms(searcher, "the");
    assert_eq!((english.len(), bigrams.len()), (0, 2));
    assert!(!index.search("the", 10, None)?.is_empty());
    Ok(())
}

/// Thirty more chunks sharing words, so that a search for a few chunks goes the refined way.
fn crowded(dir: &Path) -> Result<TantivyKeywordIndex, IndexError> {
    let mut index = filled(dir)?;
    let chunks: Vec<(u64, String, String)> = (10..40u64)
        .map(|key| {
            let programming = "programming ".repeat(key as usize % 4 + 1);
            let rain = "梅雨の".repeat(key as usize % 3 + 1);
            (
                key,
                format!("Rust note {key}"),
                format!("Rust {programming}guide {key}: runtimes and {rain}気象"),
            )
        })
        .collect();
    let entries: Vec<(u64, &str, &str)> = chunks
        .iter()
        .map(|(key, title, text)| (*key, title.as_str(), text.as_str()))
        .collect();
    index.add(&entries)?;
    index.persist()?;
    Ok(index)
}

/// Whether a search for `k` chunks refines the best the other terms found.
fn refines(index: &TantivyKeywordIndex, query: &str, k: usize) -> Result<bool, IndexError> {
    let scoring = Scoring::new(index, None);
    let searcher = &scoring.searcher;
    let (matching, refining) = index.query_terms(searcher, query);
    let depth = k * REFINED_DEPTH;
    let found = top_documents(&scoring, &copied(&matching), depth, None)?;
    Ok(!refining.is_empty() && !matching.is_empty() && found.len() == depth)
}

#[test]
fn scores_of_keys_are_what_search_gives_them() -> Result<(), IndexError> {
    let dir = tempfile::tempdir().map_err(|e| io(Path::new("tmp"), e))?;
    let index = crowded(dir.path())?;
    let english = "Rust programming runtimes";
    assert!(
        refines(&index, english, 3)?,
        "a search for 3 chunks refines"
    );
    for query in [english, "梅雨の気象はどこで見られる？"] {
        for k in [3, 40] {
            let hits = index.search(query, k, None)?;
            assert!(!hits.is_empty(), "{query}");
            let keys: Vec<u64> = hits.iter().map(|(key, _)| *key).collect();
            let scores: HashMap<u64, f32> = index.scores(query, &keys, None)?.into_iter().collect();
            assert_eq!(scores.len(), hits.len(), "{query}, {k}");
            for (key, score) in &hits {
                assert!(
                    (scores[key] - score).abs() <= 1e-5 * score,
                    "{query}, {k}: key {key} scored {} against {score}",
                    scores[key]
                );
            }
        }
    }
    assert!(
        index.scores("Rust", &[1, 2, 999], None)?.is_empty(),
        "Japanese chunks match no term, and 999 is no chunk"
    );
    assert!(index.scores(english, &[], None)?.is_empty());
    Ok(())
}

#[test]
fn finds_japanese_and_english_chunks() -> Result<(), IndexError> {
    let dir = tempfile::tempdir().map_err(|e| io(Path::new("tempdir"), e))?;
    let index = filled(dir.path())?;
    assert!(index.was_reset(), "a new index needs feeding");
    assert_eq!(index.len(), 4);
    assert_eq!(keys(&index, "梅雨はどこで見られる？").first(), Some(&1));
    assert_eq!(keys(&index, "国際空港はいつ開港した?").first(), Some(&2));
    assert_eq!(keys(&index, "what is an async runtime?").first(), Some(&4));
    assert_eq!(keys(&index, "memory: safe languages").first(), Some(&3));
    // Query syntax is plain text here: no error, and punctuation alone gives no terms.
    assert_eq!(
        keys(&index, "title:(Rust AND \"safety\")?").first(),
        Some(&3)
    );
    assert!(keys(&index, "?: \"(*)\" -+").is_empty());
    assert!(index.search("Rust", 0, None)?.is_empty());
    Ok(())
}

#[test]
fn a_removed_key_comes_back_with_its_new_text_and_remove_deletes() -> Result<(), IndexError> {
    let dir = tempfile::tempdir().map_err(|e| io(Path::new("tempdir"), e))?;
    let mut index = filled(dir.path())?;
    index.remove(&[3])?;
    index.add(&[(3, "Go", "Go is a language with goroutines.")])?;
    // Unpersisted changes are not visible yet.
    assert_eq!(keys(&index, "safety"), [3]);
    index.persist()?;
    assert_eq!(index.len(), 4);
    assert!(keys(&index, "safety").is_empty());
    assert_eq!(keys(&index, "goroutines").first(), Some(&3));
    index.remove(&[3, 4, 99])?;
    index.persist()?;
    assert_eq!(index.len(), 2);
    assert!(!keys(&index, "goroutines").contains(&3));
    Ok(())
}

#[test]
fn clear_empties_the_index() -> Result<(), IndexError> {
    let dir = tempfile::tempdir().map_err(|e| io(Path::new("tempdir"), e))?;
    let mut index = filled(dir.path())?;
    index.add(&[(5, "Go", "Go has goroutines.")])?;
    index.clear()?;
    index.persist()?;
    assert_eq!(index.len(), 0);
    index.add(&CHUNKS[..1])?;
    index.persist()?;
    assert_eq!(index.len(), 1);
    assert!(!keys(&index, "goroutines").contains(&3));
    Ok(())
}

#[test]
fn reopens_persisted_chunks() -> Result<(), IndexError> {
    let dir = tempfile::tempdir().map_err(|e| io(Path::new("tempdir"), e))?;
    drop(filled(dir.path())?);
    let index = open(dir.path(), &JapaneseTokenization::Bigram);
    assert!(!index.was_reset());
    assert_eq!(index.len(), 4);
    assert_eq!(keys(&index, "梅雨").first(), Some(&1));
    Ok(())
}

#[test]
fn another_analyzer_resets_the_index() -> Result<(), IndexError> {
    let ipadic = Path::new("/usr/share/mecab/dic/ipadic");
    assert!(
        ipadic.join("matrix.def").is_file(),
        "{} is missing: apt-get install mecab-ipadic (as .ci/run does)",
        ipadic.display()
    );
    let dir = tempfile::tempdir().map_err(|e| io(Path::new("tempdir"), e))?;
    let dictionary = dir.path().join("ipadic.dic");
    if let Err(e) = shiori_analysis::build_ipadic_dictionary(ipadic, &dictionary) {
        panic!("building the dictionary failed: {e}");
    }
    let morphological = match JapaneseTokenization::load(Some(&dictionary)) {
        Ok(japanese) => japanese,
        Err(e) => panic!("loading the dictionary failed: {e}"),
    };
    let index_dir = dir.path().join("keyword");
    drop(filled(&index_dir)?);

    let mut index = open(&index_dir, &morphological);
    assert!(index.was_reset());
    assert_eq!(index.len(), 0);
    index.add(CHUNKS)?;
    index.persist()?;
    assert_eq!(
        keys(&index, "関西の空港は何年に開港しましたか").first(),
        Some(&2)
    );
    drop(index);

    let index = open(&index_dir, &morphological);
    assert!(!index.was_reset());
    assert_eq!(index.len(), 4);
    Ok(())
}
