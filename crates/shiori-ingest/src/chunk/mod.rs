//! Chunkers: split a document's text into pieces that fit the embedding model, then wrap each
//! piece as a `Chunk`.

mod boundary;
mod fixed;
mod markdown;
mod recursive;
mod semantic;
mod token;

use crate::hash::content_hash;
use crate::sections::SECTION_PATH_KEY;
use shiori_core::{embedding_input, Chunk, ChunkerConfig, ChunkerKind, Document, Embedder};
use thiserror::Error;

/// Why a document could not be chunked (only the model-driven chunkers can fail).
#[derive(Debug, Error)]
pub enum ChunkError {
    #[error("the {0} chunker needs the embedder, and none was given")]
    NoEmbedder(&'static str),
    #[error("the token chunker needs a local embedder's tokenizer (e5 or minilm)")]
    NoTokenizer,
    #[error("the semantic chunker could not embed sentences: {0}")]
    Embed(#[from] shiori_core::EmbedError),
    /// Raised by callers that chunk a whole file, against [`crate::limits::MAX_CHUNKS_PER_FILE`].
    #[error("over the per-file budget: it {0}")]
    OverBudget(crate::limits::Budget),
}

/// A piece of text and the headings it sits under, outermost first.
struct Piece {
    text: String,
    headings: Vec<String>,
}

impl Piece {
    fn plain(text: String) -> Piece {
        Piece {
            text,
            headings: Vec::new(),
        }
    }
}

/// Between the parts of a chunk's context: `Travel policy › Booking › Flights`.
pub const CONTEXT_SEPARATOR: &str = " › ";

/// What a chunk is about beyond its own words: the sections its page lies in
/// ([`crate::sections`], kept as the document's `section_path`), the document's title, then the
/// headings above the chunk (a part that repeats the one before it is not said twice). The
/// chunk's title is this context, so it is embedded and searched with the chunk and shown with
/// its quotes: a long page split under headings is still found by the page's subject, and a
/// page of a handbook by whose handbook it is.
fn context(document: &Document, headings: &[String]) -> String {
    let sections = document
        .metadata
        .get(SECTION_PATH_KEY)
        .map(|path| path.split(CONTEXT_SEPARATOR).collect::<Vec<_>>())
        .unwrap_or_default();
    let mut parts: Vec<&str> = sections
        .into_iter()
        .chain(std::iter::once(document.title.as_str()))
        .chain(headings.iter().map(String::as_str))
        .filter(|part| !part.is_empty())
        .collect();
    parts.dedup();
    parts.join(CONTEXT_SEPARATOR)
}

/// Splits `document` with the configured chunker. Chunk ids are `{doc_id}#{index}`; chunks
/// inherit the document's source, time and metadata (plus `header_path` from the Markdown
/// chunker), and take its title with the headings above them as theirs ([`context`]). Never returns empty chunks; an empty document has none. The token and
/// semantic chunkers use `embedder` (its tokenizer, its sentence vectors); the others ignore it.
pub fn chunk_document(
    document: &Document,
    config: &ChunkerConfig,
    embedder: Option<&dyn Embedder>,
) -> Result<Vec<Chunk>, ChunkError> {
    // A zero size would make no window progress; one char is the smallest meaningful chunk.
    let max = config.max_chars.max(1);
    let text = document.text.trim();
    let whole_record = config.records_whole && is_record(document) && text.chars().count() <= max;
    let pieces: Vec<Piece> = match config.kind {
        _ if text.is_empty() => Vec::new(),
        ChunkerKind::Record => vec![Piece::plain(text.to_owned())],
        _ if whole_record => vec![Piece::plain(text.to_owned())],
        ChunkerKind::Auto if is_markdown(document) => markdown::split(text, max),
        // A sheet's rows each carry their header, so a chunk may end after any row.
        ChunkerKind::Auto if is_sheet(document) => recursive::split(text, max)
            .into_iter()
            .map(Piece::plain)
            .collect(),
        ChunkerKind::Fixed | ChunkerKind::Auto => fixed::split(text, max, config.overlap_chars)
            .into_iter()
            .map(Piece::plain)
            .collect(),
        ChunkerKind::Recursive => recursive::split(text, max)
            .into_iter()
            .map(Piece::plain)
            .collect(),
        ChunkerKind::Markdown => markdown::split(text, max),
        ChunkerKind::Token => {
            let embedder = embedder.ok_or(ChunkError::NoEmbedder("token"))?;
            let limit = embedder.max_tokens().ok_or(ChunkError::NoTokenizer)?;
            let budget = config.max_tokens.map_or(limit, |wanted| wanted.min(limit));
            if embedder.count_tokens("").is_none() {
                return Err(ChunkError::NoTokenizer);
            }
            // Every count after the probe above comes from the same tokenizer.
            let count = |piece: &str| {
                embedder
                    .count_tokens(&embedding_input(&document.title, piece))
                    .unwrap_or(usize::MAX)
            };
            token::split(text, budget, &count)
                .into_iter()
                .map(Piece::plain)
                .collect()
        }
        ChunkerKind::Semantic => {
            let embedder = embedder.ok_or(ChunkError::NoEmbedder("semantic"))?;
            let embed = |sentences: &[&str]| embedder.embed_passages(sentences);
            semantic::split(text, max, config.similarity_threshold, &embed)?
                .into_iter()
                .map(Piece::plain)
                .collect()
        }
    };
    let total = count(pieces.len());
    Ok(pieces
        .into_iter()
        .enumerate()
        .map(|(index, piece)| {
            let mut metadata = document.metadata.clone();
            if !piece.headings.is_empty() {
                metadata.insert("header_path".to_owned(), piece.headings.join(" > "));
            }
            let title = context(document, &piece.headings);
            Chunk {
                chunk_id: format!("{}#{index}", document.doc_id),
                doc_id: document.doc_id.clone(),
                content_hash: content_hash(embedding_input(&title, &piece.text).as_bytes()),
                title,
                source: document.source.clone(),
                text: piece.text,
                index: count(index),
                total,
                modified: document.modified,
                metadata,
            }
        })
        .collect())
}

/// Documents whose loader keeps headings as `#` lines ([`crate::structure`]): Markdown, Word
/// and HTML.
fn is_markdown(document: &Document) -> bool {
    matches!(
        document.metadata.get("doc_type").map(String::as_str),
        Some("markdown" | "docx" | "html")
    )
}

/// Spreadsheet sheets, which their loader writes one row a line.
fn is_sheet(document: &Document) -> bool {
    document.metadata.get("doc_type").map(String::as_str) == Some("xlsx")
}

/// Records (JSONL lines, CSV rows) are written to be read whole.
fn is_record(document: &Document) -> bool {
    matches!(
        document.metadata.get("doc_type").map(String::as_str),
        Some("jsonl" | "csv-record")
    )
}

/// Chunk positions are `u32` in the store; no document gets near four billion chunks.
fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn document(doc_type: &str, text: &str) -> Document {
        Document {
            doc_id: "doc".into(),
            title: "Title".into(),
            source: "src/doc".into(),
            text: text.into(),
            modified: 77,
            metadata: BTreeMap::from([
                ("doc_type".to_owned(), doc_type.to_owned()),
                ("project".to_owned(), "kumo".to_owned()),
            ]),
        }
    }

    fn chunk(document: &Document, config: &ChunkerConfig) -> Vec<Chunk> {
        chunk_document(document, config, None).unwrap()
    }

    fn config(kind: ChunkerKind, max_chars: usize, overlap_chars: usize) -> ChunkerConfig {
        ChunkerConfig {
            kind,
            max_chars,
            overlap_chars,
            ..ChunkerConfig::default()
        }
    }

    #[test]
    fn chunks_carry_ids_positions_hashes_and_metadata() {
        let doc = document(
            "txt",
            "One sentence here. Two sentence here. Three sentence here.",
        );
        let chunks = chunk(&doc, &config(ChunkerKind::Fixed, 22, 0));
        assert_eq!(chunks.len(), 3);
        for (i, chunk) in chunks.iter().enumerate() {
            assert_eq!(chunk.chunk_id, format!("doc#{i}"));
            assert_eq!((chunk.index, chunk.total), (i as u32, 3));
            assert_eq!(
                (
                    chunk.doc_id.as_str(),
                    chunk.title.as_str(),
                    chunk.source.as_str()
                ),
                ("doc", "Title", "src/doc")
            );
            assert_eq!(chunk.modified, 77);
            assert_eq!(
                chunk.content_hash,
                content_hash(chunk.embedding_input().as_bytes())
            );
            assert_eq!(chunk.metadata, doc.metadata);
        }
        assert_eq!(chunks[1].text, "Two sentence here.");
    }

    #[test]
    fn records_that_fit_stay_whole() {
        let text = "First sentence. Second sentence. Third sentence.";
        let record = document("jsonl", text);
        let fixed = config(ChunkerKind::Fixed, 20, 0);
        assert_eq!(chunk(&record, &fixed).len(), 3, "too long to stay whole");
        let roomy = config(ChunkerKind::Fixed, 100, 5);
        assert_eq!(chunk(&record, &roomy).len(), 1);
        assert_eq!(chunk(&document("csv-record", text), &roomy).len(), 1);
        assert_eq!(
            chunk(&document("txt", text), &fixed).len(),
            3,
            "not a record"
        );
        let split_records = ChunkerConfig {
            records_whole: false,
            ..config(ChunkerKind::Recursive, 20, 0)
        };
        assert_eq!(chunk(&record, &split_records).len(), 3);
    }

    #[test]
    fn the_record_chunker_always_makes_one_chunk() {
        let doc = document("txt", &"word ".repeat(100));
        let chunks = chunk(&doc, &config(ChunkerKind::Record, 10, 0));
        assert_eq!(chunks.len(), 1);
        assert_eq!(chunks[0].text, doc.text.trim());
    }

    #[test]
    fn markdown_chunks_get_a_header_path_and_their_context_as_title() {
        let doc = document("markdown", "# Title\n## Install\nRun it.\n## Use\nClick.");
        let chunks = chunk(&doc, &config(ChunkerKind::Markdown, 100, 0));
        let paths: Vec<&str> = chunks
            .iter()
            .map(|c| c.metadata["header_path"].as_str())
            .collect();
        assert_eq!(paths, ["Title > Install", "Title > Use"]);
        assert_eq!(chunks[0].text, "Run it.");
        assert_eq!(chunks[0].title, "Title › Install");
        assert_eq!(
            chunks[0].embedding_input(),
            "Title › Install\nRun it.",
            "the context is embedded and searched with the text"
        );
        assert_eq!(chunks[0].metadata["project"], "kumo");
    }

    #[test]
    fn empty_documents_have_no_chunks() {
        for kind in [
            ChunkerKind::Fixed,
            ChunkerKind::Recursive,
            ChunkerKind::Markdown,
            ChunkerKind::Record,
        ] {
            assert!(chunk(&document("txt", " \n "), &config(kind, 0, 0)).is_empty());
        }
    }

    #[test]
    fn a_zero_size_still_terminates() {
        let chunks = chunk(&document("txt", "abc"), &config(ChunkerKind::Fixed, 0, 0));
        assert_eq!(
            chunks.iter().map(|c| c.text.as_str()).collect::<Vec<_>>(),
            ["a", "b", "c"]
        );
    }

    #[test]
    fn model_chunkers_need_an_embedder() {
        let doc = document("txt", "One. Two.");
        for kind in [ChunkerKind::Token, ChunkerKind::Semantic] {
            let error = chunk_document(&doc, &config(kind, 100, 0), None).unwrap_err();
            assert!(matches!(error, ChunkError::NoEmbedder(_)), "{error}");
        }
    }
}
