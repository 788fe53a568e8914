//! LLM judges of generated answers: faithfulness to the sources, relevance of the answer and of
//! the context to the question, and correctness against the gold answers.

use serde::Serialize;
use serde_json::Value;
use shiori_core::{Answer, ChatError, ChatMessage, ChatModel, ChatRequest, PriceTable, Usage};
use std::fmt::Write;

const SYSTEM: &str = "You judge an answer produced from numbered sources. Reply with JSON holding \
    scores from 0 to 1: \"faithfulness\" (the share of the answer's claims that the sources \
    support), \"answer_relevance\" (how directly the answer addresses the question), \
    \"context_relevance\" (the share of sources that help answer the question) and, when gold \
    answers are given, \"correctness\" (how far the answer agrees with them).";

/// One answer's scores, each in [0, 1].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct JudgeScores {
    pub faithfulness: f64,
    pub answer_relevance: f64,
    pub context_relevance: f64,
    /// Only when the query has gold answers.
    pub correctness: Option<f64>,
}

/// Asks `judge` to score `answer` to `question`; returns the scores and the judge's tokens.
pub fn judge_answer(
    judge: &dyn ChatModel,
    question: &str,
    answer: &Answer,
    gold: &[String],
) -> Result<(JudgeScores, Usage), ChatError> {
    let mut user = String::from("Sources:\n");
    for (index, source) in answer.sources.iter().enumerate() {
        let _ = writeln!(user, "[{}] {}", index + 1, source.text.replace('\n', " "));
    }
    let _ = write!(
        user,
        "\nQuestion: {question}\n\nAnswer: {}\n",
        answer.answer
    );
    if !gold.is_empty() {
        let _ = write!(user, "\nGold answers: {}\n", gold.join(" | "));
    }
    let request = ChatRequest {
        messages: vec![ChatMessage::system(SYSTEM), ChatMessage::user(user)],
        max_tokens: Some(200),
        temperature: Some(0.0),
        json_mode: true,
        json_schema: None,
        grammar: None,
        tools: Vec::new(),
    };
    let reply = judge.chat(&request, None)?;
    let unusable = || ChatError::Permanent {
        provider: judge.model_id().to_string(),
        message: format!("the judge's reply has no scores: {}", reply.content),
    };
    let start = reply.content.find('{').ok_or_else(unusable)?;
    let end = reply.content.rfind('}').ok_or_else(unusable)?;
    let value: Value = serde_json::from_str(&reply.content[start..=end]).map_err(|_| unusable())?;
    let score = |name: &str| value[name].as_f64().map(|x| x.clamp(0.0, 1.0));
    let scores = JudgeScores {
        faithfulness: score("faithfulness").ok_or_else(unusable)?,
        answer_relevance: score("answer_relevance").ok_or_else(unusable)?,
        context_relevance: score("context_relevance").ok_or_else(unusable)?,
        correctness: if gold.is_empty() {
            None
        } else {
            score("correctness")
        },
    };
    Ok((scores, reply.usage))
}

/// Sums judged answers into a report.
#[derive(Debug, Default)]
pub struct JudgeTally {
    scores: Vec<JudgeScores>,
    refused: usize,
    answer_usage: Usage,
    answer_cost_usd: f64,
    judge_usage: Usage,
}

impl JudgeTally {
    /// Counts what the answer itself cost (its pipeline's tokens).
    pub fn add_answer(&mut self, answer: &Answer) {
        self.answer_usage += answer.usage;
        self.answer_cost_usd += answer.cost_usd;
        if answer.refused {
            self.refused += 1;
        }
    }

    pub fn add_judgement(&mut self, scores: JudgeScores, usage: Usage) {
        self.scores.push(scores);
        self.judge_usage += usage;
    }

    pub fn report(&self, judge: &dyn ChatModel, prices: &PriceTable) -> JudgeReport {
        let mean = |pick: &dyn Fn(&JudgeScores) -> Option<f64>| {
            let values: Vec<f64> = self.scores.iter().filter_map(pick).collect();
            (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
        };
        let judge_cost_usd = prices.cost(judge.model_id(), self.judge_usage);
        JudgeReport {
            judge: judge.model_id().to_string(),
            judged: self.scores.len(),
            refused: self.refused,
            faithfulness: mean(&|s| Some(s.faithfulness)),
            answer_relevance: mean(&|s| Some(s.answer_relevance)),
            context_relevance: mean(&|s| Some(s.context_relevance)),
            answer_correctness: mean(&|s| s.correctness),
            answer_usage: self.answer_usage,
            judge_usage: self.judge_usage,
            cost_usd: self.answer_cost_usd + judge_cost_usd,
        }
    }
}

/// Mean judge scores over the answered queries, with the tokens and cost of answering and judging.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JudgeReport {
    pub judge: String,
    pub judged: usize,
    pub refused: usize,
    pub faithfulness: Option<f64>,
    pub answer_relevance: Option<f64>,
    pub context_relevance: Option<f64>,
    pub answer_correctness: Option<f64>,
    pub answer_usage: Usage,
    pub judge_usage: Usage,
    pub cost_usd: f64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use shiori_core::{Price, Source};
    use shiori_llm::{Endpoint, OpenAiChat};
    use shiori_mock::{sequence, MockServer, Reply};
    use std::collections::BTreeMap;

    fn completion(content: &str) -> Reply {
        Reply::json(
            json!({"model": "judge", "choices": [{"message": {"content": content}}],
                           "usage": {"prompt_tokens": 500, "completion_tokens": 50}}),
        )
    }

    fn answer() -> Answer {
        Answer {
            answer: "Every workspace includes 100 GB [1].".into(),
            sources: vec![Source {
                doc_id: "storage".into(),
                chunk_id: "storage#0".into(),
                title: "Storage".into(),
                source: "faq.jsonl".into(),
                score: 1.0,
                text: "Every workspace includes 100 GB of storage.".into(),
            }],
            usage: Usage {
                prompt_tokens: 1000,
                completion_tokens: 100,
            },
            cost_usd: 0.01,
            ..Answer::default()
        }
    }

    #[test]
    fn judges_answers_and_adds_up_usage_and_cost() {
        let server = MockServer::start(sequence(vec![
            completion(
                r#"{"faithfulness": 1.0, "answer_relevance": 0.75, "context_relevance": 0.5, "correctness": 1.0}"#,
            ),
            completion(
                r#"{"faithfulness": 0.5, "answer_relevance": 0.25, "context_relevance": 1.5}"#,
            ),
            completion("no idea"),
        ]));
        let judge = OpenAiChat::new(Endpoint::new(server.url()), "judge").unwrap();
        let prices = PriceTable(BTreeMap::from([(
            "openai:judge".to_string(),
            Price {
                input_per_million: 1.0,
                output_per_million: 2.0,
            },
        )]));
        let mut tally = JudgeTally::default();
        let gold = ["100 GB".to_string()];
        for gold in [&gold[..], &[]] {
            let answer = answer();
            tally.add_answer(&answer);
            let (scores, usage) = judge_answer(&judge, "How much storage?", &answer, gold).unwrap();
            tally.add_judgement(scores, usage);
        }
        let prompt = server.requests()[0].json()["messages"][1]["content"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(
            prompt.contains("[1] Every workspace") && prompt.contains("Gold answers: 100 GB"),
            "{prompt}"
        );
        assert!(judge_answer(&judge, "q", &answer(), &[]).is_err());

        let report = tally.report(&judge, &prices);
        assert_eq!(report.judged, 2);
        assert_eq!(report.faithfulness, Some(0.75));
        assert_eq!(report.answer_relevance, Some(0.5));
        assert_eq!(
            report.context_relevance,
            Some(0.75),
            "scores are clamped to 1"
        );
        assert_eq!(
            report.answer_correctness,
            Some(1.0),
            "only queries with gold answers count"
        );
        assert_eq!(
            report.judge_usage,
            Usage {
                prompt_tokens: 1000,
                completion_tokens: 100
            }
        );
        assert_eq!(report.answer_usage.prompt_tokens, 2000);
        let judge_cost = (1000.0 * 1.0 + 100.0 * 2.0) / 1e6;
        assert!((report.cost_usd - (0.02 + judge_cost)).abs() < 1e-12);
    }
}
