//! What answering needs beyond retrieval, built from `shiori.toml`: the chat models by name, the
//! web search client and the price table. API keys are read from the environment here and
//! nowhere else.

use crate::config::{
    Config, EmbedderConfig, EmbedderKind, ModelConfig, PipelineConfig, ProviderKind, RetryConfig,
    WebSearchConfig, WebSearchKind, CONFIG_FILE,
};
use crate::EngineError;
use serde::Serialize;
use shiori_core::{
    ChatError, ChatModel, ChatRequest, ChatResponse, Embedder, Price, PriceTable, TokenSink,
    WebSearch,
};
use shiori_llm::{
    AnthropicChat, ApiEmbedder, EmbeddingProtocol, Endpoint, GeminiChat, LlmReranker, OpenAiChat,
    RetryPolicy, WebSearchClient, WebSearchProvider,
};
use shiori_models::{assets::ShioriHome, GgufChatModel, LocalSettings};
use shiori_rag::{Models, PipelineKind};
use std::collections::BTreeMap;
use std::time::Duration;

/// The chat models, web search and prices of one configuration.
pub struct Generation {
    models: BTreeMap<String, Box<dyn ChatModel>>,
    web: Option<Box<dyn WebSearch>>,
    prices: PriceTable,
    pipeline: PipelineConfig,
    /// See [`Config::answer_model`].
    answer_model: Option<String>,
}

impl Generation {
    /// Builds every `[llm.models]` entry and the `[web_search]` client; checks that the
    /// `[pipeline]` model names point at configured models.
    pub fn from_config(config: &Config) -> Result<Generation, EngineError> {
        let mut models = BTreeMap::new();
        let mut prices = PriceTable::default();
        for (name, model) in &config.llm.models {
            let built = build_chat_model(name, model, &config.llm.retry)?;
            prices.0.insert(
                built.model_id().to_string(),
                Price {
                    input_per_million: model.input_per_million,
                    output_per_million: model.output_per_million,
                },
            );
            models.insert(name.clone(), built);
        }
        let pipeline = config.pipeline.clone();
        for (field, name) in [
            ("answer_model", &pipeline.answer_model),
            ("grade_model", &pipeline.grade_model),
            ("query_model", &pipeline.query_model),
            ("judge_model", &pipeline.judge_model),
            ("rerank_model", &pipeline.rerank_model),
        ] {
            if let Some(name) = name {
                if !models.contains_key(name) {
                    return Err(config_error(format!(
                        "[pipeline] {field} = {name:?} names no [llm.models.{name}] table"
                    )));
                }
            }
        }
        let web = config
            .web_search
            .as_ref()
            .map(|web| build_web_search(web, &config.llm.retry))
            .transpose()?;
        Ok(Generation {
            models,
            web,
            prices,
            pipeline,
            answer_model: config.answer_model().map(str::to_string),
        })
    }

    /// The model of each pipeline step; without an answer model the pipelines answer
    /// extractively.
    pub fn models(&self) -> Models<'_> {
        let named = |name: &Option<String>| name.as_deref().and_then(|name| self.model(name).ok());
        Models {
            answer: named(&self.answer_model),
            grade: named(&self.pipeline.grade_model),
            query: named(&self.pipeline.query_model),
        }
    }

    /// A configured model by its `[llm.models]` name.
    pub fn model(&self, name: &str) -> Result<&dyn ChatModel, EngineError> {
        self.models
            .get(name)
            .map(|model| model.as_ref())
            .ok_or_else(|| {
                let known: Vec<&str> = self.models.keys().map(String::as_str).collect();
                EngineError::Invalid(format!(
                    "no chat model named {name:?} in [llm.models] (configured: {})",
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                ))
            })
    }

    /// The LLM reranker `--rerank` uses.
    pub fn reranker(&self) -> Result<LlmReranker<'_>, EngineError> {
        let models = self.models();
        let model = self
            .pipeline
            .rerank_model
            .as_deref()
            .and_then(|name| self.model(name).ok())
            .or(models.grade)
            .or(models.answer)
            .ok_or_else(|| {
                EngineError::Invalid(
                    "--rerank needs a chat model: configure [llm.models] and [pipeline] rerank_model"
                        .to_string(),
                )
            })?;
        Ok(LlmReranker::new(model))
    }

    pub fn web(&self) -> Option<&dyn WebSearch> {
        self.web.as_deref()
    }

    pub fn prices(&self) -> &PriceTable {
        &self.prices
    }

    /// The pipelines to try, in order (see [`PipelineConfig::chain`]).
    pub fn chain(&self, chosen: Option<PipelineKind>) -> Vec<PipelineKind> {
        self.pipeline.chain(chosen)
    }
}

fn config_error(message: String) -> EngineError {
    EngineError::Config {
        path: CONFIG_FILE.to_string(),
        message,
    }
}

fn retry_policy(retry: &RetryConfig) -> RetryPolicy {
    RetryPolicy {
        max_retries: retry.max_retries,
        base_delay: Duration::from_millis(retry.base_delay_ms),
        max_delay: Duration::from_millis(retry.max_delay_ms),
    }
}

/// The key in `variable`, if it is set and not empty.
fn api_key(variable: &str) -> Option<String> {
    std::env::var(variable)
        .ok()
        .filter(|key| !key.trim().is_empty())
}

/// The endpoint of the provider `entry` configures, with its key from `variable`. When
/// `base_url` is the provider's own API (`own_url`'s host) a missing key fails here, before any
/// request goes out: a request without one would only come back refused.
fn keyed_endpoint(
    entry: &str,
    (base_url, own_url): (&str, Option<&str>),
    variable: &str,
    retry: &RetryConfig,
) -> Result<Endpoint, EngineError> {
    let key = api_key(variable);
    if is_own_api(base_url, own_url) && key.is_none() {
        return Err(EngineError::MissingApiKey {
            entry: entry.to_string(),
            variable: variable.to_string(),
        });
    }
    Ok(Endpoint::new(base_url)
        .with_api_key(key)
        .with_api_key_env(variable)
        .with_retry(retry_policy(retry)))
}

/// Whether `base_url` is the provider's own API (on the host of `own_url`), which needs a key;
/// a server of one's own at another address (llama.cpp, vLLM, Ollama, a proxy) may need none.
fn is_own_api(base_url: &str, own_url: Option<&str>) -> bool {
    own_url.is_some_and(|own| host_of(base_url).eq_ignore_ascii_case(host_of(own)))
}

fn host_of(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    let host_port = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    host_port.split(':').next().unwrap_or(host_port)
}

/// How long an answer may run when every configured model is an HTTP one (or none is).
const REMOTE_ANSWER_LIMIT: Duration = Duration::from_secs(30);
/// The same with a local model configured: on a loaded 2-core machine a local answer has taken
/// 33 s, and a limit that cuts it off only trades the model's answer for the quoted one.
const LOCAL_ANSWER_LIMIT: Duration = Duration::from_secs(120);

/// How long an answer may run before its models are stopped and it quotes its sources
/// instead: generous when a local model (far slower than a hosted one) is configured.
pub fn answer_time_limit(config: &Config) -> Duration {
    let local = config
        .llm
        .models
        .values()
        .any(|model| model.provider == ProviderKind::Local);
    match local {
        true => LOCAL_ANSWER_LIMIT,
        false => REMOTE_ANSWER_LIMIT,
    }
}

/// The registry chat models `init` looks for, best first.
const INSTALLED_CHAT_MODELS: [&str; 2] = ["qwen2.5-coder-0.5b", "smollm2"];

/// The `[llm.models]` name `init` gives the local chat model it adopts.
const ADOPTED_MODEL_NAME: &str = "local";

/// Gives a configuration with no chat model the best local one installed in `home`, as
/// `[llm.models.local]`, so a fresh data directory answers offline with a generated, cited
/// answer. Returns the model's name, if one was added.
pub fn adopt_installed_chat_model(config: &mut Config, home: &ShioriHome) -> Option<&'static str> {
    if !config.llm.models.is_empty() {
        return None;
    }
    let name = INSTALLED_CHAT_MODELS
        .into_iter()
        .find(|name| home.chat_model_path(name).is_file())?;
    let model = ModelConfig::new(ProviderKind::Local, name);
    config
        .llm
        .models
        .insert(ADOPTED_MODEL_NAME.to_string(), model);
    Some(name)
}

/// What `init --no-chat-model` did to the configured chat models.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ChatModelsDropped {
    /// The local model `init` had adopted and that is now removed.
    pub removed: Option<String>,
    /// The `[llm.models]` names left, configured by hand: their answers go on.
    pub kept: Vec<String>,
}

/// Undoes [`adopt_installed_chat_model`]: removes `[llm.models.local]` when it is exactly the
/// table `init` writes and no `[pipeline]` setting names it. A chat model configured by hand (a
/// remote one, a local one with a path or settings of its own) is the user's and stays; it is
/// listed in `kept` so the caller can say answers are not extractive yet.
pub fn drop_adopted_chat_model(config: &mut Config) -> ChatModelsDropped {
    let is_adopted = config
        .llm
        .models
        .get(ADOPTED_MODEL_NAME)
        .is_some_and(|model| {
            INSTALLED_CHAT_MODELS
                .iter()
                .any(|name| *model == ModelConfig::new(ProviderKind::Local, name))
        });
    let pipeline = &config.pipeline;
    let named_by_pipeline = [
        &pipeline.answer_model,
        &pipeline.grade_model,
        &pipeline.query_model,
        &pipeline.judge_model,
        &pipeline.rerank_model,
    ]
    .into_iter()
    .any(|name| name.as_deref() == Some(ADOPTED_MODEL_NAME));
    let removed = match is_adopted && !named_by_pipeline {
        true => config
            .llm
            .models
            .remove(ADOPTED_MODEL_NAME)
            .map(|model| model.model),
        false => None,
    };
    ChatModelsDropped {
        removed,
        kept: config.llm.models.keys().cloned().collect(),
    }
}

/// Builds one chat model from its `[llm.models.NAME]` table, each of its calls a span of the
/// trace (`model_call`).
pub fn build_chat_model(
    name: &str,
    config: &ModelConfig,
    retry: &RetryConfig,
) -> Result<Box<dyn ChatModel>, EngineError> {
    let model = build_provider_model(name, config, retry)?;
    Ok(Box::new(crate::traced_chat::TracedChat::new(name, model)))
}

/// One match arm per provider kind.
fn build_provider_model(
    name: &str,
    config: &ModelConfig,
    retry: &RetryConfig,
) -> Result<Box<dyn ChatModel>, EngineError> {
    let (default_url, default_key) = match config.provider {
        ProviderKind::Local => {
            let home = ShioriHome::from_env()?;
            let path = home.chat_model_path(&config.model);
            let settings = LocalSettings {
                context_tokens: config.context_tokens,
                threads: config.threads,
            };
            return Ok(Box::new(GgufChatModel::load_with(&path, settings)?));
        }
        ProviderKind::Openai => (Some("https://api.openai.com/v1"), "OPENAI_API_KEY"),
        ProviderKind::Azure => (None, "AZURE_OPENAI_API_KEY"),
        ProviderKind::Anthropic => (Some("https://api.anthropic.com"), "ANTHROPIC_API_KEY"),
        ProviderKind::Gemini => (
            Some("https://generativelanguage.googleapis.com"),
            "GEMINI_API_KEY",
        ),
    };
    let base_url = config
        .base_url
        .as_deref()
        .or(default_url)
        .ok_or_else(|| config_error(format!("[llm.models.{name}] needs base_url")))?;
    // An Azure resource is always Azure's own API; the others are at their default address.
    let own_url = match config.provider {
        ProviderKind::Azure => Some(base_url),
        _ => default_url,
    };
    let mut endpoint = keyed_endpoint(
        &format!("[llm.models.{name}]"),
        (base_url, own_url),
        config.api_key_env.as_deref().unwrap_or(default_key),
        retry,
    )?;
    if let Some(seconds) = config.timeout_secs {
        let timeout = Duration::try_from_secs_f64(seconds).map_err(|_| {
            config_error(format!(
                "[llm.models.{name}] timeout_secs = {seconds} is not a duration"
            ))
        })?;
        endpoint = endpoint.with_timeout(timeout);
    }
    let model: Box<dyn ChatModel> = match config.provider {
        ProviderKind::Openai => Box::new(OpenAiChat::new(endpoint, &config.model)?),
        ProviderKind::Azure => {
            let version = config.api_version.as_deref().ok_or_else(|| {
                config_error(format!("[llm.models.{name}] needs api_version for Azure"))
            })?;
            Box::new(OpenAiChat::new(endpoint, &config.model)?.azure(version))
        }
        ProviderKind::Anthropic => Box::new(AnthropicChat::new(endpoint, &config.model)?),
        ProviderKind::Gemini => Box::new(GeminiChat::new(endpoint, &config.model)?),
        ProviderKind::Local => unreachable!("local models return above"),
    };
    Ok(match config.context_tokens {
        Some(context_tokens) => Box::new(DeclaredContext {
            model,
            context_tokens,
        }),
        None => model,
    })
}

/// A model whose context window `[llm.models.NAME] context_tokens` declares.
struct DeclaredContext {
    model: Box<dyn ChatModel>,
    context_tokens: usize,
}

impl ChatModel for DeclaredContext {
    fn model_id(&self) -> &str {
        self.model.model_id()
    }

    fn context_tokens(&self) -> Option<usize> {
        Some(self.context_tokens)
    }

    fn chat(
        &self,
        request: &ChatRequest,
        on_token: Option<TokenSink<'_>>,
    ) -> Result<ChatResponse, ChatError> {
        self.model.chat(request, on_token)
    }
}

/// Builds the `[embedder]` of an API kind (`openai` or `gemini`).
pub(crate) fn build_api_embedder(
    config: &EmbedderConfig,
    retry: &RetryConfig,
) -> Result<Box<dyn Embedder>, EngineError> {
    let (protocol, default_url, default_key) = match config.kind {
        EmbedderKind::Gemini => (
            EmbeddingProtocol::Gemini,
            "https://generativelanguage.googleapis.com",
            "GEMINI_API_KEY",
        ),
        EmbedderKind::Openai | EmbedderKind::Minilm | EmbedderKind::E5 => (
            EmbeddingProtocol::OpenAi,
            "https://api.openai.com/v1",
            "OPENAI_API_KEY",
        ),
    };
    let model = config
        .model
        .as_deref()
        .ok_or_else(|| config_error("[embedder] needs model for an embedding API".to_string()))?;
    let base_url = config.base_url.as_deref().unwrap_or(default_url);
    let endpoint = keyed_endpoint(
        "[embedder]",
        (base_url, Some(default_url)),
        config.api_key_env.as_deref().unwrap_or(default_key),
        retry,
    )?;
    Ok(Box::new(ApiEmbedder::new(
        protocol,
        endpoint,
        model,
        config.dimension,
    )?))
}

fn build_web_search(
    config: &WebSearchConfig,
    retry: &RetryConfig,
) -> Result<Box<dyn WebSearch>, EngineError> {
    let (provider, default_url, default_key) = match config.provider {
        WebSearchKind::Tavily => (
            WebSearchProvider::Tavily,
            Some("https://api.tavily.com"),
            "TAVILY_API_KEY",
        ),
        WebSearchKind::Brave => (
            WebSearchProvider::Brave,
            Some("https://api.search.brave.com"),
            "BRAVE_API_KEY",
        ),
        WebSearchKind::Searxng => (WebSearchProvider::Searxng, None, "SEARXNG_API_KEY"),
    };
    let base_url = config
        .base_url
        .as_deref()
        .or(default_url)
        .ok_or_else(|| config_error("[web_search] needs base_url for SearXNG".to_string()))?;
    // A SearXNG instance (no default address) is one's own.
    let endpoint = keyed_endpoint(
        "[web_search]",
        (base_url, default_url),
        config.api_key_env.as_deref().unwrap_or(default_key),
        retry,
    )?;
    Ok(Box::new(WebSearchClient::new(provider, endpoint)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use shiori_mock::{MockServer, Reply};

    #[test]
    fn builds_models_embedders_and_the_fallback_chain_from_config() {
        let server = MockServer::start(|_| {
            Reply::json(json!({"data": [{"index": 0, "embedding": [0.0, 3.0, 4.0]}]}))
        });
        let text = format!(
            r#"
[embedder]
kind = "openai"
model = "emb"
base_url = "{url}"
api_key_env = "SHIORI_ENGINE_TEST_EMBED_KEY"

[llm.models.fast]
provider = "gemini"
model = "gemini-flash"
api_key_env = "SHIORI_ENGINE_TEST_GEMINI_KEY"
input_per_million = 0.1

[llm.models.big]
provider = "anthropic"
model = "claude"
api_key_env = "SHIORI_ENGINE_TEST_ANTHROPIC_KEY"

[pipeline]
default = "crag"
answer_model = "big"
grade_model = "fast"
"#,
            url = server.url()
        );
        let config: Config = toml::from_str(&text).unwrap();
        std::env::set_var("SHIORI_ENGINE_TEST_EMBED_KEY", "emb-secret");
        let embedder = build_api_embedder(&config.embedder, &config.llm.retry).unwrap();
        assert_eq!(embedder.dimension(), 3);
        assert_eq!(embedder.embed_query("q").unwrap(), vec![0.0, 0.6, 0.8]);
        assert_eq!(
            server.requests()[0].header("authorization"),
            Some("Bearer emb-secret")
        );

        std::env::set_var("SHIORI_ENGINE_TEST_GEMINI_KEY", "gemini-secret");
        std::env::set_var("SHIORI_ENGINE_TEST_ANTHROPIC_KEY", "anthropic-secret");
        let generation = Generation::from_config(&config).unwrap();
        let models = generation.models();
        assert_eq!(models.answer.unwrap().model_id(), "anthropic:claude");
        assert_eq!(models.grade.unwrap().model_id(), "gemini:gemini-flash");
        assert!(models.query.is_none());
        assert_eq!(
            generation.prices().0["gemini:gemini-flash"].input_per_million,
            0.1
        );
        let names = |chain: Vec<PipelineKind>| chain.iter().map(|k| k.name()).collect::<Vec<_>>();
        assert_eq!(
            names(generation.chain(None)),
            ["crag", "fusion-crag", "basic", "extractive"]
        );
        assert_eq!(
            names(generation.chain(Some(PipelineKind::Basic))),
            ["basic", "extractive"]
        );

        let mut broken = config.clone();
        broken.pipeline.grade_model = Some("tiny".to_string());
        let error = Generation::from_config(&broken).err().unwrap().to_string();
        assert!(
            error.contains("grade_model") && error.contains("tiny"),
            "{error}"
        );
        let error = toml::from_str::<Config>("[pipeline]\nfallback = [\"basic\", \"rag-fusion\"]")
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("rag-fusion") && error.contains("fusion-crag"),
            "{error}"
        );
    }

    /// Never set: the key of every provider below is missing.
    const UNSET: &str = "SHIORI_ENGINE_TEST_UNSET_KEY";

    fn missing_key(entry: &str, variable: &str) -> String {
        format!(
            "{entry} needs an API key: {variable} is not set (or set api_key_env to the variable \
             that holds it)"
        )
    }

    #[test]
    fn only_a_provider_that_needs_a_key_fails_without_it_naming_the_variable() {
        let azure = "base_url = \"https://x.openai.azure.com/openai/deployments/gpt\"\n\
                     api_version = \"2024-10-21\"\n";
        for (provider, more) in [
            ("openai", ""),
            ("openai", "base_url = \"https://API.openai.com/v1/\"\n"),
            ("azure", azure),
            ("anthropic", ""),
            ("gemini", ""),
        ] {
            let text = format!(
                "[llm.models.gpt]\nprovider = \"{provider}\"\nmodel = \"m\"\n\
                 api_key_env = \"{UNSET}\"\n{more}"
            );
            let config: Config = toml::from_str(&text).unwrap();
            let error = Generation::from_config(&config).err().unwrap().to_string();
            assert_eq!(error, missing_key("[llm.models.gpt]", UNSET), "{text}");
        }

        let mut embedder: Config = toml::from_str(&format!(
            "[embedder]\nkind = \"openai\"\nmodel = \"e\"\napi_key_env = \"{UNSET}\"\n\
             dimension = 3\n"
        ))
        .unwrap();
        let error = build_api_embedder(&embedder.embedder, &embedder.llm.retry)
            .err()
            .unwrap()
            .to_string();
        assert_eq!(error, missing_key("[embedder]", UNSET));
        embedder.embedder.kind = EmbedderKind::Gemini;
        let error = build_api_embedder(&embedder.embedder, &embedder.llm.retry)
            .err()
            .unwrap()
            .to_string();
        assert_eq!(error, missing_key("[embedder]", UNSET));

        let web: Config = toml::from_str(&format!(
            "[web_search]\nprovider = \"brave\"\napi_key_env = \"{UNSET}\"\n"
        ))
        .unwrap();
        let error = Generation::from_config(&web).err().unwrap().to_string();
        assert_eq!(error, missing_key("[web_search]", UNSET));

        // A server of one's own (or a proxy) at its base_url needs none.
        let text = format!(
            "[llm.models.llama]\nprovider = \"openai\"\nmodel = \"qwen\"\n\
             base_url = \"http://127.0.0.1:8080/v1\"\napi_key_env = \"{UNSET}\"\n\n\
             [llm.models.claude]\nprovider = \"anthropic\"\nmodel = \"c\"\n\
             base_url = \"http://127.0.0.1:4000\"\napi_key_env = \"{UNSET}\"\n\n\
             [embedder]\nkind = \"openai\"\nmodel = \"e\"\nbase_url = \"http://127.0.0.1:8080/v1\"\n\
             api_key_env = \"{UNSET}\"\ndimension = 3\n\n\
             [web_search]\nprovider = \"searxng\"\nbase_url = \"http://127.0.0.1:8888\"\n\
             api_key_env = \"{UNSET}\"\n"
        );
        let config: Config = toml::from_str(&text).unwrap();
        let generation = Generation::from_config(&config).unwrap();
        assert_eq!(generation.model("llama").unwrap().model_id(), "openai:qwen");
        assert!(generation.web().is_some());
        let embedder = build_api_embedder(&config.embedder, &config.llm.retry).unwrap();
        assert_eq!(embedder.dimension(), 3);
    }

    const OPENAI: Option<&str> = Some("https://api.openai.com/v1");

    #[test]
    fn tells_openai_s_own_api_from_other_servers() {
        assert!(is_own_api("https://api.openai.com/v1", OPENAI));
        assert!(is_own_api("https://user@api.openai.com:443", OPENAI));
        assert!(!is_own_api("http://localhost:11434/v1", OPENAI));
        assert!(!is_own_api("https://api.openai.com.example.org/v1", OPENAI));
        assert!(!is_own_api("http://proxy.local/api.openai.com", OPENAI));
    }

    #[test]
    fn no_chat_model_removes_only_the_model_init_adopted() {
        let config = |text: &str| -> Config { toml::from_str(text).unwrap() };
        let adopted = "[llm.models.local]\nprovider = \"local\"\nmodel = \"qwen2.5-coder-0.5b\"\n";
        let mut only_adopted = config(adopted);
        assert_eq!(
            drop_adopted_chat_model(&mut only_adopted),
            ChatModelsDropped {
                removed: Some("qwen2.5-coder-0.5b".into()),
                kept: Vec::new()
            }
        );
        assert!(only_adopted.llm.models.is_empty());

        let remote = "[llm.models.cheap]\nprovider = \"openai\"\nmodel = \"gpt-4o-mini\"\n";
        let mut beside_a_remote = config(&format!("{adopted}{remote}"));
        let dropped = drop_adopted_chat_model(&mut beside_a_remote);
        assert_eq!(dropped.removed.as_deref(), Some("qwen2.5-coder-0.5b"));
        assert_eq!(dropped.kept, ["cheap"]);

        for by_hand in [
            remote.to_string(),
            "[llm.models.local]\nprovider = \"local\"\nmodel = \"/models/mine.gguf\"\n".into(),
            format!("{adopted}context_tokens = 8192\n"),
            format!("[pipeline]\njudge_model = \"local\"\n{adopted}"),
        ] {
            let mut configured = config(&by_hand);
            let before = configured.llm.models.clone();
            let dropped = drop_adopted_chat_model(&mut configured);
            assert_eq!(dropped.removed, None, "{by_hand}");
            assert_eq!(configured.llm.models, before, "{by_hand}");
            assert_eq!(dropped.kept.len(), 1, "{by_hand}");
        }
    }
}
