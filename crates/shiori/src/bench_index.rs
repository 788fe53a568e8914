//! `shiori bench ingest --index`: a first `shiori index` of files and folders, end to end, in a
//! fresh data directory with an empty embedding cache, once per dense-layer precision (taking
//! turns within each run), with the time per stage and the chunks/s the index command reports.

use anyhow::{bail, Result};
use serde::Serialize;
use shiori_engine::{Config, Engine, IndexReport, IndexStages};
use shiori_models::{assets::ShioriHome, Precision};
use std::path::PathBuf;
use std::time::Instant;

use crate::bench::percentile;
use crate::bench_embed::{chosen_precisions, cpu_features};
use crate::bench_scale::load_average;
use crate::cli::Cli;
use crate::output;
use crate::progress::Bar;

/// The median run of one precision.
#[derive(Serialize)]
struct FirstIndex {
    precision: Precision,
    kernel: String,
    runs: usize,
    files: usize,
    chunks: usize,
    /// Opening the engine (loading the embedder) and indexing, median over the runs.
    median_s: f64,
    chunks_per_second: f64,
    /// The median run's stages.
    stages: IndexStages,
    /// How much faster than the first precision measured.
    speedup: f64,
    /// The median run's stages as `shiori index` reports them.
    #[serde(skip)]
    stage_line: String,
}

pub fn first_index(
    cli: &Cli,
    home: &ShioriHome,
    paths: &[PathBuf],
    precisions: &[Precision],
    runs: usize,
) -> Result<()> {
    if paths.is_empty() {
        bail!("name the files or folders to index");
    }
    let precisions = chosen_precisions(precisions);
    let load_at_start = load_average();
    let mut reports: Vec<Vec<(f64, IndexReport)>> = vec![Vec::new(); precisions.len()];
    for _ in 0..runs.max(1) {
        for (precision, runs) in precisions.iter().zip(&mut reports) {
            runs.push(index_once(cli, home, paths, *precision)?);
        }
    }
    let baseline = median_seconds(&reports[0]);
    let results: Vec<FirstIndex> = precisions
        .iter()
        .zip(&reports)
        .filter_map(|(&precision, runs)| summarise(precision, runs, baseline))
        .collect();
    let summary = serde_json::json!({
        "cpu_features": cpu_features(),
        "load_average_at_start": load_at_start,
        "load_average_at_end": load_average(),
        "results": results,
    });
    output::print(cli.json, &summary, || render(&results))
}

/// Seconds to open an engine on an empty data directory and cache and index `paths`.
fn index_once(
    cli: &Cli,
    home: &ShioriHome,
    paths: &[PathBuf],
    precision: Precision,
) -> Result<(f64, IndexReport)> {
    let work = tempfile::tempdir()?;
    let data_dir = work.path().join("data");
    let mut config = Config::default();
    config.embedder.precision = Some(precision);
    config.save(&data_dir)?;
    let started = Instant::now();
    let mut engine =
        Engine::open_with_cache(&data_dir, home, &work.path().join("cache.sqlite"), false)?;
    let report = engine.index(paths, &Bar::for_cli(cli.json))?;
    Ok((started.elapsed().as_secs_f64(), report))
}

fn median_seconds(runs: &[(f64, IndexReport)]) -> f64 {
    let mut seconds: Vec<f64> = runs.iter().map(|(s, _)| *s).collect();
    seconds.sort_by(f64::total_cmp);
    percentile(&seconds, 0.5)
}

fn summarise(
    precision: Precision,
    runs: &[(f64, IndexReport)],
    baseline: f64,
) -> Option<FirstIndex> {
    let median = median_seconds(runs);
    let (_, report) = runs
        .iter()
        .min_by(|a, b| (a.0 - median).abs().total_cmp(&(b.0 - median).abs()))?;
    Some(FirstIndex {
        precision,
        kernel: precision.kernel_name(),
        runs: runs.len(),
        files: report.files_indexed,
        chunks: report.chunks_added,
        median_s: median,
        chunks_per_second: report.chunks_added as f64 / median.max(f64::EPSILON),
        stages: report.stages,
        speedup: baseline / median.max(f64::EPSILON),
        stage_line: output::stage_times(report),
    })
}

fn render(results: &[FirstIndex]) -> String {
    results
        .iter()
        .map(|r| {
            format!(
                "{} ({}): {} files, {} chunks in median {:.1} s over {} runs = {:.1} chunks/s, \
                 {:.2}× the first; {}",
                r.precision.name(),
                r.kernel,
                r.files,
                r.chunks,
                r.median_s,
                r.runs,
                r.chunks_per_second,
                r.speedup,
                r.stage_line
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}
