//! Who may read a file that more than one project holds: every project whose folders and
//! globs take it restricts it, whichever project (or plain path) indexes it, so a file in
//! `docs/` (everyone) and in `docs/hr/` (`groups = ["hr"]`) is read by `hr` only, and reading
//! it again through either gives it the same groups (docs/security.md).

use crate::{Config, ProjectConfig};
use shiori_core::{joined_groups, narrowed_groups};
use shiori_ingest::{PathFilter, WalkOptions};
use std::path::{Path, PathBuf};

/// One project that restricts its readers: its folders (canonical) and what its walk takes.
struct Restricting {
    roots: Vec<PathBuf>,
    takes: PathFilter,
    groups: String,
}

impl Restricting {
    fn holds(&self, path: &Path) -> bool {
        self.roots.iter().any(|root| match path.strip_prefix(root) {
            Ok(relative) if relative.as_os_str().is_empty() => true,
            Ok(relative) => self.takes.takes(relative),
            Err(_) => false,
        })
    }
}

/// The projects with `groups`, to narrow each file by those holding it.
pub(crate) struct ProjectReaders(Vec<Restricting>);

impl ProjectReaders {
    /// `walk` gives a project's walk options; a project whose globs cannot be built restricts
    /// by its folders alone (more restrictive, never less: its own run reports the glob).
    pub(crate) fn new(
        config: &Config,
        data_dir: &Path,
        walk: impl Fn(&ProjectConfig) -> WalkOptions,
    ) -> ProjectReaders {
        let everything = WalkOptions {
            include: vec!["**".into()],
            ..WalkOptions::default()
        };
        let restricting = config
            .projects
            .values()
            .filter(|project| !project.groups.is_empty())
            .filter_map(|project| {
                let takes = PathFilter::new(&walk(project))
                    .or_else(|_| PathFilter::new(&everything))
                    .ok()?;
                Some(Restricting {
                    roots: config
                        .project_paths(data_dir, project)
                        .into_iter()
                        .map(|root| root.canonicalize().unwrap_or(root))
                        .collect(),
                    takes,
                    groups: joined_groups(project.groups.iter().map(String::as_str)),
                })
            })
            .collect();
        ProjectReaders(restricting)
    }

    /// The groups every project holding `path` (canonical) allows, in stored form; `None` when
    /// no project restricts it.
    pub(crate) fn groups_of(&self, path: &Path) -> Option<String> {
        narrowed_groups(
            self.0
                .iter()
                .filter(|project| project.holds(path))
                .map(|project| Some(project.groups.as_str())),
        )
    }
}
