//! `shiori bench generate`: prompt and generation speed of a local GGUF chat model on a
//! RAG-shaped prompt (passages of a corpus, then a question), or of an OpenAI-compatible server
//! given the same prompt.

use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use shiori_core::{ChatMessage, ChatModel, ChatRequest};
use shiori_engine::{build_chat_model, ModelConfig, ProviderKind, RetryConfig};
use shiori_models::assets::ShioriHome;
use shiori_models::GgufChatModel;

use crate::cli::Cli;
use crate::output;

/// What `bench generate` measures.
pub struct GenerateBench<'a> {
    pub corpus: &'a Path,
    /// The local GGUF: it runs the prompts, or, with a server, counts the prompt's tokens.
    pub model: &'a str,
    pub server: Option<Server>,
    pub prompt_tokens: usize,
    pub max_tokens: u32,
    pub runs: usize,
}

/// An OpenAI-compatible server (its base URL, e.g. `http://127.0.0.1:8000/v1`) and the model
/// name it serves.
pub struct Server {
    pub url: String,
    pub model: String,
}

/// One timed reply.
struct Timing {
    first_token_seconds: f64,
    total_seconds: f64,
    prompt_tokens: u64,
    completion_tokens: u64,
    /// Streamed pieces of text.
    pieces: u64,
}

/// Builds a prompt of about `prompt_tokens` tokens from the corpus, then times `runs` greedy
/// replies. The first streamed piece marks the end of the prompt pass, so prompt tokens/s is
/// prompt tokens over time-to-first-token and generation tokens/s counts the tokens after it.
pub fn generate(cli: &Cli, home: &ShioriHome, bench: &GenerateBench) -> Result<()> {
    if bench.runs == 0 {
        bail!("--runs must be at least 1");
    }
    let path = home.chat_model_path(bench.model);
    let started = Instant::now();
    let model = GgufChatModel::load(&path)?;
    let load_seconds = started.elapsed().as_secs_f64();
    let (passages, context) = passages_for(&model, bench)?;
    let server = match &bench.server {
        Some(server) => Some((server, server_model(server)?)),
        None => None,
    };
    let mut timings = Vec::new();
    let mut usage_counted = false;
    for run in 1..=bench.runs {
        let request = request(run, &context, bench.max_tokens);
        let mut timing = match &server {
            Some((server, chat)) => time_reply(chat.as_ref(), &request)
                .with_context(|| format!("the server at {}", server.url))?,
            None => {
                model.forget_cached_prompt();
                time_reply(&model, &request)?
            }
        };
        // Servers that stream no usage (llama-cpp-python's) send one piece per token.
        if timing.prompt_tokens == 0 {
            timing.prompt_tokens = model.prompt_ids(&request)?.len() as u64;
            timing.completion_tokens = timing.pieces;
            usage_counted = true;
        }
        timings.push(timing);
    }
    let last = timings
        .last()
        .map_or((0, 0), |t| (t.prompt_tokens, t.completion_tokens));
    let prompt_rate = median(
        timings
            .iter()
            .map(|t| t.prompt_tokens as f64 / t.first_token_seconds),
    );
    let generation_rate = median(timings.iter().filter_map(Timing::generation_rate));
    let first_token = median(timings.iter().map(|t| t.first_token_seconds));
    // Measured in this process, they say nothing of a server's.
    let (load_seconds, peak_rss_mb) = match bench.server {
        Some(_) => (None, None),
        None => (
            Some(load_seconds),
            crate::bench::proc_status_bytes("VmHWM").map(|bytes| bytes as f64 / 1e6),
        ),
    };
    let measured = match &server {
        Some((_, chat)) => chat.model_id().to_string(),
        None => model.model_id().to_string(),
    };
    let result = serde_json::json!({
        "model": measured,
        "server": bench.server.as_ref().map(|server| &server.url),
        "path": path,
        "passages": passages,
        "load_seconds": load_seconds,
        "prompt_tokens": last.0,
        "completion_tokens": last.1,
        "runs": bench.runs,
        "prompt_tokens_per_second": prompt_rate,
        "generation_tokens_per_second": generation_rate,
        "first_token_seconds": first_token,
        "peak_rss_mb": peak_rss_mb,
        "kernels": bench.server.is_none().then(|| model.kernel_features()),
        "usage": if usage_counted { "counted here" } else { "reported" },
    });
    output::print(cli.json, &result, || {
        let load = load_seconds.map_or(String::new(), |s| {
            format!("loaded in {s:.2} s, kernels {}; ", model.kernel_features())
        });
        format!(
            "{measured}: {load}prompt {} tokens at {prompt_rate:.1} tokens/s, first token after \
             {first_token:.2} s, generation {} tokens at {generation_rate:.1} tokens/s (median \
             of {}); peak RSS {}",
            last.0,
            last.1,
            bench.runs,
            peak_rss_mb.map_or("not measured".to_string(), |mb| format!("{mb:.0} MB")),
        )
    })
}

/// Passages of the corpus, one per line, until the prompt holds `prompt_tokens` tokens (by the
/// local model's tokenizer); how many were taken and the text they make.
fn passages_for(model: &GgufChatModel, bench: &GenerateBench) -> Result<(usize, String)> {
    let mut passages = shiori_eval::json_lines(bench.corpus)?
        .into_iter()
        .filter_map(|(_, record)| record.get("text")?.as_str().map(str::to_string));
    let mut context = String::new();
    let mut used = 0;
    while model
        .prompt_ids(&request(1, &context, bench.max_tokens))?
        .len()
        < bench.prompt_tokens
    {
        let Some(passage) = passages.next() else {
            break;
        };
        context.push_str(&format!("- {passage}\n"));
        used += 1;
    }
    Ok((used, context))
}

/// The prompt of run `run`. The run's number opens it, so a server that keeps the last prompt's
/// KV cache computes each prompt whole.
fn request(run: usize, context: &str, max_tokens: u32) -> ChatRequest {
    ChatRequest {
        messages: vec![
            ChatMessage::system(format!("Run {run}. Answer the question from the passages.")),
            ChatMessage::user(format!(
                "Passages:\n{context}\nQuestion: What does each passage say? One sentence \
                 each, in order."
            )),
        ],
        max_tokens: Some(max_tokens),
        temperature: Some(0.0),
        ..ChatRequest::default()
    }
}

/// The server through Shiori's OpenAI-compatible provider, streamed. It is not retried: a
/// retried request would time two.
fn server_model(server: &Server) -> Result<Box<dyn ChatModel>> {
    let config = ModelConfig {
        base_url: Some(server.url.clone()),
        ..ModelConfig::new(ProviderKind::Openai, &server.model)
    };
    let retry = RetryConfig {
        max_retries: 0,
        ..RetryConfig::default()
    };
    Ok(build_chat_model("server", &config, &retry)?)
}

fn time_reply(model: &dyn ChatModel, request: &ChatRequest) -> Result<Timing> {
    let start = Instant::now();
    let mut first_piece = None;
    let mut pieces = 0;
    let response = model.chat(
        request,
        Some(&mut |_: &str| {
            first_piece.get_or_insert_with(|| start.elapsed().as_secs_f64());
            pieces += 1;
            std::ops::ControlFlow::Continue(())
        }),
    )?;
    let total_seconds = start.elapsed().as_secs_f64();
    Ok(Timing {
        first_token_seconds: first_piece.unwrap_or(total_seconds),
        total_seconds,
        prompt_tokens: response.usage.prompt_tokens,
        completion_tokens: response.usage.completion_tokens,
        pieces,
    })
}

impl Timing {
    /// Tokens per second after the first.
    fn generation_rate(&self) -> Option<f64> {
        let after_first = self.total_seconds - self.first_token_seconds;
        (self.completion_tokens > 1 && after_first > 0.0)
            .then(|| (self.completion_tokens - 1) as f64 / after_first)
    }
}

fn median(values: impl Iterator<Item = f64>) -> f64 {
    let mut values: Vec<f64> = values.collect();
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(0.0)
}
