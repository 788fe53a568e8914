//! Who may read a file: the groups a `.NAME.groups` file beside it gives (written by uploads,
//! read by the indexer: one format, here), and the narrowing of a record's groups by its
//! file's and project's.

use crate::IndexFailure;
use shiori_core::{
    check_group_name, joined_groups, narrowed_groups, split_groups, GROUPS_KEY, NO_READER_GROUP,
};
use shiori_ingest::LoadedFile;
use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};

/// Where the groups of the file at `path` may be given: a hidden `.NAME.groups` beside it
/// (comma-separated), which folder walks skip. Uploads with `groups` are written so.
pub fn groups_file(path: &Path) -> Option<PathBuf> {
    let name = path.file_name()?.to_string_lossy();
    Some(path.with_file_name(format!(".{name}.groups")))
}

/// Records `groups` (stored form) as the groups of the file at `path`, in [`groups_file`];
/// `None` or empty removes the record, so the file is readable by whoever its project allows.
pub fn write_groups_file(path: &Path, groups: Option<&str>) -> std::io::Result<()> {
    let Some(sidecar) = groups_file(path) else {
        return Ok(());
    };
    match groups.filter(|groups| !groups.is_empty()) {
        Some(groups) => std::fs::write(&sidecar, groups),
        None => match std::fs::remove_file(&sidecar) {
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
            removed => removed,
        },
    }
}

/// The groups [`groups_file`] gives the file at `path`, in stored form; `None` without one.
pub(crate) fn sidecar_groups(path: &Path) -> std::io::Result<Option<String>> {
    let Some(sidecar) = groups_file(path) else {
        return Ok(None);
    };
    match std::fs::read_to_string(sidecar) {
        Ok(text) => Ok(Some(joined_groups(split_groups(&text))).filter(|g| !g.is_empty())),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error),
    }
}

/// What [`narrow_groups`] found wrong.
pub(crate) struct Grouping {
    pub(crate) failures: Vec<IndexFailure>,
    pub(crate) warnings: Vec<IndexFailure>,
}

/// Gives every document the groups its record, its file and its project all allow (see
/// [`narrowed_groups`]): a record can narrow who reads it, never widen it. A record naming an
/// invalid group fails (dropping the name could widen it); one narrowed below what it named, or
/// naming a group no key has, is reported.
pub(crate) fn narrow_groups(
    loaded: &mut LoadedFile,
    file_groups: Option<&str>,
    project_groups: Option<&str>,
    known_groups: Option<&BTreeSet<String>>,
) -> Grouping {
    let mut grouping = Grouping {
        failures: Vec::new(),
        warnings: Vec::new(),
    };
    let mut rejected = HashSet::new();
    if let (Some(file_groups), Some(first)) = (file_groups, loaded.documents.first()) {
        let file = first.source.split('#').next().unwrap_or_default();
        grouping
            .warnings
            .extend(
                unknown_groups(file_groups, known_groups).map(|reason| IndexFailure {
                    path: file.to_string(),
                    reason: format!("{}: {reason}", GROUPS_FILE_FIELD),
                }),
            );
    }
    for document in &mut loaded.documents {
        let own = document.metadata.remove(GROUPS_KEY);
        let report = |reason: String| IndexFailure {
            path: document.source.clone(),
            reason: format!("record {:?}: {reason}", document.doc_id),
        };
        if let Some(invalid) = own
            .iter()
            .flat_map(|own| split_groups(own))
            .find_map(|group| check_group_name(group).err())
        {
            grouping
                .failures
                .push(report(format!("`groups`: {invalid}")));
            rejected.insert(document.doc_id.clone());
            continue;
        }
        let own = own.filter(|own| !own.is_empty());
        let allowed = narrowed_groups([own.as_deref(), file_groups, project_groups]);
        if let (Some(own), Some(allowed)) = (&own, &allowed) {
            if own != allowed {
                grouping.warnings.push(report(format!(
                    "`groups` {own:?} narrowed to {allowed:?}: a record may not widen what its \
                     file or project allows"
                )));
            }
            grouping
                .warnings
                .extend(unknown_groups(own, known_groups).map(&report));
        }
        if let Some(allowed) = allowed {
            document.metadata.insert(GROUPS_KEY.to_string(), allowed);
        }
    }
    loaded
        .documents
        .retain(|document| !rejected.contains(&document.doc_id));
    grouping
}

/// How a warning names the groups a `.NAME.groups` file gives.
const GROUPS_FILE_FIELD: &str = "its .groups file";

/// A note for each group in `groups` that no configured key has (a typo reads as "nobody");
/// nothing when `known` is `None` (no keys are configured).
fn unknown_groups<'a>(
    groups: &'a str,
    known: Option<&'a BTreeSet<String>>,
) -> impl Iterator<Item = String> + 'a {
    split_groups(groups)
        .filter(move |group| {
            *group != NO_READER_GROUP && known.is_some_and(|known| !known.contains(*group))
        })
        .map(|group| format!("group {group:?} is not a group of any [[auth.keys]] entry"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use shiori_core::Document;
    use std::collections::BTreeMap;

    fn record(doc_id: &str, groups: Option<&str>) -> Document {
        Document {
            doc_id: doc_id.into(),
            title: doc_id.into(),
            source: format!("/data/hr/records.jsonl#L{}", doc_id.len()),
            text: "Payroll.".into(),
            modified: 0,
            metadata: groups
                .map(|groups| BTreeMap::from([(GROUPS_KEY.to_string(), groups.to_string())]))
                .unwrap_or_default(),
        }
    }

    #[test]
    fn records_only_narrow_their_file_and_project_groups() {
        let mut loaded = LoadedFile {
            documents: vec![
                record("none", None),
                record("empty", Some("")),
                record("narrower", Some("hr")),
                record("wider", Some("sales")),
                record("invalid", Some("hr!")),
                record("typo", Some("hr,hrr")),
            ],
            ..LoadedFile::default()
        };
        let known = BTreeSet::from(["hr", "legal", "sales"].map(String::from));
        let grouping = narrow_groups(&mut loaded, None, Some("hr,legal"), Some(&known));
        let groups: Vec<(&str, &str)> = loaded
            .documents
            .iter()
            .map(|d| (d.doc_id.as_str(), d.metadata[GROUPS_KEY].as_str()))
            .collect();
        assert_eq!(
            groups,
            [
                ("none", "hr,legal"),
                ("empty", "hr,legal"),
                ("narrower", "hr"),
                ("wider", NO_READER_GROUP),
                ("typo", "hr"),
            ]
        );
        assert_eq!(grouping.failures.len(), 1, "{:?}", grouping.failures);
        assert!(grouping.failures[0].reason.contains("\"invalid\""));
        let warnings: Vec<&str> = grouping
            .warnings
            .iter()
            .map(|w| w.reason.as_str())
            .collect();
        assert_eq!(warnings.len(), 3, "{warnings:?}");
        assert!(warnings[0].contains("\"wider\"") && warnings[0].contains("narrowed"));
        assert!(warnings[2].contains("group \"hrr\""), "{warnings:?}");
    }

    #[test]
    fn a_file_without_a_project_gives_its_records_its_groups() {
        let mut loaded = LoadedFile {
            documents: vec![record("plain", None), record("wider", Some("sales"))],
            ..LoadedFile::default()
        };
        narrow_groups(&mut loaded, Some("hr"), None, None);
        assert_eq!(loaded.documents[0].metadata[GROUPS_KEY], "hr");
        assert_eq!(loaded.documents[1].metadata[GROUPS_KEY], NO_READER_GROUP);
    }
}
