//! HTTP clients for language-model providers, embedding APIs and web search, over blocking
//! `reqwest`: OpenAI-compatible chat completions (OpenAI, Azure, Ollama, vLLM, llama.cpp,
//! LM Studio), Anthropic Messages, Gemini `generateContent`; OpenAI and Gemini embeddings;
//! Tavily, Brave and SearXNG. Owns the error taxonomy of those calls (transient, permanent,
//! context too long), retries with exponential backoff, jitter and `Retry-After`, a breaker
//! that stops calling a server that cannot be reached for a while, and an LLM reranker over
//! any chat model.

mod anthropic;
mod breaker;
mod embeddings;
mod gemini;
mod http;
mod openai;
mod rerank;
mod retry;
#[cfg(test)]
mod test_support;
mod websearch;

pub use anthropic::AnthropicChat;
pub use embeddings::{ApiEmbedder, EmbeddingProtocol};
pub use gemini::GeminiChat;
pub use http::{error_chain, Endpoint};
pub use openai::OpenAiChat;
pub use rerank::LlmReranker;
pub use retry::{parse_retry_after, RetryPolicy, Retryable};
pub use websearch::{WebSearchClient, WebSearchProvider};
