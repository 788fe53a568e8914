use crate::IndexError;
use rayon::prelude::*;
use std::io::Read;
use std::path::{Path, PathBuf};
use usearch::{Index, IndexOptions, MetricKind, ScalarKind};

/// Below this many vectors a query scans them all: exact, and still sub-millisecond.
const EXACT_SEARCH_LIMIT: usize = 20_000;
/// HNSW graph degree and beam widths, chosen on `shiori bench scale` at a million e5 vectors in
/// tight clusters (recall@10 against exact search, search beam 384): build beam 64 0.924, degree
/// 32 0.956 (14 % more memory), build beam 128 0.968. Inserts run on every core, so the wider
/// build beam still indexes a million chunks within the 10 minutes asked of it.
const CONNECTIVITY: usize = 16;
const EXPANSION_ADD: usize = 128;
const EXPANSION_SEARCH: usize = 384;
const STORED_AS: ScalarKind = ScalarKind::F16;

/// Chunk vectors in a usearch HNSW index, saved to one file. Vectors are L2-normalised, so the
/// inner-product metric is cosine; searches are exact while the collection is small. They are
/// held as half-precision floats: half the memory and disk of f32, with nDCG@10 on the shared
/// sets unchanged.
pub struct UsearchIndex {
    index: Index,
    path: PathBuf,
    dimension: usize,
    /// How many threads may add at once, as last reserved.
    adding_threads: usize,
}

fn backend(error: impl std::fmt::Display) -> IndexError {
    IndexError::Backend(error.to_string())
}

fn io_error(path: &Path, error: impl std::fmt::Display) -> IndexError {
    IndexError::Io {
        path: path.display().to_string(),
        message: error.to_string(),
    }
}

impl UsearchIndex {
    /// Opens the index saved at `path`, or an empty one when there is none or it does not fit
    /// `dimension` (the store then rebuilds it from its tables).
    pub fn open(path: &Path, dimension: usize) -> Result<Self, IndexError> {
        let options = IndexOptions {
            dimensions: dimension,
            metric: MetricKind::IP,
            quantization: STORED_AS,
            connectivity: CONNECTIVITY,
            expansion_add: EXPANSION_ADD,
            expansion_search: EXPANSION_SEARCH,
            multi: false,
        };
        let index = Index::new(&options).map_err(backend)?;
        let path_str = path
            .to_str()
            .ok_or_else(|| io_error(path, "path is not UTF-8"))?;
        if path.exists() {
            // An index of another size or scalar kind (f32, before) starts empty and is rebuilt.
            let fits = Index::metadata(path_str)
                .map(|meta| meta.dimensions as usize == dimension && meta.quantization == STORED_AS)
                .unwrap_or(false);
            // A file that does not load (damaged) also starts empty: the store sees fewer
            // vectors than chunks and rebuilds.
            if fits && index.load(path_str).is_err() {
                tracing::warn!("{} could not be loaded; it starts empty", path.display());
                index.reset().map_err(backend)?;
            }
        }
        Ok(UsearchIndex {
            index,
            path: path.to_path_buf(),
            dimension,
            adding_threads: 0,
        })
    }

    /// The checksum of the saved file (its size and CRC-32), as [`persist`] last wrote it;
    /// `None` when there is no file.
    ///
    /// [`persist`]: Self::persist
    pub fn file_checksum(&self) -> Result<Option<String>, IndexError> {
        file_checksum(&self.path)
    }

    /// Drops every vector (before a rebuild).
    pub fn clear(&mut self) -> Result<(), IndexError> {
        self.index.reset().map_err(backend)
    }

    fn check_dimension(&self, vector: &[f32]) -> Result<(), IndexError> {
        if vector.len() == self.dimension {
            Ok(())
        } else {
            Err(IndexError::Dimension {
                expected: self.dimension,
                got: vector.len(),
            })
        }
    }

    /// Room for `additional` vectors, added by every thread of the current rayon pool.
    fn reserve_for(&mut self, additional: usize) -> Result<(), IndexError> {
        let needed = self.index.size() + additional;
        let threads = rayon::current_num_threads().max(1);
        let grow = needed > self.index.capacity();
        if grow || threads > self.adding_threads {
            let capacity = match grow {
                true => needed.max(self.index.capacity() * 2).max(1024),
                false => self.index.capacity(),
            };
            self.index
                .reserve_capacity_and_threads(capacity, threads)
                .map_err(backend)?;
            self.adding_threads = threads;
        }
        Ok(())
    }

    /// The cosine [`search`](Self::search) gives each of `keys` that the index holds:
    /// usearch casts the query to the half precision the vectors are held in, so the dot
    /// product here is of the same half-precision values.
    pub fn scores(&self, query: &[f32], keys: &[u64]) -> Result<Vec<(u64, f32)>, IndexError> {
        self.check_dimension(query)?;
        let query: Vec<f32> = query
            .iter()
            .map(|value| half::f16::from_f32(*value).to_f32())
            .collect();
        let mut stored = vec![0.0f32; self.dimension];
        let mut scores = Vec::with_capacity(keys.len());
        for &key in keys {
            if self.index.get(key, &mut stored).map_err(backend)? > 0 {
                let cosine = query.iter().zip(&stored).map(|(q, v)| q * v).sum();
                scores.push((key, cosine));
            }
        }
        Ok(scores)
    }
}

impl UsearchIndex {
    pub fn dimension(&self) -> usize {
        self.dimension
    }

    pub fn len(&self) -> usize {
        self.index.size()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Inserts on every thread of the current rayon pool (a server's writer pool, so never
    /// the threads that answer queries): usearch takes concurrent adds up to the thread count
    /// its capacity was reserved for.
    pub fn upsert(&mut self, entries: &[(u64, Vec<f32>)]) -> Result<(), IndexError> {
        for (key, vector) in entries {
            self.check_dimension(vector)?;
            if self.index.contains(*key) {
                self.index.remove(*key).map_err(backend)?;
            }
        }
        self.reserve_for(entries.len())?;
        let index = &self.index;
        entries
            .par_iter()
            .try_for_each(|(key, vector)| index.add(*key, vector).map_err(backend))
    }

    pub fn remove(&mut self, keys: &[u64]) -> Result<(), IndexError> {
        for key in keys {
            self.index.remove(*key).map_err(backend)?;
        }
        Ok(())
    }

    pub fn persist(&mut self) -> Result<(), IndexError> {
        // Save beside the live file and rename over it, so a crash leaves the old file whole.
        let temporary = self.path.with_extension("usearch.tmp");
        let temporary_str = temporary
            .to_str()
            .ok_or_else(|| io_error(&temporary, "path is not UTF-8"))?;
        self.index
            .save(temporary_str)
            .map_err(|e| io_error(&temporary, e))?;
        std::fs::rename(&temporary, &self.path).map_err(|e| io_error(&self.path, e))
    }

    pub fn search(
        &self,
        query: &[f32],
        k: usize,
        allowed: Option<&(dyn Fn(u64) -> bool + Sync)>,
    ) -> Result<Vec<(u64, f32)>, IndexError> {
        self.check_dimension(query)?;
        let size = self.index.size();
        if size == 0 || k == 0 {
            return Ok(Vec::new());
        }
        let matches = match allowed {
            None if size <= EXACT_SEARCH_LIMIT => self
                .index
                .exact_search(query, k.min(size))
                .map_err(backend)?,
            Some(allowed) if size <= EXACT_SEARCH_LIMIT => {
                let all = self.index.exact_search(query, size).map_err(backend)?;
                return Ok(all
                    .keys
                    .into_iter()
                    .zip(all.distances)
                    .filter(|(key, _)| allowed(*key))
                    .take(k)
                    .map(|(key, distance)| (key, 1.0 - distance))
                    .collect());
            }
            None => {
                self.index
                    .change_expansion_search(EXPANSION_SEARCH.max(2 * k));
                self.index.search(query, k).map_err(backend)?
            }
            Some(allowed) => {
                self.index
                    .change_expansion_search(EXPANSION_SEARCH.max(2 * k));
                self.index
                    .filtered_search(query, k, allowed)
                    .map_err(backend)?
            }
        };
        Ok(matches
            .keys
            .into_iter()
            .zip(matches.distances)
            .map(|(key, distance)| (key, 1.0 - distance))
            .collect())
    }
}

/// The size and CRC-32 of the file at `path`, read in pieces; `None` when it does not exist.
/// CRC-32 catches damaged bytes (a disk or a stray write), which is what it is for: anyone who
/// can write the data directory can rewrite the tables as well.
pub(crate) fn file_checksum(path: &Path) -> Result<Option<String>, IndexError> {
    let mut file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(io_error(path, error)),
    };
    let mut hasher = crc32fast::Hasher::new();
    let mut buffer = vec![0; CHECKSUM_PIECE_BYTES];
    let mut size = 0u64;
    loop {
        let read = file.read(&mut buffer).map_err(|e| io_error(path, e))?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
        size += read as u64;
    }
    Ok(Some(format!("{size}:{:08x}", hasher.finalize())))
}

/// How much of a file [`file_checksum`] reads at a time.
const CHECKSUM_PIECE_BYTES: usize = 1 << 20;

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(values: &[f32]) -> Vec<f32> {
        let norm = values.iter().map(|v| v * v).sum::<f32>().sqrt();
        values.iter().map(|v| v / norm).collect()
    }

    #[test]
    fn finds_nearest_and_survives_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v.usearch");
        let mut index = UsearchIndex::open(&path, 3).unwrap();
        index
            .upsert(&[
                (1, unit(&[1.0, 0.0, 0.0])),
                (2, unit(&[0.0, 1.0, 0.0])),
                (3, unit(&[1.0, 1.0, 0.0])),
            ])
            .unwrap();
        index.persist().unwrap();
        let reopened = UsearchIndex::open(&path, 3).unwrap();
        let hits = reopened.search(&unit(&[1.0, 0.1, 0.0]), 2, None).unwrap();
        assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), vec![1, 3]);
        assert!((hits[0].1 - 0.995).abs() < 0.01);
    }

    #[test]
    fn remove_filter_and_dimension_checks() {
        let dir = tempfile::tempdir().unwrap();
        let mut index = UsearchIndex::open(&dir.path().join("v.usearch"), 2).unwrap();
        index
            .upsert(&[(1, unit(&[1.0, 0.0])), (2, unit(&[0.9, 0.1]))])
            .unwrap();
        index.remove(&[1]).unwrap();
        assert_eq!(index.len(), 1, "removed vectors no longer count");
        index.upsert(&[(2, unit(&[0.0, 1.0]))]).unwrap();
        assert_eq!(index.len(), 1, "an upsert replaces");
        index.upsert(&[(2, unit(&[0.9, 0.1]))]).unwrap();
        let hits = index.search(&unit(&[1.0, 0.0]), 5, None).unwrap();
        assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), vec![2]);
        let none = index
            .search(&unit(&[1.0, 0.0]), 5, Some(&|key| key != 2))
            .unwrap();
        assert!(none.is_empty());
        assert!(matches!(
            index.search(&[1.0, 0.0, 0.0], 1, None),
            Err(IndexError::Dimension {
                expected: 2,
                got: 3
            })
        ));
    }

    #[test]
    fn scores_of_keys_are_what_search_gives_them() {
        let dir = tempfile::tempdir().unwrap();
        let mut index = UsearchIndex::open(&dir.path().join("v.usearch"), 8).unwrap();
        let vectors: Vec<(u64, Vec<f32>)> = (1..=40u64)
            .map(|key| {
                let values: Vec<f32> = (0..8)
                    .map(|i| ((key * 7 + i * 13) % 11) as f32 - 4.7)
                    .collect();
                (key, unit(&values))
            })
            .collect();
        index.upsert(&vectors).unwrap();
        let query = unit(&[0.31, -0.2, 0.77, 0.05, -0.6, 0.12, 0.4, -0.33]);
        let hits = index.search(&query, 40, None).unwrap();
        assert_eq!(hits.len(), 40);
        let keys: Vec<u64> = hits.iter().map(|(key, _)| *key).chain([99]).collect();
        let scores = index.scores(&query, &keys).unwrap();
        assert_eq!(scores.len(), 40, "99 is not in the index");
        for ((key, cosine), (hit_key, hit_cosine)) in scores.iter().zip(&hits) {
            assert_eq!(key, hit_key);
            assert!(
                (cosine - hit_cosine).abs() < 1e-6,
                "{key}: {cosine} against {hit_cosine}"
            );
        }
    }

    #[test]
    fn reopening_with_another_dimension_starts_empty() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v.usearch");
        let mut index = UsearchIndex::open(&path, 2).unwrap();
        index.upsert(&[(1, unit(&[1.0, 0.0]))]).unwrap();
        index.persist().unwrap();
        assert!(UsearchIndex::open(&path, 4).unwrap().is_empty());
    }
}
