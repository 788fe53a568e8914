//! Follow-up questions: a conversation's recent turns, bounded by a token budget, and the
//! `condense` step that turns a follow-up into a question that stands alone.

use crate::budget::estimate_tokens;
use crate::corpus::RagError;
use crate::events::Listener;
use crate::pipeline::{summary, Run};
use crate::{prompts, PipelineKind, Pipelines};
use shiori_core::{Answer, Turn};
use std::time::Instant;

/// Earlier questions retrieval joins to a follow-up when no model rewrites it: enough to carry
/// the topic, few enough that the new question, placed first, still leads.
const RECENT_QUESTIONS: usize = 2;

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

/// The follow-up, then the questions before it, newest first: what retrieval searches for when
/// no model can rewrite the follow-up.
fn with_recent_questions(question: &str, recent: &[Turn]) -> String {
    std::iter::once(question)
        .chain(
            recent
                .iter()
                .rev()
                .take(RECENT_QUESTIONS)
                .map(|turn| turn.question.as_str()),
        )
        .collect::<Vec<_>>()
        .join("\n")
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
    /// query model, or without one joined with the recent questions — recorded as a `condense`
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
        let condensed = condense(&mut run, question, recent)?;
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

fn condense(run: &mut Run<'_, '_>, question: &str, recent: &[Turn]) -> Result<Condensed, RagError> {
    let joined = with_recent_questions(question, recent);
    let model = run.p.models.query.or(run.p.models.answer);
    let Some(model) = model else {
        run.trace.note("condense", question, summary(&joined), 0.0);
        run.report_steps()?;
        return Ok(Condensed {
            question: joined,
            degraded: None,
        });
    };
    let started = Instant::now();
    match run.chat(
        "condense",
        model,
        &prompts::condense(question, recent),
        question,
    ) {
        Ok(reply) => {
            let rewritten = prompts::lines(&reply.content, 1).into_iter().next();
            Ok(Condensed {
                question: rewritten.unwrap_or(joined),
                degraded: None,
            })
        }
        Err(RagError::Cancelled) => Err(RagError::Cancelled),
        Err(error) => {
            let cause = format!("condense failed ({error}); searched with the recent questions");
            let ms = started.elapsed().as_secs_f64() * 1000.0;
            run.trace.note("condense", &cause, summary(&joined), ms);
            run.report_steps()?;
            Ok(Condensed {
                question: joined,
                degraded: Some(cause),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{completion, llm_server, model, one_model_pipelines, FixedCorpus};
    use crate::PipelineParams;
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
    fn a_follow_up_leads_the_recent_questions() {
        let turns = [turn("one", ""), turn("two", ""), turn("three", "")];
        assert_eq!(with_recent_questions("four", &turns), "four\nthree\ntwo");
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
        let pipelines = one_model_pipelines(&corpus, &chat, &prices, PipelineParams::default());
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
}
