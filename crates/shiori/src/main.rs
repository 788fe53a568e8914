//! The `shiori` command line: a thin layer over `shiori-engine` that parses arguments, shows
//! progress on a terminal and prints results as text or JSON. `main` only dispatches: each
//! command lives in the module named for its job.

mod backup;
mod bench;
mod bench_embed;
mod bench_generate;
mod bench_index;
mod bench_ingest;
mod bench_scale;
mod chat;
mod cli;
mod generate;
mod indexing;
mod output;
mod progress;
mod search;
mod serving;
mod setup;
mod telemetry;

use anyhow::{bail, Result};
use clap::Parser;
use cli::{Cli, Command};
use shiori_core::EmbedError;
use shiori_engine::{Engine, EngineError};
use shiori_models::assets::ShioriHome;
use std::path::Path;

/// candle allocates and frees large activation tensors for every batch; glibc hands those back to
/// the kernel each time and the page faults cost about a sixth of embedding time. mimalloc keeps
/// them (measured +17% passages/s on msmarco-5k).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let cli = Cli::parse();
    let telemetry = telemetry::init(&cli);
    let result = run(&cli);
    // Sent before `exit`, which would skip it.
    drop(telemetry);
    if let Err(error) = result {
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
        Command::Init(args) => setup::init(cli, &home, args),
        Command::Migrate(args) => setup::migrate(cli, &home, args),
        Command::Index(args) => indexing::index(cli, &home, args),
        Command::Search(args) => search::search(cli, &home, args),
        Command::Ask(args) => chat::ask(cli, &home, args),
        Command::Chat(args) => chat::chat(cli, &home, args),
        Command::Eval(args) => search::eval(cli, &home, args),
        Command::Stats => setup::stats(cli, &home),
        Command::Embed(args) => setup::embed(cli, &home, args),
        Command::Mcp(args) => serving::mcp(cli, &home, args),
        Command::Serve(args) => serving::serve(cli, &home, args),
        Command::Backup { dest } => backup::backup(cli, dest),
        Command::Restore { src } => backup::restore(cli, &home, src),
        Command::Doctor => setup::doctor(cli, &home),
        Command::Models { action } => setup::models(cli, &home, action),
        Command::Generate { action } => generate::run(action),
        Command::Bench { action } => bench::run(cli, &home, action),
    }
}

/// Opens an existing data directory: a mistyped `--data-dir` is an error, not a new empty index.
pub(crate) fn open_engine(cli: &Cli, home: &ShioriHome) -> Result<Engine> {
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
pub(crate) fn open_engine_at(data_dir: &Path, home: &ShioriHome) -> Result<Engine> {
    Engine::open(data_dir, home).map_err(|error| {
        let hint = match error {
            EngineError::Embed(EmbedError::ModelNotFound { .. }) => " (run `shiori models fetch`)",
            _ => "",
        };
        anyhow::anyhow!(
            "cannot open the data directory {}: {error}{hint}",
            data_dir.display()
        )
    })
}
