//! A JSONL file read a batch of records at a time, so that a file of any size is indexed in
//! bounded memory. A line that is not UTF-8 fails alone, like any other bad line.

use super::jsonl::parse_line;
use super::records::Records;
use super::{LoadedFile, BINARY_SNIFF_BYTES};
use crate::error::IngestError;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

/// One record per line: `doc_id`/`_id` and `text` required, `title` optional, `vector` (an
/// array of numbers) optional, other scalar fields kept as metadata. Blank lines are skipped;
/// a bad line fails alone.
pub(super) fn load(path: &Path, text: &str, modified: i64) -> Result<LoadedFile, IngestError> {
    let mut stream = JsonlStream::new(path, text.as_bytes(), modified);
    Ok(stream.next_batch(usize::MAX)?.unwrap_or_default())
}

const BYTE_ORDER_MARK: &[u8] = b"\xEF\xBB\xBF";

/// The records of one JSONL file, in order, in batches.
pub struct JsonlStream<R> {
    reader: R,
    path: PathBuf,
    records: Records,
    lines_read: usize,
    bytes_read: u64,
    yielded_any: bool,
    finished: bool,
}

impl JsonlStream<BufReader<File>> {
    /// Opens `path`, refusing a file that looks binary. `modified` (Unix seconds) is every
    /// record's time unless the record carries its own.
    pub fn open(path: &Path, modified: i64) -> Result<Self, IngestError> {
        let io = |source| IngestError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut reader = BufReader::with_capacity(1 << 20, File::open(path).map_err(io)?);
        let head = reader.fill_buf().map_err(io)?;
        if head.iter().take(BINARY_SNIFF_BYTES).any(|&b| b == 0) {
            return Err(IngestError::Binary {
                path: path.to_path_buf(),
            });
        }
        Ok(JsonlStream::new(path, reader, modified))
    }
}

impl<R: BufRead> JsonlStream<R> {
    pub fn new(path: &Path, reader: R, modified: i64) -> Self {
        JsonlStream {
            reader,
            path: path.to_path_buf(),
            records: Records::new(path, "jsonl", modified),
            lines_read: 0,
            bytes_read: 0,
            yielded_any: false,
            finished: false,
        }
    }

    /// How far into the file the batches so far have read.
    pub fn bytes_read(&self) -> u64 {
        self.bytes_read
    }

    /// The documents and failures of the next `lines` lines; `None` once the file is done. A
    /// file that ends without a single record or failure is an error ("no documents found").
    pub fn next_batch(&mut self, lines: usize) -> Result<Option<LoadedFile>, IngestError> {
        if self.finished {
            return Ok(None);
        }
        let mut line = Vec::new();
        let mut taken = 0;
        while taken < lines {
            line.clear();
            let read =
                self.reader
                    .read_until(b'\n', &mut line)
                    .map_err(|source| IngestError::Io {
                        path: self.path.clone(),
                        source,
                    })?;
            if read == 0 {
                self.finished = true;
                break;
            }
            self.lines_read += 1;
            self.bytes_read += read as u64;
            taken += 1;
            let bytes = match line.strip_prefix(BYTE_ORDER_MARK) {
                Some(rest) if self.lines_read == 1 => rest,
                _ => &line,
            };
            match parse_line(bytes) {
                Ok(Some(record)) => self.records.add(self.lines_read, record),
                Ok(None) => {}
                Err(reason) => self.records.fail(self.lines_read, reason),
            }
        }
        let batch = self.records.take();
        let empty = batch.documents.is_empty() && batch.record_failures.is_empty();
        if self.finished && empty {
            if self.yielded_any {
                return Ok(None);
            }
            return Err(IngestError::NoDocuments {
                path: self.path.clone(),
            });
        }
        self.yielded_any |= !empty;
        Ok(Some(batch))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(bytes: &'static [u8]) -> JsonlStream<&'static [u8]> {
        JsonlStream::new(Path::new("big.jsonl"), bytes, 0)
    }

    fn reasons(batch: &LoadedFile) -> Vec<String> {
        batch
            .record_failures
            .iter()
            .map(|f| f.reason.clone())
            .collect()
    }

    #[test]
    fn batches_keep_line_numbers_ids_and_vectors_across_the_file() {
        let mut records = stream(
            b"\xEF\xBB\xBF{\"_id\": \"a\", \"text\": \"one\", \"vector\": [0.5, 1]}\n\
              {\"_id\": \"b\", \"text\": \"two\"}\n\
              \n\
              {\"_id\": \"a\", \"text\": \"again\"}\n\
              {\"_id\": \"c\", \"text\": \"\xFF\"}\n\
              {\"_id\": \"d\", \"text\": \"four\", \"vector\": [1, \"x\"]}\n",
        );
        let first = records.next_batch(2).unwrap().unwrap();
        let ids: Vec<&str> = first.documents.iter().map(|d| d.doc_id.as_str()).collect();
        assert_eq!(ids, ["a", "b"]);
        assert_eq!(first.vectors["a"], [0.5, 1.0]);
        assert!(!first.vectors.contains_key("b"));
        let second = records.next_batch(10).unwrap().unwrap();
        assert!(second.documents.is_empty() && second.vectors.is_empty());
        assert_eq!(
            reasons(&second),
            [
                "line 4: duplicate doc_id \"a\" (first on line 1)",
                "line 5: not valid UTF-8 at byte 22",
                "line 6: vector must be a non-empty array of finite numbers",
            ]
        );
        assert!(records.next_batch(10).unwrap().is_none());
    }

    #[test]
    fn a_file_without_records_has_no_documents() {
        let error = stream(b"\n  \n").next_batch(10).err();
        assert!(matches!(error, Some(IngestError::NoDocuments { .. })));
    }
}
