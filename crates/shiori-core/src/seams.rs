use thiserror::Error;

/// The error an [`EmbedError`] was caused by, whatever its type.
pub type EmbedSource = Box<dyn std::error::Error + Send + Sync>;

/// Why an embedder could not embed. Each kind says what failed (`what`: a path, a tensor, a
/// count) and keeps the error that caused it, if any, as its `source`; the message is
/// `<kind>: <what>: <source>`.
#[derive(Debug, Error)]
pub enum EmbedError {
    #[error("model files not found: {}", Detail(.what, .source))]
    ModelNotFound {
        what: String,
        #[source]
        source: Option<EmbedSource>,
    },
    #[error("tokenizer failed: {}", Detail(.what, .source))]
    Tokenizer {
        what: String,
        #[source]
        source: Option<EmbedSource>,
    },
    #[error("model inference failed: {}", Detail(.what, .source))]
    Inference {
        what: String,
        #[source]
        source: Option<EmbedSource>,
    },
    #[error("embedding cache failed: {}", Detail(.what, .source))]
    Cache {
        what: String,
        #[source]
        source: Option<EmbedSource>,
    },
}

impl EmbedError {
    /// Model files (named by `what`) are missing or unreadable.
    pub fn model_not_found(what: impl Into<String>) -> EmbedError {
        EmbedError::ModelNotFound {
            what: what.into(),
            source: None,
        }
    }

    pub fn tokenizer(what: impl Into<String>) -> EmbedError {
        EmbedError::Tokenizer {
            what: what.into(),
            source: None,
        }
    }

    pub fn inference(what: impl Into<String>) -> EmbedError {
        EmbedError::Inference {
            what: what.into(),
            source: None,
        }
    }

    pub fn cache(what: impl Into<String>) -> EmbedError {
        EmbedError::Cache {
            what: what.into(),
            source: None,
        }
    }

    /// The same failure, caused by `source`.
    pub fn because(mut self, source: impl Into<EmbedSource>) -> EmbedError {
        let (EmbedError::ModelNotFound { source: slot, .. }
        | EmbedError::Tokenizer { source: slot, .. }
        | EmbedError::Inference { source: slot, .. }
        | EmbedError::Cache { source: slot, .. }) = &mut self;
        *slot = Some(source.into());
        self
    }
}

/// `what: source`, or either alone.
struct Detail<'a>(&'a str, &'a Option<EmbedSource>);

impl std::fmt::Display for Detail<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.0, self.1) {
            (what, None) => f.write_str(what),
            ("", Some(source)) => write!(f, "{source}"),
            (what, Some(source)) => write!(f, "{what}: {source}"),
        }
    }
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
