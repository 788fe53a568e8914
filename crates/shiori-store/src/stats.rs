//! What a store says about itself.

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct StoreStats {
    pub files: u64,
    pub documents: u64,
    pub chunks: u64,
    pub embedder: String,
    pub dimension: usize,
    pub japanese_analyzer: String,
    pub vector_index: String,
    /// What BM25 searches run on.
    pub keyword_index: String,
    /// Why the derived indexes (BM25, vectors) were last rebuilt from the tables when the store
    /// was opened (a crash, a damaged file); `None` when they never were, or the store has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_rebuild: Option<String>,
    /// Each read replica and whether reads go to it (empty: the store has none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub replicas: Vec<ReplicaStatus>,
}

/// A read replica as the store last saw it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ReplicaStatus {
    /// Its address, without a password.
    pub name: String,
    /// Whether reads go to it now.
    pub serving: bool,
    /// How far its replay was behind the primary, when it answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lag_ms: Option<u64>,
    /// Why reads skip it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}
