//! The seams of generation: chat models, rerankers and web search. Implementations live in
//! `shiori-llm` (HTTP providers) and `shiori-models` (local llama.cpp models).

use serde::{Deserialize, Serialize};
use std::ops::ControlFlow;
use std::time::Duration;
use thiserror::Error;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
    /// The result of a tool call, answering the assistant message that asked for it.
    Tool,
}

/// A tool the model may call: its JSON-Schema `parameters` as the providers expect them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub parameters: serde_json::Value,
}

/// A call the model asked for; `id` ties the tool's answer back to it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: serde_json::Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage {
    pub role: Role,
    pub content: String,
    /// Calls an assistant message made (empty otherwise).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For `Role::Tool`: the call this message answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl ChatMessage {
    pub fn new(role: Role, content: impl Into<String>) -> ChatMessage {
        ChatMessage {
            role,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }

    pub fn system(content: impl Into<String>) -> ChatMessage {
        ChatMessage::new(Role::System, content)
    }

    pub fn user(content: impl Into<String>) -> ChatMessage {
        ChatMessage::new(Role::User, content)
    }

    pub fn assistant(content: impl Into<String>) -> ChatMessage {
        ChatMessage::new(Role::Assistant, content)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    pub messages: Vec<ChatMessage>,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f32>,
    /// Ask for a single JSON object as the reply.
    #[serde(default)]
    pub json_mode: bool,
    /// In JSON mode, the JSON Schema the object must follow: local models are held to it by
    /// grammar-constrained sampling, providers that support it are sent it; others see only
    /// `json_mode`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json_schema: Option<serde_json::Value>,
    #[serde(default)]
    pub tools: Vec<ToolSpec>,
    /// The shape of a plain-text reply as a GBNF grammar (rule `root`): local models sample
    /// under it; HTTP providers have no such setting and are held to the prompt alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grammar: Option<String>,
}

/// Tokens one or more calls consumed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

impl Usage {
    pub fn total(&self) -> u64 {
        self.prompt_tokens + self.completion_tokens
    }
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatResponse {
    pub content: String,
    #[serde(default)]
    pub tool_calls: Vec<ToolCall>,
    pub usage: Usage,
    /// The model that answered, as the provider named it.
    pub model: String,
}

/// Why a chat call failed, sorted by what the caller should do about it.
#[derive(Debug, Clone, Error)]
pub enum ChatError {
    /// Worth retrying: rate limits, 5xx, timeouts, dropped connections.
    #[error("transient failure from {provider}: {message}")]
    Transient {
        provider: String,
        message: String,
        /// What the provider asked us to wait (`Retry-After`), if it said.
        retry_after: Option<Duration>,
    },
    /// Retrying cannot help: bad key, bad request, unknown model, unparsable reply.
    #[error("permanent failure from {provider}: {message}")]
    Permanent { provider: String, message: String },
    /// The prompt does not fit the model's context window.
    #[error("the prompt is too long for {provider}: {message}")]
    ContextTooLong { provider: String, message: String },
    /// The token sink broke off the generation; the upstream request was dropped. `usage` is
    /// what the generation spent until then, where the provider knows it (a local model), so
    /// a reply the caller stopped is still accounted for.
    #[error("{provider}: the generation was cancelled")]
    Cancelled { provider: String, usage: Usage },
}

/// Receives generated text as it streams in; `Break` stops the generation (and drops the
/// upstream request). Any `FnMut(&str) -> ControlFlow<()>` is one.
pub trait TokenReceiver {
    /// The next piece of the reply.
    fn token(&mut self, text: &str) -> ControlFlow<()>;

    /// Asked while a model computes and no text comes (a local model between passes over a
    /// long prompt), so a caller that has gone stops the work there rather than at the first
    /// token.
    fn keep_going(&mut self) -> ControlFlow<()> {
        ControlFlow::Continue(())
    }

    /// Whether the caller wants the reply piece by piece. A receiver that only listens for a
    /// stop says no: an HTTP provider then asks for the whole reply at once, while a local model,
    /// which computes it piece by piece anyway, still stops where it is told to.
    fn wants_pieces(&self) -> bool {
        true
    }
}

impl<F: FnMut(&str) -> ControlFlow<()>> TokenReceiver for F {
    fn token(&mut self, text: &str) -> ControlFlow<()> {
        self(text)
    }
}

/// Where a streamed reply goes.
pub type TokenSink<'a> = &'a mut dyn TokenReceiver;

/// A chat-completion model: an HTTP provider or a local model.
pub trait ChatModel: Send + Sync {
    /// The provider and model, e.g. `openai:gpt-4o-mini` or `local:smollm2-135m`.
    fn model_id(&self) -> &str;
    /// Tokens the model's context window holds (prompt and completion), when known.
    fn context_tokens(&self) -> Option<usize> {
        None
    }
    /// Runs one completion; with `on_token`, streams the text as it is generated (if the
    /// receiver [wants pieces](TokenReceiver::wants_pieces)) and stops once it breaks off.
    fn chat(
        &self,
        request: &ChatRequest,
        on_token: Option<TokenSink<'_>>,
    ) -> Result<ChatResponse, ChatError>;
}

/// Why a reranker could not score.
#[derive(Debug, Error)]
pub enum RerankError {
    #[error("reranker model failed: {0}")]
    Model(String),
    #[error("reranker chat model failed: {0}")]
    Chat(#[from] ChatError),
}

/// Re-scores passages against a query (higher is more relevant), one score per passage in order.
pub trait Reranker: Send + Sync {
    fn name(&self) -> &str;
    fn score(&self, query: &str, passages: &[&str]) -> Result<Vec<f32>, RerankError>;
}

/// One result of a web search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WebResult {
    pub title: String,
    pub url: String,
    /// The snippet or extracted content the provider returned.
    pub content: String,
}

/// Why a web search failed; the same split as [`ChatError`], so retries treat both alike.
#[derive(Debug, Clone, Error)]
pub enum WebSearchError {
    #[error("transient web search failure from {provider}: {message}")]
    Transient {
        provider: String,
        message: String,
        retry_after: Option<Duration>,
    },
    #[error("web search failed at {provider}: {message}")]
    Permanent { provider: String, message: String },
}

/// A web search provider (Tavily, Brave, SearXNG, …).
pub trait WebSearch: Send + Sync {
    fn name(&self) -> &str;
    /// At most `max_results` results, best first.
    fn search(&self, query: &str, max_results: usize) -> Result<Vec<WebResult>, WebSearchError>;
}

/// Untrusted text (a document, a conversation turn) made safe to put inside a prompt's tagged
/// block: its markup characters are escaped, so it can neither close the block nor open another.
pub fn escape_markup(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
