//! Loaders per format, normalisation, chunkers and content hashing: files in, `Chunk`s out.

mod chunk;
mod error;
mod hash;
mod load;
mod markdown;
mod normalize;
pub mod samples;
mod structure;
mod walk;

pub use chunk::{chunk_document, ChunkError, CONTEXT_SEPARATOR};
pub use error::{IngestError, IngestFailure};
pub use hash::{content_hash, file_content_hash};
pub use load::{is_supported, load_bytes, load_bytes_counting, load_file, JsonlStream, LoadedFile};
pub use normalize::normalize;
pub use samples::SampleError;
pub use walk::{discover, unix_nanos, DiscoveredFile, PathFilter, WalkOptions};
