//! Remote project sources (`s3://`, `webdav+https://`, `git+…`, `gdrive://`) brought up to date
//! in their mirrors before the project's files are indexed, so the walk, the change checks, the
//! removal of vanished files and the groups beside a file work on them as on local folders.

use crate::groups::write_groups_file;
use crate::{Config, Engine, IndexFailure, ProjectConfig};
use serde::Serialize;
use shiori_connectors::{connect, mirror_folder, sync_wanted, SourceUrl, SyncLimits, SyncReport};
use shiori_core::{joined_groups, NO_READER_GROUP};
use shiori_ingest::PathFilter;
use shiori_llm::error_chain;
use std::path::Path;
use std::time::Instant;

/// What one remote source's sync did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SourceSync {
    /// The source's URL as configured.
    pub source: String,
    /// Objects downloaded because they were new or their change marker moved.
    pub fetched: usize,
    pub unchanged: usize,
    pub deleted: usize,
    /// Objects that could not be mirrored (each is in the report's failures); the whole source
    /// when it could not be listed.
    pub failed: usize,
    pub bytes: u64,
    pub elapsed_ms: f64,
}

impl Engine {
    /// Syncs each remote source of `project` into its mirror. A source that cannot be listed
    /// (unreachable, refused) is reported and its mirror left as it was, so its documents stay
    /// searchable; the project's other sources go on.
    pub(crate) fn sync_remotes(
        &self,
        project: &ProjectConfig,
    ) -> (Vec<SourceSync>, Vec<IndexFailure>) {
        let mut syncs = Vec::new();
        let mut failures = Vec::new();
        for url in Config::project_remotes(project) {
            let started = Instant::now();
            let mut summary = SourceSync {
                source: url.to_string(),
                ..SourceSync::default()
            };
            match self.sync_remote(url, project) {
                Ok(report) => {
                    summary.fetched = report.fetched;
                    summary.unchanged = report.unchanged;
                    summary.deleted = report.deleted;
                    summary.failed = report.failures.len();
                    summary.bytes = report.bytes;
                    failures.extend(report.failures.into_iter().map(|failure| IndexFailure {
                        path: failure.object,
                        reason: failure.reason,
                    }));
                }
                Err(reason) => {
                    tracing::warn!("{url}: {reason}");
                    summary.failed = 1;
                    failures.push(IndexFailure {
                        path: url.to_string(),
                        reason: format!("{reason}; its documents stay as last synced"),
                    });
                }
            }
            summary.elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
            syncs.push(summary);
        }
        (syncs, failures)
    }

    /// Syncs one source, downloading only what the project's walk would index.
    fn sync_remote(&self, url: &SourceUrl, project: &ProjectConfig) -> Result<SyncReport, String> {
        let _span = tracing::info_span!("connector_sync", source = %url).entered();
        let mirror = mirror_folder(&self.data_dir, url);
        std::fs::create_dir_all(&mirror)
            .map_err(|error| format!("{}: {error}", mirror.display()))?;
        let connector =
            connect(url, &self.config.connectors, &mirror).map_err(|error| error_chain(&error))?;
        let walk = self.walk_options(Some(project));
        let filter = PathFilter::new(&walk).map_err(|error| error.to_string())?;
        let limits = SyncLimits {
            max_object_bytes: walk.max_file_bytes,
            downloads: self.config.connectors.downloads,
        };
        let wanted = |path: &str| filter.takes(Path::new(path));
        sync_wanted(
            url,
            connector.as_ref(),
            &mirror,
            &limits,
            &record_readers,
            &wanted,
        )
        .map_err(|error| error_chain(&error))
    }
}

/// Writes a mirrored file's readers where the indexer reads a file's groups: the groups the
/// source's permissions map to, no reader at all (admins only) when none maps, and nothing (the
/// project decides) for sources without permissions.
fn record_readers(file: &Path, groups: Option<&[String]>) -> std::io::Result<()> {
    let stored = groups.map(
        |groups| match joined_groups(groups.iter().map(String::as_str)) {
            joined if joined.is_empty() => NO_READER_GROUP.to_string(),
            joined => joined,
        },
    );
    write_groups_file(file, stored.as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::groups::sidecar_groups;

    #[test]
    fn mapped_readers_become_groups_and_no_mapped_reader_means_admins_only() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("contract.docx");
        std::fs::write(&file, b"x").unwrap();
        record_readers(&file, Some(&["Legal".to_string(), "hr".to_string()])).unwrap();
        assert_eq!(sidecar_groups(&file).unwrap().as_deref(), Some("hr,legal"));
        record_readers(&file, Some(&[])).unwrap();
        assert_eq!(
            sidecar_groups(&file).unwrap().as_deref(),
            Some(NO_READER_GROUP)
        );
        record_readers(&file, None).unwrap();
        assert_eq!(sidecar_groups(&file).unwrap(), None);
    }
}
