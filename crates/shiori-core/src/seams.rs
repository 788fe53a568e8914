use thiserror::Error;

/// Why an embedder could not embed.
#[derive(Debug, Error)]
pub enum EmbedError {
    #[error("model files not found: {0}")]
    ModelNotFound(String),
    #[error("tokenizer failed: {0}")]
    Tokenizer(String),
    #[error("model inference failed: {0}")]
    Inference(String),
    #[error("embedding cache failed: {0}")]
    Cache(String),
}

/// Turns text into L2-normalised vectors, so that cosine similarity is a dot product.
pub trait Embedder: Send + Sync {
    /// Identifies the model and its settings; part of every cache key and stored with the index.
    fn model_id(&self) -> &str;
    fn dimension(&self) -> usize;
    /// Embeds document text. Implementations batch internally; callers may pass any number.
    fn embed_passages(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;
    /// Embeds a search query (some models embed queries differently from passages).
    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError>;
    /// How many tokens the model reads for passage `text`, its prefix and special tokens
    /// included; `None` when the model's tokenizer is not at hand (embedding APIs).
    fn count_tokens(&self, _text: &str) -> Option<usize> {
        None
    }
    /// The longest passage in tokens the model reads as one piece; `None` when unknown.
    fn max_tokens(&self) -> Option<usize> {
        None
    }
}

/// Why an index operation failed.
#[derive(Debug, Error)]
pub enum IndexError {
    #[error("vector has dimension {got}, index expects {expected}")]
    Dimension { expected: usize, got: usize },
    #[error("index I/O failed at {path}: {message}")]
    Io { path: String, message: String },
    #[error("index backend failed: {0}")]
    Backend(String),
}

/// Nearest-neighbour search over chunk vectors, keyed by the store's chunk key.
pub trait VectorIndex: Send + Sync {
    fn dimension(&self) -> usize;
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Adds or replaces vectors.
    fn upsert(&mut self, entries: &[(u64, Vec<f32>)]) -> Result<(), IndexError>;
    fn remove(&mut self, keys: &[u64]) -> Result<(), IndexError>;
    /// Makes every change so far durable.
    fn persist(&mut self) -> Result<(), IndexError>;
    /// The `k` nearest keys by cosine similarity, best first, keeping only keys `allowed` accepts.
    fn search(
        &self,
        query: &[f32],
        k: usize,
        allowed: Option<&(dyn Fn(u64) -> bool + Sync)>,
    ) -> Result<Vec<(u64, f32)>, IndexError>;
}

/// Full-text ranking (BM25) over chunk text, keyed by the store's chunk key.
pub trait KeywordIndex: Send + Sync {
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Adds the text of chunks, `(key, title, text)`, under keys not in the index (removed
    /// first if they were).
    fn add(&mut self, entries: &[(u64, &str, &str)]) -> Result<(), IndexError>;
    fn remove(&mut self, keys: &[u64]) -> Result<(), IndexError>;
    /// Makes every change so far durable and visible to searches.
    fn persist(&mut self) -> Result<(), IndexError>;
    /// The `k` best keys by BM25 among the `allowed` ones (all when `None`), best first.
    fn search(
        &self,
        query: &str,
        k: usize,
        allowed: Option<&AllowedKeys>,
    ) -> Result<Vec<(u64, f32)>, IndexError>;
}

/// The keys a filtered search may return, shared with the index's search threads.
pub type AllowedKeys = std::sync::Arc<std::collections::HashSet<u64>>;
