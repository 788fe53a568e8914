//! The `shiori` command line: a thin layer over `shiori-engine` that parses arguments, shows
//! progress on a terminal and prints results as text or JSON.

mod bench;
mod bench_generate;
mod bench_ingest;
mod bench_scale;
mod chat;
mod cli;
mod indexing;
mod output;
mod progress;

use anyhow::{bail, Context, Result};
use clap::Parser;
use cli::{
    BenchAction, Cli, Command, FetchSet, ModelsAction, ProjectArgs, RefusalArgs, RetrievalArgs,
};
use shiori_core::{Access, EmbedError, Filters, RetrievalConfig};
use shiori_engine::{
    adopt_installed_chat_model, check_retrieval, drop_adopted_chat_model, init_store,
    migrate_store, refusal_override, AnswerPass, Config, EmbedAs, Engine, EngineError, Keyring,
};
use shiori_models::assets::{self, ShioriHome};
use shiori_models::Precision;
use shiori_server::{Server, ServerOptions};
use std::io::IsTerminal;
use std::num::NonZeroUsize;
use std::path::Path;
use std::time::Duration;

/// candle allocates and frees large activation tensors for every batch; glibc hands those back to
/// the kernel each time and the page faults cost about a sixth of embedding time. mimalloc keeps
/// them (measured +17% passages/s on msmarco-5k).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("SHIORI_LOG")
                .unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(|| output::LogWriter)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    let cli = Cli::parse();
    if let Err(error) = run(&cli) {
        // `shiori search … | head -1`: the reader took what it wanted, as `yes | head` does.
        if output::is_broken_pipe(&error) {
            std::process::exit(0);
        }
        eprintln!("error: {error:#}");
        let code = match error.downcast_ref::<indexing::FilesFailed>() {
            Some(_) => indexing::FilesFailed::EXIT_CODE,
            None => 1,
        };
        std::process::exit(code);
    }
}

fn run(cli: &Cli) -> Result<()> {
    let home = ShioriHome::from_env()?;
    match &cli.command {
        Command::Init { no_chat_model } => {
            let mut config = Config::load(&cli.data_dir)?;
            let (chat_model, dropped) = if *no_chat_model {
                (None, Some(drop_adopted_chat_model(&mut config)))
            } else {
                (adopt_installed_chat_model(&mut config, &home), None)
            };
            config.save(&cli.data_dir)?;
            let store = init_store(&config)?;
            let mut report = serde_json::json!({"data_dir": cli.data_dir, "store": store, "chat_model": chat_model});
            if let Some(dropped) = &dropped {
                report["removed_chat_model"] = serde_json::json!(dropped.removed);
                report["kept_chat_models"] = serde_json::json!(dropped.kept);
            }
            output::print(cli.json, &report, || {
                let answers = match (chat_model, &dropped) {
                    (Some(name), _) => format!("; the local model {name} answers with --pipeline basic (the default quotes the sources)"),
                    (None, Some(dropped)) => output::dropped_chat_models(dropped),
                    (None, None) => String::new(),
                };
                let migrations = match store.schema_version {
                    Some(version) => format!(
                        "; database schema at version {version} ({} migration(s) applied)",
                        store.migrations_applied.len()
                    ),
                    None => String::new(),
                };
                format!(
                    "initialised {}{migrations}{answers}",
                    cli.data_dir.display()
                )
            })
        }
        Command::Migrate { from, to } => {
            let config = Config::load(&cli.data_dir)?;
            let target = config.store.postgres(Some(to))?;
            let report = migrate_store(from, &target, &home, &progress::Bar::default())?;
            output::print(cli.json, &report, || {
                format!(
                    "copied {} file(s), {} chunk(s) with their {} vectors in {:.1} s",
                    report.files,
                    report.chunks_added,
                    report.embedder,
                    report.elapsed_ms / 1000.0
                )
            })
        }
        Command::Index {
            paths,
            projects,
            reembed,
            watch,
            debounce_ms,
        } => {
            let created = !cli.data_dir.exists();
            let mut engine = if *reembed {
                let mut engine = Engine::open_with(&cli.data_dir, &home, true)?;
                let converted = engine.reembed()?;
                eprintln!(
                    "re-embedded {converted} chunk(s) with {}",
                    engine.embedder().model_id()
                );
                engine
            } else {
                open_engine_at(&cli.data_dir, &home)?
            };
            if created {
                eprintln!("created the data directory {}", cli.data_dir.display());
            }
            let request = indexing::IndexRequest {
                paths,
                projects,
                watch: *watch,
                debounce: Duration::from_millis(*debounce_ms),
                json: cli.json,
            };
            indexing::run(&mut engine, &request)
        }
        Command::Search {
            query,
            retrieval,
            filters,
            scope,
            rerank,
        } => {
            let engine = open_engine(cli, &home)?;
            let mut config = retrieval_config(&engine.config.retrieval, retrieval, None)?;
            let filters = scoped_filters(&engine, &mut config, filters, scope)?;
            check_retrieval(&config)?;
            let retrieved = if *rerank {
                engine.search_reranked(query, &config, &filters)?
            } else {
                engine.search(query, &config, &filters)?
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
        Command::Ask {
            question,
            answering,
            conversation,
        } => {
            let engine = open_engine(cli, &home)?;
            let mut session = chat::Session::new(&engine, answering, conversation.clone())?;
            let streamed = !cli.json && std::io::stdout().is_terminal();
            let answer = session.ask(question, streamed)?;
            output::print(cli.json, &answer, || match streamed {
                true => format!("\n{}", output::answer_details(&answer)),
                false => output::answer(&answer),
            })
        }
        Command::Chat {
            answering,
            conversation,
        } => {
            let engine = open_engine(cli, &home)?;
            let session = chat::Session::new(&engine, answering, conversation.clone())?;
            chat::run(session, cli.json)
        }
        Command::Eval {
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
        } => {
            let mut engine = open_engine(cli, &home)?;
            let config = retrieval_config(&engine.config.retrieval, retrieval, Some(refusal))?;
            check_retrieval(&config)?;
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
                &progress::Bar::default(),
            )?;
            if let Some(file) = run_file {
                let name = format!("shiori-{:?}", config.mode).to_lowercase();
                file.write(|out| {
                    shiori_eval::write_trec_run(&run.dataset, &run.outcomes, &name, out)
                })?;
            }
            if let Some(file) = per_query_file {
                let answers = run
                    .answers
                    .as_ref()
                    .map_or(&[][..], |a| a.outcomes.as_slice());
                file.write(|out| {
                    shiori_eval::write_per_query(&run.dataset, &run.outcomes, answers, out)
                })?;
            }
            let sweep = sweep_threshold.then(|| {
                (
                    shiori_eval::sweep_thresholds(
                        &run.dataset,
                        &run.outcomes,
                        &shiori_eval::sweep_grid(),
                    ),
                    engine.sweep_refusals(&run, &shiori_eval::target_grid()),
                )
            });
            if cli.json {
                output::line(serde_json::to_string_pretty(&output::eval_json(
                    &run, &sweep,
                )?)?)?;
            } else {
                output::line(output::eval_text(&run, &config, &sweep))?;
            }
            Ok(())
        }
        Command::Stats => {
            let engine = open_engine(cli, &home)?;
            let stats = engine.stats(&Access::Everything)?;
            output::print(cli.json, &stats, || output::stats(&stats))
        }
        Command::Embed { texts, query } => {
            let engine = open_engine(cli, &home)?;
            let embed_as = if *query {
                EmbedAs::Query
            } else {
                EmbedAs::Passage
            };
            let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
            let vectors = engine.embed(&texts, embed_as)?;
            let value = serde_json::json!({
                "model": engine.embedder().model_id(),
                "vectors": vectors,
            });
            output::print(cli.json, &value, || output::vectors(&vectors))
        }
        Command::Mcp { timeout_secs } => {
            let engine = open_engine(cli, &home)?;
            let options = ServerOptions {
                request_timeout: answer_time_limit(&engine, *timeout_secs),
                ..ServerOptions::default()
            };
            Server::new(engine, options)?.run_mcp_stdio()?;
            Ok(())
        }
        Command::Serve {
            addr,
            cors_origins,
            allowed_hosts,
            insecure_no_auth,
            body_limit_kb,
            upload_limit_mb,
            timeout_secs,
            query_concurrency,
            max_queued_queries,
            index_threads,
        } => {
            let engine = open_engine(cli, &home)?;
            let defaults = ServerOptions::default();
            let options = ServerOptions {
                keys: Keyring::load(&engine.config.auth)?,
                body_limit_bytes: body_limit_kb * 1024,
                upload_limit_bytes: upload_limit_mb * 1024 * 1024,
                request_timeout: answer_time_limit(&engine, *timeout_secs),
                cors_origins: cors_origins.clone(),
                allowed_hosts: allowed_hosts.clone(),
                insecure_no_auth: *insecure_no_auth,
                query_concurrency: query_concurrency.unwrap_or(defaults.query_concurrency),
                max_queued_queries: max_queued_queries.unwrap_or(defaults.max_queued_queries),
                index_threads: index_threads.unwrap_or(defaults.index_threads),
                ..defaults
            };
            let protected = !options.keys.is_empty();
            Server::new(engine, options)?.run(*addr, |bound| {
                let auth = if protected { " (API key required)" } else { "" };
                eprintln!("shiori serving http://{bound}/{auth}");
            })?;
            Ok(())
        }
        Command::Models { action } => match action {
            ModelsAction::Fetch { set } => {
                let mut log = |line: &str| eprintln!("{line}");
                let mut fetched = serde_json::Map::new();
                if matches!(set, FetchSet::Default | FetchSet::All) {
                    let e5 = assets::fetch_e5(&home, &mut log)?;
                    let minilm = assets::fetch_minilm(&home, &mut log)?;
                    let dictionary = assets::fetch_ipadic(&home, &mut log)?;
                    let smollm2 = assets::fetch_smollm2(&home, &mut log)?;
                    fetched.insert("e5".into(), serde_json::json!(e5));
                    fetched.insert("minilm".into(), serde_json::json!(minilm));
                    fetched.insert("ipadic".into(), serde_json::json!(dictionary));
                    fetched.insert("smollm2".into(), serde_json::json!(smollm2));
                }
                if matches!(set, FetchSet::QwenCoder | FetchSet::All) {
                    let qwen = assets::fetch_qwen(&home, &mut log)?;
                    fetched.insert("qwen2.5-coder-0.5b".into(), serde_json::json!(qwen));
                }
                output::print(cli.json, &fetched, || {
                    format!("models ready under {}", home.0.display())
                })
            }
            ModelsAction::List => {
                let assets = assets::list_assets(&home);
                output::print(cli.json, &assets, || output::assets(&assets))
            }
        },
        Command::Bench { action } => match action {
            BenchAction::Embed {
                corpus,
                limit,
                embedders,
                precision,
            } => bench::embed(
                cli,
                &home,
                corpus,
                *limit,
                embedders,
                precision.map(Precision::from),
            ),
            BenchAction::Query {
                dataset,
                chunks,
                mode,
                postgres,
                restrict,
            } => bench::query(
                cli,
                &home,
                dataset,
                *chunks,
                (*mode).into(),
                postgres.as_deref(),
                *restrict,
            ),
            BenchAction::Scale {
                dataset,
                chunks,
                seed,
                keep,
            } => bench_scale::scale(cli, &home, dataset, *chunks, *seed, keep.as_deref()),
            BenchAction::Ingest {
                files,
                sample_pdf_pages,
                runs,
            } => bench_ingest::ingest(cli, files, *sample_pdf_pages, *runs),
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
                let bench = bench_generate::GenerateBench {
                    corpus,
                    model,
                    server: server.map(|(url, model)| bench_generate::Server { url, model }),
                    prompt_tokens: *prompt_tokens,
                    max_tokens: *max_tokens,
                    runs: *runs,
                };
                bench_generate::generate(cli, &home, &bench)
            }
        },
    }
}

/// Opens an existing data directory: a mistyped `--data-dir` is an error, not a new empty index.
fn open_engine(cli: &Cli, home: &ShioriHome) -> Result<Engine> {
    if !cli.data_dir.is_dir() {
        bail!(
            "no data directory at {}: create one with `shiori init` or `shiori index PATH`, \
             or point --data-dir (SHIORI_DATA_DIR) at an existing one",
            cli.data_dir.display()
        );
    }
    open_engine_at(&cli.data_dir, home)
}

/// Opens the data directory at `data_dir`, creating it if needed.
fn open_engine_at(data_dir: &Path, home: &ShioriHome) -> Result<Engine> {
    Engine::open(data_dir, home).map_err(|error| {
        let hint = match error {
            EngineError::Embed(EmbedError::ModelNotFound(_)) => " (run `shiori models fetch`)",
            _ => "",
        };
        anyhow::anyhow!(
            "cannot open the data directory {}: {error}{hint}",
            data_dir.display()
        )
    })
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

fn retrieval_config(
    base: &RetrievalConfig,
    args: &RetrievalArgs,
    refusal: Option<&RefusalArgs>,
) -> Result<RetrievalConfig> {
    let refusal = match refusal {
        Some(args) => refusal_override(args.refusal, args.threshold)?,
        None => None,
    };
    Ok(RetrievalConfig {
        mode: args.mode.map_or(base.mode, Into::into),
        top_k: args.top_k.unwrap_or(base.top_k),
        fusion: args.fusion.map_or(base.fusion, Into::into),
        rrf_k: args.rrf_k.unwrap_or(base.rrf_k),
        alpha: args.alpha.unwrap_or(base.alpha),
        bm25_weight: args.bm25_weight.unwrap_or(base.bm25_weight),
        normalised_bm25_weight: args
            .normalised_bm25_weight
            .unwrap_or(base.normalised_bm25_weight),
        refusal: refusal.unwrap_or(base.refusal),
        ..base.clone()
    })
}

/// `--filter`s plus `--project`s (which must be configured); `--two-stage` switches the
/// two-stage search on.
fn scoped_filters(
    engine: &Engine,
    retrieval: &mut RetrievalConfig,
    raw: &[String],
    scope: &ProjectArgs,
) -> Result<Filters> {
    let mut filters = parse_filters(raw)?;
    for name in &scope.projects {
        engine.config.project(name)?;
    }
    filters.projects = scope.projects.clone();
    filters.access = access_as(engine, scope.reader.as_deref())?;
    retrieval.two_stage |= scope.two_stage;
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

/// `--timeout-secs`, else the limit the configured models need.
fn answer_time_limit(engine: &Engine, timeout_secs: Option<u64>) -> Duration {
    timeout_secs.map_or_else(
        || shiori_engine::answer_time_limit(&engine.config),
        Duration::from_secs,
    )
}
