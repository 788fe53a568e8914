//! Iterative retrieval: the model answers, or asks for one more search, a bounded number of times.

use super::sources;
use crate::corpus::RagError;
use crate::pipeline::Run;
use crate::prompts::{self, NEED_MORE};
use shiori_core::{Answer, Source};

/// retrieve → (answer | NEED_MORE: query → retrieve more) × at most `max_steps` → answer.
pub(crate) fn iterative(run: &mut Run, question: &str) -> Result<Answer, RagError> {
    let k = run.params().top_k;
    let mut context = sources(&run.retrieve(question, k)?.hits);
    for _ in 1..run.params().max_steps.max(1) {
        let model = run.answer_model()?;
        let request = prompts::iterative_answer(question, &context, run.params().max_tokens);
        let reply = run.chat(
            "answer_or_search",
            model,
            &request,
            format!("{question} with {} sources", context.len()),
        )?;
        let Some(query) = follow_up(&reply.content) else {
            return Ok(run.conclude(&reply.content, context));
        };
        let added = merge(&mut context, sources(&run.retrieve(&query, k)?.hits));
        if added == 0 {
            break;
        }
    }
    run.generate(question, context)
}

/// The query after `NEED_MORE:`, if the reply asks for more.
fn follow_up(reply: &str) -> Option<String> {
    let (_, rest) = reply.split_once(NEED_MORE)?;
    let query = rest.lines().next().unwrap_or_default().trim();
    (!query.is_empty()).then(|| query.to_string())
}

/// Appends the sources not yet in `context`; returns how many were new.
pub(crate) fn merge(context: &mut Vec<Source>, more: Vec<Source>) -> usize {
    let before = context.len();
    for source in more {
        if !context.iter().any(|s| s.chunk_id == source.chunk_id) {
            context.push(source);
        }
    }
    context.len() - before
}
