//! Moving a store between its two BM25 paths: a store indexed without pg_textsearch (term rows
//! in SQL) adopts the extension once `shiori init` creates it, with the same results and no
//! re-indexing; a store on pg_textsearch refuses a database that lost it; migration 5 fills
//! `bm25_text` from the term rows exactly as the writer does.

use shiori_core::Filters;
use shiori_store::DocumentStore;
use shiori_store_postgres::test_server::TestServer;
use shiori_store_postgres::{migrate, PostgresOptions, PostgresStore};
use std::collections::BTreeMap;

mod common;
use common::{open_store, options, started_with_textsearch, upsert};

const QUERIES: [&str; 3] = [
    "payroll calendar",
    "梅雨の気象",
    "Rust programming runtimes",
];

fn fill(store: &mut PostgresStore) {
    let texts = [
        (
            "a",
            "The payroll calendar closes early. 梅雨は東アジアの気象現象である。",
        ),
        (
            "b",
            "Rust programming: runtimes, payroll tools and calendars.",
        ),
        ("c", "梅雨の気象と Rust の非同期ランタイム、café résumé"),
        ("d", "Questions about payroll go to the payroll desk."),
    ];
    let changes = texts
        .iter()
        .map(|(id, text)| upsert(&format!("{id}.txt"), id, &[(id, text, [1.0, 0.0, 0.0])]))
        .collect();
    store.apply(changes).unwrap();
}

fn searches(store: &PostgresStore) -> Vec<Vec<(u64, f32)>> {
    QUERIES
        .iter()
        .map(|query| {
            store
                .keyword_search(query, 10, &Filters::default())
                .unwrap()
        })
        .collect()
}

fn client(url: &str) -> postgres::Client {
    postgres::Client::connect(url, postgres::NoTls).unwrap()
}

fn count(url: &str, sql: &str) -> i64 {
    client(url).query_one(sql, &[]).unwrap().get(0)
}

/// A migrated database `name` whose extension was dropped again, as on a server without it,
/// and its store (BM25 in SQL).
fn sql_store(server: &TestServer, name: &str) -> (String, PostgresOptions, PostgresStore) {
    let url = server.create_database(name).unwrap();
    let postgres = PostgresOptions::new(&url);
    migrate(&postgres).unwrap();
    client(&url)
        .batch_execute("DROP EXTENSION pg_textsearch")
        .unwrap();
    let store = open_store(&postgres);
    (url, postgres, store)
}

#[test]
fn a_store_adopts_pg_textsearch_when_init_creates_it_and_refuses_to_lose_it() {
    let server = started_with_textsearch();
    let (url, postgres, mut store) = sql_store(&server, "adopt");
    assert!(store
        .stats(&Filters::default())
        .unwrap()
        .keyword_index
        .starts_with("SQL"));
    fill(&mut store);
    let in_sql = searches(&store);
    assert!(count(&url, "SELECT COUNT(*) FROM chunk_terms") > 0);
    drop(store);

    let migrated = migrate(&postgres).unwrap();
    assert!(
        migrated.keyword_index.starts_with("pg_textsearch 1.0.0"),
        "{}",
        migrated.keyword_index
    );
    let store = open_store(&postgres);
    assert_eq!(
        count(&url, "SELECT COUNT(*) FROM chunk_terms"),
        0,
        "term rows dropped"
    );
    assert_eq!(
        count(
            &url,
            "SELECT COUNT(*) FROM pg_indexes WHERE indexname = 'chunks_bm25'"
        ),
        1
    );
    let with_index = searches(&store);
    for ((sql, indexed), query) in in_sql.iter().zip(&with_index).zip(QUERIES) {
        assert!(!sql.is_empty(), "{query}");
        assert_eq!(sql.len(), indexed.len(), "{query}");
        for ((key, score), (indexed_key, indexed_score)) in sql.iter().zip(indexed) {
            assert_eq!(key, indexed_key, "{query}");
            assert!((score - indexed_score).abs() < 1e-5, "{query}");
        }
    }
    drop(store);

    client(&url)
        .batch_execute("DROP EXTENSION pg_textsearch CASCADE")
        .unwrap();
    let refused = PostgresStore::open(
        &postgres,
        options("test-embedder"),
        shiori_analysis::JapaneseTokenization::Bigram,
    );
    match refused {
        Err(error) => assert!(
            error.to_string().contains("install pg_textsearch"),
            "{error}"
        ),
        Ok(_) => panic!("opened without the extension its BM25 index needs"),
    }
}

#[test]
fn migration_5_writes_the_words_the_writer_writes() {
    let server = started_with_textsearch();
    let (url, postgres, mut store) = sql_store(&server, "backfill");
    fill(&mut store);
    drop(store);
    let words = |url: &str| -> BTreeMap<i64, Vec<String>> {
        client(url)
            .query("SELECT key, bm25_text FROM chunks", &[])
            .unwrap()
            .iter()
            .map(|row| {
                let mut words: Vec<String> = row
                    .get::<_, &str>(1)
                    .split_ascii_whitespace()
                    .map(str::to_string)
                    .collect();
                words.sort();
                (row.get(0), words)
            })
            .collect()
    };
    let written = words(&url);
    client(&url)
        .batch_execute(
            "ALTER TABLE chunks DROP COLUMN bm25_text;
             DELETE FROM shiori_migrations WHERE version = 5;",
        )
        .unwrap();
    assert_eq!(migrate(&postgres).unwrap().applied, [5]);
    assert_eq!(words(&url), written);
    assert!(written.values().all(|words| !words.is_empty()));
}

/// A filter that keeps a few of the thousands of chunks a query matches: the index's top list,
/// even widened, holds none of them, so the filtered chunks are scored on their own, with the
/// scores a search without the index gives them.
#[test]
fn a_narrow_filter_finds_its_chunks_among_thousands_that_match() {
    let server = started_with_textsearch();
    let url = server.create_database("narrow").unwrap();
    let postgres = PostgresOptions::new(&url);
    migrate(&postgres).unwrap();
    let mut store = open_store(&postgres);
    // The 1,990 others outrank every filtered chunk (the word twice in a shorter text), so
    // the index's top 1,600 hold none of them.
    let texts: Vec<(String, String)> = (0..2_000)
        .map(|n| match n < 1_990 {
            true => (format!("d{n}"), format!("payroll payroll note {n}")),
            false => (
                format!("d{n}"),
                format!("payroll note {n} with a longer tail of other words"),
            ),
        })
        .collect();
    let docs: Vec<(&str, &str, [f32; 3])> = texts
        .iter()
        .map(|(id, text)| (id.as_str(), text.as_str(), [1.0, 0.0, 0.0]))
        .collect();
    store
        .apply(vec![upsert("many.txt", "h1", &docs[..1_990])])
        .unwrap();
    store
        .apply(vec![upsert("few.txt", "h2", &docs[1_990..])])
        .unwrap();
    let few = Filters {
        projects: vec!["few.txt".to_string()],
        ..Filters::default()
    };
    let found = store.keyword_search("payroll", 5, &few).unwrap();
    let keys = store.keys_matching(&few).unwrap();
    let mut exact = store.keyword_scores("payroll", &keys, &few.access).unwrap();
    exact.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    exact.truncate(5);
    assert_eq!(found.len(), 5, "{found:?}");
    for ((key, score), (exact_key, exact_score)) in found.iter().zip(&exact) {
        assert!((score - exact_score).abs() < 1e-5, "{found:?} {exact:?}");
        assert!(keys.contains(key) && keys.contains(exact_key));
    }
}
