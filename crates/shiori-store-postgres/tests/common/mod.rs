//! What the PostgreSQL store's test files share: store options, a file change, a started server.

// Each test file uses only some of these.
#![allow(dead_code)]

use shiori_analysis::JapaneseTokenization;
use shiori_core::{Chunk, Document};
use shiori_store::{DocumentStore, FileChange, FileRecord, StoreOptions};
use shiori_store_postgres::test_server::TestServer;
use shiori_store_postgres::{PostgresOptions, PostgresStore};
use std::collections::BTreeMap;

pub fn options(embedder: &str) -> StoreOptions {
    StoreOptions {
        embedder_id: embedder.to_string(),
        dimension: 3,
        reembed: false,
    }
}

/// A running server; panics, naming the package to install, when its binaries are missing.
pub fn started() -> TestServer {
    TestServer::start().unwrap_or_else(|e| panic!("{e}"))
}

pub fn upsert(path: &str, hash: &str, docs: &[(&str, &str, [f32; 3])]) -> FileChange {
    let metadata = BTreeMap::from([("project".to_string(), path.to_string())]);
    FileChange::Upsert {
        file: FileRecord {
            path: path.to_string(),
            content_hash: hash.to_string(),
            size: 1,
            modified_ns: 10,
            read_at_ns: 20,
        },
        documents: docs
            .iter()
            .map(|(doc_id, _, _)| Document {
                doc_id: doc_id.to_string(),
                title: doc_id.to_string(),
                source: path.to_string(),
                text: String::new(),
                modified: 100,
                metadata: metadata.clone(),
            })
            .collect(),
        chunks: docs
            .iter()
            .map(|(doc_id, text, vector)| {
                (
                    Chunk {
                        chunk_id: format!("{doc_id}#0"),
                        doc_id: doc_id.to_string(),
                        title: doc_id.to_string(),
                        source: path.to_string(),
                        text: text.to_string(),
                        index: 0,
                        total: 1,
                        modified: 100,
                        content_hash: format!("{hash}-{doc_id}"),
                        metadata: metadata.clone(),
                    },
                    vector.to_vec(),
                )
            })
            .collect(),
    }
}

pub fn doc_ids(store: &PostgresStore, hits: &[(u64, f32)]) -> Vec<String> {
    let keys: Vec<u64> = hits.iter().map(|(key, _)| *key).collect();
    store
        .chunks(&keys)
        .unwrap()
        .into_iter()
        .map(|(_, chunk)| chunk.doc_id)
        .collect()
}

/// A store in the migrated database `postgres` names, for the embedder `test-embedder`.
pub fn open_store(postgres: &PostgresOptions) -> PostgresStore {
    PostgresStore::open(
        postgres,
        options("test-embedder"),
        JapaneseTokenization::Bigram,
    )
    .unwrap()
}

/// Stores the one-chunk file `ID.txt` holding `text`.
pub fn add(store: &mut PostgresStore, id: &str, hash: &str, text: &str, vector: [f32; 3]) {
    let path = format!("{id}.txt");
    store
        .apply(vec![upsert(&path, hash, &[(id, text, vector)])])
        .unwrap();
}

/// A running server with pg_textsearch; panics, naming the package to install, when its
/// binaries are missing.
pub fn started_with_textsearch() -> TestServer {
    TestServer::start_with_textsearch().unwrap_or_else(|e| panic!("{e}"))
}
