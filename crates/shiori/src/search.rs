//! `shiori search` and `shiori eval`: the command line's flags become the engine's typed
//! question, retrieval overrides and filters; the engine checks them.

use crate::cli::{Cli, EvalArgs, ProjectArgs, SearchArgs};
use crate::{open_engine, output, progress};
use anyhow::{bail, Context, Result};
use shiori_core::{Access, Filters};
use shiori_engine::{AnswerPass, Engine, Question};
use shiori_models::assets::ShioriHome;
use std::num::NonZeroUsize;
use std::path::Path;

/// `shiori search`: ranked chunks for a query.
pub fn search(cli: &Cli, home: &ShioriHome, args: &SearchArgs) -> Result<()> {
    let SearchArgs {
        query,
        retrieval,
        filters,
        scope,
        rerank,
    } = args;
    let engine = open_engine(cli, home)?;
    let config = engine.retrieval(&retrieval.overrides(None, scope.two_stage))?;
    let filters = scoped_filters(&engine, filters, scope)?;
    let query = Question::new(query.as_str())?;
    let retrieved = if *rerank {
        engine.search_reranked(&query, &config, &filters)?
    } else {
        engine.search(&query, &config, &filters)?
    };
    let sources: Vec<shiori_core::Source> = retrieved.hits.iter().map(Into::into).collect();
    output::print(
        cli.json,
        &serde_json::json!({
            "hits": sources,
            "best_dense": retrieved.best_dense(),
            "verdict": retrieved.verdict,
            "timings_ms": {"embed_ms": retrieved.embed_ms, "retrieve_ms": retrieved.retrieve_ms},
        }),
        || output::hits(&retrieved.hits),
    )
}

/// `shiori eval`: retrieval, refusal and (with `--answers`) answer metrics on a dataset.
pub fn eval(cli: &Cli, home: &ShioriHome, args: &EvalArgs) -> Result<()> {
    let EvalArgs {
        dataset,
        retrieval,
        refusal,
        sweep_threshold,
        run_out,
        per_query,
        answers,
        judge,
        pipeline,
        rerank,
        sample,
        reader,
    } = args;
    let mut engine = open_engine(cli, home)?;
    let config = engine.retrieval(&retrieval.overrides(Some(refusal), false))?;
    let access = access_as(&engine, reader.as_deref())?;
    let answering = (*answers || judge.is_some()).then(|| AnswerPass {
        pipeline: *pipeline,
        rerank: *rerank,
        sample: sample.map(NonZeroUsize::get),
        judge: judge.clone(),
    });
    let run_file = run_out.as_deref().map(create_file).transpose()?;
    let per_query_file = per_query.as_deref().map(create_file).transpose()?;
    let run = engine.evaluate(
        dataset,
        &config,
        &access,
        answering.as_ref(),
        &progress::Bar::for_cli(cli.json),
    )?;
    if let Some(file) = run_file {
        let name = format!("shiori-{:?}", config.mode).to_lowercase();
        file.write(|out| shiori_eval::write_trec_run(&run.dataset, &run.outcomes, &name, out))?;
    }
    if let Some(file) = per_query_file {
        let answers = run
            .answers
            .as_ref()
            .map_or(&[][..], |a| a.outcomes.as_slice());
        file.write(|out| shiori_eval::write_per_query(&run.dataset, &run.outcomes, answers, out))?;
    }
    let sweep = sweep_threshold.then(|| engine.sweeps(&run));
    if cli.json {
        output::line(serde_json::to_string_pretty(&output::eval_json(
            &run, &sweep,
        )?)?)?;
    } else {
        output::line(output::eval_text(&run, &config, &sweep))?;
    }
    Ok(())
}

/// An output file, created before the work that fills it so a path that cannot be written
/// fails first.
struct OutputFile<'a> {
    path: &'a Path,
    file: std::fs::File,
}

fn create_file(path: &Path) -> Result<OutputFile<'_>> {
    let file =
        std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    Ok(OutputFile { path, file })
}

impl OutputFile<'_> {
    /// Fills the file with `write`.
    fn write(
        self,
        write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
    ) -> Result<()> {
        let mut out = std::io::BufWriter::new(self.file);
        let written = write(&mut out).and_then(|()| std::io::Write::flush(&mut out));
        written.with_context(|| format!("cannot write {}", self.path.display()))
    }
}

/// `--filter`s plus `--project`s (which must be configured) and what `--as` may read.
pub fn scoped_filters(engine: &Engine, raw: &[String], scope: &ProjectArgs) -> Result<Filters> {
    let mut filters = parse_filters(raw)?;
    for name in &scope.projects {
        engine.config.project(name)?;
    }
    filters.projects = scope.projects.clone();
    filters.access = access_as(engine, scope.reader.as_deref())?;
    Ok(filters)
}

/// What `--as KEYNAME` may read; everything without it.
fn access_as(engine: &Engine, key: Option<&str>) -> Result<Access> {
    Ok(match key {
        Some(name) => engine.config.auth.reader(name)?.access,
        None => Access::Everything,
    })
}

fn parse_filters(raw: &[String]) -> Result<Filters> {
    let mut filters = Filters::default();
    for item in raw {
        let Some((key, value)) = item.split_once('=') else {
            bail!("--filter {item:?} is not KEY=VALUE");
        };
        let timestamp = || {
            value
                .parse::<i64>()
                .with_context(|| format!("--filter {key}: {value:?} is not Unix seconds"))
        };
        match key {
            "doc_id" => filters.doc_ids.push(value.to_string()),
            "source_prefix" => filters.source_prefix = Some(value.to_string()),
            "modified_after" => filters.modified_after = Some(timestamp()?),
            "modified_before" => filters.modified_before = Some(timestamp()?),
            _ => {
                filters.metadata.insert(key.to_string(), value.to_string());
            }
        }
    }
    Ok(filters)
}
