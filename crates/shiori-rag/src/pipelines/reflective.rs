//! Seed 004's reflection: draft → analyse the draft → refined search with a larger k → regenerate.

use super::iterative::merge;
use super::sources;
use crate::corpus::RagError;
use crate::pipeline::Run;
use crate::prompts;
use shiori_core::Answer;

pub(crate) fn reflective(run: &mut Run, question: &str) -> Result<Answer, RagError> {
    let k = run.params().top_k;
    let mut context = sources(&run.retrieve(question, k)?.hits);
    let draft = run.generate_text("draft", question, &context)?;
    let model = run.grade_model()?;
    let review = run.chat(
        "analyse_draft",
        model,
        &prompts::critique(question, &draft, &context),
        &draft,
    )?;
    let verdict = prompts::json_object(&review.content).unwrap_or_default();
    if verdict["complete"].as_bool() == Some(true) {
        return Ok(run.conclude(&draft, context));
    }
    let query = verdict["query"]
        .as_str()
        .filter(|query| !query.trim().is_empty())
        .unwrap_or(question)
        .to_string();
    merge(&mut context, sources(&run.retrieve(&query, k * 2)?.hits));
    run.generate(question, context)
}
