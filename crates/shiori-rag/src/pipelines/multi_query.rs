//! Pipelines that retrieve with several model-written queries and fuse the results by RRF.

use super::sources;
use crate::corpus::RagError;
use crate::pipeline::Run;
use crate::prompts;
use shiori_core::Answer;

/// RAG-Fusion: N generated queries + the original, retrieved in parallel, fused, top MAX answered.
pub(crate) fn fusion(run: &mut Run, question: &str) -> Result<Answer, RagError> {
    let queries = generated_queries(run, question)?;
    let hits = run.retrieve_fused(question, &queries)?;
    run.generate(question, sources(&hits))
}

/// The original question and N search queries the query model wrote for it.
pub(crate) fn generated_queries(run: &mut Run, question: &str) -> Result<Vec<String>, RagError> {
    let count = run.params().queries;
    let model = run.query_model()?;
    let reply = run.chat(
        "generate_queries",
        model,
        &prompts::search_queries(question, count),
        question,
    )?;
    let mut queries = vec![question.to_string()];
    queries.extend(
        prompts::lines(&reply.content, count)
            .into_iter()
            .filter(|query| query != question),
    );
    Ok(queries)
}

/// Sub-questions retrieved in parallel with the question, fused, answered as one.
pub(crate) fn decompose(run: &mut Run, question: &str) -> Result<Answer, RagError> {
    let count = run.params().queries;
    let model = run.query_model()?;
    let reply = run.chat(
        "decompose",
        model,
        &prompts::sub_questions(question, count),
        question,
    )?;
    let mut queries = vec![question.to_string()];
    queries.extend(prompts::lines(&reply.content, count));
    let hits = run.retrieve_fused(question, &queries)?;
    run.generate(question, sources(&hits))
}

/// HyDE: a hypothetical answer is searched for next to the question.
pub(crate) fn hyde(run: &mut Run, question: &str) -> Result<Answer, RagError> {
    let model = run.query_model()?;
    let reply = run.chat(
        "hypothetical_answer",
        model,
        &prompts::hypothetical_answer(question),
        question,
    )?;
    let mut queries = vec![question.to_string()];
    if !reply.content.trim().is_empty() {
        queries.push(reply.content.trim().to_string());
    }
    let hits = run.retrieve_fused(question, &queries)?;
    run.generate(question, sources(&hits))
}
