//! The dev sets under `datasets/` read as the evaluator reads them, and hold what their READMEs
//! promise: every answer span is in its relevant document, and unanswerable questions are about
//! articles left out of the corpus whole.

use serde_json::Value;
use shiori_eval::{json_lines, load_dataset, Dataset};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

fn dataset_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../datasets")
        .join(name)
}

/// Document id → (title, text) of a dataset's corpus, in either layout.
fn corpus(dataset: &Dataset) -> HashMap<String, (String, String)> {
    json_lines(&dataset.corpus)
        .unwrap()
        .into_iter()
        .map(|(line, record)| {
            let field = |key: &str| record.get(key).and_then(Value::as_str).map(str::to_string);
            let id = field("_id")
                .or_else(|| field("doc_id"))
                .unwrap_or_else(|| panic!("{}: line {line} has no id", dataset.corpus.display()));
            let title = field("title").unwrap_or_default();
            let text = field("text")
                .unwrap_or_else(|| panic!("{}: line {line} has no text", dataset.corpus.display()));
            (id, (title, text))
        })
        .collect()
}

/// Loads `name`, checks every answerable question's spans against its relevant documents and
/// returns the dataset with its share of unanswerable questions.
fn load_checked(name: &str) -> (Dataset, HashMap<String, (String, String)>, f64) {
    let dataset = load_dataset(&dataset_dir(name)).unwrap();
    assert_eq!(
        dataset.skipped, 0,
        "{name}: queries without qrels or a mark"
    );
    let documents = corpus(&dataset);
    for query in dataset.queries.iter().filter(|q| q.answerable) {
        assert!(!query.answers.is_empty(), "{name} {}: no answers", query.id);
        for doc in query.relevant.keys() {
            let (_, text) = documents
                .get(doc)
                .unwrap_or_else(|| panic!("{name} {}: {doc} is not in the corpus", query.id));
            for answer in &query.answers {
                assert!(
                    text.contains(answer.as_str()),
                    "{name} {}: {answer:?} is not in {doc}",
                    query.id
                );
            }
        }
    }
    let unanswerable = dataset.queries.iter().filter(|q| !q.answerable).count();
    let share = unanswerable as f64 / dataset.queries.len() as f64;
    (dataset, documents, share)
}

/// The article of a SQuAD-built query id (`s005` of `s005p0q2`).
fn article(query_id: &str) -> &str {
    query_id.split('p').next().unwrap_or(query_id)
}

fn assert_whole_articles_left_out(name: &str, dataset: &Dataset) {
    let answerable: HashSet<&str> = dataset
        .queries
        .iter()
        .filter(|q| q.answerable)
        .map(|q| article(&q.id))
        .collect();
    for query in dataset.queries.iter().filter(|q| !q.answerable) {
        assert!(
            !answerable.contains(article(&query.id)),
            "{name} {}: its article also has answerable questions",
            query.id
        );
    }
}

#[test]
fn en_qa_dev_is_multi_topic_with_a_tenth_unanswerable() {
    let (dataset, documents, share) = load_checked("en-qa-dev");
    assert!(
        (300..=600).contains(&documents.len()),
        "{}",
        documents.len()
    );
    assert!(
        (1000..=2000).contains(&dataset.queries.len()),
        "{}",
        dataset.queries.len()
    );
    assert!((0.08..=0.12).contains(&share), "{share}");
    let titles: HashSet<&str> = documents
        .values()
        .map(|(title, _)| title.as_str())
        .collect();
    assert!((20..=40).contains(&titles.len()), "{}", titles.len());
    assert_whole_articles_left_out("en-qa-dev", &dataset);
}

#[test]
fn en_onetopic_dev_is_one_article_with_others_unanswerable() {
    let (dataset, documents, share) = load_checked("en-onetopic-dev");
    assert!((30..=60).contains(&documents.len()), "{}", documents.len());
    let titles: HashSet<&str> = documents
        .values()
        .map(|(title, _)| title.as_str())
        .collect();
    assert_eq!(titles.len(), 1, "{titles:?}");
    assert!((0.15..=0.25).contains(&share), "{share}");
    assert_whole_articles_left_out("en-onetopic-dev", &dataset);
}

#[test]
fn faq_natural_en_asks_the_sample_faq_in_english() {
    let (dataset, _, share) = load_checked("faq-natural-en");
    let sample =
        load_dataset(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples/faq")).unwrap();
    assert_eq!(
        std::fs::read(&dataset.corpus).unwrap(),
        std::fs::read(&sample.corpus).unwrap(),
        "faq-natural-en indexes the sample FAQ unchanged"
    );
    assert!(dataset.queries.len() >= 40, "{}", dataset.queries.len());
    assert!((0.2..=0.3).contains(&share), "{share}");
    assert!(dataset
        .queries
        .iter()
        .all(|q| q.text.is_ascii() && q.text.split_whitespace().count() <= 10));
}
