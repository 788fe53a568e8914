//! Iterative retrieval: the model answers, or asks for one more search, a bounded number of times.

use super::sources;
use crate::corpus::RagError;
use crate::prompts::{self, NEED_MORE};
use crate::run::Run;
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
            return Ok(run.conclude(question, &reply.content, context));
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

#[cfg(test)]
mod tests {
    use crate::test_support::*;
    use crate::{PipelineKind, PipelineParams, Pipelines};
    use shiori_core::{ChatModel, PriceTable};

    fn pipelines<'a>(
        corpus: &'a FixedCorpus,
        model: &'a dyn ChatModel,
        prices: &'a PriceTable,
    ) -> Pipelines<'a> {
        let params = PipelineParams {
            max_steps: 3,
            ..test_params()
        };
        one_model_pipelines(corpus, model, prices, params)
    }

    #[test]
    fn searches_again_when_the_model_needs_more() {
        let server = llm_server(|_, user, _| {
            if user.contains("VPN") {
                completion("Install the client, then connect to the VPN [2].")
            } else {
                completion("NEED_MORE: vpn client setup")
            }
        });
        let model = model(&server, "m");
        let corpus = FixedCorpus::new(&[
            ("remote", "Remote work needs a laptop."),
            ("vpn", "Install the VPN client before connecting."),
        ]);
        let prices = PriceTable::default();
        let answer = pipelines(&corpus, &model, &prices)
            .run("How does remote work function?", PipelineKind::Iterative)
            .unwrap();
        let queries: Vec<String> = corpus.queries().into_iter().map(|(q, _)| q).collect();
        assert_eq!(
            queries,
            vec!["How does remote work function?", "vpn client setup"]
        );
        assert_eq!(answer.citations[0].doc_id, "vpn");
        assert_eq!(server.requests().len(), 2);
    }

    #[test]
    fn stops_after_the_bounded_number_of_rounds() {
        let server = llm_server(|system, _, _| {
            if system.contains("NEED_MORE") {
                completion("NEED_MORE: something about laptops and more")
            } else {
                completion("CANNOT_ANSWER")
            }
        });
        let model = model(&server, "m");
        let corpus = FixedCorpus::new(&[("remote", "Remote work needs a laptop.")]);
        let prices = PriceTable::default();
        let answer = pipelines(&corpus, &model, &prices)
            .run("remote work?", PipelineKind::Iterative)
            .unwrap();
        assert!(answer.refused);
        // Round 1 asks for more, its search finds nothing new, so the final answer comes next.
        assert_eq!(server.requests().len(), 2);
        assert!(corpus.queries().len() <= 3);
    }
}
