//! When "nothing relevant" is the answer: the refusal setting and the decision it leads to.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;
use thiserror::Error;

/// Where the refusal cut lies: `[retrieval] refusal`, `--refusal`, the request's `refusal`.
/// `balanced` and `answer_rate:R` are targets on the embedder's calibrated refusal model (a
/// logistic regression over the query's relevance signals); embedders without one fall back to
/// their default cosine cut. `cosine:T` refuses when the best dense cosine is below `T`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Refusal {
    /// The cut where the fitted answer rate on answerable questions equals the refusal rate on
    /// unanswerable ones.
    #[default]
    Balanced,
    /// The cut that answered this fraction of the answerable questions the model was fitted on.
    AnswerRate(f32),
    /// A raw best-cosine cut, as before calibration.
    Cosine(f32),
}

/// A refusal setting that is not one of the three forms, or out of range.
#[derive(Debug, Clone, PartialEq, Error)]
#[error("refusal {given:?}: {problem}; expected \"balanced\", \"answer_rate:R\" with 0 < R ≤ 1, or \"cosine:T\" with -1 ≤ T ≤ 1")]
pub struct RefusalError {
    pub given: String,
    pub problem: &'static str,
}

impl Refusal {
    /// The setting itself when its number is in range; every surface checks with this.
    pub fn checked(self) -> Result<Refusal, RefusalError> {
        let problem = match self {
            Refusal::Balanced => None,
            Refusal::AnswerRate(rate) => {
                (!(rate > 0.0 && rate <= 1.0)).then_some("the answer rate is outside (0, 1]")
            }
            Refusal::Cosine(cut) => (!(cut.is_finite() && (-1.0..=1.0).contains(&cut)))
                .then_some("the cosine cut (threshold) is outside [-1, 1]"),
        };
        match problem {
            None => Ok(self),
            Some(problem) => Err(RefusalError {
                given: self.to_string(),
                problem,
            }),
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Balanced => write!(f, "balanced"),
            Refusal::AnswerRate(rate) => write!(f, "answer_rate:{rate}"),
            Refusal::Cosine(cut) => write!(f, "cosine:{cut}"),
        }
    }
}

impl FromStr for Refusal {
    type Err = RefusalError;

    fn from_str(text: &str) -> Result<Refusal, RefusalError> {
        let error = |problem| RefusalError {
            given: text.to_string(),
            problem,
        };
        let number = |value: &str| {
            value
                .trim()
                .parse::<f32>()
                .map_err(|_| error("not a number"))
        };
        let refusal = match text.trim().split_once(':') {
            None if text.trim() == "balanced" => Refusal::Balanced,
            Some(("answer_rate", rate)) => Refusal::AnswerRate(number(rate)?),
            Some(("cosine", cut)) => Refusal::Cosine(number(cut)?),
            _ => return Err(error("unknown form")),
        };
        refusal.checked().map_err(|e| error(e.problem))
    }
}

impl Serialize for Refusal {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// A string in one of the three forms, or a bare number: the cosine cut the `threshold` key
/// of earlier `shiori.toml` files holds.
impl<'de> Deserialize<'de> for Refusal {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Refusal, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Written {
            Text(String),
            Cosine(f32),
        }
        match Written::deserialize(deserializer)? {
            Written::Text(text) => text.parse().map_err(serde::de::Error::custom),
            Written::Cosine(cut) => Refusal::Cosine(cut)
                .checked()
                .map_err(serde::de::Error::custom),
        }
    }
}

/// The refusal decision for one retrieval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RelevanceVerdict {
    /// Nothing retrieved is relevant enough to answer from.
    pub refused: bool,
    /// The signals, the score and the cut the decision came from, for the trace.
    pub reason: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_three_forms_and_prints_them_back() {
        for (text, refusal) in [
            ("balanced", Refusal::Balanced),
            ("answer_rate:0.95", Refusal::AnswerRate(0.95)),
            ("cosine:0.855", Refusal::Cosine(0.855)),
            (" cosine: -0.5 ", Refusal::Cosine(-0.5)),
        ] {
            assert_eq!(text.parse::<Refusal>(), Ok(refusal), "{text}");
            assert_eq!(
                refusal.to_string().parse::<Refusal>(),
                Ok(refusal),
                "{refusal}"
            );
        }
    }

    #[test]
    fn refuses_bad_forms_and_numbers_out_of_range_with_the_forms_in_the_message() {
        for text in [
            "",
            "strict",
            "answer_rate",
            "answer_rate:",
            "answer_rate:0",
            "answer_rate:1.5",
            "answer_rate:NaN",
            "cosine:2",
            "cosine:inf",
            "cosine:abc",
            "threshold:0.8",
        ] {
            let error = text.parse::<Refusal>().unwrap_err();
            assert!(error.to_string().contains("answer_rate:R"), "{error}");
        }
        assert!(Refusal::Cosine(f32::NAN).checked().is_err());
        assert!(Refusal::AnswerRate(1.0).checked().is_ok());
    }

    #[test]
    fn reads_strings_and_the_bare_cosine_of_older_config_files() {
        #[derive(Deserialize)]
        struct Table {
            refusal: Refusal,
        }
        let read = |text: &str| toml::from_str::<Table>(text).map(|t| t.refusal);
        assert_eq!(
            read("refusal = \"answer_rate:0.9\"").unwrap(),
            Refusal::AnswerRate(0.9)
        );
        assert_eq!(read("refusal = 0.855").unwrap(), Refusal::Cosine(0.855));
        assert!(read("refusal = 7.0").is_err());
        assert!(read("refusal = \"sometimes\"")
            .unwrap_err()
            .to_string()
            .contains("balanced"));
    }
}
