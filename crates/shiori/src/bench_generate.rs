//! `shiori bench generate`: prompt and generation speed of a local GGUF chat model on a
//! RAG-shaped prompt (passages of a corpus, then a question).

use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Result};
use shiori_core::{ChatMessage, ChatModel, ChatRequest};
use shiori_models::assets::ShioriHome;
use shiori_models::GgufChatModel;

use crate::cli::Cli;
use crate::output;

/// Builds a prompt of about `prompt_tokens` tokens from the corpus, then times `runs` greedy
/// replies. The first streamed piece marks the end of the prompt pass, so prompt tokens/s is
/// prompt tokens over time-to-first-token and generation tokens/s counts the tokens after it.
pub fn generate(
    cli: &Cli,
    home: &ShioriHome,
    corpus: &Path,
    model: &str,
    prompt_tokens: usize,
    max_tokens: u32,
    runs: usize,
) -> Result<()> {
    if runs == 0 {
        bail!("--runs must be at least 1");
    }
    let path = home.chat_model_path(model);
    let started = Instant::now();
    let model = GgufChatModel::load(&path)?;
    let load_seconds = started.elapsed().as_secs_f64();

    let mut passages = shiori_eval::json_lines(corpus)?
        .into_iter()
        .filter_map(|(_, record)| record.get("text")?.as_str().map(str::to_string));
    let mut context = String::new();
    let mut passages_used = 0;
    let request = loop {
        let request = ChatRequest {
            messages: vec![
                ChatMessage::system("Answer the question from the passages. Be brief."),
                ChatMessage::user(format!(
                    "Passages:\n{context}\nQuestion: What do these passages have in common?"
                )),
            ],
            max_tokens: Some(max_tokens),
            ..ChatRequest::default()
        };
        if model.prompt_ids(&request)?.len() >= prompt_tokens {
            break request;
        }
        match passages.next() {
            Some(passage) => {
                context.push_str(&format!("- {passage}\n"));
                passages_used += 1;
            }
            None => break request,
        }
    };
    let mut prompt_rates = Vec::new();
    let mut generation_rates = Vec::new();
    let mut first_token_seconds = Vec::new();
    let mut usage = Default::default();
    for _ in 0..runs {
        model.forget_cached_prompt();
        let start = Instant::now();
        let mut first_piece = None;
        let response = model.chat(
            &request,
            Some(&mut |_: &str| {
                first_piece.get_or_insert_with(|| start.elapsed().as_secs_f64());
                std::ops::ControlFlow::Continue(())
            }),
        )?;
        let total = start.elapsed().as_secs_f64();
        let first = first_piece.unwrap_or(total);
        first_token_seconds.push(first);
        usage = response.usage;
        prompt_rates.push(usage.prompt_tokens as f64 / first);
        if usage.completion_tokens > 1 && total > first {
            generation_rates.push((usage.completion_tokens - 1) as f64 / (total - first));
        }
    }
    let median = |rates: &mut Vec<f64>| {
        rates.sort_by(f64::total_cmp);
        rates.get(rates.len() / 2).copied().unwrap_or(0.0)
    };
    let prompt_rate = median(&mut prompt_rates);
    let generation_rate = median(&mut generation_rates);
    let first_token = median(&mut first_token_seconds);
    let peak_rss_mb = peak_rss_bytes().map(|bytes| bytes as f64 / 1e6);
    let result = serde_json::json!({
        "model": model.model_id(),
        "path": path,
        "passages": passages_used,
        "load_seconds": load_seconds,
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "runs": runs,
        "prompt_tokens_per_second": prompt_rate,
        "generation_tokens_per_second": generation_rate,
        "first_token_seconds": first_token,
        "peak_rss_mb": peak_rss_mb,
    });
    output::print(cli.json, &result, || {
        format!(
            "{}: loaded in {load_seconds:.2} s; prompt {} tokens at {prompt_rate:.1} tokens/s, \
             first token after {first_token:.2} s, generation {} tokens at \
             {generation_rate:.1} tokens/s (median of {runs}); peak RSS {}",
            model.model_id(),
            usage.prompt_tokens,
            usage.completion_tokens,
            peak_rss_mb.map_or("unknown".to_string(), |mb| format!("{mb:.0} MB")),
        )
    })
}

/// The most resident memory the process has held (Linux's `VmHWM`), if the system says.
fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    let kilobytes: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kilobytes * 1024)
}
