//! Seed 004's reflection: draft → analyse the draft → refined search with a larger k → regenerate.

use super::iterative::merge;
use super::sources;
use crate::corpus::RagError;
use crate::prompts;
use crate::run::Run;
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
        return Ok(run.conclude(question, &draft, context));
    }
    let query = verdict["query"]
        .as_str()
        .filter(|query| !query.trim().is_empty())
        .unwrap_or(question)
        .to_string();
    merge(&mut context, sources(&run.retrieve(&query, k * 2)?.hits));
    run.generate(question, context)
}

#[cfg(test)]
mod tests {
    use crate::test_support::*;
    use crate::{PipelineKind, PipelineParams};
    use shiori_core::PriceTable;
    use shiori_mock::Reply;

    #[test]
    fn drafts_analyses_searches_wider_and_regenerates() {
        let server = llm_server(|system, user, _| {
            if system.starts_with("You review") {
                completion(
                    r#"{"complete": false, "missing": "the price", "query": "storage block price"}"#,
                )
            } else if system.starts_with("Answer the question") && user.contains("price") {
                completion("100 GB are included [1]; blocks cost 5 USD [2].")
            } else if system.starts_with("Answer the question") {
                completion("100 GB are included [1].")
            } else {
                Reply::status(400, "unexpected prompt")
            }
        });
        let model = model(&server, "m");
        let corpus = FixedCorpus::new(&[
            ("quota", "Every workspace includes 100 GB of storage."),
            ("price", "A storage block costs 5 USD per month."),
        ]);
        let prices = PriceTable::default();
        let pipelines = one_model_pipelines(
            &corpus,
            &model,
            &prices,
            PipelineParams {
                top_k: 1,
                ..test_params()
            },
        );
        let answer = pipelines
            .run("How much storage is included?", PipelineKind::Reflective)
            .unwrap();
        assert_eq!(
            corpus.queries(),
            vec![
                ("How much storage is included?".to_string(), 1),
                ("storage block price".to_string(), 2)
            ]
        );
        let steps: Vec<&str> = answer.trace.steps.iter().map(|s| s.step.as_str()).collect();
        assert_eq!(
            steps,
            vec![
                "retrieve",
                "draft",
                "analyse_draft",
                "retrieve",
                "answer",
                "check_citations"
            ]
        );
        assert_eq!(answer.citations.len(), 2);
        assert_eq!(answer.citations[1].doc_id, "price");
    }
}
