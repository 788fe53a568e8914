//! The refusal gate of the generative pipelines: before any model call, the question's own
//! retrieval must pass the same relevance verdict the extractive answer uses.

use crate::citations::check_citations;
use crate::corpus::RagError;
use crate::extractive::refuses;
use crate::kind::PipelineKind;
use crate::pipelines::sources;
use crate::prompts::CANNOT_ANSWER;
use crate::run::{Run, CANNOT_ANSWER_TEXT};
use shiori_core::Answer;
use std::time::Instant;

/// `Some(refusal)` when nothing retrieved for `question` is relevant enough and `kind` has no
/// other place to look (CRAG and fusion-CRAG with a web search configured go on to search the
/// web). A refusal or a detour to the web is a `gate` step in the trace.
pub(crate) fn gate(
    run: &mut Run,
    question: &str,
    kind: PipelineKind,
) -> Result<Option<Answer>, RagError> {
    if kind == PipelineKind::Extractive || !run.params().refuse_irrelevant {
        return Ok(None);
    }
    let started = Instant::now();
    let k = run.params().top_k;
    let retrieval = run.p.corpus.retrieve(question, k)?;
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    let input = retrieval.verdict.reason.clone();
    if !refuses(&retrieval.hits, &retrieval.verdict) {
        run.keep_gated(question, k, retrieval);
        return Ok(None);
    }
    let searches_web = matches!(kind, PipelineKind::Crag | PipelineKind::FusionCrag);
    if searches_web && run.p.web.is_some() {
        run.trace.note(
            "gate",
            input,
            "nothing relevant: going on to search the web",
            ms,
        );
        return Ok(None);
    }
    run.trace.note(
        "gate",
        input,
        "nothing relevant: refused without calling the answer model",
        ms,
    );
    Ok(Some(run.finish(
        CANNOT_ANSWER_TEXT.to_string(),
        true,
        sources(&retrieval.hits),
    )))
}

/// Phrases of a reply that says the sources cannot answer, lower case.
const REFUSALS: [&str; 6] = [
    "cannot answer",
    "can't answer",
    "unable to answer",
    "do not contain the answer",
    "回答できません",
    "答えられません",
];

/// True when a generated reply answers nothing: no words beyond its `[n]` citation markers,
/// or a statement that the sources cannot answer.
pub(crate) fn is_refusal(reply: &str) -> bool {
    let without_markers = check_citations(reply, &[]).answer.to_lowercase();
    !without_markers.chars().any(char::is_alphanumeric)
        || reply.contains(CANNOT_ANSWER)
        || REFUSALS
            .iter()
            .any(|phrase| without_markers.contains(phrase))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn citations_alone_or_a_refusal_phrase_are_refusals() {
        for reply in [
            "",
            "[1]",
            " [1, 2] [3]. ",
            "[1] Cannot answer [2, 3]",
            "CANNOT_ANSWER",
            "I can't answer that from these sources [2].",
            "The sources do not contain the answer.",
            "資料からは回答できません。",
        ] {
            assert!(is_refusal(reply), "{reply:?}");
        }
        for reply in [
            "Every workspace includes 100 GB [1].",
            "42 [1]",
            "東京です [1]。",
        ] {
            assert!(!is_refusal(reply), "{reply:?}");
        }
    }
}
