//! What an answer pipeline did: its steps, their models, tokens and cost, and the citations it
//! checked.

use crate::Usage;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A `[n]` marker of an answer that points at source `n` (1-based).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Citation {
    pub number: usize,
    pub doc_id: String,
    pub chunk_id: String,
    pub title: String,
    /// A file path, or the URL of a web result.
    pub source: String,
    /// The passages of the source's text the cited words come from, for highlighting: an
    /// extracted answer's sentences, or the sentence a generated one was checked against.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub quotes: Vec<Quote>,
}

impl Citation {
    /// A citation of `source` as number `number`, with no passage marked yet.
    pub fn of(number: usize, source: &crate::Source) -> Citation {
        Citation {
            number,
            doc_id: source.doc_id.clone(),
            chunk_id: source.chunk_id.clone(),
            title: source.title.clone(),
            source: source.source.clone(),
            quotes: Vec::new(),
        }
    }
}

/// A passage of a source's text, in characters (Unicode scalar values) from its start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Quote {
    pub start: usize,
    pub end: usize,
}

impl Quote {
    /// The passage at byte range `bytes` of `text` (which must lie on character boundaries).
    pub fn of_bytes(text: &str, bytes: std::ops::Range<usize>) -> Quote {
        let start = text[..bytes.start].chars().count();
        Quote {
            start,
            end: start + text[bytes].chars().count(),
        }
    }
}

/// One step of a pipeline run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TraceStep {
    /// What the step did, e.g. `retrieve`, `grade`, `web_search`, `answer`, `fallback`.
    pub step: String,
    /// The chat model the step called, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Short summaries, not the full prompts.
    pub input: String,
    pub output: String,
    #[serde(default)]
    pub usage: Usage,
    #[serde(default)]
    pub cost_usd: f64,
    pub ms: f64,
}

/// The steps of one answer, in the order they ran.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    /// The pipeline that produced the answer (after any fallback).
    pub pipeline: String,
    pub steps: Vec<TraceStep>,
}

impl Trace {
    pub fn new(pipeline: impl Into<String>) -> Trace {
        Trace {
            pipeline: pipeline.into(),
            steps: Vec::new(),
        }
    }

    pub fn push(&mut self, step: TraceStep) {
        self.steps.push(step);
    }

    /// Records a step that called no model.
    pub fn note(
        &mut self,
        step: &str,
        input: impl Into<String>,
        output: impl Into<String>,
        ms: f64,
    ) {
        self.push(TraceStep {
            step: step.to_string(),
            input: input.into(),
            output: output.into(),
            ms,
            ..TraceStep::default()
        });
    }

    pub fn usage(&self) -> Usage {
        let mut total = Usage::default();
        for step in &self.steps {
            total += step.usage;
        }
        total
    }

    pub fn cost_usd(&self) -> f64 {
        self.steps.iter().map(|step| step.cost_usd).sum()
    }
}

/// US dollars per million tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub input_per_million: f64,
    pub output_per_million: f64,
}

impl Price {
    pub fn cost(&self, usage: Usage) -> f64 {
        (usage.prompt_tokens as f64 * self.input_per_million
            + usage.completion_tokens as f64 * self.output_per_million)
            / 1_000_000.0
    }
}

/// Prices by chat model id (`ChatModel::model_id`); unknown models cost nothing.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PriceTable(pub BTreeMap<String, Price>);

impl PriceTable {
    pub fn cost(&self, model_id: &str, usage: Usage) -> f64 {
        self.0.get(model_id).map_or(0.0, |price| price.cost(usage))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_usage_and_cost_over_steps() {
        let prices = PriceTable(BTreeMap::from([(
            "openai:big".to_string(),
            Price {
                input_per_million: 2.0,
                output_per_million: 8.0,
            },
        )]));
        let usage = Usage {
            prompt_tokens: 1_000,
            completion_tokens: 500,
        };
        assert!((prices.cost("openai:big", usage) - 0.006).abs() < 1e-12);
        assert_eq!(prices.cost("unknown", usage), 0.0);
        let mut trace = Trace::new("basic");
        for _ in 0..2 {
            trace.push(TraceStep {
                step: "answer".into(),
                usage,
                cost_usd: prices.cost("openai:big", usage),
                ..TraceStep::default()
            });
        }
        trace.note("retrieve", "q", "3 hits", 1.0);
        assert_eq!(trace.usage().total(), 3_000);
        assert!((trace.cost_usd() - 0.012).abs() < 1e-12);
    }
}
