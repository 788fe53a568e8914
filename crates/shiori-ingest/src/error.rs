use crate::limits::Budget;
use std::fmt;
use std::path::PathBuf;
use thiserror::Error;

/// Why a file (or a walk root) could not be ingested. Every variant names the path.
#[derive(Debug, Error)]
pub enum IngestError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: file is empty", path.display())]
    Empty { path: PathBuf },
    #[error("{}: not valid UTF-8 at byte {offset}", path.display())]
    InvalidUtf8 { path: PathBuf, offset: usize },
    #[error("{}: looks binary (NUL bytes)", path.display())]
    Binary { path: PathBuf },
    #[error("{}: {message}", path.display())]
    Parse { path: PathBuf, message: String },
    #[error(
        "{}: unsupported file type (supported: .txt .md .markdown .html .htm .csv .jsonl .pdf \
         .docx .xlsx .pptx .png .jpg .jpeg .tif .tiff .webp)",
        path.display()
    )]
    Unsupported { path: PathBuf },
    #[error("{}: encrypted PDF (it needs a password; remove it to index the file)", path.display())]
    Encrypted { path: PathBuf },
    #[error("{}: over the per-file budget: it {budget}", path.display())]
    OverBudget { path: PathBuf, budget: Budget },
    #[error("{}: no documents found", path.display())]
    NoDocuments { path: PathBuf },
    #[error("{}: no such file or folder", path.display())]
    MissingRoot { path: PathBuf },
    #[error("invalid glob {pattern:?}: {source}")]
    InvalidGlob {
        pattern: String,
        source: globset::Error,
    },
}

/// A file or record that was skipped while the rest of the ingest went on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IngestFailure {
    pub path: PathBuf,
    pub reason: String,
}

impl fmt::Display for IngestFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.reason)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_path() {
        let err = IngestError::InvalidUtf8 {
            path: "a/b.txt".into(),
            offset: 7,
        };
        assert_eq!(err.to_string(), "a/b.txt: not valid UTF-8 at byte 7");
        let failure = IngestFailure {
            path: "x.jsonl".into(),
            reason: "line 3: missing text".into(),
        };
        assert_eq!(failure.to_string(), "x.jsonl: line 3: missing text");
    }
}
