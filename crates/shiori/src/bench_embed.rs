//! `shiori bench embed`: passages/s of the local embedders in every dense-layer precision this
//! CPU runs, side by side in one run, with how closely each precision's vectors agree with f32.

use crate::bench::{percentile, read_jsonl};
use crate::bench_scale::load_average;
use crate::cli::Cli;
use crate::output;
use anyhow::Result;
use shiori_core::Embedder;
use shiori_engine::{load_embedder, EmbedderConfig, EmbedderKind, RetryConfig};
use shiori_models::{assets::ShioriHome, Precision};
use std::path::Path;
use std::time::Instant;

/// What one run measures: the corpus's passages, the embedders and precisions, how often.
pub struct EmbedBench<'a> {
    pub corpus: &'a Path,
    pub limit: Option<usize>,
    pub embedders: &'a [EmbedderKind],
    /// Empty: every precision that runs differently on this CPU.
    pub precisions: &'a [Precision],
    pub runs: usize,
}

/// One embedder in one precision.
struct Measured {
    embedder: Box<dyn Embedder>,
    precision: Precision,
    seconds: Vec<f64>,
    vectors: Vec<Vec<f32>>,
}

/// Embeds the `text` of every record (up to `limit`) with each embedder in each precision; the
/// precisions take turns within each of the `runs`, so a change in the machine's load falls
/// on all of them alike. Reports the median passages/s, the ratio to f32, the cosine agreement
/// with f32's vectors and query-embedding latency.
pub fn embed(cli: &Cli, home: &ShioriHome, bench: &EmbedBench) -> Result<()> {
    let records = read_jsonl(bench.corpus)?;
    let texts: Vec<&str> = records
        .iter()
        .filter_map(|r| r.get("text").and_then(|t| t.as_str()))
        .take(bench.limit.unwrap_or(usize::MAX))
        .collect();
    anyhow::ensure!(
        !texts.is_empty(),
        "{}: no `text` records",
        bench.corpus.display()
    );
    let precisions = chosen_precisions(bench.precisions);
    let load_at_start = load_average();
    let mut results = Vec::new();
    for &kind in bench.embedders {
        let mut measured = precisions
            .iter()
            .map(|&precision| {
                let config = EmbedderConfig {
                    kind,
                    precision: Some(precision),
                    ..EmbedderConfig::default()
                };
                let embedder = load_embedder(&config, &RetryConfig::default(), home)?;
                embedder.embed_passages(&texts[..texts.len().min(32)])?;
                Ok(Measured {
                    embedder,
                    precision,
                    seconds: Vec::new(),
                    vectors: Vec::new(),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        for _ in 0..bench.runs.max(1) {
            for one in &mut measured {
                let started = Instant::now();
                one.vectors = one.embedder.embed_passages(&texts)?;
                one.seconds.push(started.elapsed().as_secs_f64());
            }
        }
        results.extend(report(&measured, &texts)?);
    }
    let summary = serde_json::json!({
        "cpu_features": cpu_features(),
        "load_average_at_start": load_at_start,
        "load_average_at_end": load_average(),
        "results": results,
    });
    output::print(cli.json, &summary, || render(&summary))
}

/// The precisions asked for, or else each precision that runs differently here (bf16 only
/// where the CPU has it), f32 first as the yardstick.
pub(crate) fn chosen_precisions(asked: &[Precision]) -> Vec<Precision> {
    if !asked.is_empty() {
        return asked.to_vec();
    }
    [Precision::F32, Precision::Bf16, Precision::Int8]
        .into_iter()
        .filter(|precision| precision.on_this_cpu() == *precision)
        .collect()
}

fn report(measured: &[Measured], texts: &[&str]) -> Result<Vec<serde_json::Value>> {
    let passages = texts.len();
    // Tokens, not passages, are what the encoder's cost follows; every precision of one
    // embedder reads the same tokens.
    let tokens: Option<usize> = measured
        .first()
        .and_then(|m| texts.iter().map(|t| m.embedder.count_tokens(t)).sum());
    let baseline = measured.iter().find(|m| m.precision == Precision::F32);
    let median_rate = |m: &Measured| {
        let mut rates: Vec<f64> = m.seconds.iter().map(|s| passages as f64 / s).collect();
        rates.sort_by(f64::total_cmp);
        percentile(&rates, 0.5)
    };
    measured
        .iter()
        .map(|m| {
            let rate = median_rate(m);
            let mut result = serde_json::json!({
                "embedder": m.embedder.model_id(),
                "precision": m.precision.on_this_cpu(),
                "kernel": m.precision.kernel_name(),
                "passages": passages,
                "runs": m.seconds.len(),
                "passages_per_second": rate,
            });
            if let Some(tokens) = tokens {
                result["tokens"] = tokens.into();
                result["tokens_per_second"] = (rate * tokens as f64 / passages as f64).into();
            }
            if let Some(baseline) = baseline {
                result["ratio_to_f32"] = (rate / median_rate(baseline)).into();
                let (mean, min) = cosine_agreement(&m.vectors, &baseline.vectors);
                result["cosine_to_f32_mean"] = mean.into();
                result["cosine_to_f32_min"] = min.into();
            }
            let (p50, p95) = query_latency(m.embedder.as_ref())?;
            result["query_embed_p50_ms"] = p50.into();
            result["query_embed_p95_ms"] = p95.into();
            Ok(result)
        })
        .collect()
}

/// Mean and least cosine between each pair of vectors (both sets are L2-normalised).
fn cosine_agreement(vectors: &[Vec<f32>], baseline: &[Vec<f32>]) -> (f64, f64) {
    let cosines: Vec<f64> = vectors
        .iter()
        .zip(baseline)
        .map(|(a, b)| a.iter().zip(b).map(|(x, y)| f64::from(x * y)).sum())
        .collect();
    let mean = cosines.iter().sum::<f64>() / cosines.len().max(1) as f64;
    (mean, cosines.iter().copied().fold(f64::INFINITY, f64::min))
}

/// p50 and p95 milliseconds of embedding 50 short queries one at a time.
fn query_latency(embedder: &dyn Embedder) -> Result<(f64, f64)> {
    const QUERY: &str = "how long does it take to index a million passages on two cores";
    let mut query_ms: Vec<f64> = (0..50)
        .map(|i| {
            let started = Instant::now();
            embedder
                .embed_query(&QUERY[..QUERY.len() - i % 20])
                .map(|_| started.elapsed().as_secs_f64() * 1000.0)
        })
        .collect::<Result<_, _>>()?;
    query_ms.sort_by(f64::total_cmp);
    Ok((percentile(&query_ms, 0.5), percentile(&query_ms, 0.95)))
}

fn render(summary: &serde_json::Value) -> String {
    let mut lines = vec![format!(
        "CPU features: {}; load average {} at start, {} at end",
        summary["cpu_features"].as_str().unwrap_or_default(),
        summary["load_average_at_start"].as_str().unwrap_or("?"),
        summary["load_average_at_end"].as_str().unwrap_or("?"),
    )];
    for r in summary["results"].as_array().into_iter().flatten() {
        let number = |field: &str| r[field].as_f64().unwrap_or_default();
        let against_f32 = match r.get("ratio_to_f32") {
            Some(ratio) => format!(
                ", {:.2}× f32, cosine to f32 mean {:.5} min {:.5}",
                ratio.as_f64().unwrap_or_default(),
                number("cosine_to_f32_mean"),
                number("cosine_to_f32_min"),
            ),
            None => String::new(),
        };
        let tokens = match r.get("tokens_per_second") {
            Some(rate) => format!(
                " ({:.0} tokens/s of {} tokens)",
                rate.as_f64().unwrap_or_default(),
                r["tokens"]
            ),
            None => String::new(),
        };
        lines.push(format!(
            "{} {} on {}: {} passages, median of {} runs {:.1} passages/s{tokens}{against_f32}; query embedding p50 {:.2} ms, p95 {:.2} ms",
            r["embedder"].as_str().unwrap_or_default(),
            r["precision"].as_str().unwrap_or_default(),
            r["kernel"].as_str().unwrap_or_default(),
            r["passages"],
            r["runs"],
            number("passages_per_second"),
            number("query_embed_p50_ms"),
            number("query_embed_p95_ms"),
        ));
    }
    lines.join("\n")
}

/// The SIMD features the kernels choose between, as the CPU reports them.
pub(crate) fn cpu_features() -> String {
    #[cfg(target_arch = "x86_64")]
    let features = [
        ("avx2", is_x86_feature_detected!("avx2")),
        ("fma", is_x86_feature_detected!("fma")),
        ("avx512f", is_x86_feature_detected!("avx512f")),
        ("avx512bf16", is_x86_feature_detected!("avx512bf16")),
        ("avx512vnni", is_x86_feature_detected!("avx512vnni")),
        ("avxvnni", is_x86_feature_detected!("avxvnni")),
    ];
    #[cfg(not(target_arch = "x86_64"))]
    let features: [(&str, bool); 0] = [];
    let present: Vec<&str> = features
        .iter()
        .filter(|(_, present)| *present)
        .map(|(name, _)| *name)
        .collect();
    if present.is_empty() {
        "none of the x86 SIMD extensions".to_string()
    } else {
        present.join(", ")
    }
}
