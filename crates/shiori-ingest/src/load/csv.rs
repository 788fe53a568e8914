use super::records::{failure, Record, Records};
use super::{file_document, file_stem, LoadedFile};
use crate::error::IngestError;
use crate::normalize::normalize;
use csv::{ErrorKind, ReaderBuilder, StringRecord};
use std::collections::BTreeMap;
use std::path::Path;

/// Columns that may hold a row's id, in order of preference.
const ID_COLUMNS: &[&str] = &["doc_id", "_id", "id"];

/// With a `text` column every row is a record; without one the file is a table, loaded as one
/// document with a `header: value` line per row so that each value keeps its meaning.
pub(super) fn load(path: &Path, text: &str, modified: i64) -> Result<LoadedFile, IngestError> {
    let mut reader = ReaderBuilder::new().from_reader(text.as_bytes());
    let headers: Vec<String> = reader
        .headers()
        .map_err(|err| IngestError::Parse {
            path: path.to_path_buf(),
            message: format!("unreadable CSV header: {err}"),
        })?
        .iter()
        .map(|header| header.trim().to_owned())
        .collect();
    let rows = reader.records().enumerate().map(|(index, row)| {
        row.map_err(|err| {
            // Row 1 sits on line 2, below the header, unless quoted newlines say otherwise.
            let line = err
                .position()
                .map_or(index + 2, |pos| line_number(pos.line()));
            let reason = match err.kind() {
                ErrorKind::UnequalLengths {
                    expected_len, len, ..
                } => {
                    format!("expected {expected_len} fields, found {len}")
                }
                _ => err.to_string(),
            };
            (line, reason)
        })
    });
    Ok(match column(&headers, &["text"]) {
        Some(text_column) => records(path, &headers, text_column, rows, modified),
        None => table(path, &headers, rows, modified),
    })
}

type Row = Result<StringRecord, (usize, String)>;

fn records(
    path: &Path,
    headers: &[String],
    text_column: usize,
    rows: impl Iterator<Item = Row>,
    modified: i64,
) -> LoadedFile {
    let id_column = ID_COLUMNS.iter().find_map(|name| column(headers, &[name]));
    let title_column = column(headers, &["title"]);
    let stem = file_stem(path);
    let mut records = Records::new(path, "csv-record", modified);
    for (index, row) in rows.enumerate() {
        let row = match row {
            Ok(row) => row,
            Err((line, reason)) => {
                records.fail(line, reason);
                continue;
            }
        };
        let line = row
            .position()
            .map_or(index + 2, |pos| line_number(pos.line()));
        let cell = |column: Option<usize>| column.and_then(|c| row.get(c)).map(str::trim);
        let id = cell(id_column)
            .filter(|id| !id.is_empty())
            .map_or_else(|| format!("{stem}:{}", index + 1), str::to_owned);
        let fields: BTreeMap<String, String> = headers
            .iter()
            .zip(row.iter())
            .enumerate()
            .filter(|(c, (header, value))| {
                let c = Some(*c);
                c != id_column
                    && c != title_column
                    && c != Some(text_column)
                    && !header.is_empty()
                    && !value.trim().is_empty()
            })
            .map(|(_, (header, value))| (header.clone(), value.trim().to_owned()))
            .collect();
        records.add(
            line,
            Record {
                id,
                title: cell(title_column).unwrap_or_default().to_owned(),
                text: cell(Some(text_column)).unwrap_or_default().to_owned(),
                fields,
                vector: None,
            },
        );
    }
    records.finish()
}

fn table(
    path: &Path,
    headers: &[String],
    rows: impl Iterator<Item = Row>,
    modified: i64,
) -> LoadedFile {
    let mut loaded = LoadedFile::default();
    let mut lines = String::new();
    for row in rows {
        match row {
            Ok(row) => {
                let cells: Vec<String> = headers
                    .iter()
                    .zip(row.iter().map(str::trim))
                    .filter(|(_, value)| !value.is_empty())
                    .map(|(header, value)| {
                        if header.is_empty() {
                            value.to_owned()
                        } else {
                            format!("{header}: {value}")
                        }
                    })
                    .collect();
                lines.push_str(&cells.join(" | "));
                lines.push('\n');
            }
            Err((line, reason)) => loaded.record_failures.push(failure(path, line, reason)),
        }
    }
    let text = normalize(&lines);
    if !text.is_empty() {
        let document = file_document(path, file_stem(path), text, "csv", modified);
        loaded.documents.push(document);
    }
    loaded
}

fn column(headers: &[String], names: &[&str]) -> Option<usize> {
    headers
        .iter()
        .position(|header| names.iter().any(|name| header.eq_ignore_ascii_case(name)))
}

/// The line a record starts on (csv counts from 1, as editors do).
fn line_number(line: u64) -> usize {
    usize::try_from(line).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use crate::error::IngestError;
    use crate::load::{load_file, tests::fixture};

    #[test]
    fn rows_are_records_when_there_is_a_text_column() {
        let dir = tempfile::tempdir().expect("tempdir");
        let csv = "ID,Title,Text,project,created_at\n\
                   a1,First,\"Hello,\n  world\",kumo,2024-03-01\n\
                   ,Second,Second text,,\n\
                   a3,Third,,kumo,\n\
                   a4,short row\n\
                   a1,Dup,again,,\n";
        let path = fixture(&dir, "faq.csv", csv.as_bytes());
        let loaded = load_file(&path, 11).expect("load");
        let name = path.to_string_lossy();

        let ids: Vec<&str> = loaded.documents.iter().map(|d| d.doc_id.as_str()).collect();
        assert_eq!(ids, ["a1", "faq:2"]);
        let first = &loaded.documents[0];
        assert_eq!(
            (first.title.as_str(), first.text.as_str()),
            ("First", "Hello,\nworld")
        );
        assert_eq!(first.source, format!("{name}#L2"));
        assert_eq!(first.modified, 1_709_251_200);
        assert_eq!(first.metadata["project"], "kumo");
        assert_eq!(first.metadata["doc_type"], "csv-record");
        assert!(!first.metadata.contains_key("Text") && !first.metadata.contains_key("ID"));
        let second = &loaded.documents[1];
        assert_eq!(second.source, format!("{name}#L4"));
        assert_eq!(second.modified, 11);
        assert!(!second.metadata.contains_key("project"));

        let reasons: Vec<&str> = loaded
            .record_failures
            .iter()
            .map(|f| f.reason.as_str())
            .collect();
        assert_eq!(
            reasons,
            [
                "line 5: text is empty",
                "line 6: expected 5 fields, found 2",
                "line 7: duplicate doc_id \"a1\" (first on line 2)",
            ]
        );
    }

    #[test]
    fn a_table_without_text_column_is_one_document() {
        let dir = tempfile::tempdir().expect("tempdir");
        let csv = "plan,price,note\nStarter,$12,\nPro,$30,per user\n";
        let path = fixture(&dir, "plans.csv", csv.as_bytes());
        let loaded = load_file(&path, 1).expect("load");
        let [doc] = loaded.documents.as_slice() else {
            panic!("expected one document, got {:?}", loaded.documents);
        };
        assert_eq!(doc.title, "plans");
        assert_eq!(doc.doc_id, path.to_string_lossy());
        assert_eq!(
            doc.text,
            "plan: Starter | price: $12\nplan: Pro | price: $30 | note: per user"
        );
        assert_eq!(doc.metadata["doc_type"], "csv");
    }

    #[test]
    fn a_header_without_rows_has_no_documents() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = fixture(&dir, "empty.csv", b"doc_id,text\n");
        let err = load_file(&path, 0).unwrap_err();
        assert!(matches!(err, IngestError::NoDocuments { .. }), "{err}");
    }
}
