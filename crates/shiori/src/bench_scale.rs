//! `shiori bench scale`: the embedded store at N chunks. The corpus looks like N distinct
//! chunks of a real collection without embedding N passages: each chunk mixes the words of two
//! passages of a BEIR set with words drawn from the set's whole text (so term frequencies stay
//! Zipfian) and from a tail of rare words that grows with N, and carries a vector near the
//! same mix of the two passages' real embeddings. It is indexed from those precomputed vectors,
//! then the set's real queries are timed per stage, and the HNSW's top 10 are checked against
//! an exact search over every generated vector. One chunk in ten belongs to a group, so the
//! queries are also timed for a reader without it, whose BM25 statistics are its own.

use crate::bench::{percentile, proc_status_bytes, read_jsonl};
use crate::cli::Cli;
use crate::output;
use anyhow::{Context, Result};
use shiori_core::{embedding_input, Access, Filters, Retrieval, RetrievalConfig, RetrievalMode};
use shiori_engine::{database_bytes, init_store, Config, Engine, Question, StoreKind};
use shiori_ingest::{content_hash, normalize};
use shiori_models::{assets::ShioriHome, embed_with_cache, EmbeddingCache};
use std::collections::HashSet;
use std::io::Write;
use std::path::Path;
use std::time::Instant;

/// Shares of a chunk's words: its main passage, the passage mixed in, the set's whole text;
/// the rest come from the rare-word tail.
const MAIN_WORDS: f64 = 0.6;
const MIXED_WORDS: f64 = 0.2;
const CORPUS_WORDS: f64 = 0.15;
/// Weight of the main passage's embedding in a chunk's vector, and the spread of the noise
/// around the mix per unit of vector length (so every vector is distinct).
const MAIN_VECTOR: f32 = 0.8;
const NOISE: f32 = 0.35;
const MODES: [RetrievalMode; 3] = [
    RetrievalMode::Dense,
    RetrievalMode::Bm25,
    RetrievalMode::Hybrid,
];

/// Every `RESTRICTED_EVERY`th generated chunk belongs to the group [`RESTRICTED_GROUP`] only.
const RESTRICTED_EVERY: usize = 10;
const RESTRICTED_GROUP: &str = "restricted";

/// A passage of the BEIR set: its words, title and real embedding.
struct Base {
    title: String,
    words: Vec<String>,
    vector: Vec<f32>,
}

/// Queries timed: each is checked against every generated vector while the corpus is written,
/// so a set of thousands (JSQuAD's) would make writing a million chunks take hours.
const QUERIES: usize = 100;

/// Where a kept store records each query's exact top 10, for runs that reuse it.
const EXACT_FILE: &str = "bench-scale-exact.json";

/// One `bench scale` run: the set, the size and seed of the corpus made from it, where to
/// keep the store, and the database to build it in instead of the embedded store.
pub struct ScaleRun<'a> {
    pub dataset: &'a Path,
    pub chunks: usize,
    pub seed: u64,
    pub keep: Option<&'a Path>,
    pub postgres: Option<&'a str>,
}

pub fn scale(cli: &Cli, home: &ShioriHome, run: ScaleRun) -> Result<()> {
    let load_before = load_average();
    let work = tempfile::tempdir()?;
    let data_dir = run
        .keep
        .map_or_else(|| work.path().join("data"), Path::to_path_buf);
    let queries = query_texts(run.dataset)?;
    let (built, exact) = match data_dir.exists() {
        true => (None, read_exact(&data_dir)?),
        false => {
            let mut config = Config::default();
            if let Some(url) = run.postgres {
                config.store.kind = StoreKind::Postgres;
                config.store.url = Some(url.to_string());
                init_store(&config)?;
            }
            config.save(&data_dir)?;
            let (report, exact) = build(home, &run, &queries, &data_dir, work.path())?;
            (Some(report), exact)
        }
    };
    let opening = Instant::now();
    let engine = Engine::open(&data_dir, home)?;
    let open_seconds = opening.elapsed().as_secs_f64();
    anyhow::ensure!(
        queries.len() == exact.len(),
        "{} holds the exact top 10 of {} queries; {} has {}",
        data_dir.display(),
        exact.len(),
        run.dataset.display(),
        queries.len()
    );
    let everything = Filters::default();
    let modes = MODES
        .iter()
        .map(|&mode| time_mode(&engine, &queries, mode, &everything))
        .collect::<Result<Vec<_>>>()?;
    let reader = Filters {
        access: Access::Groups(["public".to_string()].into()),
        ..Filters::default()
    };
    let opening_reader = Instant::now();
    let first = queries.first().context("the dataset has no queries")?;
    engine.search(
        &Question::new(first.as_str())?,
        &RetrievalConfig::default(),
        &reader,
    )?;
    let reader_first_query_ms = opening_reader.elapsed().as_secs_f64() * 1000.0;
    let reader_modes = MODES
        .iter()
        .map(|&mode| time_mode(&engine, &queries, mode, &reader))
        .collect::<Result<Vec<_>>>()?;
    let recall = hnsw_recall(&engine, &queries, &exact)?;
    let mut result = serde_json::json!({
        "chunks": engine.stats(&shiori_core::Access::Everything)?.chunks,
        "open_seconds": open_seconds,
        "queries": queries.len(),
        "modes": modes,
        "reader_first_query_ms": reader_first_query_ms,
        "reader_modes": reader_modes,
        "hnsw_recall_at_10": recall,
        "peak_rss_mb": proc_status_bytes("VmHWM").map(megabytes),
        "rss_after_queries_mb": proc_status_bytes("VmRSS").map(megabytes),
        "data_dir_mb": megabytes(directory_bytes(&data_dir)?),
        "database_mb": database_bytes(&engine.config)?.map(megabytes),
        "load_average_before": load_before,
        "load_average_after": load_average(),
    });
    if let Some(built) = built {
        result["generate_seconds"] = built.generate_seconds.into();
        result["index_seconds"] = built.index_seconds.into();
        result["chunks_per_second"] =
            (built.report.chunks_added as f64 / built.index_seconds).into();
        result["index_stages_ms"] = serde_json::to_value(built.report.stages)?;
        result["chunks_imported"] = built.report.chunks_imported.into();
        result["peak_rss_indexing_mb"] = built.indexing_peak.map(megabytes).into();
    }
    output::print(cli.json, &result, || summary(&result))
}

/// What building the store took.
struct Built {
    generate_seconds: f64,
    index_seconds: f64,
    report: shiori_engine::IndexReport,
    indexing_peak: Option<u64>,
}

/// Generates the corpus in `work`, indexes it into a new store in `data_dir` and records each
/// query's exact top 10 there.
fn build(
    home: &ShioriHome,
    run: &ScaleRun,
    queries: &[String],
    data_dir: &Path,
    work: &Path,
) -> Result<(Built, Vec<Vec<String>>)> {
    let mut engine = Engine::open(data_dir, home)?;
    let bases = embedded_bases(&engine, home, run.dataset)?;
    let query_vectors = queries
        .iter()
        .map(|text| engine.embedder().embed_query(text))
        .collect::<Result<Vec<_>, _>>()?;
    let corpus_path = work.join("corpus.jsonl");
    let generating = Instant::now();
    let exact = write_corpus(&corpus_path, &bases, run.chunks, run.seed, &query_vectors)?;
    let generate_seconds = generating.elapsed().as_secs_f64();
    drop(bases);

    let indexing = Instant::now();
    let report = engine.index_corpus(&corpus_path, &crate::progress::Bar::default())?;
    let index_seconds = indexing.elapsed().as_secs_f64();
    if let Some(failure) = report.failures.first() {
        anyhow::bail!("{}: {}", failure.path, failure.reason);
    }
    let indexing_peak = proc_status_bytes("VmHWM");
    std::fs::remove_file(&corpus_path)?;
    let exact = exact.doc_ids();
    let exact_path = data_dir.join(EXACT_FILE);
    std::fs::write(&exact_path, serde_json::to_vec(&exact)?)
        .with_context(|| exact_path.display().to_string())?;
    let built = Built {
        generate_seconds,
        index_seconds,
        report,
        indexing_peak,
    };
    Ok((built, exact))
}

/// The exact top 10 an earlier run recorded in the store it kept.
fn read_exact(data_dir: &Path) -> Result<Vec<Vec<String>>> {
    let path = data_dir.join(EXACT_FILE);
    let text = std::fs::read_to_string(&path).with_context(|| {
        format!(
            "{} exists but is not a store kept by `bench scale` (no {EXACT_FILE}); give a new \
             directory to keep the store in",
            data_dir.display()
        )
    })?;
    serde_json::from_str(&text).with_context(|| path.display().to_string())
}

fn megabytes(bytes: u64) -> f64 {
    bytes as f64 / 1e6
}

fn summary(result: &serde_json::Value) -> String {
    let number = |value: &serde_json::Value| value.as_f64().unwrap_or_default();
    let indexed = match result.get("index_seconds") {
        Some(seconds) => format!(
            "indexed in {:.0} s ({:.0} chunks/s)",
            number(seconds),
            number(&result["chunks_per_second"])
        ),
        None => "kept by an earlier run".to_string(),
    };
    let mut lines = vec![format!(
        "{} chunks {indexed}; peak RSS {:.0} MB; data directory {:.0} MB{}; \
         HNSW recall@10 {:.3}; load average {} → {}",
        result["chunks"],
        number(&result["peak_rss_mb"]),
        number(&result["data_dir_mb"]),
        match result["database_mb"].as_f64() {
            Some(mb) => format!("; database {mb:.0} MB"),
            None => String::new(),
        },
        number(&result["hnsw_recall_at_10"]),
        result["load_average_before"],
        result["load_average_after"],
    )];
    if let Some(stages) = result.get("index_stages_ms") {
        lines.push(format!("index stages (ms): {stages}"));
    }
    for (readers, modes) in [
        ("", &result["modes"]),
        ("reader without one chunk in ten, ", &result["reader_modes"]),
    ] {
        for mode in modes.as_array().into_iter().flatten() {
            lines.push(format!(
                "{readers}{}: p50 {:.2} ms, p95 {:.2} ms; stages p50 {}",
                mode["mode"].as_str().unwrap_or_default(),
                number(&mode["p50_ms"]),
                number(&mode["p95_ms"]),
                mode["stage_p50_ms"],
            ));
        }
    }
    lines.push(format!(
        "that reader's first query (its statistics computed): {:.1} ms",
        number(&result["reader_first_query_ms"])
    ));
    lines.join("\n")
}

/// The set's passages with their embeddings (through the embedding cache, so a set embedded
/// before costs nothing).
fn embedded_bases(engine: &Engine, home: &ShioriHome, dataset: &Path) -> Result<Vec<Base>> {
    let corpus = read_jsonl(&dataset.join("corpus.jsonl"))?;
    let text_of = |record: &serde_json::Value, field: &str| {
        normalize(
            record
                .get(field)
                .and_then(|v| v.as_str())
                .unwrap_or_default(),
        )
    };
    let passages: Vec<(String, String)> = corpus
        .iter()
        .map(|record| (text_of(record, "title"), text_of(record, "text")))
        .filter(|(_, text)| !text.is_empty())
        .collect();
    anyhow::ensure!(!passages.is_empty(), "{}: no passages", dataset.display());
    let inputs: Vec<String> = passages
        .iter()
        .map(|(title, text)| embedding_input(title, text))
        .collect();
    let hashes: Vec<String> = inputs.iter().map(|i| content_hash(i.as_bytes())).collect();
    let items: Vec<(&str, &str)> = hashes
        .iter()
        .zip(&inputs)
        .map(|(hash, input)| (hash.as_str(), input.as_str()))
        .collect();
    let cache = EmbeddingCache::open(&home.embedding_cache())?;
    let (vectors, _) = embed_with_cache(engine.embedder(), &cache, &items)?;
    Ok(passages
        .into_iter()
        .zip(vectors)
        .map(|((title, text), vector)| Base {
            words: words(&text),
            title,
            vector,
        })
        .collect())
}

/// Words split at spaces; text written without them (Japanese) in pieces of three characters.
fn words(text: &str) -> Vec<String> {
    let spaced: Vec<String> = text.split_whitespace().map(str::to_string).collect();
    if spaced.len() * 20 >= text.chars().count() {
        return spaced;
    }
    let characters: Vec<char> = text.chars().filter(|c| !c.is_whitespace()).collect();
    characters
        .chunks(3)
        .map(|piece| piece.iter().collect())
        .collect()
}

/// The text of the set's first [`QUERIES`] queries.
fn query_texts(dataset: &Path) -> Result<Vec<String>> {
    Ok(read_jsonl(&dataset.join("queries.jsonl"))?
        .iter()
        .filter_map(|q| q.get("text").and_then(|t| t.as_str()))
        .take(QUERIES)
        .map(str::to_string)
        .collect())
}

/// The exact top 10 of each query among the generated vectors, by id, kept while writing.
struct ExactTop {
    best: Vec<Vec<(f32, usize)>>,
}

impl ExactTop {
    /// Each query's exact top 10 as the generated records' ids.
    fn doc_ids(&self) -> Vec<Vec<String>> {
        self.best
            .iter()
            .map(|best| best.iter().map(|(_, index)| record_id(*index)).collect())
            .collect()
    }

    fn offer(&mut self, queries: &[Vec<f32>], index: usize, vector: &[f32]) {
        for (query, best) in queries.iter().zip(&mut self.best) {
            let score: f32 = query.iter().zip(vector).map(|(a, b)| a * b).sum();
            if best.len() < 10 || score > best[best.len() - 1].0 {
                let at = best.partition_point(|(s, _)| *s >= score);
                best.insert(at, (score, index));
                best.truncate(10);
            }
        }
    }
}

/// Writes `chunks` generated records with their vectors; returns each query's exact top 10.
fn write_corpus(
    path: &Path,
    bases: &[Base],
    chunks: usize,
    seed: u64,
    queries: &[Vec<f32>],
) -> Result<ExactTop> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let corpus_words: Vec<&str> = bases
        .iter()
        .flat_map(|b| b.words.iter().map(String::as_str))
        .collect();
    let tail = (chunks / 2).max(1000);
    let dimension = bases[0].vector.len();
    let spread = NOISE / (dimension as f32).sqrt();
    let mut exact = ExactTop {
        best: vec![Vec::new(); queries.len()],
    };
    let mut writer = std::io::BufWriter::with_capacity(
        1 << 20,
        std::fs::File::create(path).with_context(|| path.display().to_string())?,
    );
    let mut vector = vec![0.0f32; dimension];
    for index in 0..chunks {
        let main = &bases[rng.usize(..bases.len())];
        let mixed = &bases[rng.usize(..bases.len())];
        let text = mixed_text(&mut rng, main, mixed, &corpus_words, tail);
        for ((slot, a), b) in vector.iter_mut().zip(&main.vector).zip(&mixed.vector) {
            *slot = MAIN_VECTOR * a + (1.0 - MAIN_VECTOR) * b + spread * gaussian(&mut rng);
        }
        let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
        vector.iter_mut().for_each(|x| *x /= norm);
        exact.offer(queries, index, &vector);
        let numbers: Vec<String> = vector.iter().map(|x| format!("{x:.5}")).collect();
        let mut record =
            serde_json::json!({"_id": record_id(index), "title": main.title, "text": text});
        if index % RESTRICTED_EVERY == 0 {
            record["groups"] = RESTRICTED_GROUP.into();
        }
        let record = record.to_string();
        writeln!(
            writer,
            "{},\"vector\":[{}]}}",
            &record[..record.len() - 1],
            numbers.join(",")
        )?;
    }
    writer.flush()?;
    Ok(exact)
}

fn mixed_text(
    rng: &mut fastrand::Rng,
    main: &Base,
    mixed: &Base,
    corpus_words: &[&str],
    tail: usize,
) -> String {
    let length = main.words.len().max(8);
    let mut text = String::with_capacity(length * 8);
    for _ in 0..length {
        let draw = rng.f64();
        let pick = |words: &[String], rng: &mut fastrand::Rng| {
            words.get(rng.usize(..words.len().max(1))).cloned()
        };
        let word = if draw < MAIN_WORDS {
            pick(&main.words, rng)
        } else if draw < MAIN_WORDS + MIXED_WORDS {
            pick(&mixed.words, rng)
        } else if draw < MAIN_WORDS + MIXED_WORDS + CORPUS_WORDS {
            Some(corpus_words[rng.usize(..corpus_words.len())].to_string())
        } else {
            Some(rare_word(rng, tail))
        };
        if let Some(word) = word {
            if !text.is_empty() {
                text.push(' ');
            }
            text.push_str(&word);
        }
    }
    text
}

/// A word of the rare tail: rank r drawn log-uniformly (Zipf's law with exponent 1), spelt
/// in letters so every analyzer keeps it as one term.
fn rare_word(rng: &mut fastrand::Rng, tail: usize) -> String {
    let rank = ((tail as f64).ln() * rng.f64()).exp() as usize;
    let mut word = String::from("q");
    let mut rest = rank;
    loop {
        word.push((b'a' + (rest % 26) as u8) as char);
        rest /= 26;
        if rest == 0 {
            return word;
        }
    }
}

/// A standard normal draw (Box–Muller).
fn gaussian(rng: &mut fastrand::Rng) -> f32 {
    let u = rng.f64().max(f64::MIN_POSITIVE);
    let v = rng.f64();
    ((-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()) as f32
}

fn time_mode(
    engine: &Engine,
    queries: &[String],
    mode: RetrievalMode,
    filters: &Filters,
) -> Result<serde_json::Value> {
    let config = RetrievalConfig {
        mode,
        top_k: 10,
        ..RetrievalConfig::default()
    };
    let queries = queries
        .iter()
        .map(|query| Question::new(query.as_str()))
        .collect::<Result<Vec<_>, _>>()?;
    for query in queries.iter().take(5) {
        engine.search(query, &config, filters)?;
    }
    let mut totals = Vec::with_capacity(queries.len());
    let mut stages: [Vec<f64>; 5] = Default::default();
    for query in &queries {
        let started = Instant::now();
        let retrieval = engine.search(query, &config, filters)?;
        totals.push(started.elapsed().as_secs_f64() * 1000.0);
        for (samples, value) in stages.iter_mut().zip(stage_values(&retrieval)) {
            samples.push(value);
        }
    }
    totals.sort_by(f64::total_cmp);
    let names = ["embed", "dense", "bm25", "fuse", "fetch"];
    let stage_p50: serde_json::Map<String, serde_json::Value> = names
        .iter()
        .zip(stages.iter_mut())
        .map(|(name, samples)| {
            samples.sort_by(f64::total_cmp);
            (name.to_string(), percentile(samples, 0.5).into())
        })
        .collect();
    Ok(serde_json::json!({
        "mode": mode,
        "p50_ms": percentile(&totals, 0.5),
        "p95_ms": percentile(&totals, 0.95),
        "stage_p50_ms": stage_p50,
    }))
}

fn stage_values(retrieval: &Retrieval) -> [f64; 5] {
    let stages = &retrieval.stages;
    [
        retrieval.embed_ms,
        stages.dense_ms,
        stages.bm25_ms,
        stages.fuse_ms,
        stages.fetch_ms,
    ]
}

/// The id of the `index`th generated record.
fn record_id(index: usize) -> String {
    format!("s{index}")
}

/// Mean share of each query's exact top 10 that the dense search returns.
fn hnsw_recall(engine: &Engine, queries: &[String], exact: &[Vec<String>]) -> Result<f64> {
    let config = RetrievalConfig {
        mode: RetrievalMode::Dense,
        top_k: 10,
        ..RetrievalConfig::default()
    };
    let mut total = 0.0;
    for (query, best) in queries.iter().zip(exact) {
        let found: HashSet<String> = engine
            .search(
                &Question::new(query.as_str())?,
                &config,
                &Filters::default(),
            )?
            .hits
            .into_iter()
            .map(|hit| hit.chunk.doc_id)
            .collect();
        let hits = best.iter().filter(|id| found.contains(*id)).count();
        total += hits as f64 / best.len().max(1) as f64;
    }
    Ok(total / queries.len().max(1) as f64)
}

fn directory_bytes(dir: &Path) -> Result<u64> {
    let mut total = 0;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let metadata = entry.metadata()?;
        total += if metadata.is_dir() {
            directory_bytes(&entry.path())?
        } else {
            metadata.len()
        };
    }
    Ok(total)
}

/// The 1, 5 and 15-minute load averages, where the system tells them (Linux).
pub(crate) fn load_average() -> Option<String> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    Some(
        text.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" "),
    )
}
