//! Loaders per format, normalisation, section paths, chunkers and content hashing: files in,
//! `Chunk`s out.

mod chunk;
mod error;
mod hash;
pub mod limits;
mod load;
mod markdown;
mod normalize;
pub mod samples;
mod sections;
mod structure;
mod walk;

pub use chunk::{chunk_document, ChunkError, CONTEXT_SEPARATOR};
pub use error::{IngestError, IngestFailure};
pub use hash::{content_hash, file_content_hash};
pub use limits::Budget;
pub use load::{is_supported, load_bytes, load_bytes_counting, load_file, JsonlStream, LoadedFile};
pub use normalize::normalize;
pub use samples::SampleError;
pub use sections::{Sections, SECTION_PATH_KEY};
pub use walk::{discover, unix_nanos, DiscoveredFile, PathFilter, WalkOptions, Walked};

/// Which reading of a file's bytes its chunks come from. Raised whenever the same bytes would
/// be read into other text or other chunks (a loader, the document model or the chunker
/// changed), so a file indexed by an earlier reader is read again instead of keeping the text
/// that reader made of it. 2: PDF pages laid out from their glyphs. 3: an HTML table of
/// name and value pairs read as pairs. 4: an MkDocs admonition marker left in an HTML page's
/// text read as its title. 5: no chunk ends on a line introducing a list; a page converted
/// from a site's Markdown read as the site shows it. 6: a PDF's front matter printed under its
/// title dropped; a Markdown page's summary in its front matter read as its first paragraph.
/// 7: an HTML table inside Markdown read as rows that carry their header.
pub const READER: &str = "7";
