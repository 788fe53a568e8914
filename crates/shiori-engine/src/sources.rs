//! What `shiori index` indexes: paths given on the command line, or the sources configured in
//! `shiori.toml` (`[ingest] sources` and each `[projects.NAME]`).

use crate::indexer::{ProjectStamp, Scope};
use crate::{Config, Engine, EngineError, IndexReport, Progress};
use std::path::PathBuf;

/// One unit of indexing work: plain paths, or a configured project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexTarget {
    Paths(Vec<PathBuf>),
    Project(String),
}

impl Engine {
    /// What `shiori index` without paths indexes: every project, then `[ingest] sources`.
    /// Projects go first so that a file both reach is indexed with its project's metadata; the
    /// plain pass then finds it unchanged.
    pub fn configured_targets(&self) -> Vec<IndexTarget> {
        let sources = self.config.source_paths(&self.data_dir);
        let plain = (!sources.is_empty()).then_some(IndexTarget::Paths(sources));
        self.config
            .projects
            .keys()
            .cloned()
            .map(IndexTarget::Project)
            .chain(plain)
            .collect()
    }

    /// The folders and files a target walks, resolved.
    pub fn target_paths(&self, target: &IndexTarget) -> Result<Vec<PathBuf>, EngineError> {
        Ok(match target {
            IndexTarget::Paths(paths) => paths.clone(),
            IndexTarget::Project(name) => {
                let project = self.config.project(name)?;
                self.config.project_paths(&self.data_dir, project)
            }
        })
    }

    /// Indexes one target (see [`Engine::index`]); a project's chunks carry its metadata, and
    /// only files of that project are dropped when they leave its folders.
    pub fn index_target(
        &mut self,
        target: &IndexTarget,
        progress: &dyn Progress,
    ) -> Result<IndexReport, EngineError> {
        match target {
            IndexTarget::Paths(paths) => self.index(paths, progress),
            IndexTarget::Project(name) => self.index_project(name, progress),
        }
    }

    /// Whether a target has remote sources, which are listed again on a timer when watching.
    pub(crate) fn has_remotes(&self, target: &IndexTarget) -> bool {
        match target {
            IndexTarget::Paths(_) => false,
            IndexTarget::Project(name) => self
                .config
                .project(name)
                .is_ok_and(|project| Config::project_remotes(project).next().is_some()),
        }
    }

    /// Indexes targets one after the other, adding up their reports.
    pub fn index_targets(
        &mut self,
        targets: &[IndexTarget],
        progress: &dyn Progress,
    ) -> Result<IndexReport, EngineError> {
        let mut total = IndexReport::default();
        for target in targets {
            total.absorb(self.index_target(target, progress)?);
        }
        Ok(total)
    }

    /// Indexes the project `[projects.NAME]` configures, its remote sources synced first.
    pub fn index_project(
        &mut self,
        name: &str,
        progress: &dyn Progress,
    ) -> Result<IndexReport, EngineError> {
        let project = self.config.project(name)?;
        let (synced, sync_failures) = self.sync_remotes(project);
        let scope = Scope {
            paths: self.config.project_paths(&self.data_dir, project),
            walk: self.walk_options(Some(project)),
            project: Some(ProjectStamp::new(name, project)),
        };
        let mut report = self.index_scope(&scope, progress)?;
        report.files_seen += sync_failures.len();
        report.failures.extend(sync_failures);
        report.elapsed_ms += synced.iter().map(|sync| sync.elapsed_ms).sum::<f64>();
        report.sources = synced;
        Ok(report)
    }
}
