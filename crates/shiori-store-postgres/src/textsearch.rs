//! BM25 through Timescale's pg_textsearch, when the database has it: its block-max WAND index
//! over `chunks.bm25_text` finds candidates, which are then scored exactly as the SQL path
//! scores them, with the reader's own statistics (`bm25::weights`: document frequencies from
//! `term_df` of the groups it may read). The index's own statistics count every chunk, hidden
//! or deleted; they only order candidates, never a score a reader sees.

use crate::bm25::{self, ReaderStatistics, Weighted};
use crate::filters::{self, Param};
use crate::token_text;
use crate::PostgresError;
use postgres::{GenericClient, Row};
use shiori_core::Filters;
use std::collections::HashMap;

const EXTENSION: &str = "pg_textsearch";
const INDEX: &str = "chunks_bm25";
/// The first release whose index is WAL-logged, so a streaming replica can search it.
const SERVES_STANDBYS_FROM: (u32, u32) = (1, 2);
/// Candidates fetched per result asked for, and at least: the index ranks with the whole
/// store's statistics and one text per chunk, the re-score with the reader's per field.
const CANDIDATES_PER_RESULT: usize = 4;
const MIN_CANDIDATES: usize = 100;
/// How many times more candidates a filtered search fetches when the filter left too few.
const WIDER: usize = 16;

/// Where a store's BM25 postings live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum KeywordIndex {
    /// Term rows in `chunk_terms`, searched by MaxScore in SQL (`bm25.rs`).
    Sql,
    /// A pg_textsearch index of this version over `chunks.bm25_text`.
    TextSearch { version: String },
}

impl KeywordIndex {
    /// What the database offers: pg_textsearch when it is created in this database.
    pub(crate) fn detect(client: &mut impl GenericClient) -> Result<KeywordIndex, PostgresError> {
        let version: Option<String> = client
            .query_opt(
                "SELECT extversion FROM pg_extension WHERE extname = $1",
                &[&EXTENSION],
            )?
            .map(|row| row.get(0));
        Ok(
            version.map_or(KeywordIndex::Sql, |version| KeywordIndex::TextSearch {
                version,
            }),
        )
    }

    /// Whether writes keep a row per term per chunk.
    pub(crate) fn keeps_term_rows(&self) -> bool {
        *self == KeywordIndex::Sql
    }

    /// Whether a streaming replica can run this index's searches.
    pub(crate) fn serves_standbys(&self) -> bool {
        match self {
            KeywordIndex::Sql => true,
            KeywordIndex::TextSearch { version } => {
                let mut parts = version.split('.').map(|part| part.parse::<u32>().ok());
                let major = parts.next().flatten().unwrap_or(0);
                let minor = parts.next().flatten().unwrap_or(0);
                (major, minor) >= SERVES_STANDBYS_FROM
            }
        }
    }

    /// How `/api/stats` and `shiori init` name it.
    pub(crate) fn describe(&self) -> String {
        match self {
            KeywordIndex::Sql => "SQL term rows (MaxScore); install pg_textsearch for an index \
                                  that skips"
                .to_string(),
            KeywordIndex::TextSearch { version } if self.serves_standbys() => {
                format!("pg_textsearch {version} (block-max WAND), re-scored per reader")
            }
            KeywordIndex::TextSearch { version } => format!(
                "pg_textsearch {version} (block-max WAND), re-scored per reader; on the primary \
                 only: this version does not WAL-log its index (1.2 does)"
            ),
        }
    }
}

/// Creates pg_textsearch in the database when the server has it and preloads it; otherwise
/// `Err` says what the operator must do for it (the store then keeps BM25 in SQL).
pub(crate) fn create_extension(
    client: &mut impl GenericClient,
) -> Result<Result<(), String>, PostgresError> {
    let available = client
        .query_opt(
            "SELECT 1 FROM pg_available_extensions WHERE name = $1",
            &[&EXTENSION],
        )?
        .is_some();
    if !available {
        return Ok(Err(format!(
            "the server has no {EXTENSION} extension: install Timescale's pg_textsearch \
             (PostgreSQL 17 or 18), add it to shared_preload_libraries and run shiori init again"
        )));
    }
    let preload: String = client
        .query_one("SELECT current_setting('shared_preload_libraries')", &[])?
        .get(0);
    if !preload
        .split(',')
        .any(|library| library.trim() == EXTENSION)
    {
        return Ok(Err(format!(
            "{EXTENSION} is installed but not loaded: add it to shared_preload_libraries in \
             postgresql.conf, restart the server and run shiori init again"
        )));
    }
    Ok(client
        .batch_execute(&format!("CREATE EXTENSION IF NOT EXISTS {EXTENSION}"))
        .map_err(|e| format!("CREATE EXTENSION {EXTENSION} failed: {e}")))
}

/// Whether the BM25 index exists.
pub(crate) fn has_index(client: &mut impl GenericClient) -> Result<bool, PostgresError> {
    Ok(client
        .query_one("SELECT to_regclass($1) IS NOT NULL", &[&INDEX])?
        .get(0))
}

/// Builds the BM25 index over every chunk's `bm25_text` (once, after a bulk load, like the
/// HNSW graph); nothing when it exists.
pub(crate) fn ensure_index(client: &mut impl GenericClient) -> Result<(), PostgresError> {
    client.batch_execute(&format!(
        "CREATE INDEX IF NOT EXISTS {INDEX} ON chunks USING bm25 (bm25_text)
         WITH (text_config = 'simple')"
    ))?;
    Ok(())
}

pub(crate) fn drop_index(client: &mut impl GenericClient) -> Result<(), PostgresError> {
    client.batch_execute(&format!("DROP INDEX IF EXISTS {INDEX}"))?;
    Ok(())
}

/// A chunk as the re-score needs it: its terms and its field lengths.
struct Candidate {
    key: i64,
    text: String,
    lengths: Vec<i32>,
}

impl Candidate {
    /// From a row of `key, bm25_text, term_lengths`.
    fn of(row: &Row) -> Candidate {
        Candidate {
            key: row.get(0),
            text: row.get(1),
            lengths: row.get(2),
        }
    }
}

/// The `k` best chunks `filters` accept for the query's `terms`, scored with `reader`'s
/// statistics: candidates from the index, re-scored exactly.
pub(crate) fn keyword_search(
    client: &mut impl GenericClient,
    terms: &[(i16, String, f32)],
    k: usize,
    filters: &Filters,
    reader: Option<&ReaderStatistics>,
) -> Result<Vec<(u64, f32)>, PostgresError> {
    if k == 0 || terms.is_empty() {
        return Ok(Vec::new());
    }
    let every_word = words_of(terms.iter());
    let mut query = candidate_query(terms);
    let wanted = (k * CANDIDATES_PER_RESULT).max(MIN_CANDIDATES);
    let mut limit = wanted;
    loop {
        let (mut found, complete) = top_candidates(client, &query, limit, filters)?;
        if complete && query != every_word {
            // The selective words match fewer chunks than asked for: chunks that only the
            // Latin bigrams match may belong in the top k too.
            query.clone_from(&every_word);
            continue;
        }
        if complete || found.len() >= k {
            return rescored(client, terms, k, reader, &found);
        }
        if limit == wanted {
            limit *= WIDER;
            continue;
        }
        // The filter keeps few of the chunks the query matches: score those chunks alone.
        found.extend(filtered_candidates(client, &every_word, wanted, filters)?);
        return rescored(client, terms, k, reader, &found);
    }
}

/// The BM25 score [`keyword_search`] gives each of `keys` that a term matches.
pub(crate) fn keyword_scores(
    client: &mut impl GenericClient,
    terms: &[(i16, String, f32)],
    keys: &[u64],
    reader: Option<&ReaderStatistics>,
) -> Result<Vec<(u64, f32)>, PostgresError> {
    if keys.is_empty() || terms.is_empty() {
        return Ok(Vec::new());
    }
    let keys: Vec<i64> = keys.iter().map(|key| *key as i64).collect();
    let candidates = client
        .query(
            "SELECT key, bm25_text, term_lengths FROM chunks WHERE key = ANY($1)",
            &[&keys],
        )?
        .iter()
        .map(Candidate::of)
        .collect::<Vec<_>>();
    rescored(client, terms, keys.len(), reader, &candidates)
}

/// The words the index is asked for: the character bigrams of Latin words, in most chunks
/// (the embedded index leaves them out of retrieval too), only add to a candidate's score,
/// unless they are all the query has.
fn candidate_query(terms: &[(i16, String, f32)]) -> String {
    let selective = words_of(
        terms
            .iter()
            .filter(|(field, term, _)| !(*field == 1 && term.is_ascii())),
    );
    if selective.is_empty() {
        words_of(terms.iter())
    } else {
        selective
    }
}

/// `terms` as the words of a query text.
fn words_of<'a>(terms: impl Iterator<Item = &'a (i16, String, f32)>) -> String {
    terms
        .map(|(field, term, _)| token_text::encode(*field, term))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The index's best `limit` chunks for `query`, of which those `filters` accept, and whether
/// they are every chunk that matches (the index had fewer than `limit`).
fn top_candidates(
    client: &mut impl GenericClient,
    query: &str,
    limit: usize,
    filters: &Filters,
) -> Result<(Vec<Candidate>, bool), PostgresError> {
    let mut params: Vec<Param> = vec![Box::new(query.to_string()), Box::new(limit as i64)];
    let condition = filters::condition(filters, &mut params);
    let sql = format!(
        "SELECT c.key, c.bm25_text, c.term_lengths, {condition}
         FROM (SELECT key, bm25_text, term_lengths, doc_id, source, modified, metadata
               FROM chunks
               ORDER BY bm25_text <@> to_bm25query($1, '{INDEX}') LIMIT $2) c"
    );
    let mut transaction = client.transaction()?;
    // The index, never a scan that scores every chunk.
    transaction.batch_execute("SET LOCAL enable_seqscan = off")?;
    let rows = transaction.query(&sql, &filters::refs(&params))?;
    transaction.commit()?;
    let complete = rows.len() < limit;
    let accepted = rows
        .iter()
        .filter(|row| row.get::<_, bool>(3))
        .map(Candidate::of)
        .collect();
    Ok((accepted, complete))
}

/// The best `limit` chunks for `query` among those `filters` accept, each scored by the
/// extension on its own: for filters that keep too few chunks for the index's top list.
fn filtered_candidates(
    client: &mut impl GenericClient,
    query: &str,
    limit: usize,
    filters: &Filters,
) -> Result<Vec<Candidate>, PostgresError> {
    let mut params: Vec<Param> = vec![Box::new(query.to_string()), Box::new(limit as i64)];
    let condition = filters::condition(filters, &mut params);
    let score = format!("f.bm25_text <@> to_bm25query($1, '{INDEX}')");
    let sql = format!(
        "WITH f AS MATERIALIZED (
             SELECT c.key, c.bm25_text, c.term_lengths FROM chunks c WHERE {condition}
         )
         SELECT f.key, f.bm25_text, f.term_lengths FROM f
         WHERE {score} < 0 ORDER BY {score} LIMIT $2"
    );
    Ok(client
        .query(&sql, &filters::refs(&params))?
        .iter()
        .map(Candidate::of)
        .collect())
}

/// The `k` best of `candidates` by BM25 over `terms` with `reader`'s statistics (the store's
/// when `None`), the SQL path's formula.
fn rescored(
    client: &mut impl GenericClient,
    terms: &[(i16, String, f32)],
    k: usize,
    reader: Option<&ReaderStatistics>,
    candidates: &[Candidate],
) -> Result<Vec<(u64, f32)>, PostgresError> {
    if candidates.is_empty() {
        return Ok(Vec::new());
    }
    let weights = bm25::weights(client, terms, reader)?;
    let by_word: HashMap<String, &Weighted> = weights
        .iter()
        .map(|weight| (token_text::encode(weight.field, &weight.term), weight))
        .collect();
    let mut seen = std::collections::HashSet::new();
    let mut scored: Vec<(u64, f32)> = candidates
        .iter()
        .filter(|candidate| seen.insert(candidate.key))
        .filter_map(|candidate| {
            let score = score(candidate, &by_word);
            (score > 0.0).then_some((candidate.key as u64, score as f32))
        })
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored.truncate(k);
    Ok(scored)
}

/// A candidate's BM25 score: its frequency of each weighted word, through the term score.
fn score(candidate: &Candidate, by_word: &HashMap<String, &Weighted>) -> f64 {
    let mut frequencies: HashMap<&str, u32> = HashMap::new();
    for word in token_text::words(&candidate.text) {
        if by_word.contains_key(word) {
            *frequencies.entry(word).or_default() += 1;
        }
    }
    frequencies
        .iter()
        .filter_map(|(word, tf)| {
            let weight = by_word.get(*word)?;
            let length = candidate.lengths.get(weight.field as usize).copied()?;
            Some(bm25::term_score_of(
                weight,
                f64::from(*tf),
                f64::from(length),
            ))
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_version_that_wal_logs_its_index_serves_standbys() {
        let version = |v: &str| KeywordIndex::TextSearch {
            version: v.to_string(),
        };
        assert!(!version("1.0.0").serves_standbys());
        assert!(!version("1.1.3").serves_standbys());
        assert!(version("1.2.0").serves_standbys());
        assert!(version("2.0").serves_standbys());
        assert!(KeywordIndex::Sql.serves_standbys());
    }

    #[test]
    fn latin_bigrams_only_add_to_a_candidates_score() {
        let terms = vec![
            (0, "payrol".to_string(), 1.0),
            (1, "pa".to_string(), 0.5),
            (1, "国際".to_string(), 0.5),
        ];
        assert_eq!(
            candidate_query(&terms),
            format!("epayrol {}", token_text::encode(1, "国際"))
        );
        assert_eq!(candidate_query(&terms[1..2]), "jpa");
    }
}
