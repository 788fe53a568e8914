//! The step that ends every pipeline: a generated reply checked sentence by sentence
//! ([`Checker`]), or the sentences quoted from the sources when no model writes. A generated
//! reply that keeps no sentence falls back to the quoted ones, saying why in `degraded`. What
//! the listener is sent is exactly the answer's text: checked sentences as the model finishes
//! them, or the whole text at the end when nothing was streamed.

use crate::events::{AnswerEvent, Forward};
use crate::extractive::{joined, quote, quote_each, refusal_text, refuses, Ask, Quoted};
use crate::meaning::Meaning;
use crate::pipelines::sources;
use crate::prompts;
use crate::run::{summary, Run, ANSWER_STEP, CANNOT_ANSWER_TEXT};
use crate::sentences::NotQuoted;
use crate::verify::{Checker, Stop};
use crate::RagError;
use shiori_core::{Answer, ChatError, ChatResponse, EmbedError, Retrieval, Source, TokenReceiver};
use std::ops::ControlFlow;
use std::time::Instant;

/// The answer step's receiver: pieces go through the checker, and only what it keeps reaches
/// the listener; it stops the model at the first sentence the checker rejects.
struct Checked<'p, 's> {
    forward: Forward<'p>,
    checker: Checker<'s>,
    /// Whether anything was sent to the listener.
    sent: bool,
    /// Whether the model handed over any piece (an HTTP model asked for the whole reply hands
    /// over none: its reply is checked once it has come).
    received: bool,
}

impl Checked<'_, '_> {
    fn send(&mut self, shown: String) -> ControlFlow<()> {
        if shown.is_empty() {
            return self.forward.keep_going();
        }
        self.sent |= self.forward.stream;
        self.forward.token(&shown)
    }
}

impl TokenReceiver for Checked<'_, '_> {
    fn token(&mut self, text: &str) -> ControlFlow<()> {
        self.received = true;
        let shown = self.checker.push(text);
        let flow = self.send(shown);
        match self.checker.stopped {
            Some(_) => ControlFlow::Break(()),
            None => flow,
        }
    }

    fn keep_going(&mut self) -> ControlFlow<()> {
        self.forward.keep_going()
    }

    fn wants_pieces(&self) -> bool {
        self.forward.wants_pieces()
    }
}

impl<'a> Run<'_, 'a> {
    /// The final step: answers `question` from numbered `sources`, each sentence checked as
    /// the model writes it.
    pub fn generate(&mut self, question: &str, sources: Vec<Source>) -> Result<Answer, RagError> {
        if sources.is_empty() {
            self.trace
                .note("answer", summary(question), "no sources: refused", 0.0);
            let refusal = CANNOT_ANSWER_TEXT.to_string();
            return Ok(self.send_whole(refusal, true, Vec::new(), &sources));
        }
        self.report_steps()?;
        let model = self.answer_model()?;
        let request = prompts::answer(question, &sources, self.params().max_tokens);
        let started = Instant::now();
        let mut checked = Checked {
            forward: self.forward(self.listener.on_event.is_some()),
            checker: Checker::new(question, &sources),
            sent: false,
            received: false,
        };
        let outcome = self.call_model(model, &request, &mut checked);
        // A reply the checker stopped, or one cut short by the time limit after some sentences
        // were kept (and maybe shown), ends with what was kept; a sentence cut off is dropped.
        let out_of_time = self.listener.is_expired() && !checked.checker.kept.is_empty();
        let response = match outcome {
            Err(ChatError::Cancelled { usage, .. })
                if checked.checker.stopped.is_some() || out_of_time =>
            {
                ChatResponse {
                    usage,
                    ..ChatResponse::default()
                }
            }
            outcome => self.listener.cancelled_or(outcome)?,
        };
        if !checked.received {
            let shown = checked.checker.push(&response.content);
            let _ = checked.send(shown);
        }
        if !out_of_time {
            let rest = checked.checker.finish();
            let _ = checked.send(rest);
        }
        self.first_token_ms = self.first_token_ms.or(checked.forward.first_token_ms);
        let input = format!("{question} with {} sources", sources.len());
        self.record_step(ANSWER_STEP, model, input, &response, started)?;
        let sent = checked.sent;
        Ok(self.conclude_checked(question, checked.checker, &sources, sent))
    }

    /// The answer model's reply to `question` over numbered `sources`, not yet checked (a draft
    /// another step reads).
    pub fn generate_text(
        &mut self,
        step: &str,
        question: &str,
        sources: &[Source],
    ) -> Result<String, RagError> {
        let model = self.answer_model()?;
        let request = prompts::answer(question, sources, self.params().max_tokens);
        let input = format!("{question} with {} sources", sources.len());
        Ok(self.chat(step, model, &request, input)?.content)
    }

    /// Turns a whole generated reply into the answer, checked as [`Run::generate`] checks one
    /// that streams. `question` may go on, a line each, with what else the answer may state
    /// (a tool's results).
    pub fn conclude(&mut self, question: &str, reply: &str, sources: Vec<Source>) -> Answer {
        let checker = Checker::read_whole(question, &sources, reply);
        self.conclude_checked(question, checker, &sources, false)
    }

    /// The answer a checked reply makes: its kept sentences, a refusal, or the quoted sentences
    /// when it kept none. `sent` says whether the kept sentences already reached the listener.
    fn conclude_checked(
        &mut self,
        question: &str,
        checker: Checker,
        sources: &[Source],
        sent: bool,
    ) -> Answer {
        self.note_check(&checker, sources.len());
        if checker.refused() {
            return self.send_whole(CANNOT_ANSWER_TEXT.to_string(), true, Vec::new(), sources);
        }
        if !checker.kept.is_empty() {
            if !sent {
                self.listener.emit(AnswerEvent::Token(checker.kept.clone()));
            }
            let mut answer = self.finish(checker.kept, false, sources.to_vec());
            answer.citations = checker.citations;
            return answer;
        }
        let why = match &checker.stopped {
            Some(Stop::Unsupported(missing)) => {
                format!("its first sentence states {missing}, which its sources do not")
            }
            _ => "its reply had no sentence a source supports".to_string(),
        };
        let meaning = self.meaning(question, None);
        let quoted = quote(question, sources, meaning.as_ref());
        if let Some(meaning) = &meaning {
            self.note_failure(meaning);
        }
        let mut answer = match quoted {
            Ok(Quoted { text, citations }) => self.send_whole(text, false, citations, sources),
            Err(_) => self.send_whole(CANNOT_ANSWER_TEXT.to_string(), true, Vec::new(), sources),
        };
        answer.degraded = Some(format!(
            "the answer model's reply was not used ({why}): answered with the sentences quoted from the sources"
        ));
        answer
    }

    /// The meaning of `question` the embedder gives, to weigh quoted sentences by; `None` without
    /// an embedder, or when it fails (noted in the trace: sentences are then chosen by their
    /// shared words alone). Its time is the answer's (`answer_ms`), not retrieval's.
    /// `searched`: the vector retrieval embedded `question` as, when it did.
    fn meaning(&mut self, question: &str, searched: Option<&[f32]>) -> Option<Meaning<'a>> {
        let embedder = self.p.embedder?;
        Meaning::of(embedder, question, searched)
            .map_err(|error| self.note_embedder_failure(summary(question), &error))
            .ok()
    }

    /// Notes in the trace that the embedder failed to weigh `meaning`'s candidates, if it did.
    fn note_failure(&mut self, meaning: &Meaning) {
        if let Some(error) = meaning.take_failure() {
            self.note_embedder_failure("the candidate sentences".to_string(), &error);
        }
    }

    fn note_embedder_failure(&mut self, input: String, error: &EmbedError) {
        let why = format!("the embedder failed ({error}): sentences weighed by shared words alone");
        self.trace.note("meaning", input, why, 0.0);
    }

    /// Records what the checker kept and removed as the `check_citations` step.
    fn note_check(&mut self, checker: &Checker, sources: usize) {
        let mut notes = vec![format!(
            "{} citation(s), all point at sources",
            checker.citations.len()
        )];
        let numbers = |list: &[usize]| {
            list.iter()
                .map(|n| format!("[{n}]"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        if !checker.fabricated.is_empty() {
            notes.push(format!(
                "removed {} that point at none of the {sources} sources",
                numbers(&checker.fabricated)
            ));
        }
        if !checker.attributed.is_empty() {
            notes.push(format!(
                "attributed {} by shared words",
                numbers(&checker.attributed)
            ));
        }
        if checker.dropped > 0 {
            notes.push(format!("dropped {} uncited sentence(s)", checker.dropped));
        }
        match &checker.stopped {
            Some(Stop::Refusal) => notes.push("the reply refused".to_string()),
            Some(Stop::Unsupported(missing)) => notes.push(format!(
                "stopped at a sentence stating {missing}, which its sources do not"
            )),
            None => {}
        }
        self.trace.note(
            "check_citations",
            format!("{sources} sources"),
            notes.join("; "),
            0.0,
        );
    }

    /// Sends `text` to the listener whole and finishes the answer with it.
    fn send_whole(
        &mut self,
        text: String,
        refused: bool,
        citations: Vec<shiori_core::Citation>,
        sources: &[Source],
    ) -> Answer {
        self.emit_new_steps();
        self.first_token_ms = self
            .first_token_ms
            .or(Some(self.started.elapsed().as_secs_f64() * 1000.0));
        self.listener.emit(AnswerEvent::Token(text.clone()));
        let mut answer = self.finish(text, refused, sources.to_vec());
        answer.citations = citations;
        answer
    }

    /// An extractive answer, in this run's trace, to a question's asks ([`crate::asks`]; most
    /// questions have one), each with its own retrieval: the sentences of its best sources that
    /// answer it, cited and marked in their source among the sources of all the asks, and sent
    /// to the listener whole (nothing is generated). Asks that nothing answers are left out;
    /// when none is answered, the answer is a refusal.
    pub fn extractive(&mut self, asks: &[(String, Retrieval)]) -> Answer {
        let meanings: Vec<Option<Meaning>> = asks
            .iter()
            .map(|(question, retrieval)| self.meaning(question, retrieval.query_vector.as_deref()))
            .collect();
        let each: Vec<Ask<'_>> = asks
            .iter()
            .zip(&meanings)
            .map(|((question, retrieval), meaning)| Ask {
                question,
                meaning: meaning.as_ref(),
                sources: sources(&retrieval.hits),
                refused: refuses(&retrieval.hits, &retrieval.verdict),
            })
            .collect();
        let (answers, sources) = quote_each(&each);
        for meaning in meanings.iter().flatten() {
            self.note_failure(meaning);
        }
        for ((ask, retrieval), answer) in asks.iter().zip(&answers) {
            let output = match answer {
                Ok(quoted) => format!("quoted {}", summary(&quoted.text)),
                Err(NotQuoted::Nothing) => "refused: nothing relevant enough".to_string(),
                Err(NotQuoted::NotStated(wanted)) => format!(
                    "refused: no sentence of the first sources states {}",
                    wanted.described()
                ),
                Err(NotQuoted::NotMentioned(thing)) => {
                    format!("refused: no sentence of the first sources names {thing}")
                }
            };
            let asked = match asks.len() {
                1 => String::new(),
                _ => format!("{}: ", summary(ask)),
            };
            let input = format!(
                "{asked}{} hits; {}",
                retrieval.hits.len(),
                retrieval.verdict.reason
            );
            self.trace.note("extract", input, output, 0.0);
        }
        match joined(answers) {
            Ok(Quoted { text, citations }) => self.send_whole(text, false, citations, &sources),
            Err(reason) => self.send_whole(refusal_text(&reason), true, Vec::new(), &sources),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::test_params;
    use crate::test_support::{one_model_pipelines, FixedCorpus};
    use crate::{AnswerEvent, Listener, PipelineKind};
    use shiori_core::{
        ChatError, ChatModel, ChatRequest, ChatResponse, PriceTable, TokenSink, Usage,
    };
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Mutex;

    /// A local model as llama.cpp runs one: it writes its reply piece by piece into the sink and
    /// stops when the sink says so; `expire` is set after `expire_after` pieces.
    struct Writing<'a> {
        pieces: Vec<&'static str>,
        written: Mutex<usize>,
        expire: Option<(&'a AtomicBool, usize)>,
    }

    impl ChatModel for Writing<'_> {
        fn model_id(&self) -> &str {
            "local:writing"
        }

        fn chat(
            &self,
            _: &ChatRequest,
            on_token: Option<TokenSink<'_>>,
        ) -> Result<ChatResponse, ChatError> {
            let sink = on_token.expect("the answer step hands its model a receiver");
            let mut content = String::new();
            for (index, piece) in self.pieces.iter().enumerate() {
                if let Some((expired, after)) = self.expire {
                    expired.store(index >= after, Ordering::Relaxed);
                }
                *self.written.lock().unwrap() += 1;
                if sink.token(piece).is_break() {
                    // One token a piece, as a local model counts what it generated.
                    return Err(ChatError::Cancelled {
                        provider: self.model_id().to_string(),
                        usage: Usage {
                            prompt_tokens: 10,
                            completion_tokens: index as u64 + 1,
                        },
                    });
                }
                content.push_str(piece);
            }
            Ok(ChatResponse {
                content,
                ..ChatResponse::default()
            })
        }
    }

    fn writing(pieces: &[&'static str]) -> Writing<'static> {
        Writing {
            pieces: pieces.to_vec(),
            written: Mutex::new(0),
            expire: None,
        }
    }

    fn corpus() -> FixedCorpus {
        FixedCorpus::new(&[(
            "limits",
            "The API allows 600 requests per minute on the Business plan. Starter plan keys \
             are limited to 100 requests per minute.",
        )])
    }

    const QUESTION: &str = "How many requests per minute do keys get?";

    /// Answers `QUESTION` with `model`, returning the answer and the text streamed to the
    /// listener.
    fn streamed(
        model: &dyn ChatModel,
        expired: Option<&AtomicBool>,
    ) -> (shiori_core::Answer, String) {
        let corpus = corpus();
        let prices = PriceTable::default();
        let pipelines = one_model_pipelines(&corpus, model, &prices, test_params());
        let tokens = Mutex::new(String::new());
        let on_event = |event: AnswerEvent| {
            if let AnswerEvent::Token(text) = event {
                tokens.lock().unwrap().push_str(&text);
            }
        };
        let listener = Listener {
            on_event: Some(&on_event),
            cancel: None,
            expired,
        };
        let answer = pipelines
            .answer_with(QUESTION, &[PipelineKind::Basic], &listener)
            .unwrap();
        let shown = tokens.into_inner().unwrap();
        (answer, shown)
    }

    #[test]
    fn the_stream_carries_exactly_the_checked_answer_and_stops_the_model_at_a_claim_the_sources_lack(
    ) {
        let model = writing(&[
            "Business keys get 600 requests",
            " per minute [1]. Starter",
            " keys get 100 [1]. Enterprise keys",
            " get 9000 [1]. Free keys",
            " get 10 [1].",
        ]);
        let (answer, shown) = streamed(&model, None);
        assert_eq!(
            answer.answer,
            "Business keys get 600 requests per minute [1]. Starter keys get 100 [1]."
        );
        assert_eq!(shown, answer.answer);
        assert_eq!(
            *model.written.lock().unwrap(),
            4,
            "stopped once the unsupported sentence was complete"
        );
        assert!(answer.degraded.is_none());
        assert_eq!(
            answer.usage.completion_tokens, 4,
            "what the stopped model generated still counts"
        );
        let check = answer
            .trace
            .steps
            .iter()
            .find(|s| s.step == "check_citations")
            .unwrap();
        assert!(check.output.contains("the number 9000"), "{check:?}");
    }

    #[test]
    fn a_bare_citation_falls_back_to_the_quoted_sentences_and_says_so() {
        let (answer, shown) = streamed(&writing(&["[1]"]), None);
        assert!(!answer.refused);
        assert!(
            answer.answer.contains("600 requests per minute"),
            "{answer:?}"
        );
        assert_eq!(shown, answer.answer);
        assert_eq!(answer.citations[0].quotes.len(), 2);
        let degraded = answer.degraded.unwrap_or_default();
        assert!(
            degraded.contains("no sentence a source supports"),
            "{degraded}"
        );
    }

    #[test]
    fn a_refusal_streams_the_refusal() {
        let (answer, shown) = streamed(&writing(&["CANNOT", "_ANSWER"]), None);
        assert!(answer.refused);
        assert_eq!(shown, answer.answer);
    }

    #[test]
    fn out_of_time_the_answer_keeps_its_checked_sentences_or_quotes_the_sources() {
        let expired = AtomicBool::new(false);
        let model = Writing {
            expire: Some((&expired, 2)),
            ..writing(&[
                "Starter keys get 100 [1]. ",
                "Business keys",
                " get 600 [1].",
            ])
        };
        let (answer, shown) = streamed(&model, Some(&expired));
        assert_eq!(answer.answer, "Starter keys get 100 [1].");
        assert_eq!(shown, answer.answer);

        let expired = AtomicBool::new(false);
        let model = Writing {
            expire: Some((&expired, 1)),
            ..writing(&["Starter keys", " get 100 [1]."])
        };
        let (answer, shown) = streamed(&model, Some(&expired));
        assert!(
            answer.answer.contains("100 requests per minute"),
            "{answer:?}"
        );
        assert_eq!(shown, answer.answer);
        let degraded = answer.degraded.unwrap_or_default();
        assert!(degraded.contains("ran out of time"), "{degraded}");
        assert_eq!(answer.trace.pipeline, "extractive");
    }

    /// An embedder over real HTTP whose vectors a script gives: the question (the text that
    /// ends with `?`), and any text naming Sunday, point one way, every other text the other. A
    /// request with a text that holds `fail_on` is answered with an error.
    fn scripted_embedder(
        fail_on: Option<&'static str>,
    ) -> (shiori_mock::MockServer, shiori_llm::ApiEmbedder) {
        use serde_json::{json, Value};
        let server = shiori_mock::MockServer::start(move |request| {
            let inputs = request.json()["input"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let texts: Vec<&str> = inputs.iter().filter_map(Value::as_str).collect();
            if fail_on.is_some_and(|marker| texts.iter().any(|text| text.contains(marker))) {
                return shiori_mock::Reply::status(400, "embedder refused the request");
            }
            let data: Vec<Value> = texts
                .iter()
                .enumerate()
                .map(|(index, text)| {
                    let vector = match text.contains("Sunday") || text.ends_with('?') {
                        true => [1.0, 0.0],
                        false => [0.0, 1.0],
                    };
                    json!({"index": index, "embedding": vector})
                })
                .collect();
            shiori_mock::Reply::json(json!({"data": data}))
        });
        let endpoint = shiori_llm::Endpoint::new(server.url());
        let embedder = shiori_llm::ApiEmbedder::new(
            shiori_llm::EmbeddingProtocol::OpenAi,
            endpoint,
            "scripted",
            Some(2),
        )
        .unwrap();
        (server, embedder)
    }

    #[test]
    fn the_embedder_chooses_the_quoted_sentence_and_shared_words_do_when_it_fails() {
        let tock =
            "The weekly period lasts one week, beginning on Sunday and ending on Saturday.\n\
            Submit your timecard each week by the end of the day on Friday, so that your \
            supervisor can approve the week before the pay period closes on the next Monday, \
            and keep a note of any day you could not record that week for your supervisor.\n\
            Each day of the week appears as a column, so you can spread your hours across the \
            days you worked and correct any day of the week until you submit it.";
        let corpus = FixedCorpus::new(&[("tock", tock)]);
        let prices = PriceTable::default();
        let question = "what days does a tock week run?";
        let answer_from = |corpus: &FixedCorpus, embedder: &shiori_llm::ApiEmbedder| {
            let mut pipelines = crate::test_support::no_model_pipelines(corpus, &prices);
            pipelines.embedder = Some(embedder);
            pipelines.run(question, PipelineKind::Extractive).unwrap()
        };
        let (asked, embedder) = scripted_embedder(None);
        let answer = answer_from(&corpus, &embedder);
        assert!(
            answer.answer.contains("beginning on Sunday"),
            "{}",
            answer.answer
        );
        assert!(answer.trace.steps.iter().all(|step| step.step != "meaning"));
        assert_eq!(
            asked.requests_to("/embeddings").len(),
            2,
            "the question, then the sentences in one batch"
        );

        // A retrieval that embedded the question hands its vector on: only the sentences are
        // embedded.
        let (server, embedder) = scripted_embedder(None);
        let mut searched = FixedCorpus::new(&[("tock", tock)]);
        searched.query_vector = Some(vec![1.0, 0.0]);
        let answer = answer_from(&searched, &embedder);
        assert!(
            answer.answer.contains("beginning on Sunday"),
            "{}",
            answer.answer
        );
        assert_eq!(server.requests_to("/embeddings").len(), 1);

        // The question's embedding fails, or the sentences'.
        for fail_on in ["?", "Sunday"] {
            let (_down, failing) = scripted_embedder(Some(fail_on));
            let answer = answer_from(&corpus, &failing);
            assert!(!answer.refused, "{answer:?}");
            assert!(
                !answer.answer.contains("Sunday"),
                "the words alone choose the sentences about days of the week: {}",
                answer.answer
            );
            let noted = answer
                .trace
                .steps
                .iter()
                .find(|step| step.step == "meaning");
            assert!(
                noted.is_some_and(|step| step.output.contains("embedder failed")),
                "{fail_on}: {:?}",
                answer.trace.steps
            );
        }
    }
}
