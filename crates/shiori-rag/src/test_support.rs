//! Fixtures shared by the unit tests: hits, a corpus that records its queries, and chat models
//! that talk real HTTP to a scripted OpenAI-compatible server.

use crate::{Corpus, Models, PipelineParams, Pipelines, RagError};
use serde_json::{json, Value};
use shiori_core::Retrieval;
use shiori_core::{ChatModel, Chunk, Hit, PriceTable, RelevanceVerdict, Source};
use shiori_llm::{Endpoint, OpenAiChat, RetryPolicy};
use shiori_mock::{MockServer, Recorded, Reply};
use std::sync::Mutex;
use std::time::Duration;

/// A source titled `title` (from `title.md`) with `text`.
pub fn source(title: &str, text: &str) -> Source {
    Source {
        doc_id: title.to_string(),
        chunk_id: format!("{title}#0"),
        title: title.to_string(),
        source: format!("{title}.md"),
        score: 1.0,
        text: text.to_string(),
    }
}

pub fn hit(doc_id: &str, score: f32) -> Hit {
    hit_with_text(doc_id, doc_id, score)
}

pub fn hit_with_text(doc_id: &str, text: &str, score: f32) -> Hit {
    Hit {
        chunk: Chunk {
            chunk_id: format!("{doc_id}#0"),
            doc_id: doc_id.to_string(),
            title: doc_id.to_string(),
            source: format!("{doc_id}.md"),
            text: text.to_string(),
            index: 0,
            total: 1,
            modified: 0,
            content_hash: String::new(),
            metadata: Default::default(),
        },
        score,
        dense_score: Some(score),
        bm25_score: None,
    }
}

/// A corpus of fixed documents: a query finds the documents whose text shares a word with it
/// (all of them for the original question), and every query is recorded with its `k`. Its
/// verdict refuses when the best hit's cosine is below `cosine_cut`.
pub struct FixedCorpus {
    pub hits: Vec<Hit>,
    pub queries: Mutex<Vec<(String, usize)>>,
    pub cosine_cut: f32,
    /// The vector every retrieval says it embedded the query as (`Retrieval::query_vector`).
    pub query_vector: Option<Vec<f32>>,
}

impl FixedCorpus {
    pub fn new(docs: &[(&str, &str)]) -> FixedCorpus {
        FixedCorpus {
            hits: docs
                .iter()
                .enumerate()
                .map(|(rank, (id, text))| hit_with_text(id, text, 0.9 - rank as f32 * 0.1))
                .collect(),
            queries: Mutex::new(Vec::new()),
            cosine_cut: 0.855,
            query_vector: None,
        }
    }

    pub fn queries(&self) -> Vec<(String, usize)> {
        self.queries.lock().unwrap().clone()
    }
}

impl Corpus for FixedCorpus {
    fn retrieve(&self, query: &str, k: usize) -> Result<Retrieval, RagError> {
        self.queries.lock().unwrap().push((query.to_string(), k));
        let words: Vec<String> = query
            .to_lowercase()
            .split_whitespace()
            .map(str::to_string)
            .collect();
        let hits: Vec<Hit> = self
            .hits
            .iter()
            .filter(|hit| {
                let text = hit.chunk.text.to_lowercase();
                words
                    .iter()
                    .any(|word| word.len() > 3 && text.contains(word.as_str()))
            })
            .take(k)
            .cloned()
            .collect();
        let best = hits.first().and_then(|hit| hit.dense_score);
        let verdict = RelevanceVerdict {
            refused: best.is_none_or(|cosine| cosine < self.cosine_cut),
            reason: format!("best cosine {best:?}, cut {}", self.cosine_cut),
        };
        Ok(Retrieval {
            hits,
            signals: None,
            verdict,
            embed_ms: 0.0,
            retrieve_ms: 0.0,
            stages: Default::default(),
            reranked: None,
            query_vector: self.query_vector.clone(),
        })
    }
}

/// Tokens every scripted completion reports.
pub const PROMPT_TOKENS: u64 = 100;
pub const COMPLETION_TOKENS: u64 = 10;

/// An OpenAI chat completion saying `text`.
pub fn completion(text: &str) -> Reply {
    Reply::json(json!({
        "model": "scripted",
        "choices": [{"message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": PROMPT_TOKENS, "completion_tokens": COMPLETION_TOKENS}
    }))
}

/// An OpenAI chat completion asking for one tool call.
pub fn tool_call(id: &str, name: &str, arguments: Value) -> Reply {
    Reply::json(json!({
        "model": "scripted",
        "choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [
            {"id": id, "type": "function",
             "function": {"name": name, "arguments": arguments.to_string()}}]}}],
        "usage": {"prompt_tokens": PROMPT_TOKENS, "completion_tokens": COMPLETION_TOKENS}
    }))
}

/// The system and last user message of a recorded chat request.
pub fn prompt_of(request: &Recorded) -> (String, String) {
    let body = request.json();
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let text = |role: &str| {
        messages
            .iter()
            .rev()
            .find(|m| m["role"] == role)
            .and_then(|m| m["content"].as_str())
            .unwrap_or_default()
            .to_string()
    };
    (text("system"), text("user"))
}

/// A scripted OpenAI-compatible server: `script` sees each request's system and user prompt.
pub fn llm_server(
    script: impl Fn(&str, &str, &Recorded) -> Reply + Send + Sync + 'static,
) -> MockServer {
    MockServer::start(move |request| {
        let (system, user) = prompt_of(request);
        script(&system, &user, request)
    })
}

pub fn model(server: &MockServer, name: &str) -> OpenAiChat {
    let endpoint = Endpoint::new(server.url()).with_retry(RetryPolicy {
        max_retries: 2,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(50),
    });
    OpenAiChat::new(endpoint, name).unwrap()
}

/// The number `[n]` the prompt gives the source whose heading contains `needle`.
pub fn source_number(user_prompt: &str, needle: &str) -> Option<usize> {
    user_prompt.lines().find_map(|line| {
        let rest = line.strip_prefix('[')?;
        let (number, heading) = rest.split_once(']')?;
        heading
            .contains(needle)
            .then(|| number.parse().ok())
            .flatten()
    })
}

/// Pipelines with one model for every step and no web search.
pub fn one_model_pipelines<'a>(
    corpus: &'a dyn Corpus,
    model: &'a dyn ChatModel,
    prices: &'a PriceTable,
    params: PipelineParams,
) -> Pipelines<'a> {
    Pipelines {
        corpus,
        embedder: None,
        models: Models {
            answer: Some(model),
            ..Models::default()
        },
        web: None,
        prices,
        params,
    }
}

/// Sizes for tests. Not defaults: the engine's `[pipeline]` holds those, one per setting.
/// Pipelines without a chat model or an embedder: the extractive answer by shared words.
pub fn no_model_pipelines<'a>(corpus: &'a dyn Corpus, prices: &'a PriceTable) -> Pipelines<'a> {
    Pipelines {
        corpus,
        embedder: None,
        models: Models::default(),
        web: None,
        prices,
        params: test_params(),
    }
}

pub fn test_params() -> PipelineParams {
    PipelineParams {
        top_k: 5,
        queries: 4,
        max_context: 5,
        web_results: 3,
        max_steps: 4,
        rrf_k: 60.0,
        max_tokens: Some(800),
        refuse_irrelevant: false,
        history_tokens: 1_000,
    }
}
