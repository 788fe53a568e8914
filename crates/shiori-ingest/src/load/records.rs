//! What JSONL and CSV records share: per-record failures, unique ids, record timestamps; and the
//! per-part failures (a page, a sheet) of the paged formats.

use super::date::parse_timestamp;
use super::{normalize_title, LoadedFile};
use crate::error::IngestFailure;
use crate::normalize::normalize;
use shiori_core::{joined_groups, split_groups, Document, GROUPS_KEY};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Display;
use std::path::{Path, PathBuf};

/// One record before it becomes a `Document`.
pub(super) struct Record {
    pub id: String,
    pub title: String,
    pub text: String,
    /// Every other field rendered as a string; becomes the document's metadata.
    pub fields: BTreeMap<String, String>,
    /// A vector computed elsewhere, to be stored instead of embedding the text.
    pub vector: Option<Vec<f32>>,
}

/// Collects one file's records. A bad record fails alone, and a repeated id fails too, since
/// the second record would silently replace the first in the store.
pub(super) struct Records {
    path: PathBuf,
    doc_type: &'static str,
    modified: i64,
    first_line: HashMap<String, usize>,
    loaded: LoadedFile,
}

impl Records {
    pub(super) fn new(path: &Path, doc_type: &'static str, modified: i64) -> Self {
        Records {
            path: path.to_path_buf(),
            doc_type,
            modified,
            first_line: HashMap::new(),
            loaded: LoadedFile::default(),
        }
    }

    pub(super) fn fail(&mut self, line: usize, reason: impl Display) {
        self.loaded
            .record_failures
            .push(failure(&self.path, line, reason));
    }

    pub(super) fn add(&mut self, line: usize, record: Record) {
        let text = normalize(&record.text);
        if text.is_empty() {
            return self.fail(line, "text is empty");
        }
        if let Some(first) = self.first_line.get(&record.id) {
            let reason = format!("duplicate doc_id {:?} (first on line {first})", record.id);
            return self.fail(line, reason);
        }
        self.first_line.insert(record.id.clone(), line);
        let modified = record_time(&record.fields).unwrap_or(self.modified);
        let mut metadata = record.fields;
        // Stored in the one form the stores match groups in.
        if let Some(groups) = metadata.get_mut(GROUPS_KEY) {
            *groups = joined_groups(split_groups(groups));
        }
        // Inserted last so that a record field called `doc_type` cannot hide the format.
        metadata.insert("doc_type".to_owned(), self.doc_type.to_owned());
        if let Some(vector) = record.vector {
            self.loaded.vectors.insert(record.id.clone(), vector);
        }
        self.loaded.documents.push(Document {
            doc_id: record.id,
            title: normalize_title(&record.title),
            source: format!("{}#L{line}", self.path.to_string_lossy()),
            text,
            modified,
            metadata,
        });
    }

    pub(super) fn finish(self) -> LoadedFile {
        self.loaded
    }

    /// The documents and failures collected since the last call; ids stay remembered, so a
    /// repeat in a later part of the file still fails.
    pub(super) fn take(&mut self) -> LoadedFile {
        std::mem::take(&mut self.loaded)
    }
}

pub(super) fn failure(path: &Path, line: usize, reason: impl Display) -> IngestFailure {
    failure_at(path, &format!("line {line}"), reason)
}

/// A failure of one part of a file (a line, a page, a sheet) that the rest of the file outlives.
pub(super) fn failure_at(path: &Path, location: &str, reason: impl Display) -> IngestFailure {
    IngestFailure {
        path: path.to_path_buf(),
        reason: format!("{location}: {reason}"),
    }
}

/// The record's own time: `modified`, else `created_at`, each as Unix seconds or a date.
fn record_time(fields: &BTreeMap<String, String>) -> Option<i64> {
    ["modified", "created_at"]
        .iter()
        .filter_map(|key| fields.get(*key))
        .find_map(|value| parse_time(value))
}

fn parse_time(value: &str) -> Option<i64> {
    let value = value.trim();
    value
        .parse::<i64>()
        .ok()
        // Saturating float-to-int conversion is fine: only absurd timestamps are clamped.
        .or_else(|| {
            value
                .parse::<f64>()
                .ok()
                .filter(|f| f.is_finite())
                .map(|f| f as i64)
        })
        .or_else(|| parse_timestamp(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str, text: &str, fields: &[(&str, &str)]) -> Record {
        Record {
            id: id.into(),
            title: " A\ntitle ".into(),
            text: text.into(),
            fields: fields
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            vector: None,
        }
    }

    #[test]
    fn builds_documents_and_fails_bad_records_alone() {
        let mut records = Records::new(Path::new("data/x.jsonl"), "jsonl", 5);
        records.add(
            1,
            record("a", "one", &[("doc_type", "spoof"), ("project", "p")]),
        );
        records.add(2, record("b", "  \n ", &[]));
        records.add(3, record("a", "again", &[]));
        records.fail(4, "missing text");
        let loaded = records.finish();
        let [doc] = loaded.documents.as_slice() else {
            panic!("expected one document, got {:?}", loaded.documents);
        };
        assert_eq!(doc.source, "data/x.jsonl#L1");
        assert_eq!(doc.title, "A title");
        assert_eq!(doc.modified, 5);
        assert_eq!(doc.metadata["doc_type"], "jsonl");
        assert_eq!(doc.metadata["project"], "p");
        let reasons: Vec<String> = loaded
            .record_failures
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            reasons,
            [
                "data/x.jsonl: line 2: text is empty",
                "data/x.jsonl: line 3: duplicate doc_id \"a\" (first on line 1)",
                "data/x.jsonl: line 4: missing text",
            ]
        );
    }

    #[test]
    fn record_time_prefers_modified_then_created_at() {
        let fields = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        assert_eq!(
            record_time(&fields(&[
                ("modified", "100"),
                ("created_at", "2024-03-01")
            ])),
            Some(100)
        );
        assert_eq!(record_time(&fields(&[("modified", "1.5e2")])), Some(150));
        assert_eq!(
            record_time(&fields(&[
                ("modified", "soon"),
                ("created_at", "2024-03-01")
            ])),
            Some(1_709_251_200)
        );
        assert_eq!(record_time(&fields(&[("created_at", "someday")])), None);
    }
}
