//! BM25 in SQL, as tantivy computes it, over the whole store's statistics or over those of the
//! chunks one reader may read.

use crate::filters::{self, Param};
use crate::terms::FIELDS;
use crate::PostgresError;
use postgres::GenericClient;
use shiori_core::Filters;
use std::collections::HashMap;

/// BM25 parameters, as tantivy's.
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// The statistics BM25 scores a reader's searches with when some chunk is hidden from it: the
/// chunks it may read and their total length per field, and the condition that picks them
/// (which also counts each query term's chunks), so hidden chunks do not move its scores.
#[derive(Clone)]
pub(crate) struct ReaderStatistics {
    access: Filters,
    chunks: i64,
    total_length: [i64; FIELDS],
}

impl ReaderStatistics {
    /// The statistics of the reader `access` (filters holding only an access) describes; `None`
    /// when it reads every chunk, so the store's own statistics are its. One pass over the
    /// chunks.
    pub(crate) fn of(
        client: &mut impl GenericClient,
        access: Filters,
    ) -> Result<Option<ReaderStatistics>, PostgresError> {
        let mut params: Vec<Param> = Vec::new();
        let condition = filters::condition(&access, &mut params);
        let lengths: Vec<String> = (1..=FIELDS)
            .map(|slot| format!("COALESCE(SUM(c.term_lengths[{slot}]), 0)::BIGINT"))
            .collect();
        let sql = format!(
            "SELECT (SELECT COUNT(*) FROM chunks)::BIGINT, COUNT(*)::BIGINT, {}
             FROM chunks c WHERE {condition}",
            lengths.join(", ")
        );
        let row = client.query_one(&sql, &filters::refs(&params))?;
        let (all, chunks): (i64, i64) = (row.get(0), row.get(1));
        let total_length = std::array::from_fn(|field| row.get::<_, i64>(field + 2));
        Ok((chunks < all).then_some(ReaderStatistics {
            access,
            chunks,
            total_length,
        }))
    }

    /// The condition on `term_df d` that keeps the chunks this reader may read, pushing its
    /// groups onto `params`.
    fn df_condition(&self, params: &mut Vec<Param>) -> String {
        let groups: Vec<String> = self
            .access
            .access
            .groups()
            .map(|groups| groups.iter().cloned().collect())
            .unwrap_or_default();
        params.push(Box::new(groups));
        format!(
            "AND (d.groups = '' OR string_to_array(d.groups, ',') && ${}::TEXT[])",
            params.len()
        )
    }
}

/// A query term with its BM25 weight (`boost · (k1 + 1) · idf`, also the most one chunk can
/// score from it) and its field's average length.
#[derive(Debug, Clone)]
pub(crate) struct Weighted {
    pub(crate) field: i16,
    pub(crate) term: String,
    weight: f64,
    average_length: f64,
    /// How many chunks (the reader may read) hold it.
    df: i64,
}

/// The query's terms that some chunk holds, weighted with the whole store's statistics or
/// `reader`'s: document frequencies from `term_df`, kept by every write, so a common term
/// costs one row, not a count of its postings.
pub(crate) fn weights(
    client: &mut impl GenericClient,
    terms: &[(i16, String, f32)],
    reader: Option<&ReaderStatistics>,
) -> Result<Vec<Weighted>, PostgresError> {
    let fields: Vec<i16> = terms.iter().map(|t| t.0).collect();
    let words: Vec<String> = terms.iter().map(|t| t.1.clone()).collect();
    let mut params: Vec<Param> = vec![Box::new(fields), Box::new(words)];
    let restriction = reader.map_or_else(String::new, |r| r.df_condition(&mut params));
    // With the field's chunk count and total length, for a reader of everything.
    let sql = format!(
        "SELECT q.field, q.term, COALESCE(SUM(d.df), 0)::BIGINT,
                COALESCE(MAX(s.chunks), 0)::BIGINT, COALESCE(MAX(s.total_length), 0)::BIGINT
         FROM unnest($1::SMALLINT[], $2::TEXT[]) AS q(field, term)
         LEFT JOIN keyword_stats s ON s.field = q.field
         LEFT JOIN term_df d ON d.field = q.field AND d.term = q.term {restriction}
         GROUP BY q.field, q.term"
    );
    let found: HashMap<(i16, String), [i64; 3]> = client
        .query(&sql, &filters::refs(&params))?
        .iter()
        .map(|row| {
            (
                (row.get(0), row.get(1)),
                [row.get(2), row.get(3), row.get(4)],
            )
        })
        .collect();
    Ok(terms
        .iter()
        .filter_map(|(field, term, boost)| {
            let [count, store_chunks, store_length] = *found.get(&(*field, term.clone()))?;
            let (chunks, total_length) = match reader {
                Some(reader) => (reader.chunks, reader.total_length[*field as usize]),
                None => (store_chunks, store_length),
            };
            let (df, n) = (count as f64, chunks as f64);
            (count > 0).then(|| Weighted {
                field: *field,
                term: term.clone(),
                weight: f64::from(*boost) * (K1 + 1.0) * (1.0 + (n - df + 0.5) / (df + 0.5)).ln(),
                average_length: total_length as f64 / n.max(1.0),
                df: count,
            })
        })
        .collect())
}

/// The `k` best chunks for the query's `terms` among those `filters` accept, scored with
/// `reader`'s statistics when given. Exact, by MaxScore in two statements: the postings of the
/// highest-weighted terms, enough to fill `k`, give a score the `k`th best chunk reaches at
/// least; the lowest-weighted terms whose weights add up to no more than that cannot lift a
/// chunk matching only them into the top `k`, so their postings (the common words and
/// character bigrams, most of the postings a query touches) are only looked up for chunks the
/// other terms found.
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
    let mut weights = weights(client, terms, reader)?;
    if weights.is_empty() {
        return Ok(Vec::new());
    }
    weights.sort_by(|a, b| b.weight.total_cmp(&a.weight));
    let seeds = seed_count(&weights, k);
    let some = search_pass(client, &weights, seeds, 0.0, k, filters, Pass::Bound)?;
    // The score came back as a REAL, rounded either way: a threshold a little low only prunes
    // a little less.
    let threshold = match some.get(k - 1) {
        Some((_, score)) => f64::from(*score) * (1.0 - 1e-6),
        // Fewer than `k` chunks hold a seed term, all of them scored: with every term a seed,
        // that is the answer.
        None if seeds == weights.len() => return Ok(some),
        None => 0.0,
    };
    let essential = essential_count(&weights, threshold);
    search_pass(
        client,
        &weights,
        essential,
        threshold,
        k,
        filters,
        Pass::Exact,
    )
}

/// What a [`search_pass`] returns.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pass {
    /// Some `k` chunks with their full scores: the `k` best partial scores, whose full scores
    /// bound the `k`th best from below.
    Bound,
    /// The `k` best chunks.
    Exact,
}

/// How many of the heaviest `weights` have at least `k` postings between them.
fn seed_count(weights: &[Weighted], k: usize) -> usize {
    let mut postings = 0;
    weights
        .iter()
        .position(|weight| {
            postings += weight.df;
            postings >= k as i64
        })
        .map_or(weights.len(), |last| last + 1)
}

/// How many of the heaviest `weights` a chunk must match one of to score above `threshold`:
/// the rest together weigh no more than it.
fn essential_count(weights: &[Weighted], threshold: f64) -> usize {
    let mut light = 0.0;
    let mut essential = weights.len();
    for weight in weights.iter().rev() {
        if light + weight.weight > threshold {
            break;
        }
        light += weight.weight;
        essential -= 1;
    }
    essential
}

/// Among the chunks `filters` accept that hold one of the first `essential` terms of `weights`
/// and could score above `threshold`: the `k` best ([`Pass::Exact`]), or the `k` with the best
/// scores over those terms ([`Pass::Bound`]), with their full scores.
fn search_pass(
    client: &mut impl GenericClient,
    weights: &[Weighted],
    essential: usize,
    threshold: f64,
    k: usize,
    filters: &Filters,
    pass: Pass,
) -> Result<Vec<(u64, f32)>, PostgresError> {
    let (heavy, light) = weights.split_at(essential);
    let mut params = weight_params(heavy);
    params.extend(weight_params(light));
    params.push(Box::new(light.iter().map(|w| w.weight).sum::<f64>()));
    params.push(Box::new(threshold));
    params.push(Box::new(k as i64));
    // A reader's groups keep most chunks: checked on the chunks that pass the bound only. The
    // other filters keep few, and are checked on every posting, before any score is summed.
    let only_access = Filters {
        access: filters.access.clone(),
        ..Filters::default()
    };
    let (posting_filter, candidate_filter) = if filters.is_empty() {
        (String::new(), String::new())
    } else if *filters == only_access {
        let condition = filters::condition(filters, &mut params);
        (
            String::new(),
            format!("AND EXISTS (SELECT 1 FROM chunks c WHERE c.key = p.key AND {condition})"),
        )
    } else {
        let condition = filters::condition(filters, &mut params);
        (
            format!("JOIN chunks c ON c.key = t.key WHERE {condition}"),
            String::new(),
        )
    };
    // `best`: the chunks with the best partial scores, enough to fill `k`, scored in full;
    // their `k`th score raises the bar the other chunks' partial scores must clear.
    let light_score = format!(
        "COALESCE((SELECT SUM({n_score}) FROM n
                   JOIN chunk_terms t ON t.field = n.field AND t.term = n.term AND t.key = p.key
                  ), 0)",
        n_score = term_score("n"),
    );
    let sql = format!(
        "WITH e AS (
             SELECT * FROM unnest($1::SMALLINT[], $2::TEXT[], $3::FLOAT8[], $4::FLOAT8[])
                 AS e(field, term, weight, average_length)
         ),
         n AS (
             SELECT * FROM unnest($5::SMALLINT[], $6::TEXT[], $7::FLOAT8[], $8::FLOAT8[])
                 AS n(field, term, weight, average_length)
         ),
         partial AS MATERIALIZED (
             SELECT t.key, SUM({e_score}) AS score
             FROM e JOIN chunk_terms t ON t.field = e.field AND t.term = e.term
             {posting_filter}
             GROUP BY t.key
         ),
         best AS MATERIALIZED (
             SELECT p.key, p.score + {light_score} AS score
             FROM (SELECT * FROM partial p WHERE p.score + $9 > $10 {candidate_filter}
                   ORDER BY p.score DESC, p.key LIMIT $11) p
         ){comma}
         {rest}",
        e_score = term_score("e"),
        comma = if pass == Pass::Exact { "," } else { "" },
        rest = match pass {
            Pass::Bound => "SELECT key, score::REAL FROM best ORDER BY 2 DESC, 1".to_string(),
            Pass::Exact => format!(
                "bar AS (
                     SELECT GREATEST($10, COALESCE(
                                (SELECT MIN(score) FROM best HAVING COUNT(*) >= $11), $10))
                            AS score
                 )
                 SELECT key, score::REAL FROM best
                 UNION ALL
                 SELECT p.key, (p.score + {light_score})::REAL
                 FROM partial p, bar
                 WHERE p.score + $9 > bar.score AND p.key NOT IN (SELECT key FROM best)
                       {candidate_filter}
                 ORDER BY 2 DESC, 1
                 LIMIT $11"
            ),
        },
    );
    scored_keys(client, &sql, &params)
}

/// The BM25 score [`keyword_search`] gives each of `keys` that a term matches: the same sums,
/// over those chunks' terms only.
pub(crate) fn keyword_scores(
    client: &mut impl GenericClient,
    terms: &[(i16, String, f32)],
    keys: &[u64],
    reader: Option<&ReaderStatistics>,
) -> Result<Vec<(u64, f32)>, PostgresError> {
    if keys.is_empty() || terms.is_empty() {
        return Ok(Vec::new());
    }
    let weights = weights(client, terms, reader)?;
    let mut params = weight_params(&weights);
    params.push(Box::new(
        keys.iter().map(|key| *key as i64).collect::<Vec<i64>>(),
    ));
    let sql = format!(
        "SELECT t.key, SUM({score})::REAL
         FROM unnest($1::SMALLINT[], $2::TEXT[], $3::FLOAT8[], $4::FLOAT8[])
              AS w(field, term, weight, average_length)
         JOIN chunk_terms t ON t.field = w.field AND t.term = w.term AND t.key = ANY($5)
         GROUP BY t.key",
        score = term_score("w"),
    );
    scored_keys(client, &sql, &params)
}

/// `weights` as four parameters: fields, terms, weights, average lengths.
fn weight_params(weights: &[Weighted]) -> Vec<Param> {
    vec![
        Box::new(weights.iter().map(|w| w.field).collect::<Vec<i16>>()),
        Box::new(
            weights
                .iter()
                .map(|w| w.term.clone())
                .collect::<Vec<String>>(),
        ),
        Box::new(weights.iter().map(|w| w.weight).collect::<Vec<f64>>()),
        Box::new(
            weights
                .iter()
                .map(|w| w.average_length)
                .collect::<Vec<f64>>(),
        ),
    ]
}

/// One term's BM25 score in chunk `t`, as tantivy computes it, from the weight row `w`:
/// `weight · tf / (tf + k1 · (1 − b + b · len / avglen))`.
fn term_score(w: &str) -> String {
    format!(
        "{w}.weight * t.tf / (t.tf + {K1} * (1 - {B} + {B} * t.length / GREATEST({w}.average_length, 1e-9)))"
    )
}

/// [`term_score`] of a term with `tf` occurrences in a field of `length` terms, in Rust.
pub(crate) fn term_score_of(weight: &Weighted, tf: f64, length: f64) -> f64 {
    let norm = 1.0 - B + B * length / weight.average_length.max(1e-9);
    weight.weight * tf / (tf + K1 * norm)
}

fn scored_keys(
    client: &mut impl GenericClient,
    sql: &str,
    params: &[Param],
) -> Result<Vec<(u64, f32)>, PostgresError> {
    Ok(client
        .query(sql, &filters::refs(params))?
        .iter()
        .map(|row| (row.get::<_, i64>(0) as u64, row.get::<_, f32>(1)))
        .collect())
}
