//! The fallback chain: runs the pipelines of a chain in turn until one answers, each through
//! the gate and then its own steps (`pipelines`).

use crate::corpus::RagError;
use crate::events::{AnswerEvent, Listener};
use crate::gate::gate;
use crate::kind::PipelineKind;
use crate::pipelines;
use crate::run::{Pipelines, Run};
use shiori_core::{Answer, TraceStep};
use std::time::Instant;

impl Pipelines<'_> {
    /// Runs the pipelines of `chain` in turn until one answers; every failure is recorded in the
    /// trace of the answer that follows. An empty chain answers extractively.
    pub fn answer(&self, question: &str, chain: &[PipelineKind]) -> Result<Answer, RagError> {
        self.answer_with(question, chain, &Listener::default())
    }

    /// [`Pipelines::answer`], reporting each step as it ends and the answer's tokens as they are
    /// generated to `listener`, and stopping when it cancels. A fallback after a failure is
    /// reported in [`Answer::degraded`].
    pub fn answer_with(
        &self,
        question: &str,
        chain: &[PipelineKind],
        listener: &Listener<'_>,
    ) -> Result<Answer, RagError> {
        self.run_chain(question, chain, listener, Vec::new(), Instant::now())
    }

    /// Runs `chain` for `question`; the answer's trace starts with `earlier` (steps run before
    /// the chain since `started`).
    pub(crate) fn run_chain(
        &self,
        question: &str,
        chain: &[PipelineKind],
        listener: &Listener<'_>,
        earlier: Vec<TraceStep>,
        started: Instant,
    ) -> Result<Answer, RagError> {
        let mut failures = earlier;
        let mut last_error = None;
        let mut chain = match chain.is_empty() {
            true => vec![PipelineKind::Extractive],
            false => chain.to_vec(),
        };
        let mut position = 0;
        while let Some(&kind) = chain.get(position) {
            let attempt = Instant::now();
            match self.run_with(question, kind, listener) {
                Ok(mut answer) => {
                    if let Some(error) = last_error {
                        answer.degraded = Some(format!(
                            "{} failed ({error}); answered with {}",
                            chain[0], kind
                        ));
                    }
                    failures.append(&mut answer.trace.steps);
                    answer.trace.steps = failures;
                    answer.usage = answer.trace.usage();
                    answer.cost_usd = answer.trace.cost_usd();
                    answer.timings_ms.total_ms = started.elapsed().as_secs_f64() * 1000.0;
                    return Ok(answer);
                }
                Err(RagError::Cancelled) => return Err(RagError::Cancelled),
                Err(error) => {
                    if matches!(error, RagError::OutOfTime) {
                        // No model may run any more: quoting needs none.
                        chain.truncate(position + 1);
                        chain.push(PipelineKind::Extractive);
                    }
                    let next = chain.get(position + 1).map_or("nothing", |k| k.name());
                    let step = TraceStep {
                        step: "fallback".to_string(),
                        input: format!("{} failed: {error}", kind.name()),
                        output: format!("falling back to {next}"),
                        ms: attempt.elapsed().as_secs_f64() * 1000.0,
                        ..TraceStep::default()
                    };
                    listener.emit(AnswerEvent::Step(step.clone()));
                    failures.push(step);
                    last_error = Some(error);
                }
            }
            position += 1;
        }
        Err(last_error.unwrap_or_else(|| RagError::UnknownPipeline(String::new())))
    }

    /// Runs one pipeline; without an answer model every pipeline answers extractively.
    pub fn run(&self, question: &str, kind: PipelineKind) -> Result<Answer, RagError> {
        self.run_with(question, kind, &Listener::default())
    }

    fn run_with(
        &self,
        question: &str,
        kind: PipelineKind,
        listener: &Listener<'_>,
    ) -> Result<Answer, RagError> {
        let mut run = Run::new(self, kind, listener);
        if kind != PipelineKind::Extractive && self.models.answer.is_none() {
            run.trace.pipeline = PipelineKind::Extractive.name().to_string();
            run.trace.note(
                "degrade",
                kind.name(),
                "no chat model configured: answering extractively",
                0.0,
            );
            let mut answer = pipelines::extractive(&mut run, question)?;
            answer.degraded = Some(format!(
                "no chat model is configured: {} answered with the sentences quoted from the sources",
                kind.name()
            ));
            return Ok(answer);
        }
        if let Some(refusal) = gate(&mut run, question, kind)? {
            return Ok(refusal);
        }
        match kind {
            PipelineKind::Extractive => pipelines::extractive(&mut run, question),
            PipelineKind::Basic => pipelines::basic(&mut run, question),
            PipelineKind::Fusion => pipelines::fusion(&mut run, question),
            PipelineKind::Decompose => pipelines::decompose(&mut run, question),
            PipelineKind::Hyde => pipelines::hyde(&mut run, question),
            PipelineKind::Crag => pipelines::crag(&mut run, question),
            PipelineKind::FusionCrag => pipelines::fusion_crag(&mut run, question),
            PipelineKind::Iterative => pipelines::iterative(&mut run, question),
            PipelineKind::Agentic => pipelines::agentic(&mut run, question),
            PipelineKind::Reflective => pipelines::reflective(&mut run, question),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::{Models, CANNOT_ANSWER_TEXT};
    use crate::test_support::*;
    use shiori_core::TokenSink;
    use shiori_core::{ChatError, ChatModel, ChatRequest, ChatResponse, PriceTable};
    use shiori_core::{Price, Usage};
    use shiori_mock::Reply;
    use std::collections::BTreeMap;
    use std::sync::atomic::{AtomicBool, Ordering};

    const QUESTION: &str = "How much storage does every workspace include?";

    fn corpus() -> FixedCorpus {
        FixedCorpus::new(&[
            ("storage", "Every workspace includes 100 GB of storage."),
            (
                "billing",
                "Extra storage is sold in blocks of 50 GB on the billing page.",
            ),
            (
                "vpn",
                "Connect to the VPN before you open the storage console.",
            ),
        ])
    }

    fn pipelines<'a>(
        corpus: &'a FixedCorpus,
        answer: Option<&'a dyn ChatModel>,
        prices: &'a PriceTable,
    ) -> Pipelines<'a> {
        Pipelines {
            corpus,
            embedder: None,
            models: Models {
                answer,
                grade: None,
                query: None,
            },
            web: None,
            prices,
            params: test_params(),
        }
    }

    #[test]
    fn basic_answers_with_checked_citations_usage_and_cost() {
        let server = llm_server(|_, user, _| {
            assert!(user.contains("[1] storage (storage.md)"), "{user}");
            completion("Every workspace includes 100 GB [1]; more can be bought [2].")
        });
        let model = model(&server, "answerer");
        let prices = PriceTable(BTreeMap::from([(
            "openai:answerer".to_string(),
            Price {
                input_per_million: 3.0,
                output_per_million: 15.0,
            },
        )]));
        let corpus = corpus();
        let answer = pipelines(&corpus, Some(&model), &prices)
            .answer(QUESTION, &[PipelineKind::Basic])
            .unwrap();
        assert!(!answer.refused);
        assert_eq!(answer.sources.len(), 3);
        let cited: Vec<&str> = answer.citations.iter().map(|c| c.doc_id.as_str()).collect();
        assert_eq!(cited, vec!["storage", "billing"]);
        let steps: Vec<&str> = answer.trace.steps.iter().map(|s| s.step.as_str()).collect();
        assert_eq!(steps, vec!["retrieve", "answer", "check_citations"]);
        assert_eq!(answer.trace.pipeline, "basic");
        assert_eq!(
            answer.trace.steps[1].model.as_deref(),
            Some("openai:answerer")
        );
        assert_eq!(
            answer.usage,
            Usage {
                prompt_tokens: PROMPT_TOKENS,
                completion_tokens: COMPLETION_TOKENS
            }
        );
        let expected = (100.0 * 3.0 + 10.0 * 15.0) / 1e6;
        assert!(
            (answer.cost_usd - expected).abs() < 1e-12,
            "{}",
            answer.cost_usd
        );
    }

    #[test]
    fn catches_a_fabricated_citation() {
        let server =
            llm_server(|_, _, _| completion("It is 100 GB [1], as the refund policy says [7]."));
        let model = model(&server, "answerer");
        let corpus = corpus();
        let prices = PriceTable::default();
        let answer = pipelines(&corpus, Some(&model), &prices)
            .run(QUESTION, PipelineKind::Basic)
            .unwrap();
        assert_eq!(answer.sources.len(), 3);
        assert_eq!(
            answer.answer,
            "It is 100 GB [1], as the refund policy says."
        );
        assert_eq!(answer.citations.len(), 1);
        let check = answer
            .trace
            .steps
            .iter()
            .find(|s| s.step == "check_citations")
            .unwrap();
        assert!(
            check.output.contains("[7]") && check.output.contains("3 sources"),
            "{check:?}"
        );
    }

    /// A model the caller leaves while it computes, as a local model's prompt pass: it asks
    /// its receiver whether to go on, as `GgufChatModel` does between passes.
    struct LeftWhileComputing<'a> {
        cancel: &'a AtomicBool,
        /// Per call: whether the receiver wanted pieces, and whether it said go on.
        asked: std::sync::Mutex<Vec<(bool, bool)>>,
    }

    impl ChatModel for LeftWhileComputing<'_> {
        fn model_id(&self) -> &str {
            "local:left"
        }

        fn chat(
            &self,
            _: &ChatRequest,
            on_token: Option<TokenSink<'_>>,
        ) -> Result<ChatResponse, ChatError> {
            self.cancel.store(true, Ordering::Relaxed);
            let sink = on_token.expect("every step hands its model a receiver");
            let go_on = sink.keep_going().is_continue();
            self.asked
                .lock()
                .unwrap()
                .push((sink.wants_pieces(), go_on));
            Err(ChatError::Cancelled {
                provider: self.model_id().to_string(),
                usage: Usage::default(),
            })
        }
    }

    #[test]
    fn a_step_read_whole_stops_its_model_once_the_caller_leaves() {
        let cancel = AtomicBool::new(false);
        let model = LeftWhileComputing {
            cancel: &cancel,
            asked: Default::default(),
        };
        let corpus = corpus();
        let prices = PriceTable::default();
        let listener = Listener {
            on_event: None,
            cancel: Some(&cancel),
            expired: None,
        };
        let outcome = pipelines(&corpus, Some(&model), &prices).answer_with(
            QUESTION,
            &[PipelineKind::Basic, PipelineKind::Extractive],
            &listener,
        );
        assert!(matches!(outcome, Err(RagError::Cancelled)), "{outcome:?}");
        // Nobody listens for pieces, so the answer is read whole; the model was still told to
        // stop, and nothing ran after it (no fallback).
        assert_eq!(*model.asked.lock().unwrap(), vec![(false, false)]);
    }

    #[test]
    fn says_it_cannot_answer_when_the_sources_lack_it() {
        let server = llm_server(|_, _, _| completion("CANNOT_ANSWER"));
        let model = model(&server, "answerer");
        let corpus = corpus();
        let prices = PriceTable::default();
        let pipelines = pipelines(&corpus, Some(&model), &prices);
        let answer = pipelines
            .run("What is the storage melting point?", PipelineKind::Basic)
            .unwrap();
        assert!(answer.refused);
        assert_eq!(answer.answer, CANNOT_ANSWER_TEXT);
        let nothing = pipelines.run("Who won?", PipelineKind::Basic).unwrap();
        assert!(
            nothing.refused,
            "no sources: refused without asking the model"
        );
        assert_eq!(server.requests().len(), 1);
    }

    #[test]
    fn refuses_below_the_gate_without_calling_the_model_unless_configured_not_to() {
        let server = llm_server(|_, _, _| completion("[1] Cannot answer [2, 3]"));
        let model = model(&server, "answerer");
        let mut corpus = corpus();
        corpus.cosine_cut = 0.95;
        let prices = PriceTable::default();
        let mut pipelines = pipelines(&corpus, Some(&model), &prices);
        pipelines.params.refuse_irrelevant = true;
        for kind in [PipelineKind::Basic, PipelineKind::Hyde, PipelineKind::Crag] {
            let answer = pipelines.run(QUESTION, kind).unwrap();
            assert!(answer.refused, "{kind:?}");
            let gate = &answer.trace.steps[0];
            assert_eq!(gate.step, "gate");
            assert!(gate.output.contains("without calling"), "{gate:?}");
            assert_eq!(answer.trace.steps.len(), 1);
        }
        assert!(server.requests().is_empty());

        pipelines.params.refuse_irrelevant = false;
        let answer = pipelines.run(QUESTION, PipelineKind::Basic).unwrap();
        assert!(answer.refused, "markers around a refusal are a refusal");
        assert_eq!(server.requests().len(), 1);
    }

    #[test]
    fn a_gate_that_lets_the_question_through_hands_its_retrieval_on() {
        let server = llm_server(|_, _, _| completion("100 GB [1]."));
        let model = model(&server, "answerer");
        let corpus = corpus();
        let prices = PriceTable::default();
        let mut pipelines = pipelines(&corpus, Some(&model), &prices);
        pipelines.params.refuse_irrelevant = true;
        let answer = pipelines.run(QUESTION, PipelineKind::Basic).unwrap();
        assert!(!answer.refused, "{answer:?}");
        assert_eq!(
            corpus.queries(),
            [(QUESTION.to_string(), pipelines.params.top_k)],
            "the question is searched once"
        );
        let steps: Vec<&str> = answer.trace.steps.iter().map(|s| s.step.as_str()).collect();
        assert_eq!(steps[0], "retrieve", "{steps:?}");
    }

    #[test]
    fn falls_back_down_the_chain_on_a_permanent_error() {
        let broken =
            llm_server(|_, _, _| Reply::status(401, r#"{"error":{"message":"invalid key"}}"#));
        let working = llm_server(|_, _, _| completion("100 GB [1]."));
        let grader = model(&broken, "grader");
        let answerer = model(&working, "answerer");
        let corpus = corpus();
        let prices = PriceTable::default();
        let mut pipelines = pipelines(&corpus, Some(&answerer), &prices);
        pipelines.models.grade = Some(&grader);
        let chain = [
            PipelineKind::FusionCrag,
            PipelineKind::Basic,
            PipelineKind::Extractive,
        ];
        let answer = pipelines.answer(QUESTION, &chain).unwrap();
        assert_eq!(answer.trace.pipeline, "basic");
        assert_eq!(answer.answer, "100 GB [1].");
        let fallback = &answer.trace.steps[0];
        assert_eq!(fallback.step, "fallback");
        assert!(
            fallback.input.contains("fusion-crag failed"),
            "{fallback:?}"
        );
        assert!(fallback.input.contains("invalid key"), "{fallback:?}");
        assert_eq!(fallback.output, "falling back to basic");
        assert_eq!(
            broken.requests().len(),
            3,
            "one grading call per document, none retried"
        );

        pipelines.models.answer = Some(&grader);
        let answer = pipelines.answer(QUESTION, &chain).unwrap();
        assert_eq!(answer.trace.pipeline, "extractive");
        assert_eq!(
            answer.answer,
            "Every workspace includes 100 GB of storage. [1]"
        );
        let fallbacks = answer
            .trace
            .steps
            .iter()
            .filter(|s| s.step == "fallback")
            .count();
        assert_eq!(fallbacks, 2);
    }

    #[test]
    fn degrades_to_extractive_without_a_chat_model() {
        let corpus = corpus();
        let prices = PriceTable::default();
        let answer = pipelines(&corpus, None, &prices)
            .run(QUESTION, PipelineKind::Crag)
            .unwrap();
        assert_eq!(answer.trace.pipeline, "extractive");
        assert_eq!(answer.trace.steps[0].step, "degrade");
        assert!(answer.trace.steps[0].output.contains("no chat model"));
        assert_eq!(
            answer.answer,
            "Every workspace includes 100 GB of storage. [1]"
        );
        assert_eq!(
            answer.degraded.as_deref(),
            Some("no chat model is configured: crag answered with the sentences quoted from the sources"),
            "the answer itself says it is not what was asked for, not only its trace"
        );
        assert_eq!(answer.usage.total(), 0);
    }

    #[test]
    fn names_every_pipeline() {
        for kind in PipelineKind::ALL {
            assert_eq!(kind.name().parse::<PipelineKind>().unwrap(), kind);
        }
        let error = "rag-fusion"
            .parse::<PipelineKind>()
            .unwrap_err()
            .to_string();
        assert!(error.contains("fusion-crag"), "{error}");
    }
}
