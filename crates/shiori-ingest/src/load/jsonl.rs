use super::records::Record;
use serde_json::{Map, Value};
use shiori_core::GROUPS_KEY;
use std::collections::BTreeMap;

/// Why one line of a JSONL file is not a record.
#[derive(Debug, thiserror::Error)]
pub(super) enum BadLine {
    #[error("not valid UTF-8 at byte {}", .0.valid_up_to())]
    Utf8(#[source] std::str::Utf8Error),
    #[error("invalid JSON at column {}: {}", .0.column(), JsonMessage(.0))]
    Json(#[source] serde_json::Error),
    #[error("expected a JSON object")]
    NotAnObject,
    #[error("missing doc_id/_id")]
    MissingId,
    #[error("missing text")]
    MissingText,
    #[error("text must be a string")]
    TextNotString,
    #[error("vector must be a non-empty array of finite numbers")]
    BadVector,
}

/// serde_json's message without the "at line 1 column N" it appends: line 1 of one line is
/// noise, and the column is given before it.
struct JsonMessage<'a>(&'a serde_json::Error);

impl std::fmt::Display for JsonMessage<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let message = self.0.to_string();
        f.write_str(message.split(" at line ").next().unwrap_or_default())
    }
}

/// One line's record; `None` for a blank line.
pub(super) fn parse_line(bytes: &[u8]) -> Result<Option<Record>, BadLine> {
    let line = std::str::from_utf8(bytes).map_err(BadLine::Utf8)?;
    if line.trim().is_empty() {
        return Ok(None);
    }
    parse(line).map(Some)
}

fn parse(line: &str) -> Result<Record, BadLine> {
    let value: Value = serde_json::from_str(line).map_err(BadLine::Json)?;
    let Value::Object(mut object) = value else {
        return Err(BadLine::NotAnObject);
    };
    let id = take_id(&mut object).ok_or(BadLine::MissingId)?;
    let text = match object.remove("text") {
        Some(Value::String(text)) => text,
        None | Some(Value::Null) => return Err(BadLine::MissingText),
        Some(_) => return Err(BadLine::TextNotString),
    };
    let vector = object.remove("vector").map(vector).transpose()?;
    let title = object
        .remove("title")
        .as_ref()
        .and_then(scalar)
        .unwrap_or_default();
    let fields: BTreeMap<String, String> = object
        .iter()
        .filter_map(|(key, value)| Some((key.clone(), field(key, value)?)))
        .collect();
    Ok(Record {
        id,
        title,
        text,
        fields,
        vector,
    })
}

/// A record's own vector: a non-empty array of finite numbers.
fn vector(value: Value) -> Result<Vec<f32>, BadLine> {
    let Value::Array(items) = value else {
        return Err(BadLine::BadVector);
    };
    let vector: Vec<f32> = items
        .iter()
        .map(|item| item.as_f64().map(|x| x as f32).filter(|x| x.is_finite()))
        .collect::<Option<_>>()
        .ok_or(BadLine::BadVector)?;
    if vector.is_empty() {
        return Err(BadLine::BadVector);
    }
    Ok(vector)
}

/// The record's id from `doc_id` (or `_id`); numbers are accepted since many exports use them.
fn take_id(object: &mut Map<String, Value>) -> Option<String> {
    let doc_id = object.remove("doc_id");
    let underscore_id = object.remove("_id");
    [doc_id, underscore_id]
        .iter()
        .filter_map(|value| match value {
            Some(Value::String(id)) => Some(id.trim().to_owned()),
            Some(Value::Number(id)) => Some(id.to_string()),
            _ => None,
        })
        .find(|id| !id.is_empty())
}

/// A metadata value: a scalar, or for `groups` also a list of names.
fn field(key: &str, value: &Value) -> Option<String> {
    match value {
        Value::Array(items) if key == GROUPS_KEY => Some(
            items
                .iter()
                .filter_map(scalar)
                .collect::<Vec<_>>()
                .join(","),
        ),
        _ => scalar(value),
    }
}

/// Strings, numbers and booleans as text; null, arrays and objects have no metadata form.
fn scalar(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        Value::Bool(flag) => Some(flag.to_string()),
        Value::Null | Value::Array(_) | Value::Object(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use crate::load::{load_file, tests::fixture};

    #[test]
    fn bad_lines_fail_alone_among_good_ones() {
        let dir = tempfile::tempdir().expect("tempdir");
        let text = concat!(
            r#"{"doc_id": "faq-001", "title": "Ａccount", "text": "Create  an account.", "project": "kumo", "views": 12, "draft": false, "tags": ["a"]}"#,
            "\n\n",
            r#"{"doc_id": "faq-002", "text": "#,
            "\n",
            r#"{"title": "no id", "text": "orphan"}"#,
            "\n",
            r#"{"_id": 7, "text": "numeric id", "created_at": "2024-03-01T09:00:00+09:00"}"#,
            "\n",
            r#"{"doc_id": "faq-004"}"#,
            "\n",
            r#"["not", "an", "object"]"#,
            "\n",
            r#"{"doc_id": "faq-005", "text": 5}"#,
            "\n",
            r#"{"doc_id": "faq-006", "text": "explicit time", "modified": 1700000000, "created_at": "2024-03-01"}"#,
            "\r\n",
        );
        let path = fixture(&dir, "docs.jsonl", text.as_bytes());
        let loaded = load_file(&path, 99).expect("load");
        let name = path.to_string_lossy();

        let ids: Vec<&str> = loaded.documents.iter().map(|d| d.doc_id.as_str()).collect();
        assert_eq!(ids, ["faq-001", "7", "faq-006"]);
        let first = &loaded.documents[0];
        assert_eq!(first.title, "Account");
        assert_eq!(first.text, "Create an account.");
        assert_eq!(first.source, format!("{name}#L1"));
        assert_eq!(first.modified, 99);
        assert_eq!(first.metadata["project"], "kumo");
        assert_eq!(first.metadata["views"], "12");
        assert_eq!(first.metadata["draft"], "false");
        assert_eq!(first.metadata["doc_type"], "jsonl");
        assert!(!first.metadata.contains_key("tags"));
        assert!(!first.metadata.contains_key("doc_id"));
        assert_eq!(loaded.documents[1].title, "");
        assert_eq!(loaded.documents[1].modified, 1_709_251_200);
        assert_eq!(
            loaded.documents[1].metadata["created_at"],
            "2024-03-01T09:00:00+09:00"
        );
        assert_eq!(loaded.documents[2].modified, 1_700_000_000);

        let reasons: Vec<&str> = loaded
            .record_failures
            .iter()
            .map(|f| f.reason.as_str())
            .collect();
        assert_eq!(reasons.len(), 5, "{reasons:?}");
        assert!(
            reasons[0].starts_with("line 3: invalid JSON at column"),
            "{}",
            reasons[0]
        );
        assert_eq!(
            reasons[1..],
            [
                "line 4: missing doc_id/_id",
                "line 6: missing text",
                "line 7: expected a JSON object",
                "line 8: text must be a string",
            ]
        );
        assert!(loaded.record_failures.iter().all(|f| f.path == path));
    }

    #[test]
    fn a_file_of_only_bad_lines_reports_each_line() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = fixture(&dir, "bad.jsonl", b"nope\n{\"text\": \"x\"}\n");
        let loaded = load_file(&path, 0).expect("load");
        assert!(loaded.documents.is_empty());
        assert_eq!(loaded.record_failures.len(), 2);
    }
}
