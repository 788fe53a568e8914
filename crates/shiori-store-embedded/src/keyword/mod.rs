//! BM25 keyword search over chunk text, in a tantivy index of its own directory.
//!
//! Every chunk's title and text go, as one text, into every analyzed field: English words
//! (stemmed), Japanese character bigrams, and with a dictionary Japanese morphemes. A query is
//! analysed the same ways and the per-field BM25 scores add up. Indexing each chunk in all fields
//! rather than routing it by script keeps mixed-language chunks findable and keeps each field's
//! average length (a BM25 input) honest; on JSQuAD and MS MARCO it also ranked best.
//!
//! At query time the character bigrams of Latin words, and any term in more than 65,536 chunks,
//! only refine: they add to the scores of the best chunks the other terms found (four times as
//! many as asked for), because as retrieval terms they match much of the index and made a
//! query's cost grow with it. When the other terms find fewer chunks than that, one query of every term runs, as
//! before.

use std::path::Path;
use std::sync::Arc;

use crate::error::backend;
use crate::reader_statistics::ReaderStatistics;
use crate::{AllowedKeys, IndexError};
use shiori_analysis::{
    is_japanese_char, japanese_analyzer_name, query_terms, register_analyzers,
    skips_covered_unigrams, JapaneseTokenization, ENGLISH_ANALYZER, JAPANESE_BIGRAM_ANALYZER,
    JAPANESE_IPADIC_ANALYZER,
};
use tantivy::collector::{DocSetCollector, FilterCollector, TopDocs};
use tantivy::directory::error::LockError;
use tantivy::directory::MmapDirectory;
use tantivy::query::{Bm25StatisticsProvider, EnableScoring};
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, TermQuery, TermSetQuery};
use tantivy::schema::{
    Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, FAST, INDEXED, STORED,
};
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{
    DocAddress, DocSet, Index, IndexReader, IndexSettings, IndexWriter, ReloadPolicy, Score,
    Searcher, TantivyDocument, Term,
};

const KEY_FIELD: &str = "key";

/// Total indexing memory of the writer, split between its threads.
const WRITER_MEMORY_BYTES: usize = 50_000_000;
/// tantivy wants at least 15 MB per indexing thread; two threads also leave cores for embedding.
const WRITER_MAX_THREADS: usize = 2;

/// How many more candidates than asked for the other terms find before Latin bigrams refine
/// their scores: a chunk that only the bigrams would lift into the top k from further down is
/// rare enough that nDCG@10 on both shared sets is unchanged.
const REFINED_DEPTH: usize = 4;

/// A term found in more chunks than this only refines (see `query_terms`): walking its
/// postings is what made Japanese queries slow at a million chunks, while shorter lists cost
/// little. The shared evaluation sets have no term this common, so their rankings are as before.
const COMMON_TERM_CHUNKS: u64 = 1 << 16;

/// Bigrams match any substring, so they also reward fragments that merely share characters: at
/// half weight they add recall without outranking whole-word matches (nDCG@10, JSQuAD / MS MARCO:
/// 0.9486 / 0.7349 at weight 1.0, 0.9496 / 0.7386 at 0.5, 0.9495 / 0.7343 at 0.3).
const BIGRAM_BOOST: Score = 0.5;

/// One analyzed text field: where terms go, how text becomes terms, how much its score counts.
struct AnalyzedField {
    field: Field,
    analyzer: TextAnalyzer,
    boost: Score,
    /// Whether this is the character-bigram field.
    bigrams: bool,
    /// Whether queries leave out the unigrams their bigrams cover (`query_terms`).
    skip_covered_unigrams: bool,
}

/// A [`KeywordIndex`] backed by tantivy. The writer (which holds tantivy's directory lock) is
/// opened on the first change, so processes that only search never wait for an indexing run.
pub struct TantivyKeywordIndex {
    index: Index,
    writer: Option<IndexWriter<TantivyDocument>>,
    reader: IndexReader,
    key: Field,
    fields: Vec<AnalyzedField>,
    was_reset: bool,
}

fn io(path: &Path, error: impl std::fmt::Display) -> IndexError {
    IndexError::Io {
        path: path.display().to_string(),
        message: error.to_string(),
    }
}

/// The analyzers whose fields every chunk is indexed in.
fn analyzer_names(japanese: &JapaneseTokenization) -> Vec<&'static str> {
    let mut names = vec![ENGLISH_ANALYZER, JAPANESE_BIGRAM_ANALYZER];
    if japanese_analyzer_name(japanese) == JAPANESE_IPADIC_ANALYZER {
        names.push(JAPANESE_IPADIC_ANALYZER);
    }
    names
}

fn field_name(analyzer: &str) -> String {
    format!("text_{analyzer}")
}

/// The schema for `japanese`; its tokenizer names record which analyzers built the index.
fn schema_for(japanese: &JapaneseTokenization) -> Schema {
    let mut builder = Schema::builder();
    builder.add_u64_field(KEY_FIELD, INDEXED | FAST | STORED);
    for analyzer in analyzer_names(japanese) {
        // Frequencies without positions: ranking is BM25 over single terms, never phrases.
        let indexing = TextFieldIndexing::default()
            .set_tokenizer(analyzer)
            .set_index_option(IndexRecordOption::WithFreqs);
        builder.add_text_field(
            &field_name(analyzer),
            TextOptions::default().set_indexing_options(indexing),
        );
    }
    builder.build()
}

fn mmap_directory(dir: &Path) -> Result<MmapDirectory, IndexError> {
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    MmapDirectory::open(dir).map_err(|e| io(dir, e))
}

/// The index in `dir` if there is one with `schema`. One with another schema is deleted: the
/// directory holds nothing but this index, and the index is derived data that the caller
/// rebuilds from its store.
fn open_matching(dir: &Path, schema: &Schema) -> Result<Option<Index>, IndexError> {
    let directory = mmap_directory(dir)?;
    if !Index::exists(&directory).map_err(|e| io(dir, e))? {
        return Ok(None);
    }
    let index = Index::open(directory).map_err(backend)?;
    if index.schema() == *schema {
        return Ok(Some(index));
    }
    drop(index);
    std::fs::remove_dir_all(dir).map_err(|e| io(dir, e))?;
    Ok(None)
}

impl TantivyKeywordIndex {
    /// Opens the index in `dir`, or creates it. An index built with another analyzer set (its
    /// schema differs) is deleted and recreated empty; [`was_reset`](Self::was_reset) then says
    /// the caller must add every chunk again.
    pub fn open(dir: &Path, japanese: &JapaneseTokenization) -> Result<Self, IndexError> {
        let schema = schema_for(japanese);
        let existing = open_matching(dir, &schema)?;
        let was_reset = existing.is_none();
        let index = match existing {
            Some(index) => index,
            None => Index::create(mmap_directory(dir)?, schema, IndexSettings::default())
                .map_err(backend)?,
        };
        register_analyzers(&index, japanese);

        let key = index.schema().get_field(KEY_FIELD).map_err(backend)?;
        let mut fields = Vec::new();
        for analyzer in analyzer_names(japanese) {
            let field = index
                .schema()
                .get_field(&field_name(analyzer))
                .map_err(backend)?;
            let bigrams = analyzer == JAPANESE_BIGRAM_ANALYZER;
            fields.push(AnalyzedField {
                field,
                analyzer: index.tokenizer_for_field(field).map_err(backend)?,
                boost: if bigrams { BIGRAM_BOOST } else { 1.0 },
                bigrams,
                skip_covered_unigrams: skips_covered_unigrams(analyzer, japanese),
            });
        }

        // Searches see exactly what `persist` committed, not whatever a background merge or
        // commit timer happens to publish.
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(backend)?;
        Ok(Self {
            index,
            writer: None,
            reader,
            key,
            fields,
            was_reset,
        })
    }

    /// True when this open started from an empty index — newly created, or wiped because it was
    /// built with other analyzers — so its chunks must all be added again.
    pub fn was_reset(&self) -> bool {
        self.was_reset
    }

    /// The index files whose content no longer matches the checksum tantivy wrote in their
    /// footer at commit (bytes changed on disk), by name.
    pub fn damaged_files(&self) -> Result<Vec<String>, IndexError> {
        let mut damaged: Vec<String> = self
            .index
            .validate_checksum()
            .map_err(backend)?
            .into_iter()
            .map(|path| path.display().to_string())
            .collect();
        damaged.sort();
        Ok(damaged)
    }

    /// Drops every chunk, including changes not yet persisted; like every change, visible to
    /// searches after [`persist`](Self::persist).
    pub fn clear(&mut self) -> Result<(), IndexError> {
        let writer = self.writer()?;
        // Rolling back first keeps documents still in the indexing pipeline from landing after
        // the segments are dropped.
        writer.rollback().map_err(backend)?;
        writer.delete_all_documents().map_err(backend)?;
        Ok(())
    }

    /// Takes the index's writer lock unless another writer (another process indexing the same
    /// directory) holds it: false then, and nothing changes.
    pub fn try_lock_writer(&mut self) -> Result<bool, IndexError> {
        if self.writer.is_none() {
            match self.open_writer() {
                Ok(writer) => self.writer = Some(writer),
                Err(tantivy::TantivyError::LockFailure(LockError::LockBusy, _)) => {
                    return Ok(false)
                }
                Err(error) => return Err(backend(error)),
            }
        }
        Ok(true)
    }

    /// Lets the writer lock go when [`try_lock_writer`](Self::try_lock_writer) took it for
    /// nothing (no change is pending then), so other processes may write.
    pub fn release_writer(&mut self) {
        self.writer = None;
    }

    fn open_writer(&self) -> tantivy::Result<IndexWriter<TantivyDocument>> {
        let threads = std::thread::available_parallelism()
            .map_or(1, usize::from)
            .min(WRITER_MAX_THREADS);
        self.index
            .writer_with_num_threads(threads, WRITER_MEMORY_BYTES)
    }

    fn writer(&mut self) -> Result<&mut IndexWriter<TantivyDocument>, IndexError> {
        if self.writer.is_none() {
            self.writer = Some(self.open_writer().map_err(backend)?);
        }
        self.writer
            .as_mut()
            .ok_or_else(|| IndexError::Backend("the index writer could not be opened".into()))
    }
}

/// A query clause: one term of one field, at the field's weight.
type Clause = (Occur, Box<dyn Query>);

impl TantivyKeywordIndex {
    /// The query's terms in every field, split in two. Character bigrams of Latin words
    /// ("oatmeal" → "oa", "at", …) occur in most English chunks, and so do common Japanese
    /// bigrams ("した", "ある") and words: as retrieval terms they make every query walk most
    /// of the index. So they only add to the score of the best chunks the other terms found
    /// ("refining"); every other term finds chunks ("matching"). A query with nothing but such
    /// terms lets them find chunks too.
    fn query_terms(
        &self,
        statistics: &dyn Bm25StatisticsProvider,
        query: &str,
    ) -> (Vec<Clause>, Vec<Clause>) {
        let mut matching = Vec::new();
        let mut refining = Vec::new();
        for field in &self.fields {
            for text in query_terms(&field.analyzer, query, field.skip_covered_unigrams) {
                let latin_bigram = field.bigrams && !text.chars().any(is_japanese_char);
                let term = Term::from_field_text(field.field, &text);
                let common = latin_bigram
                    || statistics
                        .doc_freq(&term)
                        .is_ok_and(|found| found > COMMON_TERM_CHUNKS);
                let term_query: Box<dyn Query> =
                    Box::new(TermQuery::new(term, IndexRecordOption::WithFreqs));
                let clause: Box<dyn Query> = if field.boost == 1.0 {
                    term_query
                } else {
                    Box::new(BoostQuery::new(term_query, field.boost))
                };
                match common {
                    true => refining.push((Occur::Should, clause)),
                    false => matching.push((Occur::Should, clause)),
                }
            }
        }
        (matching, refining)
    }
}

/// A query of the same clauses.
fn copied(clauses: &[Clause]) -> BooleanQuery {
    BooleanQuery::new(
        clauses
            .iter()
            .map(|(occur, query)| (*occur, query.box_clone()))
            .collect(),
    )
}

/// The best `k` documents for `query`, best first, among those `allowed`, scored with
/// `statistics`.
fn top_documents(
    scoring: &Scoring,
    query: &dyn Query,
    k: usize,
    allowed: Option<&AllowedKeys>,
) -> Result<Vec<(Score, DocAddress)>, IndexError> {
    let (searcher, statistics) = (&scoring.searcher, scoring.statistics());
    let best = TopDocs::with_limit(k).order_by_score();
    // A filter in the collector: chunks the reader may not see never take a place, so the
    // top k are filled from the allowed ones.
    match allowed {
        None => searcher.search_with_statistics_provider(query, &best, statistics),
        Some(allowed) => {
            let allowed = Arc::clone(allowed);
            let filtered = FilterCollector::new(
                KEY_FIELD.to_string(),
                move |key: u64| allowed.contains(&key),
                best,
            );
            searcher.search_with_statistics_provider(query, &filtered, statistics)
        }
    }
    .map_err(backend)
}

/// Adds the score each `refining` clause gives each found document (with the whole index's
/// statistics, so a score is what one query of all the terms would give it) and sorts them
/// again. Each term's postings are sought to the found documents through their skip lists:
/// a union of the terms would decode every posting between them, and these terms occur in
/// most documents (at a million chunks that union took most of a query's BM25 time).
fn refine(
    scoring: &Scoring,
    refining: &[Clause],
    mut found: Vec<(Score, DocAddress)>,
) -> Result<Vec<(Score, DocAddress)>, IndexError> {
    found.sort_by_key(|(_, address)| (address.segment_ord, address.doc_id));
    let searcher = &scoring.searcher;
    let enabled = EnableScoring::enabled_from_statistics_provider(scoring.statistics(), searcher);
    for (_, clause) in refining {
        let weight = clause.weight(enabled).map_err(backend)?;
        for segment in found.chunk_by_mut(|a, b| a.1.segment_ord == b.1.segment_ord) {
            let reader = searcher.segment_reader(segment[0].1.segment_ord);
            let mut scorer = weight.scorer(reader, 1.0).map_err(backend)?;
            for (score, address) in segment {
                if scorer.doc() < address.doc_id {
                    scorer.seek(address.doc_id);
                }
                if scorer.doc() == address.doc_id {
                    *score += scorer.score();
                }
            }
        }
    }
    found.sort_by(|a, b| b.0.total_cmp(&a.0));
    Ok(found)
}

impl TantivyKeywordIndex {
    /// Chunks visible to searches, i.e. as of the last [`persist`](Self::persist).
    pub fn len(&self) -> usize {
        usize::try_from(self.reader.searcher().num_docs()).unwrap_or(usize::MAX)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// No delete per key: tantivy holds every delete, with a scoring weight of over a kilobyte,
    /// until the next commit, which was 1.2 GB of a million-chunk run's memory. The store's keys
    /// are fresh row ids, and a reused one was removed first.
    pub fn add(&mut self, entries: &[(u64, &str, &str)]) -> Result<(), IndexError> {
        if entries.is_empty() {
            return Ok(());
        }
        let key_field = self.key;
        let documents: Vec<TantivyDocument> = entries
            .iter()
            .map(|&(key, title, text)| {
                let body = format!("{title}\n{text}");
                let mut document = TantivyDocument::default();
                document.add_u64(key_field, key);
                for field in &self.fields {
                    document.add_text(field.field, &body);
                }
                document
            })
            .collect();
        let writer = self.writer()?;
        for document in documents {
            writer.add_document(document).map_err(backend)?;
        }
        Ok(())
    }

    /// One delete for all `keys` (a set of terms, held compactly until the commit).
    pub fn remove(&mut self, keys: &[u64]) -> Result<(), IndexError> {
        if keys.is_empty() {
            return Ok(());
        }
        let key_field = self.key;
        let terms = keys.iter().map(|&key| Term::from_field_u64(key_field, key));
        let writer = self.writer()?;
        writer
            .delete_query(Box::new(TermSetQuery::new(terms)))
            .map_err(backend)?;
        Ok(())
    }

    pub fn persist(&mut self) -> Result<(), IndexError> {
        if let Some(writer) = self.writer.as_mut() {
            writer.commit().map_err(backend)?;
        }
        self.reader.reload().map_err(backend)
    }

    pub fn search(
        &self,
        query: &str,
        k: usize,
        allowed: Option<&AllowedKeys>,
    ) -> Result<Vec<(u64, f32)>, IndexError> {
        self.search_as(query, k, allowed, None)
    }
}

/// The generation a query runs on and the statistics it scores with: a reader's own (on the
/// generation they describe), or the whole index's.
struct Scoring<'a> {
    searcher: Searcher,
    reader: Option<&'a ReaderStatistics>,
}

impl<'a> Scoring<'a> {
    fn new(index: &TantivyKeywordIndex, reader: Option<&'a ReaderStatistics>) -> Scoring<'a> {
        let searcher = reader.map_or_else(|| index.reader.searcher(), |r| r.searcher().clone());
        Scoring { searcher, reader }
    }

    fn statistics(&self) -> &dyn Bm25StatisticsProvider {
        match self.reader {
            Some(reader) => reader,
            None => &self.searcher,
        }
    }
}

impl TantivyKeywordIndex {
    /// The statistics BM25 scores the queries of a reader of the chunks with `allowed` keys
    /// with.
    pub fn reader_statistics(&self, allowed: &AllowedKeys) -> Result<ReaderStatistics, IndexError> {
        let fields: Vec<Field> = self.fields.iter().map(|field| field.field).collect();
        ReaderStatistics::of(self.reader.searcher(), allowed, KEY_FIELD, &fields)
    }

    /// The index generation [`reader_statistics`](Self::reader_statistics) would describe now.
    pub fn generation(&self) -> u64 {
        self.reader.searcher().generation().generation_id()
    }

    /// [`search`](Self::search), scored with `reader`'s statistics when given (see
    /// [`reader_statistics`](Self::reader_statistics)).
    pub fn search_as(
        &self,
        query: &str,
        k: usize,
        allowed: Option<&AllowedKeys>,
        reader: Option<&ReaderStatistics>,
    ) -> Result<Vec<(u64, f32)>, IndexError> {
        if k == 0 {
            return Ok(Vec::new());
        }
        let scoring = Scoring::new(self, reader);
        // Terms straight from the analyzers: unlike tantivy's QueryParser, no query syntax, so
        // user punctuation (`?`, `:`, quotes) can never make a query fail.
        let (matching, refining) = self.query_terms(scoring.statistics(), query);
        if matching.is_empty() && refining.is_empty() {
            return Ok(Vec::new());
        }
        let depth = k.saturating_mul(REFINED_DEPTH);
        let found = match (matching.is_empty(), refining.is_empty()) {
            (false, false) => top_documents(&scoring, &copied(&matching), depth, allowed)?,
            _ => Vec::new(),
        };
        let top = if found.len() == depth {
            let mut refined = refine(&scoring, &refining, found)?;
            refined.truncate(k);
            refined
        } else {
            // The words found fewer chunks than the refined depth (a small collection, rare
            // words) or there is one kind of term only: one query of every term, whose list
            // (tail included) is what the relevance signals were calibrated on.
            let every_term = matching.into_iter().chain(refining).collect();
            top_documents(&scoring, &BooleanQuery::new(every_term), k, allowed)?
        };
        keyed(&scoring.searcher, top)
    }
}

impl TantivyKeywordIndex {
    /// The score [`search`](Self::search) gives each of `keys` for `query`: that of one
    /// query of every term, which is what a refined search returns too. Only the chunks with
    /// `keys` are scored, each term's postings sought to them, so no other chunk is visited.
    /// Keys no term matches (and keys not in the index) are left out.
    /// With `reader`, scored with that reader's statistics, as its searches are.
    pub fn scores(
        &self,
        query: &str,
        keys: &[u64],
        reader: Option<&ReaderStatistics>,
    ) -> Result<Vec<(u64, f32)>, IndexError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let scoring = Scoring::new(self, reader);
        let searcher = &scoring.searcher;
        let (matching, refining) = self.query_terms(scoring.statistics(), query);
        let wanted = TermSetQuery::new(keys.iter().map(|&key| Term::from_field_u64(self.key, key)));
        let unscored = searcher
            .search(&wanted, &DocSetCollector)
            .map_err(backend)?
            .into_iter()
            .map(|address| (0.0, address))
            .collect();
        let every_term: Vec<Clause> = matching.into_iter().chain(refining).collect();
        let mut scored = refine(&scoring, &every_term, unscored)?;
        scored.retain(|(score, _)| *score > 0.0);
        keyed(searcher, scored)
    }
}

/// Each found document's chunk key, with its score.
fn keyed(
    searcher: &Searcher,
    found: Vec<(Score, DocAddress)>,
) -> Result<Vec<(u64, f32)>, IndexError> {
    let mut hits = Vec::with_capacity(found.len());
    for (score, address) in found {
        let keys = searcher
            .segment_reader(address.segment_ord)
            .fast_fields()
            .u64(KEY_FIELD)
            .map_err(backend)?;
        if let Some(key) = keys.first(address.doc_id) {
            hits.push((key, score));
        }
    }
    // Equal scores in key order, not in the index's document order: an index rebuilt from the
    // store (a restore, a repair) lays its documents out anew, and must rank as the old one.
    hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    Ok(hits)
}

#[cfg(test)]
mod tests;
