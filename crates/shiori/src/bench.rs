//! `shiori bench`: query latency measured on real corpora, and the choice of benchmark.

use crate::cli::{BenchAction, Cli};
use crate::output;
use anyhow::Result;
use shiori_core::{Access, Filters, RetrievalConfig, RetrievalMode};
use shiori_engine::{init_store, Config, Engine, Question, StoreKind};
use shiori_models::assets::ShioriHome;
use std::io::Write;
use std::path::Path;
use std::time::Instant;

pub(crate) fn read_jsonl(path: &Path) -> Result<Vec<serde_json::Value>> {
    Ok(shiori_eval::json_lines(path)?
        .into_iter()
        .map(|(_, value)| value)
        .collect())
}

pub(crate) fn percentile(sorted: &[f64], fraction: f64) -> f64 {
    sorted
        .get(((sorted.len().saturating_sub(1)) as f64 * fraction).round() as usize)
        .copied()
        .unwrap_or(0.0)
}

/// A byte figure of this process from Linux's `/proc/self/status` (`VmHWM`: the most resident
/// memory it has held; `VmRSS`: what it holds now), if the system says.
pub(crate) fn proc_status_bytes(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| {
        line.strip_prefix(field)
            .is_some_and(|rest| rest.starts_with(':'))
    })?;
    let kilobytes: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kilobytes * 1024)
}

/// Repeats a BEIR corpus (with fresh ids) until it has `chunks` records, indexes it into a
/// temporary data directory (repeats hit the embedding cache), and times every query; then the
/// same with a PostgreSQL store in the database `postgres` (which must be empty), when given.
/// With `restrict`, records are spread over that many groups and the queries are timed again as
/// a reader of one group.
pub fn query(
    cli: &Cli,
    home: &ShioriHome,
    dataset: &Path,
    chunks: usize,
    mode: RetrievalMode,
    postgres: Option<&str>,
    restrict: Option<u64>,
) -> Result<()> {
    let corpus = read_jsonl(&dataset.join("corpus.jsonl"))?;
    let queries = read_jsonl(&dataset.join("queries.jsonl"))?;
    anyhow::ensure!(!corpus.is_empty(), "{}: empty corpus", dataset.display());
    let work = tempfile::tempdir()?;
    let corpus_path = work.path().join("corpus.jsonl");
    let mut writer = std::io::BufWriter::new(std::fs::File::create(&corpus_path)?);
    for index in 0..chunks {
        let mut record = corpus[index % corpus.len()].clone();
        let id = record
            .get("_id")
            .and_then(|v| v.as_str())
            .unwrap_or("doc")
            .to_string();
        record["_id"] = serde_json::Value::String(format!("{id}~{}", index / corpus.len()));
        if let Some(groups) = restrict {
            record["groups"] = serde_json::Value::String(format!("g{}", index as u64 % groups));
        }
        writeln!(writer, "{record}")?;
    }
    writer.flush()?;
    drop(writer);
    let texts: Vec<&str> = queries
        .iter()
        .filter_map(|q| q.get("text").and_then(|t| t.as_str()))
        .collect();
    let mut stores = vec![("embedded", Config::default())];
    if let Some(url) = postgres {
        let mut config = Config::default();
        config.store.kind = StoreKind::Postgres;
        config.store.url = Some(url.to_string());
        init_store(&config)?;
        stores.push(("postgres", config));
    }
    let mut results = Vec::new();
    for (name, config) in stores {
        let data_dir = work.path().join(format!("data-{name}"));
        config.save(&data_dir)?;
        results.push(measure_store(
            name,
            &data_dir,
            home,
            &corpus_path,
            &texts,
            mode,
            restrict.is_some(),
        )?);
    }
    output::print(cli.json, &results, || {
        results
            .iter()
            .map(|r| {
                let ms = |field: &str| r[field].as_f64().unwrap_or_default();
                let restricted = match restrict {
                    Some(groups) => format!(
                        "; one group of {groups}: p50 {:.2} ms, p95 {:.2} ms",
                        ms("restricted_p50_ms"),
                        ms("restricted_p95_ms")
                    ),
                    None => String::new(),
                };
                format!(
                    "{}: {} chunks ({:?}) indexed at {:.0} chunks/s; {} queries, p50 {:.2} ms, p95 {:.2} ms{restricted}",
                    r["store"].as_str().unwrap_or_default(),
                    r["chunks"],
                    mode,
                    ms("chunks_per_second"),
                    r["queries"],
                    ms("p50_ms"),
                    ms("p95_ms"),
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    })
}

fn measure_store(
    store: &str,
    data_dir: &Path,
    home: &ShioriHome,
    corpus_path: &Path,
    texts: &[&str],
    mode: RetrievalMode,
    restricted: bool,
) -> Result<serde_json::Value> {
    let mut engine = Engine::open(data_dir, home)?;
    let index_started = Instant::now();
    let report = engine.index_corpus(corpus_path, &crate::progress::Bar::default())?;
    if let Some(failure) = report.failures.first() {
        anyhow::bail!("{}: {}", failure.path, failure.reason);
    }
    let index_seconds = index_started.elapsed().as_secs_f64();
    let config = RetrievalConfig {
        mode,
        top_k: 10,
        ..RetrievalConfig::default()
    };
    let texts = texts
        .iter()
        .map(|text| Question::new(*text))
        .collect::<Result<Vec<_>, _>>()?;
    for text in texts.iter().take(5) {
        engine.search(text, &config, &Filters::default())?;
    }
    let latencies = time_queries(&engine, &texts, &config, &Filters::default())?;
    let stats = engine.stats(&Access::Everything)?;
    let mut result = serde_json::json!({
        "store": store,
        "chunks": stats.chunks,
        "mode": mode,
        "queries": latencies.len(),
        "index_seconds": index_seconds,
        "chunks_per_second": report.chunks_added as f64 / index_seconds,
        "chunks_embedded": report.chunks_embedded,
        "p50_ms": percentile(&latencies, 0.5),
        "p95_ms": percentile(&latencies, 0.95),
    });
    if restricted {
        let one_group = Filters {
            access: Access::Groups(["g0".to_string()].into()),
            ..Filters::default()
        };
        let latencies = time_queries(&engine, &texts, &config, &one_group)?;
        result["restricted_chunks"] = engine.stats(&one_group.access)?.chunks.into();
        result["restricted_p50_ms"] = percentile(&latencies, 0.5).into();
        result["restricted_p95_ms"] = percentile(&latencies, 0.95).into();
    }
    Ok(result)
}

/// Each query's search time in milliseconds, sorted.
fn time_queries(
    engine: &Engine,
    texts: &[Question],
    config: &RetrievalConfig,
    filters: &Filters,
) -> Result<Vec<f64>> {
    let mut latencies = Vec::with_capacity(texts.len());
    for text in texts {
        let started = Instant::now();
        let retrieved = engine.search(text, config, filters)?;
        anyhow::ensure!(
            retrieved.hits.len() == config.top_k,
            "{:?}: {} hits instead of {}",
            text.as_str(),
            retrieved.hits.len(),
            config.top_k
        );
        latencies.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    latencies.sort_by(f64::total_cmp);
    Ok(latencies)
}

/// `shiori bench …`: one benchmark.
pub fn run(cli: &Cli, home: &ShioriHome, action: &BenchAction) -> Result<()> {
    match action {
        BenchAction::Embed {
            corpus,
            limit,
            embedders,
            precisions,
            runs,
        } => crate::bench_embed::embed(
            cli,
            home,
            &crate::bench_embed::EmbedBench {
                corpus,
                limit: *limit,
                embedders,
                precisions,
                runs: *runs,
            },
        ),
        BenchAction::Query {
            dataset,
            chunks,
            mode,
            postgres,
            restrict,
        } => query(
            cli,
            home,
            dataset,
            *chunks,
            *mode,
            postgres.as_deref(),
            *restrict,
        ),
        BenchAction::Scale {
            dataset,
            chunks,
            seed,
            keep,
            postgres,
        } => crate::bench_scale::scale(
            cli,
            home,
            crate::bench_scale::ScaleRun {
                dataset,
                chunks: *chunks,
                seed: *seed,
                keep: keep.as_deref(),
                postgres: postgres.as_deref(),
            },
        ),
        BenchAction::Ingest {
            files,
            runs,
            index: true,
            precisions,
            ..
        } => crate::bench_index::first_index(cli, home, files, precisions, runs.unwrap_or(1)),
        BenchAction::Ingest {
            files,
            sample_pdf_pages,
            runs,
            ..
        } => crate::bench_ingest::ingest(cli, files, *sample_pdf_pages, runs.unwrap_or(5)),
        BenchAction::Generate {
            corpus,
            model,
            prompt_tokens,
            max_tokens,
            runs,
            server,
            server_model,
        } => {
            let server = server.clone().zip(server_model.clone());
            let bench = crate::bench_generate::GenerateBench {
                corpus,
                model,
                server: server.map(|(url, model)| crate::bench_generate::Server { url, model }),
                prompt_tokens: *prompt_tokens,
                max_tokens: *max_tokens,
                runs: *runs,
            };
            crate::bench_generate::generate(cli, home, &bench)
        }
    }
}
