use thiserror::Error;

#[derive(Debug, Error)]
pub enum EngineError {
    #[error("cannot read config {path}: {message}")]
    Config { path: String, message: String },
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error(transparent)]
    Backup(#[from] crate::BackupError),
    #[error(transparent)]
    Ingest(#[from] shiori_ingest::IngestError),
    #[error(transparent)]
    Embed(#[from] shiori_core::EmbedError),
    #[error(transparent)]
    Store(#[from] shiori_store::StoreError),
    #[error(transparent)]
    Postgres(#[from] shiori_store_postgres::PostgresError),
    #[error(transparent)]
    Retrieve(#[from] shiori_retrieve::RetrieveError),
    #[error(transparent)]
    Analysis(#[from] shiori_analysis::AnalysisError),
    #[error(transparent)]
    Eval(#[from] shiori_eval::EvalError),
    #[error(transparent)]
    Chat(#[from] shiori_core::ChatError),
    #[error(transparent)]
    WebSearch(#[from] shiori_core::WebSearchError),
    #[error(transparent)]
    Rag(#[from] shiori_rag::RagError),
    #[error(transparent)]
    Rerank(#[from] shiori_core::RerankError),
    #[error(transparent)]
    Asset(#[from] shiori_models::assets::AssetError),
    #[error(transparent)]
    ModelLoad(#[from] shiori_models::ModelLoadError),
    #[error(transparent)]
    Watch(#[from] crate::watch::WatchError),
    #[error("{0}")]
    Invalid(String),
    /// A remote provider that refuses requests without a key has none: `entry` is the table
    /// that configures it (`[llm.models.gpt]`, `[embedder]`, `[web_search]`).
    #[error(
        "{entry} needs an API key: {variable} is not set (or set api_key_env to the variable \
         that holds it)"
    )]
    MissingApiKey { entry: String, variable: String },
    #[error("no random source for a conversation id: {0}")]
    Random(getrandom::Error),
    #[error("no conversation with conversation_id {0}")]
    UnknownConversation(shiori_core::ConversationId),
    #[error(
        "conversation {0} has {max} turns, the most one keeps: start a new conversation",
        max = crate::conversation::MAX_TURNS
    )]
    ConversationFull(shiori_core::ConversationId),
}

impl EngineError {
    /// Whether the store's database could not be reached or did not answer in time: the
    /// request may succeed when retried later.
    pub fn is_unavailable(&self) -> bool {
        match self {
            EngineError::Store(error)
            | EngineError::Retrieve(shiori_retrieve::RetrieveError::Store(error)) => {
                matches!(error, shiori_store::StoreError::Unavailable(_))
            }
            EngineError::Postgres(error) => error.is_unavailable(),
            EngineError::Rag(shiori_rag::RagError::Retrieval(inner)) => inner
                .downcast_ref::<EngineError>()
                .is_some_and(Self::is_unavailable),
            _ => false,
        }
    }
}

/// Why a `shiori.toml` that parses is still wrong, in the words shown after its path.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct ConfigProblem(pub(crate) String);
