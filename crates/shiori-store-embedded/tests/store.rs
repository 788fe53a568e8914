//! The store end to end: atomic file changes, derived indexes, recovery after a crash.

use shiori_analysis::JapaneseTokenization;
use shiori_core::{Chunk, ConversationId, Document, Filters};
use shiori_store::conformance::{access as access_checks, conversations as conversation_checks};
use shiori_store::{
    partial_hash, reembed, ConversationStore, DocumentStore, FileChange, FileRecord, StoreError,
    StoreOptions,
};
use shiori_store_embedded::{inspect, snapshot, EmbeddedStore, SqliteConversations};
use std::collections::BTreeMap;
use std::path::Path;

fn options(embedder: &str) -> StoreOptions {
    StoreOptions {
        embedder_id: embedder.to_string(),
        dimension: 3,
        reembed: false,
    }
}

fn japanese() -> JapaneseTokenization {
    JapaneseTokenization::load(None).unwrap()
}

fn open(dir: &Path) -> EmbeddedStore {
    EmbeddedStore::open(dir, options("test-embedder"), japanese()).unwrap()
}

fn upsert(path: &str, doc_id: &str, texts: &[(&str, [f32; 3])]) -> FileChange {
    let metadata = BTreeMap::from([("project".to_string(), path.to_string())]);
    FileChange::Upsert {
        file: FileRecord {
            path: path.to_string(),
            content_hash: format!("hash-{path}"),
            size: 1,
            modified_ns: 10,
            read_at_ns: 20,
        },
        documents: vec![Document {
            doc_id: doc_id.to_string(),
            title: doc_id.to_string(),
            source: path.to_string(),
            text: String::new(),
            modified: 10,
            metadata: metadata.clone(),
        }],
        chunks: texts
            .iter()
            .enumerate()
            .map(|(index, (text, vector))| {
                let norm = vector.iter().map(|v| v * v).sum::<f32>().sqrt();
                (
                    Chunk {
                        chunk_id: format!("{doc_id}#{index}"),
                        doc_id: doc_id.to_string(),
                        title: doc_id.to_string(),
                        source: path.to_string(),
                        text: text.to_string(),
                        index: index as u32,
                        total: texts.len() as u32,
                        modified: 10,
                        content_hash: format!("{text}-hash"),
                        metadata: metadata.clone(),
                    },
                    vector.iter().map(|v| v / norm).collect(),
                )
            })
            .collect(),
    }
}

fn doc_ids(store: &EmbeddedStore, keys: &[u64]) -> Vec<String> {
    store
        .chunks(keys)
        .unwrap()
        .into_iter()
        .map(|(_, c)| c.doc_id)
        .collect()
}

fn keyword_doc_ids(store: &EmbeddedStore, query: &str) -> Vec<String> {
    let hits = store.keywords().search(query, 10, None).unwrap();
    doc_ids(store, &hits.iter().map(|h| h.0).collect::<Vec<_>>())
}

#[test]
fn applies_replaces_and_removes_files() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = open(dir.path());
    let report = store
        .apply(vec![
            upsert(
                "a.txt",
                "a",
                &[
                    ("apples grow on trees", [1.0, 0.0, 0.0]),
                    ("pears too", [0.9, 0.1, 0.0]),
                ],
            ),
            upsert("b.txt", "b", &[("bananas are yellow", [0.0, 1.0, 0.0])]),
        ])
        .unwrap();
    store.commit().unwrap();
    assert_eq!(report.chunks_added, 3);
    assert_eq!(keyword_doc_ids(&store, "bananas"), ["b"]);
    let nearest = store.vectors().search(&[0.0, 1.0, 0.0], 1, None).unwrap();
    assert_eq!(store.chunks(&[nearest[0].0]).unwrap()[0].1.doc_id, "b");

    let report = store
        .apply(vec![
            upsert("a.txt", "a", &[("cherries are red", [0.0, 0.0, 1.0])]),
            FileChange::Remove {
                path: "b.txt".to_string(),
            },
        ])
        .unwrap();
    store.commit().unwrap();
    assert_eq!((report.chunks_added, report.chunks_removed), (1, 3));
    // Character bigrams may match unrelated text weakly, so check that no removed key remains.
    let live: Vec<u64> = store.keys_matching(&Filters::default()).unwrap();
    for query in ["bananas", "apples", "pears"] {
        for (key, _) in store.keywords().search(query, 10, None).unwrap() {
            assert!(live.contains(&key), "{query} found removed key {key}");
        }
    }
    assert_eq!(keyword_doc_ids(&store, "cherries"), ["a"]);
    assert_eq!(store.keywords().len(), 1);
    assert_eq!(store.vectors().len(), 1);
    assert_eq!(store.file_paths(&Filters::default()).unwrap(), ["a.txt"]);
    assert_eq!(store.document_chunks("a").unwrap().len(), 1);
}

type EmbeddedChunks = Vec<(Chunk, Vec<f32>)>;

/// The file record, documents and chunks of an upsert made by [`upsert`].
fn upsert_parts(
    path: &str,
    doc_id: &str,
    texts: &[(&str, [f32; 3])],
) -> (FileRecord, Vec<Document>, EmbeddedChunks) {
    match upsert(path, doc_id, texts) {
        FileChange::Upsert {
            file,
            documents,
            chunks,
        } => (file, documents, chunks),
        _ => unreachable!("upsert makes upserts"),
    }
}

/// A file written in parts keeps a hash no file has until it is sealed, so an indexer that
/// stopped between parts sees it as changed and writes it again, replacing every part.
#[test]
fn a_file_written_in_parts_is_changed_until_sealed() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = open(dir.path());
    let path = "big.jsonl".to_string();
    let (sealed, documents, chunks) =
        upsert_parts(&path, "first", &[("apples grow on trees", [1.0, 0.0, 0.0])]);
    let partial = FileRecord {
        content_hash: partial_hash(&sealed.content_hash),
        ..sealed.clone()
    };
    store
        .apply(vec![FileChange::Upsert {
            file: partial.clone(),
            documents,
            chunks,
        }])
        .unwrap();
    let (_, documents, chunks) =
        upsert_parts(&path, "second", &[("bananas are yellow", [0.0, 1.0, 0.0])]);
    store
        .apply(vec![FileChange::Append {
            path: path.clone(),
            documents,
            chunks,
        }])
        .unwrap();
    store.commit().unwrap();
    assert_eq!(keyword_doc_ids(&store, "bananas"), ["second"]);
    assert_eq!(store.file_records().unwrap()[&path], partial);

    store
        .apply(vec![FileChange::Seal {
            file: sealed.clone(),
        }])
        .unwrap();
    assert_eq!(store.file_records().unwrap()[&path], sealed);
    let report = store
        .apply(vec![upsert(
            &path,
            "again",
            &[("cherries", [0.0, 0.0, 1.0])],
        )])
        .unwrap();
    store.commit().unwrap();
    assert_eq!((report.chunks_added, report.chunks_removed), (1, 2));
    assert_eq!(store.keywords().len(), 1);
    assert_eq!(store.vectors().len(), 1);
}

#[test]
fn duplicate_document_ids_are_reported_not_stored() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = open(dir.path());
    store
        .apply(vec![upsert(
            "a.jsonl",
            "same",
            &[("first", [1.0, 0.0, 0.0])],
        )])
        .unwrap();
    let report = store
        .apply(vec![upsert(
            "b.jsonl",
            "same",
            &[("second", [0.0, 1.0, 0.0])],
        )])
        .unwrap();
    assert_eq!(report.chunks_added, 0);
    assert_eq!(report.duplicates[0].existing_path, "a.jsonl");
    assert_eq!(store.stats(&Filters::default()).unwrap().chunks, 1);
}

#[test]
fn filters_select_keys_in_sql() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = open(dir.path());
    store
        .apply(vec![
            upsert("docs/a.txt", "a", &[("one", [1.0, 0.0, 0.0])]),
            upsert("notes/b.txt", "b", &[("two", [0.0, 1.0, 0.0])]),
        ])
        .unwrap();
    let doc_of = |filters: &Filters| doc_ids(&store, &store.keys_matching(filters).unwrap());
    let by_prefix = Filters {
        source_prefix: Some("notes/".into()),
        ..Filters::default()
    };
    assert_eq!(doc_of(&by_prefix), ["b"]);
    let mut by_metadata = Filters::default();
    by_metadata
        .metadata
        .insert("project".into(), "docs/a.txt".into());
    assert_eq!(doc_of(&by_metadata), ["a"]);
    let by_projects = Filters {
        projects: vec!["notes/b.txt".into(), "elsewhere".into()],
        ..Filters::default()
    };
    assert_eq!(doc_of(&by_projects), ["b"]);
    assert_eq!(
        store.file_project("docs/a.txt").unwrap().as_deref(),
        Some("docs/a.txt")
    );
    assert_eq!(store.file_project("missing.txt").unwrap(), None);
    let too_new = Filters {
        modified_after: Some(11),
        ..Filters::default()
    };
    assert!(doc_of(&too_new).is_empty());
}

#[test]
fn derived_indexes_are_rebuilt_after_a_crash_before_commit() {
    let dir = tempfile::tempdir().unwrap();
    {
        let mut store = open(dir.path());
        store
            .apply(vec![upsert("a.txt", "a", &[("apples", [1.0, 0.0, 0.0])])])
            .unwrap();
        store.commit().unwrap();
        store
            .apply(vec![upsert("b.txt", "b", &[("bananas", [0.0, 1.0, 0.0])])])
            .unwrap();
        // Dropped without commit: the tables have b, the saved indexes do not.
    }
    let store = open(dir.path());
    assert_eq!(keyword_doc_ids(&store, "bananas"), ["b"]);
    assert_eq!(store.vectors().len(), 2);
}

#[test]
fn a_second_writer_is_refused_and_a_reader_opens_during_a_write() {
    let dir = tempfile::tempdir().unwrap();
    let mut writer = open(dir.path());
    writer.lock_for_writing().unwrap();
    writer
        .apply(vec![upsert("a.txt", "a", &[("apples", [1.0, 0.0, 0.0])])])
        .unwrap();
    writer.commit().unwrap();
    writer
        .apply(vec![upsert("b.txt", "b", &[("bananas", [0.0, 1.0, 0.0])])])
        .unwrap();

    // Mid-write (tables ahead of the derived indexes): a reader serves what was committed
    // instead of rebuilding under the writer, and a second writer is turned away.
    let mut reader = open(dir.path());
    assert_eq!(keyword_doc_ids(&reader, "apples"), ["a"]);
    let refused = reader.lock_for_writing().unwrap_err().to_string();
    assert!(refused.contains("another process is writing"), "{refused}");

    writer.commit().unwrap();
    drop(writer);
    let after = open(dir.path());
    assert_eq!(keyword_doc_ids(&after, "bananas"), ["b"]);
}

/// A committed store of 300 chunks, each its own word and a vector pointing its own way, closed
/// again; the chunk ids in order.
fn store_many(dir: &Path) -> Vec<(String, [f32; 3])> {
    let mut rng = fastrand::Rng::with_seed(31);
    let chunks: Vec<(String, [f32; 3])> = (0..300)
        .map(|n| {
            let vector = [rng.f32() - 0.5, rng.f32() - 0.5, rng.f32() - 0.5];
            (format!("word{n}"), vector)
        })
        .collect();
    let mut store = open(dir);
    let changes = chunks
        .iter()
        .map(|(word, vector)| upsert(&format!("{word}.txt"), word, &[(word, *vector)]))
        .collect();
    store.apply(changes).unwrap();
    store.commit().unwrap();
    chunks
}

/// Overwrites 4 KiB (or a quarter of a smaller file) in the middle of `path` with other bytes,
/// keeping its size, as a bad disk or a stray write would.
fn damage(path: &Path) {
    let mut bytes = std::fs::read(path).unwrap();
    let length = (bytes.len() / 4).min(4096);
    let start = bytes.len() / 2 - length / 2;
    for byte in &mut bytes[start..start + length] {
        *byte ^= 0x5a;
    }
    std::fs::write(path, bytes).unwrap();
}

/// Every chunk is still among its own vector's best matches and its word's best match.
fn assert_every_chunk_found(store: &EmbeddedStore, chunks: &[(String, [f32; 3])]) {
    for (word, vector) in chunks {
        let norm = vector.iter().map(|v| v * v).sum::<f32>().sqrt();
        let query: Vec<f32> = vector.iter().map(|v| v / norm).collect();
        // Three dimensions in half precision: a near twin may tie with the chunk itself.
        let dense = store.dense_search(&query, 3, &Filters::default()).unwrap();
        let keys: Vec<u64> = dense.iter().map(|hit| hit.0).collect();
        assert!(doc_ids(store, &keys).contains(word), "dense: {word}");
        assert_eq!(keyword_doc_ids(store, word)[0], *word, "bm25");
    }
}

#[test]
fn a_damaged_vector_index_is_rebuilt_and_said_so() {
    let dir = tempfile::tempdir().unwrap();
    let chunks = store_many(dir.path());
    let file = dir.path().join("vectors.usearch");
    let size = std::fs::metadata(&file).unwrap().len();
    damage(&file);
    assert_eq!(std::fs::metadata(&file).unwrap().len(), size);
    let store = open(dir.path());
    let note = store.stats(&Filters::default()).unwrap().last_rebuild;
    assert!(
        note.as_deref()
            .is_some_and(|note| note.contains("vectors.usearch") && note.contains("checksum")),
        "{note:?}"
    );
    assert_every_chunk_found(&store, &chunks);
    drop(store);
    let reopened = open(dir.path());
    assert_eq!(
        reopened.stats(&Filters::default()).unwrap().last_rebuild,
        note,
        "the rebuilt files match their new checksums: no second rebuild"
    );
}

#[test]
fn a_damaged_bm25_file_is_rebuilt_and_said_so() {
    let dir = tempfile::tempdir().unwrap();
    let chunks = store_many(dir.path());
    let largest = std::fs::read_dir(dir.path().join("bm25"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e != "json" && e != "lock"))
        .max_by_key(|path| std::fs::metadata(path).unwrap().len())
        .unwrap();
    damage(&largest);
    let store = open(dir.path());
    let note = store.stats(&Filters::default()).unwrap().last_rebuild;
    assert!(
        note.as_deref().is_some_and(|note| note.contains("BM25")),
        "{note:?} after damaging {largest:?}"
    );
    assert_every_chunk_found(&store, &chunks);
}

#[test]
fn an_intact_store_is_not_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    store_many(dir.path());
    let store = open(dir.path());
    assert_eq!(store.stats(&Filters::default()).unwrap().last_rebuild, None);
}

#[test]
fn a_snapshot_of_a_committed_store_keeps_its_derived_indexes_and_answers_alike() {
    let dir = tempfile::tempdir().unwrap();
    let chunks = store_many(dir.path());
    let live = open(dir.path());
    let copy = tempfile::tempdir().unwrap();
    let taken = snapshot(dir.path(), copy.path()).unwrap();
    assert!(taken.derived, "{taken:?}");
    assert_eq!(taken.chunks, 300);
    let inspection = inspect(copy.path()).unwrap().unwrap();
    assert_eq!(inspection.derived_stale, None);
    assert_eq!(inspection.integrity, "ok");
    let restored = open(copy.path());
    assert_eq!(
        restored.stats(&Filters::default()).unwrap().last_rebuild,
        None
    );
    for (word, vector) in chunks.iter().take(40) {
        let dense =
            |store: &EmbeddedStore| store.dense_search(vector, 5, &Filters::default()).unwrap();
        assert_eq!(dense(&live), dense(&restored), "{word}");
        assert_eq!(
            keyword_doc_ids(&live, word),
            keyword_doc_ids(&restored, word)
        );
    }
}

#[test]
fn a_snapshot_taken_mid_write_leaves_the_derived_indexes_to_be_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    store_many(dir.path());
    let mut writer = open(dir.path());
    writer.lock_for_writing().unwrap();
    writer
        .apply(vec![upsert("b.txt", "b", &[("bananas", [0.0, 1.0, 0.0])])])
        .unwrap();
    let copy = tempfile::tempdir().unwrap();
    let taken = snapshot(dir.path(), copy.path()).unwrap();
    assert!(!taken.derived, "{taken:?}");
    assert!(!copy.path().join("vectors.usearch").exists());
    let stale = inspect(copy.path()).unwrap().unwrap().derived_stale;
    assert!(stale.is_some_and(|why| why.contains("write stopped")));
    writer.commit().unwrap();
    drop(writer);
    let restored = open(copy.path());
    assert_eq!(keyword_doc_ids(&restored, "bananas"), ["b"]);
    assert_eq!(restored.vectors().len(), 301);
}

/// A committed store holding one chunk, closed again.
fn store_apples(dir: &Path) {
    let mut store = open(dir);
    store
        .apply(vec![upsert("a.txt", "a", &[("apples", [1.0, 0.0, 0.0])])])
        .unwrap();
    store.commit().unwrap();
}

#[test]
fn a_store_refuses_another_embedder() {
    let dir = tempfile::tempdir().unwrap();
    store_apples(dir.path());
    match EmbeddedStore::open(dir.path(), options("other-embedder"), japanese()) {
        Err(StoreError::EmbedderMismatch { stored, .. }) => assert_eq!(stored, "test-embedder"),
        other => panic!("expected a mismatch, got {:?}", other.err()),
    }
}

#[test]
fn reembed_converts_a_store_to_another_embedder() {
    let dir = tempfile::tempdir().unwrap();
    store_apples(dir.path());
    let mut converted = EmbeddedStore::open(
        dir.path(),
        StoreOptions {
            reembed: true,
            ..options("other-embedder")
        },
        japanese(),
    )
    .unwrap();
    let count = reembed(
        &mut converted,
        16,
        |items| -> Result<Vec<Vec<f32>>, StoreError> {
            // The title ("a") leads the embedding input.
            assert_eq!(items, [("apples-hash", "a\napples")]);
            Ok(vec![vec![0.0, 0.0, 1.0]])
        },
    )
    .unwrap();
    assert_eq!(count, 1);
    drop(converted);
    let reopened = EmbeddedStore::open(dir.path(), options("other-embedder"), japanese()).unwrap();
    let nearest = reopened
        .vectors()
        .search(&[0.0, 0.0, 1.0], 1, None)
        .unwrap();
    assert!((nearest[0].1 - 1.0).abs() < 1e-5);
    assert_eq!(keyword_doc_ids(&reopened, "apples"), ["a"]);
}

#[test]
fn a_pinned_store_keeps_reading_what_was_committed_when_it_was_pinned() {
    let dir = tempfile::tempdir().unwrap();
    let mut writer = open(dir.path());
    writer
        .apply(vec![upsert(
            "a.md",
            "apples",
            &[("red apples", [1.0, 0.0, 0.0])],
        )])
        .unwrap();
    writer.commit().unwrap();
    drop(writer);

    let reader = open(dir.path());
    let pinned_at = reader.commits().unwrap();
    assert_eq!(pinned_at, Some(1));
    reader.pin_snapshot().unwrap();
    let keys = reader.keys_matching(&Filters::default()).unwrap();
    let mut writer = open(dir.path());
    writer
        .apply(vec![
            FileChange::Remove {
                path: "a.md".into(),
            },
            upsert("b.md", "bananas", &[("yellow bananas", [0.0, 1.0, 0.0])]),
        ])
        .unwrap();
    assert_eq!(
        reader.commits().unwrap(),
        pinned_at,
        "applied is not committed yet"
    );
    writer.commit().unwrap();
    // The pinned reader learns that another store committed, while it answers as pinned.
    assert_eq!(reader.commits().unwrap(), Some(2));

    assert_eq!(reader.stats(&Filters::default()).unwrap().chunks, 1);
    assert_eq!(doc_ids(&reader, &keys), ["apples"]);
    assert_eq!(keyword_doc_ids(&reader, "apples"), ["apples"]);
    let fresh = open(dir.path());
    assert_eq!(keyword_doc_ids(&fresh, "bananas"), ["bananas"]);
    assert!(keyword_doc_ids(&fresh, "apples").is_empty());
}

#[test]
fn conversations_are_kept_in_the_data_directory() {
    let dir = tempfile::tempdir().unwrap();
    conversation_checks::check_conversations(&SqliteConversations::open(dir.path()).unwrap());
}

#[test]
fn a_store_pinned_to_a_snapshot_still_records_turns() {
    let dir = tempfile::tempdir().unwrap();
    let reader = open(dir.path());
    reader.pin_snapshot().unwrap();
    let conversations = SqliteConversations::open(dir.path()).unwrap();
    let id = ConversationId::from_random([7; 16]);
    conversations.create_conversation(&id, None, 1).unwrap();
    let turn = conversation_checks::turn("vpn?", 2);
    assert!(conversations.append_turn(&id, &turn).unwrap());
    drop(conversations);
    let reopened = SqliteConversations::open(dir.path()).unwrap();
    assert_eq!(
        reopened.conversation(&id, None).unwrap().unwrap().turns,
        [turn]
    );
}

#[test]
fn reads_stay_in_the_readers_groups() {
    for seed in [1, 2, 3] {
        let dir = tempfile::tempdir().unwrap();
        access_checks::check_reads_stay_in_groups(&mut open(dir.path()), seed);
    }
}

#[test]
fn hidden_chunks_do_not_move_a_readers_bm25_scores() {
    let dir = tempfile::tempdir().unwrap();
    access_checks::check_hidden_chunks_do_not_move_a_readers_scores(&mut open(dir.path()));
}
