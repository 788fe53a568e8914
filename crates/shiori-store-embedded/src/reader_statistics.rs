//! BM25's corpus statistics over the chunks one reader may read, so that chunks a key cannot
//! read do not move the scores of those it can (the number of chunks holding a query term, the
//! number of chunks, the fields' average lengths). With the whole index's statistics, a key
//! could estimate how many hidden chunks hold a word it picks from its own scores.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::{AllowedKeys, IndexError};
use tantivy::query::Bm25StatisticsProvider;
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{BitSet, DocSet, Searcher, Term, TERMINATED};

use crate::error::backend;

/// The statistics of one reader on one generation of the index: which documents of each
/// segment it reads, how many, their total length per field, and each term's count of them
/// once a query has asked for it.
pub struct ReaderStatistics {
    searcher: Searcher,
    readable: Vec<BitSet>,
    chunks: u64,
    tokens: HashMap<Field, u64>,
    doc_freqs: Mutex<HashMap<Term, u64>>,
}

impl ReaderStatistics {
    /// The statistics of the reader of the chunks with `allowed` keys, on `searcher`'s
    /// generation: one pass over every document's key and field lengths. Computed even when
    /// that reader reads every live chunk: the index's own statistics count deleted chunks
    /// until segments merge and exact field lengths, so switching to them would move the
    /// reader's scores when the first chunk is hidden from it, or the last one shown.
    pub(crate) fn of(
        searcher: Searcher,
        allowed: &AllowedKeys,
        key_field: &str,
        fields: &[Field],
    ) -> Result<ReaderStatistics, IndexError> {
        let mut readable = Vec::with_capacity(searcher.segment_readers().len());
        let mut tokens: HashMap<Field, u64> = fields.iter().map(|&field| (field, 0)).collect();
        let mut chunks = 0u64;
        for segment in searcher.segment_readers() {
            let keys = segment.fast_fields().u64(key_field).map_err(backend)?;
            let norms = fields
                .iter()
                .map(|&field| Ok((field, segment.get_fieldnorms_reader(field)?)))
                .collect::<tantivy::Result<Vec<_>>>()
                .map_err(backend)?;
            let mut bits = BitSet::with_max_value(segment.max_doc());
            for doc in 0..segment.max_doc() {
                if segment
                    .alive_bitset()
                    .is_some_and(|alive| alive.is_deleted(doc))
                {
                    continue;
                }
                if !keys.first(doc).is_some_and(|key| allowed.contains(&key)) {
                    continue;
                }
                bits.insert(doc);
                chunks += 1;
                for (field, norms) in &norms {
                    *tokens.entry(*field).or_default() += u64::from(norms.fieldnorm(doc));
                }
            }
            readable.push(bits);
        }
        Ok(ReaderStatistics {
            searcher,
            readable,
            chunks,
            tokens,
            doc_freqs: Mutex::new(HashMap::new()),
        })
    }

    /// The index generation these statistics describe; a search with them runs on it.
    pub fn searcher(&self) -> &Searcher {
        &self.searcher
    }

    /// The readable documents holding `term`: a walk over its postings in every segment.
    fn count_readable(&self, term: &Term) -> tantivy::Result<u64> {
        let mut count = 0u64;
        for (segment, readable) in self.searcher.segment_readers().iter().zip(&self.readable) {
            let index = segment.inverted_index(term.field())?;
            let Some(mut postings) = index.read_postings(term, IndexRecordOption::Basic)? else {
                continue;
            };
            let mut doc = postings.doc();
            while doc != TERMINATED {
                count += u64::from(readable.contains(doc));
                doc = postings.advance();
            }
        }
        Ok(count)
    }
}

/// How many terms' readable counts one reader's statistics keep.
const CACHED_TERMS: usize = 100_000;

impl Bm25StatisticsProvider for ReaderStatistics {
    fn total_num_tokens(&self, field: Field) -> tantivy::Result<u64> {
        Ok(self.tokens.get(&field).copied().unwrap_or_default())
    }

    fn total_num_docs(&self) -> tantivy::Result<u64> {
        Ok(self.chunks)
    }

    fn doc_freq(&self, term: &Term) -> tantivy::Result<u64> {
        let poisoned = || tantivy::TantivyError::InternalError("doc_freqs poisoned".into());
        if let Some(&count) = self.doc_freqs.lock().map_err(|_| poisoned())?.get(term) {
            return Ok(count);
        }
        let count = self.count_readable(term)?;
        let mut cached = self.doc_freqs.lock().map_err(|_| poisoned())?;
        // Queries choose the terms, so the cache is bounded: past the bound it starts again.
        if cached.len() >= CACHED_TERMS {
            cached.clear();
        }
        cached.insert(term.clone(), count);
        Ok(count)
    }
}
