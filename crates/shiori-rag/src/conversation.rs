//! Follow-up questions: a conversation's recent turns, bounded by a token budget, and the
//! `condense` step that turns a follow-up into a question that stands alone.

use crate::budget::estimate_tokens;
use crate::corpus::RagError;
use crate::events::Listener;
use crate::follow_up::searched;
use crate::run::{summary, Run};
use crate::verify::numbers;
use crate::{prompts, PipelineKind, Pipelines};
use shiori_analysis::is_japanese_char;
use shiori_core::{Answer, ChatModel, Turn};
use std::time::Instant;

/// The newest turns whose questions and answers fit in `budget` tokens, oldest first.
pub fn recent_turns(turns: &[Turn], budget: usize) -> &[Turn] {
    let mut used = 0;
    let mut start = turns.len();
    for (index, turn) in turns.iter().enumerate().rev() {
        used += estimate_tokens(&turn.question) + estimate_tokens(&turn.answer);
        if used > budget {
            break;
        }
        start = index;
    }
    &turns[start..]
}

/// What the `condense` step made of a follow-up.
struct Condensed {
    question: String,
    /// Why the model's rewrite was not used, when it failed.
    degraded: Option<String>,
}

impl Pipelines<'_> {
    /// Answers `question` asked after `history` (oldest first). The turns that fit in
    /// `history_tokens` condense it first into a question that stands alone — rewritten by the
    /// query model, or without one searched alone or, when elliptical, with the questions it
    /// leans on ([`crate::follow_up`]) — recorded as a `condense`
    /// step; the chain then answers that. Without history the question runs as it is.
    pub fn answer_in_conversation(
        &self,
        question: &str,
        history: &[Turn],
        chain: &[PipelineKind],
        listener: &Listener<'_>,
    ) -> Result<Answer, RagError> {
        let started = Instant::now();
        let recent = recent_turns(history, self.params.history_tokens);
        if recent.is_empty() {
            return self.run_chain(question, chain, listener, Vec::new(), started);
        }
        let mut run = Run::new(self, PipelineKind::Extractive, listener);
        // The extractive answer calls no model, not even to rewrite a follow-up.
        let model = match chain.first() {
            None | Some(PipelineKind::Extractive) => None,
            Some(_) => self.models.query.or(self.models.answer),
        };
        let condensed = condense(&mut run, model, question, recent)?;
        let mut answer = self.run_chain(
            &condensed.question,
            chain,
            listener,
            run.trace.steps,
            started,
        )?;
        if answer.degraded.is_none() {
            answer.degraded = condensed.degraded;
        }
        Ok(answer)
    }
}

fn condense(
    run: &mut Run<'_, '_>,
    model: Option<&dyn ChatModel>,
    question: &str,
    recent: &[Turn],
) -> Result<Condensed, RagError> {
    let joined = searched(question, recent);
    let Some(model) = model else {
        run.trace.note("condense", question, summary(&joined), 0.0);
        run.report_steps()?;
        return Ok(Condensed {
            question: joined,
            degraded: None,
        });
    };
    let started = Instant::now();
    let rejected = match run.chat(
        "condense",
        model,
        &prompts::condense(question, recent),
        question,
    ) {
        Ok(reply) => {
            let rewritten = prompts::lines(&reply.content, 1).into_iter().next();
            match rewritten.map(|rewrite| (rewrite_fault(&rewrite, question, recent), rewrite)) {
                Some((None, rewrite)) => {
                    return Ok(Condensed {
                        question: rewrite,
                        degraded: None,
                    })
                }
                Some((Some(fault), rewrite)) => format!("the rewrite {rewrite:?} {fault}"),
                None => "the rewrite was empty".to_string(),
            }
        }
        Err(RagError::Cancelled) => return Err(RagError::Cancelled),
        Err(error) => format!("condense failed ({error})"),
    };
    let cause = format!("{rejected}; searched without a rewrite");
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    run.trace.note("condense", &cause, summary(&joined), ms);
    run.report_steps()?;
    Ok(Condensed {
        question: joined,
        degraded: Some(cause),
    })
}

/// Why a model's rewrite of `question` cannot stand in for it, if it cannot: a rewrite must be
/// a question, in the follow-up's script (kana for Japanese, none for English), stating no
/// number the conversation does not (a small model answers instead of rewriting, or drifts
/// into Chinese).
fn rewrite_fault(rewrite: &str, question: &str, recent: &[Turn]) -> Option<&'static str> {
    let has_kana = |text: &str| text.chars().any(|c| matches!(c, '\u{3041}'..='\u{30fa}'));
    let has_cjk = |text: &str| text.chars().any(is_japanese_char);
    if !rewrite.trim_end().ends_with(['?', '？']) {
        return Some("is not a question");
    }
    if has_kana(question) != has_kana(rewrite) || (!has_cjk(question) && has_cjk(rewrite)) {
        return Some("is not in the language of the follow-up");
    }
    let mut said = question.to_string();
    for turn in recent {
        said.push('\n');
        said.push_str(&turn.question);
        said.push('\n');
        said.push_str(&turn.answer);
    }
    let known = numbers(&said);
    numbers(rewrite)
        .iter()
        .any(|number| !known.contains(number))
        .then_some("states a number the conversation does not")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::test_params;
    use crate::test_support::{completion, llm_server, model, one_model_pipelines, FixedCorpus};
    use shiori_core::PriceTable;
    use shiori_mock::Reply;

    fn turn(question: &str, answer: &str) -> Turn {
        Turn {
            question: question.to_string(),
            answer: answer.to_string(),
            refused: false,
            sources: Vec::new(),
            at_ms: 0,
        }
    }

    #[test]
    fn keeps_the_newest_turns_that_fit_the_budget() {
        let turns = [
            turn("first question", &"a".repeat(300)),
            turn("second", "short"),
            turn("third", "short"),
        ];
        assert_eq!(recent_turns(&turns, 10_000).len(), 3);
        let fitting = recent_turns(&turns, 20);
        assert_eq!(fitting.len(), 2);
        assert_eq!(fitting[0].question, "second");
        assert!(recent_turns(&turns, 1).is_empty());
    }

    #[test]
    fn a_failed_rewrite_searches_with_the_recent_questions_and_says_so() {
        let server = llm_server(|system, _, _| match system.starts_with("Rewrite") {
            true => Reply::status(400, r#"{"error":{"message":"context overflow"}}"#),
            false => completion("WireGuard, from the IT portal [1]."),
        });
        let chat = model(&server, "scripted");
        let corpus = FixedCorpus::new(&[("vpn", "Connect from home with the WireGuard client.")]);
        let prices = PriceTable::default();
        let pipelines = one_model_pipelines(&corpus, &chat, &prices, test_params());
        let history = [turn("How do I connect to the VPN?", "Use WireGuard.")];
        let answer = pipelines
            .answer_in_conversation(
                "And from home?",
                &history,
                &[PipelineKind::Basic],
                &Listener::default(),
            )
            .unwrap();
        let joined = "And from home?\nHow do I connect to the VPN?";
        assert_eq!(corpus.queries()[0].0, joined);
        let condense = &answer.trace.steps[0];
        assert_eq!(condense.step, "condense");
        assert!(condense.input.contains("context overflow"), "{condense:?}");
        let degraded = answer.degraded.clone().unwrap_or_default();
        assert!(degraded.starts_with("condense failed"), "{degraded}");
        assert_eq!(server.requests().len(), 2, "the rewrite, then the answer");
        assert!(!answer.refused, "{answer:?}");
    }

    #[test]
    fn a_rewrite_must_be_a_question_in_the_follow_ups_language_stating_nothing_new() {
        let leave = [turn("有給休暇の申請は必要ですか？", "はい、必要です [1]。")];
        let follow_up = "申請はいつまでに必要ですか？";
        assert_eq!(
            rewrite_fault("有給休暇の申請はいつまでに必要ですか？", follow_up, &leave),
            None
        );
        assert_eq!(
            rewrite_fault("申請は3日前までに必要です。", follow_up, &leave),
            Some("is not a question")
        );
        assert_eq!(
            rewrite_fault("申请什么时候需要？", follow_up, &leave),
            Some("is not in the language of the follow-up")
        );
        let limits = [turn("Business plan rate limit?", "600 per minute [1].")];
        assert_eq!(
            rewrite_fault(
                "What is the API rate limit on the Starter plan?",
                "What about the Starter plan?",
                &limits
            ),
            None
        );
        assert_eq!(
            rewrite_fault(
                "Is the Starter plan limited to 100 requests?",
                "What about the Starter plan?",
                &limits
            ),
            Some("states a number the conversation does not")
        );
    }

    #[test]
    fn a_rejected_rewrite_searches_with_the_recent_questions() {
        let server = llm_server(|system, _, _| match system.starts_with("Rewrite") {
            true => completion("The Starter plan allows 100 requests per minute."),
            false => completion("100 requests per minute [1]."),
        });
        let chat = model(&server, "scripted");
        let corpus = FixedCorpus::new(&[(
            "limits",
            "Starter plan keys are limited to 100 requests per minute.",
        )]);
        let prices = PriceTable::default();
        let pipelines = one_model_pipelines(&corpus, &chat, &prices, test_params());
        let history = [turn("Business plan rate limit?", "600 per minute [1].")];
        let answer = pipelines
            .answer_in_conversation(
                "What about the Starter plan?",
                &history,
                &[PipelineKind::Basic],
                &Listener::default(),
            )
            .unwrap();
        assert_eq!(
            corpus.queries()[0].0,
            "What about the Starter plan?\nBusiness plan rate limit?"
        );
        let degraded = answer.degraded.unwrap_or_default();
        assert!(degraded.contains("is not a question"), "{degraded}");
    }

    #[test]
    fn the_extractive_answer_calls_no_model_to_rewrite_a_follow_up() {
        let server = llm_server(|_, _, _| completion("What is the Starter plan's limit?"));
        let chat = model(&server, "scripted");
        let corpus = FixedCorpus::new(&[(
            "limits",
            "The API allows 600 requests per minute on the Business plan. Starter plan keys \
             are limited to 100 requests per minute.",
        )]);
        let prices = PriceTable::default();
        let pipelines = one_model_pipelines(&corpus, &chat, &prices, test_params());
        let history = [turn(
            "What are the API rate limits on the Business plan?",
            "600 requests per minute [1].",
        )];
        let answer = pipelines
            .answer_in_conversation(
                "What about the Starter plan?",
                &history,
                &[PipelineKind::Extractive],
                &Listener::default(),
            )
            .unwrap();
        assert!(server.requests().is_empty());
        assert!(
            answer
                .answer
                .contains("Starter plan keys are limited to 100 requests per minute."),
            "{answer:?}"
        );
    }
}
