//! Embedding through the cache: only text not embedded before reaches the model.

use std::collections::HashMap;

use shiori_core::{EmbedError, Embedder};

use crate::cache::EmbeddingCache;

/// What [`embed_with_cache`] did, counted in distinct content hashes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CacheStats {
    /// Hashes whose vector came from the cache.
    pub hits: usize,
    /// Hashes that were embedded (and are now cached).
    pub embedded: usize,
}

/// Vectors for `items` (`(content hash, text)`), in order: cached ones are read, the rest are
/// embedded as passages in one call and stored. Items sharing a hash are embedded once.
pub fn embed_with_cache(
    embedder: &dyn Embedder,
    cache: &EmbeddingCache,
    items: &[(&str, &str)],
) -> Result<(Vec<Vec<f32>>, CacheStats), EmbedError> {
    let model_id = embedder.model_id();

    // Distinct hashes in first-seen order, each with the text of its first item.
    let mut slot_of: HashMap<&str, usize> = HashMap::with_capacity(items.len());
    let mut distinct: Vec<(&str, &str)> = Vec::new();
    let item_slots: Vec<usize> = items
        .iter()
        .map(|&(hash, text)| {
            *slot_of.entry(hash).or_insert_with(|| {
                distinct.push((hash, text));
                distinct.len() - 1
            })
        })
        .collect();

    let hashes: Vec<&str> = distinct.iter().map(|&(hash, _)| hash).collect();
    let mut vectors = cache.get_many(model_id, &hashes)?;
    // A cached vector of another length can only come from a damaged or foreign row; embedding
    // it again repairs the cache instead of handing the index a wrong-sized vector.
    let dimension = embedder.dimension();
    for vector in &mut vectors {
        if vector.as_ref().is_some_and(|v| v.len() != dimension) {
            *vector = None;
        }
    }

    let misses: Vec<usize> = (0..distinct.len())
        .filter(|&slot| vectors[slot].is_none())
        .collect();
    let texts: Vec<&str> = misses.iter().map(|&slot| distinct[slot].1).collect();
    let fresh = embedder.embed_passages(&texts)?;
    if fresh.len() != texts.len() {
        return Err(EmbedError::inference(format!(
            "embedder returned {} vectors for {} texts",
            fresh.len(),
            texts.len()
        )));
    }
    let entries: Vec<(&str, &[f32])> = misses
        .iter()
        .zip(&fresh)
        .map(|(&slot, vector)| (distinct[slot].0, vector.as_slice()))
        .collect();
    cache.put_many(model_id, &entries)?;

    let stats = CacheStats {
        hits: distinct.len() - misses.len(),
        embedded: misses.len(),
    };
    for (slot, vector) in misses.into_iter().zip(fresh) {
        vectors[slot] = Some(vector);
    }

    // Move each vector out on its last use; only repeated hashes are cloned.
    let mut remaining_uses = vec![0usize; distinct.len()];
    for &slot in &item_slots {
        remaining_uses[slot] += 1;
    }
    let out = item_slots
        .into_iter()
        .map(|slot| {
            remaining_uses[slot] -= 1;
            let vector = if remaining_uses[slot] == 0 {
                vectors[slot].take()
            } else {
                vectors[slot].clone()
            };
            vector.ok_or_else(|| EmbedError::inference(format!("no vector for slot {slot}")))
        })
        .collect::<Result<_, _>>()?;
    Ok((out, stats))
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    /// Embeds text as `[len, first byte]` and records every text it was asked to embed.
    struct CountingEmbedder {
        seen: Mutex<Vec<String>>,
    }

    impl Embedder for CountingEmbedder {
        fn model_id(&self) -> &str {
            "counting"
        }
        fn dimension(&self) -> usize {
            2
        }
        fn embed_passages(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
            self.seen
                .lock()
                .unwrap()
                .extend(texts.iter().map(|t| t.to_string()));
            Ok(texts.iter().map(|t| vector_for(t)).collect())
        }
        fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
            Ok(vector_for(text))
        }
    }

    fn vector_for(text: &str) -> Vec<f32> {
        vec![
            text.len() as f32,
            f32::from(text.bytes().next().unwrap_or(0)),
        ]
    }

    #[test]
    fn embeds_only_misses_once_each() {
        let dir = tempfile::tempdir().unwrap();
        let cache = EmbeddingCache::open(&dir.path().join("c.sqlite")).unwrap();
        let embedder = CountingEmbedder {
            seen: Mutex::new(Vec::new()),
        };

        let first = [("h1", "alpha"), ("h2", "be"), ("h1", "alpha")];
        let (vectors, stats) = embed_with_cache(&embedder, &cache, &first).unwrap();
        assert_eq!(
            vectors,
            vec![vector_for("alpha"), vector_for("be"), vector_for("alpha")]
        );
        assert_eq!(
            stats,
            CacheStats {
                hits: 0,
                embedded: 2
            }
        );
        assert_eq!(*embedder.seen.lock().unwrap(), vec!["alpha", "be"]);

        embedder.seen.lock().unwrap().clear();
        let second = [("h3", "gamma"), ("h2", "be"), ("h1", "alpha")];
        let (vectors, stats) = embed_with_cache(&embedder, &cache, &second).unwrap();
        assert_eq!(
            vectors,
            vec![vector_for("gamma"), vector_for("be"), vector_for("alpha")]
        );
        assert_eq!(
            stats,
            CacheStats {
                hits: 2,
                embedded: 1
            }
        );
        assert_eq!(*embedder.seen.lock().unwrap(), vec!["gamma"]);
    }

    #[test]
    fn wrong_sized_cached_vector_is_embedded_again() {
        let dir = tempfile::tempdir().unwrap();
        let cache = EmbeddingCache::open(&dir.path().join("c.sqlite")).unwrap();
        cache
            .put_many("counting", &[("h1", &[1.0, 2.0, 3.0])])
            .unwrap();
        let embedder = CountingEmbedder {
            seen: Mutex::new(Vec::new()),
        };
        let (vectors, stats) = embed_with_cache(&embedder, &cache, &[("h1", "abc")]).unwrap();
        assert_eq!(vectors, vec![vector_for("abc")]);
        assert_eq!(
            stats,
            CacheStats {
                hits: 0,
                embedded: 1
            }
        );
        assert_eq!(
            cache.get_many("counting", &["h1"]).unwrap(),
            vec![Some(vector_for("abc"))]
        );
    }
}
