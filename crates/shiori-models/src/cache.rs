//! On-disk embedding cache: SQLite, keyed by (model id, content hash).

use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use rusqlite::{params, Connection, OptionalExtension};
use shiori_core::EmbedError;

/// Vectors already computed, so unchanged text is never embedded twice.
///
/// Vectors are stored as little-endian f32 blobs. The database runs in WAL mode so that readers
/// (a search process) are not blocked by an indexer writing at the same time.
pub struct EmbeddingCache {
    // rusqlite connections are not Sync; the lock lets one cache serve `&self` calls from
    // several threads.
    conn: Mutex<Connection>,
}

impl EmbeddingCache {
    /// Opens (creating if needed) the cache database at `path`.
    pub fn open(path: &Path) -> Result<Self, EmbedError> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)
                .map_err(|e| EmbedError::cache(parent.display().to_string()).because(e))?;
        }
        let at = |e: rusqlite::Error| EmbedError::cache(path.display().to_string()).because(e);
        let conn = Connection::open(path).map_err(at)?;
        // journal_mode answers with the mode now in force, so it is read as a query.
        conn.query_row("PRAGMA journal_mode = WAL", [], |row| {
            row.get::<_, String>(0)
        })
        .map_err(at)?;
        conn.execute_batch(
            "PRAGMA synchronous = NORMAL;
             PRAGMA busy_timeout = 5000;
             CREATE TABLE IF NOT EXISTS embeddings (
                 model_id TEXT NOT NULL,
                 content_hash TEXT NOT NULL,
                 vector BLOB NOT NULL,
                 PRIMARY KEY (model_id, content_hash)
             ) WITHOUT ROWID;",
        )
        .map_err(at)?;
        Ok(Self {
            conn: Mutex::new(conn),
        })
    }

    /// The cached vector for each hash, in the order given; `None` where there is none.
    pub fn get_many(
        &self,
        model_id: &str,
        hashes: &[&str],
    ) -> Result<Vec<Option<Vec<f32>>>, EmbedError> {
        let conn = self.lock()?;
        let mut stmt = conn
            .prepare_cached(
                "SELECT vector FROM embeddings WHERE model_id = ?1 AND content_hash = ?2",
            )
            .map_err(cache_error)?;
        hashes
            .iter()
            .map(|hash| {
                stmt.query_row(params![model_id, hash], |row| {
                    // Decode straight from SQLite's buffer rather than copying the blob first.
                    Ok(decode(row.get_ref(0)?.as_blob()?))
                })
                .optional()
                .map_err(cache_error)?
                .transpose()
                .map_err(|len| {
                    EmbedError::cache(format!(
                        "vector for {model_id}/{hash} is {len} bytes, not a whole number of f32s"
                    ))
                })
            })
            .collect()
    }

    /// Stores (or replaces) vectors, all in one transaction.
    pub fn put_many(&self, model_id: &str, entries: &[(&str, &[f32])]) -> Result<(), EmbedError> {
        let mut conn = self.lock()?;
        let tx = conn.transaction().map_err(cache_error)?;
        {
            let mut stmt = tx
                .prepare_cached(
                    "INSERT OR REPLACE INTO embeddings (model_id, content_hash, vector)
                     VALUES (?1, ?2, ?3)",
                )
                .map_err(cache_error)?;
            for (hash, vector) in entries {
                stmt.execute(params![model_id, hash, encode(vector)])
                    .map_err(cache_error)?;
            }
        }
        tx.commit().map_err(cache_error)
    }

    fn lock(&self) -> Result<MutexGuard<'_, Connection>, EmbedError> {
        self.conn
            .lock()
            .map_err(|_| EmbedError::cache("cache lock poisoned by a panic"))
    }
}

fn encode(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Fails with the blob's length when it cannot hold whole f32s (a damaged row).
fn decode(blob: &[u8]) -> Result<Vec<f32>, usize> {
    let chunks = blob.chunks_exact(4);
    if !chunks.remainder().is_empty() {
        return Err(blob.len());
    }
    Ok(chunks
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect())
}

fn cache_error(e: rusqlite::Error) -> EmbedError {
    EmbedError::cache("").because(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_vectors_per_model() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("cache.sqlite");
        let cache = EmbeddingCache::open(&path).unwrap();
        let a = [1.0, -2.5, f32::MIN_POSITIVE];
        let b = [0.25, 0.5, 0.75];
        cache.put_many("m1", &[("ha", &a), ("hb", &b)]).unwrap();
        cache.put_many("m2", &[("ha", &b)]).unwrap();

        let got = cache.get_many("m1", &["hb", "missing", "ha"]).unwrap();
        assert_eq!(got, vec![Some(b.to_vec()), None, Some(a.to_vec())]);
        assert_eq!(
            cache.get_many("m2", &["ha"]).unwrap(),
            vec![Some(b.to_vec())]
        );

        // Reopening sees what was committed, and a put replaces.
        drop(cache);
        let cache = EmbeddingCache::open(&path).unwrap();
        cache.put_many("m1", &[("ha", &b)]).unwrap();
        assert_eq!(
            cache.get_many("m1", &["ha"]).unwrap(),
            vec![Some(b.to_vec())]
        );
    }

    #[test]
    fn damaged_blob_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let cache = EmbeddingCache::open(&dir.path().join("c.sqlite")).unwrap();
        cache
            .lock()
            .unwrap()
            .execute("INSERT INTO embeddings VALUES ('m', 'h', x'000102')", [])
            .unwrap();
        let err = cache.get_many("m", &["h"]).unwrap_err();
        assert!(err.to_string().contains("3 bytes"), "{err}");
    }
}
