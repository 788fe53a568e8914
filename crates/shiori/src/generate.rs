//! `shiori generate`: the man pages and shell completions, made from the same clap definition
//! that parses the arguments, so they never disagree with the binary that ships them.

use crate::cli::{Cli, GenerateAction};
use anyhow::{Context, Result};
use clap::CommandFactory;
use std::io::Write;
use std::path::Path;

pub fn run(action: &GenerateAction) -> Result<()> {
    match action {
        GenerateAction::Man { dir } => man_pages(dir),
        GenerateAction::Completions { shell } => {
            // Written whole, not streamed: clap_complete panics on a failed write (a closed pipe).
            let mut script = Vec::new();
            clap_complete::generate(*shell, &mut Cli::command(), "shiori", &mut script);
            std::io::stdout().write_all(&script)?;
            Ok(())
        }
    }
}

/// `shiori.1` and one page per subcommand (`shiori-index.1`, …), as `man shiori-index` finds.
fn man_pages(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    clap_mangen::generate_to(Cli::command(), dir)
        .with_context(|| format!("writing the man pages into {}", dir.display()))
}
