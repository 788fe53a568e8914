use crate::Refusal;
use serde::{Deserialize, Serialize};

/// Which retrievers run for a query.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum RetrievalMode {
    Bm25,
    Dense,
    #[default]
    Hybrid,
}

impl RetrievalMode {
    /// Every mode, for surfaces that list the choices (an MCP tool's schema).
    pub const ALL: [RetrievalMode; 3] = [
        RetrievalMode::Dense,
        RetrievalMode::Bm25,
        RetrievalMode::Hybrid,
    ];
}

/// How hybrid mode merges the dense and BM25 rankings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum FusionKind {
    /// Reciprocal Rank Fusion: `sum 1 / (rrf_k + rank)`.
    Rrf,
    /// `alpha * dense + (1 - alpha) * bm25`, each min-max normalised over the candidates.
    Weighted,
    /// `z(cosine) + normalised_bm25_weight * (bm25 - mean) / mean`, the cosine standardised
    /// over the dense candidates and BM25 relative to its candidates' mean: neither part
    /// depends on the corpus, the query length or the embedder's cosine range.
    Normalised,
    /// Normalised fusion with a BM25 weight decided per query from the query's relevance
    /// signals (how much of BM25's first ten the dense retriever also found, how far BM25's
    /// best stands above its candidates' mean, how many chunks BM25 matched, the question's
    /// language), by a gate fitted on the dev sets.
    #[default]
    Adaptive,
    /// `dense cosine + bm25_weight * bm25`: raw scores. The weight fits one BM25 scale only,
    /// which grows with query length, field count and corpus statistics.
    Linear,
}

/// Boosts recent chunks: `score * ((1 - weight) + weight * 0.5^(age / half_life))`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimeDecay {
    pub weight: f32,
    pub half_life_days: f32,
}

/// Retrieval and answering parameters, the `[retrieval]` table of `shiori.toml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RetrievalConfig {
    pub mode: RetrievalMode,
    pub top_k: usize,
    /// How many candidates each retriever contributes before fusion.
    pub candidates: usize,
    pub fusion: FusionKind,
    pub rrf_k: f32,
    /// Dense weight of weighted fusion.
    pub alpha: f32,
    /// BM25 weight of linear fusion.
    pub bm25_weight: f32,
    /// BM25 weight of normalised fusion.
    pub normalised_bm25_weight: f32,
    /// When nothing retrieved is relevant enough to answer from (see [`Refusal`]). Earlier
    /// files' `threshold = 0.855` still reads, as `cosine:0.855`.
    #[serde(alias = "threshold")]
    pub refusal: Refusal,
    pub time_decay: Option<TimeDecay>,
    /// With a project filter: search its first project, then the related projects, and rank
    /// the first project's hits first.
    pub two_stage: bool,
    /// How many of the `top_k` places a two-stage search keeps for related projects' hits when
    /// they have any.
    pub related_hits: usize,
}

/// Adaptive fusion (README, Quality): normalised fusion puts both retrievers on a scale-free
/// footing per query, and its BM25 weight is decided per query by a gate fitted on eleven dev
/// sets and judged leaving each out; `normalised_bm25_weight` (3, chosen on jsquad-valid and
/// msmarco-5k) serves `fusion = "normalised"` only. The refusal is the embedder's calibrated
/// model at its balanced cut (README, Refusal).
impl Default for RetrievalConfig {
    fn default() -> Self {
        RetrievalConfig {
            mode: RetrievalMode::Hybrid,
            top_k: 5,
            candidates: 50,
            fusion: FusionKind::Adaptive,
            rrf_k: 60.0,
            alpha: 0.35,
            bm25_weight: 0.003,
            normalised_bm25_weight: 3.0,
            refusal: Refusal::Balanced,
            time_decay: None,
            two_stage: false,
            related_hits: 2,
        }
    }
}

/// Which chunker splits documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ChunkerKind {
    /// Markdown documents by header, everything else fixed size.
    #[default]
    Auto,
    /// Fixed size with overlap, snapped to sentence ends.
    Fixed,
    /// Splits on paragraph, line, sentence and word separators in turn until pieces fit.
    Recursive,
    /// Splits at Markdown headers, keeping the header path in metadata; long sections split further.
    Markdown,
    /// One document (record) = one chunk.
    Record,
    /// Sentences packed up to the embedder's token limit (`max_tokens`), counted with its own
    /// tokenizer; needs a local embedder.
    Token,
    /// Sentences grouped until the embedding similarity of adjacent sentences drops below
    /// `similarity_threshold` (or `max_chars` is reached).
    Semantic,
}

/// The `[chunker]` table of `shiori.toml`. Sizes are in characters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ChunkerConfig {
    pub kind: ChunkerKind,
    pub max_chars: usize,
    pub overlap_chars: usize,
    /// JSONL and CSV records become one chunk each when they fit in `max_chars`.
    pub records_whole: bool,
    /// The token chunker's limit per chunk, title and prefix included; the embedder's maximum
    /// sequence length when unset (and never above it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<usize>,
    /// The semantic chunker starts a new chunk where adjacent sentences' cosine similarity is
    /// below this. Tuned for multilingual-e5-small, whose cosines run high; all-MiniLM-L6-v2
    /// needs about 0.3.
    pub similarity_threshold: f32,
}

impl Default for ChunkerConfig {
    fn default() -> Self {
        ChunkerConfig {
            kind: ChunkerKind::Auto,
            max_chars: 800,
            overlap_chars: 100,
            records_whole: true,
            max_tokens: None,
            similarity_threshold: 0.82,
        }
    }
}
