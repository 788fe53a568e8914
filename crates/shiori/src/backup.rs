//! `shiori backup` and `shiori restore`: transport over the engine's one implementation.

use crate::cli::Cli;
use crate::output;
use anyhow::{bail, Result};
use shiori_models::assets::ShioriHome;
use std::path::Path;

/// `shiori backup DEST`.
pub fn backup(cli: &Cli, dest: &Path) -> Result<()> {
    if !cli.data_dir.is_dir() {
        bail!("no data directory at {}", cli.data_dir.display());
    }
    let report = shiori_engine::backup(&cli.data_dir, dest)?;
    output::print(cli.json, &report, || {
        let indexes = match report.derived_indexes {
            true => "with its BM25 and vector indexes",
            false => "without derived indexes (restore rebuilds them)",
        };
        format!(
            "backed up {} file(s), {:.1} MB, {indexes}, in {:.1} s",
            report.files,
            report.bytes as f64 / 1e6,
            report.elapsed_ms / 1000.0
        )
    })
}

/// `shiori restore SRC` into `--data-dir`.
pub fn restore(cli: &Cli, home: &ShioriHome, src: &Path) -> Result<()> {
    let report = shiori_engine::restore(src, &cli.data_dir, home)?;
    output::print(cli.json, &report, || {
        let indexes = match &report.rebuilt {
            Some(why) => format!("indexes rebuilt ({why})"),
            None => "indexes as backed up".to_string(),
        };
        format!(
            "restored {} file(s) into {}; {indexes}; in {:.1} s",
            report.files,
            cli.data_dir.display(),
            report.elapsed_ms / 1000.0
        )
    })
}
