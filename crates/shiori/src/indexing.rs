//! `shiori index`: what to index (paths, projects, or everything configured), once or watching.

use crate::cli::{Cli, IndexArgs};
use crate::{open_engine_at, output, progress};
use anyhow::{bail, Result};
use shiori_engine::{Engine, IndexTarget, ShownPaths, WatchPass};
use shiori_models::assets::ShioriHome;
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::time::Duration;

/// What `shiori index` was asked to do.
pub struct IndexRequest<'a> {
    pub paths: &'a [PathBuf],
    pub projects: &'a [String],
    pub watch: bool,
    pub debounce: Duration,
    pub json: bool,
}

/// Some files or records could not be indexed; the rest were, and the report listing them was
/// printed.
#[derive(Debug, thiserror::Error)]
#[error("{0} file(s) or record(s) could not be indexed (listed above); the rest were indexed")]
pub struct FilesFailed(pub usize);

impl FilesFailed {
    /// The exit code of `shiori index` when files failed (1 is any other error).
    pub const EXIT_CODE: i32 = 2;
}

/// Indexes the request's targets once and prints one report, or watches them and prints a
/// report (one JSON line with `--json`) per pass that changed something.
pub fn run(engine: &mut Engine, request: &IndexRequest<'_>) -> Result<()> {
    let targets = targets(engine, request)?;
    let bar = progress::Bar::for_cli(request.json);
    if !request.watch {
        let mut report = engine.index_targets(&targets, &bar)?;
        engine.shown_paths().show_report(&mut report);
        output::print(request.json, &report, || output::index_report(&report))?;
        return match report.failures.len() {
            0 => Ok(()),
            failed => Err(FilesFailed(failed).into()),
        };
    }
    eprintln!("watching {} target(s); Ctrl-C stops", targets.len());
    let shown = engine.shown_paths().clone();
    engine.watch(&targets, request.debounce, &bar, &mut |pass| {
        // Once stdout's reader is gone, no one is left to read the next pass's report.
        match print_pass(&pass, request.json, &shown) {
            Ok(()) => ControlFlow::Continue(()),
            Err(_) => ControlFlow::Break(()),
        }
    })?;
    Ok(())
}

fn targets(engine: &Engine, request: &IndexRequest<'_>) -> Result<Vec<IndexTarget>> {
    if !request.paths.is_empty() {
        return Ok(vec![IndexTarget::Paths(request.paths.to_vec())]);
    }
    if !request.projects.is_empty() {
        for name in request.projects {
            engine.config.project(name)?;
        }
        return Ok(request
            .projects
            .iter()
            .cloned()
            .map(IndexTarget::Project)
            .collect());
    }
    let configured = engine.configured_targets();
    if configured.is_empty() {
        bail!(
            "nothing to index: name files or folders, or configure `[ingest] sources` or \
             `[projects.NAME] paths` in {}",
            engine.data_dir().join(shiori_engine::CONFIG_FILE).display()
        );
    }
    Ok(configured)
}

fn print_pass(pass: &WatchPass<'_>, json: bool, shown: &ShownPaths) -> std::io::Result<()> {
    let target = match pass.target {
        IndexTarget::Paths(paths) => paths
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        IndexTarget::Project(name) => format!("project {name}"),
    };
    match &pass.result {
        Ok(report) => {
            let changed = report.files_indexed + report.files_removed + report.failures.len();
            if !pass.initial && changed == 0 {
                return Ok(());
            }
            let mut report = report.clone();
            shown.show_report(&mut report);
            if json {
                output::line(serde_json::json!({"target": target, "report": report}))
            } else {
                output::line(format_args!("{target}: {}", output::index_report(&report)))
            }
        }
        Err(error) => {
            if json {
                let error = shown.redact(&error.to_string());
                output::line(serde_json::json!({"target": target, "error": error}))
            } else {
                eprintln!("{target}: error: {}", shown.redact(&error.to_string()));
                Ok(())
            }
        }
    }
}

/// `shiori index`: indexes paths, projects or the configured sources (`--watch`: and keeps them indexed).
pub fn index(cli: &Cli, home: &ShioriHome, args: &IndexArgs) -> Result<()> {
    let IndexArgs {
        paths,
        projects,
        reembed,
        watch,
        debounce_ms,
    } = args;
    let created = !cli.data_dir.exists();
    let mut engine = if *reembed {
        let mut engine = Engine::open_with(&cli.data_dir, home, true)?;
        let converted = engine.reembed(&progress::Bar::for_cli(cli.json))?;
        eprintln!(
            "re-embedded {converted} chunk(s) with {}",
            engine.embedder().model_id()
        );
        engine
    } else {
        open_engine_at(&cli.data_dir, home)?
    };
    if created {
        eprintln!("created the data directory {}", cli.data_dir.display());
    }
    let request = IndexRequest {
        paths,
        projects,
        watch: *watch,
        debounce: Duration::from_millis(*debounce_ms),
        json: cli.json,
    };
    run(&mut engine, &request)
}
