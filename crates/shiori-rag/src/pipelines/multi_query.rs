//! Pipelines that retrieve with several model-written queries and fuse the results by RRF.

use super::sources;
use crate::corpus::RagError;
use crate::prompts;
use crate::run::Run;
use shiori_core::Answer;

/// RAG-Fusion: N generated queries + the original, retrieved in parallel, fused, top MAX answered.
pub(crate) fn fusion(run: &mut Run, question: &str) -> Result<Answer, RagError> {
    let queries = generated_queries(run, question)?;
    let hits = run.retrieve_fused(&queries)?;
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
    let hits = run.retrieve_fused(&queries)?;
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
    let hits = run.retrieve_fused(&queries)?;
    run.generate(question, sources(&hits))
}

#[cfg(test)]
mod tests {
    use crate::test_support::*;
    use crate::{PipelineKind, PipelineParams};
    use shiori_core::PriceTable;
    use shiori_mock::Reply;

    const QUESTION: &str = "How do I get more storage for the workspace?";

    fn run(kind: PipelineKind) -> (shiori_core::Answer, Vec<(String, usize)>) {
        let server = llm_server(|system, _, _| {
            if system.starts_with("Write 3 different search queries") {
                completion("1. buy extra storage\n2. billing page blocks\n3. storage quota")
            } else if system.starts_with("Break the question") {
                completion("What storage is included?\nWhere is extra storage sold?")
            } else if system.starts_with("Write a short passage") {
                completion("Extra storage can be bought on the billing page.")
            } else if system.starts_with("Answer the question") {
                completion("Buy blocks of 50 GB on the billing page [1].")
            } else {
                Reply::status(400, "unexpected prompt")
            }
        });
        let model = model(&server, "m");
        let corpus = FixedCorpus::new(&[
            ("quota", "Every workspace includes 100 GB of storage."),
            (
                "billing",
                "Extra storage is sold in blocks of 50 GB on the billing page.",
            ),
            ("vpn", "Connect to the VPN first."),
        ]);
        let prices = PriceTable::default();
        let pipelines = one_model_pipelines(
            &corpus,
            &model,
            &prices,
            PipelineParams {
                queries: 3,
                max_context: 2,
                ..test_params()
            },
        );
        let answer = pipelines.run(QUESTION, kind).unwrap();
        (answer, corpus.queries())
    }

    fn texts(queries: &[(String, usize)]) -> Vec<&str> {
        let mut texts: Vec<&str> = queries.iter().map(|(q, _)| q.as_str()).collect();
        texts.sort();
        texts
    }

    #[test]
    fn fusion_retrieves_the_question_and_generated_queries_and_keeps_the_best_fused() {
        let (answer, queries) = run(PipelineKind::Fusion);
        assert_eq!(
            texts(&queries),
            vec![
                QUESTION,
                "billing page blocks",
                "buy extra storage",
                "storage quota"
            ]
        );
        assert_eq!(answer.sources.len(), 2, "max_context caps the fused list");
        assert_eq!(answer.sources[0].doc_id, "billing", "found by most queries");
        assert_eq!(answer.trace.steps[1].step, "retrieve_fuse");
        assert_eq!(answer.citations[0].doc_id, "billing");
    }

    #[test]
    fn decompose_and_hyde_retrieve_with_what_the_model_wrote() {
        let (answer, queries) = run(PipelineKind::Decompose);
        assert_eq!(
            texts(&queries),
            vec![
                QUESTION,
                "What storage is included?",
                "Where is extra storage sold?"
            ]
        );
        assert_eq!(answer.trace.steps[0].step, "decompose");

        let (answer, queries) = run(PipelineKind::Hyde);
        assert_eq!(
            texts(&queries),
            vec!["Extra storage can be bought on the billing page.", QUESTION]
        );
        assert_eq!(answer.trace.steps[0].step, "hypothetical_answer");
        assert!(!answer.refused);
    }
}
